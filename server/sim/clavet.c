/* clavet.c - the Clavet solver: one step of Clavet, Beaudoin & Poulin 2005,
 * "Particle-based viscoelastic fluid simulation", Algorithm 1, in 3D.
 *
 * Stages (Algorithm 1):
 *   emit / drain                       (commands; outside the paper; sources.c)
 *   grid on x                          (Sec. 7.1, uniform grid of h/2 cells, counting sort; grid.c)
 *   gravity + viscosity (Alg. 5)       lines 1-5 (coloured sweeps: and XSPH for liquids)
 *   prediction                          lines 6-10
 *   grid on predicted x
 *   adjustSprings (Alg. 4, Eq. 7-8)    line 12
 *   applySpringDisplacements (Alg. 3)  line 15 (coloured sweeps: plastic springs only)
 *   doubleDensityRelaxation (Alg. 2)   line 16 (coloured sweeps: elastic springs projected after each;
 *                                      walls as mirror images of the neighbourhood)
 *   resolveCollisions (Eq. 9-11)       line 17, bodies (Alg. 6, bodies.c), then the walls of the box
 *   new velocities                      lines 18-20, then NaN repair and box clamp
 *
 * The coloured sweeps (the default) reorder the first stages after position-
 * based fluids (Macklin & Mueller 2013, Algorithm 1): gravity and prediction,
 * one grid on the predicted positions, the plastic springs, then one scan a
 * step (list_task) that stores the sweeps' lists and sums Alg. 5's impulses
 * over the same pairs, which then move the prediction by dt each.
 *
 * Parallel form.  Algorithms 2, 3 and 5 apply each pair's displacement (or
 * impulse) at once, so their sequential result depends on the visiting order.
 * Here every pairwise stage is a *gather*: each particle sums, from the same
 * input state, the share it receives from each pair, and the pair's two
 * shares are computed by the same expression with r_ij negated, so they are
 * bitwise equal and opposite.  Pairwise action-reaction along r_ij holds
 * exactly per pair, hence linear and angular momentum are conserved to
 * round-off, and the result does not depend on the thread count or on how
 * the work is split.  For the relaxation this means: densities from the
 * predicted positions, then the pair (i, j) exchanges
 *     D_ij = dt^2 ((P_i + P_j)(1-q) + (P_i^near + P_j^near)(1-q)^2) r_ij / 2,
 * i.e. the sum of the two displacements Algorithm 2 would give the pair when
 * visiting i and when visiting j, evaluated at one configuration (Jacobi)
 * instead of sequentially (Gauss-Seidel).  FS_RELAX_SEQUENTIAL runs
 * Algorithm 2 exactly as printed for comparison (tests/bench report both).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "sim_util.h"
#include "solver_table.h"
#include "step.h"
#include "tasks.h"

/* The state only this solver reads (w->solver_state), sized for the
 * world's capacity; its settings are w->def.clavet.  Threads: the thread
 * that owns the world, and during a step the workers of parallel_for, each
 * writing only its own particles' entries and its own spr_refused_worker
 * slot. */
typedef struct clavet_state {
    float *s_a, *s_b;   /* per particle: pressure / near pressure (premultiplied), or dt sigma / dt beta/h */
    float *s_c;         /* per particle: the XSPH weight of its material this step */
    int32_t *spr_total; /* Alg. 4: springs + candidates per particle */
    int32_t *seq_order; /* FS_RELAX_SEQUENTIAL: a fixed random order of slots */
    int32_t *nb_off;    /* the coloured sweeps: where i's list starts in w->nb (list_task) */
    uint64_t spr_refused_worker[FS_MAX_WORKERS];
} clavet_state;

static void clavet_detach(fs_world *w) {
    clavet_state *st = w->solver_state;
    if (!st) return;
    free(st->s_a), free(st->s_b), free(st->s_c), free(st->spr_total), free(st->seq_order), free(st->nb_off);
    fs__solver_state_free(w);
}

static fs_status clavet_attach(fs_world *w, fs_error *err) {
    clavet_state *st = fs__solver_state_new(w, sizeof *st);
    size_t n = (size_t)w->cap;
    if (st) {
        st->s_a = malloc(sizeof(float) * n), st->s_b = malloc(sizeof(float) * n), st->s_c = malloc(sizeof(float) * n);
        st->spr_total = malloc(sizeof(int32_t) * n), st->seq_order = malloc(sizeof(int32_t) * n);
        st->nb_off = malloc(sizeof(int32_t) * n);
    }
    if (!st || !st->s_a || !st->s_b || !st->s_c || !st->spr_total || !st->seq_order || !st->nb_off) {
        clavet_detach(w);
        SETERR(err, "clavet: out of memory");
        return FS_ERR_NOMEM;
    }
    /* A fixed random order of slots for the sequential relaxation
     * ("randomized but not modified throughout the simulation", Sec. 4.3). */
    for (int i = 0; i < w->cap; i++) st->seq_order[i] = i;
    for (int i = w->cap - 1; i > 0; i--) {
        int j = (int)(fs__rand01(77, (uint64_t)i) * (float)(i + 1));
        if (j > i) j = i;
        int32_t t = st->seq_order[i];
        st->seq_order[i] = st->seq_order[j];
        st->seq_order[j] = t;
    }
    return FS_OK;
}

/* XSPH velocity smoothing (Monaghan 1989; Schechter & Bridson 2012; Macklin
 * & Mueller 2013, Eq. 17), an extension for the coloured sweeps:
 * v_i += sum_j c/rho0 (1-q)^2 (v_j - v_i), with the old velocities, so each
 * pair's exchange is antisymmetric and linear momentum is kept.  Two
 * Gauss-Seidel sweeps a step leave every particle a velocity of their
 * unconverged correction, fresh each step (lag-one correlation 0.3): with the
 * mirrored walls below a settled pool kept 0.37 m/s rms.  c = 0.4 per 1/60 s
 * takes it to 0.09 and puts the dam break's residual column within 8.4% of
 * Martin & Moyce (0.3: 10.3%, 0.5: 11.9%; docs/clavet-notes.md, "XSPH").
 * Only liquids: a material with springs keeps its own damping. */
#define XSPH_C 0.4f

/* ---- per-material constants, premultiplied for the inner loops ---------- */
typedef struct mconst {
    float sigma[FS_MAX_MATERIALS], beta[FS_MAX_MATERIALS]; /* dt*sigma, dt*beta/h */
    float k[FS_MAX_MATERIALS], kn[FS_MAX_MATERIALS];       /* h * (k dt^2) */
    float rho0[FS_MAX_MATERIALS];
    float ks[FS_MAX_MATERIALS], alpha[FS_MAX_MATERIALS]; /* k_spring dt^2, dt*alpha */
    float ys[FS_MAX_MATERIALS], yc[FS_MAX_MATERIALS], brk[FS_MAX_MATERIALS];
    uint8_t springs[FS_MAX_MATERIALS], add[FS_MAX_MATERIALS];
    float diff[FS_MAX_MATERIALS]; /* Eq. 21: dt-free, D * lattice normalisation * h */
    uint8_t phase[FS_MAX_MATERIALS];
    float tsolid[FS_MAX_MATERIALS], tmelt[FS_MAX_MATERIALS];
    bool any_phase;
    bool heat;
    float mu[FS_MAX_MATERIALS];
    bool any_springs;
    float xsph[FS_MAX_MATERIALS]; /* XSPH_C over rho0 for this step's dt; 0 for materials with springs */
} mconst;

static void mconst_init(const fs_world *w, mconst *m) {
    float dt = w->dt, h = w->h;
    memset(m, 0, sizeof *m);
    for (int i = 0; i < w->nmat; i++) {
        const float *p = w->mat[i].p;
        m->sigma[i] = dt * p[FS_P_VISC_SIGMA];
        m->beta[i] = dt * p[FS_P_VISC_BETA] / h;
        m->k[i] = h * p[FS_P_STIFFNESS];
        m->kn[i] = h * p[FS_P_NEAR_STIFFNESS];
        m->rho0[i] = p[FS_P_REST_DENSITY];
        m->ks[i] = p[FS_P_SPRING_STIFFNESS];
        m->alpha[i] = dt * p[FS_P_PLASTICITY];
        m->ys[i] = p[FS_P_YIELD_STRETCH];
        m->yc[i] = p[FS_P_YIELD_COMPRESS];
        m->brk[i] = p[FS_P_SPRING_BREAK] * h;
        m->springs[i] = p[FS_P_SPRINGS] != 0.0f;
        m->add[i] = m->springs[i] && p[FS_P_SPRING_ADD] != 0.0f;
        m->mu[i] = p[FS_P_FRICTION];
        m->diff[i] = fs__heat_coef(w, i);
        m->phase[i] = p[FS_P_PHASE_CHANGE] != 0.0f;
        /* XSPH_C per 1/60 s, compounded for the step's dt */
        if (w->def.clavet.relax == FS_RELAX_COLORED && !m->springs[i] && m->rho0[i] > 0.0f)
            m->xsph[i] = (1.0f - powf(1.0f - XSPH_C, dt * 60.0f)) / m->rho0[i];
        m->tsolid[i] = p[FS_P_SOLID_POINT];
        m->tmelt[i] = p[FS_P_MELT_POINT] > p[FS_P_SOLID_POINT] ? p[FS_P_MELT_POINT] : p[FS_P_SOLID_POINT];
        m->any_phase |= m->phase[i];
        m->heat |= m->diff[i] > 0;
        m->any_springs |= m->springs[i];
    }
}

typedef struct step_ctx {
    fs_world *w;
    clavet_state *s;
    mconst m;
    float dt, h, h2, inv_h;
    fs_vec3 g;
    uint64_t nonfinite[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS], freeze_events[FS_MAX_WORKERS];
    bool freezing;                  /* some particle froze this step */
    bool colored;                   /* this step relaxed by coloured sweeps (walls projected inside them) */
    bool uni;                       /* the materials present share Alg. 5's and XSPH's constants */
    bool present[FS_MAX_MATERIALS]; /* a particle of this material is in the world this step */
    int spr_pass;                   /* which springs Algorithm 3's pass moves: SPR_ALL, SPR_PLASTIC, SPR_ELASTIC */
} step_ctx;

enum { SPR_ALL, SPR_PLASTIC, SPR_ELASTIC };

/* ---- temperature and springs (the phase change, for this solver) -------
 * A material with a phase change has a solidity s = 1 below its
 * solidification point, 0 above its melting point, linear between.  Its
 * springs hold while s > 0 (a material without one: while it has springs),
 * yield faster as s falls (plasticity + (1 - s) SOFT_ALPHA), and break at
 * s = 0.  A particle that becomes fully solid freezes to its fully solid
 * neighbours: springs at their current distance.  An extension of the paper
 * in the spirit of Fig. 12's mold. */
#define SOFT_ALPHA 20.0f /* 1/s */

static inline bool holds(const mconst *m, int mat, float s) {
    return m->phase[mat] ? s > 0.0f : m->springs[mat];
}

/* A spring between two materials that never yield (no Eq. 8 plasticity,
 * fully solid): the coloured sweeps project it (springs_colored). */
static inline bool spring_elastic(const step_ctx *c, const fs_world *w, int i, int j) {
    const int mi = w->p.mat[i], mj = w->p.mat[j];
    return c->m.alpha[mi] == 0.0f && c->m.alpha[mj] == 0.0f && (!c->m.phase[mi] || w->solid[i] >= 1.0f) &&
           (!c->m.phase[mj] || w->solid[j] >= 1.0f);
}

static inline bool may_add(const step_ctx *c, const fs_world *w, int i) {
    int m = w->p.mat[i];
    return c->m.add[m] || (c->freezing && c->m.phase[m] && w->solid[i] >= 1.0f);
}

/* 0: no new spring between i and j; 1: Alg. 4 (rest length h); 2: freezing
 * (rest length r).  Symmetric in (i, j). */
static inline int new_spring(const step_ctx *c, const fs_world *w, int i, int j) {
    int mi = w->p.mat[i], mj = w->p.mat[j];
    if (c->freezing && c->m.phase[mi] && c->m.phase[mj] && w->solid[i] >= 1.0f && w->solid[j] >= 1.0f &&
        (!w->p.frozen[i] || !w->p.frozen[j]))
        return 2;
    return (c->m.add[mi] && c->m.add[mj]) ? 1 : 0;
}

/* ---- gravity + viscosity (Alg. 1 lines 1-5, Alg. 5), gather form -------
 * Alg. 5 for particle i over its neighbours J[0..n) (r_ij in DX, DY, DZ, as a
 * scan packs them), all within h; the sum of the impulses (and XSPH's
 * exchange) i receives, to add to its velocity. */
static inline __attribute__((always_inline)) void visc_sum(const step_ctx *c, int i, const int32_t *restrict J,
                                                           const float *restrict DX, const float *restrict DY,
                                                           const float *restrict DZ, int n, bool uni, float *oax,
                                                           float *oay, float *oaz) {
    const fs_particles *p = &c->w->p;
    const float *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float *SG = c->s->s_a, *BT = c->s->s_b; /* per-particle dt sigma, dt beta / h */
    const float *XS = c->s->s_c;                  /* per-particle XSPH weight */
    const float inv_h = c->inv_h;
    const float vxi = VX[i], vyi = VY[i], vzi = VZ[i], si = SG[i], bi = BT[i], xsi = XS[i];
    float ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
    for (int k = 0; k < n; k++) {
        const int j = J[k];
        const float dx = DX[k], dy = DY[k], dz = DZ[k];
        const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
        /* a coincident pair has no direction: no radial impulse */
        const float inv = rr > 1e-9f ? 1.0f / rr : 0.0f;
        const float ux = dx * inv, uy = dy * inv, uz = dz * inv;
        /* u: inward radial velocity (Alg. 5 line 5); only u > 0 acts (line 6) */
        float u = (vxi - VX[j]) * ux + (vyi - VY[j]) * uy + (vzi - VZ[j]) * uz;
        u = u > 0.0f ? u : 0.0f;
        const float q = rr * inv_h;
        /* uni: every particle has i's constants, and 0.5 (a + a) = a exactly */
        const float sg = uni ? si : 0.5f * (si + SG[j]), bt = uni ? bi : 0.5f * (bi + BT[j]);
        /* Alg. 5 line 8 (dt folded into sigma, beta).  Applied as a
         * Jacobi gather, an impulse larger than (1-q) u / 16 per pair
         * could make the sum over ~40 neighbours reverse the relative
         * velocity; saturating there keeps the smoothing operator's
         * eigenvalues in [0, 1] up to twice the rest density. */
        float I = sg * u + bt * u * u;
        const float cap = u * (1.0f / 16.0f);
        I = (1.0f - q) * (I < cap ? I : cap) * 0.5f; /* line 9: v_i -= I/2 */
        ax -= I * ux, ay -= I * uy, az -= I * uz;
        /* XSPH (XSPH_C), symmetric in i and j: momentum is kept */
        const float xs = (uni ? xsi : 0.5f * (xsi + XS[j])) * (1.0f - q) * (1.0f - q);
        ax += xs * (VX[j] - vxi), ay += xs * (VY[j] - vyi), az += xs * (VZ[j] - vzi);
    }
    *oax = ax, *oay = ay, *oaz = az;
}

/* Alg. 1 lines 1-5 at the step's start (the Jacobi and sequential forms): a
 * scan of the grid on x, gravity and the viscosity impulses into nv. */
FS_SIMD_CLONES static void viscosity_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float gdx = c->g.x * c->dt, gdy = c->g.y * c->dt, gdz = c->g.z * c->dt;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, true, sc.j, sc.r2, sc.dx, sc.dy, sc.dz);
        float ax, ay, az;
        visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n, false, &ax, &ay, &az);
        /* Alg. 1 line 3 (gravity) + the viscosity impulses */
        w->nvx[i] = p->vx[i] + gdx + ax;
        w->nvy[i] = p->vy[i] + gdy + ay;
        w->nvz[i] = p->vz[i] + gdz + az;
    }
}

/* The coloured order (the file's header): the prediction moves by dt times
 * the impulses list_task summed into nv, as line 7 would have moved it.
 * Alg. 5 thus reads its pairs at x + dt v instead of x, and the step needs
 * one grid build and one neighbour scan, not two (docs/clavet-notes.md,
 * "The step"). */
static void visc_apply_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    const float dt = c->dt;
    for (int i = b; i < e; i++) {
        p->x[i] += dt * (w->nvx[i] - p->vx[i]);
        p->y[i] += dt * (w->nvy[i] - p->vy[i]);
        p->z[i] += dt * (w->nvz[i] - p->vz[i]);
    }
}

static void visc_params_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    for (int i = b; i < e; i++) {
        int m = w->p.mat[i];
        c->s->s_a[i] = c->m.sigma[m];
        c->s->s_b[i] = c->m.beta[m];
        c->s->s_c[i] = c->m.xsph[m];
    }
}

/* Alg. 1 lines 6-10: save previous position, advance to predicted (the
 * coloured sweeps' order: gravity first, line 3). */
static void predict_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_particles *p = &c->w->p;
    const float dt = c->dt;
    if (c->colored) { /* the coloured order: gravity here, Alg. 5 after the lists */
        const float gdx = c->g.x * dt, gdy = c->g.y * dt, gdz = c->g.z * dt;
        for (int i = b; i < e; i++) p->vx[i] += gdx, p->vy[i] += gdy, p->vz[i] += gdz;
    }
    for (int i = b; i < e; i++) {
        p->px[i] = p->x[i], p->py[i] = p->y[i], p->pz[i] = p->z[i];
        p->x[i] += dt * p->vx[i], p->y[i] += dt * p->vy[i], p->z[i] += dt * p->vz[i];
    }
}

/* ---- springs: Algorithm 4 (adjust) in three gathers, then Algorithm 3 --- */

/* The neighbours of i within h at the current positions, into sc.j and sc.r2. */
static inline int scan_within_h(const step_ctx *c, int i, fs_ranges *r, const fs_scratch *sc) {
    const fs_world *w = c->w;
    fs__ranges_of(w, w->cell[i], r);
    return fs__scan(w->p.x, w->p.y, w->p.z, r, i, c->h2, false, sc->j, sc->r2, NULL, NULL, NULL);
}

/* S1: Eq. 8 rest-length update of every existing spring, and Alg. 4 lines
 * 12-14 removal (L > h), plus removal when stretched past the break length or
 * when a material no longer has springs.  Both ends compute the same numbers
 * from the same inputs, so the two copies stay identical. */
static void spring_plastic_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const int K = w->K;
    const float h = c->h;
    for (int i = b; i < e; i++) {
        int s = p->slot[i];
        int n = w->spr_n[s], m = 0;
        int32_t *J = w->spr_j + (size_t)s * K;
        float *L = w->spr_L + (size_t)s * K;
        int mi = p->mat[i];
        const float si = w->solid[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            int mj = p->mat[j];
            const float sj = w->solid[j];
            if (!holds(&c->m, mi, si) || !holds(&c->m, mj, sj)) continue; /* melted, or springs off */
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            float Lk = L[k];
            float alpha = 0.5f * (c->m.alpha[mi] + c->m.alpha[mj]);
            /* warming towards the melting point makes the material yield */
            if (c->m.phase[mi] || c->m.phase[mj]) alpha += (1.0f - (si < sj ? si : sj)) * SOFT_ALPHA * c->dt;
            float ys = 0.5f * (c->m.ys[mi] + c->m.ys[mj]), yc = 0.5f * (c->m.yc[mi] + c->m.yc[mj]);
            float brk = 0.5f * (c->m.brk[mi] + c->m.brk[mj]);
            /* Alg. 4 lines 7-11: tolerable deformation d = gamma L */
            float ds = ys * Lk, dc = yc * Lk;
            if (rr > Lk + ds)
                Lk += alpha * (rr - Lk - ds);
            else if (rr < Lk - dc)
                Lk -= alpha * (Lk - dc - rr);
            /* Alg. 4 lines 13-14 */
            if (Lk > h || rr > brk) continue;
            J[m] = J[k];
            L[m] = Lk;
            m++;
        }
        w->spr_n[s] = (uint16_t)m;
    }
}

/* S2: how many springs each particle would have if Alg. 4 line 5 added one
 * for every eligible neighbour within h. */
static void spring_count_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        int s = w->p.slot[i], n = w->spr_n[s];
        int total = n;
        if (may_add(c, w, i)) {
            const int32_t *J = w->spr_j + (size_t)s * w->K;
            int nn = scan_within_h(c, i, &r, &sc);
            for (int k = 0; k < nn; k++)
                if (new_spring(c, w, i, sc.j[k]) && !fs__sorted_has(J, n, w->p.slot[sc.j[k]])) total++;
        }
        c->s->spr_total[i] = total;
    }
}

/* S3: Alg. 4 line 5, add spring ij with rest length h.  A pair is added
 * only when both ends have room for all their candidates, so both ends make
 * the same decision without talking to each other. */
static void spring_add_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const int K = w->K;
    fs_scratch sc = fs__scratch_of(w, worker);
    const int32_t *list = sc.j;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        int s = p->slot[i], n0 = w->spr_n[s];
        if (c->s->spr_total[i] == n0) continue;
        if (c->s->spr_total[i] > K) {
            c->s->spr_refused_worker[worker] += (uint64_t)(c->s->spr_total[i] - n0);
            continue;
        }
        int32_t *J = w->spr_j + (size_t)s * K;
        float *L = w->spr_L + (size_t)s * K;
        int n = n0;
        int nn = scan_within_h(c, i, &r, &sc);
        for (int k = 0; k < nn; k++) {
            int j = list[k];
            int kind = new_spring(c, w, i, j);
            if (!kind || c->s->spr_total[j] > K) continue;
            if (fs__sorted_has(J, n0, p->slot[j])) continue;
            J[n] = p->slot[j];
            /* Alg. 4 line 5 inserts at rest length h; a pair that freezes
             * together keeps the shape it froze in */
            L[n] = kind == 2 ? sqrtf(sc.r2[k]) : c->h;
            n++;
        }
        fs__sort_keyed(J, L, sizeof *L, n0, n); /* the appended tail into the sorted list */
        w->spr_n[s] = (uint16_t)n;
    }
}

/* Particle i's springs: partner slots and rest lengths; returns how many. */
static inline int springs_of(const fs_world *w, int i, const int32_t **J, const float **L) {
    const int s = w->p.slot[i];
    *J = w->spr_j + (size_t)s * w->K, *L = w->spr_L + (size_t)s * w->K;
    return w->spr_n[s];
}

/* Algorithm 3: D = dt^2 k_spring (1 - L/h)(L - r) r_ij; x_i -= D/2. */
static void spring_displace_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    for (int i = b; i < e; i++) {
        const int32_t *J;
        const float *L;
        const int n = springs_of(w, i, &J, &L);
        float ax = 0, ay = 0, az = 0;
        int mi = p->mat[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            if (c->spr_pass != SPR_ALL && spring_elastic(c, w, i, j) != (c->spr_pass == SPR_ELASTIC)) continue;
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            if (rr < 1e-9f) {
                fs__coincident_dir(p, i, j, 21, &dx, &dy, &dz), rr = 0;
            } else {
                float inv = 1.0f / rr;
                dx *= inv, dy *= inv, dz *= inv;
            }
            float ks = 0.5f * (c->m.ks[mi] + c->m.ks[p->mat[j]]);
            float D = 0.5f * ks * (1.0f - L[k] * c->inv_h) * (L[k] - rr);
            ax -= D * dx, ay -= D * dy, az -= D * dz;
        }
        w->nx[i] = p->x[i] + ax, w->ny[i] = p->y[i] + ay, w->nz[i] = p->z[i] + az;
    }
}

static void swap_velocities(fs_world *w) {
    float *t;
    t = w->p.vx, w->p.vx = w->nvx, w->nvx = t;
    t = w->p.vy, w->p.vy = w->nvy, w->nvy = t;
    t = w->p.vz, w->p.vz = w->nvz, w->nvz = t;
}

static void swap_positions(fs_world *w) {
    float *t;
    t = w->p.x, w->p.x = w->nx, w->nx = t;
    t = w->p.y, w->p.y = w->ny, w->ny = t;
    t = w->p.z, w->p.z = w->nz, w->nz = t;
}

static void solidity_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    uint64_t events = 0;
    for (int i = b; i < e; i++) {
        int m = p->mat[i];
        float s = 1.0f;
        if (c->m.phase[m]) {
            float T = p->temp[i], ts = c->m.tsolid[m], tm = c->m.tmelt[m];
            s = T <= ts ? 1.0f : (T >= tm ? 0.0f : (tm - T) / (tm - ts));
            events += s >= 1.0f && !p->frozen[i];
            /* no longer fully solid: clear now (nothing below reads it for
             * such a particle); becoming solid is recorded by frozen_task
             * after this step's freezing springs are made */
            if (s < 1.0f) p->frozen[i] = 0;
        }
        w->solid[i] = s;
    }
    c->freeze_events[worker] += events;
}

static void frozen_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    for (int i = b; i < e; i++)
        if (c->m.phase[w->p.mat[i]]) w->p.frozen[i] = w->solid[i] >= 1.0f;
}

static void springs_stage(fs_world *w, step_ctx *c) {
    /* Alg. 4 insertion only when a material that inserts springs is present */
    bool any_add = false;
    for (int m = 0; m < w->nmat; m++) any_add |= c->m.add[m] && c->present[m];
    fs__run(w, solidity_task, c, w->n);
    uint64_t ev = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++) ev += c->freeze_events[k], c->freeze_events[k] = 0;
    c->freezing = ev > 0;
    any_add |= c->freezing;
    if (w->springs == 0 && !any_add) return; /* no freezing (it would be in any_add) */
    fs__run(w, spring_plastic_task, c, w->n);
    if (any_add) {
        fs__run(w, spring_count_task, c, w->n);
        fs__run(w, spring_add_task, c, w->n);
    }
    if (c->freezing) fs__run(w, frozen_task, c, w->n);
    long total = 0;
    for (int i = 0; i < w->n; i++) total += w->spr_n[w->p.slot[i]];
    w->springs = (int)(total / 2);
    if (w->springs == 0) return;
    /* coloured: the elastic springs are projected in the sweeps (springs_colored) */
    c->spr_pass = c->colored ? SPR_PLASTIC : SPR_ALL;
    fs__run(w, spring_displace_task, c, w->n);
    swap_positions(w);
}

/* ---- Algorithm 2, double density relaxation ---------------------------- */
/* Walls as mirror particles for the Jacobi and sequential forms (an
 * extension; the paper has only collisions; the coloured sweeps mirror the
 * whole neighbourhood, wall_images below).
 * A particle closer than h/2 to a face sees its own mirror image at 2d: the
 * image adds (1-q)^2 and (1-q)^3 to the densities (Eq. 1, 4) and the pair
 * displacement of Eq. 6, both visits counted as in the Jacobi form, pushes
 * the particle off the wall (the wall is static: it takes no share).  Only
 * repulsion: a negative pressure does not glue fluid to walls.  Without it
 * the box's faces are a vacuum to the relaxation, and particles pressed into
 * an edge or a corner by the bulk are clamped onto one point. */
static inline void wall_density(const fs_world *w, float x, float y, float z, float *rho, float *rhon) {
    const float p[3] = {x, y, z};
    const float lo[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
    const float hi[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
    for (int a = 0; a < 3; a++) {
        float q1 = 1.0f - 2.0f * (p[a] - lo[a]) * w->inv_h, q2 = 1.0f - 2.0f * (hi[a] - p[a]) * w->inv_h;
        if (q1 > 0) *rho += q1 * q1, *rhon += q1 * q1 * q1;
        if (q2 > 0) *rho += q2 * q2, *rhon += q2 * q2 * q2;
    }
}

static inline void wall_push(const fs_world *w, float x, float y, float z, float P, float PN, float *ax, float *ay,
                             float *az) {
    const float p[3] = {x, y, z};
    const float lo[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
    const float hi[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
    float d[3] = {0, 0, 0};
    P = P > 0 ? P : 0;
    for (int a = 0; a < 3; a++) {
        float q1 = 1.0f - 2.0f * (p[a] - lo[a]) * w->inv_h, q2 = 1.0f - 2.0f * (hi[a] - p[a]) * w->inv_h;
        if (q1 > 0) d[a] += P * q1 + PN * q1 * q1;
        if (q2 > 0) d[a] -= P * q2 + PN * q2 * q2;
    }
    *ax += d[0], *ay += d[1], *az += d[2];
}

/* Eq. 21 for particle i over its neighbours J[0..n) (|r_ij|^2 in R2): heat
 * diffusion with the Laplacian of the viscosity kernel, proportional to
 * (h - r) = h q; each pair's exchange is antisymmetric, so heat is conserved. */
static inline __attribute__((always_inline)) float heat_sum(const step_ctx *c, int i, const int32_t *restrict J,
                                                            const float *restrict R2, int n) {
    const fs_particles *p = &c->w->p;
    const float Ti = p->temp[i], Di = c->m.diff[p->mat[i]], inv_h = c->inv_h;
    const float *T = p->temp;
    const uint8_t *MM = p->mat;
    float acc = 0;
#pragma omp simd reduction(+ : acc)
    for (int k = 0; k < n; k++) {
        const float q = 1.0f - sqrtf(R2[k]) * inv_h;
        acc += 0.5f * (Di + c->m.diff[MM[J[k]]]) * q * (T[J[k]] - Ti);
    }
    return acc;
}

/* n rounded up to whole vectors of 8: the pair loops run over padded lists
 * (entries that add exactly nothing), with no scalar remainder loop. */
static inline int pad8(int n) {
    return (n + 7) & ~7;
}

/* Stores i's list (sc's first n entries) in w->nb, or marks it overflowed;
 * the list is padded to pad8(n) with i itself. */
static inline void store_list_at(fs_world *w, int i, const int32_t *J, int n, size_t at) {
    if (n <= FS_NB_MAX) {
        int32_t *l = w->nb + at;
        memcpy(l, J, sizeof(int32_t) * (size_t)n);
        for (int k = n; k < pad8(n); k++) l[k] = i; /* padding (gs_particle) */
        w->nb_n[i] = n;
    } else {
        w->nb_n[i] = -1; /* whoever reads it scans again: same positions, same set */
    }
}
static inline void store_list(fs_world *w, int i, const int32_t *J, int n) {
    store_list_at(w, i, J, n, (size_t)i * FS_NB_MAX);
}

/* list_task packs the lists of each chunk of LIST_CHUNK particles one after
 * the other, from the place of the chunk's first particle in w->nb (which
 * has room for FS_NB_MAX a particle).  A pass then touches only the entries
 * it uses, where the fixed stride left most of each 4 KiB page unused (the
 * list pass's share of samples fell from 0.73 to 0.59 of the scan's).  An
 * offset stays at most i FS_NB_MAX, within 32 bits at the largest capacity. */
#define LIST_CHUNK 64

/* Pass 1: density and near-density (Eq. 1, 4), pressures (Eq. 2, 5),
 * premultiplied by dt^2 so that pass 2 is Eq. 6 directly. */
FS_SIMD_CLONES static void density_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float inv_h = c->inv_h;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        store_list(w, i, sc.j, n);
        const float *R2 = sc.r2;
        const int m = p->mat[i];
        float rho = 0, rhon = 0;
#pragma omp simd reduction(+ : rho, rhon)
        for (int k = 0; k < n; k++) {
            const float q = 1.0f - sqrtf(R2[k]) * inv_h, q2 = q * q;
            rho += q2;      /* Eq. 1 */
            rhon += q2 * q; /* Eq. 4 */
        }
        if (c->m.heat) w->dT[i] = heat_sum(c, i, sc.j, R2, n);
        wall_density(w, p->x[i], p->y[i], p->z[i], &rho, &rhon);
        c->s->s_a[i] = c->m.k[m] * (rho - c->m.rho0[m]); /* Eq. 2, times dt^2 h */
        c->s->s_b[i] = c->m.kn[m] * rhon;                /* Eq. 5, times dt^2 h */
    }
}

/* The coloured sweeps' one scan a step, at the predicted positions: i's list
 * for every sweep, Alg. 5's impulses into nv (then visc_apply_task) and Eq.
 * 21's heat rate.  Over the chunks [qb, qe) of LIST_CHUNK particles. */
FS_SIMD_CLONES static void list_task(int qb, int qe, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const int b = qb * LIST_CHUNK, e = qe * LIST_CHUNK < w->n ? qe * LIST_CHUNK : w->n;
    size_t at = (size_t)b * FS_NB_MAX;
    for (int i = b; i < e; i++) {
        if (i % LIST_CHUNK == 0) at = (size_t)i * FS_NB_MAX;
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, true, sc.j, sc.r2, sc.dx, sc.dy, sc.dz);
        c->s->nb_off[i] = (int32_t)at;
        store_list_at(w, i, sc.j, n, at);
        if (n <= FS_NB_MAX) at += (size_t)pad8(n);
        /* padded with i at zero offset: no direction, no impulse, and XSPH's
         * v_i - v_i = 0 (the scratch has FS_SCR_PAD entries of room) */
        const int n8 = pad8(n);
        for (int k = n; k < n8; k++) sc.j[k] = i, sc.dx[k] = sc.dy[k] = sc.dz[k] = 0.0f;
        float ax, ay, az;
        if (c->uni)
            visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n8, true, &ax, &ay, &az);
        else
            visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n8, false, &ax, &ay, &az);
        w->nvx[i] = p->vx[i] + ax, w->nvy[i] = p->vy[i] + ay, w->nvz[i] = p->vz[i] + az;
        if (c->m.heat) w->dT[i] = heat_sum(c, i, sc.j, sc.r2, n);
    }
}

/* Pass 2: Eq. 6 for every pair from both sides, applied as a gather. */
FS_SIMD_CLONES static void displace_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *P = c->s->s_a, *PN = c->s->s_b;
    const float inv_h = c->inv_h;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        const int32_t *list;
        const int n = fs__neighbours_of(w, i, c->h2, &r, &sc, &list);
        const float xi = X[i], yi = Y[i], zi = Z[i], pi = P[i], pni = PN[i];
        float ax = 0, ay = 0, az = 0;
        int coincident = 0;
#pragma omp simd reduction(+ : ax, ay, az, coincident)
        for (int k = 0; k < n; k++) {
            const int j = list[k];
            const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
            const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            const float inv = rr >= 1e-9f ? 1.0f / rr : 0.0f;
            coincident += rr < 1e-9f;
            const float q = 1.0f - rr * inv_h;
            /* Eq. 6 from i's visit plus Eq. 6 from j's visit; x_i receives
             * -D/2 along r_ij (Alg. 2 line 20) */
            const float D = 0.5f * ((pi + P[j]) * q + (pni + PN[j]) * q * q) * inv;
            ax -= D * dx, ay -= D * dy, az -= D * dz;
        }
        if (coincident) /* rare: pairs at one point act along a direction drawn from their ids */
            for (int k = 0; k < n; k++) {
                const int j = list[k];
                const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                if (sqrtf(dx * dx + dy * dy + dz * dz) >= 1e-9f) continue;
                float ux, uy, uz;
                fs__coincident_dir(p, i, j, 21, &ux, &uy, &uz);
                const float D = 0.5f * ((pi + P[j]) + (pni + PN[j]));
                ax -= D * ux, ay -= D * uy, az -= D * uz;
            }
        wall_push(w, xi, yi, zi, pi, pni, &ax, &ay, &az);
        w->nx[i] = xi + ax, w->ny[i] = yi + ay, w->nz[i] = zi + az;
    }
}

/* Whether j (not i) lies within sqrt(h2) of i: r_ij and |r_ij|^2 out. */
static inline bool near_pair(const float *X, const float *Y, const float *Z, int i, int j, float h2, float *dx,
                             float *dy, float *dz, float *r2) {
    if (j == i) return false;
    *dx = X[j] - X[i], *dy = Y[j] - Y[i], *dz = Z[j] - Z[i];
    *r2 = *dx * *dx + *dy * *dy + *dz * *dz;
    return *r2 < h2;
}

/* Algorithm 2 as printed: sequential, neighbours moved at once, particle i's
 * own displacement applied after its neighbour loop; fixed random order. */
static void relax_sequential(fs_world *w, step_ctx *c) {
    fs_particles *p = &w->p;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const float h2 = c->h2, inv_h = c->inv_h;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int o = 0; o < w->cap; o++) {
        int i = w->slot_index[c->s->seq_order[o]];
        if (i < 0) continue;
        r.cell = -1;
        fs__ranges_of(w, w->cell[i], &r);
        float rho = 0, rhon = 0;
        for (int k = 0; k < r.n; k++)
            for (int j = r.b[k]; j < r.e[k]; j++) {
                float dx, dy, dz, r2;
                if (!near_pair(X, Y, Z, i, j, h2, &dx, &dy, &dz, &r2)) continue;
                float q = 1.0f - sqrtf(r2) * inv_h;
                rho += q * q, rhon += q * q * q;
            }
        wall_density(w, X[i], Y[i], Z[i], &rho, &rhon);
        int m = p->mat[i];
        float P = c->m.k[m] * (rho - c->m.rho0[m]), PN = c->m.kn[m] * rhon;
        float ax = 0, ay = 0, az = 0;
        for (int k = 0; k < r.n; k++)
            for (int j = r.b[k]; j < r.e[k]; j++) {
                float dx, dy, dz, r2;
                if (!near_pair(X, Y, Z, i, j, h2, &dx, &dy, &dz, &r2)) continue;
                float rr = sqrtf(r2);
                if (rr < 1e-9f) {
                    fs__coincident_dir(p, i, j, 21, &dx, &dy, &dz);
                } else {
                    float inv = 1.0f / rr;
                    dx *= inv, dy *= inv, dz *= inv;
                }
                float q = 1.0f - rr * inv_h;
                float D = P * q + PN * q * q;
                X[j] += 0.5f * D * dx, Y[j] += 0.5f * D * dy, Z[j] += 0.5f * D * dz;
                ax -= 0.5f * D * dx, ay -= 0.5f * D * dy, az -= 0.5f * D * dz;
            }
        wall_push(w, X[i], Y[i], Z[i], P, PN, &ax, &ay, &az);
        X[i] += ax, Y[i] += ay, Z[i] += az;
    }
}

/* ---- Algorithm 2 as a coloured Gauss-Seidel sweep (FS_RELAX_COLORED) -----
 * The grid's cells (h/2) are grouped in blocks of 4 x 4 x 4 cells (2h), and
 * the blocks in eight colours by the parity of their block coordinates.  A
 * particle's constraint reads and moves only the particles of its neighbour
 * list (within h at this step's list build), so two particles in different
 * blocks of one colour (a whole block, 2h, apart) touch disjoint sets: the
 * blocks of a colour run in parallel, each visiting its particles in index
 * order, and the result is the same for any thread count.
 *
 * Per particle, Algorithm 2 lines 2-21 on the fixed list, with one change to
 * line 11: a compressed particle (rho > rho0) takes the pressure that makes
 * its displacements the Newton step of the constraint C_i = rho_i - rho0,
 * linearised, every particle of unit mass: the position-based fluids step
 * (Macklin & Mueller 2013, "Position Based Fluids", Eq. 9-11, with Eq. 1's
 * kernel).  Eq. 6's displacement of j is D/2 = P (1-q)/2 r^_ij =
 * -(h/4) P grad_j rho_i and line 20's of i is -(h/4) P grad_i rho_i, so
 * Algorithm 2 is a gradient step on C_i of length (h/4) P; with
 * grad_j rho_i = -(2/h)(1-q) r^_ij the Newton step C_i / sum_k |grad_k C_i|^2 is
 *     P_i = omega h (rho_i - rho0) / (sum_j (1-q)^2 + |sum_j (1-q) r^_ij|^2).
 * One sweep is then successive over-relaxation on the linearised system
 * A lambda = C with A = J J^T symmetric positive semi-definite, which
 * converges for any 0 < omega < 2 (Ostrowski-Reich); omega is the material's
 * stiffness over its preset 0.01, kept at most COLOR_OMEGA_MAX.  The
 * stretched side (rho < rho0: Clavet's cohesion and surface tension) and the
 * near-pressure (Eq. 5) keep the paper's per-step k and k_near, split over
 * the sweeps, so a material's cohesion does not depend on the sweep count.
 * The box's walls are position constraints inside the sweep (a particle moved
 * past one is put back on it at once, as position-based dynamics projects
 * collisions in its loop).  docs/clavet-notes.md keeps the measurements. */
#define COLOR_OMEGA_MAX 1.5f
#ifndef COLOR_P_MAX
#define COLOR_P_MAX 0.5f
#endif
#define COLOR_BLOCK 4 /* cells (h/2) per block side: 2h */

/* One pass over the blocks of sb cells in the eight colours (run_colors):
 * the colour running, and how many of its blocks lie along x and y. */
typedef struct color_pass {
    int sb;        /* block side in cells */
    bool backward; /* odd sweeps visit the colours and particles in reverse */
    int color, nbx, nby;
} color_pass;

/* Runs task over the blocks of each colour in turn (in reverse when
 * cp->backward), the blocks of a colour in parallel; ctx holds cp. */
static void run_colors(fs_world *w, color_pass *cp, fs_task_fn *task, void *ctx) {
    const int NBX = (w->gx + cp->sb - 1) / cp->sb, NBY = (w->gy + cp->sb - 1) / cp->sb,
              NBZ = (w->gz + cp->sb - 1) / cp->sb;
    for (int k = 0; k < 8; k++) {
        const int color = cp->backward ? 7 - k : k;
        const int ox = color & 1, oy = (color >> 1) & 1, oz = (color >> 2) & 1;
        cp->color = color;
        cp->nbx = (NBX - ox + 1) / 2, cp->nby = (NBY - oy + 1) / 2;
        const int count = cp->nbx * cp->nby * ((NBZ - oz + 1) / 2);
        /* blocks hold many particles each: parallel from two blocks on (fs__run
         * waits for 512 items) */
        if (count > 1 && w->def.parallel_for && w->def.worker_count > 1)
            w->def.parallel_for(task, ctx, count, w->def.task_user);
        else if (count > 0)
            task(0, count, 0, ctx);
    }
}

/* Block coordinates of the t-th block of the running colour. */
static inline void block_at(const color_pass *cp, int t, int *bx, int *by, int *bz) {
    *bx = 2 * (t % cp->nbx) + (cp->color & 1);
    *by = 2 * ((t / cp->nbx) % cp->nby) + ((cp->color >> 1) & 1);
    *bz = 2 * (t / (cp->nbx * cp->nby)) + ((cp->color >> 2) & 1);
}

typedef struct gs_ctx {
    step_ctx *c;
    color_pass cp;
    int nbx_all, nby_all, nbz_all; /* blocks along each axis, all colours */
    float inv_iters;
    float omega[FS_MAX_MATERIALS];
} gs_ctx;

/* Two independent selects, which compile to maxss and minss (no branch). */
static inline float clampf(float v, float a, float b) {
    v = a > v ? a : v;
    return v > b ? b : v;
}

/* Walls as mirror images for the coloured sweeps (an extension; the paper
 * has only collisions), after the ghost particles of SPH (Libersky et al.
 * 1993; Randles & Libersky 1996).  The box's faces lie a particle radius
 * (off/2) beyond the planes lo, hi that hold the particles' centres.  A
 * particle at distance D from such a plane sees, across the face, its own
 * image (2D + off away) and the image of every neighbour j (D + off + D_j
 * away along the normal, the same offset along the face): a block laid out
 * on the wall continues past it as a lattice, and a particle on the wall has
 * a whole neighbourhood, half of it mirrored.  One face at a time: no second
 * images at edges and corners.  The single self-image of wall_density left
 * the wall layer half a neighbourhood short: Clavet's cohesion packed it 1.6
 * times as dense as a lattice layer, and the dam break's column drained too
 * slowly (27% over Martin & Moyce's residual height; with the images and
 * XSPH 8.4%; docs/clavet-notes.md, "Walls").
 *
 * Adds the images' (1-q)^2 and (1-q)^3 to rho and rhon, and sums q u and
 * q^2 u (u from i to the image) in g1 and g2. */
static inline void wall_images(const float *restrict U[3], const float *restrict Q, int n, float xi, float yi, float zi,
                               fs_vec3 lo, fs_vec3 hi, float h, float inv_h, float off, float *rho, float *rhon,
                               float g1[3], float g2[3]) {
    const float p[3] = {xi, yi, zi}, L[3] = {lo.x, lo.y, lo.z}, H[3] = {hi.x, hi.y, hi.z}, h2 = h * h;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            /* D: i's distance to the plane of centres; the face lies off/2
             * beyond it, so i's image is 2D + off away and a neighbour j's
             * D + off + D_j */
            const float D = side ? H[a] - p[a] : p[a] - L[a];
            if (D + off >= h) continue;
            /* s: the images lie towards -s (the face's inward normal is s) */
            const float s = side ? -1.0f : 1.0f;
            const float *UN = U[a], *UT = U[(a + 1) % 3], *UU = U[(a + 2) % 3];
            float r_sum = 0, rn_sum = 0, gn = 0, gt = 0, gu = 0, hn = 0, ht = 0, hu = 0;
            if (D + D + off < h) { /* i's own image */
                const float q = 1.0f - (D + D + off) * inv_h;
                r_sum += q * q, rn_sum += q * q * q, gn -= q, hn -= q * q;
            }
            /* from the pair's unit vector u and q (the sweep's scratch): the
             * neighbour's offset r u, r = h (1 - q); its image keeps the
             * tangential part and has the normal part D + off + D_j, with
             * D_j = D + s r u_a; a pair out of range (q = 0) has its image
             * farther still */
#pragma omp simd reduction(+ : r_sum, rn_sum, gn, gt, gu, hn, ht, hu)
            for (int k = 0; k < n; k++) {
                const float r = h * (1.0f - Q[k]);
                const float dn = D + D + off + s * r * UN[k], dt = r * UT[k], du = r * UU[k];
                const float r2 = dn * dn + dt * dt + du * du;
                const float ri = sqrtf(r2);
                const bool in = Q[k] > 0.0f && r2 < h2;
                const float q = in ? 1.0f - ri * inv_h : 0.0f, inv = in ? 1.0f / ri : 0.0f;
                r_sum += q * q, rn_sum += q * q * q;
                gn -= q * dn * inv, gt += q * dt * inv, gu += q * du * inv;
                hn -= q * q * dn * inv, ht += q * q * dt * inv, hu += q * q * du * inv;
            }
            *rho += r_sum, *rhon += rn_sum;
            g1[a] += s * gn, g1[(a + 1) % 3] += gt, g1[(a + 2) % 3] += gu;
            g2[a] += s * hn, g2[(a + 1) % 3] += ht, g2[(a + 2) % 3] += hu;
        }
}

/* Algorithm 2 lines 2-21 for particle i over its list (sq, su*: scratch). */
static inline __attribute__((always_inline)) void gs_particle(fs_world *w, const gs_ctx *g, int i, bool walls,
                                                              float *restrict sux, float *restrict suy,
                                                              float *restrict suz, float *restrict sq) {
    const step_ctx *c = g->c;
    fs_particles *p = &w->p;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const int32_t *J = w->nb + c->s->nb_off[i];
    const int n = w->nb_n[i];
    const float xi = X[i], yi = Y[i], zi = Z[i], inv_h = c->inv_h, h2 = c->h2;
    const fs_vec3 lo = w->lo, hi = w->hi;
    float rho = 0, rhon = 0, gx = 0, gy = 0, gz = 0;
    int coincident = 0;
    /* lines 4-9 (Eq. 1, 4), and sum_j (1-q) r^_ij for the Newton step; a
     * pair that left h during this step's sweeps drops out (q = 0) */
    const int n8 = pad8(n);
#pragma omp simd reduction(+ : rho, rhon, gx, gy, gz, coincident)
    for (int k = 0; k < n8; k++) {
        const int j = J[k];
        const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
        const float r2 = dx * dx + dy * dy + dz * dz;
        const float rr = sqrtf(r2);
        const bool real = k < n; /* the padding is i itself: nothing */
        const float q = real && r2 < h2 ? 1.0f - rr * inv_h : 0.0f;
        const float inv = rr >= 1e-9f ? 1.0f / rr : 0.0f;
        coincident += real && rr < 1e-9f;
        const float ux = dx * inv, uy = dy * inv, uz = dz * inv;
        sux[k] = ux, suy[k] = uy, suz[k] = uz, sq[k] = q;
        rho += q * q, rhon += q * q * q;
        gx += q * ux, gy += q * uy, gz += q * uz;
    }
    if (coincident) /* rare: pairs at one point act along a direction drawn from their ids */
        for (int k = 0; k < n; k++) {
            if (sux[k] != 0.0f || suy[k] != 0.0f || suz[k] != 0.0f || sq[k] <= 0.0f) continue;
            fs__coincident_dir(p, i, J[k], 21, &sux[k], &suy[k], &suz[k]);
            gx += sq[k] * sux[k], gy += sq[k] * suy[k], gz += sq[k] * suz[k];
        }
    const float rho_pairs = rho;
    float g1[3] = {0, 0, 0}, g2[3] = {0, 0, 0};
    if (walls) {
        const float *Us[3] = {sux, suy, suz};
        wall_images(Us, sq, n8, xi, yi, zi, lo, hi, c->h, inv_h, 2.0f * w->dom.particle_radius, &rho, &rhon, g1, g2);
        gx += g1[0], gy += g1[1], gz += g1[2];
    }
    /* lines 11-12 */
    const int m = p->mat[i];
    const float C = rho - c->m.rho0[m];
    float P = C > 0.0f ? g->omega[m] * c->h * C / (rho_pairs + gx * gx + gy * gy + gz * gz + 1e-3f)
                       : g->inv_iters * c->m.k[m] * C;
    P = P < COLOR_P_MAX * c->h ? P : COLOR_P_MAX * c->h;
    const float PN = g->inv_iters * c->m.kn[m] * rhon;
    /* lines 14-21: the neighbours move at once, i after its loop */
    float ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
    for (int k = 0; k < n8; k++) {
        const float q = sq[k];
        const float D = 0.5f * (P * q + PN * q * q);
        const float ex = D * sux[k], ey = D * suy[k], ez = D * suz[k];
        sux[k] = ex, suy[k] = ey, suz[k] = ez;
        ax -= ex, ay -= ey, az -= ez;
    }
    for (int k = 0; k < n; k++) {
        const int j = J[k];
        if (walls) {
            X[j] = clampf(X[j] + sux[k], lo.x, hi.x);
            Y[j] = clampf(Y[j] + suy[k], lo.y, hi.y);
            Z[j] = clampf(Z[j] + suz[k], lo.z, hi.z);
        } else {
            X[j] += sux[k], Y[j] += suy[k], Z[j] += suz[k];
        }
    }
    /* the images' share: half of each pair's displacement, as a real
     * neighbour's visit gives i (the other half moves the neighbour when it
     * meets i's image); only repulsion, so walls do not glue */
    {
        const float Pg = P > 0.0f ? 0.5f * P : 0.0f, PNg = 0.5f * PN;
        ax -= Pg * g1[0] + PNg * g2[0], ay -= Pg * g1[1] + PNg * g2[1], az -= Pg * g1[2] + PNg * g2[2];
    }
    X[i] = clampf(xi + ax, lo.x, hi.x), Y[i] = clampf(yi + ay, lo.y, hi.y), Z[i] = clampf(zi + az, lo.z, hi.z);
}

/* Asks for the lines of particle i's list a few particles ahead
 * of the sweep: a sweep visits the particles block by block, not in the
 * lists' order, and the first load of a list took a quarter of the sweep's
 * samples without it. */
#define GS_AHEAD 2
static inline void prefetch_nb(const fs_world *w, int i) {
    const clavet_state *st = w->solver_state;
    const char *l = (const char *)(w->nb + st->nb_off[i]);
    for (int k = 0; k < 4 * w->nb_n[i]; k += 64) __builtin_prefetch(l + k);
}

/* gs_particle compiled once for each case, so that every particle is
 * relaxed by the same machine code wherever gs_task visits it: inlined at
 * several call sites, the vectoriser may sum a loop in another order at
 * each, and the result would depend on which site (here: which of the two
 * interleaved blocks) a thread's split put the particle in. */
FS_SIMD_CLONES static __attribute__((noinline)) void gs_particle_walls(fs_world *w, const gs_ctx *g, int i,
                                                                       float (*s)[FS_NB_MAX]) {
    gs_particle(w, g, i, true, s[0], s[1], s[2], s[3]);
}
FS_SIMD_CLONES static __attribute__((noinline)) void gs_particle_inner(fs_world *w, const gs_ctx *g, int i,
                                                                       float (*s)[FS_NB_MAX]) {
    gs_particle(w, g, i, false, s[0], s[1], s[2], s[3]);
}

/* The particles of the running colour's t-th block (of cp->sb cells a side)
 * in the order a sweep visits them: rows of cells in turn, each row's
 * particles reversed when backward.  Into o; returns how many. */
static int block_order(const fs_world *w, const color_pass *cp, int t, int32_t *o) {
    const int SB = cp->sb;
    int bx, by, bz, m = 0;
    block_at(cp, t, &bx, &by, &bz);
    const int x0 = bx * SB, x1 = x0 + SB < w->gx ? x0 + SB : w->gx;
    for (int cz = bz * SB; cz < bz * SB + SB && cz < w->gz; cz++)
        for (int cy = by * SB; cy < by * SB + SB && cy < w->gy; cy++) {
            const int row = (cz * w->gy + cy) * w->gx;
            const int i0 = w->cell_start[row + x0], i1 = w->cell_start[row + x1];
            if (cp->backward)
                for (int i = i1 - 1; i >= i0; i--) o[m++] = i;
            else
                for (int i = i0; i < i1; i++) o[m++] = i;
        }
    return m;
}

/* Whether the running colour's t-th block lies within a block (2h) of a face;
 * otherwise its particles' neighbours lie over h inside, and no share, under
 * h, takes one past a wall. */
static bool block_walls(const gs_ctx *g, int t) {
    int bx, by, bz;
    block_at(&g->cp, t, &bx, &by, &bz);
    return bx < 1 || by < 1 || bz < 1 || bx + 2 >= g->nbx_all || by + 2 >= g->nby_all || bz + 2 >= g->nbz_all;
}

/* Two blocks of one colour at a time, a particle of each in turn.  Within a
 * block each particle reads the positions the one before it wrote (the
 * Gauss-Seidel chain: the gather's loads wait for the last scatter's
 * stores); the two blocks share no particle, so the core runs one block's
 * particle while the other's stores drain.  The order within each block is
 * unchanged, and so are the results, bit for bit. */
static void gs_task(int b, int e, int worker, void *vctx) {
    const gs_ctx *g = vctx;
    fs_world *w = g->c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    float sa[4][FS_NB_MAX] __attribute__((aligned(32))), sb[4][FS_NB_MAX] __attribute__((aligned(32)));
    for (int t = b; t < e; t += 2) {
        const bool wa = block_walls(g, t), wb = t + 1 < e && block_walls(g, t + 1);
        const int32_t *A = sc.j;
        const int na = block_order(w, &g->cp, t, sc.j);
        const int32_t *B = sc.j + na;
        const int nb = t + 1 < e ? block_order(w, &g->cp, t + 1, sc.j + na) : 0;
        for (int k = 0; k < na || k < nb; k++) {
            if (k < na) {
                if (k + GS_AHEAD < na) prefetch_nb(w, A[k + GS_AHEAD]);
                (wa ? gs_particle_walls : gs_particle_inner)(w, g, A[k], sa);
            }
            if (k < nb) {
                if (k + GS_AHEAD < nb) prefetch_nb(w, B[k + GS_AHEAD]);
                (wb ? gs_particle_walls : gs_particle_inner)(w, g, B[k], sb);
            }
        }
    }
}

/* One sweep: the eight colours in turn; odd sweeps run backwards (colours and
 * particles), so two sweeps are a symmetric Gauss-Seidel pass. */
static void relax_colored(fs_world *w, step_ctx *c, int sweep) {
    gs_ctx g = {.c = c,
                .cp = {.sb = COLOR_BLOCK, .backward = sweep & 1},
                .inv_iters = 1.0f / (float)w->def.clavet.relax_iterations};
    for (int m = 0; m < w->nmat; m++) {
        float o = w->mat[m].p[FS_P_STIFFNESS] / 0.01f;
        g.omega[m] = o < COLOR_OMEGA_MAX ? o : COLOR_OMEGA_MAX;
    }
    g.nbx_all = (w->gx + COLOR_BLOCK - 1) / COLOR_BLOCK, g.nby_all = (w->gy + COLOR_BLOCK - 1) / COLOR_BLOCK,
    g.nbz_all = (w->gz + COLOR_BLOCK - 1) / COLOR_BLOCK;
    run_colors(w, &g.cp, gs_task, &g);
}

/* ---- elastic springs as distance constraints inside the sweeps ----------
 * Algorithm 3 moves both ends of a spring by dt^2 k_spring (1 - L/h)(L - r)/2
 * once per step, a Jacobi pass; it cannot be made much stiffer (the sum over
 * a particle's ~32 springs overshoots), and a jelly that soft cannot hold
 * its own weight: an 8-layer block slumps to 45% of its height at the
 * default tick.  With FS_RELAX_COLORED the springs of materials that never
 * yield (no Eq. 8 plasticity, fully solid: jelly, ice) are instead position
 * constraints projected in every sweep, Gauss-Seidel, as position-based
 * dynamics projects distance constraints (Mueller, Heidelberger, Hennix,
 * Ratcliff 2007, "Position based dynamics", Sec. 3.3, Eq. 10-11: both ends,
 * of unit mass, move by (r - L)/2 along r^_ij, times a stiffness k in
 * [0, 1]).  k keeps Algorithm 3's law, k = SPRING_GAIN k_spring (1 - L/h),
 * at most 1, and is spread over the sweeps as Sec. 3.3 does (1 - (1 - k)^(1/n)
 * per sweep), so the jelly is the same at any sweep count.
 *
 * Plastic springs (goo, clay, a melting jelly) keep Algorithm 3's pass: Eq.
 * 8 yields on the stretch the springs leave, and projected springs leave so
 * little that clay squeezed by a push springs back (it came back to 101% of
 * its width; docs/clavet-notes.md).
 *
 * Parallel form: blocks of SB cells in eight colours, SB chosen each step so
 * that a block side exceeds twice the longest elastic spring (the break
 * length, measured at the predicted positions the grid was built on): the
 * particles one block's springs move lie within one break length of it, so
 * two blocks of one colour (a block apart) move disjoint sets.  Each spring
 * is projected once per sweep, from its end with the lower slot, and moves
 * both ends by equal and opposite amounts along r_ij (linear and angular
 * momentum are kept, except where a wall clamps one end, as in the density
 * sweep).  The result does not depend on the thread count. */
#ifndef SPRING_GAIN
#define SPRING_GAIN 16.0f
#endif

typedef struct spring_sweep_ctx {
    step_ctx *c;
    color_pass cp;
    float gain, inv_iters;
} spring_sweep_ctx;

static inline void spring_project(fs_world *w, const spring_sweep_ctx *g, int i) {
    const step_ctx *c = g->c;
    fs_particles *p = &w->p;
    const int s = p->slot[i], n = w->spr_n[s];
    if (n == 0) return;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const int32_t *J = w->spr_j + (size_t)s * w->K;
    const float *L = w->spr_L + (size_t)s * w->K;
    const fs_vec3 lo = w->lo, hi = w->hi;
    const float ksi = c->m.ks[p->mat[i]];
    for (int k = 0; k < n; k++) {
        if (J[k] < s) continue; /* once per pair: from the lower slot */
        const int j = w->slot_index[J[k]];
        if (!spring_elastic(c, w, i, j)) continue; /* Algorithm 3 moved it before the sweeps */
        const float dx = X[j] - X[i], dy = Y[j] - Y[i], dz = Z[j] - Z[i];
        const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
        if (rr < 1e-9f) continue; /* no direction; the density constraint separates them */
        float f = g->gain * 0.5f * (ksi + c->m.ks[p->mat[j]]) * (1.0f - L[k] * c->inv_h);
        /* the stiffness per sweep that compounds to f over the step's sweeps
         * (Mueller et al. 2007, Sec. 3.3): the same jelly at any sweep count */
        f = f < 1.0f ? 1.0f - powf(1.0f - f, g->inv_iters) : 1.0f;
        const float D = 0.5f * f * (rr - L[k]) / rr;
        X[i] = clampf(X[i] + D * dx, lo.x, hi.x), Y[i] = clampf(Y[i] + D * dy, lo.y, hi.y);
        Z[i] = clampf(Z[i] + D * dz, lo.z, hi.z);
        X[j] = clampf(X[j] - D * dx, lo.x, hi.x), Y[j] = clampf(Y[j] - D * dy, lo.y, hi.y);
        Z[j] = clampf(Z[j] - D * dz, lo.z, hi.z);
    }
}

static void spring_sweep_task(int b, int e, int worker, void *vctx) {
    const spring_sweep_ctx *g = vctx;
    fs_world *w = g->c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    for (int t = b; t < e; t++) {
        const int m = block_order(w, &g->cp, t, sc.j);
        for (int k = 0; k < m; k++) spring_project(w, g, sc.j[k]);
    }
}

/* One Gauss-Seidel sweep over every spring; odd sweeps run backwards. */
static void springs_colored(fs_world *w, step_ctx *c, int sweep) {
    float brk = 0;
    for (int m = 0; m < w->nmat; m++) /* the longest a spring between two elastic materials gets */
        if (c->m.alpha[m] == 0.0f && c->m.brk[m] > brk) brk = c->m.brk[m];
    spring_sweep_ctx g = {.c = c,
                          .cp = {.sb = (int)(2.0f * brk * w->inv_cs) + 1, .backward = sweep & 1},
                          .gain = SPRING_GAIN,
                          .inv_iters = 1.0f / (float)w->def.clavet.relax_iterations};
    run_colors(w, &g.cp, spring_sweep_task, &g);
}

/* ---- collisions with the box walls (Eq. 9-11), new velocities ---------- */
static void collide_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    const float dt = c->dt, inv_dt = 1.0f / dt, vmax = w->max_speed;
    const bool on_wall = c->colored;
    const fs_vec3 lo = w->lo, hi = w->hi;
    const fs_vec3 mid = {0.5f * (lo.x + hi.x), 0.5f * (lo.y + hi.y), 0.5f * (lo.z + hi.z)};
    uint64_t bad = 0, clamped = 0;
    for (int i = b; i < e; i++) {
        float x[3] = {p->x[i], p->y[i], p->z[i]};
        const float xp[3] = {p->px[i], p->py[i], p->pz[i]};
        const float l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
        const float mu = c->m.mu[p->mat[i]];
        for (int a = 0; a < 3; a++) {
            float nrm;
            /* on the wall counts when the coloured sweeps put particles back on it */
            if (x[a] < l[a] || (on_wall && x[a] == l[a]))
                nrm = 1.0f;
            else if (x[a] > u[a] || (on_wall && x[a] == u[a]))
                nrm = -1.0f;
            else
                continue;
            /* Eq. 9-10: velocity relative to the static wall, split */
            float v[3] = {(x[0] - xp[0]) * inv_dt, (x[1] - xp[1]) * inv_dt, (x[2] - xp[2]) * inv_dt};
            float vn = v[a] * nrm; /* < 0: moving into the wall; 0: resting on it */
            if (vn < 0.0f || (vn == 0.0f && on_wall)) {
                /* Eq. 11: cancel the normal part, remove mu of the tangential */
                float I[3] = {mu * v[0], mu * v[1], mu * v[2]};
                I[a] = v[a];
                for (int q = 0; q < 3; q++) x[q] -= I[q] * dt;
            }
            /* Alg. 6 line 15: extract what is still inside the wall */
            x[a] = x[a] < l[a] ? l[a] : (x[a] > u[a] ? u[a] : x[a]);
        }
        /* Alg. 1 lines 18-20 */
        float vx = (x[0] - xp[0]) * inv_dt, vy = (x[1] - xp[1]) * inv_dt, vz = (x[2] - xp[2]) * inv_dt;
        float sp2 = vx * vx + vy * vy + vz * vz;
        if (!(isfinite(sp2) && isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]))) {
            /* repair: back to the previous position (or the box centre), at rest */
            bool pf = isfinite(xp[0]) && isfinite(xp[1]) && isfinite(xp[2]);
            x[0] = pf ? xp[0] : mid.x, x[1] = pf ? xp[1] : mid.y, x[2] = pf ? xp[2] : mid.z;
            vx = vy = vz = 0;
            bad++;
        } else if (sp2 > vmax * vmax) {
            float s = vmax / sqrtf(sp2);
            vx *= s, vy *= s, vz *= s;
            x[0] = xp[0] + vx * dt, x[1] = xp[1] + vy * dt, x[2] = xp[2] + vz * dt;
        }
        for (int a = 0; a < 3; a++) {
            if (x[a] < l[a] || x[a] > u[a]) {
                x[a] = x[a] < l[a] ? l[a] : u[a];
                clamped++;
            }
        }
        p->x[i] = x[0], p->y[i] = x[1], p->z[i] = x[2];
        p->vx[i] = vx, p->vy[i] = vy, p->vz[i] = vz;
        float T = fs__heat_update(w, p->temp[i], c->m.heat, w->dT[i], x[0], x[1], x[2], dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    c->nonfinite[worker] += bad;
    c->clamped[worker] += clamped;
}

/* The materials present (c->present), and two tests that let the pair passes
 * skip work without changing a bit:
 * - all particles at one temperature: Eq. 21's exchanges are all zero, and
 *   T + dt * 0 = T, so the heat pass is skipped (c->m.heat cleared);
 * - the materials present share sigma, beta and the XSPH weight: the pair
 *   passes use i's constants (0.5 (a + a) = a) instead of gathering j's. */
static void step_shortcuts(const fs_world *w, step_ctx *c) {
    const fs_particles *p = &w->p;
    bool *present = c->present, iso = true;
    const float T0 = w->n ? p->temp[0] : 0.0f;
    for (int i = 0; i < w->n; i++) present[p->mat[i]] = true, iso &= p->temp[i] == T0;
    if (iso) c->m.heat = false;
    c->uni = true;
    int first = -1;
    for (int m = 0; m < w->nmat; m++) {
        if (!present[m]) continue;
        if (first < 0) first = m;
        c->uni &=
            c->m.sigma[m] == c->m.sigma[first] && c->m.beta[m] == c->m.beta[first] && c->m.xsph[m] == c->m.xsph[first];
    }
}

/* ---- Algorithm 1 -------------------------------------------------------- */
static void clavet_step(fs_world *w) {
    double t0 = fs__now_ms(), t;
    step_ctx c;
    memset(&c, 0, sizeof c);
    c.w = w;
    c.s = w->solver_state;
    mconst_init(w, &c.m);
    c.dt = w->dt;
    c.h = w->h;
    c.h2 = w->h * w->h;
    c.inv_h = w->inv_h;
    c.g = w->dom.gravity;
    double *ph = w->st.phase_ms;
    /* the coloured sweeps build one grid and one set of lists a step, at the
     * predicted positions, and read Alg. 5's pairs from them
     * (list_task); the other forms follow Algorithm 1's order */
    const bool lists_first = w->def.clavet.relax == FS_RELAX_COLORED;
    c.colored = lists_first; /* until a list overflows (below) */
    fs__step_begin(w, !lists_first);
    step_shortcuts(w, &c);

    /* lines 1-5, then 6-10 */
    t = fs__now_ms();
    fs__run(w, visc_params_task, &c, w->n);
    if (!lists_first) {
        fs__run(w, viscosity_task, &c, w->n);
        swap_velocities(w);
    }
    fs__run(w, predict_task, &c, w->n);
    ph[FS_PHASE_VISCOSITY] += fs__now_ms() - t;

    fs__grid_build_timed(w);

    /* lines 12, 15 */
    t = fs__now_ms();
    if (c.m.any_springs || c.m.any_phase) springs_stage(w, &c);
    ph[FS_PHASE_SPRINGS] += fs__now_ms() - t;

    /* line 16 */
    t = fs__now_ms();
    bool colored = lists_first;
    if (colored) {
        /* the neighbour lists of every sweep, Alg. 5's impulses and Eq. 21's
         * heat rates at the predicted positions; a particle with more than
         * FS_NB_MAX neighbours has no list, and the step falls back to the
         * Jacobi sweeps, which scan (timed as the relaxation) */
        fs__run_all(w, list_task, &c, (w->n + LIST_CHUNK - 1) / LIST_CHUNK);
        fs__run(w, visc_apply_task, &c, w->n);
        swap_velocities(w);
        for (int i = 0; i < w->n && colored; i++) colored = w->nb_n[i] >= 0;
        w->st.relax_fallbacks += !colored;
        if (!colored && w->springs) { /* springs_stage left the elastic springs to the sweeps */
            c.spr_pass = SPR_ELASTIC;
            fs__run(w, spring_displace_task, &c, w->n);
            swap_positions(w);
        }
        c.colored = colored;
    }
    for (int it = 0; it < w->def.clavet.relax_iterations; it++) {
        if (colored) {
            relax_colored(w, &c, it);
            if (w->springs) springs_colored(w, &c, it);
        } else if (w->def.clavet.relax == FS_RELAX_SEQUENTIAL) {
            if (it == 0 && c.m.heat) fs__run(w, density_task, &c, w->n); /* Eq. 21 only */
            relax_sequential(w, &c);
        } else {
            fs__run(w, density_task, &c, w->n);
            fs__run(w, displace_task, &c, w->n);
            swap_positions(w);
        }
    }
    ph[FS_PHASE_RELAX] += fs__now_ms() - t;

    /* line 17: bodies (Algorithm 6), then the walls; lines 18-20 */
    t = fs__now_ms();
    if (w->nbodies) {
        float mu[FS_MAX_MATERIALS], sd[FS_MAX_MATERIALS], sk[FS_MAX_MATERIALS], ms[FS_MAX_MATERIALS];
        float vol = w->dom.spacing * w->dom.spacing * w->dom.spacing;
        for (int m = 0; m < w->nmat; m++) {
            mu[m] = w->mat[m].p[FS_P_FRICTION];
            sd[m] = w->mat[m].p[FS_P_STICK_DISTANCE] * w->h;
            sk[m] = w->mat[m].p[FS_P_STICK_STRENGTH];
            ms[m] = w->mat[m].p[FS_P_MASS_DENSITY] * vol;
        }
        fs__bodies_step(w, c.dt, w->dom.particle_radius, mu, sd, sk, ms, fs__run);
    }
    fs__run(w, collide_task, &c, w->n);
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += c.nonfinite[k];
        w->st.escapes_clamped += c.clamped[k];
        w->st.springs_refused += c.s->spr_refused_worker[k];
        c.s->spr_refused_worker[k] = 0;
    }
    ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;

    w->st.sim_time += w->dt;
    w->st.step_ms = fs__now_ms() - t0;
}

const fs_solver_ops fs__clavet_ops = {
    .name = "clavet",
    .doc = "Clavet, Beaudoin, Poulin 2005: double density relaxation, viscoelastic springs, plasticity",
    .attach = clavet_attach,
    .detach = clavet_detach,
    .step = clavet_step,
};
