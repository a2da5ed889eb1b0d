/* sparse.h - CSR matrices and the conjugate gradient preconditioned by
 * (modified) incomplete Cholesky in diagonal form (sparse.c), for the
 * implicit solvers. */
#ifndef SIM_SPARSE_H
#define SIM_SPARSE_H

#include <stdbool.h>
#include <stdint.h>

#include "fluid_sim.h"

#define FS_DOT_CHUNKS 64
typedef struct fs_csr {
    int n, nnz, n_cap, nnz_cap;
    int32_t *rowptr, *col; /* columns sorted within a row */
    double *val;
} fs_csr;
typedef struct fs_pcg {
    double *r, *z, *p, *q, *diag; /* diag: 1 / the preconditioner's pivots (fs__dic) */
    int fallbacks;                /* rows where the factorisation broke down and used the diagonal */
    fs_world *w;                  /* when set, mat-vecs and vector updates run through fs__run (deterministic) */
} fs_pcg;
bool fs__csr_alloc(fs_csr *A, int n, int nnz_cap);
void fs__csr_free(fs_csr *A);
bool fs__pcg_alloc(fs_pcg *s, int n);
void fs__pcg_free(fs_pcg *s);
/* Diagonal incomplete Cholesky (DIC): M = (D + L_A) D^-1 (D + L_A)^T with
 * L_A the strict lower part of A itself and d_i = a_ii - sum_j<i a_ij^2 / d_j;
 * O(nnz) to set up, no factor stored (s->diag: the pivots' inverses).  omega > 0 makes it modified
 * (MIC): the fill each elimination would make, times omega, moves onto the
 * diagonal.  fs__pcg with precond then applies it. */
bool fs__dic(const fs_csr *A, fs_pcg *s, double omega);
/* Solves A x = b from the x given, to |r| <= tol |b|; returns iterations. */
int fs__pcg(const fs_csr *A, fs_pcg *s, const double *b, double *x, double tol, int maxit, bool precond, double *resid);

#endif
