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
    int32_t *rowptr, *col; /* each row: its columns below the diagonal, the diagonal, then those above */
    float *val;            /* single precision: the sweeps and mat-vecs stream the matrix (docs/sim-notes.md) */
} fs_csr;
/* The preconditioner's sweeps on two threads (optional): the rows come in
 * FS_PCG_PARTS blocks per layer, block b = FS_PCG_PARTS k + part holding rows
 * [blk[b], blk[b + 1]), parts in this order along the row numbers:
 *   0  side A, away from side B      1  side A, next to side B
 *   2  side B, next to side A        3  side B, away from side A
 * where a row couples only with rows of its own and the two layers either
 * side, and a part-0 row never with a side-B row, nor a part-3 row with a
 * side-A row (the caller orders its unknowns so).  Thread 0 then sweeps
 * side A and thread 1 side B, each layer's parts 1 and 2 handed between
 * them; the sums are those of the serial sweep, bit for bit. */
#define FS_PCG_PARTS 4
typedef struct fs_pcg {
    double *r, *z, *p, *q, *t, *diag; /* diag: 1 / the preconditioner's pivots d_i (fs__dic) */
    double *sq, *isq, *kd;            /* sqrt(d_i), 1 / sqrt(d_i), 2 d_i - a_ii (Eisenstat's form, fs__pcg) */
    int32_t *dpos;                    /* each row's diagonal entry in A (fs__dic): the sweeps' bounds */
    int fallbacks;                    /* rows where the factorisation broke down and used the diagonal */
    fs_world *w;                      /* when set, mat-vecs and vector updates run through fs__run (deterministic) */
    int layers;                       /* > 0: the blocks above (blk has FS_PCG_PARTS layers + 1 entries) */
    int32_t *blk;
    _Atomic int *blk_state; /* per block while a sweep runs: 0 free, 1 taken, 2 done */
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
/* Whether every row of A reads only rows its block waits for in the sweeps
 * (s->blk as above): the check of an ordering, for tests (a search per
 * entry: not for the step). */
bool fs__pcg_blocks_valid(const fs_csr *A, const fs_pcg *s);
/* Solves A x = b from the x given, to |r| <= tol |b|; returns iterations.
 * With precond, CG runs on the split system C^-1 A C^-T, M = C C^T, in
 * Eisenstat's form (Eisenstat 1981): since M's triangles are A's own, a
 * product with it costs the two sweeps and no mat-vec. */
int fs__pcg(const fs_csr *A, fs_pcg *s, const double *b, double *x, double tol, int maxit, bool precond, double *resid);

#endif
