/* mps_pressure.c - the MPS solver's pressure: the number density n* at r*
 * (Premoze et al. 2003, Eq. 3-4), the free-surface test (Eq. 18), the
 * pressure Poisson equation (Eq. 14, in div(grad p / rho) form for several
 * fluids, Sec. 3.4) assembled over the particles and the active first-layer
 * wall particles, and its solve by CG preconditioned by modified incomplete
 * Cholesky in its diagonal form (MIC, sparse.c).  Choices and
 * measurements: docs/sim-notes.md, "MPS", "Eq. 14 and several fluids". */
#include <math.h>
#include <stdlib.h>

#include "mps_internal.h"
#include "sim_util.h"

/* The matrix: rows for the particles and the first-layer walls; room for
 * NNZ_PER_ROW entries a row on average.  Allocated with the walls. */
bool fs__mps_ensure_matrix(fs_world *w, mps_state *s) {
    int rows = w->cap + s->nl1;
    if (rows <= s->rows_cap && s->A.rowptr) return true;
    long nnz = (long)w->cap * NNZ_PER_ROW + (long)s->nl1 * 64;
    fs__csr_free(&s->A);
    fs__pcg_free(&s->pcg);
    free(s->b), free(s->x), free(s->rnnz);
    s->b = malloc(sizeof(double) * (size_t)rows), s->x = malloc(sizeof(double) * (size_t)rows);
    s->rnnz = malloc(sizeof(int32_t) * (size_t)rows);
    if (!s->b || !s->x || !s->rnnz || nnz > 0x7fffffffL || !fs__csr_alloc(&s->A, rows, (int)nnz) ||
        !fs__pcg_alloc(&s->pcg, rows)) {
        s->rows_cap = 0;
        return false;
    }
    s->rows_cap = rows;
    return true;
}

/* n* at r* (Eq. 14's source, Eq. 18's test), for u < w->n particle u (also
 * keeping |r*_ij| of its pairs), else active wall u - w->n. */
static void nstar_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    const int nf = w->n;
    for (int u = b; u < e; u++) {
        float n = 0;
        if (u < nf) {
            const int i = u;
            const int32_t *L = s->nn + (size_t)i * NN_MAX;
            float *R = s->nr + (size_t)i * NN_MAX;
            for (int k = 0; k < s->nn_t[i]; k++) {
                float dx, dy, dz;
                nb_offset(w, s, i, L[k], &dx, &dy, &dz);
                const float r = sqrtf(dx * dx + dy * dy + dz * dz);
                R[k] = r;
                n += weight(r, s->re_n, c->rmin);
            }
            s->nst[i] = n;
        } else {
            const int a = u - nf, q = s->act[a], k = s->l1_wall[q];
            const int32_t *L = s->anb + (size_t)a * WNB_MAX;
            n = s->l1_nstatic[q];
            for (int t = 0; t < s->anb_n[a]; t++) {
                int j = L[t];
                float dx = X[j] - s->wx[k], dy = Y[j] - s->wy[k], dz = Z[j] - s->wz[k];
                n += weight(sqrtf(dx * dx + dy * dy + dz * dz), s->re_n, c->rmin);
            }
            s->anst[a] = n;
        }
    }
}

/* Laplacian coefficient of a pair (Eq. 7 in div(grad p / rho) form), over re_n. */
static inline float lap_coef(const ctx *c, float r, float rho_i, float rho_j) {
    return weight(r, c->s->re_n, c->rmin) * 2.0f / (rho_i + rho_j);
}

/* Eq. 14, one row per unknown, into the room count_task measured.  Row
 * entries come out with ascending columns; the diagonal sits in its place. */
static void fill_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    fs_csr *A = &s->A;
    const double K = c->ppe_k, inv_dt2 = 1.0 / ((double)c->dt * c->dt);
    const int nf = w->n;
    for (int u = b; u < e; u++) {
        /* u < nf: particle u; else active wall u - nf */
        const int row = u < nf ? s->row[u] : s->arow[u - nf];
        if (row < 0) continue;
        double diag = 0, nst;
        const int k0 = A->rowptr[row];
        int cnt = 0, dpos = -1, nwc = 0;
        int32_t wc[WWN_MAX]; /* wall columns, sorted before they are emitted */
        double wv[WWN_MAX];
#define EMIT(C_, V_)                                                                                                   \
    do {                                                                                                               \
        if (dpos < 0 && (C_) > row) dpos = k0 + cnt++;                                                                 \
        A->col[k0 + cnt] = (C_), A->val[k0 + cnt] = (V_);                                                              \
        cnt++;                                                                                                         \
    } while (0)
        if (u < nf) {
            const int i = u;
            const int32_t *L = s->nn + (size_t)i * NN_MAX;
            const float *R = s->nr + (size_t)i * NN_MAX;
            const float rhoi = s->rho[i];
            for (int k = 0; k < s->nn_t[i]; k++) {
                int j = L[k];
                if (R[k] >= s->re_n) continue;
                if (j < w->cap) {
                    float cf = lap_coef(c, R[k], rhoi, s->rho[j]);
                    diag += K * cf;
                    if (s->row[j] >= 0) EMIT(s->row[j], -K * cf);
                } else {
                    int q = j - w->cap;
                    if (s->wlayer[q] != 1) continue;
                    float cf = lap_coef(c, R[k], rhoi, RHO_WALL);
                    diag += K * cf;
                    int a = s->act_of[s->wl1[q]];
                    if (a >= 0 && s->arow[a] >= 0 && nwc < WWN_MAX) wc[nwc] = s->arow[a], wv[nwc++] = -K * cf;
                }
            }
            nst = s->nst[i];
        } else {
            const int a = u - nf, q = s->act[a], k = s->l1_wall[q];
            const int32_t *L = s->anb + (size_t)a * WNB_MAX;
            for (int t = 0; t < s->anb_n[a]; t++) {
                int j = L[t];
                float dx = X[j] - s->wx[k], dy = Y[j] - s->wy[k], dz = Z[j] - s->wz[k];
                const float r = sqrtf(dx * dx + dy * dy + dz * dz);
                if (r >= s->re_n) continue;
                float cf = lap_coef(c, r, RHO_WALL, s->rho[j]);
                diag += K * cf;
                if (s->row[j] >= 0) EMIT(s->row[j], -K * cf);
            }
            const int32_t *WJ = s->l1_wj + (size_t)q * WWN_MAX;
            const float *WW = s->l1_ww + (size_t)q * WWN_MAX;
            for (int t = 0; t < s->l1_wn[q]; t++) {
                const float wl = WW[t];
                if (wl <= 0) continue;
                double cf = (double)wl * (1.0 / RHO_WALL);
                diag += K * cf;
                int a2 = s->act_of[WJ[t]];
                if (a2 >= 0 && s->arow[a2] >= 0 && nwc < WWN_MAX) wc[nwc] = s->arow[a2], wv[nwc++] = -K * cf;
            }
            nst = s->anst[a];
        }
        fs__sort_keyed(wc, wv, sizeof *wv, 1, nwc); /* first-layer walls ascending (their rows follow the particles') */
        for (int a = 0; a < nwc; a++) EMIT(wc[a], wv[a]);
#undef EMIT
        if (dpos < 0) dpos = k0 + cnt++;
        {
            A->col[dpos] = row;
            /* + the compressibility of water over dt^2 (weak compressibility,
             * Koshizuka's practice): keeps a pocket without free surface solvable */
            A->val[dpos] = diag + COMPRESSIBILITY * inv_dt2;
            /* Eq. 14; the density error is capped at MAX_SOURCE so that a state compressed by another
             * solver (Clavet's runs 50% dense) relaxes over several sub-steps instead of exploding */
            double err = (nst - (double)s->n0) / (double)s->n0;
            err = err > MAX_SOURCE ? MAX_SOURCE : err;
            s->b[row] = RELAX * inv_dt2 * err;
        }
    }
}

/* The entries of each row, as fill_task will emit them, without their
 * values: every pair closer than r_e is an entry (its coefficient may round
 * to 0 at r_e, which costs nothing). */
static void count_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    const int nf = w->n;
    const float ren = s->re_n;
    for (int u = b; u < e; u++) {
        const int row = u < nf ? s->row[u] : s->arow[u - nf];
        if (row < 0) continue;
        int cnt = 1, nwc = 0; /* the diagonal */
        if (u < nf) {
            const int32_t *L = s->nn + (size_t)u * NN_MAX;
            const float *R = s->nr + (size_t)u * NN_MAX;
            for (int k = 0; k < s->nn_t[u]; k++) {
                const int j = L[k];
                if (R[k] >= ren) continue;
                if (j < w->cap) {
                    cnt += s->row[j] >= 0;
                } else {
                    const int q = j - w->cap;
                    if (s->wlayer[q] != 1) continue;
                    const int a = s->act_of[s->wl1[q]];
                    nwc += a >= 0 && s->arow[a] >= 0 && nwc < WWN_MAX;
                }
            }
        } else {
            const int a = u - nf, q = s->act[a], k = s->l1_wall[q];
            const int32_t *L = s->anb + (size_t)a * WNB_MAX;
            for (int t = 0; t < s->anb_n[a]; t++) {
                const int j = L[t];
                const float dx = X[j] - s->wx[k], dy = Y[j] - s->wy[k], dz = Z[j] - s->wz[k];
                if (sqrtf(dx * dx + dy * dy + dz * dz) < ren) cnt += s->row[j] >= 0;
            }
            const int32_t *WJ = s->l1_wj + (size_t)q * WWN_MAX;
            const float *WW = s->l1_ww + (size_t)q * WWN_MAX;
            for (int t = 0; t < s->l1_wn[q]; t++) {
                if (!(WW[t] > 0)) continue;
                const int a2 = s->act_of[WJ[t]];
                nwc += a2 >= 0 && s->arow[a2] >= 0 && nwc < WWN_MAX;
            }
        }
        s->rnnz[row] = cnt + nwc;
    }
}

/* n*, the free surface (Eq. 18), Eq. 14 assembled and solved by MIC-CG; the
 * pressures of the particles (s->press) and of the active walls (s->wp),
 * negative ones set to 0.  Adds to the ASSEMBLE and SOLVE phases. */
void fs__mps_pressure(fs_world *w, mps_state *s, ctx *c) {
    double *ph = w->st.phase_ms, t = fs__now_ms();
    const int n = w->n;
    fs__run(w, nstar_task, c, n + s->nact);
    int rows = 0, surface = 0;
    const float thr = BETA * s->n0;
    for (int i = 0; i < n; i++) {
        bool surf = s->nst[i] < thr;
        s->row[i] = surf ? -1 : rows++;
        surface += surf;
    }
    for (int a = 0; a < s->nact; a++) s->arow[a] = s->anst[a] < thr ? -1 : rows++;
    fs_csr *A = &s->A;
    fs__run(w, count_task, c, n + s->nact);
    long nnz = 0;
    for (int r = 0; r < rows; r++) nnz += s->rnnz[r];
    if (nnz > A->nnz_cap) { /* not seen: ~33 entries a row at rest */
        rows = 0;
        s->shrunk++;
    }
    A->rowptr[0] = 0;
    for (int r = 0; r < rows; r++) A->rowptr[r + 1] = A->rowptr[r] + s->rnnz[r];
    A->n = rows;
    A->nnz = (int)(rows ? nnz : 0);
    fs__run(w, fill_task, c, n + s->nact);
    /* warm start from the last pressures */
    for (int i = 0; i < n; i++)
        if (s->row[i] >= 0) s->x[s->row[i]] = s->p_slot[w->p.slot[i]];
    for (int a = 0; a < s->nact; a++)
        if (s->arow[a] >= 0) s->x[s->arow[a]] = s->wp[s->l1_wall[s->act[a]]];
    ph[FS_PHASE_ASSEMBLE] += fs__now_ms() - t;

    /* CG preconditioned by MIC */
    t = fs__now_ms();
    double res = 0;
    int it = 0;
    if (rows > 0) {
        s->pcg.w = w;
        s->pcg.fallbacks = 0;
        bool pre = fs__dic(A, &s->pcg, MIC_OMEGA);
        it = fs__pcg(A, &s->pcg, s->b, s->x, CG_TOL, CG_MAXIT, pre, &res);
    }
    for (int i = 0; i < n; i++) {
        float v = s->row[i] >= 0 ? (float)s->x[s->row[i]] : 0.0f;
        s->press[i] = isfinite(v) && v > 0 ? v : 0.0f;
    }
    for (int a = 0; a < s->nact; a++) {
        float v = s->arow[a] >= 0 ? (float)s->x[s->arow[a]] : 0.0f;
        s->wp[s->l1_wall[s->act[a]]] = isfinite(v) && v > 0 ? v : 0.0f;
    }
    w->st.solver_iterations = it;
    w->st.solver_residual = res;
    s->unknowns = rows;
    s->surface = surface;
    ph[FS_PHASE_SOLVE] += fs__now_ms() - t;
}
