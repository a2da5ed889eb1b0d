/* test_sparse.c - the conjugate gradient preconditioned by DIC and MIC (white box). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_testing.h"
#include "sim_tests.h"
#include "testlib.h"

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
