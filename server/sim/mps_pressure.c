/* mps_pressure.c - the MPS solver's pressure: the number density n* at r*
 * (Premoze et al. 2003, Eq. 3-4), the free-surface test (Eq. 18, refined
 * by the neighbours' asymmetry) and its particles' pressure, the
 * pressure Poisson equation (Eq. 14, in div(grad p / rho) form for several
 * fluids, Sec. 3.4) assembled over the particles, the first-layer wall
 * particles mirroring the pressure (a Neumann condition with the hydrostatic
 * gradient), and its solve by CG preconditioned by modified incomplete
 * Cholesky in its diagonal form (MIC, sparse.c).  Choices and
 * measurements: docs/sim-notes.md, "MPS", "Eq. 14 and several fluids",
 * "Walls". */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mps_internal.h"
#include "sim_util.h"

/* The matrix: a row for each particle; room for NNZ_PER_ROW entries a row
 * on average. */
bool fs__mps_ensure_matrix(fs_world *w, mps_state *s) {
    if (w->gz != s->blk_layers || w->gx + w->gy > s->hist_cap) { /* the grid's shape: a new domain */
        free(s->blk), free(s->hist), free((void *)s->blk_state);
        const size_t nb = (size_t)FS_PCG_PARTS * (size_t)w->gz;
        s->blk = malloc(sizeof(int32_t) * (nb + 1)), s->hist = malloc(sizeof(int32_t) * (size_t)(w->gx + w->gy));
        s->blk_state = malloc(sizeof(_Atomic int) * nb);
        s->blk_layers = s->blk && s->hist && s->blk_state ? w->gz : 0;
        s->hist_cap = s->blk_layers ? w->gx + w->gy : 0;
        if (!s->blk_layers) return false;
    }
    int rows = w->cap;
    if (rows <= s->rows_cap && s->A.rowptr) return true;
    long nnz = (long)w->cap * NNZ_PER_ROW;
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

/* |sum w r^_ij| / n of particle i over its pairs within r_e at r* (L, R:
 * the particles' nf, then the walls of both layers), in whole vectors as
 * nstar_task. */
FS_SIMD_CLONES static float one_sidedness(const mps_state *s, const ctx *c, int i, const int32_t *L, const float *R,
                                          int nf, int nt, float n) {
    const fs_world *w = c->w;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, *WX = s->wx, *WY = s->wy, *WZ = s->wz, re = s->re_n;
    const int cap = w->cap;
    const float xi = X[i], yi = Y[i], zi = Z[i];
    float ux[LANES] = {0}, uy[LANES] = {0}, uz[LANES] = {0};
    for (int kb = 0; kb < nf; kb += LANES) {
#pragma omp simd
        for (int l = 0; l < LANES; l++) { /* particles */
            const int k = kb + l, live = -(k < nf), j = (L[k] & live) | (i & ~live);
            const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi, r = R[k];
            const float u = k < nf && r > 0 ? weight(r, re, c->rmin) / r : 0.0f;
            ux[l] += u * dx, uy[l] += u * dy, uz[l] += u * dz;
        }
    }
    for (int kb = nf; kb < nt; kb += LANES) {
#pragma omp simd
        for (int l = 0; l < LANES; l++) { /* walls */
            const int k = kb + l, q = (L[k] - cap) & -(k < nt);
            const float dx = WX[q] - xi, dy = WY[q] - yi, dz = WZ[q] - zi, r = R[k];
            const float u = k < nt && r > 0 ? weight(r, re, c->rmin) / r : 0.0f;
            ux[l] += u * dx, uy[l] += u * dy, uz[l] += u * dz;
        }
    }
    const float sx = lanes_sum(ux), sy = lanes_sum(uy), sz = lanes_sum(uz);
    return n > 0 ? sqrtf(sx * sx + sy * sy + sz * sz) / n : 1.0f;
}

/* n* at r* (Eq. 14's source, Eq. 18's test); then keeps in the near list
 * only the pairs within r_e at r* (first-layer walls only), with |r*_ij|.
 * The near list's pairs are measured squared and cut at r_e^2 first: the
 * square root and Eq. 3's division are taken of the ~33 kept, not the ~125
 * (NEAR l0 at r^n). */
FS_SIMD_CLONES static void nstar_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, re = s->re_n, re2 = re * re, rmin = c->rmin,
                surf_thr = BETA * s->n0;
    const float *WX = s->wx, *WY = s->wy, *WZ = s->wz; /* locals: the stores cannot alias them */
    const int cap = w->cap;
    for (int i = b; i < e; i++) {
        if (i + PREFETCH_AHEAD < e) prefetch_list(s, i + PREFETCH_AHEAD, s->nn_t[i + PREFETCH_AHEAD], false);
        int32_t *L = s->nn + (size_t)i * NN_STRIDE;
        float *R = s->nr + (size_t)i * NN_STRIDE;
        const float xi = X[i], yi = Y[i], zi = Z[i];
        const int nf = s->nn_f[i], nt = s->nn_t[i];
        /* |r*_ij|^2 in whole vectors (lanes past the segment's end read i itself or wall 0; their R lie within
         * the stride and are dropped by the cut) */
        for (int kb = 0; kb < nf; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) { /* particles */
                const int k = kb + l, live = -(k < nf), j = (L[k] & live) | (i & ~live);
                const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                R[k] = dx * dx + dy * dy + dz * dz;
            }
        }
        for (int kb = nf; kb < nt; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) { /* walls */
                const int k = kb + l, q = (L[k] - cap) & -(k < nt);
                const float dx = WX[q] - xi, dy = WY[q] - yi, dz = WZ[q] - zi;
                R[k] = dx * dx + dy * dy + dz * dz;
            }
        }
        /* the cut at r_e (particles, then the walls of both layers), in order, without branches */
        int32_t cj[NN_STRIDE + FS_SCAN_PAD];
        float cr[NN_STRIDE + FS_SCAN_PAD];
        const int kf = fs__pack_lt(L, R, nf, re2, cj, cr);
        const int kt = kf + fs__pack_lt(L + nf, R + nf, nt - nf, re2, cj + kf, cr + kf);
        /* n* = sum w(|r*_ij|) over them, in whole vectors, lane sums added in a fixed order */
        for (int l = 0; l < LANES; l++) cr[kt + l] = re2; /* finite; masked */
        float acc[LANES] = {0};
        for (int kb = 0; kb < kt; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) {
                const int k = kb + l;
                const float r = sqrtf(cr[k]);
                cr[k] = r;
                acc[l] += k < kt ? weight(r, re, rmin) : 0.0f;
            }
        }
        const float n = lanes_sum(acc);
        s->nst[i] = n;
        /* Eq. 18's candidates (n* < beta n0) at the surface by their own neighbourhood: one-sided,
         * |sum w r^_ij| / sum w (r^_ij the unit vector to j) at least SURF_ASYM, or sparse (fs__mps_pressure) */
        s->outer[i] =
            n < surf_thr && (n < SURF_SPARSE * s->n0 || one_sidedness(s, c, i, cj, cr, kf, kt, n) >= SURF_ASYM);
        /* what Eq. 14 and Eq. 5 use: the particles and the first-layer walls */
        memcpy(L, cj, sizeof(int32_t) * (size_t)kf), memcpy(R, cr, sizeof(float) * (size_t)kf);
        int k1 = kf;
        for (int k = kf; k < kt; k++) L[k1] = cj[k], R[k1] = cr[k], k1 += s->wlayer[cj[k] - cap] == 1;
        s->nn_f[i] = (int16_t)kf, s->nn_t[i] = (int16_t)k1;
    }
}

/* Eq. 18's Dirichlet value.  The paper sets p = 0 at the free-surface
 * particles' centres, but a surface particle stands for fluid up to about
 * half a spacing above its centre, so its centre lies SURF_DEPTH l0 under
 * the surface: p = rho |g| SURF_DEPTH l0.  With p = 0 there, and Eq. 5's
 * gradient taken of the dynamic pressure (correct_task), a tank at rest read
 * 7.7% low, every layer by about rho |g| 0.8 l0 (docs/sim-notes.md, "The
 * free surface"). */
static inline float surface_pressure(const ctx *c, const mps_state *s, int i) {
    return s->rho[i] * c->gmag * SURF_DEPTH * s->l0;
}

/* Eq. 14, one row per unknown, into the room count_task measured: the
 * columns below the diagonal, the diagonal, then those above (sparse.h).  A
 * first-layer wall particle j mirrors the pressure of i with the
 * hydrostatic gradient, p_j = p_i + rho_i g.(r_j - r_i) (a Neumann
 * condition, as mirror particles do: Harada, Koshizuka & Shimazaki 2008;
 * Mitsume et al. 2015): its pair's term of the Laplacian is known and
 * moves to the right-hand side, as does a free-surface neighbour's
 * pressure (surface_pressure). */
FS_SIMD_CLONES static void fill_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    fs_csr *A = &s->A;
    const double K = c->ppe_k, inv_dt2 = 1.0 / ((double)c->dt * c->dt);
    const fs_vec3 g = w->dom.gravity;
    for (int i = b; i < e; i++) {
        if (i + PREFETCH_AHEAD < e) {
            const int ia = i + PREFETCH_AHEAD, ra = s->row[ia];
            prefetch_list(s, ia, s->nn_t[ia], true);
            if (ra >= 0) { /* its row's room (the rows follow the blocks, not the particles) */
                const int at = A->rowptr[ra], m = A->rowptr[ra + 1] - at;
                for (int k = 0; k < (int)sizeof *A->val * m; k += 64)
                    __builtin_prefetch((const char *)(A->val + at) + k, 1);
                for (int k = 0; k < (int)sizeof *A->col * m; k += 64)
                    __builtin_prefetch((const char *)(A->col + at) + k, 1);
            }
        }
        const int row = s->row[i];
        if (row < 0) continue;
        const int32_t *L = s->nn + (size_t)i * NN_STRIDE;
        const float *R = s->nr + (size_t)i * NN_STRIDE;
        const float rhoi = s->rho[i];
        double diag = 0, known = 0;
        int lo = A->rowptr[row],
            hi = A->rowptr[row + 1] - 1; /* below the diagonal from the left, above from the right */
        const int nf = s->nn_f[i];
        /* Eq. 7, div(grad p / rho): the pairs' w 2 / (rho_i + rho_j) (1 / rho_i in one fluid), in whole vectors */
        float cf[NN_STRIDE];
#pragma omp simd
        for (int k = 0; k < nf; k++) cf[k] = weight(R[k], s->re_n, c->rmin) * (2.0f / (rhoi + s->rho[L[k]]));
        for (int k = 0; k < nf; k++) { /* particles, without branches: the sides of the diagonal are unpredictable */
            const int j = L[k], rj = s->row[j], surf = rj < 0, below = rj < row;
            const double kc = (float)(K * cf[k]); /* as the matrix stores it: the diagonal sums what the row holds */
            diag += kc;
            known += surf ? kc * surface_pressure(c, s, j) : 0.0; /* the free surface: p_j is known */
            const int at = below ? lo : hi; /* a surface pair's write lands where the next one (or the diagonal) goes */
            A->col[at] = rj, A->val[at] = (float)-kc; /* exact */
            lo += below & !surf, hi -= !below;
        }
        for (int k = s->nn_f[i]; k < s->nn_t[i]; k++) { /* first-layer walls: K w / rho_i (p_i - p_j) is known */
            const int q = L[k] - w->cap;
            const float dx = s->wx[q] - w->p.x[i], dy = s->wy[q] - w->p.y[i], dz = s->wz[q] - w->p.z[i];
            known += K * weight(R[k], s->re_n, c->rmin) * (g.x * dx + g.y * dy + g.z * dz);
        }
        /* + the compressibility of water over dt^2 (weak compressibility,
         * Koshizuka's practice): keeps a pocket without free surface solvable */
        A->col[lo] = row, A->val[lo] = (float)(diag + COMPRESSIBILITY * inv_dt2); /* lo == hi: count_task's room */
        /* Eq. 14's source, RELAX (n* - n0) / (n0 dt^2), split in two: what this sub-step's u* compresses,
         * (n* - n^n) / n0, over dt^2 as printed (the divergence part, Tanaka & Masunaga 2010's first term), and
         * the error the sub-step starts from, (n^n - n0) / n0, over dt times the longest sub-step the limits
         * allow (their second, with gamma = dt / dt_lim).  At dt = dt_lim that is Eq. 14 exactly; a shorter
         * sub-step (a short world step, or the count's rounding) corrects the standing error at the same rate
         * in time instead of RELAX of it every sub-step, whose pressure, ~ 1 / dt^2, turned the lattice's noise
         * into velocities ~ 1 / dt: at 1/1920 s the dam break's front ran 2x fast (docs/sim-notes.md, "Time
         * step").  Each part is capped at MAX_SOURCE so that a state compressed by another solver (Clavet's runs
         * 50% dense) relaxes over several sub-steps instead of exploding. */
        const double n0 = s->n0, en = fmin((s->nrn[i] - n0) / n0, MAX_SOURCE),
                     es = fmin((s->nst[i] - s->nrn[i]) / n0, MAX_SOURCE);
        s->b[row] = RELAX * (inv_dt2 * es + en / ((double)c->dt * c->dt_lim)) + known;
    }
}

/* The entries of each row, as fill_task will emit them: the diagonal and
 * every particle with a row closer than r_e (its coefficient may round to
 * 0 at r_e, which costs nothing). */
static void count_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    for (int i = b; i < e; i++) {
        if (i + PREFETCH_AHEAD < e) prefetch_list(s, i + PREFETCH_AHEAD, s->nn_f[i + PREFETCH_AHEAD], false);
        const int row = s->row[i];
        if (row < 0) continue;
        const int32_t *L = s->nn + (size_t)i * NN_STRIDE;
        int cnt = 1;
        for (int k = 0; k < s->nn_f[i]; k++) cnt += s->row[L[k]] >= 0;
        s->rnnz[row] = cnt;
    }
}

/* The unknowns' row numbers (s->row >= 0 on entry marks one) in the blocks
 * of the two-thread MIC sweeps (sparse.h): the layer is the particle's cell
 * along z at r^n (the grid's slowest axis), the sides split the longer of x
 * and y at the unknowns' median cell, and parts 1 and 2 are the two cells
 * either side of the split.  A pair in Eq. 14 lies within h at r^n, so
 * within two cells of h / 2 along every axis: that is all sparse.c's blocks
 * need.  Within a block the rows follow the particles' order.  The order
 * depends on the state alone, not on the thread count. */
static void number_rows(const fs_world *w, mps_state *s, int rows) {
    const int gx = w->gx, gy = w->gy, P = FS_PCG_PARTS, nb = P * s->blk_layers;
    int32_t *hx = s->hist, *hy = s->hist + gx, *blk = s->blk;
    for (int c = 0; c < gx + gy; c++) s->hist[c] = 0;
    for (int i = 0; i < w->n; i++)
        if (s->row[i] >= 0) {
            const int cell = w->cell[i];
            hx[cell % gx]++, hy[cell / gx % gy]++;
        }
    int lo[2] = {gx, gy}, hi[2] = {-1, -1};
    for (int c = 0; c < gx; c++) lo[0] = hx[c] && c < lo[0] ? c : lo[0], hi[0] = hx[c] ? c : hi[0];
    for (int c = 0; c < gy; c++) lo[1] = hy[c] && c < lo[1] ? c : lo[1], hi[1] = hy[c] ? c : hi[1];
    const int axis = hi[0] - lo[0] >= hi[1] - lo[1] ? 0 : 1, *h = axis ? hy : hx, g = axis ? gy : gx;
    int split = 0;
    for (int acc = 0; split < g && 2 * acc < rows; split++) acc += h[split];
    for (int b = 0; b <= nb; b++) blk[b] = 0;
    for (int i = 0; i < w->n; i++)
        if (s->row[i] >= 0) {
            const int cell = w->cell[i], c = axis ? cell / gx % gy : cell % gx, k = cell / (gx * gy);
            const int part = c < split ? (c < split - 2 ? 0 : 1) : (c < split + 2 ? 2 : 3);
            s->row[i] = P * k + part, blk[P * k + part + 1]++;
        }
    for (int b = 0; b < nb; b++) blk[b + 1] += blk[b];
    for (int i = 0; i < w->n; i++) /* blk[b] counts on as the cursor, then is set back */
        if (s->row[i] >= 0) s->row[i] = blk[s->row[i]]++;
    for (int b = nb; b > 0; b--) blk[b] = blk[b - 1];
    blk[0] = 0;
}

/* Eq. 18's particles: those at the surface by their own neighbourhood
 * (outer, nstar_task) and those short of n0 next to one; row -1 for them, 0
 * (an unknown, numbered by number_rows) for the others.  A particle short of
 * n0 inside the fluid (next to a gap, |sum w r^| / sum w ~ 0.08 for one
 * missing neighbour) keeps its row, its source pulling the gap shut: given
 * the surface's pressure, such a gap deep in the water grew into a burst
 * that stirred the whole tank (docs/sim-notes.md). */
static void surface_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const float thr = BETA * s->n0;
    for (int i = b; i < e; i++) {
        bool surf = s->outer[i];
        if (!surf && s->nst[i] < thr) {
            const int32_t *L = s->nn + (size_t)i * NN_STRIDE;
            for (int k = 0; k < s->nn_f[i] && !surf; k++) surf = s->outer[L[k]];
        }
        s->row[i] = surf ? -1 : 0;
    }
}

/* The CG's first guess: the last pressures (by slot). */
static void warm_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    for (int i = b; i < e; i++)
        if (s->row[i] >= 0 && s->row[i] < c->rows) s->x[s->row[i]] = s->p_slot[w->p.slot[i]];
}

/* The particles' pressures from the solve (Eq. 18's at the surface), negative ones set to 0. */
static void press_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    for (int i = b; i < e; i++) {
        const int row = s->row[i];
        const float v = row < 0 ? surface_pressure(c, s, i) : row < c->rows ? (float)s->x[row] : 0.0f;
        s->press[i] = isfinite(v) && v > 0 ? v : 0.0f;
    }
}

/* n*, the free surface (Eq. 18), Eq. 14 assembled and solved by MIC-CG;
 * the particles' pressures (s->press), negative ones set to 0.  Adds to the
 * ASSEMBLE and SOLVE phases. */
void fs__mps_pressure(fs_world *w, mps_state *s, ctx *c) {
    double *ph = w->st.phase_ms, t = fs__now_ms();
    const int n = w->n;
    fs__run(w, nstar_task, c, n);
    /* Eq. 18, n* < beta n0, for the particles at the surface: one-sided neighbourhoods (SURF_ASYM, the
     * neighbour-asymmetry test of Khayyer, Gotoh & Shao 2009), sparse ones (SURF_SPARSE), and the particles
     * next to either (surface_task) */
    fs__run(w, surface_task, c, n);
    int rows = 0;
    for (int i = 0; i < n; i++) rows += s->row[i] >= 0;
    const int surface = n - rows;
    number_rows(w, s, rows);
    fs_csr *A = &s->A;
    fs__run(w, count_task, c, n);
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
    if (rows) fs__run(w, fill_task, c, n);
    /* warm start from the last pressures */
    c->rows = rows;
    fs__run(w, warm_task, c, n);
    ph[FS_PHASE_ASSEMBLE] += fs__now_ms() - t;

    /* CG preconditioned by MIC */
    t = fs__now_ms();
    double res = 0;
    int it = 0;
    if (rows > 0) {
        s->pcg.w = w;
        s->pcg.fallbacks = 0;
        s->pcg.layers = s->blk_layers, s->pcg.blk = s->blk, s->pcg.blk_state = s->blk_state;
        bool pre = fs__dic(A, &s->pcg, MIC_OMEGA);
        it = fs__pcg(A, &s->pcg, s->b, s->x, CG_TOL, CG_MAXIT, pre, &res);
    }
    fs__run(w, press_task, c, n);
    w->st.solver_iterations = it;
    w->st.solver_residual = res;
    s->unknowns = rows;
    s->surface = surface;
    ph[FS_PHASE_SOLVE] += fs__now_ms() - t;
}

bool fs__mps_blocks_valid(const fs_world *w) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    return s && (s->A.n == 0 || fs__pcg_blocks_valid(&s->A, &s->pcg));
}
