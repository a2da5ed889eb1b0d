/* sparse.c - a symmetric positive definite sparse solver for the pressure
 * Poisson equation of the MPS solver (Premoze et al. 2003, Eq. 14):
 * compressed sparse rows, incomplete Cholesky in diagonal form (DIC, or
 * modified: MIC) and the preconditioned conjugate gradient, in Eisenstat's
 * form (S. C. Eisenstat 1981, "Efficient implementation of a class of
 * preconditioned conjugate gradient methods", SIAM J. Sci. Stat. Comput.
 * 2(1)): the split system C^-1 A C^-T, M = C C^T, whose product costs the
 * two sweeps and no mat-vec, because M's triangles are A's own.
 *
 * The entries are stored in single precision, since every sweep and
 * mat-vec streams them; the pivots, vectors and sums are double.
 *
 * Deterministic whatever the thread count: the matrix-vector product is a
 * per-row gather, and dot products are summed in FS_DOT_CHUNKS fixed chunks
 * added in order.  Storage is allocated by fs__csr_alloc only, never while
 * solving.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "sparse.h"
#include "tasks.h"

void fs__csr_free(fs_csr *A) {
    free(A->rowptr), free(A->col), free(A->val);
    memset(A, 0, sizeof *A);
}

bool fs__csr_alloc(fs_csr *A, int n, int nnz_cap) {
    fs__csr_free(A);
    A->rowptr = calloc((size_t)n + 1, sizeof(int32_t));
    A->col = malloc(sizeof(int32_t) * (size_t)nnz_cap);
    A->val = malloc(sizeof(float) * (size_t)nnz_cap);
    A->n_cap = n, A->nnz_cap = nnz_cap;
    if (!A->rowptr || !A->col || !A->val) {
        fs__csr_free(A);
        return false;
    }
    return true;
}

void fs__pcg_free(fs_pcg *s) {
    free(s->r), free(s->z), free(s->p), free(s->q), free(s->t), free(s->diag), free(s->dpos);
    free(s->sq), free(s->isq), free(s->kd);
    memset(s, 0, sizeof *s);
}

bool fs__pcg_alloc(fs_pcg *s, int n) {
    fs__pcg_free(s);
    size_t d = sizeof(double) * (size_t)n;
    s->r = malloc(d), s->z = malloc(d), s->p = malloc(d), s->q = malloc(d), s->t = malloc(d), s->diag = malloc(d);
    s->sq = malloc(d), s->isq = malloc(d), s->kd = malloc(d);
    s->dpos = malloc(sizeof(int32_t) * (size_t)n);
    if (!s->r || !s->z || !s->p || !s->q || !s->t || !s->diag || !s->sq || !s->isq || !s->kd || !s->dpos) {
        fs__pcg_free(s);
        return false;
    }
    return true;
}

/* Dot product in fixed chunks, added in order. */
static double dot(const double *a, const double *b, int n) {
    double part[FS_DOT_CHUNKS];
    for (int c = 0; c < FS_DOT_CHUNKS; c++) {
        long lo = (long)n * c / FS_DOT_CHUNKS, hi = (long)n * (c + 1) / FS_DOT_CHUNKS;
        double s = 0;
        for (long i = lo; i < hi; i++) s += a[i] * b[i];
        part[c] = s;
    }
    double s = 0;
    for (int c = 0; c < FS_DOT_CHUNKS; c++) s += part[c];
    return s;
}

typedef struct spmv_ctx {
    const fs_csr *A;
    const double *x;
    double *y;
} spmv_ctx;

/* s0 + sum over entries [k, end) of val x[col], the sum in four chains
 * added in a fixed order (a row's sum in the mat-vec and the sweeps; the
 * sweeps subtract as -row_sum(.., -s0), which gives the same bits). */
static inline double row_sum(const float *val, const int32_t *col, const double *x, int k, int end, double s0) {
    double s1 = 0, s2 = 0, s3 = 0;
    for (; k + 3 < end; k += 4)
        s0 += val[k] * x[col[k]], s1 += val[k + 1] * x[col[k + 1]], s2 += val[k + 2] * x[col[k + 2]],
            s3 += val[k + 3] * x[col[k + 3]];
    for (; k < end; k++) s0 += val[k] * x[col[k]];
    return (s0 + s1) + (s2 + s3);
}

static void spmv_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    const spmv_ctx *c = vctx;
    const fs_csr *A = c->A;
    const int32_t *rp = A->rowptr, *col = A->col;
    const float *val = A->val;
    const double *x = c->x;
    for (int i = b; i < e; i++) c->y[i] = row_sum(val, col, x, rp[i], rp[i + 1], 0.0);
}

/* y = A x, one row per gather: the same bits on any split of the rows. */
static void spmv(fs_world *w, const fs_csr *A, const double *x, double *y) {
    spmv_ctx c = {A, x, y};
    if (w)
        fs__run(w, spmv_task, &c, A->n);
    else
        spmv_task(0, A->n, 0, &c);
}

/* Rows [b, e) of the factorisation: d_i from the rows before it, stored as
 * 1 / d_i (the sweeps multiply), with sqrt(d_i), its inverse and
 * 2 d_i - a_ii for Eisenstat's form; the diagonal's place in the row in
 * dpos; up_i, the sum of row i's entries right of the diagonal, in up.
 * Counts the rows that broke down; false if a row has no diagonal. */
static bool factor_rows(const fs_csr *A, const fs_pcg *s, double *up, double omega, int b, int e, int *fallbacks) {
    double *dinv = s->diag;
    for (int i = b; i < e; i++) {
        double di = 0, sum = 0, dic = 0, u = 0;
        bool has = false;
        for (int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            const int j = A->col[k];
            const double a = A->val[k];
            if (j < i) {
                /* a_ij^2 / d_j (DIC), and the fill row j would make right of column i, lumped on the
                 * diagonal (MIC): a_ij / d_j * (up_j - a_ji), a_ji = a_ij */
                const double ad = a * dinv[j];
                sum += ad * ((1.0 - omega) * a + omega * up[j]);
                dic += ad * a;
            } else if (j == i) {
                di = a, has = true, s->dpos[i] = k;
            } else {
                u += a;
            }
        }
        if (!has) return false;
        double v = di - sum;
        if (!(v > 0.25 * (di - dic))) v = di - dic; /* MIC's safeguard (Bridson 2008): fall back to DIC */
        if (!(v > 1e-12 * fabs(di))) v = di > 0 ? di : 1.0, (*fallbacks)++; /* breakdown: the diagonal */
        dinv[i] = 1.0 / v, up[i] = u;
        s->sq[i] = sqrt(v), s->isq[i] = 1.0 / s->sq[i], s->kd[i] = 2.0 * v - di;
    }
    return true;
}

/* z = (D + L)^-1 r, the forward sweep of M = (D + L) D^-1 (D + L^T), as row
 * gathers over A's own rows (below the diagonal: sparse.h); s->diag holds
 * 1 / d_i, s->dpos where each row's diagonal lies.  Each row's sum runs in
 * four chains (a sweep's rows follow one another: their latency is the
 * cost). */
static void forward_rows(const fs_csr *A, const fs_pcg *s, const double *r, double *z, int b, int e) {
    const int32_t *rp = A->rowptr, *col = A->col, *dp = s->dpos;
    const float *val = A->val;
    const double *dinv = s->diag;
    for (int i = b; i < e; i++) z[i] = -row_sum(val, col, z, rp[i], dp[i], -r[i]) * dinv[i]; /* below the diagonal */
}

/* Eisenstat's product q^ = C^-1 A C^-T p^ with C = (D + L) D^-1/2 and
 * A = (D + L) + (D + L^T) - K, K = 2 D - diag(A): t = (D + L^T)^-1 D^1/2 p^
 * (backward), y = (D + L)^-1 (D^1/2 p^ - K t) (forward), q^ = D^1/2 (t + y).
 * t is also C^-T p^, the step of x in A's own unknowns. */
static void eis_backward_rows(const fs_csr *A, const fs_pcg *s, const double *r, double beta, double *p, double *t,
                              int b, int e) {
    const int32_t *rp = A->rowptr, *col = A->col, *dp = s->dpos;
    const float *val = A->val;
    const double *dinv = s->diag, *isq = s->isq;
    for (int i = e - 1; i >= b; i--) {
        if (r) p[i] = r[i] + beta * p[i]; /* the CG's new direction, row by row (a row reads no other p) */
        /* above the diagonal; (D^1/2 p^)_i / d_i = p^_i / sqrt(d_i) */
        t[i] = isq[i] * p[i] - row_sum(val, col, t, dp[i] + 1, rp[i + 1], 0.0) * dinv[i];
    }
}

static void eis_forward_rows(const fs_csr *A, const fs_pcg *s, const double *p, const double *t, double *y, double *q,
                             int b, int e) {
    const int32_t *rp = A->rowptr, *col = A->col, *dp = s->dpos;
    const float *val = A->val;
    const double *dinv = s->diag, *sq = s->sq, *kd = s->kd;
    for (int i = b; i < e; i++) {
        y[i] = -row_sum(val, col, y, rp[i], dp[i], -(sq[i] * p[i] - kd[i] * t[i])) * dinv[i]; /* below the diagonal */
        q[i] = sq[i] * (t[i] + y[i]);
    }
}

/* ---- the sweeps on two threads (fs_pcg's blocks) ---- */
typedef struct sweep_ctx {
    const fs_csr *A;
    const fs_pcg *s;
    const double *r;
    double *z;     /* the factorisation: up (its row sums right of the diagonal) */
    bool backward; /* the backward sweep (Eisenstat's first half; else forward) */
    bool factor;   /* the factorisation (forward), omega as fs__dic */
    bool eis;      /* forward: Eisenstat's second half, p, t -> z, q (else z = (D + L)^-1 r) */
    double *p, *t, *q;
    double beta; /* backward, with r set: p = r + beta p first */
    double omega;
    _Atomic int fallbacks, missing; /* the factorisation's breakdowns; rows without a diagonal */
} sweep_ctx;

enum { BLK_FREE, BLK_TAKEN, BLK_DONE };

/* The blocks block b reads (up to two; by transitivity they cover every
 * block its rows read): forward, a block reads the rows before it, backward
 * the rows after it. */
static int block_deps(int b, bool backward, int layers, int dep[2]) {
    /* forward: part 0 <- part 1 of layer k - 1; 1 <- 0 of k, 2 of k - 1; 2 <- 1 of k, 3 of k - 1; 3 <- 2 of k.
     * backward, mirrored: 3 <- 2 of k + 1; 2 <- 3 of k, 1 of k + 1; 1 <- 2 of k, 0 of k + 1; 0 <- 1 of k */
    static const int same_f[FS_PCG_PARTS] = {-1, 0, 1, 2}, other_f[FS_PCG_PARTS] = {1, 2, 3, -1};
    static const int same_b[FS_PCG_PARTS] = {1, 2, 3, -1}, other_b[FS_PCG_PARTS] = {-1, 0, 1, 2};
    const int P = FS_PCG_PARTS, k = b / P, part = b % P, ko = backward ? k + 1 : k - 1;
    const int same = backward ? same_b[part] : same_f[part], other = backward ? other_b[part] : other_f[part];
    int n = 0;
    if (same >= 0) dep[n++] = P * k + same;
    if (other >= 0 && ko >= 0 && ko < layers) dep[n++] = P * ko + other;
    return n;
}

static inline void spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Block b swept once, by whichever thread comes first, after the blocks it
 * reads: a thread that finds a block it needs untouched sweeps it itself (so
 * a parallel_for that runs both halves on one thread still finishes); a
 * taken block is being swept by a thread whose inputs are done, so waiting
 * for it ends. */
static void ensure_block(sweep_ctx *c, int b) {
    _Atomic int *st = &c->s->blk_state[b];
    if (atomic_load_explicit(st, memory_order_acquire) == BLK_DONE) return;
    int dep[2];
    const int nd = block_deps(b, c->backward, c->s->layers, dep);
    for (int d = 0; d < nd; d++) ensure_block(c, dep[d]);
    int expect = BLK_FREE;
    if (atomic_compare_exchange_strong_explicit(st, &expect, BLK_TAKEN, memory_order_acq_rel, memory_order_acquire)) {
        const int32_t *blk = c->s->blk;
        if (c->factor) {
            int fb = 0;
            if (!factor_rows(c->A, c->s, c->z, c->omega, blk[b], blk[b + 1], &fb))
                atomic_fetch_add_explicit(&c->missing, 1, memory_order_relaxed);
            if (fb) atomic_fetch_add_explicit(&c->fallbacks, fb, memory_order_relaxed);
        } else if (c->backward)
            eis_backward_rows(c->A, c->s, c->r, c->beta, c->p, c->t, blk[b], blk[b + 1]);
        else if (c->eis)
            eis_forward_rows(c->A, c->s, c->p, c->t, c->z, c->q, blk[b], blk[b + 1]);
        else
            forward_rows(c->A, c->s, c->r, c->z, blk[b], blk[b + 1]);
        atomic_store_explicit(st, BLK_DONE, memory_order_release);
        return;
    }
    while (atomic_load_explicit(st, memory_order_acquire) != BLK_DONE) spin_pause();
}

/* Item 0 sweeps side A's blocks in sweep order, item 1 side B's. */
static void sweep_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    sweep_ctx *c = vctx;
    const int L = c->s->layers, P = FS_PCG_PARTS;
    for (int t = b; t < e; t++)
        for (int q = 0; q < L; q++) {
            const int k = c->backward ? L - 1 - q : q;
            /* side A: parts 0, 1 forward (1, 0 backward); side B: 2, 3 forward (3, 2 backward) */
            const int first = t == 0 ? 0 : 2, lo = c->backward ? first + 1 : first,
                      hi = c->backward ? first : first + 1;
            ensure_block(c, P * k + lo);
            ensure_block(c, P * k + hi);
        }
}

static void sweep_blocks(sweep_ctx *c) {
    const int nb = FS_PCG_PARTS * c->s->layers;
    for (int b = 0; b < nb; b++) atomic_store_explicit(&c->s->blk_state[b], BLK_FREE, memory_order_relaxed);
    fs__run_all(c->s->w, sweep_task, c, 2);
}

/* whether the sweeps run on two threads */
static bool blocked(const fs_csr *A, const fs_pcg *s) {
    return s->layers > 0 && s->blk[FS_PCG_PARTS * s->layers] == A->n && s->w && fs__workers(s->w) > 1;
}

bool fs__dic(const fs_csr *A, fs_pcg *s, double omega) {
    double *up = s->q; /* q is scratch here */
    if (blocked(A, s)) {
        sweep_ctx c = {.A = A, .s = s, .z = up, .factor = true, .omega = omega};
        atomic_init(&c.fallbacks, 0), atomic_init(&c.missing, 0);
        sweep_blocks(&c);
        s->fallbacks += atomic_load(&c.fallbacks);
        return atomic_load(&c.missing) == 0;
    }
    return factor_rows(A, s, up, omega, 0, A->n, &s->fallbacks);
}

static int block_of(const fs_pcg *s, int row) { /* the block holding a row: binary search of blk */
    int lo = 0, hi = FS_PCG_PARTS * s->layers;  /* blk[lo] <= row < blk[hi] */
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (s->blk[mid] <= row)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* Whether block bj is block b or among the blocks it waits for, directly or through others. */
static bool block_reaches(int b, int bj, bool backward, int layers, int depth) {
    if (b == bj) return true;
    if (depth > 2 * FS_PCG_PARTS + 2) return false; /* a layer or two away at most, by the deps' shape */
    int dep[2];
    const int nd = block_deps(b, backward, layers, dep);
    for (int d = 0; d < nd; d++)
        if (block_reaches(dep[d], bj, backward, layers, depth + 1)) return true;
    return false;
}

bool fs__pcg_blocks_valid(const fs_csr *A, const fs_pcg *s) {
    if (s->layers <= 0 || s->blk[0] != 0 || s->blk[FS_PCG_PARTS * s->layers] != A->n) return false;
    for (int b = 0; b < FS_PCG_PARTS * s->layers; b++)
        if (s->blk[b + 1] < s->blk[b]) return false;
    for (int i = 0; i < A->n; i++) {
        const int bi = block_of(s, i);
        for (int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            const int j = A->col[k];
            if (j != i && !block_reaches(bi, block_of(s, j), j > i, s->layers, 0)) return false;
        }
    }
    return true;
}

/* z = (D + L)^-1 r: the forward sweep alone. */
static void forward_apply(const fs_csr *A, const fs_pcg *s, const double *r, double *z) {
    if (blocked(A, s)) {
        sweep_ctx c = {.A = A, .s = s, .r = r, .z = z};
        sweep_blocks(&c);
        return;
    }
    forward_rows(A, s, r, z, 0, A->n);
}

/* q = C^-1 A C^-T p and t = C^-T p (eis_backward_rows), y scratch; with r
 * set, p = r + beta p first (the CG's direction, within the backward sweep). */
static void eis_apply(const fs_csr *A, const fs_pcg *s, const double *r, double beta, double *p, double *t, double *y,
                      double *q) {
    if (blocked(A, s)) {
        sweep_ctx c = {
            .A = A, .s = s, .eis = true, .backward = true, .r = r, .beta = beta, .p = p, .t = t, .z = y, .q = q};
        sweep_blocks(&c);
        c.backward = false;
        sweep_blocks(&c);
        return;
    }
    eis_backward_rows(A, s, r, beta, p, t, 0, A->n);
    eis_forward_rows(A, s, p, t, y, q, 0, A->n);
}

/* The CG's vector work in dot()'s FS_DOT_CHUNKS chunks, a chunk per item
 * (so the sums are dot()'s, bit for bit, on any thread count). */
enum { VEC_DOT, VEC_UPDATE, VEC_DIRECTION };
typedef struct vec_ctx {
    int op, n;
    const double *a, *b; /* VEC_DOT: the two vectors */
    double *x, *r, *p;   /* VEC_UPDATE: x += alpha p, r -= alpha q (b = q), then |r|^2 */
    const double *z;     /* VEC_DIRECTION: p = z + beta p */
    double coef;         /* alpha or beta */
    double part[FS_DOT_CHUNKS];
} vec_ctx;

static void vec_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    vec_ctx *c = vctx;
    for (int ch = b; ch < e; ch++) {
        const long lo = (long)c->n * ch / FS_DOT_CHUNKS, hi = (long)c->n * (ch + 1) / FS_DOT_CHUNKS;
        double sum = 0;
        if (c->op == VEC_DOT)
            for (long i = lo; i < hi; i++) sum += c->a[i] * c->b[i];
        else if (c->op == VEC_UPDATE)
            for (long i = lo; i < hi; i++) c->x[i] += c->coef * c->p[i], c->r[i] -= c->coef * c->b[i];
        else
            for (long i = lo; i < hi; i++) c->p[i] = c->z[i] + c->coef * c->p[i];
        if (c->op == VEC_UPDATE)
            for (long i = lo; i < hi; i++) sum += c->r[i] * c->r[i];
        c->part[ch] = sum;
    }
}

/* Runs c over the chunks (on the world's workers when s->w is set); returns the chunks' sum, added in order. */
static double vec_run(const fs_pcg *s, vec_ctx *c) {
    if (s->w)
        fs__run_all(s->w, vec_task, c, FS_DOT_CHUNKS);
    else
        vec_task(0, FS_DOT_CHUNKS, 0, c);
    double sum = 0;
    for (int ch = 0; ch < FS_DOT_CHUNKS; ch++) sum += c->part[ch];
    return sum;
}

/* |b - A x| / bnorm, with q and y as scratch. */
static double true_residual(const fs_csr *A, const fs_pcg *s, const double *b, const double *x, double *q, double *y,
                            double bnorm) {
    spmv(s->w, A, x, q);
    for (int i = 0; i < A->n; i++) y[i] = b[i] - q[i];
    return sqrt(dot(y, y, A->n)) / bnorm;
}

int fs__pcg(const fs_csr *A, fs_pcg *s, const double *b, double *x, double tol, int maxit, bool precond,
            double *resid_out) {
    int n = A->n;
    double *r = s->r, *z = s->z, *p = s->p, *q = s->q, *t = s->t;
    spmv(s->w, A, x, q);
    for (int i = 0; i < n; i++) r[i] = b[i] - q[i];
    double bnorm = sqrt(dot(b, b, n));
    if (bnorm == 0) bnorm = 1;
    double res = sqrt(dot(r, r, n)) / bnorm;
    int it = 0;
    if (!precond) { /* plain CG */
        memcpy(p, r, sizeof(double) * (size_t)n);
        double rr = dot(r, r, n);
        while (res > tol && it < maxit) {
            spmv(s->w, A, p, q);
            vec_ctx v = {.op = VEC_DOT, .n = n, .a = p, .b = q};
            double pq = vec_run(s, &v);
            if (!(pq > 0)) break; /* not positive definite along p: stop */
            v = (vec_ctx){.op = VEC_UPDATE, .n = n, .b = q, .x = x, .r = r, .p = p, .coef = rr / pq};
            const double rr1 = vec_run(s, &v);
            res = sqrt(rr1) / bnorm;
            it++;
            v = (vec_ctx){.op = VEC_DIRECTION, .n = n, .z = r, .p = p, .coef = rr1 / rr};
            rr = rr1;
            vec_run(s, &v);
        }
        if (resid_out) *resid_out = res;
        return it;
    }
    /* Eisenstat's form: r^ = C^-1 r = D^1/2 (D + L)^-1 r; x steps by t = C^-T p^ (eis_apply).  The loop
     * stops on |r^| <= tol |b^| (the preconditioned norm); |b - A x| <= tol |b| is then checked with one
     * mat-vec, and the loop goes on while it does not hold. */
    if (res > tol && maxit > 0) {
        forward_apply(A, s, r, z);
        for (int i = 0; i < n; i++) r[i] = s->sq[i] * z[i];
        forward_apply(A, s, b, z);
        for (int i = 0; i < n; i++) z[i] *= s->sq[i];
        double bhat = sqrt(dot(z, z, n));
        if (bhat == 0) bhat = 1;
        memcpy(p, r, sizeof(double) * (size_t)n);
        double rr = dot(r, r, n), beta = 0;
        for (;;) {
            eis_apply(A, s, it ? r : NULL, beta, p, t, z, q); /* p = r + beta p from the second on */
            vec_ctx v = {.op = VEC_DOT, .n = n, .a = p, .b = q};
            const double pq = vec_run(s, &v);
            if (!(pq > 0)) { /* not positive definite along p: stop */
                res = true_residual(A, s, b, x, q, z, bnorm);
                break;
            }
            v = (vec_ctx){.op = VEC_UPDATE, .n = n, .b = q, .x = x, .r = r, .p = t, .coef = rr / pq};
            const double rr1 = vec_run(s, &v);
            it++;
            if (sqrt(rr1) <= tol * bhat || it >= maxit) {
                res = true_residual(A, s, b, x, q, z, bnorm);
                if (res <= tol || it >= maxit) break;
            }
            beta = rr1 / rr, rr = rr1;
        }
    }
    if (resid_out) *resid_out = res;
    return it;
}
