/* test_sparse.c - the conjugate gradient preconditioned by DIC and MIC, and MIC's sweeps on two threads (white box). */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sim_testing.h"
#include "sim_tests.h"
#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SPARSE_SMALL 1
#else
#define SPARSE_SMALL 0
#endif

/* The 7-point Laplacian of a g^3 grid with Dirichlet walls; b = A u* for a
 * smooth u* that is no eigenvector, so the exact discrete answer is u*. */
void test_sparse_pcg(void) {
    const int g = 40, n = g * g * g;
    fs_csr A = {0};
    fs_pcg s = {0};
    CHECK(fs__csr_alloc(&A, n, 7 * n) && fs__pcg_alloc(&s, n), "alloc");
    int nnz = 0;
    A.n = n;
    for (int z = 0; z < g; z++)
        for (int y = 0; y < g; y++)
            for (int x = 0; x < g; x++) {
                int i = (z * g + y) * g + x;
                const int nb[7][3] = {{0, 0, -1}, {0, -1, 0}, {-1, 0, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
                for (int k = 0; k < 7; k++) {
                    int xx = x + nb[k][0], yy = y + nb[k][1], zz = z + nb[k][2];
                    if (xx < 0 || yy < 0 || zz < 0 || xx >= g || yy >= g || zz >= g) continue;
                    A.col[nnz] = (zz * g + yy) * g + xx;
                    A.val[nnz] = k == 3 ? 6.0 : -1.0;
                    nnz++;
                }
                A.rowptr[i + 1] = nnz;
            }
    A.nnz = nnz;
    double *u = malloc(sizeof(double) * n), *b = malloc(sizeof(double) * n), *x = calloc(n, sizeof(double));
    for (int z = 0; z < g; z++)
        for (int y = 0; y < g; y++)
            for (int xx = 0; xx < g; xx++) {
                double h = 1.0 / (g + 1);
                double px = (xx + 1) * h, py = (y + 1) * h, pz = (z + 1) * h;
                u[(z * g + y) * g + xx] = px * (1 - px) * py * py * exp(pz) + 0.1 * sin(17.0 * px * py + 5 * pz);
            }
    for (int i = 0; i < n; i++) {
        double t = 0;
        for (int k = A.rowptr[i]; k < A.rowptr[i + 1]; k++) t += A.val[k] * u[A.col[k]];
        b[i] = t;
    }
    double res_cg, res_dic;
    int it_cg = fs__pcg(&A, &s, b, x, 1e-8, 2000, false, &res_cg);
    double err_cg = 0;
    for (int i = 0; i < n; i++) err_cg = fmax(err_cg, fabs(x[i] - u[i]));
    /* DIC: on a 7-point stencil IC(0) makes no fill inside the pattern, so DIC is IC(0) here
     * (measured before IC(0) left the code: 54 and 54 iterations) */
    CHECK(fs__dic(&A, &s, 0.0), "dic");
    memset(x, 0, sizeof(double) * n);
    int it_dic = fs__pcg(&A, &s, b, x, 1e-8, 2000, true, &res_dic);
    double err_dic = 0;
    for (int i = 0; i < n; i++) err_dic = fmax(err_dic, fabs(x[i] - u[i]));
    REPORT("7-point Laplacian, %d unknowns, tolerance 1e-8: CG %d iterations (error %.1e), DIC-CG %d iterations "
           "(error %.1e), %d pivot fallbacks",
           n, it_cg, err_cg, it_dic, err_dic, s.fallbacks);
    CHECK(res_dic <= 1e-8 && err_dic < 1e-6, "DIC-CG did not converge: residual %.2e, error %.2e", res_dic, err_dic);
    CHECK(it_dic < 0.6 * it_cg, "the preconditioner does not pay: %d vs %d", it_dic, it_cg);
    CHECK(s.fallbacks == 0, "DIC broke down on an M-matrix");
    /* MIC (omega 0.9, the MPS solver's): the dropped fill on the diagonal; on the Poisson problem it
     * takes fewer iterations than DIC (Gustafsson 1978: the condition number's order drops) */
    double res_mic;
    CHECK(fs__dic(&A, &s, 0.9), "mic");
    memset(x, 0, sizeof(double) * n);
    int it_mic = fs__pcg(&A, &s, b, x, 1e-8, 2000, true, &res_mic);
    double err_mic = 0;
    for (int i = 0; i < n; i++) err_mic = fmax(err_mic, fabs(x[i] - u[i]));
    REPORT("MIC(0.9)-CG %d iterations (error %.1e)", it_mic, err_mic);
    CHECK(res_mic <= 1e-8 && err_mic < 1e-6, "MIC-CG did not converge: residual %.2e, error %.2e", res_mic, err_mic);
    CHECK(it_mic < it_dic, "MIC %d iterations, DIC %d: the modification does not pay", it_mic, it_dic);
    CHECK(s.fallbacks == 0, "MIC broke down on an M-matrix");
    free(u), free(b), free(x);
    fs__csr_free(&A);
    fs__pcg_free(&s);
}

/* parallel_for stand-ins with two workers that run the ranges on the calling
 * thread, in order or last first: the two-thread MIC sweeps must finish and
 * give the same bits when nothing runs side by side */
static void pf_in_order(fs_task_fn *fn, void *ctx, int count, void *user) {
    (void)user;
    for (int k = 0; k < count; k++) fn(k, k + 1, k % 2, ctx);
}
static void pf_last_first(fs_task_fn *fn, void *ctx, int count, void *user) {
    (void)user;
    for (int k = count - 1; k >= 0; k--) fn(k, k + 1, k % 2, ctx);
}

/* A g^3 lattice coupled within 2.1 spacings (the MPS matrix's reach), its
 * rows in the blocks of fs_pcg (layers along z, sides split along x); MIC-CG
 * run serially, on a two-thread pool and through the two stand-ins reaches
 * the same bits, and the blocked order needs no more iterations than the
 * natural one. */
void test_sparse_blocks(void) {
    const int g = SPARSE_SMALL ? 12 : 20, n = g * g * g, split = g / 2, P = FS_PCG_PARTS;
    int32_t *order = malloc(sizeof(int32_t) * n), *rowof = malloc(sizeof(int32_t) * n);
    int32_t *blk = calloc((size_t)P * g + 1, sizeof(int32_t));
    _Atomic int *state = malloc(sizeof(_Atomic int) * (size_t)P * g);
    /* rows by (z, part, y, x) */
    int r = 0;
    for (int z = 0; z < g; z++)
        for (int part = 0; part < P; part++) {
            for (int y = 0; y < g; y++)
                for (int x = 0; x < g; x++) {
                    const int px = x < split ? (x < split - 2 ? 0 : 1) : (x < split + 2 ? 2 : 3);
                    if (px != part) continue;
                    const int site = (z * g + y) * g + x;
                    order[r] = site, rowof[site] = r, r++;
                }
            blk[P * z + part + 1] = r;
        }
    fs_csr A[2] = {{0}, {0}}; /* 0: natural order, 1: blocked */
    for (int m = 0; m < 2; m++) {
        CHECK(fs__csr_alloc(&A[m], n, 40 * n), "alloc");
        A[m].n = n;
        int nnz = 0;
        for (int i = 0; i < n; i++) {
            const int site = m ? order[i] : i, x = site % g, y = site / g % g, z = site / (g * g);
            int32_t nj[40];
            double nv[40], sum = 0;
            int cnt = 0;
            for (int dz = -2; dz <= 2; dz++)
                for (int dy = -2; dy <= 2; dy++)
                    for (int dx = -2; dx <= 2; dx++) {
                        const double dist = sqrt((double)(dx * dx + dy * dy + dz * dz));
                        const int xx = x + dx, yy = y + dy, zz = z + dz;
                        if (dist >= 2.1 || dist == 0 || xx < 0 || yy < 0 || zz < 0 || xx >= g || yy >= g || zz >= g)
                            continue;
                        const int js = (zz * g + yy) * g + xx;
                        nj[cnt] = m ? rowof[js] : js, nv[cnt] = -(2.1 / dist - 1.0), sum -= nv[cnt], cnt++;
                    }
            /* below the diagonal, the diagonal (1.01 x the couplings: positive definite), above (sparse.h) */
            for (int k = 0; k < cnt; k++)
                if (nj[k] < i) A[m].col[nnz] = nj[k], A[m].val[nnz++] = nv[k];
            A[m].col[nnz] = i, A[m].val[nnz++] = 1.01 * sum;
            for (int k = 0; k < cnt; k++)
                if (nj[k] > i) A[m].col[nnz] = nj[k], A[m].val[nnz++] = nv[k];
            A[m].rowptr[i + 1] = nnz;
        }
        A[m].nnz = nnz;
    }
    double *b = malloc(sizeof(double) * n), *bb = malloc(sizeof(double) * n), *x = malloc(sizeof(double) * n);
    double *ref = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) b[i] = sin(0.37 * i) + 0.5 * cos(0.011 * i * i);
    for (int i = 0; i < n; i++) bb[rowof[i]] = b[i];
    fs_pcg s = {0};
    CHECK(fs__pcg_alloc(&s, n), "alloc");
    double res;
    /* the natural order */
    memset(x, 0, sizeof(double) * n);
    CHECK(fs__dic(&A[0], &s, 0.9), "mic");
    const int it_nat = fs__pcg(&A[0], &s, b, x, 1e-8, 2000, true, &res);
    /* blocked, serially (no world) */
    s.layers = g, s.blk = blk, s.blk_state = state;
    CHECK(fs__pcg_blocks_valid(&A[1], &s), "the blocked lattice breaks the blocks' rules");
    { /* the natural order cut into halves along y, parts 1 and 2 empty: a row low in layer k reads rows high
       * in layer k - 1, which side A's first part may not */
        int32_t *halves = malloc(sizeof(int32_t) * ((size_t)P * g + 1));
        fs_pcg bad = s;
        for (int z = 0; z < g; z++) {
            const int base = z * g * g, half = base + g * g / 2;
            halves[P * z] = base, halves[P * z + 1] = half, halves[P * z + 2] = half, halves[P * z + 3] = half;
        }
        halves[P * g] = n;
        bad.blk = halves;
        CHECK(!fs__pcg_blocks_valid(&A[0], &bad), "halves along y passed as blocks");
        free(halves);
    }
    memset(ref, 0, sizeof(double) * n);
    CHECK(fs__dic(&A[1], &s, 0.9), "mic");
    const int it_blk = fs__pcg(&A[1], &s, bb, ref, 1e-8, 2000, true, &res);
    CHECK(res <= 1e-8, "blocked MIC-CG did not converge: %.2e", res);
    double err = 0;
    for (int i = 0; i < n; i++) err = fmax(err, fabs(ref[rowof[i]] - x[i]));
    REPORT("%d unknowns coupled within 2.1 spacings, tolerance 1e-8: MIC-CG %d iterations in the natural order, %d "
           "in %d layers of %d blocks (largest difference %.1e)",
           n, it_nat, it_blk, g, P, err);
    CHECK(err < 1e-6, "the blocked order solved another system: %.2e", err);
    CHECK(it_blk <= it_nat + it_nat / 10, "the blocked order costs iterations: %d against %d", it_blk, it_nat);
    /* the same bits through a two-thread pool and the two stand-ins */
    fs_pool *pool = fs_pool_create(2);
    fs_parallel_for_fn *pfs[3] = {fs_pool_parallel_for, pf_in_order, pf_last_first};
    const char *names[3] = {"a two-thread pool", "in order on one thread", "last first on one thread"};
    for (int v = 0; v < 3; v++) {
        fs_world_def d = fs_default_world_def();
        d.capacity = 16, d.worker_count = 2, d.parallel_for = pfs[v], d.task_user = pool;
        fs_world *w = fs_world_create(&d);
        s.w = w;
        memset(x, 0, sizeof(double) * n);
        CHECK(fs__dic(&A[1], &s, 0.9), "mic");
        const int it = fs__pcg(&A[1], &s, bb, x, 1e-8, 2000, true, &res);
        CHECK(it == it_blk && memcmp(x, ref, sizeof(double) * n) == 0,
              "%s: %d iterations, not the serial sweep's bits (%d iterations)", names[v], it, it_blk);
        s.w = NULL;
        fs_world_destroy(w);
    }
    fs_pool_destroy(pool);
    free(b), free(bb), free(x), free(ref), free(order), free(rowof), free(blk), free((void *)state);
    fs__csr_free(&A[0]), fs__csr_free(&A[1]);
    fs__pcg_free(&s);
}
