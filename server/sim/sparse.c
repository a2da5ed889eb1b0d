/* sparse.c - a symmetric positive definite sparse solver for the pressure
 * Poisson equation of the MPS solver (Premoze et al. 2003, Eq. 14):
 * compressed sparse rows, incomplete Cholesky in diagonal form (DIC, or
 * modified: MIC) and the preconditioned conjugate gradient.
 *
 * Deterministic whatever the thread count: the matrix-vector product is a
 * per-row gather, and dot products are summed in FS_DOT_CHUNKS fixed chunks
 * added in order.  Storage is allocated by fs__csr_alloc only, never while
 * solving.
 */
#include <math.h>
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
    A->val = malloc(sizeof(double) * (size_t)nnz_cap);
    A->n_cap = n, A->nnz_cap = nnz_cap;
    if (!A->rowptr || !A->col || !A->val) {
        fs__csr_free(A);
        return false;
    }
    return true;
}

void fs__pcg_free(fs_pcg *s) {
    free(s->r), free(s->z), free(s->p), free(s->q), free(s->diag);
    memset(s, 0, sizeof *s);
}

bool fs__pcg_alloc(fs_pcg *s, int n) {
    fs__pcg_free(s);
    size_t d = sizeof(double) * (size_t)n;
    s->r = malloc(d), s->z = malloc(d), s->p = malloc(d), s->q = malloc(d), s->diag = malloc(d);
    if (!s->r || !s->z || !s->p || !s->q || !s->diag) {
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

static void spmv_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    const spmv_ctx *c = vctx;
    const fs_csr *A = c->A;
    for (int i = b; i < e; i++) {
        double s = 0;
        for (int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) s += A->val[k] * c->x[A->col[k]];
        c->y[i] = s;
    }
}

/* y = A x, one row per gather: the same bits on any split of the rows. */
static void spmv(fs_world *w, const fs_csr *A, const double *x, double *y) {
    spmv_ctx c = {A, x, y};
    if (w)
        fs__run(w, spmv_task, &c, A->n);
    else
        spmv_task(0, A->n, 0, &c);
}

bool fs__dic(const fs_csr *A, fs_pcg *s, double omega) {
    const int n = A->n;
    double *d = s->diag, *up = s->q; /* up[j]: sum of row j's entries right of the diagonal (q is scratch here) */
    for (int i = 0; i < n; i++) {
        double di = 0, sum = 0, dic = 0, u = 0;
        bool has = false;
        for (int k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
            const int j = A->col[k];
            const double a = A->val[k];
            if (j < i) {
                /* a_ij^2 / d_j (DIC), and the fill row j would make right of column i, lumped on the
                 * diagonal (MIC): a_ij / d_j * (up_j - a_ji), a_ji = a_ij */
                sum += a / d[j] * ((1.0 - omega) * a + omega * up[j]);
                dic += a * a / d[j];
            } else if (j == i) {
                di = a, has = true;
            } else {
                u += a;
            }
        }
        if (!has) return false;
        double v = di - sum;
        if (!(v > 0.25 * (di - dic))) v = di - dic; /* MIC's safeguard (Bridson 2008): fall back to DIC */
        if (!(v > 1e-12 * fabs(di))) v = di > 0 ? di : 1.0, s->fallbacks++; /* breakdown: the diagonal */
        d[i] = v, up[i] = u;
    }
    for (int i = 0; i < n; i++) d[i] = 1.0 / d[i]; /* dic_apply multiplies: a division is on its critical path */
    return true;
}

/* z = M^-1 r for DIC: (D + L) y = r, then (D + L^T) z = D y, both as row
 * gathers over A's own rows (columns sorted); dinv holds 1 / d_i.  Each
 * row's sum runs in two chains (the sweeps are serial: their latency is
 * the cost). */
static void dic_apply(const fs_csr *A, const double *dinv, const double *r, double *z) {
    const int n = A->n;
    const int32_t *rp = A->rowptr, *col = A->col;
    const double *val = A->val;
    for (int i = 0; i < n; i++) {
        int k = rp[i];
        const int e = rp[i + 1];
        double s0 = r[i], s1 = 0;
        for (; k + 1 < e && col[k + 1] < i; k += 2) s0 -= val[k] * z[col[k]], s1 -= val[k + 1] * z[col[k + 1]];
        if (k < e && col[k] < i) s0 -= val[k] * z[col[k]];
        z[i] = (s0 + s1) * dinv[i];
    }
    for (int i = n - 1; i >= 0; i--) {
        int k = rp[i + 1] - 1;
        const int b = rp[i];
        double s0 = 0, s1 = 0;
        for (; k - 1 >= b && col[k - 1] > i; k -= 2) s0 += val[k] * z[col[k]], s1 += val[k - 1] * z[col[k - 1]];
        if (k >= b && col[k] > i) s0 += val[k] * z[col[k]];
        z[i] -= (s0 + s1) * dinv[i];
    }
}

int fs__pcg(const fs_csr *A, fs_pcg *s, const double *b, double *x, double tol, int maxit, bool precond,
            double *resid_out) {
    int n = A->n;
    double *r = s->r, *z = s->z, *p = s->p, *q = s->q;
    spmv(s->w, A, x, q);
    for (int i = 0; i < n; i++) r[i] = b[i] - q[i];
    double bnorm = sqrt(dot(b, b, n));
    if (bnorm == 0) bnorm = 1;
    if (precond)
        dic_apply(A, s->diag, r, z);
    else
        memcpy(z, r, sizeof(double) * (size_t)n);
    memcpy(p, z, sizeof(double) * (size_t)n);
    double rz = dot(r, z, n), res = sqrt(dot(r, r, n)) / bnorm;
    int it = 0;
    while (res > tol && it < maxit) {
        spmv(s->w, A, p, q);
        double pq = dot(p, q, n);
        if (!(pq > 0)) break; /* not positive definite along p: stop */
        double alpha = rz / pq;
        for (int i = 0; i < n; i++) x[i] += alpha * p[i], r[i] -= alpha * q[i];
        res = sqrt(dot(r, r, n)) / bnorm;
        it++;
        if (res <= tol) break;
        if (precond)
            dic_apply(A, s->diag, r, z);
        else
            memcpy(z, r, sizeof(double) * (size_t)n);
        double rz1 = dot(r, z, n), beta = rz1 / rz;
        rz = rz1;
        for (int i = 0; i < n; i++) p[i] = z[i] + beta * p[i];
    }
    if (resid_out) *resid_out = res;
    return it;
}
