/* unified.c - Solenthaler, Schläfli & Pajarola 2007, "A unified particle
 * model for fluid-solid interactions", in 3D: one SPH particle set in which
 * every particle is liquid, elastic or part of a rigid body according to its
 * material and temperature.
 *
 * Per step of w->dt (sub-cycled, see "Time step"):
 *   emit / drain, grid                       (commands; Sec. 7.1 grid of solver.c)
 *   phase state from temperature             ("Temperature Effects", Fig. 5)
 *   body neighbours: melt, fracture, merge   ("Phase Changes of Elastic and Rigid Bodies",
 *                                             "Plasticity and Fracture"), body volume Eq. 11
 *   rigid bodies: connected components of the rigid particles' body neighbours
 *   n internal steps of dt / n, each:
 *     grid; density Eq. 4, pressure Eq. 9, heat Eq. 21, strain and stress Eq. 14-15 (+ plasticity)
 *     forces: pressure Eq. 7, viscosity Eq. 8, elasticity Eq. 12 + 16, gravity, walls
 *     leap-frog (kick-drift) integration of Eq. 6; rigid bodies Eq. 18-20
 *     walls (clamp), repair, temperature (Eq. 21 + heaters, shared with solver.c)
 *   shape bodies (bodies.c, Algorithm 6 of Clavet 2005) once per step
 *
 * Kernels.  Density (Eq. 4) and pressure gradient (Eq. 7): the spiky kernel
 * (h - r)^3 of Müller 2003 (the paper's ref. 10) for both, so that the
 * pressure force is the gradient of the density (with poly6 for the density
 * and spiky for the force, as ref. 10 pairs them, a still pool gained energy
 * at this resolution).  Viscosity (Eq. 8) and heat (Eq. 21): the Laplacian of
 * ref. 10's viscosity kernel, proportional to (h - r).  Elastic forces: the
 * cosine kernel of Eq. 17.  Each is normalised on the rest lattice (spacing
 * s, h = 2.1 s) rather than over the continuum, as solver.c does for Eq. 21
 * (w->lap_norm): a full lattice of a material has exactly its rest density,
 * the Laplacian of a quadratic field is exact, and Eq. 14's displacement
 * gradient of a linear field is exact.  (The paper's constant c of Eq. 17 is
 * the continuum normalisation; its lattice counterpart is computed here.)
 * So material parameters are physical (kg/m^3, m^2/s, Pa).
 *
 * Walls.  Each face of the box is backed by boundary particles at rest on the
 * lattice behind it (tables over the distance to the face), which add to a
 * particle's density and push it off with its own pressure; plus a stiff
 * spring-damper beyond the particle radius and a final clamp (counted in
 * escapes_clamped).  The boundary particles of two faces overlap behind an
 * edge of the box (counted twice there).

 * Masses.  A particle's mass is its material's FS_P_MASS_DENSITY times s^3
 * and its rest density (rho-hat of Eq. 9) is that mass density: fluids of
 * different densities layer and mix (the multi-fluid model of the paper's
 * ref. 12).
 *
 * Equation of state.  p = k (rho - rho-hat) (Eq. 9) with k = c^2, c = SOUND
 * (25 m/s): a pool 1 m deep is compressed by g H / c^2 = 1.6%, flows at
 * 5 m/s by (v/c)^2 = 4%.  Negative pressures are clamped to 0 (no tensile
 * instability at free surfaces; cohesion of solids is their elasticity).
 *
 * Time step.  Explicit, so each step of w->dt is split into n internal steps
 * of dt / n with dt / n <= CFL h / (c + |v|max) (sound), <= CFL h /
 * sqrt(M/rho) (elastic P-waves, M = E (1 - nu) / ((1 + nu)(1 - 2 nu))), and
 * <= VISC_LIM h^2 / nu (viscous diffusion).  n is capped at MAX_SUB; beyond,
 * stiffness and viscosity are capped to what that step carries, so no
 * parameter value makes the step unstable.
 *
 * Phase (Fig. 5).  A material with FS_P_PHASE_CHANGE has solidity s = 1 at or
 * below FS_P_SOLID_POINT, 0 at or above FS_P_MELT_POINT, linear between.
 * s = 0: liquid, kinematic viscosity FS_P_KIN_VISCOSITY.  0 < s < 1: elastic
 * with E = s FS_P_YOUNG and viscosity interpolated towards
 * FS_P_SOLID_VISCOSITY.  s = 1: elastic with the full E, or, when FS_P_RIGID,
 * part of a rigid body.  A material without phase change is always solid
 * when it has a Young's modulus or is rigid, else always liquid.
 *
 * Body neighbours ("locally undeformed object", Fig. 3).  Each solid
 * particle keeps up to KB body neighbours, by storage slot, and the
 * reference vector X_j - X_i to each; both ends hold the pair with exactly
 * negated vectors.  A particle that becomes solid (or a new solid particle)
 * takes every solid particle within h as a body neighbour at its current
 * distance, so a solidifying particle glues what it touches (merging); two
 * solids that were solid before stay distinct while they touch.  A particle
 * that melts drops all its body neighbours (splitting).  Pairs stretched
 * beyond FS_P_FRACTURE times their reference length part (fracture).  Every
 * decision is taken by both ends from the same numbers, so it is a gather.
 *
 * Rigid bodies (Eq. 18-20): the connected components of body neighbours
 * among rigid-state particles, recomputed every step, so bodies merge and
 * split as particles change phase; mass, centre of mass, inertia tensor,
 * momentum and angular momentum are taken from the particles each internal
 * step ("we have to update the following object quantities", Sec. "Phase
 * Changes of Elastic and Rigid Bodies"), then Eq. 20 and Eq. 19 advance
 * it, and its particles move rigidly.  Forces between two particles of one
 * rigid body are skipped (as the paper does).
 *
 * Limits (measured, see tests/sim/test_unified.c and BENCHMARKS.md):
 *  - cost: ~7-12 internal steps per 1/60 s, 6-9x Clavet's step;
 *  - Eq. 7 is used in Monaghan's form, see force_task;
 *  - liquid squeezed between a rigid body and a wall spurts (a bunny landing
 *    on the floor through the pool throws drops at ~10 m/s): the
 *    compressibility of c = 25 m/s, the paper's "open problem" of collisions;
 *  - the shape bodies of bodies.c act once per 1/60 s step through Clavet's
 *    impulses (Algorithm 6), not through SPH pressure: buoyancy is rougher
 *    than under Clavet (light bodies bounce higher);
 *  - the walls' boundary particles are counted twice behind the box's edges;
 *  - solid particles have Coulomb friction at walls, liquids slip.
 *
 * Parallel form: every per-particle phase is a gather through fs__run, each
 * pair's two shares computed from the same inputs, so the state is
 * bit-identical for any thread count.  Rigid-body sums run serially in
 * index order.  Per-particle state is kept by storage slot (p.slot), never
 * by index, because the grid reorders the particles every step.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "solver_table.h"
#include "sources.h"
#include "tasks.h"
#include "unified.h"

#define KB 40               /* body neighbours per particle */
#define SOUND 25.0f         /* m/s: c of the equation of state, k = c^2 (Eq. 9) */
#define CFL 0.4f            /* fraction of h a wave crosses per internal step */
#define VISC_LIM 0.1f       /* viscous limit dt <= VISC_LIM h^2 / nu */
#define MAX_SUB 64          /* internal steps per step of w->dt at most */
#define NU_NUMERIC 0.001f   /* m^2/s: floor on the viscosity (numerical: damps the sloshing of 8 cm particles) */
#define WALL_K 4.0f         /* wall stiffness in (c/h)^2 */
#define WALL_TAB 64         /* samples of the wall tables */
#define STALE 0xFFFFFFFFu   /* uid of a slot whose state belongs to no live particle */
#define SNAP_MAGIC_U 0x31494E55u /* "UNI1" */

enum { LIQUID = 0, ELASTIC = 1, RIGID = 2 };


/* ---- state ----------------------------------------------------------------- */
/* Behind w->solver_state.  Touched by the thread that owns the world and,
 * during a step, by the pool's workers through fs__run: each task writes
 * only its own particles' entries (per index, or per slot of its own
 * particles) and its own worker's counters. */
typedef struct ustate {
    /* per storage slot (kept across steps, in snapshots) */
    uint32_t *uid;    /* the particle id the slot's state belongs to (STALE: none) */
    uint8_t *was;     /* 1: solid (s > 0) at the last phase update */
    uint8_t *bn;      /* body neighbours */
    int32_t *bj;      /* [slot * KB + k]: partner slot, sorted */
    float *rx, *ry, *rz; /* reference vector X_j - X_i */
    float *ep;        /* plastic strain, 6 per slot (xx yy zz xy yz zx) */
    /* per slot, derived every step */
    float *vbar;      /* body volume, Eq. 11 */
    int32_t *comp;    /* rigid body of the slot, -1 */
    int32_t *uf;      /* union-find parent */
    /* per slot, the state of this step (Fig. 5) */
    float *nu, *young;
    uint8_t *kind;
    /* per index, scratch of one grid order */
    float *rho, *prs, *ax, *ay, *az, *cut;
    float *q, *mu, *ms, *ri; /* p / rho^2, dynamic viscosity, mass, mass / rho */
    int32_t *lab;            /* rigid body (comp of the slot) */
    float *A;         /* 9 per index: -vbar (I + grad u^T) sigma, Eq. 12 */
    uint8_t *fresh, *hasA;
    /* rigid bodies, per component: 24 doubles */
    double *rb;
    int ncomp;
    /* diagnostics and knobs */
    float cfl;        /* CFL factor (tests and benchmarks may lower or raise it) */
    int last_sub;     /* internal steps of the last step */
    float last_dt;
    uint64_t refused[FS_MAX_WORKERS], nonfinite[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS];
    float vmax[FS_MAX_WORKERS], numax[FS_MAX_WORKERS], cmax[FS_MAX_WORKERS];
    int anynew[FS_MAX_WORKERS], anysolid[FS_MAX_WORKERS], anyrigid[FS_MAX_WORKERS];
} ustate;

/* rigid component record layout */
enum { RB_M = 0, RB_S = 1, RB_P = 4, RB_F = 7, RB_L = 10, RB_T = 13, RB_I = 16, RB_N = 24 };
/* after the solve: RB_S holds the centre of mass, RB_P the velocity, RB_L the
 * angular velocity and the rotation's rows sit at RB_F, RB_T and RB_I */

static ustate *st_of(const fs_world *w) { return (ustate *)w->solver_state; }

/* ---- per-step constants ---------------------------------------------------- */
typedef struct uconst {
    float mass[FS_MAX_MATERIALS], rho0[FS_MAX_MATERIALS], mu_l[FS_MAX_MATERIALS], nu_l[FS_MAX_MATERIALS],
        nu_s[FS_MAX_MATERIALS], E[FS_MAX_MATERIALS], pois[FS_MAX_MATERIALS], elim[FS_MAX_MATERIALS],
        plim[FS_MAX_MATERIALS], frac[FS_MAX_MATERIALS], tsolid[FS_MAX_MATERIALS], tmelt[FS_MAX_MATERIALS],
        diff[FS_MAX_MATERIALS], mu[FS_MAX_MATERIALS];
    uint8_t phase[FS_MAX_MATERIALS], rigid[FS_MAX_MATERIALS], always_solid[FS_MAX_MATERIALS];
    bool heat;
    float h, h2, inv_h, s, k;
    float w6;   /* density kernel (h - r)^3 normalisation: Eq. 4 gives rho-hat on the lattice */
    float gsp;  /* its gradient's, 3 w6: the pressure force is the gradient of the density */
    float lap;  /* viscosity Laplacian (h - r) normalisation (= w->lap_norm / s^3) */
    float cw, cg; /* cosine kernel (Eq. 17) value and gradient normalisations */
    float nu_cap, E_cap_over_rho; /* caps for the step count limit */
    fs_vec3 g;
    /* walls: each face of the box is backed by a half lattice of boundary
     * particles at rest (rows at s/2, 3s/2, ... behind the face) that share
     * a particle's own rest density and pressure; tables over the distance
     * d in [0, h] of a centre from the face: the fraction of the rest
     * density they add (Eq. 4) and the pressure push of Eq. 7 per unit
     * p / rho */
    float wf[WALL_TAB + 1], wg[WALL_TAB + 1];
} uconst;

typedef struct uctx {
    fs_world *w;
    ustate *u;
    uconst c;
    float dt;
    bool prepare;   /* phase task: every solid particle starts afresh */
    bool any_new;
} uctx;

/* cosine kernel of Eq. 17, without its constant: (2h/pi)(cos((r+h) pi / 2h) + 1),
 * and its derivative's magnitude sin((r+h) pi / 2h) */
static inline float cos_w(float r, float h) {
    return (2.0f * h / 3.14159265f) * (cosf((r + h) * 3.14159265f / (2.0f * h)) + 1.0f);
}
static inline float cos_g(float r, float h) { return sinf((r + h) * 3.14159265f / (2.0f * h)); }

static void uconst_init(const fs_world *w, uconst *c) {
    memset(c, 0, sizeof *c);
    const float s = w->dom.spacing, h = w->h, vol = s * s * s;
    c->h = h, c->h2 = h * h, c->inv_h = w->inv_h, c->s = s, c->k = SOUND * SOUND, c->g = w->dom.gravity;
    for (int m = 0; m < w->nmat; m++) {
        const float *p = w->mat[m].p;
        c->rho0[m] = p[FS_P_MASS_DENSITY];
        c->mass[m] = c->rho0[m] * vol;
        c->nu_l[m] = fmaxf(p[FS_P_KIN_VISCOSITY], NU_NUMERIC);
        c->nu_s[m] = fmaxf(p[FS_P_SOLID_VISCOSITY], NU_NUMERIC);
        c->E[m] = p[FS_P_YOUNG];
        c->pois[m] = p[FS_P_POISSON];
        c->elim[m] = p[FS_P_ELASTIC_LIMIT];
        c->plim[m] = p[FS_P_PLASTIC_LIMIT];
        c->frac[m] = p[FS_P_FRACTURE];
        c->phase[m] = p[FS_P_PHASE_CHANGE] != 0.0f;
        c->rigid[m] = p[FS_P_RIGID] != 0.0f;
        c->always_solid[m] = !c->phase[m] && (c->E[m] > 0.0f || c->rigid[m]);
        c->tsolid[m] = p[FS_P_SOLID_POINT];
        c->tmelt[m] = p[FS_P_MELT_POINT] > p[FS_P_SOLID_POINT] ? p[FS_P_MELT_POINT] : p[FS_P_SOLID_POINT];
        c->diff[m] = fs__heat_coef(w, m);
        c->mu[m] = p[FS_P_FRICTION];
        c->heat |= c->diff[m] > 0;
    }
    /* lattice sums over the rest lattice (self included where the kernel is
     * not a derivative) */
    double s6 = 0, scw = 0, scg = 0;
    int M = (int)(h / s) + 1;
    for (int k = -M; k <= M; k++)
        for (int j = -M; j <= M; j++)
            for (int i = -M; i <= M; i++) {
                double x = s * i, r = s * sqrt((double)(i * i + j * j + k * k));
                if (r >= h) continue;
                double q = (double)h - r;
                s6 += q * q * q;
                scw += cos_w((float)r, h);
                if (r > 0) scg += cos_g((float)r, h) * x * x / r;
            }
    c->w6 = (float)(1.0 / (vol * s6));
    c->gsp = 3.0f * c->w6; /* -dW/dr: the force is the gradient of the density */
    c->lap = w->lap_norm / vol;
    c->cw = (float)(1.0 / (vol * scw));
    c->cg = (float)(1.0 / (vol * scg));
    for (int t = 0; t <= WALL_TAB; t++) {
        double d = (double)h * t / WALL_TAB, f = 0, gg = 0;
        for (int k = 0; k <= M; k++) {
            double dp = d + s * (0.5 + k);
            if (dp >= h) break;
            for (int j = -M; j <= M; j++)
                for (int i = -M; i <= M; i++) {
                    double r2 = dp * dp + (double)s * s * (i * i + j * j);
                    if (r2 >= (double)h * h) continue;
                    double r = sqrt(r2), q = (double)h - r;
                    f += q * q * q;
                    gg += (h - r) * (h - r) * dp / r;
                }
        }
        c->wf[t] = (float)(f * vol * c->w6);
        c->wg[t] = (float)(gg * vol * c->gsp);
    }
    float dtmin = w->dt / (float)MAX_SUB;
    c->nu_cap = VISC_LIM * h * h / dtmin;
    float cs = CFL * h / dtmin;
    c->E_cap_over_rho = cs * cs;
}

static inline float wall_tab(const float *tab, float d, float inv_h) {
    float t = d * inv_h * WALL_TAB;
    if (!(t < WALL_TAB)) return 0.0f;
    if (t < 0.0f) t = 0.0f;
    int k = (int)t;
    float f = t - (float)k;
    return tab[k] + f * (tab[k + 1] - tab[k]);
}

/* solidity (Fig. 5) */
static inline float solidity(const uconst *c, int m, float T) {
    if (!c->phase[m]) return c->always_solid[m] ? 1.0f : 0.0f;
    float ts = c->tsolid[m], tm = c->tmelt[m];
    return T <= ts ? 1.0f : (T >= tm ? 0.0f : (tm - T) / (tm - ts));
}


/* Direction of a coincident pair: pseudo-random from the two ids, negated
 * when i and j swap. */
static inline void coincident_dir(const fs_particles *p, int i, int j, float *dx, float *dy, float *dz) {
    uint32_t a = p->id[i], b = p->id[j];
    float sg = b > a ? 1.0f : -1.0f;
    uint64_t key = b > a ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    float z = 2.0f * fs__rand01(key, 31) - 1.0f, t = 6.2831853f * fs__rand01(key, 32);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    *dx = sg * r * cosf(t), *dy = sg * r * sinf(t), *dz = sg * z;
}


/* ---- phase and body neighbours (once per step) ------------------------------ */
/* P1: solidity, state, fresh slots; the viscosity and stiffness of the state
 * (Fig. 5); the time step's inputs (max speed, viscosity, wave speed). */
static void phase_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    fs_particles *p = &w->p;
    float vmax = 0, numax = 0, cmax = 0;
    int anynew = 0, anysolid = 0, anyrigid = 0;
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], m = p->mat[i];
        if (x->prepare || u->uid[s] != p->id[i]) {
            u->uid[s] = p->id[i], u->bn[s] = 0, u->was[s] = 0;
            memset(u->ep + (size_t)s * 6, 0, 6 * sizeof(float));
        }
        const float sol = solidity(c, m, p->temp[i]);
        w->solid[i] = sol;
        p->frozen[i] = sol >= 1.0f;
        uint8_t kind = sol <= 0.0f ? LIQUID : ((sol >= 1.0f && c->rigid[m]) ? RIGID : ELASTIC);
        u->kind[s] = kind;
        u->fresh[i] = sol > 0.0f && !u->was[s];
        anynew |= u->fresh[i];
        anysolid |= sol > 0.0f || u->bn[s] > 0;
        anyrigid |= kind == RIGID;
        u->was[s] = sol > 0.0f;
        if (sol <= 0.0f) memset(u->ep + (size_t)s * 6, 0, 6 * sizeof(float));
        /* Fig. 5: viscosity and Young's modulus interpolated in the soft state */
        float nu = c->nu_l[m] + sol * (c->nu_s[m] - c->nu_l[m]);
        nu = fminf(nu, c->nu_cap);
        float E = kind == ELASTIC ? sol * c->E[m] : 0.0f;
        const float pv = c->pois[m];
        float Mw = E * (1.0f - pv) / ((1.0f + pv) * (1.0f - 2.0f * pv)) / c->rho0[m]; /* P-wave speed^2 */
        if (Mw > c->E_cap_over_rho) E *= c->E_cap_over_rho / Mw, Mw = c->E_cap_over_rho;
        u->nu[s] = nu;
        u->young[s] = E;
        float v2 = p->vx[i] * p->vx[i] + p->vy[i] * p->vy[i] + p->vz[i] * p->vz[i];
        if (v2 > vmax) vmax = v2;
        if (nu > numax) numax = nu;
        if (Mw > cmax) cmax = Mw;
    }
    if (vmax > u->vmax[worker]) u->vmax[worker] = vmax;
    if (numax > u->numax[worker]) u->numax[worker] = numax;
    if (cmax > u->cmax[worker]) u->cmax[worker] = cmax;
    u->anynew[worker] |= anynew, u->anysolid[worker] |= anysolid, u->anyrigid[worker] |= anyrigid;
}

/* P2: each particle prunes its own list (melted partner or self, fracture)
 * and, when new pairs may form, sets its budget: the squared distance below
 * which it accepts new body neighbours (all within h when they fit in KB,
 * else the nearest ones).  Both ends decide each pair from the same numbers. */
static void prune_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], mi = p->mat[i];
        int n = u->bn[s], keep = 0;
        int32_t *J = u->bj + (size_t)s * KB;
        float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        const float si = w->solid[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            if (si <= 0.0f || j < 0 || w->solid[j] <= 0.0f) continue; /* melted: splitting */
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float d2 = dx * dx + dy * dy + dz * dz;
            float L2 = RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k];
            float f = 0.5f * (c->frac[mi] + c->frac[p->mat[j]]);
            if (d2 > f * f * L2) continue; /* "Plasticity and Fracture": the pair parts */
            J[keep] = J[k], RX[keep] = RX[k], RY[keep] = RY[k], RZ[keep] = RZ[k];
            keep++;
        }
        u->bn[s] = (uint8_t)keep;
        u->cut[i] = 0.0f;
        if (!x->any_new || si <= 0.0f) continue;
        /* candidates: solid particles within h, one of the two newly solid,
         * not yet body neighbours */
        fs__ranges_of(w, w->cell[i], &r);
        int nn = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        int cnt = 0;
        float *cand = sc.dx; /* squared distances of the candidates */
        for (int k = 0; k < nn; k++) {
            int j = sc.j[k];
            if (w->solid[j] <= 0.0f || !(u->fresh[i] || u->fresh[j]) || fs__sorted_has(J, keep, p->slot[j])) continue;
            cand[cnt++] = sc.r2[k];
        }
        int budget = KB - keep;
        if (cnt <= budget) {
            u->cut[i] = INFINITY;
        } else {
            /* the (budget+1)-th smallest distance: strictly below it at most
             * budget candidates remain (partial selection sort) */
            for (int a = 0; a <= budget; a++) {
                int best = a;
                for (int q = a + 1; q < cnt; q++)
                    if (cand[q] < cand[best]) best = q;
                float t = cand[a];
                cand[a] = cand[best], cand[best] = t;
            }
            u->cut[i] = cand[budget];
            u->refused[worker] += (uint64_t)(cnt - budget);
        }
    }
}

/* P3: add the new body neighbours (both ends add the pair: it passes both
 * budgets), reference vector = current X_j - X_i ("If objects merge, the
 * reference distances of the new neighbors are added", Fig. 3). */
static void bond_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        if (u->cut[i] <= 0.0f) continue;
        const int s = p->slot[i];
        int n0 = u->bn[s], n = n0;
        int32_t *J = u->bj + (size_t)s * KB;
        float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        fs__ranges_of(w, w->cell[i], &r);
        int nn = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        for (int k = 0; k < nn && n < KB; k++) {
            int j = sc.j[k];
            if (w->solid[j] <= 0.0f || !(u->fresh[i] || u->fresh[j])) continue;
            if (!(sc.r2[k] < u->cut[i] && sc.r2[k] < u->cut[j])) continue;
            if (fs__sorted_has(J, n0, p->slot[j])) continue;
            J[n] = p->slot[j];
            RX[n] = p->x[j] - p->x[i], RY[n] = p->y[j] - p->y[i], RZ[n] = p->z[j] - p->z[i];
            n++;
        }
        for (int a = n0; a < n; a++) { /* insertion into the sorted list */
            int32_t tj = J[a];
            float tx = RX[a], ty = RY[a], tz = RZ[a];
            int q = a;
            while (q > 0 && J[q - 1] > tj) {
                J[q] = J[q - 1], RX[q] = RX[q - 1], RY[q] = RY[q - 1], RZ[q] = RZ[q - 1];
                q--;
            }
            J[q] = tj, RX[q] = tx, RY[q] = ty, RZ[q] = tz;
        }
        u->bn[s] = (uint8_t)n;
    }
}

/* P4: body volume, Eq. 11, with the cosine kernel (Eq. 17) */
static void vbar_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const fs_particles *p = &w->p;
    const float w0 = c->cw * cos_w(0.0f, c->h);
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], n = u->bn[s];
        const float mi = c->mass[p->mat[i]];
        float sum = mi * w0;
        const int32_t *J = u->bj + (size_t)s * KB;
        const float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
            if (L < c->h) sum += c->mass[p->mat[j]] * c->cw * cos_w(L, c->h);
        }
        u->vbar[s] = mi / sum;
    }
}

/* Rigid bodies: connected components of body neighbours among rigid-state
 * particles.  Union-find with the smaller slot as root, numbered in id
 * order: a function of the graph alone. */
static int32_t uf_find(int32_t *uf, int32_t a) {
    while (uf[a] != a) {
        uf[a] = uf[uf[a]];
        a = uf[a];
    }
    return a;
}

static void rigid_label(fs_world *w, ustate *u) {
    const fs_particles *p = &w->p;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        u->uf[s] = s;
        u->comp[s] = -1;
    }
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        if (u->kind[s] != RIGID) continue;
        const int32_t *J = u->bj + (size_t)s * KB;
        for (int k = 0; k < u->bn[s]; k++) {
            if (u->kind[J[k]] != RIGID) continue;
            int32_t a = uf_find(u->uf, s), bb = uf_find(u->uf, J[k]);
            if (a < bb)
                u->uf[bb] = a;
            else if (bb < a)
                u->uf[a] = bb;
        }
    }
    /* number the components in id order; comp[root] doubles as the root's
     * number (roots are rigid particles) */
    int nc = 0;
    for (int k = 0; k < w->n; k++) {
        int s = w->id_order[k];
        if (u->kind[s] != RIGID) continue;
        int32_t root = uf_find(u->uf, s);
        if (u->comp[root] < 0) u->comp[root] = nc++;
        u->comp[s] = u->comp[root];
    }
    u->ncomp = nc;
}

static void topology(fs_world *w, uctx *x) {
    ustate *u = x->u;
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        u->vmax[k] = u->numax[k] = u->cmax[k] = 0;
        u->anynew[k] = u->anysolid[k] = u->anyrigid[k] = 0;
    }
    fs__run(w, phase_task, x, w->n);
    int anynew = 0, anysolid = 0, anyrigid = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++) anynew |= u->anynew[k], anysolid |= u->anysolid[k], anyrigid |= u->anyrigid[k];
    x->any_new = anynew;
    if (anysolid) {
        fs__run(w, prune_task, x, w->n);
        if (anynew) fs__run(w, bond_task, x, w->n);
        fs__run(w, vbar_task, x, w->n);
    }
    u->ncomp = 0;
    if (anyrigid) rigid_label(w, u);
    else
        for (int i = 0; i < w->n; i++) u->comp[w->p.slot[i]] = -1;
}

/* ---- one internal step ----------------------------------------------------- */
/* S1: density (Eq. 4), pressure (Eq. 9), heat (Eq. 21); for elastic
 * particles the displacement gradient (Eq. 14-15), Green-Saint-Venant strain,
 * von Mises plasticity, Hooke's stress and the matrix of Eq. 12. */
FS_SIMD_CLONES static void density_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const float h2 = c->h2, w6 = c->w6, inv_h = c->inv_h;
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        if (n <= FS_NB_MAX) {
            memcpy(w->nb + (size_t)i * FS_NB_MAX, sc.j, sizeof(int32_t) * (size_t)n);
            w->nb_n[i] = n;
        } else {
            w->nb_n[i] = -1; /* the force pass scans again: same positions, same set */
        }
        const int m = p->mat[i];
        const int32_t *J = sc.j;
        const float *R2 = sc.r2;
        const uint8_t *MM = p->mat;
        float rho = 0, acc = 0;
        const float Ti = p->temp[i], Di = c->diff[m], hh = c->h;
        const float *MA = c->mass, *DF = c->diff, *T = p->temp;
        if (c->heat) {
#pragma omp simd reduction(+ : rho, acc)
            for (int k = 0; k < n; k++) {
                const int j = J[k];
                const float rr = sqrtf(R2[k]), q = hh - rr;
                rho += MA[MM[j]] * (q * q * q); /* Eq. 4 */
                /* Eq. 21, the pair form of solver.c: antisymmetric, so heat is conserved */
                acc += 0.5f * (Di + DF[MM[j]]) * (1.0f - rr * inv_h) * (T[j] - Ti);
            }
        } else {
#pragma omp simd reduction(+ : rho)
            for (int k = 0; k < n; k++) {
                const float q = hh - sqrtf(R2[k]);
                rho += MA[MM[J[k]]] * (q * q * q); /* Eq. 4 */
            }
        }
        rho = w6 * (rho + c->mass[m] * (c->h * c->h * c->h));
        {
            const float dd[6] = {p->x[i] - w->dom.box_min.x, w->dom.box_max.x - p->x[i], p->y[i] - w->dom.box_min.y,
                                 w->dom.box_max.y - p->y[i], p->z[i] - w->dom.box_min.z, w->dom.box_max.z - p->z[i]};
            float wsum = 0;
            for (int a = 0; a < 6; a++) wsum += wall_tab(c->wf, dd[a], inv_h);
            rho += c->rho0[m] * wsum; /* the walls' boundary particles */
        }
        u->rho[i] = rho;
        const float pr = c->k * (rho - c->rho0[m]); /* Eq. 9 */
        u->prs[i] = pr > 0.0f ? pr : 0.0f;
        u->q[i] = u->prs[i] / (rho * rho);
        u->ms[i] = c->mass[m];
        u->ri[i] = c->mass[m] / rho;
        u->mu[i] = c->rho0[m] * u->nu[p->slot[i]];
        u->lab[i] = u->comp[p->slot[i]];
        w->dT[i] = acc;

        /* elasticity */
        const int s = p->slot[i], nb = u->bn[s];
        u->hasA[i] = 0;
        if (u->kind[s] != ELASTIC || nb == 0 || u->young[s] <= 0.0f) continue;
        const int32_t *BJ = u->bj + (size_t)s * KB;
        const float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        float G[3][3] = {{0}}; /* grad u_i, Eq. 14: G[a][b] = sum_j d_ij[a] u_ji[b] */
        for (int k = 0; k < nb; k++) {
            const int j = w->slot_index[BJ[k]];
            const float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
            if (!(L > 1e-9f) || L >= c->h) continue;
            /* Eq. 16: d_ij = vbar_j grad W(x_ij); x_ij = X_i - X_j = -ref */
            const float gm = u->vbar[BJ[k]] * c->cg * cos_g(L, c->h) / L;
            const float d[3] = {gm * RX[k], gm * RY[k], gm * RZ[k]};
            /* Eq. 15: u_ji = r_j - r_i + x_ij */
            const float uj[3] = {p->x[j] - p->x[i] - RX[k], p->y[j] - p->y[i] - RY[k], p->z[j] - p->z[i] - RZ[k]};
            for (int a = 0; a < 3; a++)
                for (int bb = 0; bb < 3; bb++) G[a][bb] += d[a] * uj[bb];
        }
        /* Green-Saint-Venant strain: eps = (G + G^T + G G^T) / 2 */
        float eps[3][3];
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++)
                eps[a][bb] =
                    0.5f * (G[a][bb] + G[bb][a] + G[a][0] * G[bb][0] + G[a][1] * G[bb][1] + G[a][2] * G[bb][2]);
        /* von Mises plasticity (O'Brien et al. 2002, the paper's ref. 28):
         * the elastic strain is the total minus the plastic strain; its
         * deviatoric part beyond the elastic limit flows into the plastic
         * strain, which stays within the plastic limit */
        float *ep = u->ep + (size_t)s * 6;
        const float plim = c->plim[m];
        if (plim > 0.0f) {
            float ee[6] = {eps[0][0] - ep[0], eps[1][1] - ep[1], eps[2][2] - ep[2],
                           eps[0][1] - ep[3], eps[1][2] - ep[4], eps[2][0] - ep[5]};
            float tr = (ee[0] + ee[1] + ee[2]) * (1.0f / 3.0f);
            float dv[6] = {ee[0] - tr, ee[1] - tr, ee[2] - tr, ee[3], ee[4], ee[5]};
            float nrm = sqrtf(dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2] +
                              2.0f * (dv[3] * dv[3] + dv[4] * dv[4] + dv[5] * dv[5]));
            if (nrm > c->elim[m]) {
                float f = (nrm - c->elim[m]) / nrm;
                for (int q = 0; q < 6; q++) ep[q] += f * dv[q];
                float pn = sqrtf(ep[0] * ep[0] + ep[1] * ep[1] + ep[2] * ep[2] +
                                 2.0f * (ep[3] * ep[3] + ep[4] * ep[4] + ep[5] * ep[5]));
                if (pn > plim)
                    for (int q = 0; q < 6; q++) ep[q] *= plim / pn;
            }
        }
        float ee[3][3] = {{eps[0][0] - ep[0], eps[0][1] - ep[3], eps[0][2] - ep[5]},
                          {eps[1][0] - ep[3], eps[1][1] - ep[1], eps[1][2] - ep[4]},
                          {eps[2][0] - ep[5], eps[2][1] - ep[4], eps[2][2] - ep[2]}};
        /* Hooke, isotropic: sigma = lambda tr(eps) I + 2 mu eps */
        const float E = u->young[s], nu = c->pois[m];
        const float lam = E * nu / ((1.0f + nu) * (1.0f - 2.0f * nu)), mu2 = E / (1.0f + nu);
        const float tr = ee[0][0] + ee[1][1] + ee[2][2];
        float sg[3][3];
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) sg[a][bb] = mu2 * ee[a][bb] + (a == bb ? lam * tr : 0.0f);
        /* Eq. 12: F_ji = -vbar_i (I + grad u_i^T) sigma_i d_ij.  (The paper
         * writes 2 vbar_i for a strain without the 1/2; with
         * eps = (G + G^T + G G^T) / 2 the gradient of Eq. 10 is this.)
         * grad u^T[a][k] = G[k][a]. */
        float *A = u->A + (size_t)i * 9;
        const float vb = u->vbar[s];
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) {
                float t = sg[a][bb] + G[0][a] * sg[0][bb] + G[1][a] * sg[1][bb] + G[2][a] * sg[2][bb];
                A[a * 3 + bb] = -vb * t;
            }
        u->hasA[i] = 1;
    }
}

/* wall: a penalty spring-damper on the centre against each face of the
 * box shrunk by the particle radius (w->lo, w->hi) */
static inline float wall_acc(float x, float v, float lo, float hi, float kw, float om) {
    float a = 0;
    if (x < lo) a += kw * (lo - x) - (v < 0 ? om * v : 0);
    if (x > hi) a -= kw * (x - hi) + (v > 0 ? om * v : 0);
    return a;
}

/* S2: accelerations: pressure (Eq. 7) and viscosity (Eq. 8) over the SPH
 * neighbours, elasticity (Eq. 12, 16) over the body neighbours, gravity and
 * the walls; a = f / rho (Eq. 6). */
FS_SIMD_CLONES static void force_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    const uconst *c = &x->c;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const float *X = p->x, *Y = p->y, *Z = p->z, *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float h = c->h, gsp = c->gsp, lap = c->lap;
    const float *Q = u->q, *MU = u->mu;
    const int32_t *LAB = u->lab;
    const float kw = WALL_K * c->k * c->inv_h * c->inv_h, om = sqrtf(kw);
    for (int i = b; i < e; i++) {
        const int32_t *list = w->nb + (size_t)i * FS_NB_MAX;
        int n = w->nb_n[i];
        if (n < 0) {
            fs__ranges_of(w, w->cell[i], &r);
            n = fs__scan(X, Y, Z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
            list = sc.j;
        }
        const int m = p->mat[i], si = p->slot[i];
        const float xi = X[i], yi = Y[i], zi = Z[i], vxi = VX[i], vyi = VY[i], vzi = VZ[i];
        const float qi = Q[i], mui = MU[i], irhoi = 1.0f / u->rho[i];
        const int32_t ci = LAB[i];
        const float *MS = u->ms, *RI = u->ri;
        float ax = 0, ay = 0, az = 0;
        int coincident = 0;
        /* Eq. 7 / rho_i in Monaghan's symmetric form (the paper's ref. 1):
         * a_i = -sum_j m_j (p_i / rho_i^2 + p_j / rho_j^2) grad W(r_ij), the
         * gradient of Eq. 4's density, so pressure work is conservative.
         * (The arithmetic mean (p_i + p_j) / 2 rho_j of Eq. 7 as printed is
         * not: a still pool at 8 cm spacing gained kinetic energy without
         * bound with it.)  -grad W(r_ij) = gsp (h - r)^2 r_ij / r.
         * Eq. 8 / rho_i with the viscosity kernel's Laplacian on the lattice.
         * Pairs inside one rigid body are skipped (Sec. "Rigid Bodies"). */
#pragma omp simd reduction(+ : ax, ay, az, coincident)
        for (int k = 0; k < n; k++) {
            const int j = list[k];
            const float dx = xi - X[j], dy = yi - Y[j], dz = zi - Z[j]; /* r_ij */
            const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            const float inv = rr > 1e-9f ? 1.0f / rr : 0.0f;
            coincident += rr <= 1e-9f;
            const float keep = (float)((LAB[j] != ci) | (ci < 0));
            const float hr = h - rr;
            const float f = keep * MS[j] * (qi + Q[j]) * gsp * hr * hr * inv;
            const float vv = keep * 0.5f * (mui + MU[j]) * RI[j] * irhoi * lap * hr;
            ax += f * dx + vv * (VX[j] - vxi);
            ay += f * dy + vv * (VY[j] - vyi);
            az += f * dz + vv * (VZ[j] - vzi);
        }
        if (coincident) /* rare: pairs at one point push along a direction drawn from their ids */
            for (int k = 0; k < n; k++) {
                const int j = list[k];
                float dx = xi - X[j], dy = yi - Y[j], dz = zi - Z[j];
                if (sqrtf(dx * dx + dy * dy + dz * dz) > 1e-9f || (ci >= 0 && LAB[j] == ci)) continue;
                coincident_dir(p, j, i, &dx, &dy, &dz);
                const float f = MS[j] * (qi + Q[j]) * gsp * h * h;
                ax += f * dx, ay += f * dy, az += f * dz;
            }
        /* elasticity: F_i = sum_j (A_j d_ji - A_i d_ij), d_ij = vbar_j g_ij,
         * d_ji = -vbar_i g_ij, g_ij = grad W(x_ij) */
        const int nb = u->bn[si];
        if (nb) {
            const int32_t *BJ = u->bj + (size_t)si * KB;
            const float *RX = u->rx + (size_t)si * KB, *RY = u->ry + (size_t)si * KB, *RZ = u->rz + (size_t)si * KB;
            const float vbi = u->vbar[si];
            const float *Ai = u->A + (size_t)i * 9;
            const bool hai = u->hasA[i];
            float fx = 0, fy = 0, fz = 0;
            for (int k = 0; k < nb; k++) {
                const int j = w->slot_index[BJ[k]];
                const bool haj = u->hasA[j];
                if (!hai && !haj) continue;
                const float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
                if (!(L > 1e-9f) || L >= h) continue;
                const float gm = c->cg * cos_g(L, h) / L;
                const float g[3] = {gm * RX[k], gm * RY[k], gm * RZ[k]};
                const float vbj = u->vbar[BJ[k]];
                const float *Aj = u->A + (size_t)j * 9;
                float M[9];
                for (int q = 0; q < 9; q++) M[q] = (haj ? vbi * Aj[q] : 0.0f) + (hai ? vbj * Ai[q] : 0.0f);
                fx -= M[0] * g[0] + M[1] * g[1] + M[2] * g[2];
                fy -= M[3] * g[0] + M[4] * g[1] + M[5] * g[2];
                fz -= M[6] * g[0] + M[7] * g[1] + M[8] * g[2];
            }
            const float im = 1.0f / c->mass[m];
            ax += fx * im, ay += fy * im, az += fz * im;
        }
        /* walls: Eq. 7 against their boundary particles (same form), the
         * spring-damper, and for solid particles Coulomb friction
         * (FS_P_FRICTION, as Eq. 11 of Clavet's walls) on the velocity along
         * each face pressing on it, never more than stops the particle in
         * this internal step (liquids slip: their viscosity acts among them) */
        const float X3[3] = {xi, yi, zi}, V3[3] = {vxi, vyi, vzi};
        const float lo3[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
        const float hi3[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
        const float slo[3] = {w->lo.x, w->lo.y, w->lo.z}, shi[3] = {w->hi.x, w->hi.y, w->hi.z};
        const float pr = qi * c->rho0[m], ih = c->inv_h, mu = u->kind[si] != LIQUID ? c->mu[m] : 0.0f;
        float acc[3] = {ax, ay, az}, press[3];
        for (int a = 0; a < 3; a++) {
            float f = qi > 0.0f ? pr * (wall_tab(c->wg, X3[a] - lo3[a], ih) - wall_tab(c->wg, hi3[a] - X3[a], ih)) : 0;
            f += wall_acc(X3[a], V3[a], slo[a], shi[a], kw, om);
            press[a] = fabsf(f);
            acc[a] += f;
        }
        if (mu > 0.0f)
            for (int a = 0; a < 3; a++) {
                if (press[a] <= 0.0f) continue;
                const float vt[3] = {a == 0 ? 0 : V3[0], a == 1 ? 0 : V3[1], a == 2 ? 0 : V3[2]};
                const float vn = sqrtf(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
                if (vn <= 0.0f) continue;
                const float dec = fminf(mu * press[a], vn / x->dt) / vn;
                for (int q = 0; q < 3; q++) acc[q] -= dec * vt[q];
            }
        ax = acc[0] + c->g.x, ay = acc[1] + c->g.y, az = acc[2] + c->g.z;
        u->ax[i] = ax, u->ay[i] = ay, u->az[i] = az;
    }
}

/* S3: leap-frog in kick-drift form for liquid and elastic particles */
static void integrate_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    fs_particles *p = &w->p;
    const float dt = x->dt;
    for (int i = b; i < e; i++) {
        if (u->comp[p->slot[i]] >= 0) continue;
        p->vx[i] += dt * u->ax[i], p->vy[i] += dt * u->ay[i], p->vz[i] += dt * u->az[i];
        p->x[i] += dt * p->vx[i], p->y[i] += dt * p->vy[i], p->z[i] += dt * p->vz[i];
    }
}

/* S4: rigid bodies, Eq. 18-20.  Sums in index order (serial). */
static void rigid_solve(fs_world *w, uctx *x) {
    ustate *u = x->u;
    const int nc = u->ncomp;
    if (!nc) return;
    const fs_particles *p = &w->p;
    const uconst *c = &x->c;
    double *rb = u->rb;
    memset(rb, 0, sizeof(double) * RB_N * (size_t)nc);
    for (int i = 0; i < w->n; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        double *B = rb + (size_t)k * RB_N, m = c->mass[p->mat[i]];
        B[RB_M] += m;
        B[RB_S] += m * p->x[i], B[RB_S + 1] += m * p->y[i], B[RB_S + 2] += m * p->z[i];
        B[RB_P] += m * p->vx[i], B[RB_P + 1] += m * p->vy[i], B[RB_P + 2] += m * p->vz[i];
        /* F_i: the force densities times the volume, i.e. m a (Eq. 18's F_i) */
        B[RB_F] += m * u->ax[i], B[RB_F + 1] += m * u->ay[i], B[RB_F + 2] += m * u->az[i];
    }
    for (int k = 0; k < nc; k++) {
        double *B = rb + (size_t)k * RB_N;
        for (int a = 0; a < 3; a++) B[RB_S + a] /= B[RB_M]; /* r_cm */
    }
    for (int i = 0; i < w->n; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        double *B = rb + (size_t)k * RB_N, m = c->mass[p->mat[i]];
        double r[3] = {p->x[i] - B[RB_S], p->y[i] - B[RB_S + 1], p->z[i] - B[RB_S + 2]};
        double v[3] = {p->vx[i], p->vy[i], p->vz[i]}, f[3] = {m * u->ax[i], m * u->ay[i], m * u->az[i]};
        /* angular momentum of the particles, L = sum m r x v */
        B[RB_L] += m * (r[1] * v[2] - r[2] * v[1]);
        B[RB_L + 1] += m * (r[2] * v[0] - r[0] * v[2]);
        B[RB_L + 2] += m * (r[0] * v[1] - r[1] * v[0]);
        /* Eq. 18: tau_i = (r_i - r_cm) x F_i */
        B[RB_T] += r[1] * f[2] - r[2] * f[1];
        B[RB_T + 1] += r[2] * f[0] - r[0] * f[2];
        B[RB_T + 2] += r[0] * f[1] - r[1] * f[0];
        /* inertia tensor xx yy zz xy yz zx */
        double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        B[RB_I] += m * (r2 - r[0] * r[0]), B[RB_I + 1] += m * (r2 - r[1] * r[1]), B[RB_I + 2] += m * (r2 - r[2] * r[2]);
        B[RB_I + 3] -= m * r[0] * r[1], B[RB_I + 4] -= m * r[1] * r[2], B[RB_I + 5] -= m * r[2] * r[0];
    }
    const double dt = x->dt, s2 = (double)c->s * c->s;
    for (int k = 0; k < nc; k++) {
        double *B = rb + (size_t)k * RB_N;
        const double M = B[RB_M];
        double V[3], L[3];
        for (int a = 0; a < 3; a++) {
            V[a] = (B[RB_P + a] + B[RB_F + a] * dt) / M; /* momentum += F dt */
            L[a] = B[RB_L + a] + B[RB_T + a] * dt;       /* Eq. 20 */
        }
        /* Eq. 19: omega = I^-1 L; a tiny isotropic term keeps I invertible
         * for one particle or a line of them (whose L has no part there) */
        const double eps = 1e-6 * M * s2;
        double a11 = B[RB_I] + eps, a22 = B[RB_I + 1] + eps, a33 = B[RB_I + 2] + eps;
        double a12 = B[RB_I + 3], a23 = B[RB_I + 4], a13 = B[RB_I + 5];
        double c11 = a22 * a33 - a23 * a23, c12 = a13 * a23 - a12 * a33, c13 = a12 * a23 - a13 * a22;
        double c22 = a11 * a33 - a13 * a13, c23 = a12 * a13 - a11 * a23, c33 = a11 * a22 - a12 * a12;
        double det = a11 * c11 + a12 * c12 + a13 * c13;
        double om[3] = {0, 0, 0};
        if (det > 0 && isfinite(det)) {
            om[0] = (c11 * L[0] + c12 * L[1] + c13 * L[2]) / det;
            om[1] = (c12 * L[0] + c22 * L[1] + c23 * L[2]) / det;
            om[2] = (c13 * L[0] + c23 * L[1] + c33 * L[2]) / det;
        }
        /* rotation by omega dt (Rodrigues) */
        double th = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) * dt;
        double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        if (th > 1e-12) {
            double kx = om[0] * dt / th, ky = om[1] * dt / th, kz = om[2] * dt / th;
            double cs = cos(th), sn = sin(th), t = 1 - cs;
            R[0] = cs + kx * kx * t, R[1] = kx * ky * t - kz * sn, R[2] = kx * kz * t + ky * sn;
            R[3] = ky * kx * t + kz * sn, R[4] = cs + ky * ky * t, R[5] = ky * kz * t - kx * sn;
            R[6] = kz * kx * t - ky * sn, R[7] = kz * ky * t + kx * sn, R[8] = cs + kz * kz * t;
        }
        /* the particles' velocities after the move: omega' = I'^-1 L with
         * the rotated inertia I' = R I R^T, so that L (not omega) carries
         * over to the next step, which takes it from these velocities */
        const double I0[9] = {a11, a12, a13, a12, a22, a23, a13, a23, a33};
        double RI[9], Ip[9];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                RI[a * 3 + b] = R[a * 3] * I0[b] + R[a * 3 + 1] * I0[3 + b] + R[a * 3 + 2] * I0[6 + b];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                Ip[a * 3 + b] = RI[a * 3] * R[b * 3] + RI[a * 3 + 1] * R[b * 3 + 1] + RI[a * 3 + 2] * R[b * 3 + 2];
        double d11 = Ip[4] * Ip[8] - Ip[5] * Ip[7], d12 = Ip[2] * Ip[7] - Ip[1] * Ip[8];
        double d13 = Ip[1] * Ip[5] - Ip[2] * Ip[4], d22 = Ip[0] * Ip[8] - Ip[2] * Ip[6];
        double d23 = Ip[2] * Ip[3] - Ip[0] * Ip[5], d33 = Ip[0] * Ip[4] - Ip[1] * Ip[3];
        double det2 = Ip[0] * d11 + Ip[1] * (Ip[5] * Ip[6] - Ip[3] * Ip[8]) + Ip[2] * (Ip[3] * Ip[7] - Ip[4] * Ip[6]);
        double om2[3] = {om[0], om[1], om[2]};
        if (det2 > 0 && isfinite(det2)) { /* I' is symmetric: its adjugate too */
            om2[0] = (d11 * L[0] + d12 * L[1] + d13 * L[2]) / det2;
            om2[1] = (d12 * L[0] + d22 * L[1] + d23 * L[2]) / det2;
            om2[2] = (d13 * L[0] + d23 * L[1] + d33 * L[2]) / det2;
        }
        /* keep: centre (RB_S), velocity (RB_P), angular velocity (RB_L), R
         * in RB_F .. RB_F + 8 (F, L and T are no longer needed) */
        for (int a = 0; a < 3; a++) B[RB_P + a] = V[a];
        double Rk[9];
        memcpy(Rk, R, sizeof R);
        for (int a = 0; a < 3; a++) B[RB_L + a] = om2[a];
        /* RB_F .. RB_F+2, RB_T .. RB_T+2 and RB_I .. RB_I+2 hold R's rows */
        B[RB_F] = Rk[0], B[RB_F + 1] = Rk[1], B[RB_F + 2] = Rk[2];
        B[RB_T] = Rk[3], B[RB_T + 1] = Rk[4], B[RB_T + 2] = Rk[5];
        B[RB_I] = Rk[6], B[RB_I + 1] = Rk[7], B[RB_I + 2] = Rk[8];
    }
}

static void rigid_move_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    fs_particles *p = &w->p;
    const double dt = x->dt;
    for (int i = b; i < e; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        const double *B = u->rb + (size_t)k * RB_N;
        const double *R0 = B + RB_F, *R1 = B + RB_T, *R2 = B + RB_I, *om = B + RB_L, *V = B + RB_P, *cm = B + RB_S;
        double r[3] = {p->x[i] - cm[0], p->y[i] - cm[1], p->z[i] - cm[2]};
        double q[3] = {R0[0] * r[0] + R0[1] * r[1] + R0[2] * r[2], R1[0] * r[0] + R1[1] * r[1] + R1[2] * r[2],
                       R2[0] * r[0] + R2[1] * r[1] + R2[2] * r[2]};
        p->x[i] = (float)(cm[0] + V[0] * dt + q[0]);
        p->y[i] = (float)(cm[1] + V[1] * dt + q[1]);
        p->z[i] = (float)(cm[2] + V[2] * dt + q[2]);
        p->vx[i] = (float)(V[0] + om[1] * q[2] - om[2] * q[1]);
        p->vy[i] = (float)(V[1] + om[2] * q[0] - om[0] * q[2]);
        p->vz[i] = (float)(V[2] + om[0] * q[1] - om[1] * q[0]);
    }
}

/* S5: the box (a particle that passed the wall's spring is put back and
 * loses its velocity into the wall), repair, speed limit, temperature. */
static void finish_task(int b, int e, int worker, void *vctx) {
    uctx *x = vctx;
    fs_world *w = x->w;
    ustate *u = x->u;
    fs_particles *p = &w->p;
    const float dt = x->dt, vmax = w->max_speed, slack = 0.5f * w->dom.particle_radius;
    const float l[3] = {w->lo.x - slack, w->lo.y - slack, w->lo.z - slack};
    const float hgh[3] = {w->hi.x + slack, w->hi.y + slack, w->hi.z + slack};
    const fs_vec3 mid = {0.5f * (w->lo.x + w->hi.x), 0.5f * (w->lo.y + w->hi.y), 0.5f * (w->lo.z + w->hi.z)};
    uint64_t bad = 0, clamped = 0;
    for (int i = b; i < e; i++) {
        float X[3] = {p->x[i], p->y[i], p->z[i]}, V[3] = {p->vx[i], p->vy[i], p->vz[i]};
        float sp2 = V[0] * V[0] + V[1] * V[1] + V[2] * V[2];
        if (!(isfinite(sp2) && isfinite(X[0]) && isfinite(X[1]) && isfinite(X[2]))) {
            bool pf = isfinite(p->px[i]) && isfinite(p->py[i]) && isfinite(p->pz[i]);
            X[0] = pf ? p->px[i] : mid.x, X[1] = pf ? p->py[i] : mid.y, X[2] = pf ? p->pz[i] : mid.z;
            V[0] = V[1] = V[2] = 0;
            bad++;
        } else if (sp2 > vmax * vmax) {
            float f = vmax / sqrtf(sp2);
            V[0] *= f, V[1] *= f, V[2] *= f;
        }
        for (int a = 0; a < 3; a++) {
            if (X[a] < l[a]) {
                X[a] = l[a], V[a] = V[a] < 0 ? 0 : V[a];
                clamped++;
            } else if (X[a] > hgh[a]) {
                X[a] = hgh[a], V[a] = V[a] > 0 ? 0 : V[a];
                clamped++;
            }
        }
        p->x[i] = X[0], p->y[i] = X[1], p->z[i] = X[2];
        p->vx[i] = V[0], p->vy[i] = V[1], p->vz[i] = V[2];
        float T = fs__heat_update(w, p->temp[i], x->c.heat, w->dT[i], X[0], X[1], X[2], dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    u->nonfinite[worker] += bad;
    u->clamped[worker] += clamped;
}

static void save_pos_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    fs_particles *p = &((uctx *)vctx)->w->p;
    for (int i = b; i < e; i++) p->px[i] = p->x[i], p->py[i] = p->y[i], p->pz[i] = p->z[i];
}

/* ---- the step -------------------------------------------------------------- */
static int substeps_for(const fs_world *w, const uctx *x) {
    const ustate *u = x->u;
    float v2 = 0, nu = 0, c2 = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++) v2 = fmaxf(v2, u->vmax[k]), nu = fmaxf(nu, u->numax[k]), c2 = fmaxf(c2, u->cmax[k]);
    const float h = w->h, cfl = u->cfl;
    float dt = cfl * h / (SOUND + sqrtf(v2));
    if (c2 > 0) dt = fminf(dt, cfl * h / sqrtf(c2));
    if (nu > 0) dt = fminf(dt, VISC_LIM * h * h / nu);
    float n = ceilf(w->dt / dt);
    if (!(n >= 1.0f)) n = 1.0f;
    return n > (float)MAX_SUB ? MAX_SUB : (int)n;
}

static void unified_step(fs_world *w) {
    double t0 = fs__now_ms(), t;
    ustate *u = st_of(w);
    double *ph = w->st.phase_ms;
    for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] = 0;
    uctx c;
    memset(&c, 0, sizeof c);
    c.w = w, c.u = u;
    uconst_init(w, &c.c);

    fs__emit_and_drain(w);
    t = fs__now_ms();
    fs__grid_build(w);
    ph[FS_PHASE_GRID] += fs__now_ms() - t;

    t = fs__now_ms();
    topology(w, &c);
    const int nsub = substeps_for(w, &c);
    c.dt = w->dt / (float)nsub;
    u->last_sub = nsub, u->last_dt = c.dt;
    fs__run(w, save_pos_task, &c, w->n);
    ph[FS_PHASE_SPRINGS] += fs__now_ms() - t;

    for (int k = 0; k < nsub; k++) {
        if (k > 0) {
            t = fs__now_ms();
            fs__grid_build(w);
            ph[FS_PHASE_GRID] += fs__now_ms() - t;
        }
        t = fs__now_ms();
        fs__run(w, density_task, &c, w->n);
        fs__run(w, force_task, &c, w->n);
        ph[FS_PHASE_RELAX] += fs__now_ms() - t;
        t = fs__now_ms();
        fs__run(w, integrate_task, &c, w->n);
        rigid_solve(w, &c);
        if (u->ncomp) fs__run(w, rigid_move_task, &c, w->n);
        fs__run(w, finish_task, &c, w->n);
        ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
    }

    /* shape bodies (bodies.c) once per step, on the positions at the step's
     * start (px) and now (x); what they change is added to the velocity */
    if (w->nbodies) {
        t = fs__now_ms();
        fs__grid_build(w);
        float mu[FS_MAX_MATERIALS], sd[FS_MAX_MATERIALS], sk[FS_MAX_MATERIALS], ms[FS_MAX_MATERIALS];
        for (int m = 0; m < w->nmat; m++) {
            mu[m] = w->mat[m].p[FS_P_FRICTION];
            sd[m] = w->mat[m].p[FS_P_STICK_DISTANCE] * w->h;
            sk[m] = w->mat[m].p[FS_P_STICK_STRENGTH];
            ms[m] = c.c.mass[m];
        }
        fs_particles *p = &w->p;
        for (int i = 0; i < w->n; i++) {
            w->nx[i] = p->x[i] - p->px[i], w->ny[i] = p->y[i] - p->py[i], w->nz[i] = p->z[i] - p->pz[i];
        }
        fs__bodies_step(w, w->dt, w->dom.particle_radius, mu, sd, sk, ms, fs__run);
        const float inv = 1.0f / w->dt;
        for (int i = 0; i < w->n; i++) {
            p->vx[i] += ((p->x[i] - p->px[i]) - w->nx[i]) * inv;
            p->vy[i] += ((p->y[i] - p->py[i]) - w->ny[i]) * inv;
            p->vz[i] += ((p->z[i] - p->pz[i]) - w->nz[i]) * inv;
            p->x[i] = fminf(fmaxf(p->x[i], w->lo.x), w->hi.x);
            p->y[i] = fminf(fmaxf(p->y[i], w->lo.y), w->hi.y);
            p->z[i] = fminf(fmaxf(p->z[i], w->lo.z), w->hi.z);
        }
        ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
    }

    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += u->nonfinite[k], u->nonfinite[k] = 0;
        w->st.escapes_clamped += u->clamped[k], u->clamped[k] = 0;
        w->st.springs_refused += u->refused[k], u->refused[k] = 0;
    }
    w->st.solver_iterations = nsub;
    w->st.sim_time += w->dt;
    w->st.step_ms = fs__now_ms() - t0;
}

/* ---- lifetime --------------------------------------------------------------- */
static void unified_detach(fs_world *w) {
    ustate *u = st_of(w);
    if (!u) return;
    free(u->uid), free(u->was), free(u->bn), free(u->bj), free(u->rx), free(u->ry), free(u->rz), free(u->ep);
    free(u->vbar), free(u->comp), free(u->uf);
    free(u->rho), free(u->prs), free(u->ax), free(u->ay), free(u->az), free(u->nu), free(u->young), free(u->cut);
    free(u->A), free(u->kind), free(u->fresh), free(u->hasA), free(u->rb);
    free(u->q), free(u->mu), free(u->ms), free(u->ri), free(u->lab);
    free(u);
    w->solver_state = NULL;
}

static fs_status unified_attach(fs_world *w, fs_error *err) {
    ustate *u = calloc(1, sizeof *u);
    if (!u) goto nomem;
    w->solver_state = u;
    size_t n = (size_t)w->cap, f = sizeof(float) * n;
    u->uid = malloc(sizeof(uint32_t) * n), u->was = calloc(n, 1), u->bn = calloc(n, 1);
    u->bj = malloc(sizeof(int32_t) * n * KB);
    u->rx = malloc(f * KB), u->ry = malloc(f * KB), u->rz = malloc(f * KB);
    u->ep = calloc(n * 6, sizeof(float));
    u->vbar = calloc(n, sizeof(float)), u->comp = malloc(sizeof(int32_t) * n), u->uf = malloc(sizeof(int32_t) * n);
    u->rho = malloc(f), u->prs = malloc(f), u->ax = malloc(f), u->ay = malloc(f), u->az = malloc(f);
    u->nu = malloc(f), u->young = malloc(f), u->cut = malloc(f);
    u->A = malloc(f * 9), u->kind = calloc(n, 1), u->fresh = calloc(n, 1), u->hasA = calloc(n, 1);
    u->rb = malloc(sizeof(double) * RB_N * n);
    u->q = malloc(f), u->mu = malloc(f), u->ms = malloc(f), u->ri = malloc(f), u->lab = malloc(sizeof(int32_t) * n);
    if (!(u->q && u->mu && u->ms && u->ri && u->lab && u->uid && u->bj && u->rx && u->ry && u->rz && u->ep &&
          u->vbar && u->comp && u->uf && u->rho && u->prs &&
          u->ax && u->ay && u->az && u->nu && u->young && u->cut && u->A && u->kind && u->fresh && u->hasA && u->rb &&
          u->was && u->bn)) {
        unified_detach(w);
        goto nomem;
    }
    for (size_t s = 0; s < n; s++) u->uid[s] = STALE, u->comp[s] = -1;
    u->cfl = CFL;
    return FS_OK;
nomem:
    if (err) snprintf(err->msg, sizeof err->msg, "unified solver: out of memory for %d particles", w->cap);
    return FS_ERR_NOMEM;
}

/* Reference shapes from the current configuration: every solid particle
 * takes its solid neighbours within h as body neighbours. */
static void unified_prepare(fs_world *w) {
    ustate *u = st_of(w);
    if (!u) return;
    /* free slots (all of them after a reset, which restarts the ids) hold
     * no state */
    for (int s = 0; s < w->cap; s++)
        if (w->slot_index[s] < 0) u->uid[s] = STALE, u->bn[s] = 0, u->was[s] = 0;
    fs__grid_build(w);
    uctx c;
    memset(&c, 0, sizeof c);
    c.w = w, c.u = u, c.prepare = true;
    uconst_init(w, &c.c);
    topology(w, &c);
}

/* drop every reference to the removed slot */
static void unified_removed(fs_world *w, int slot) {
    ustate *u = st_of(w);
    if (!u) return;
    const int32_t *J = u->bj + (size_t)slot * KB;
    for (int k = 0; k < u->bn[slot]; k++) {
        int t = J[k], n = u->bn[t];
        int32_t *T = u->bj + (size_t)t * KB;
        float *RX = u->rx + (size_t)t * KB, *RY = u->ry + (size_t)t * KB, *RZ = u->rz + (size_t)t * KB;
        for (int q = 0; q < n; q++) {
            if (T[q] != slot) continue;
            size_t rest = (size_t)(n - q - 1);
            memmove(T + q, T + q + 1, rest * sizeof *T);
            memmove(RX + q, RX + q + 1, rest * sizeof *RX);
            memmove(RY + q, RY + q + 1, rest * sizeof *RY);
            memmove(RZ + q, RZ + q + 1, rest * sizeof *RZ);
            u->bn[t] = (uint8_t)(n - 1);
            break;
        }
    }
    u->bn[slot] = 0, u->uid[slot] = STALE, u->was[slot] = 0;
}

/* ---- snapshot section ---------------------------------------------------------
 * u32 magic, u32 KB, u32 count; then per live particle in index order: i32
 * slot, u32 uid, u8 was, u8 bn, bn x (i32 partner slot, 3 f32 reference),
 * 6 f32 plastic strain. */
static size_t put(uint8_t *buf, size_t at, size_t cap, const void *v, size_t n) {
    if (buf && at + n <= cap) memcpy(buf + at, v, n);
    return at + n;
}

static size_t unified_state_write(const fs_world *w, void *vbuf, size_t cap) {
    const ustate *u = st_of(w);
    uint8_t *buf = vbuf;
    size_t at = 0;
    uint32_t hdr[3] = {SNAP_MAGIC_U, KB, (uint32_t)w->n};
    at = put(buf, at, cap, hdr, sizeof hdr);
    for (int i = 0; i < w->n; i++) {
        int32_t s = w->p.slot[i];
        uint8_t was = u ? u->was[s] : 0, bn = u ? u->bn[s] : 0;
        uint32_t uid = u ? u->uid[s] : STALE;
        at = put(buf, at, cap, &s, 4);
        at = put(buf, at, cap, &uid, 4);
        at = put(buf, at, cap, &was, 1);
        at = put(buf, at, cap, &bn, 1);
        for (int k = 0; k < bn; k++) {
            size_t q = (size_t)s * KB + (size_t)k;
            at = put(buf, at, cap, &u->bj[q], 4);
            at = put(buf, at, cap, &u->rx[q], 4);
            at = put(buf, at, cap, &u->ry[q], 4);
            at = put(buf, at, cap, &u->rz[q], 4);
        }
        float ep[6] = {0};
        if (u) memcpy(ep, u->ep + (size_t)s * 6, sizeof ep);
        at = put(buf, at, cap, ep, sizeof ep);
    }
    return at;
}

static fs_status bad(fs_error *err, const char *what, long a) {
    if (err) snprintf(err->msg, sizeof err->msg, "snapshot: unified solver state: %s (%ld)", what, a);
    return FS_ERR_ARG;
}

static fs_status unified_state_read(fs_world *w, const void *vbuf, size_t n, const fs__restore_ctx *rc, fs_error *err) {
    const bool apply = rc->apply;
    const float rmax = 100.0f * rc->dom->h;
    const uint8_t *b = vbuf;
    size_t at = 0;
#define TAKE(dst, len)                                         \
    do {                                                       \
        if (at + (len) > n) return bad(err, "truncated at byte", (long)at); \
        memcpy((dst), b + at, (len));                          \
        at += (len);                                           \
    } while (0)
    uint32_t hdr[3];
    TAKE(hdr, sizeof hdr);
    if (hdr[0] != SNAP_MAGIC_U) return bad(err, "wrong magic", (long)hdr[0]);
    if (hdr[1] != KB) return bad(err, "body neighbours per particle differ", (long)hdr[1]);
    if (hdr[2] != (uint32_t)rc->particles) return bad(err, "not one entry per particle", (long)hdr[2]);
    ustate *u = st_of(w);
    if (apply) {
        if (!u) return bad(err, "solver not attached", 0);
        for (int s = 0; s < w->cap; s++) u->uid[s] = STALE, u->bn[s] = 0, u->was[s] = 0;
    }
    for (uint32_t i = 0; i < hdr[2]; i++) {
        int32_t s;
        uint32_t uid;
        uint8_t was, bn;
        TAKE(&s, 4);
        TAKE(&uid, 4);
        TAKE(&was, 1);
        TAKE(&bn, 1);
        if (s < 0 || s >= w->cap) return bad(err, "slot out of range", (long)s);
        if (was > 1) return bad(err, "bad phase flag", (long)was);
        if (bn > KB) return bad(err, "too many body neighbours", (long)bn);
        int32_t prev = -1;
        for (int k = 0; k < bn; k++) {
            int32_t j;
            float r[3];
            TAKE(&j, 4);
            TAKE(r, sizeof r);
            /* the lists are sorted (fs__sorted_has bisects them) */
            if (j < 0 || j >= w->cap || j == s || j <= prev)
                return bad(err, "body neighbour slot out of range or out of order", (long)j);
            prev = j;
            if (!(fabsf(r[0]) <= rmax && fabsf(r[1]) <= rmax && fabsf(r[2]) <= rmax))
                return bad(err, "reference vector not finite or longer than 100 h", (long)i);
            if (apply) {
                size_t q = (size_t)s * KB + (size_t)k;
                u->bj[q] = j, u->rx[q] = r[0], u->ry[q] = r[1], u->rz[q] = r[2];
            }
        }
        float ep[6];
        TAKE(ep, sizeof ep);
        for (int q = 0; q < 6; q++)
            if (!(fabsf(ep[q]) <= 1e6f)) return bad(err, "plastic strain not finite or above 1e6", (long)i);
        if (apply) {
            u->uid[s] = uid, u->was[s] = was, u->bn[s] = bn;
            memcpy(u->ep + (size_t)s * 6, ep, sizeof ep);
        }
    }
#undef TAKE
    if (at != n) return bad(err, "trailing bytes", (long)(n - at));
    return FS_OK;
}

/* ---- diagnostics for tests and benchmarks ------------------------------------ */
void fs__unified_set_cfl(fs_world *w, float cfl) {
    ustate *u = st_of(w);
    if (u && w->solver == FS_SOLVER_UNIFIED && cfl > 0) u->cfl = cfl;
}

int fs__unified_last_substeps(const fs_world *w, float *dt) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (dt) *dt = u ? u->last_dt : 0;
    return u ? u->last_sub : 0;
}

/* Density against rest density (rho / rho-hat) at the last internal step,
 * over the particles with at least 20 neighbours (not at a free surface):
 * the mean, and the largest through *max. */
float fs__unified_density_ratio(const fs_world *w, float *max) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (max) *max = 0;
    if (!u) return 0;
    double sum = 0;
    float big = 0;
    int cnt = 0;
    for (int i = 0; i < w->n; i++) {
        if (w->nb_n[i] >= 0 && w->nb_n[i] < 20) continue;
        float q = u->rho[i] / w->mat[w->p.mat[i]].p[FS_P_MASS_DENSITY];
        sum += q, cnt++;
        big = q > big ? q : big;
    }
    if (max) *max = big;
    return cnt ? (float)(sum / cnt) : 0;
}

/* Connected components of the body-neighbour graph among particles that
 * have at least one body neighbour (isolated solid particles are not
 * counted); *pairs gets the number of pairs, *largest the biggest size. */
int fs__unified_components(fs_world *w, int *pairs, int *largest) {
    ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (pairs) *pairs = 0;
    if (largest) *largest = 0;
    if (!u) return 0;
    const fs_particles *p = &w->p;
    long np = 0;
    for (int i = 0; i < w->n; i++) u->uf[p->slot[i]] = p->slot[i], u->comp[p->slot[i]] = 0;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        np += u->bn[s];
        for (int k = 0; k < u->bn[s]; k++) {
            int32_t a = uf_find(u->uf, s), c = uf_find(u->uf, u->bj[(size_t)s * KB + k]);
            if (a < c)
                u->uf[c] = a;
            else if (c < a)
                u->uf[a] = c;
        }
    }
    int nc = 0, big = 0;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        if (!u->bn[s]) continue;
        int r = uf_find(u->uf, s);
        if (u->comp[r] == 0) nc++;
        u->comp[r]++;
        if (u->comp[r] > big) big = u->comp[r];
    }
    for (int i = 0; i < w->n; i++) u->comp[p->slot[i]] = -1; /* the next step relabels */
    if (pairs) *pairs = (int)(np / 2);
    if (largest) *largest = big;
    return nc;
}

/* Largest Frobenius norm of the Green-Saint-Venant strain over the elastic
 * particles (positions now, reference shapes as stored). */
float fs__unified_max_strain(const fs_world *w) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (!u) return 0;
    uconst c;
    uconst_init(w, &c);
    const fs_particles *p = &w->p;
    float worst = 0;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i], nb = u->bn[s];
        if (!nb) continue;
        float G[3][3] = {{0}};
        for (int k = 0; k < nb; k++) {
            size_t q = (size_t)s * KB + (size_t)k;
            int j = w->slot_index[u->bj[q]];
            float L = sqrtf(u->rx[q] * u->rx[q] + u->ry[q] * u->ry[q] + u->rz[q] * u->rz[q]);
            if (j < 0 || !(L > 1e-9f) || L >= c.h) continue; /* a partner gone since the last prune */
            float gm = u->vbar[u->bj[q]] * c.cg * cos_g(L, c.h) / L;
            float d[3] = {gm * u->rx[q], gm * u->ry[q], gm * u->rz[q]};
            float uj[3] = {p->x[j] - p->x[i] - u->rx[q], p->y[j] - p->y[i] - u->ry[q], p->z[j] - p->z[i] - u->rz[q]};
            for (int a = 0; a < 3; a++)
                for (int bb = 0; bb < 3; bb++) G[a][bb] += d[a] * uj[bb];
        }
        float sum = 0;
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) {
                float e = 0.5f * (G[a][bb] + G[bb][a] + G[a][0] * G[bb][0] + G[a][1] * G[bb][1] + G[a][2] * G[bb][2]);
                sum += e * e;
            }
        worst = fmaxf(worst, sqrtf(sum));
    }
    return worst;
}

const fs_solver_ops fs__unified_ops = {
    .name = "unified",
    .doc = "Solenthaler, Schlafli, Pajarola 2007: SPH liquids, elastic and rigid bodies, melting and solidification",
    .attach = unified_attach,
    .detach = unified_detach,
    .prepare = unified_prepare,
    .step = unified_step,
    .removed = unified_removed,
    .state_write = unified_state_write,
    .state_read = unified_state_read,
};
