/* mps.c - the Moving Particle Semi-implicit solver of Premoze, Tasdizen,
 * Bigler, Lefohn & Whitaker 2003, "Particle-Based Simulation of Fluids"
 * (after Koshizuka & Oka 1996), in 3D: its lifetime, the step and its
 * CFL sub-steps, snapshots and the public extras.
 *
 * One call of step() advances w->dt in CFL-limited sub-steps (what is left
 * short of a whole sub-step carried to the next call), each Algorithm 1:
 *   neighbour lists at r^n, and Eq. 7's nu lap u from the same scan
 *                                       (world grid + a static wall grid)
 *   u* = u^n + dt (nu lap u + sigma kappa n / rho + g)        Eq. 9 / 27, 7, App. A
 *   r* = r^n + dt u*                                           Eq. 10
 *   n* at r*, free surface n* < beta n0, beta = 0.97           Eq. 3-4, 18
 *   pressure Poisson equation, symmetric, by MIC-CG            Eq. 14 (sparse.c)
 *   u' = -dt/rho grad p, u^{n+1} = u* + u', r^{n+1} = r* + u' dt   Eq. 15-17, 5
 * with the kernel w(r) = r_e/r - 1 (Koshizuka & Oka 1996), r_e = 2.1 l0 for
 * n, the gradient and Eq. 14 and 3.1 l0 for the viscosity; p^_i of Eq. 5
 * over the nearest neighbours, Eq. 5 taken of the dynamic pressure with the
 * hydrostatic part exact (correct_task); Eq. 18 refined by a
 * neighbour-asymmetry test, its particles at the pressure of half a spacing
 * of water (mps_pressure.c); walls of fixed particles whose first layer
 * mirrors the pressure (Neumann, hydrostatic); particle shifting after
 * Eq. 17 (Lind et al. 2012); collisions between Eq. 10 and n*
 * (Koshizuka's practice); heat by Eq. 21 of Solenthaler 2007 and the
 * heaters (fs__heat_update).  Sub-steps: Courant, force (Morris, Fox & Zhu
 * 1997), viscous and capillary (Brackbill, Kothe & Zemach 1992) limits, of
 * a fixed fraction of them, carried over calls (plan_substeps); a sub-step that would move a
 * pair farther than its lists reach, or a particle farther than a spacing,
 * is cut in two (mps_reach.c).
 *
 * The concepts live in: mps_walls.c (wall particles, obstacles, rails),
 * mps_pressure.c (n*, Eq. 14, MIC-CG), mps_tension.c (Appendix A),
 * mps_reach.c (whether a sub-step stayed within its lists' reach);
 * mps_internal.h holds what they share.  Why each choice, what else was
 * tried and what was measured: docs/sim-notes.md, "MPS".
 *
 * Parallel form: every pass is a per-particle gather through fs__run; the
 * row numbering is a serial prefix pass; MIC's set-up and triangular solves
 * run on two threads over blocks of rows (mps_pressure.c, sparse.c).  The
 * result is bit-identical for any thread count.  Memory: everything per particle is allocated in
 * attach for w->cap particles; the wall particles are (re)built when the
 * domain or the obstacles change; a step of an unchanged world never
 * allocates.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mps_internal.h"
#include "probes.h"
#include "sim_testing.h"
#include "sim_util.h"

/* ---- lifetime ------------------------------------------------------------ */
static void mps_detach(fs_world *w) {
    mps_state *s = state_of(w);
    if (!s) return;
    free(s->p_slot), free(s->lx), free(s->ly), free(s->lz), free(s->nst), free(s->nst1), free(s->nrn), free(s->outer),
        free(s->clear), free(s->press);
    free(s->nn), free(s->nn_f), free(s->nn_t), free(s->nr), free(s->dT_slot), free(s->nc), free(s->nc_n);
    free(s->row), free(s->rho), free(s->ux0), free(s->uy0), free(s->uz0), free(s->reach);
    fs__mps_free_walls(s);
    fs__csr_free(&s->A);
    fs__pcg_free(&s->pcg);
    free(s->b), free(s->x), free(s->rnnz), free(s->blk), free(s->hist), free((void *)s->blk_state);
    fs__solver_state_free(w);
}

static fs_status mps_attach(fs_world *w, fs_error *err) {
    mps_state *s = fs__solver_state_new(w, sizeof *s);
    if (!s) goto nomem;
    size_t n = (size_t)w->cap, f = sizeof(float) * n;
    s->p_slot = calloc(n, sizeof(float));
    s->dT_slot = calloc(n, sizeof(float));
    s->lx = malloc(f), s->ly = malloc(f), s->lz = malloc(f);
    s->nn = calloc(n * NN_STRIDE, sizeof(int32_t)), s->nr = calloc(n * NN_STRIDE, sizeof(float));
    s->nn_f = malloc(sizeof(int16_t) * n), s->nn_t = malloc(sizeof(int16_t) * n);
    s->nc = malloc(sizeof(int32_t) * n * NC_MAX), s->nc_n = malloc(sizeof(int16_t) * n);
    s->nst = malloc(f), s->nst1 = malloc(f), s->nrn = malloc(f), s->outer = malloc(n), s->clear = malloc(n),
    s->press = calloc(n, sizeof(float));
    s->row = malloc(sizeof(int32_t) * n), s->rho = malloc(f);
    s->ux0 = malloc(f), s->uy0 = malloc(f), s->uz0 = malloc(f);
    if (!s->ux0 || !s->uy0 || !s->uz0 || !s->p_slot || !s->dT_slot || !s->lx || !s->ly || !s->lz || !s->nn || !s->nr ||
        !s->nn_f || !s->nn_t || !s->nc || !s->nc_n || !s->nst || !s->nst1 || !s->nrn || !s->outer || !s->clear ||
        !s->press || !s->row || !s->rho)
        goto nomem;
    s->obst_epoch = w->epoch;
    return FS_OK;
nomem:
    mps_detach(w);
    SETERR(err, "mps: out of memory for %d particles", w->cap);
    return FS_ERR_NOMEM;
}

static bool refresh(fs_world *w, mps_state *s) {
    int nb[3];
    const long blocks = fs__mps_reach_blocks(w, nb);
    if (blocks > s->reach_cap) { /* the grid grew (a new domain): not in a step of an unchanged world */
        free(s->reach);
        s->reach = malloc(sizeof(float) * 12 * (size_t)blocks);
        s->reach_cap = s->reach ? blocks : 0;
        if (!s->reach) return false;
    }
    if (fs__mps_walls_current(w, s) && s->A.rowptr) return true;
    return fs__mps_build_walls(w, s) && fs__mps_ensure_matrix(w, s);
}

static void mps_prepare(fs_world *w) {
    mps_state *s = state_of(w);
    if (!s) return;
    refresh(w, s);
    for (int i = 0; i < w->cap; i++) s->p_slot[i] = 0;
    for (int i = 0; i < w->n; i++) s->press[i] = 0, s->nst[i] = s->n0;
    s->substeps = 0, s->behind = 0;
}

static void mps_removed(fs_world *w, int slot) {
    mps_state *s = state_of(w);
    if (s) s->p_slot[slot] = 0;
}

/* ---- the step ------------------------------------------------------------- */
static inline int32_t *scr_j(const fs_world *w, int worker) {
    return w->scr_j + (size_t)worker * ((size_t)w->cap + FS_SCR_PAD);
}
static inline float *scr_r2(const fs_world *w, int worker) {
    return w->scr_r2 + (size_t)worker * ((size_t)w->cap + FS_SCR_PAD);
}

/* Whether none of the nw wall particles wj (within NEAR of a particle) is an obstacle's: the box's faces' lie
 * outside the box, an obstacle's inside it (and the rails keep every centre inside the box). */
static bool clear_of_obstacles(const fs_world *w, const mps_state *s, const int32_t *wj, int nw) {
    if (!s->nobst && !w->nobstacles) return true;
    const fs_vec3 lo = w->dom.box_min, hi = w->dom.box_max;
    bool clear = true;
    for (int t = 0; t < nw; t++) {
        const float x = s->wx[wj[t]], y = s->wy[wj[t]], z = s->wz[wj[t]];
        clear &= !(x > lo.x && x < hi.x && y > lo.y && y < hi.y && z > lo.z && z < hi.z);
    }
    return clear;
}

/* Neighbour lists at r^n: fluid within h (the world grid), then walls within
 * h (the wall grid); also saves r^n and u^n, sums Eq. 7's viscosity (nu lap u, the
 * first-layer walls at rest) and Eq. 21's heat exchange and, with
 * surface tension, Appendix A's counts (Eq. 34) and n at r^n for its
 * surface test, from the same distances. */
FS_SIMD_CLONES static void list_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, h2 = c->h2, inv_h = w->inv_h;
    const float rst2 = s->re_st * s->re_st, rel = s->re_l;
    const float *WX = s->wx, *WY = s->wy, *WZ = s->wz; /* locals: the lists' stores cannot alias them */
    const int32_t *WL = s->wlayer;
    const int cap = w->cap;
    int32_t *J = scr_j(w, worker);
    float *R2 = scr_r2(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    uint64_t nfull = 0;
    for (int i = b; i < e; i++) {
        if (i + PREFETCH_AHEAD < e) /* the lines the near list will be written to (about 125 pairs) */
            for (int k = 0; k < 8; k++)
                __builtin_prefetch(s->nn + (size_t)(i + PREFETCH_AHEAD) * NN_STRIDE + 16 * k, 1);
        p->px[i] = X[i], p->py[i] = Y[i], p->pz[i] = Z[i];
        s->ux0[i] = p->vx[i], s->uy0[i] = p->vy[i], s->uz0[i] = p->vz[i];
        fs__ranges_of(w, w->cell[i], &r);
        int n = fs__scan(X, Y, Z, &r, i, h2, false, J, R2, NULL, NULL, NULL);
        for (int l = 0; l < LANES; l++) J[n + l] = i, R2[n + l] = h2; /* whole vectors: the lanes past n read i */
        if (c->heat_now) { /* Eq. 21 with the kernel h - r, as the Clavet solver; once per w->dt */
            const float Ti = p->temp[i], Di = c->m.diff[p->mat[i]];
            float acc[LANES] = {0};
            if (c->m.one_diff) { /* (Di + Dj) / 2 = Di */
                for (int kb = 0; kb < n; kb += LANES) {
#pragma omp simd
                    for (int l = 0; l < LANES; l++) { /* the lanes past n: q = 0 */
                        const int k = kb + l;
                        acc[l] += (1.0f - sqrtf(R2[k]) * inv_h) * (p->temp[J[k]] - Ti);
                    }
                }
                for (int l = 0; l < LANES; l++) acc[l] *= Di;
            } else {
                for (int kb = 0; kb < n; kb += LANES) {
#pragma omp simd
                    for (int l = 0; l < LANES; l++) {
                        const int k = kb + l, j = J[k];
                        const float q = 1.0f - sqrtf(R2[k]) * inv_h;
                        acc[l] += 0.5f * (Di + c->m.diff[p->mat[j]]) * q * (p->temp[j] - Ti);
                    }
                }
            }
            s->dT_slot[p->slot[i]] = lanes_sum(acc);
        }
        /* from the scan's own distances, one division a pair: Eq. 7's viscosity (the fluid part; the walls'
         * below), n at r^n (r_e <= NEAR l0: the near list's pairs; Eq. 14's source starts from it, and surface
         * tension's test reads it) and Eq. 34's count */
        const int mt = p->mat[i];
        const float nui = c->m.nu[mt], ui = p->vx[i], vi = p->vy[i], wi = p->vz[i], ren = s->re_n;
        const float inv_rmin = 1.0f / c->rmin;
        const bool tens = c->m.tension;
        float ax8[LANES] = {0}, ay8[LANES] = {0}, az8[LANES] = {0}, nr8[LANES] = {0}, n18[LANES] = {0};
        for (int kb = 0; kb < n; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) {
                const int k = kb + l, j = J[k];
                const float rr = sqrtf(R2[k]), inv = rr > c->rmin ? 1.0f / rr : inv_rmin; /* Eq. 3: r clamped to rmin */
                const float wl = k < n && rr < rel ? rel * inv - 1.0f : 0.0f;
                ax8[l] += (p->vx[j] - ui) * wl, ay8[l] += (p->vy[j] - vi) * wl, az8[l] += (p->vz[j] - wi) * wl;
                nr8[l] += k < n && rr < ren ? ren * inv - 1.0f : 0.0f;
                n18[l] += k < n && R2[k] < rst2 ? 1.0f : 0.0f;
            }
        }
        int32_t *NL = s->nn + (size_t)i * NN_STRIDE;
        const int m = n < NB_MAX ? n : NB_MAX; /* the near list's candidates */
        int mn = 0;
        bool full = n > NB_MAX;
        /* the near list: J's pairs within NEAR, compacted without branches into a local buffer; with
         * NEAR >= h (3.1 l0 and h = 3.1 l0) that is J itself */
        int32_t nlb[NB_MAX + FS_SCAN_PAD];
        float nr2b[NB_MAX + FS_SCAN_PAD];
        const float near2 = c->near2;
        const bool all = near2 >= h2;
        const int32_t *nl = all ? J : nlb;
        const float *nr2 = all ? R2 : nr2b;
        mn = all ? m : fs__pack_lt(J, R2, m, near2, nlb, nr2b);
        full |= mn > NN_MAX - 1;
        mn = mn < NN_MAX - 1 ? mn : NN_MAX - 1;
        memcpy(NL, nl, sizeof(int32_t) * (size_t)mn);
        const float n1 = lanes_sum(n18);
        s->nn_f[i] = (int16_t)mn;
        /* walls: the first layer within h (Eq. 7), both within NEAR (n, Eq. 5, 14) */
        int32_t cb[25], ce[25];
        const int nc = wall_rows(s, X[i], Y[i], Z[i], h2, cb, ce);
        const int mn0 = mn;
        const float xi = X[i], yi = Y[i], zi = Z[i];
        /* the wall particles within h (in pieces that fit the buffers), then the two lists from them without
         * branches; each list keeps one slot spare for the last write */
        int32_t wj[WALL_BUF + FS_SCAN_PAD];
        float wr2[WALL_BUF + FS_SCAN_PAD];
        int nw = 0;
        for (int g = 0; g < nc; g++)
            for (int b0 = cb[g]; b0 < ce[g] && nw + WALL_PIECE <= WALL_BUF; b0 += WALL_PIECE) {
                const int e0 = ce[g] - b0 > WALL_PIECE ? b0 + WALL_PIECE : ce[g];
                nw += fs__scan_point(WX, WY, WZ, &b0, &e0, 1, xi, yi, zi, h2, wj + nw, wr2 + nw);
            }
        /* the first-layer walls within h: velocity 0 (no-slip); n of both layers */
        for (int l = 0; l < LANES; l++) wj[nw + l] = 0, wr2[nw + l] = h2;
        for (int tb = 0; tb < nw; tb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) {
                const int t = tb + l;
                const float rr = sqrtf(wr2[t]), inv = rr > c->rmin ? 1.0f / rr : inv_rmin;
                const bool first = WL[wj[t]] == 1; /* the lanes past nw read wall 0 */
                const float wl = (t < nw) & first & (rr < rel) ? rel * inv - 1.0f : 0.0f;
                ax8[l] -= ui * wl, ay8[l] -= vi * wl, az8[l] -= wi * wl;
                nr8[l] += t < nw && rr < ren ? ren * inv - 1.0f : 0.0f;
            }
        }
        const float k = nui * c->lap_k; /* Eq. 7 times nu */
        s->lx[i] = k * lanes_sum(ax8), s->ly[i] = k * lanes_sum(ay8), s->lz[i] = k * lanes_sum(az8);
        /* the walls within NEAR (all of them when NEAR >= h) after the fluid, as many as the list has room for */
        int32_t wjb[WALL_BUF + FS_SCAN_PAD];
        float wr2b[WALL_BUF + FS_SCAN_PAD];
        const int nwn = all ? nw : fs__pack_lt(wj, wr2, nw, near2, wjb, wr2b);
        const int32_t *wjn = all ? wj : wjb;
        const float *wr2n = all ? wr2 : wr2b;
        const int take = nwn < NN_MAX - 1 - mn0 ? nwn : NN_MAX - 1 - mn0;
        full |= take < nwn;
        for (int t = 0; t < take; t++) NL[mn0 + t] = cap + wjn[t];
        mn = mn0 + take;
        s->nrn[i] = lanes_sum(nr8); /* n at r^n, walls included */
        s->clear[i] = clear_of_obstacles(w, s, wjn, nwn);
        if (tens) s->nst1[i] = n1;
        s->nn_t[i] = (int16_t)mn;
        /* the close list: the near list's pairs within CLOSE l0, in its order, packed without branches */
        int32_t cl[NN_MAX + FS_SCAN_PAD];
        float cr2[NN_MAX + FS_SCAN_PAD];
        int ncl = fs__pack_lt(nl, nr2, mn0, c->close2, cl, cr2);
        const int ncw = fs__pack_lt(wjn, wr2n, take, c->close2, cl + ncl, cr2 + ncl);
        for (int t = ncl; t < ncl + ncw; t++) cl[t] += cap;
        ncl += ncw;
        const bool fits = ncl <= NC_MAX;
        if (fits) memcpy(s->nc + (size_t)i * NC_MAX, cl, sizeof(int32_t) * (size_t)ncl);
        s->nc_n[i] = (int16_t)(fits ? ncl : -1);
        s->rho[i] = c->m.rho[mt];
        nfull += full;
    }
    c->full[worker] += nfull;
}

/* Eq. 9 / 27: viscosity (Eq. 7, summed by the list pass), gravity and
 * surface tension (App. A), explicit; Eq. 10: r* = r + dt u*.  Writes
 * w->nvx.. and w->nx.. */
static void explicit_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const fs_particles *p = &w->p;
    const float dt = c->dt;
    const fs_vec3 g = w->dom.gravity;
    for (int i = b; i < e; i++) {
        float ax = g.x + s->lx[i], ay = g.y + s->ly[i], az = g.z + s->lz[i];
        if (c->m.tension) fs__mps_tension_acc(c, i, &ax, &ay, &az); /* Appendix A (mps_tension.c) */
        const float ux = p->vx[i] + dt * ax, uy = p->vy[i] + dt * ay, uz = p->vz[i] + dt * az;
        w->nvx[i] = ux, w->nvy[i] = uy, w->nvz[i] = uz;
        w->nx[i] = p->x[i] + dt * ux, w->ny[i] = p->y[i] + dt * uy, w->nz[i] = p->z[i] + dt * uz;
    }
}

/* Collisions (Koshizuka's practice, not in the paper): a pair closer than
 * COLLIDE_DIST l0 at r* and approaching exchanges the normal part of its
 * relative velocity with restitution COLLIDE_E, masses rho V; walls do not
 * move.  Gathered: each side computes the same pair impulse.  Keeps
 * particles from clumping, where w(r) -> infinity would spike n*. */
static void collide_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    const fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float rc = COLLIDE_DIST * s->l0, rc2 = rc * rc, dt = c->dt;
    for (int i = b; i < e; i++) {
        /* the pairs within CLOSE l0 at r^n hold every pair within COLLIDE_DIST now, in the near list's order */
        const bool close = s->nc_n[i] >= 0;
        const int32_t *L = close ? s->nc + (size_t)i * NC_MAX : s->nn + (size_t)i * NN_STRIDE;
        const int nl = close ? s->nc_n[i] : s->nn_t[i];
        const float xi = X[i], yi = Y[i], zi = Z[i], ui = VX[i], vi = VY[i], wi = VZ[i], mi = s->rho[i];
        float ax = 0, ay = 0, az = 0;
        for (int k = 0; k < nl; k++) {
            int j = L[k];
            float dx, dy, dz, uj = 0, vj = 0, wj = 0, share = 1.0f;
            if (j < w->cap) {
                dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                uj = VX[j], vj = VY[j], wj = VZ[j];
                share = s->rho[j] / (mi + s->rho[j]);
            } else {
                int q = j - w->cap;
                dx = s->wx[q] - xi, dy = s->wy[q] - yi, dz = s->wz[q] - zi;
            }
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= rc2 || r2 < 1e-20f) continue;
            float inv = 1.0f / sqrtf(r2);
            float nx = dx * inv, ny = dy * inv, nz = dz * inv;
            float vn = (ui - uj) * nx + (vi - vj) * ny + (wi - wj) * nz; /* > 0: approaching */
            if (vn <= 0) continue;
            float J = (1.0f + COLLIDE_E) * share * vn;
            ax -= J * nx, ay -= J * ny, az -= J * nz;
        }
        w->nvx[i] = ui + ax, w->nvy[i] = vi + ay, w->nvz[i] = wi + az;
        w->nx[i] = xi + dt * ax, w->ny[i] = yi + dt * ay, w->nz[i] = zi + dt * az;
    }
}

/* Eq. 5 (with p^_i) and Eq. 15-17, particle shifting, then the safety
 * rails: r^{n+1} and u^{n+1} into w->nx.. and w->nvx...
 *
 * For a particle with a pressure row, Eq. 5 is taken of the dynamic
 * pressure p_d,j = p_j - rho_i g.(r_j - r_i) and the hydrostatic part is
 * added exactly: grad p = grad p_d + rho_i g, so u' gains -dt g.  In water
 * at rest p_d is uniform and u' cancels gravity whatever the arrangement of
 * the neighbours, where Eq. 5 of p itself pushes every pair apart with about
 * rho |g| l0 (p_i - p^_i) and a lopsided neighbourhood turns that into noise
 * (0.15 m/s rms in a tank at rest).  p^_i is then the least p_d within
 * PMIN_R, less PMIN_MARGIN rho |g| l0: the pairs keep a small repulsion
 * (Koshizuka's reason for p^_i: stability).  The free surface (no row) keeps
 * Eq. 5 of p: in a thin jet a one-sided sum of p_d would not cancel g.  Not
 * in the paper; measured in docs/sim-notes.md, "Eq. 5: the dynamic pressure". */
FS_SIMD_CLONES static void correct_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *P = s->press;
    const float dt = c->dt, ren = s->re_n, vmax = w->max_speed, pmin_r = PMIN_R * s->l0;
    const fs_vec3 g = w->dom.gravity;
    const float tiny = 1e-6f * s->l0; /* a pair this close (the same point) has no direction */
    /* particle shifting, dr = -a l0^2 (d / n0) sum r_ij w / r^2 (the gradient of n), after Lind, Xu,
     * Stansby & Rogers 2012 (Fickian shifting, positions only) at the relaxation rate SHIFT_RATE over
     * sqrt(l0 / g), the still water's time scale: a = SHIFT_RATE dt / sqrt(l0 / |g|), at most SHIFT_MAX */
    const float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
    float a = gm > 0 ? SHIFT_RATE * dt / sqrtf(s->l0 / gm) : 0.0f;
    a = a < SHIFT_MAX ? a : SHIFT_MAX;
    const float shift = a * s->l0 * s->l0 * c->grad_k;
    /* the rail: centres stay RAIL l0 inside the box's faces; the walls (their number density and
     * mirrored pressure) keep them about l0 / 2 from them (the lattice's first row), so the rail only
     * catches what the walls let through */
    const float rail = RAIL * s->l0;
    const fs_vec3 lo = {w->dom.box_min.x + rail, w->dom.box_min.y + rail, w->dom.box_min.z + rail},
                  hi = {w->dom.box_max.x - rail, w->dom.box_max.y - rail, w->dom.box_max.z - rail};
    uint64_t bad = 0, clamped = 0;
    for (int i = b; i < e; i++) {
        if (i + PREFETCH_AHEAD < e) prefetch_list(s, i + PREFETCH_AHEAD, s->nn_t[i + PREFETCH_AHEAD], true);
        const int32_t *L = s->nn + (size_t)i * NN_STRIDE;
        const float *R = s->nr + (size_t)i * NN_STRIDE;
        const float xi = X[i], yi = Y[i], zi = Z[i];
        const int nf = s->nn_f[i], nt = s->nn_t[i];
        const float rhog[3] = {s->rho[i] * g.x, s->rho[i] * g.y, s->rho[i] * g.z}, pi = P[i];
        /* the dynamic pressure's split: hd = rho_i g for a particle with a row (above), 0 at the surface */
        const bool split = s->row[i] >= 0 && s->row[i] < s->unknowns;
        const float hd[3] = {split ? rhog[0] : 0.0f, split ? rhog[1] : 0.0f, split ? rhog[2] : 0.0f};
        /* one pass: p^_i (the least p_d within PMIN_R, docs/sim-notes.md) and the sums of Eq. 5 and of the
         * shifting's gradient of n.  sum (p_j - p^_i) w r_ij / r^2 = sum (p_j - p_i) w r_ij / r^2 + (p_i - p^_i) sh,
         * sh = sum w r_ij / r^2 (the shifting's sum, over the same pairs): p^_i is not needed before the sum.
         * In whole vectors, lanes past a segment's end masked (as nstar_task), lane sums in a fixed order
         * (the least value is exact in any order) */
        float agx[LANES] = {0}, agy[LANES] = {0}, agz[LANES] = {0}, asx[LANES] = {0}, asy[LANES] = {0},
              asz[LANES] = {0}, amin[LANES];
        for (int l = 0; l < LANES; l++) amin[l] = pi;
        for (int kb = 0; kb < nf; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) { /* particles; the list and R (|r*_ij| < r_e) from nstar_task */
                const int k = kb + l, live = -(k < nf), j = (L[k] & live) | (i & ~live);
                const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                const float r = R[k], wt = weight(r, ren, c->rmin), pj = P[j] - (hd[0] * dx + hd[1] * dy + hd[2] * dz);
                const float cand = live && r < pmin_r ? pj : pi; /* without branches: the test is unpredictable */
                amin[l] = cand < amin[l] ? cand : amin[l];
                const bool use = live && r > tiny;
                const float wr = use ? wt / (r * r) : 0.0f, f = (pj - pi) * wr;
                agx[l] += f * dx, agy[l] += f * dy, agz[l] += f * dz;
                asx[l] += wr * dx, asy[l] += wr * dy, asz[l] += wr * dz;
            }
        }
        for (int kb = nf; kb < nt; kb += LANES) {
#pragma omp simd
            for (int l = 0; l < LANES; l++) { /* first-layer walls: the mirrored pressure (mps_pressure.c) */
                const int k = kb + l, q = (L[k] - w->cap) & -(k < nt);
                const float dx = s->wx[q] - xi, dy = s->wy[q] - yi, dz = s->wz[q] - zi;
                const float dp = (rhog[0] - hd[0]) * dx + (rhog[1] - hd[1]) * dy + (rhog[2] - hd[2]) * dz, r = R[k];
                const float wt = weight(r, ren, c->rmin);
                const bool use = k < nt && r > tiny;
                const float wr = use ? wt / (r * r) : 0.0f, f = dp * wr; /* p_j - p_i */
                agx[l] += f * dx, agy[l] += f * dy, agz[l] += f * dz;
                asx[l] += wr * dx, asy[l] += wr * dy, asz[l] += wr * dz;
            }
        }
        float pmin = pi;
        for (int l = 0; l < LANES; l++) pmin = amin[l] < pmin ? amin[l] : pmin;
        if (split) pmin -= PMIN_MARGIN * s->rho[i] * c->gmag * s->l0;
        const float shx = lanes_sum(asx), shy = lanes_sum(asy), shz = lanes_sum(asz), dpm = pi - pmin;
        const float gx = lanes_sum(agx) + dpm * shx, gy = lanes_sum(agy) + dpm * shy, gz = lanes_sum(agz) + dpm * shz;
        const float k = -dt * c->grad_k / s->rho[i]; /* Eq. 15: u' = -dt/rho grad p */
        const float hk = split ? -dt : 0.0f;         /* the split's hydrostatic part, -dt/rho_i rho_i g */
        const float dux = k * gx + hk * g.x, duy = k * gy + hk * g.y, duz = k * gz + hk * g.z;
        float v[3] = {p->vx[i] + dux, p->vy[i] + duy, p->vz[i] + duz}; /* Eq. 16: u* (swapped in) + u' */
        float x[3] = {xi + dt * dux, yi + dt * duy, zi + dt * duz};    /* Alg. 1: r* + u' dt */
        if (s->row[i] >= 0) /* particle shifting, not at the free surface (not in the paper; docs/sim-notes.md) */
            x[0] -= shift * shx, x[1] -= shift * shy, x[2] -= shift * shz;
        const float xp[3] = {p->px[i], p->py[i], p->pz[i]};
        /* safety rails: finite, not faster than the world's limit, inside the box, outside obstacles */
        if (!(isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]) && isfinite(v[0]) && isfinite(v[1]) &&
              isfinite(v[2]))) {
            bool pf = isfinite(xp[0]) && isfinite(xp[1]) && isfinite(xp[2]);
            x[0] = pf ? xp[0] : 0.5f * (lo.x + hi.x), x[1] = pf ? xp[1] : 0.5f * (lo.y + hi.y);
            x[2] = pf ? xp[2] : 0.5f * (lo.z + hi.z);
            v[0] = v[1] = v[2] = 0;
            bad++;
        }
        float sp2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        if (sp2 > vmax * vmax) {
            float f = vmax / sqrtf(sp2);
            v[0] *= f, v[1] *= f, v[2] *= f;
        }
        clamped += fs__mps_rails(w, s, lo, hi, x, v);      /* mps_walls.c */
        w->nx[i] = x[0], w->ny[i] = x[1], w->nz[i] = x[2]; /* neighbours still read r* */
        w->nvx[i] = v[0], w->nvy[i] = v[1], w->nvz[i] = v[2];
        s->p_slot[p->slot[i]] = P[i];
    }
    c->bad[worker] += bad;
    c->clamped[worker] += clamped;
}

/* The heat (fs__heat_update) at r^{n+1}, once the sub-step is kept. */
static void heat_task(int b, int e, int worker, void *vctx) {
    MPS_TASK(vctx, worker);
    fs_particles *p = &w->p;
    uint64_t bad = 0;
    for (int i = b; i < e; i++) {
        float T = fs__heat_update(w, p->temp[i], c->m.heat, s->dT_slot[p->slot[i]], p->x[i], p->y[i], p->z[i], c->dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    c->bad[worker] += bad;
}

static void swap3(float **a, float **b) {
    float *t = *a;
    *a = *b, *b = t;
}

/* The pairs within r_e at r^{n+1}* (p.x) that particle i's near list lacks, by brute force (fs__mps_check_lists). */
static uint64_t missed_pairs(const fs_world *w, const mps_state *s, int i) {
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, re2 = s->re_n * s->re_n;
    const int32_t *L = s->nn + (size_t)i * NN_STRIDE;
    const int nt = s->nn_t[i];
    uint64_t m = 0;
    for (int j = 0; j < w->n + s->nwall; j++) {
        if (j == i) continue;
        const bool wall = j >= w->n;
        const int q = j - w->n, id = wall ? w->cap + q : j;
        const float dx = (wall ? s->wx[q] : X[j]) - X[i], dy = (wall ? s->wy[q] : Y[j]) - Y[i],
                    dz = (wall ? s->wz[q] : Z[j]) - Z[i];
        if (dx * dx + dy * dy + dz * dz >= re2) continue;
        bool found = false;
        for (int k = 0; k < nt && !found; k++) found = L[k] == id;
        m += !found;
    }
    return m;
}

uint64_t fs__mps_check_lists(fs_world *w, bool on, bool unchecked) {
    mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s) return 0;
    s->check_lists = on, s->unchecked = unchecked;
    return s->missed;
}

/* One sub-step of c->dt from r^n, cut in two (from r^n and u^n again) while reach_ok or moved_ok fails, at most
 * c->max_cuts times; returns the cuts, c->dt the length taken. */
static int substep(fs_world *w, mps_state *s, ctx *c) {
    double *ph = w->st.phase_ms, t = fs__now_ms();
    const int n = w->n;
    const size_t fb = sizeof(float) * (size_t)n;
    /* neighbour search at r^n */
    fs__grid_build(w);
    fs__run(w, list_task, c, n);
    ph[FS_PHASE_GRID] += fs__now_ms() - t;

    int cuts = 0;
    for (bool relist = false;;) {
        /* Eq. 9-10 */
        t = fs__now_ms();
        if (relist) fs__run(w, list_task, c, n); /* n* cut the near list to r_e at the failed r*: again from r^n */
        fs__run(w, explicit_task, c, n);
        swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
        swap3(&w->p.vx, &w->nvx), swap3(&w->p.vy, &w->nvy), swap3(&w->p.vz, &w->nvz);
        fs__run(w, collide_task, c, n);
        swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
        swap3(&w->p.vx, &w->nvx), swap3(&w->p.vy, &w->nvy), swap3(&w->p.vz, &w->nvz);
        bool ok = s->unchecked || !c->checked || fs__mps_reach_ok(w, s, c);
        ph[FS_PHASE_VISCOSITY] += fs__now_ms() - t;
        if (ok || cuts == c->max_cuts) {
            if (s->check_lists)
                for (int i = 0; i < n; i++) s->missed += missed_pairs(w, s, i);
            /* n*, Eq. 18, Eq. 14 assembled and solved (mps_pressure.c) */
            fs__mps_pressure(w, s, c);
            /* Eq. 15-17 */
            t = fs__now_ms();
            fs__run(w, correct_task, c, n);
            ok = ok && (s->unchecked || !c->checked || fs__mps_moved_ok(w, c));
            ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
            if (ok || cuts == c->max_cuts) {
                s->overrun += !ok;
                break;
            }
            relist = true;
        } else {
            relist = false;
        }
        memcpy(w->p.x, w->p.px, fb), memcpy(w->p.y, w->p.py, fb), memcpy(w->p.z, w->p.pz, fb);
        memcpy(w->p.vx, s->ux0, fb), memcpy(w->p.vy, s->uy0, fb), memcpy(w->p.vz, s->uz0, fb);
        c->dt *= 0.5f;
        cuts++, s->cuts++;
    }
    t = fs__now_ms();
    swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
    swap3(&w->p.vx, &w->nvx), swap3(&w->p.vy, &w->nvy), swap3(&w->p.vz, &w->nvz);
    fs__run(w, heat_task, c, n);
    ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
    return cuts;
}

/* The materials' constants of this call (by material index). */
static void mconst_init(const fs_world *w, mconst *mc) {
    for (int i = 0; i < w->n; i++) mc->present[w->p.mat[i]] = true;
    float d0 = -1;
    mc->one_diff = true;
    for (int m = 0; m < w->nmat; m++) {
        const float *q = w->mat[m].p;
        mc->rho[m] = q[FS_P_MASS_DENSITY];
        mc->nu[m] = q[FS_P_KIN_VISCOSITY];
        mc->sigma[m] = q[FS_P_SURFACE_TENSION];
        mc->diff[m] = fs__heat_coef(w, m); /* Eq. 21, as the other solvers */
        mc->heat |= mc->diff[m] > 0;
        mc->tension |= mc->sigma[m] > 0;
        if (!mc->present[m]) continue;
        mc->one_diff &= d0 < 0 || mc->diff[m] == d0;
        d0 = mc->diff[m];
    }
}

/* The longest sub-step the limits allow this call: the Courant limit dt u_max <= courant l0 (with what gravity
 * adds over w->dt), the force (Morris, Fox & Zhu 1997, with g), viscous and capillary (Brackbill, Kothe & Zemach
 * 1992) limits; infinite where none applies. */
static float substep_limit(const fs_world *w, const mps_state *s, const mconst *mc, float courant) {
    float numax = 0;
    const bool *present = mc->present;
    float umax2 = 0;
    for (int i = 0; i < w->n; i++) {
        float v2 = w->p.vx[i] * w->p.vx[i] + w->p.vy[i] * w->p.vy[i] + w->p.vz[i] * w->p.vz[i];
        umax2 = v2 > umax2 ? v2 : umax2;
    }
    float cap = INFINITY; /* the capillary limit sqrt(rho l0^3 / (2 pi sigma)) (Brackbill et al. 1992) */
    for (int m = 0; m < w->nmat; m++) {
        if (!present[m]) continue;
        if (mc->nu[m] > numax) numax = mc->nu[m];
        if (mc->sigma[m] > 0) {
            float t = sqrtf(mc->rho[m] * s->l0 * s->l0 * s->l0 / (2.0f * 3.14159265f * mc->sigma[m]));
            cap = t < cap ? t : cap;
        }
    }
    const float l0 = s->l0, gmag = sqrtf(w->dom.gravity.x * w->dom.gravity.x + w->dom.gravity.y * w->dom.gravity.y +
                                         w->dom.gravity.z * w->dom.gravity.z);
    float umax = sqrtf(umax2) + gmag * w->dt;
    float lim = umax > 0 ? courant * l0 / umax : INFINITY; /* still water without gravity: no Courant limit */
    if (numax > 0 && VISC_LIMIT * l0 * l0 / numax < lim) lim = VISC_LIMIT * l0 * l0 / numax;
    if (cap < lim) lim = cap;
    const float force = gmag > 0 ? FORCE_LIMIT * sqrtf(l0 / gmag) : INFINITY;
    if (force < lim) lim = force;
    return lim;
}

/* The sub-steps of one call: their count, returned, their length *len and how far the particles will trail the
 * clock after them.  The call has r, its w->dt and what the last call left behind; it takes sub-steps of
 * SUB_FILL x lim (at most w->dt) while whole ones fit in r, and leaves the rest, less than one, to the next call;
 * where as many sub-steps of r / k hold SUB_CATCH x lim, it takes those instead and catches up.  A flow needing
 * more than MAX_SUB takes MAX_SUB sub-steps of r, over the limit.  So the sub-steps follow the limits instead of
 * rounding each call up to a whole number of them; the source split makes a sub-step's push independent of its
 * length (docs/sim-notes.md, "Time step": "Sub-steps carried over calls"). */
static int plan_substeps(const fs_world *w, float behind, float lim, float *len, float *behind_after) {
    const float r = behind + w->dt, fill = fminf(SUB_FILL * lim, w->dt); /* fminf: a NaN limit gives w->dt */
    const float k = floorf(r / fill);
    if (!(k <= MAX_SUB)) {
        *len = r / MAX_SUB, *behind_after = 0;
        return MAX_SUB;
    }
    const int n = k < 1 ? 1 : (int)k;
    if (r / (float)n <= SUB_CATCH * lim) {
        *len = r / (float)n, *behind_after = 0;
        return n;
    }
    *len = fill, *behind_after = r - (float)n * fill;
    if (!(*behind_after > 0)) *behind_after = 0; /* r - n fill rounded below 0 (or NaN) */
    return n;
}

static void mps_step(fs_world *w) {
    double t0 = fs__now_ms();
    double *ph = w->st.phase_ms;
    for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] = 0;
    mps_state *s = state_of(w);
    if (!s || !refresh(w, s)) return; /* out of memory for the walls: the world stands still */
    fs__emit_and_drain(w);
    ctx c;
    memset(&c, 0, sizeof c);
    c.w = w, c.s = s;
    mconst_init(w, &c.m);
    const float l0 = s->l0;
    c.h2 = w->h * w->h;
    c.near2 = NEAR * l0 * NEAR * l0;
    if (c.near2 > c.h2) c.near2 = c.h2;
    /* the lists' reach: what their radii leave beyond r_e and COLLIDE_DIST.  Under REACH_MIN (a domain with
     * h < 2.6 l0: the Clavet scenes' 2.1, switched to this solver) it is not checked, and the sub-steps keep
     * the Courant number that made the margin of h = 3.1 l0 hold without a check */
    const float near = sqrtf(c.near2);
    c.reach = near - s->re_n < (CLOSE - COLLIDE_DIST) * l0 ? near - s->re_n : (CLOSE - COLLIDE_DIST) * l0;
    c.checked = c.reach >= REACH_MIN * l0;
    const float courant = c.checked ? fminf(COURANT, c.reach / l0) : COURANT_UNCHECKED;
    const float lim = substep_limit(w, s, &c.m, courant);
    float behind_after;
    const int nsub = plan_substeps(w, s->behind, lim, &c.dt, &behind_after);
    c.dt_lim = isinf(lim) ? fmaxf(w->dt, c.dt) : fmaxf(lim, c.dt); /* the density error's time scale: finite */
    c.close2 = CLOSE * l0 * CLOSE * l0;
    c.rmin = RMIN * l0;
    c.lap_k = 2.0f * 3.0f / (s->lambda * s->n0l); /* Eq. 7, d = 3 */
    c.ppe_k = 2.0f * 3.0f / (s->lambda_n * s->n0);
    c.grad_k = 3.0f / s->n0; /* Eq. 5 */
    c.gmag = sqrtf(w->dom.gravity.x * w->dom.gravity.x + w->dom.gravity.y * w->dom.gravity.y +
                   w->dom.gravity.z * w->dom.gravity.z);
    s->substeps = nsub;
    s->dt_sub = c.dt;
    const float nominal = c.dt;
    double acc[FS_PHASE_COUNT] = {0};
    /* the call in nsub * div pieces of nominal / div, done of them taken: a cut sub-step makes the rest of the
     * call's pieces that short too (a flow that outran its lists once in a call does again) */
    int taken = 0, div = 1, done = 0, lg = 0;
    while (done < nsub * div && w->n > 0) {
        for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] = 0;
        c.heat_now = c.m.heat && taken == 0;
        c.dt = nominal / (float)div;
        c.max_cuts = REACH_CUTS - lg;
        const int cut = substep(w, s, &c);
        div <<= cut, done <<= cut, lg += cut;
        done++, taken++;
        fs__probes_substep(w, c.dt);
        for (int q = 0; q < FS_PHASE_COUNT; q++) acc[q] += ph[q];
    }
    s->taken = taken;
    w->st.sim_time += (double)w->dt + s->behind - behind_after; /* the particles' time: what the sub-steps took */
    s->behind = behind_after;
    for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] = acc[q];
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += c.bad[k];
        w->st.escapes_clamped += c.clamped[k];
        w->st.lists_full += c.full[k];
    }
    w->st.step_ms = fs__now_ms() - t0;
}

/* ---- snapshots: the header (magic, obstacles, particles, wall pressures, the last call's sub-step count and
 * how far the particles trail the clock, as float bits), obstacles, last pressures (per live particle, index order)
 * and wall pressures (none since the walls mirror the pressure: written as 0 of them; those of older snapshots are
 * checked and ignored).  "MPS2" sections (whose last word was a dwell's count of calm calls: the particles at the
 * clock) and "MPS1" (neither word) still read. */
#define STATE_MAGIC1 0x3153504du /* "MPS1" */
#define STATE_MAGIC2 0x3253504du /* "MPS2" */
#define STATE_MAGIC 0x3353504du  /* "MPS3" */
#define BEHIND_MAX 0.1f          /* less than a sub-step, which is at most the longest world step (fs_world_create) */

static size_t mps_state_write(const fs_world *w, void *buf, size_t cap) {
    const mps_state *s = state_of(w);
    if (!s) return 0;
    size_t need = 6 * 4 + (size_t)s->nobst * 6 * 4 + (size_t)w->n * 4;
    if (!buf) return need;
    if (cap < need) return 0;
    unsigned char *b = buf;
    uint32_t behind;
    memcpy(&behind, &s->behind, 4);
    uint32_t hdr[6] = {STATE_MAGIC, (uint32_t)s->nobst, (uint32_t)w->n, 0, (uint32_t)s->substeps, behind};
    memcpy(b, hdr, sizeof hdr), b += sizeof hdr;
    for (int o = 0; o < s->nobst; o++) {
        float v[6] = {s->obst[o].lo.x, s->obst[o].lo.y, s->obst[o].lo.z,
                      s->obst[o].hi.x, s->obst[o].hi.y, s->obst[o].hi.z};
        memcpy(b, v, sizeof v), b += sizeof v;
    }
    for (int i = 0; i < w->n; i++) memcpy(b, &s->p_slot[w->p.slot[i]], 4), b += 4;
    return need;
}

static fs_status mps_state_read(fs_world *w, const void *buf, size_t n, const fs__restore_ctx *rc, fs_error *err) {
    uint32_t hdr[6] = {0};
    const char *why = "header";
    if (n < 4 * 4) goto bad;
    memcpy(hdr, buf, 4 * 4);
    const size_t hlen = hdr[0] == STATE_MAGIC || hdr[0] == STATE_MAGIC2 ? 6 * 4 : 4 * 4;
    if ((hdr[0] != STATE_MAGIC && hdr[0] != STATE_MAGIC2 && hdr[0] != STATE_MAGIC1) || n < hlen) goto bad;
    memcpy(hdr, buf, hlen);
    float behind = 0;
    if (hdr[0] == STATE_MAGIC) memcpy(&behind, &hdr[5], 4);
    if (hdr[1] > MAX_OBST || hdr[2] != (uint32_t)rc->particles || hdr[3] > (1u << 28) || hdr[4] > MAX_SUB ||
        (hdr[0] == STATE_MAGIC2 && hdr[5] >= CALM_SAVED_MAX))
        goto bad;
    why = "the particles' lag behind the clock is not within [0, 0.1] s";
    if (!(behind >= 0 && behind <= BEHIND_MAX)) goto bad;
    size_t need = hlen + (size_t)hdr[1] * 24 + (size_t)hdr[2] * 4 + (size_t)hdr[3] * 4;
    why = "length";
    if (n != need) goto bad;
    const unsigned char *b = (const unsigned char *)buf + hlen;
    /* obstacles as fs_world_mps_add_obstacle leaves them: inside the box, a spacing thick */
    const fs_domain *d = rc->dom;
    why = "an obstacle is not inside the box or thinner than a spacing";
    for (uint32_t o = 0; o < hdr[1]; o++) {
        float v[6];
        memcpy(v, b + o * 24, sizeof v);
        if (!(v[0] >= d->box_min.x && v[1] >= d->box_min.y && v[2] >= d->box_min.z && v[3] <= d->box_max.x &&
              v[4] <= d->box_max.y && v[5] <= d->box_max.z && v[3] - v[0] >= d->spacing && v[4] - v[1] >= d->spacing &&
              v[5] - v[2] >= d->spacing))
            goto bad;
    }
    why = "a pressure is not finite";
    for (size_t k = 0; k < (size_t)hdr[2] + hdr[3]; k++) {
        float p;
        memcpy(&p, b + (size_t)hdr[1] * 24 + 4 * k, 4);
        if (!(fabsf(p) <= 1e12f)) goto bad;
    }
    if (!rc->apply) return FS_OK;
    mps_state *s = state_of(w);
    if (!s) return FS_OK;
    s->nobst = (int)hdr[1];
    for (uint32_t o = 0; o < hdr[1]; o++) {
        float v[6];
        memcpy(v, b, sizeof v), b += sizeof v;
        s->obst[o].lo = (fs_vec3){v[0], v[1], v[2]}, s->obst[o].hi = (fs_vec3){v[3], v[4], v[5]};
    }
    s->obst_epoch = w->epoch;
    s->built = false;
    refresh(w, s);
    for (int i = 0; i < w->cap; i++) s->p_slot[i] = 0;
    for (uint32_t i = 0; i < hdr[2] && (int)i < w->n; i++) memcpy(&s->p_slot[w->p.slot[i]], b + 4 * i, 4);
    s->substeps = (int)hdr[4];
    s->behind = behind;
    return FS_OK;
bad:
    SETERR(err, "snapshot: the mps section is damaged (%s)", why);
    return FS_ERR_ARG;
}

/* ---- public extras --------------------------------------------------------- */
bool fs_world_mps_info(const fs_world *w, fs_mps_info *o) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s || !o) return false;
    memset(o, 0, sizeof *o);
    o->l0 = s->l0, o->re_n = s->re_n, o->re_lap = s->re_l;
    o->n0 = s->n0, o->n0_lap = s->n0l, o->lambda = s->lambda;
    o->walls = s->nwall, o->obstacles = s->nobst;
    o->substeps = s->substeps, o->dt_sub = s->dt_sub, o->behind = s->behind;
    o->taken = s->taken, o->cuts = s->cuts, o->overruns = s->overrun;
    o->unknowns = s->unknowns, o->surface = s->surface;
    o->skipped_solves = s->shrunk;
    return true;
}

int fs_world_mps_fields(const fs_world *w, float *pressure, float *number_density, int max) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s) return 0;
    int n = w->n < max ? w->n : max;
    if (pressure) memcpy(pressure, s->press, sizeof(float) * (size_t)n);
    if (number_density) memcpy(number_density, s->nst, sizeof(float) * (size_t)n);
    return n;
}

const fs_solver_ops fs__mps_ops = {FS_SOLVER_OPS_FIELDS(mps, "mps",
                                                        "Premoze et al. 2003: Moving Particle Semi-implicit, pressure "
                                                        "Poisson equation by MIC-preconditioned CG, wall particles"),
                                   .obstacles_changed = fs__mps_obstacles_changed};
