/* unified_internal.h - what the unified solver's files share: its
 * constants, its state behind w->solver_state, the per-step constants and
 * context, the kernels of Eq. 17, and the entry points of unified_phase.c,
 * unified_elastic.c and unified_rigid.c.  Internal to server/sim; the
 * choices behind the constants are in docs/sim-notes.md ("Unified solver"). */
#ifndef FS_UNIFIED_INTERNAL_H
#define FS_UNIFIED_INTERNAL_H

#include <math.h>

#include "bodies.h"
#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "solver_table.h"
#include "sources.h"
#include "tasks.h"

#define KB 40                    /* body neighbours per particle */
#define SOUND 25.0f              /* m/s: c of the equation of state, k = c^2 (Eq. 9) */
#define CFL 0.4f                 /* fraction of h a wave crosses per internal step */
#define VISC_LIM 0.1f            /* viscous limit dt <= VISC_LIM h^2 / nu */
#define MAX_SUB 64               /* internal steps per step of w->dt at most */
#define NU_NUMERIC 0.001f        /* m^2/s: floor on the viscosity (numerical: damps the sloshing of 8 cm particles) */
#define WALL_K 4.0f              /* wall stiffness in (c/h)^2 */
#define WALL_TAB 64              /* samples of the wall tables */
#define STALE 0xFFFFFFFFu        /* uid of a slot whose state belongs to no live particle */
#define SNAP_MAGIC_U 0x31494E55u /* "UNI1" */

enum { LIQUID = 0, ELASTIC = 1, RIGID = 2 };

/* ---- state ----------------------------------------------------------------- */
/* Behind w->solver_state.  Touched by the thread that owns the world and,
 * during a step, by the pool's workers through fs__run: each task writes
 * only its own particles' entries (per index, or per slot of its own
 * particles) and its own worker's counters. */
typedef struct ustate {
    /* per storage slot (kept across steps, in snapshots) */
    uint32_t *uid;       /* the particle id the slot's state belongs to (STALE: none) */
    uint8_t *was;        /* 1: solid (s > 0) at the last phase update */
    uint8_t *bn;         /* body neighbours */
    int32_t *bj;         /* [slot * KB + k]: partner slot, sorted */
    float *rx, *ry, *rz; /* reference vector X_j - X_i */
    float *ep;           /* plastic strain, 6 per slot (xx yy zz xy yz zx) */
    /* per slot, derived every step */
    float *vbar;   /* body volume, Eq. 11 */
    int32_t *comp; /* rigid body of the slot, -1 */
    int32_t *uf;   /* union-find parent */
    /* per slot, the state of this step (Fig. 5) */
    float *nu, *young;
    uint8_t *kind;
    /* per index, scratch of one grid order */
    float *rho, *prs, *ax, *ay, *az, *cut;
    float *q, *mu, *ms, *ri; /* p / rho^2, dynamic viscosity, mass, mass / rho */
    int32_t *lab;            /* rigid body (comp of the slot) */
    float *A;                /* 9 per index: -vbar (I + grad u^T) sigma, Eq. 12 */
    uint8_t *fresh, *hasA;
    /* rigid bodies, per component: 24 doubles */
    double *rb;
    int ncomp;
    /* diagnostics and knobs */
    float cfl;    /* CFL factor (tests and benchmarks may lower or raise it) */
    int last_sub; /* internal steps of the last step */
    float last_dt;
    uint64_t refused[FS_MAX_WORKERS], nonfinite[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS];
    float vmax[FS_MAX_WORKERS], numax[FS_MAX_WORKERS], cmax[FS_MAX_WORKERS];
    float drift[FS_MAX_WORKERS]; /* farthest a particle lies outside its grid cell after an internal step */
    int anynew[FS_MAX_WORKERS], anysolid[FS_MAX_WORKERS], anyrigid[FS_MAX_WORKERS];
} ustate;

/* rigid component record layout */
enum { RB_M = 0, RB_S = 1, RB_P = 4, RB_F = 7, RB_L = 10, RB_T = 13, RB_I = 16, RB_N = 24 };
/* after the solve: RB_S holds the centre of mass, RB_P the velocity, RB_L the
 * angular velocity and the rotation's rows sit at RB_F, RB_T and RB_I */

static inline ustate *st_of(const fs_world *w) {
    return (ustate *)w->solver_state;
}

/* ---- per-step constants ---------------------------------------------------- */
typedef struct uconst {
    float mass[FS_MAX_MATERIALS], rho0[FS_MAX_MATERIALS], mu_l[FS_MAX_MATERIALS], nu_l[FS_MAX_MATERIALS],
        nu_s[FS_MAX_MATERIALS], E[FS_MAX_MATERIALS], pois[FS_MAX_MATERIALS], elim[FS_MAX_MATERIALS],
        plim[FS_MAX_MATERIALS], frac[FS_MAX_MATERIALS], tsolid[FS_MAX_MATERIALS], tmelt[FS_MAX_MATERIALS],
        diff[FS_MAX_MATERIALS], mu[FS_MAX_MATERIALS];
    float stick_d[FS_MAX_MATERIALS], stick_k[FS_MAX_MATERIALS]; /* Eq. 12 of Clavet 2005 [m, 1/s^2]: obstacles */
    uint8_t phase[FS_MAX_MATERIALS], rigid[FS_MAX_MATERIALS], always_solid[FS_MAX_MATERIALS];
    bool heat;
    float h, h2, inv_h, s, k;
    float w6;                     /* density kernel (h - r)^3 normalisation: Eq. 4 gives rho-hat on the lattice */
    float gsp;                    /* its gradient's, 3 w6: the pressure force is the gradient of the density */
    float lap;                    /* viscosity Laplacian (h - r) normalisation (= w->lap_norm / s^3) */
    float cw, cg;                 /* cosine kernel (Eq. 17) value and gradient normalisations */
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
    bool prepare; /* phase task: every solid particle starts afresh */
    bool any_new;
} uctx;

/* Opens a pass over particles [b, e) that fs__run calls with (b, e, worker,
 * vctx): names its context x, the world w, the solver state u, the
 * per-step constants c and the particles p (each pass uses some of them). */
#define UNIFIED_TASK(vctx, worker)                                                                                     \
    uctx *const x = (uctx *)(vctx);                                                                                    \
    fs_world *const w = x->w;                                                                                          \
    ustate *const u = x->u;                                                                                            \
    const uconst *const c = &x->c;                                                                                     \
    fs_particles *const p = &w->p;                                                                                     \
    (void)(worker), (void)u, (void)c, (void)p

/* cosine kernel of Eq. 17, without its constant: (2h/pi)(cos((r+h) pi / 2h) + 1),
 * and its derivative's magnitude sin((r+h) pi / 2h) */
static inline float cos_w(float r, float h) {
    return (2.0f * h / 3.14159265f) * (cosf((r + h) * 3.14159265f / (2.0f * h)) + 1.0f);
}
static inline float cos_g(float r, float h) {
    return sinf((r + h) * 3.14159265f / (2.0f * h));
}

/* unified_phase.c: phase state (Fig. 5) and body neighbours, once per step */
void fs__unified_topology(fs_world *w, uctx *x);

/* unified_elastic.c: strain, plasticity and stress (Eq. 12-17) */
/* G[a][b] = grad u of the particle at index i (Eq. 14-16) over its body
 * neighbours, at the positions now */
void fs__unified_grad_u(const fs_world *w, const ustate *u, const uconst *c, int i, float G[3][3]);
/* Green-Saint-Venant strain eps = (G + G^T + G G^T) / 2 */
void fs__unified_strain(float G[3][3], float eps[3][3]);
/* The matrix of Eq. 12 (u->A, u->hasA set) of the particle at index i, an
 * elastic one (kind ELASTIC, a body neighbour, a Young's modulus) */
void fs__unified_elastic_stress(const uctx *x, int i);

/* unified_rigid.c: rigid bodies (Eq. 18-20) as connected components */
void fs__unified_rigid_label(fs_world *w, ustate *u);
void fs__unified_rigid_solve(fs_world *w, uctx *x);
void fs__unified_rigid_move_task(int b, int e, int worker, void *vctx);

#endif
