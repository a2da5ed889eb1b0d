/* mps_internal.h - what the MPS solver's files share: its constants, its
 * state behind w->solver_state, the per-call context of a step, the kernel
 * (Eq. 3) and the entry points of mps_walls.c, mps_pressure.c and
 * mps_tension.c.  Internal to server/sim; the choices behind the constants
 * are in docs/sim-notes.md ("MPS"). */
#ifndef FS_MPS_INTERNAL_H
#define FS_MPS_INTERNAL_H

#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "particles.h"
#include "solver_table.h"
#include "sources.h"
#include "sparse.h"
#include "tasks.h"

#define RE_N 2.1f                  /* r_e of n and grad, in l0 */
#define RE_LAP 3.1f                /* r_e of the Laplacian, in l0 (capped at h) */
#define BETA 0.97f                 /* Eq. 18 */
#define COURANT 1.0f               /* dt <= COURANT l0 / u_max (docs/sim-notes.md, "Time step") */
#define SUB_FILL 0.9f              /* sub-steps of SUB_FILL x the limits, the rest of a call carried to the next ... */
#define SUB_CATCH 0.9f             /* ... or, where as many fit at SUB_CATCH x the limits, the call's whole time */
#define CALM_SAVED_MAX 30          /* an "MPS2" snapshot's run of calm calls is below this (what older builds wrote) */
#define FORCE_LIMIT 0.25f          /* dt <= FORCE_LIMIT sqrt(l0 / |g|): the force condition (Morris, Fox & Zhu 1997) */
#define VISC_LIMIT 0.25f           /* dt <= VISC_LIMIT l0^2 / nu_max (explicit Eq. 7 is stable to ~0.5) */
#define MAX_SUB 200                /* sub-steps per call, at most */
#define NB_MAX 224                 /* fluid neighbours within h the list pass packs the near list from */
#define NN_MAX 176                 /* ... of them within NEAR l0: the 2.1 l0 passes (122 on the lattice) */
#define LANES 8                    /* the pair passes run in whole vectors of this many pairs (lanes_sum) */
#define NN_STRIDE (NN_MAX + LANES) /* ... stored this far apart: a pass in whole vectors may write past the last */
#define WALL_BUF 1024              /* wall particles within h of a particle, at most (list_task) */
#define WALL_PIECE 256             /* ... scanned at most this many candidates at a time */
/* The lists at r^n hold every pair that a sub-step's r* brings within 2.1 l0 (NEAR) or COLLIDE_DIST (CLOSE) while
 * no pair's separation changes by more than their reach, NEAR - 2.1 = CLOSE - COLLIDE_DIST = 1.0 l0, in it;
 * reach_ok checks that, and a sub-step that fails it is cut in two (docs/sim-notes.md, "Time step") */
#define NEAR 3.1f
#define CLOSE 1.5f
#define REACH_MIN 0.5f         /* l0: a smaller reach (h < 2.6 l0) is not checked ... */
#define COURANT_UNCHECKED 0.5f /* ... and the sub-steps keep this Courant number */
#define REACH_BLOCKS 2         /* reach_ok compares displacements over this many blocks (h wide) either way */
#define REACH_CUTS 4           /* a sub-step is cut in two at most this many times in a row; past that it is taken */
/* A particle with no obstacle's wall particle within NEAR at r^n ("clear") may have moved this many reaches by
 * r^{n+1}, the pressure's correction included (moved_ok; docs/sim-notes.md, "Time step") */
#define CLEAR_REACH 2.0f
#define NC_MAX 48      /* pairs within CLOSE l0 kept per particle (the lattice has 6, and walls add some) */
#define WALL_LAYERS 2  /* layers of wall particles (docs/sim-notes.md, "Walls") */
#define NNZ_PER_ROW 64 /* matrix room per row, on average (~33 at rest) */
#define RMIN 0.3f      /* w(r) is evaluated at r >= RMIN l0: one close pair adds at most re/RMIN - 1 (6) to n */
#define RAIL 0.25f     /* l0: how close to a face of the box a centre may come */
/* cells of its field: how close to a mesh obstacle's surface a centre may come.  The field is trilinear between
 * exact samples of a distance, so it reads a point farther out than it is by at most the mean distance to its
 * cell's corners (sqrt(3) / 2 of a cell, at the centre); at an axis-aligned convex corner by 3/8.  Near a
 * turned cube's edge a centre inside the mesh read 0.37 of a cell out, so 3/8 is not enough; sqrt(3) / 2 holds
 * water resting on an obstacle off it (a tank's pressure 2.6% off); 1/2 keeps every centre of the tests out
 * (docs/sim-notes.md, "Walls") */
#define MESH_RAIL 0.5f
#define PMIN_R 1.1f        /* l0: p^_i of Eq. 5 is the least pressure within this (the six nearest on the lattice) */
#define PMIN_MARGIN 0.2f   /* rho |g| l0: the split gradient's p^_i lies this far under the least (sim-notes.md) */
#define SURF_DEPTH 0.5f    /* l0: a free-surface particle's centre lies this far under the surface (Eq. 18's value) */
#define SURF_ASYM 0.2f     /* Eq. 18's particles: |sum w r^_ij| / sum w at least this (a flat face 0.29, a gap 0.08) */
#define SURF_SPARSE 0.8f   /* ... or n* under this times n0, or next to one that is */
#define ST_ONE_SIDED 0.25f /* Appendix A acts where |sum r_ij w| >= this * sum |r_ij| w (a flat face: 0.3-0.4) */
#define SHIFT_RATE 0.3f    /* particle shifting: relaxations per sqrt(l0 / g) (docs/sim-notes.md) */
#define SHIFT_MAX 0.3f     /* ... at most this fraction of the full step a sub-step (0.6 blew up) */
#define COLLIDE_DIST 0.5f  /* l0 */
#define COLLIDE_E 0.2f
/* Relaxation of Eq. 14's source (1: the equation as printed; Koshizuka's
 * group often uses 0.2; docs/sim-notes.md) */
#define RELAX 0.5
#define MAX_SOURCE 0.1          /* largest (n* - n0) / n0 Eq. 14 acts on in one sub-step */
#define COMPRESSIBILITY 0.45e-9 /* 1/Pa, water */
#define MAX_OBST 8
/* CG's relative residual |b - A p| / |b|.  With Eq. 5 of the dynamic pressure three still tanks and the dam
 * break read the same at 1e-3 as at 1e-4, in a quarter fewer iterations (docs/sim-notes.md, "The pressure
 * solve") */
#define CG_TOL 1e-3
/* CG's preconditioner: modified DIC, this much of the dropped fill on the diagonal (docs/sim-notes.md) */
#define MIC_OMEGA 0.9
#define CG_MAXIT 600

typedef struct mps_obst {
    fs_vec3 lo, hi;
} mps_obst;

typedef struct mps_state {
    /* per storage slot, kept across steps: last pressure (warm start) */
    float *p_slot;
    /* per storage slot, within a step: Eq. 21's dT/dt from the first sub-step
     * (by slot: the sub-steps' grid builds reorder the particles) */
    float *dT_slot;
    /* per particle, current order, one sub-step */
    float *lx, *ly, *lz; /* Eq. 7's viscous acceleration at r^n, from the list pass */
    int32_t *nn;         /* [i * NN_STRIDE]: the fluid within NEAR l0 at r^n in the scan's order, then cap + wall
                          * index (both layers, grid order): n, collisions, surface tension; after nstar_task,
                          * those within r_e at r* (first-layer walls only: Eq. 14, Eq. 5) */
    int16_t *nn_f, *nn_t;
    int32_t *nc;       /* [i * NC_MAX]: the near list's pairs within CLOSE l0 at r^n, in its order (collisions) */
    int16_t *nc_n;     /* their count; -1: more than NC_MAX (collide_task then walks the near list) */
    float *nr;         /* [i * NN_STRIDE]: |r*_ij| of those, from nstar_task */
    float *nst, *nst1; /* n* (Eq. 14); n^st1 (Eq. 34) */
    float *nrn;        /* n at r^n (the list pass): the density error a sub-step starts from; surface tension's test */
    uint8_t *outer;    /* n* < beta n0 and one-sided or sparse: Eq. 18's surface before its neighbours join it */
    uint8_t *clear;    /* no obstacle's wall particle within NEAR at r^n (the list pass): CLEAR_REACH applies */
    float *press;      /* pressure, Pa */
    int32_t *row;      /* unknown of particle i, or -1 (free surface) */
    float *rho;        /* per particle this sub-step */
    float *ux0, *uy0, *uz0; /* u^n, from the list pass: a sub-step cut in two starts again from it (and p.px: r^n) */
    /* reach_ok's displacement bounds: per block of 2 x 2 x 2 grid cells, the least and the most of each
     * component (6 floats), then the same over the blocks within REACH_BLOCKS; two sets of reach_cap blocks */
    float *reach;
    long reach_cap;
    /* walls: WALL_LAYERS layers of fixed particles (mps_walls.c) */
    int nwall, wall_cap;
    float *wx, *wy, *wz;
    int32_t *wlayer; /* 1: the first layer (Eq. 5, 7, no-slip), 2: a dummy (n only); 32 bits: the list pass
                      * gathers it in whole vectors */
    /* the wall grid: cells of h / 2 over the box grown by WALL_LAYERS l0;
     * the walls are stored in its cell order, cell c holding [wg_start[c], wg_start[c + 1]) */
    float wg_lo[3], wg_inv;
    int wg_n[3];
    int32_t *wg_start;
    uint8_t *wg_near; /* per cell: a wall particle lies within two cells along each axis (wall_rows' reach) */
    /* the pressure Poisson equation */
    fs_csr A;
    fs_pcg pcg;
    double *b, *x;
    int32_t *rnnz;
    int rows_cap;
    /* the rows' blocks for the two-thread MIC sweeps (sparse.h, fs_pcg): FS_PCG_PARTS a layer of cells
     * along z, and the unknowns' counts by cell along x and y (number_rows) */
    int32_t *blk, *hist;
    _Atomic int *blk_state;
    int blk_layers, hist_cap;
    /* constants */
    float l0, h, re_n, re_l, re_st, n0, n0l, lambda, lambda_n, nst_flat;
    uint32_t built_epoch; /* walls built for this reset of the world ... */
    fs_domain built_dom;  /* ... and this domain */
    int built_nobst;
    uint32_t built_mesh_gen; /* ... and this state of the world's mesh obstacles (w->obstacles_gen) */
    bool built;
    mps_obst obst[MAX_OBST];
    int nobst;
    uint32_t obst_epoch;
    int substeps; /* the sub-steps the last call planned (plan_substeps) */
    /* how far the particles trail the world's clock: less than a sub-step (plan_substeps; kept across steps and
     * in snapshots) [s] */
    float behind;
    int taken;                   /* the sub-steps the last call took (substeps, and more where one was cut in two) */
    uint64_t cuts;               /* sub-steps cut in two (reach_ok), over the world's life */
    uint64_t far;                /* sub-steps kept with a clear particle past the reach at r^{n+1} (moved_ok), ditto */
    uint64_t overrun;            /* sub-steps taken after REACH_CUTS cuts without passing reach_ok and moved_ok */
    bool check_lists, unchecked; /* fs__mps_check_lists (sim_testing.h): for tests */
    uint64_t missed;
    uint32_t wall_builds; /* fs__mps_build_walls's builds (fs__mps_wall_builds) */
    /* diagnostics */
    int unknowns, surface, shrunk; /* shrunk: solves skipped for want of matrix room */
    float dt_sub;
} mps_state;

static inline mps_state *state_of(const fs_world *w) {
    return (mps_state *)w->solver_state;
}

/* The sum of a pass's 8 lane sums, in a fixed order (the passes run in
 * whole vectors of 8 pairs, the lanes past a list's end masked). */
static inline float lanes_sum(const float a[LANES]) {
    _Static_assert(LANES == 8, "lanes_sum adds 8 lanes");
    return ((a[0] + a[1]) + (a[2] + a[3])) + ((a[4] + a[5]) + (a[6] + a[7]));
}

/* Eq. 3 with the -1 that makes it continuous at r_e, r clamped to rmin */
static inline float weight(float r, float re, float rmin) {
    const float v = re / (r > rmin ? r : rmin) - 1.0f;
    return r < re ? v : 0.0f;
}

/* The wall particles that may lie within sqrt(h2) <= h of a point: of the
 * wall grid's cells within two of its cell (5 x 5 x 5), the rows along x
 * whose (y, z) extent comes within sqrt(h2), as ranges [b, e) of wall
 * particles (a row's cells are adjacent in the walls' order), z slowest;
 * returns how many.  (Cutting each row to the sphere's chord saved scalar
 * distance tests; for the AVX2 scan the cut cost more than it saved.) */
static inline int wall_rows(const mps_state *s, float x, float y, float z, float h2, int32_t b[25], int32_t e[25]) {
    const float p[3] = {x, y, z}, cs = 1.0f / s->wg_inv;
    int c[3];
    for (int a = 0; a < 3; a++) c[a] = fs__floor_clamp((p[a] - s->wg_lo[a]) * s->wg_inv, 0, s->wg_n[a] - 1);
    if (!s->wg_near[((long)c[2] * s->wg_n[1] + c[1]) * s->wg_n[0] + c[0]]) return 0; /* no wall within reach */
    int n = 0;
    for (int k = c[2] - 2; k <= c[2] + 2; k++) {
        if (k < 0 || k >= s->wg_n[2]) continue;
        const float z0 = s->wg_lo[2] + (float)k * cs, dz = z < z0 ? z0 - z : (z > z0 + cs ? z - z0 - cs : 0.0f);
        for (int j = c[1] - 2; j <= c[1] + 2; j++) {
            if (j < 0 || j >= s->wg_n[1]) continue;
            const float y0 = s->wg_lo[1] + (float)j * cs, dy = y < y0 ? y0 - y : (y > y0 + cs ? y - y0 - cs : 0.0f);
            const float d2 = dy * dy + dz * dz;
            if (d2 >= h2) continue;
            const int i0 = c[0] - 2 > 0 ? c[0] - 2 : 0, i1 = c[0] + 2 < s->wg_n[0] - 1 ? c[0] + 2 : s->wg_n[0] - 1;
            const int g = (k * s->wg_n[1] + j) * s->wg_n[0];
            b[n] = s->wg_start[g + i0], e[n] = s->wg_start[g + i1 + 1];
            n += e[n] > b[n];
        }
    }
    return n;
}

/* How far ahead (in particles) a pass over the pair lists asks for the next
 * one's lines (prefetch_list). */
#define PREFETCH_AHEAD 2

/* Asks for the lines holding the first m entries of particle i's pair list
 * (and, with dist, of their distances) ahead of a pass over them: the lists
 * lie NN_STRIDE apart, a stride the hardware's prefetchers do not follow
 * from the passes' loops (the first load of a list took 36-80% of a pass's
 * samples without it). */
static inline void prefetch_list(const mps_state *s, int i, int m, bool dist) {
    const char *l = (const char *)(s->nn + (size_t)i * NN_STRIDE), *r = (const char *)(s->nr + (size_t)i * NN_STRIDE);
    for (int k = 0; k < 4 * m; k += 64) {
        __builtin_prefetch(l + k);
        if (dist) __builtin_prefetch(r + k);
    }
}

typedef struct mconst {
    float rho[FS_MAX_MATERIALS], nu[FS_MAX_MATERIALS], sigma[FS_MAX_MATERIALS], diff[FS_MAX_MATERIALS];
    bool heat, tension;
    bool present[FS_MAX_MATERIALS]; /* a particle of this material is in the world */
    bool one_diff; /* the materials present have one diff (Eq. 21 then needs no neighbour's material) */
} mconst;

typedef struct ctx {
    fs_world *w;
    mps_state *s;
    mconst m;
    float dt, h2, near2, close2, rmin;
    float dt_lim;  /* the longest sub-step the limits allow this call (substep_limit): the density error's time scale */
    bool heat_now; /* the first sub-step sums Eq. 21; the rate holds for the whole w->dt, as in the Clavet solver */
    float lap_k;   /* 2d / (lambda n0_lap), Eq. 7, viscosity */
    float ppe_k;   /* 2d / (lambda_n n0), Eq. 7 in Eq. 14 */
    float grad_k;  /* d / n0, Eq. 5 */
    float gmag;    /* |g| */
    int rows;      /* the unknowns of this sub-step's solve (mps_pressure.c) */
    float reach;   /* how far a pair's separation may change in a sub-step with the lists still whole (reach_ok) */
    bool checked;  /* reach_ok and moved_ok apply (reach >= REACH_MIN l0) */
    int max_cuts;  /* how many more times this sub-step may be cut in two */
    uint64_t bad[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS], full[FS_MAX_WORKERS];
} ctx;

/* Opens a pass that fs__run calls with (b, e, worker, vctx): names its
 * context c, the world w and the solver state s. */
#define MPS_TASK(vctx, worker)                                                                                         \
    ctx *const c = (ctx *)(vctx);                                                                                      \
    fs_world *const w = c->w;                                                                                          \
    mps_state *const s = c->s;                                                                                         \
    (void)(worker), (void)w, (void)s

/* mps_walls.c: the wall particles (Sec. 3.2), their grid and the obstacles */
bool fs__mps_build_walls(fs_world *w, mps_state *s);
bool fs__mps_walls_current(const fs_world *w, const mps_state *s);
void fs__mps_free_walls(mps_state *s);
/* Safety rails of a corrected particle: out of the obstacles (box and
 * mesh), RAIL l0 inside the box (lo, hi already moved in); returns the
 * corrections made. */
uint64_t fs__mps_rails(const fs_world *w, const mps_state *s, fs_vec3 lo, fs_vec3 hi, float x[3], float v[3]);
/* The world's mesh obstacles changed: the walls rebuilt, and the particles
 * inside one (phi < 0) removed, as a box obstacle removes them. */
fs_status fs__mps_obstacles_changed(fs_world *w, fs_error *err);

/* mps_reach.c: whether a sub-step stayed within its lists' reach (after Eq. 9-10 and the collisions) and
 * within a spacing of r^n (after Eq. 15-17); the displacement boxes' blocks (2 x 2 x 2 grid cells) */
long fs__mps_reach_blocks(const fs_world *w, int nb[3]);
bool fs__mps_reach_ok(fs_world *w, mps_state *s, const ctx *c);
bool fs__mps_moved_ok(fs_world *w, const ctx *c);

/* mps_pressure.c: n*, Eq. 18 and the pressure Poisson equation (Eq. 14) */
bool fs__mps_ensure_matrix(fs_world *w, mps_state *s);
void fs__mps_pressure(fs_world *w, mps_state *s, ctx *c);

/* Whether the last solve's rows kept the blocks of the two-thread sweeps (fs__pcg_blocks_valid), for
 * tests (sim_testing.h) */
bool fs__mps_blocks_valid(const fs_world *w);

/* mps_tension.c: surface tension, Appendix A */
void fs__mps_tension_acc(const ctx *c, int i, float *ax, float *ay, float *az);

#endif
