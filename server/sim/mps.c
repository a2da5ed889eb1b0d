/* mps.c - the Moving Particle Semi-implicit solver of Premoze, Tasdizen,
 * Bigler, Lefohn & Whitaker 2003, "Particle-Based Simulation of Fluids"
 * (after Koshizuka & Oka 1996), in 3D.
 *
 * One call of step() advances w->dt in CFL-limited sub-steps, each
 * Algorithm 1:
 *   neighbour lists at r^n              (world grid + a static wall grid)
 *   u* = u^n + dt (nu lap u + sigma kappa n / rho + g)        Eq. 9 / 27, 7, App. A
 *   r* = r^n + dt u*                                           Eq. 10
 *   n* at r*, free surface n* < beta n0, beta = 0.97           Eq. 3-4, 18
 *   pressure Poisson equation, symmetric, by ICCG              Eq. 14 (sparse.c)
 *   u' = -dt/rho grad p, u^{n+1} = u* + u', r^{n+1} = r* + u' dt   Eq. 15-17, 5
 *
 * Choices, where the paper is silent or loose (and what was measured):
 *  - Kernel: w(r) = r_e/r - 1 for r < r_e (Koshizuka & Oka 1996).  Eq. 3 as
 *    printed (r_e/r) jumps from 1 to 0 at r_e, so n would jump each time a
 *    neighbour crosses r_e; the -1 makes it continuous.  r is clamped to
 *    RMIN l0 so one close pair cannot multiply n (and the pressure).
 *  - Radii: n, the gradient, the free-surface test and the pressure
 *    Laplacian of Eq. 14 use r_e = 2.1 l0; the viscosity Laplacian and the
 *    surface-tension counts use min(3.1 l0, h) (3.1 l0: the 3D choice of
 *    Koshizuka's group; 4 l0 is their 2D value).  Eq. 14 over 3.1 l0 gave
 *    ~125 entries a matrix row and an IC(0) factorisation ~15 times dearer
 *    (60 ms for 4.3k unknowns against ~5 ms), for no visible gain.  n0, n0_lap
 *    and lambda (Eq. 8, discrete form sum r^2 w / sum w) come from the cubic
 *    rest lattice.  Neighbours come from the world's grid, which finds pairs
 *    within the domain's h: MPS scenes set h = 3.1 l0 (the grid then scans
 *    5^3 cells of 1.55 l0, ~470 candidates for ~125 neighbours).  A list is
 *    made once per sub-step at r^n and evaluated at r*; a second list keeps
 *    the pairs within NEAR = 2.6 l0, which hold every 2.1 l0 pair at r* (the
 *    CFL limit moves a pair < 0.4 l0 per sub-step).  Pairs that enter 3.1 l0
 *    during a sub-step are missed by the viscosity, at weights below 0.1.
 *  - Eq. 14 is printed with rho/dt; it is rho/dt^2 (Koshizuka & Oka), with
 *    the sign that gives compressed particles positive pressure.  For several
 *    fluids (Sec. 3.4) it is solved as div(grad p / rho) = -RELAX (n* - n0) /
 *    (n0 dt^2) with 2 / (rho_i + rho_j) per pair, so the matrix stays
 *    symmetric; one solve for all fluids (their densities are of one order,
 *    as Sec. 3.4 asks).  RELAX = 0.5 (see its definition); the compressibility
 *    of water over dt^2 on the diagonal keeps a pocket without free surface
 *    solvable.
 *  - Eq. 5 for the pressure gradient uses p_j - p^_i with p^_i the smallest
 *    pressure among i and its neighbours (Koshizuka & Oka 1996): every pair
 *    repels.  Measured: with Eq. 5 as printed (p_j - p_i) the surface of a
 *    tank at rest sprayed and the dam-break surge ran 40% ahead.  p^_i is
 *    taken over r < PMIN_R = 1.1 l0 (the six nearest on the lattice), not
 *    over r_e: the term (p_i - p^_i) sum r w / r^2 is nonzero wherever the
 *    arrangement is not quite regular and carries part of the weight, and
 *    p_i - p^_i is rho g times the vertical reach of the search.  With the search
 *    over 2.1 l0 the time-averaged pressure of test mps_hydrostatic's tank
 *    read 9.1% below rho g d (its slope with depth ~8% short, so not a
 *    question of where the surface is); with Eq. 5 as printed 2.2% (but the
 *    tank churned, 2 m/s); over 1.5 l0 3.6%; over 1.1 l0 1.5% (worst layer
 *    3.7%), with other tanks and windows 1-9% where 2.1 l0 gave 3-14% (the
 *    tank breathes slowly).  The price: the tank at rest is noisier (fastest
 *    particle 0.66 m/s against 0.37, interior |n - n0| / n0 1.7% against
 *    1.2%).  The dam break does not notice (front within 1% of the 2.1 l0
 *    run).  Negative pressures are set to 0.  The noise is the method's, not
 *    the collisions' (without them the same): in test mps_hydrostatic's tank
 *    (0.4 m deep, l0 = 2 cm) particles keep an rms speed of ~0.24 m/s (0.17
 *    with p^_i over 2.1 l0; RELAX 1: 0.22, 0.2: 0.32; Courant 0.1: 0.23; the
 *    symmetric, momentum-conserving form (p_i + p_j - p^_i - p^_j) of Khayyer
 *    & Gotoh's CMPS, weighted 1 or 1/2: 0.5-1.4, worse; measured over 2-3 s).
 *    Time averages are right (the hydrostatic pressure); a snapshot of the
 *    still tank jitters.
 *  - Dam break against Martin & Moyce 1952 (test mps_dam_break): the front
 *    reaches each of their x/a 11-15 ms (T = 0.2-0.29) before they saw it, so
 *    raw x/a is 11-19% ahead at x/a <= 3 while the speed agrees (+1.4%). The
 *    flow simulated is inviscid and scale-free: a column ten times as large,
 *    or nu = 0 and sigma = 0, moves the front by < 1.5%; 10, 14, 20 or 28
 *    particles across a agree within 2.5% (largest raw deviation 17.8-18.3%
 *    at each).  None of these brings a point more than 2.5% closer (RELAX 0.2
 *    takes the second 4% further): all three wall layers no-slip, nu = 1e-5,
 *    MAX_SOURCE 0.02 or 1, RELAX 0.2, PMIN_R 1.1 or 2.1.  The early front:
 *    x/a - 1 ~ 0.56 T^2 for T = 0.3-0.8, no jump in the first sub-steps (the
 *    column starts on the walls' lattice, n = n0 inside); the experiment's
 *    front passes x/a = 1.11 at T = 0.41 (here -2%) and then lags until T ~
 *    1.2.  A front of the 8th farthest particle reads 10/16/12/10%; neither
 *    that nor a two-particle-high front is used (no source fixing the
 *    definition was found).  The experiment took a finite time to release its
 *    column, which this solver does at once; numerical studies shift the
 *    experiment's clock for it (Lethe's dam-break example by T = 0.175, 9.4
 *    ms here).  With that shift the front follows both transcriptions of
 *    their data within 6.4% and 8.1%; the shift that fits best is T = 0.245
 *    (13 ms).  Koshizuka & Oka's own MPS leads the raw data by 6-7% at T <
 *    1.3.
 *  - Collisions (Koshizuka's practice): pairs closer than 0.5 l0 that
 *    approach lose the normal part of their relative velocity (restitution
 *    0.2) between Eq. 10 and n*.
 *  - Walls (Sec. 3.2, "three layers of fixed particles"): the box's faces
 *    and box obstacles are lattices of fixed particles at l0, three deep
 *    (the box's outside it, at -l0/2, -3l0/2, -5l0/2 from each face).  The
 *    first layer takes part in the Laplacians and the gradient and gets its
 *    own pressure from Eq. 14 (its rows join the system when a particle is
 *    within NEAR); the second and third layers only fill the number density
 *    (Koshizuka's "dummy" particles).  Velocity 0 at walls (no-slip); rho =
 *    1000 for their pairs in Eq. 14.  As a safety rail (not in the paper), a
 *    particle that still ends inside an obstacle, or closer than RAIL l0 to
 *    a face of the box, is put back on it.  (A rail at the world's l0/2,
 *    where the first lattice row sits, held a third of the particles of a
 *    thin tank every sub-step and carried load the pressure should carry:
 *    the hydrostatic pressure read 17% low.)  Wall particles are the solver's, not the world's: the
 *    world's views, frames and hash do not see them.
 *  - Surface tension (Appendix A) acts at free-surface particles only (not at
 *    the interface between two fluids): kappa from Eq. 34-39 with r_e^st =
 *    3.1 l0, along the unit vector towards the fluid (the gradient of n),
 *    with delta = 1 / l0.  Two choices make a drop hold together (test
 *    mps_surface_tension: a 12^3 cube of water without gravity).  Eq. 39's
 *    n0^st1, "computed when the interface is flat", counts the neighbours
 *    deeper than i and half of those level with it: on a face that is not a
 *    perfect lattice, half of those are denser than i, so counting only the
 *    deeper ones read every flat face as concave (kappa R ~ 0.5 on the ball,
 *    a third of the surface kappa < 0, pushed outwards).  And Eq. 33 acts
 *    only where the neighbourhood is one-sided, |sum r_ij w| >= ST_ONE_SIDED
 *    sum |r_ij| w (0.3-0.4 on a flat face, ~0 inside): the n* < beta n0 test
 *    also flags particles in thin spots inside the liquid, whose "normal" is
 *    noise, and forcing them fed the motion until the drop burst (radius of
 *    gyration 2.7 R in 0.4 s; 0.2 still drifted, 0.25 holds for 0.6 s and
 *    more).  The drop rounds (diagonal/axis extent 1.73 -> 0.99-1.01) within
 *    ~0.1 s; kappa R averages ~1.5 against Eq. 38's 1, and the pressure
 *    inside is proportional to sigma but 0.22-0.23 of Laplace's 2 sigma / R
 *    (Eq. 38 is the 2D curvature, and the surface layer is coarse): the model
 *    shapes a drop, it does not give its pressure.
 *  - Heat: Eq. 21 of Solenthaler 2007 as the Clavet solver does it (w->lap_norm,
 *    the kernel h - r over the domain's h), summed at the first sub-step and
 *    applied over each, then the heaters: fs__heat_update (solver.c).
 *  - Time step: sub-steps of w->dt / k, k the least for which dt u_max <=
 *    0.2 l0 (u_max with what gravity adds in w->dt), dt <= 0.25 l0^2 / nu and
 *    dt <= sqrt(rho l0^3 / (2 pi sigma)) (the capillary limit of explicit
 *    surface tension, Brackbill, Kothe & Zemach 1992); at most MAX_SUB.
 *    Emitters and drains (fs__emit_and_drain) run once per call, before
 *    the sub-steps.  Rigid bodies and freezing are not coupled.
 *
 * Parallel form: every pass is a per-particle gather through fs__run; the
 * row numbering and the active-wall list are serial prefix passes; IC(0)
 * and its triangular solves are serial; dot products are summed in fixed
 * chunks.  The result is bit-identical for any thread count.
 *
 * Memory: everything per particle is allocated in attach for w->cap
 * particles (~3 kB a particle: lists of 224 + 112 neighbours and the
 * distances of the second, 64 matrix entries and their IC(0) factor; 300 MB
 * for the server's default capacity of 100k).  The wall particles depend on the domain
 * and the obstacles: they are (re)built when those change (scene load,
 * reset, obstacle, restore), which may allocate; a step of an unchanged world
 * never does.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "particles.h"
#include "solver_table.h"
#include "sources.h"
#include "sparse.h"
#include "tasks.h"

#define RE_N 2.1f      /* r_e of n and grad, in l0 */
#define RE_LAP 3.1f    /* r_e of the Laplacian, in l0 (capped at h) */
#define BETA 0.97f     /* Eq. 18 */
#define COURANT 0.2f   /* dt <= COURANT l0 / u_max */
#define VISC_LIMIT 0.25f /* dt <= VISC_LIMIT l0^2 / nu_max (explicit Eq. 7 is stable to ~0.5) */
#define MAX_SUB 200    /* sub-steps per call, at most */
#define NB_MAX 224     /* fluid + wall neighbours per fluid particle */
#define NN_MAX 112     /* ... of them within NEAR l0: the 2.1 l0 passes */
#define NEAR 2.6f      /* 2.1 l0 at r* lies within 2.6 l0 at r^n: a sub-step moves a pair < 0.4 l0 */
#define WNB_MAX 96     /* fluid neighbours within NEAR l0 per first-layer wall particle */
#define WWN_MAX 64     /* first-layer wall neighbours per first-layer wall particle */
#define NNZ_PER_ROW 64 /* matrix room per row, on average (~33 at rest) */
#define RMIN 0.3f /* w(r) is evaluated at r >= RMIN l0: one close pair adds at most re/RMIN - 1 (6) to n */
#define RAIL 0.25f /* l0: how close to a face of the box a centre may come */
#define PMIN_R 1.1f /* l0: p^_i of Eq. 5 is the least pressure within this (the six nearest on the lattice) */
#define ST_ONE_SIDED 0.25f /* Appendix A acts where |sum r_ij w| >= this * sum |r_ij| w (a flat face: 0.3-0.4) */
#define COLLIDE_DIST 0.5f /* l0 */
#define COLLIDE_E 0.2f
/* Relaxation of Eq. 14's source (1: the equation as printed; Koshizuka's
 * group often uses 0.2).  Measured on a tank at rest: 1 let it blow up,
 * 0.5 and 0.2 hold it. */
#define RELAX 0.5
#define MAX_SOURCE 0.1 /* largest (n* - n0) / n0 Eq. 14 acts on in one sub-step */
#define COMPRESSIBILITY 0.45e-9 /* 1/Pa, water */
#define RHO_WALL 1000.0f
#define MAX_OBST 8
#define CG_TOL 1e-6
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
    int32_t *nb;          /* [i * NB_MAX]: fluid indices ascending, then cap + wall index (grid order) */
    int16_t *nb_f, *nb_t; /* fluid count, total count */
    int32_t *nn;          /* [i * NN_MAX]: the same within NEAR l0 (n, Eq. 14, Eq. 5, collisions) */
    int16_t *nn_f, *nn_t;
    float *nr;            /* [i * NN_MAX]: |r*_ij| of those, from nstar_task */
    float *nst, *nst1;    /* n* (Eq. 14) / n at r^n for surface tension; n^st1 (Eq. 34) */
    float *press;         /* pressure, Pa */
    int32_t *row;         /* unknown of particle i, or -1 (free surface) */
    float *rho, *nu;      /* per particle this sub-step */
    /* walls: all layers */
    int nwall, wall_cap, nl1;
    float *wx, *wy, *wz, *wp; /* wp: pressure (first layer), kept across steps */
    uint8_t *wlayer;
    int32_t *wl1;             /* wall -> first-layer index, or -1 */
    /* first-layer walls: static n from other walls, neighbours among first-layer walls */
    int32_t *l1_wall;         /* first-layer index -> wall */
    float *l1_nstatic;
    int16_t *l1_wn;
    int32_t *l1_wj;           /* [k * WWN_MAX] first-layer indices, ascending */
    float *l1_ww;             /* Laplacian weights */
    /* static wall grid, cells of h over the box grown by 3 l0 */
    float wg_lo[3], wg_inv;
    int wg_n[3];
    int32_t *wg_start, *wg_idx;
    /* active first-layer walls of a sub-step (a fluid particle within h) */
    int nact;
    int32_t *act;      /* active -> first-layer index, ascending */
    int32_t *act_of;   /* first-layer index -> active, or -1 */
    int32_t *anb;      /* [a * WNB_MAX] fluid neighbours, ascending */
    int16_t *anb_n;
    float *anst;
    int32_t *arow;
    /* the pressure Poisson equation */
    fs_csr A;
    fs_pcg pcg;
    double *b, *x;
    int32_t *rnnz;
    int rows_cap;
    /* constants */
    float l0, h, re_n, re_l, re_st, n0, n0l, lambda, lambda_n, nst_flat;
    uint32_t built_epoch; /* walls built for this reset of the world ... */
    fs_domain built_dom;  /* ... and this domain */
    int built_nobst;
    bool built;
    mps_obst obst[MAX_OBST];
    int nobst;
    uint32_t obst_epoch;
    /* diagnostics */
    int substeps, unknowns, surface, shrunk; /* shrunk: solves skipped for want of matrix room */
    float dt_sub;
} mps_state;

static inline mps_state *state_of(const fs_world *w) { return (mps_state *)w->solver_state; }

/* ---- Eq. 3, and the rest-lattice constants of Eq. 5-8 ------------------ */
static inline float weight(float r, float re, float rmin) {
    if (r >= re) return 0.0f;
    return re / (r > rmin ? r : rmin) - 1.0f;
}

static void lattice_constants(mps_state *s) {
    double n0 = 0, n0l = 0, r2w = 0, r2wn = 0, flat = 0;
    const double l0 = s->l0;
    int m = (int)(s->re_l / s->l0) + 2;
    for (int k = -m; k <= m; k++)
        for (int j = -m; j <= m; j++)
            for (int i = -m; i <= m; i++) {
                if (!i && !j && !k) continue;
                double r = l0 * sqrt((double)(i * i + j * j + k * k));
                if (r < s->re_n) n0 += s->re_n / r - 1.0, r2wn += r * r * (s->re_n / r - 1.0);
                if (r < s->re_l) n0l += s->re_l / r - 1.0, r2w += r * r * (s->re_l / r - 1.0);
                /* Eq. 39's n0^st1 on a flat face (z <= 0 filled): the neighbours deeper than i and half
                 * of those level with it (on a face that is not a perfect lattice, half of them are
                 * denser than i) */
                if (r < s->re_st && k <= 0) flat += k < 0 ? 1.0 : 0.5;
            }
    s->n0 = (float)n0;
    s->n0l = (float)n0l;
    s->lambda = (float)(r2w / n0l); /* Eq. 8 */
    s->lambda_n = (float)(r2wn / n0);
    s->nst_flat = (float)flat;
}

/* ---- walls ---------------------------------------------------------------- */
/* Lattice coordinates along one axis: three layers outside the low face,
 * the interior row lo + (k + 1/2) l0, three layers outside the high face.
 * axis_count gives how many; axis_coord the k-th and its depth (0 inside,
 * 1..3 outside). */
static int axis_interior(float lo, float hi, float l0) {
    int m = 0;
    while (lo + ((float)m + 0.5f) * l0 <= hi - 0.25f * l0) m++;
    return m;
}

static float axis_coord(float lo, float hi, float l0, int m, int k, int *depth) {
    if (k < 3) return *depth = 3 - k, lo - ((float)(3 - k) - 0.5f) * l0;
    if (k < 3 + m) return *depth = 0, lo + ((float)(k - 3) + 0.5f) * l0;
    return *depth = k - 2 - m, hi + ((float)(k - 3 - m) + 0.5f) * l0;
}

static int grid_cell(const mps_state *s, float x, float y, float z) {
    int c[3];
    const float p[3] = {x, y, z};
    for (int a = 0; a < 3; a++) {
        c[a] = fs__floor_clamp((p[a] - s->wg_lo[a]) * s->wg_inv, 0, s->wg_n[a] - 1);
    }
    return (c[2] * s->wg_n[1] + c[1]) * s->wg_n[0] + c[0];
}

static void free_walls(mps_state *s) {
    free(s->wx), free(s->wy), free(s->wz), free(s->wp), free(s->wlayer), free(s->wl1);
    free(s->l1_wall), free(s->l1_nstatic), free(s->l1_wn), free(s->l1_wj), free(s->l1_ww);
    free(s->wg_start), free(s->wg_idx);
    free(s->act), free(s->act_of), free(s->anb), free(s->anb_n), free(s->anst), free(s->arow);
    s->wx = s->wy = s->wz = s->wp = NULL;
    s->wlayer = NULL;
    s->wl1 = s->l1_wall = s->l1_wj = s->wg_start = s->wg_idx = s->act = s->act_of = s->anb = s->arow = NULL;
    s->l1_nstatic = s->l1_ww = s->anst = NULL;
    s->l1_wn = s->anb_n = NULL;
    s->nwall = s->wall_cap = s->nl1 = 0;
}

/* Appends a wall particle (counting only when s->wx is NULL). */
static void wall_put(mps_state *s, int *n, float x, float y, float z, int layer) {
    if (s->wx) {
        s->wx[*n] = x, s->wy[*n] = y, s->wz[*n] = z;
        s->wlayer[*n] = (uint8_t)layer;
    }
    (*n)++;
}

static void emit_walls(mps_state *s, const fs_world *w, int *n) {
    const float l0 = s->l0;
    const fs_vec3 lo = w->dom.box_min, hi = w->dom.box_max;
    const int mx = axis_interior(lo.x, hi.x, l0), my = axis_interior(lo.y, hi.y, l0),
              mz = axis_interior(lo.z, hi.z, l0);
    /* the box: three layers outside each face, corners and edges included */
    for (int k = 0; k < mz + 6; k++)
        for (int j = 0; j < my + 6; j++)
            for (int i = 0; i < mx + 6; i++) {
                int di, dj, dk;
                float x = axis_coord(lo.x, hi.x, l0, mx, i, &di), y = axis_coord(lo.y, hi.y, l0, my, j, &dj),
                      z = axis_coord(lo.z, hi.z, l0, mz, k, &dk);
                int d = di > dj ? di : dj;
                d = d > dk ? d : dk;
                if (d) wall_put(s, n, x, y, z, d);
            }
    /* obstacles: their own lattice, three layers in from each face */
    for (int o = 0; o < s->nobst; o++) {
        fs_vec3 a = s->obst[o].lo, b = s->obst[o].hi;
        /* obstacles lie inside the box (fs_world_mps_add_obstacle, restore): the clamp only keeps the
         * conversion defined */
        int ox = fs__floor_clamp((b.x - a.x) / l0 + 1e-3f, 0, 1 << 20),
            oy = fs__floor_clamp((b.y - a.y) / l0 + 1e-3f, 0, 1 << 20),
            oz = fs__floor_clamp((b.z - a.z) / l0 + 1e-3f, 0, 1 << 20);
        for (int k = 0; k < oz; k++)
            for (int j = 0; j < oy; j++)
                for (int i = 0; i < ox; i++) {
                    int d = i < ox - 1 - i ? i : ox - 1 - i;
                    int e = j < oy - 1 - j ? j : oy - 1 - j;
                    int f = k < oz - 1 - k ? k : oz - 1 - k;
                    d = d < e ? d : e;
                    d = d < f ? d : f;
                    if (d < 3)
                        wall_put(s, n, a.x + ((float)i + 0.5f) * l0, a.y + ((float)j + 0.5f) * l0,
                                 a.z + ((float)k + 0.5f) * l0, d + 1);
                }
    }
}

/* Builds the wall particles for the domain and the obstacles, their grid
 * and their static sums.  Allocates when their number grows. */
static bool build_walls(fs_world *w, mps_state *s) {
    s->l0 = w->dom.spacing;
    s->h = w->h;
    s->re_n = RE_N * s->l0;
    if (s->re_n > s->h) s->re_n = s->h;
    s->re_l = RE_LAP * s->l0;
    if (s->re_l > s->h) s->re_l = s->h;
    s->re_st = s->re_l;
    lattice_constants(s);
    if (s->obst_epoch != w->epoch) s->nobst = 0; /* the world was reset: obstacles went with it */
    if (s->built_epoch != w->epoch) /* and so did its particles: no stale warm starts in free slots */
        memset(s->p_slot, 0, sizeof(float) * (size_t)w->cap);
    int n = 0;
    float *keep = s->wx;
    s->wx = NULL;
    emit_walls(s, w, &n);
    s->wx = keep;
    if (n > s->wall_cap || !s->wx) {
        free_walls(s);
        size_t m = (size_t)(n > 0 ? n : 1);
        s->wx = malloc(sizeof(float) * m), s->wy = malloc(sizeof(float) * m), s->wz = malloc(sizeof(float) * m);
        s->wp = calloc(m, sizeof(float)), s->wlayer = malloc(m), s->wl1 = malloc(sizeof(int32_t) * m);
        s->l1_wall = malloc(sizeof(int32_t) * m), s->l1_nstatic = malloc(sizeof(float) * m);
        s->l1_wn = malloc(sizeof(int16_t) * m), s->l1_wj = malloc(sizeof(int32_t) * m * WWN_MAX);
        s->l1_ww = malloc(sizeof(float) * m * WWN_MAX);
        s->wg_idx = malloc(sizeof(int32_t) * m);
        s->act = malloc(sizeof(int32_t) * m), s->act_of = malloc(sizeof(int32_t) * m);
        s->anb = malloc(sizeof(int32_t) * m * WNB_MAX), s->anb_n = malloc(sizeof(int16_t) * m);
        s->anst = malloc(sizeof(float) * m), s->arow = malloc(sizeof(int32_t) * m);
        if (!s->wx || !s->wy || !s->wz || !s->wp || !s->wlayer || !s->wl1 || !s->l1_wall || !s->l1_nstatic ||
            !s->l1_wn || !s->l1_wj || !s->l1_ww || !s->wg_idx || !s->act || !s->act_of || !s->anb || !s->anb_n ||
            !s->anst || !s->arow) {
            free_walls(s);
            return false;
        }
        s->wall_cap = (int)m;
    }
    s->nwall = 0;
    emit_walls(s, w, &s->nwall);
    memset(s->wp, 0, sizeof(float) * (size_t)s->nwall);
    /* the wall grid */
    const float g = s->h;
    s->wg_inv = 1.0f / g;
    const float lo[3] = {w->dom.box_min.x - 3 * s->l0, w->dom.box_min.y - 3 * s->l0, w->dom.box_min.z - 3 * s->l0};
    const float hi[3] = {w->dom.box_max.x + 3 * s->l0, w->dom.box_max.y + 3 * s->l0, w->dom.box_max.z + 3 * s->l0};
    long cells = 1;
    for (int a = 0; a < 3; a++) {
        s->wg_lo[a] = lo[a];
        s->wg_n[a] = (int)ceilf((hi[a] - lo[a]) * s->wg_inv);
        if (s->wg_n[a] < 1) s->wg_n[a] = 1;
        cells *= s->wg_n[a];
    }
    free(s->wg_start);
    s->wg_start = calloc((size_t)cells + 1, sizeof(int32_t));
    if (!s->wg_start) {
        free_walls(s);
        return false;
    }
    for (int k = 0; k < s->nwall; k++) s->wg_start[grid_cell(s, s->wx[k], s->wy[k], s->wz[k]) + 1]++;
    for (long c = 0; c < cells; c++) s->wg_start[c + 1] += s->wg_start[c];
    for (int k = 0; k < s->nwall; k++) s->wg_idx[s->wg_start[grid_cell(s, s->wx[k], s->wy[k], s->wz[k])]++] = k;
    for (long c = cells; c > 0; c--) s->wg_start[c] = s->wg_start[c - 1];
    s->wg_start[0] = 0;
    /* first layer: its index, static number density and first-layer neighbours */
    s->nl1 = 0;
    for (int k = 0; k < s->nwall; k++) s->wl1[k] = s->wlayer[k] == 1 ? s->nl1++ : -1;
    for (int k = 0; k < s->nwall; k++)
        if (s->wl1[k] >= 0) s->l1_wall[s->wl1[k]] = k;
    const float rmin = RMIN * s->l0, h2 = s->h * s->h;
    for (int q = 0; q < s->nl1; q++) {
        int k = s->l1_wall[q];
        int c = grid_cell(s, s->wx[k], s->wy[k], s->wz[k]);
        int ci = c % s->wg_n[0], cj = (c / s->wg_n[0]) % s->wg_n[1], ck = c / (s->wg_n[0] * s->wg_n[1]);
        float nsum = 0;
        int m = 0;
        int32_t *J = s->l1_wj + (size_t)q * WWN_MAX;
        float *W = s->l1_ww + (size_t)q * WWN_MAX;
        for (int dk = -1; dk <= 1; dk++)
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int a = ci + di, b2 = cj + dj, c2 = ck + dk;
                    if (a < 0 || b2 < 0 || c2 < 0 || a >= s->wg_n[0] || b2 >= s->wg_n[1] || c2 >= s->wg_n[2]) continue;
                    int cc = (c2 * s->wg_n[1] + b2) * s->wg_n[0] + a;
                    for (int t = s->wg_start[cc]; t < s->wg_start[cc + 1]; t++) {
                        int o = s->wg_idx[t];
                        if (o == k) continue;
                        float dx = s->wx[o] - s->wx[k], dy = s->wy[o] - s->wy[k], dz = s->wz[o] - s->wz[k];
                        float r2 = dx * dx + dy * dy + dz * dz;
                        if (r2 >= h2) continue;
                        float r = sqrtf(r2);
                        nsum += weight(r, s->re_n, rmin);
                        float wl = weight(r, s->re_n, rmin); /* the pressure Laplacian's radius */
                        if (s->wl1[o] >= 0 && wl > 0 && m < WWN_MAX) J[m] = s->wl1[o], W[m] = wl, m++;
                    }
                }
        /* ascending first-layer index (insertion sort, short lists) */
        for (int a = 1; a < m; a++) {
            int32_t tj = J[a];
            float tw = W[a];
            int b2 = a;
            while (b2 > 0 && J[b2 - 1] > tj) J[b2] = J[b2 - 1], W[b2] = W[b2 - 1], b2--;
            J[b2] = tj, W[b2] = tw;
        }
        s->l1_wn[q] = (int16_t)m;
        s->l1_nstatic[q] = nsum;
        s->act_of[q] = -1;
    }
    s->nact = 0;
    s->built_epoch = w->epoch;
    s->built_dom = w->dom;
    s->built_nobst = s->nobst;
    s->built = true;
    return true;
}

static bool walls_current(const fs_world *w, const mps_state *s) {
    return s->built && s->built_epoch == w->epoch && memcmp(&s->built_dom, &w->dom, sizeof w->dom) == 0 &&
           s->built_nobst == s->nobst && s->obst_epoch == w->epoch;
}

/* ---- lifetime ------------------------------------------------------------ */
static void mps_detach(fs_world *w) {
    mps_state *s = state_of(w);
    if (!s) return;
    free(s->p_slot), free(s->nb), free(s->nb_f), free(s->nb_t), free(s->nst), free(s->nst1), free(s->press);
    free(s->nn), free(s->nn_f), free(s->nn_t), free(s->nr), free(s->dT_slot);
    free(s->row), free(s->rho), free(s->nu);
    free_walls(s);
    fs__csr_free(&s->A);
    fs__pcg_free(&s->pcg);
    free(s->b), free(s->x), free(s->rnnz);
    free(s);
    w->solver_state = NULL;
}

static fs_status mps_attach(fs_world *w, fs_error *err) {
    mps_state *s = calloc(1, sizeof *s);
    if (!s) goto nomem;
    w->solver_state = s;
    size_t n = (size_t)w->cap, f = sizeof(float) * n;
    s->p_slot = calloc(n, sizeof(float));
    s->dT_slot = calloc(n, sizeof(float));
    s->nb = malloc(sizeof(int32_t) * n * NB_MAX);
    s->nb_f = malloc(sizeof(int16_t) * n), s->nb_t = malloc(sizeof(int16_t) * n);
    s->nn = malloc(sizeof(int32_t) * n * NN_MAX), s->nr = malloc(sizeof(float) * n * NN_MAX);
    s->nn_f = malloc(sizeof(int16_t) * n), s->nn_t = malloc(sizeof(int16_t) * n);
    s->nst = malloc(f), s->nst1 = malloc(f), s->press = calloc(n, sizeof(float));
    s->row = malloc(sizeof(int32_t) * n), s->rho = malloc(f), s->nu = malloc(f);
    if (!s->p_slot || !s->dT_slot || !s->nb || !s->nn || !s->nr || !s->nn_f || !s->nn_t || !s->nb_f || !s->nb_t ||
        !s->nst || !s->nst1 || !s->press || !s->row || !s->rho || !s->nu)
        goto nomem;
    s->obst_epoch = w->epoch;
    return FS_OK;
nomem:
    mps_detach(w);
    if (err) snprintf(err->msg, sizeof err->msg, "mps: out of memory for %d particles", w->cap);
    return FS_ERR_NOMEM;
}

/* The matrix: rows for the particles and the first-layer walls; room for
 * NNZ_PER_ROW entries a row on average.  Allocated with the walls. */
static bool ensure_matrix(fs_world *w, mps_state *s) {
    int rows = w->cap + s->nl1;
    if (rows <= s->rows_cap && s->A.rowptr) return true;
    long nnz = (long)w->cap * NNZ_PER_ROW + (long)s->nl1 * 64;
    fs__csr_free(&s->A);
    fs__pcg_free(&s->pcg);
    free(s->b), free(s->x), free(s->rnnz);
    s->b = malloc(sizeof(double) * (size_t)rows), s->x = malloc(sizeof(double) * (size_t)rows);
    s->rnnz = malloc(sizeof(int32_t) * (size_t)rows);
    if (!s->b || !s->x || !s->rnnz || nnz > 0x7fffffffL || !fs__csr_alloc(&s->A, rows, (int)nnz) ||
        !fs__pcg_alloc(&s->pcg, rows, (int)(nnz / 2 + rows))) {
        s->rows_cap = 0;
        return false;
    }
    s->rows_cap = rows;
    return true;
}

static bool refresh(fs_world *w, mps_state *s) {
    if (walls_current(w, s) && s->A.rowptr) return true;
    return build_walls(w, s) && ensure_matrix(w, s);
}

static void mps_prepare(fs_world *w) {
    mps_state *s = state_of(w);
    if (!s) return;
    refresh(w, s);
    for (int i = 0; i < w->cap; i++) s->p_slot[i] = 0;
    if (s->wp) memset(s->wp, 0, sizeof(float) * (size_t)s->nwall);
    for (int i = 0; i < w->n; i++) s->press[i] = 0, s->nst[i] = s->n0;
}

static void mps_removed(fs_world *w, int slot) {
    mps_state *s = state_of(w);
    if (s) s->p_slot[slot] = 0;
}

/* ---- the step ------------------------------------------------------------- */
typedef struct mconst {
    float rho[FS_MAX_MATERIALS], nu[FS_MAX_MATERIALS], sigma[FS_MAX_MATERIALS], diff[FS_MAX_MATERIALS];
    bool heat, tension;
} mconst;


typedef struct ctx {
    fs_world *w;
    mps_state *s;
    mconst m;
    float dt, h2, near2, rmin;
    bool heat_now; /* the first sub-step sums Eq. 21; the rate holds for the whole w->dt, as in solver.c */
    float lap_k;  /* 2d / (lambda n0_lap), Eq. 7, viscosity */
    float ppe_k;  /* 2d / (lambda_n n0), Eq. 7 in Eq. 14 */
    float grad_k; /* d / n0, Eq. 5 */
    uint64_t bad[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS];
} ctx;

static inline int32_t *scr_j(const fs_world *w, int worker) {
    return w->scr_j + (size_t)worker * ((size_t)w->cap + FS_SCR_PAD);
}
static inline float *scr_r2(const fs_world *w, int worker) {
    return w->scr_r2 + (size_t)worker * ((size_t)w->cap + FS_SCR_PAD);
}


/* Neighbour lists at r^n: fluid within h (the world grid), then walls within
 * h (the wall grid); also saves r^n and sums Eq. 21's heat exchange. */
static void list_task(int b, int e, int worker, void *vctx) {
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, h2 = c->h2, inv_h = w->inv_h;
    int32_t *J = scr_j(w, worker);
    float *R2 = scr_r2(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        p->px[i] = X[i], p->py[i] = Y[i], p->pz[i] = Z[i];
        fs__ranges_of(w, w->cell[i], &r);
        int n = fs__scan(X, Y, Z, &r, i, h2, false, J, R2, NULL, NULL, NULL);
        if (c->heat_now) { /* Eq. 21 with the kernel h - r, as solver.c; once per w->dt */
            const float Ti = p->temp[i], Di = c->m.diff[p->mat[i]];
            float acc = 0;
            for (int k = 0; k < n; k++) {
                const float q = 1.0f - sqrtf(R2[k]) * inv_h;
                acc += 0.5f * (Di + c->m.diff[p->mat[J[k]]]) * q * (p->temp[J[k]] - Ti);
            }
            s->dT_slot[p->slot[i]] = acc;
        }
        int32_t *L = s->nb + (size_t)i * NB_MAX, *NL = s->nn + (size_t)i * NN_MAX;
        int m = n < NB_MAX ? n : NB_MAX, mn = 0;
        memcpy(L, J, sizeof(int32_t) * (size_t)m);
        s->nb_f[i] = (int16_t)m;
        for (int k = 0; k < m; k++)
            if (R2[k] < c->near2 && mn < NN_MAX) NL[mn++] = J[k];
        s->nn_f[i] = (int16_t)mn;
        /* walls */
        int cell = grid_cell(s, X[i], Y[i], Z[i]);
        int ci = cell % s->wg_n[0], cj = (cell / s->wg_n[0]) % s->wg_n[1], ck = cell / (s->wg_n[0] * s->wg_n[1]);
        for (int dk = -1; dk <= 1; dk++)
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int a = ci + di, bb = cj + dj, cc = ck + dk;
                    if (a < 0 || bb < 0 || cc < 0 || a >= s->wg_n[0] || bb >= s->wg_n[1] || cc >= s->wg_n[2]) continue;
                    int g = (cc * s->wg_n[1] + bb) * s->wg_n[0] + a;
                    for (int t = s->wg_start[g]; t < s->wg_start[g + 1] && m < NB_MAX; t++) {
                        int k = s->wg_idx[t];
                        float dx = s->wx[k] - X[i], dy = s->wy[k] - Y[i], dz = s->wz[k] - Z[i];
                        float r2 = dx * dx + dy * dy + dz * dz;
                        if (r2 < h2) L[m++] = w->cap + k;
                        if (r2 < c->near2 && mn < NN_MAX) NL[mn++] = w->cap + k;
                    }
                }
        s->nb_t[i] = (int16_t)m;
        s->nn_t[i] = (int16_t)mn;
        int mt = p->mat[i];
        s->rho[i] = c->m.rho[mt], s->nu[i] = c->m.nu[mt];
    }
}

/* Fluid neighbours of the active first-layer walls, at r^n, the same
 * pairs (same |r|^2 bits) the fluid lists hold. */
static void wall_list_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, near2 = c->near2;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int a = b; a < e; a++) {
        int k = s->l1_wall[s->act[a]];
        const float xk = s->wx[k], yk = s->wy[k], zk = s->wz[k];
        fs__ranges_of(w, fs__cell_of(w, xk, yk, zk), &r);
        int32_t *L = s->anb + (size_t)a * WNB_MAX;
        int m = 0;
        for (int q = 0; q < r.n; q++)
            for (int j = r.b[q]; j < r.e[q] && m < WNB_MAX; j++) {
                /* the same |r|^2 bits as list_task's (x_wall - x_j), so the same pairs */
                float dx = xk - X[j], dy = yk - Y[j], dz = zk - Z[j];
                if (dx * dx + dy * dy + dz * dz < near2) L[m++] = j;
            }
        s->anb_n[a] = (int16_t)m;
    }
}

/* Appendix A, Eq. 34 (and n at r^n for the surface test): fluid counts. */
static void tension_a_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    const float rst2 = s->re_st * s->re_st;
    const float ren2 = s->re_n * s->re_n;
    for (int i = b; i < e; i++) {
        const int32_t *L = s->nb + (size_t)i * NB_MAX, *NL = s->nn + (size_t)i * NN_MAX;
        float n = 0, n1 = 0;
        for (int k = 0; k < s->nb_f[i]; k++) { /* Eq. 34-35 over the fluid */
            int j = L[k];
            float dx = X[j] - X[i], dy = Y[j] - Y[i], dz = Z[j] - Z[i];
            n1 += dx * dx + dy * dy + dz * dz < rst2 ? 1.0f : 0.0f;
        }
        for (int k = 0; k < s->nn_t[i]; k++) { /* n at r^n, for the surface test */
            int j = NL[k];
            float dx, dy, dz;
            if (j < w->cap)
                dx = X[j] - X[i], dy = Y[j] - Y[i], dz = Z[j] - Z[i];
            else
                dx = s->wx[j - w->cap] - X[i], dy = s->wy[j - w->cap] - Y[i], dz = s->wz[j - w->cap] - Z[i];
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 < ren2) n += weight(sqrtf(r2), s->re_n, c->rmin);
        }
        s->nst[i] = n;
        s->nst1[i] = n1;
    }
}

/* Eq. 9 / 27: viscosity (Eq. 7), gravity and surface tension (App. A),
 * explicit; Eq. 10: r* = r + dt u*.  Writes w->nvx.. and w->nx.. */
static void explicit_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float dt = c->dt, rel = s->re_l, rst2 = s->re_st * s->re_st;
    const fs_vec3 g = w->dom.gravity;
    for (int i = b; i < e; i++) {
        const int32_t *L = s->nb + (size_t)i * NB_MAX;
        const float xi = X[i], yi = Y[i], zi = Z[i], ui = VX[i], vi = VY[i], wi = VZ[i];
        float lx = 0, ly = 0, lz = 0;
        const float nui = s->nu[i];
        if (nui > 0) {
            for (int k = 0; k < s->nb_t[i]; k++) {
                int j = L[k];
                float dx, dy, dz, uj = 0, vj = 0, wj = 0;
                if (j < w->cap) {
                    dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                    uj = VX[j], vj = VY[j], wj = VZ[j];
                } else {
                    int q = j - w->cap;
                    if (s->wlayer[q] != 1) continue; /* dummies only fill n */
                    dx = s->wx[q] - xi, dy = s->wy[q] - yi, dz = s->wz[q] - zi;
                }
                float wl = weight(sqrtf(dx * dx + dy * dy + dz * dz), rel, c->rmin);
                lx += (uj - ui) * wl, ly += (vj - vi) * wl, lz += (wj - wi) * wl;
            }
            const float k = nui * c->lap_k; /* Eq. 7 times nu */
            lx *= k, ly *= k, lz *= k;
        }
        float ax = g.x + lx, ay = g.y + ly, az = g.z + lz;
        const float sig = c->m.sigma[p->mat[i]];
        if (c->m.tension && sig > 0 && s->nst[i] < BETA * s->n0) {
            /* Appendix A at a free-surface particle: Eq. 36-37, then 38-39 */
            float n2 = 0, gx = 0, gy = 0, gz = 0, gsum = 0;
            const float n1i = s->nst1[i];
            for (int k = 0; k < s->nb_f[i]; k++) {
                int j = L[k];
                float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 >= rst2) continue;
                if (s->nst1[j] > n1i) n2 += 1.0f;
                const float r = sqrtf(r2), wn = weight(r, s->re_n, c->rmin);
                gx += dx * wn, gy += dy * wn, gz += dz * wn;
                gsum += r * wn;
            }
            float theta = 0.5f * 3.14159265f * n2 / s->nst_flat; /* Eq. 39 */
            theta = theta > 3.14159265f ? 3.14159265f : theta;
            const float kappa = 2.0f * cosf(theta) / s->re_st; /* Eq. 38 */
            const float gl = sqrtf(gx * gx + gy * gy + gz * gz);
            if (gl > 1e-12f && gl >= ST_ONE_SIDED * gsum) {
                /* Eq. 33: sigma kappa delta n / rho, delta = 1 / l0, n towards the fluid */
                const float f = sig * kappa / (s->rho[i] * s->l0 * gl);
                ax += f * gx, ay += f * gy, az += f * gz;
            }
        }
        const float ux = ui + dt * ax, uy = vi + dt * ay, uz = wi + dt * az;
        w->nvx[i] = ux, w->nvy[i] = uy, w->nvz[i] = uz;
        w->nx[i] = xi + dt * ux, w->ny[i] = yi + dt * uy, w->nz[i] = zi + dt * uz;
    }
}

/* Collisions (Koshizuka's practice, not in the paper): a pair closer than
 * COLLIDE_DIST l0 at r* and approaching exchanges the normal part of its
 * relative velocity with restitution COLLIDE_E, masses rho V; walls do not
 * move.  Gathered: each side computes the same pair impulse.  Keeps
 * particles from clumping, where w(r) -> infinity would spike n*. */
static void collide_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float rc = COLLIDE_DIST * s->l0, rc2 = rc * rc, dt = c->dt;
    for (int i = b; i < e; i++) {
        const int32_t *L = s->nn + (size_t)i * NN_MAX;
        const float xi = X[i], yi = Y[i], zi = Z[i], ui = VX[i], vi = VY[i], wi = VZ[i], mi = s->rho[i];
        float ax = 0, ay = 0, az = 0;
        for (int k = 0; k < s->nn_t[i]; k++) {
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

/* n* at r* (Eq. 14's source, Eq. 18's test): particles, then active walls. */
static void nstar_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    for (int i = b; i < e; i++) {
        const int32_t *L = s->nn + (size_t)i * NN_MAX;
        float *R = s->nr + (size_t)i * NN_MAX;
        float n = 0;
        for (int k = 0; k < s->nn_t[i]; k++) {
            int j = L[k];
            float dx, dy, dz;
            if (j < w->cap)
                dx = X[j] - X[i], dy = Y[j] - Y[i], dz = Z[j] - Z[i];
            else
                dx = s->wx[j - w->cap] - X[i], dy = s->wy[j - w->cap] - Y[i], dz = s->wz[j - w->cap] - Z[i];
            const float r = sqrtf(dx * dx + dy * dy + dz * dz);
            R[k] = r;
            n += weight(r, s->re_n, c->rmin);
        }
        s->nst[i] = n;
    }
}

static void wall_nstar_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    for (int a = b; a < e; a++) {
        int q = s->act[a], k = s->l1_wall[q];
        const int32_t *L = s->anb + (size_t)a * WNB_MAX;
        float n = s->l1_nstatic[q];
        for (int t = 0; t < s->anb_n[a]; t++) {
            int j = L[t];
            float dx = X[j] - s->wx[k], dy = Y[j] - s->wy[k], dz = Z[j] - s->wz[k];
            n += weight(sqrtf(dx * dx + dy * dy + dz * dz), s->re_n, c->rmin);
        }
        s->anst[a] = n;
    }
}

/* Laplacian coefficient of a pair (Eq. 7 in div(grad p / rho) form), over re_n. */
static inline float lap_coef(const ctx *c, float r, float rho_i, float rho_j) {
    return weight(r, c->s->re_n, c->rmin) * 2.0f / (rho_i + rho_j);
}

/* Eq. 14, one row per unknown: count (fill false) or fill (fill true).  Row
 * entries come out with ascending columns; the diagonal sits in its place. */
static void row_task_impl(ctx *c, int b, int e, bool fill) {
    fs_world *w = c->w;
    mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    fs_csr *A = &s->A;
    const double K = c->ppe_k, inv_dt2 = 1.0 / ((double)c->dt * c->dt);
    const int nf = w->n;
    for (int u = b; u < e; u++) {
        /* u < nf: particle u; else active wall u - nf */
        const int row = u < nf ? s->row[u] : s->arow[u - nf];
        if (row < 0) continue;
        double diag = 0, nst;
        const int k0 = fill ? A->rowptr[row] : 0;
        int cnt = 0, dpos = -1, nwc = 0;
        int32_t wc[WWN_MAX]; /* wall columns, sorted before they are emitted */
        double wv[WWN_MAX];
#define EMIT(C_, V_)                                                                   \
    do {                                                                               \
        if (dpos < 0 && (C_) > row) dpos = k0 + cnt++;                                 \
        if (fill) A->col[k0 + cnt] = (C_), A->val[k0 + cnt] = (V_);                    \
        cnt++;                                                                         \
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
                    if (cf <= 0) continue;
                    diag += K * cf;
                    if (s->row[j] >= 0) EMIT(s->row[j], -K * cf);
                } else {
                    int q = j - w->cap;
                    if (s->wlayer[q] != 1) continue;
                    float cf = lap_coef(c, R[k], rhoi, RHO_WALL);
                    if (cf <= 0) continue;
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
                float cf = lap_coef(c, sqrtf(dx * dx + dy * dy + dz * dz), RHO_WALL, s->rho[j]);
                if (cf <= 0) continue;
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
        for (int a = 1; a < nwc; a++) { /* first-layer walls ascending (their rows follow the particles') */
            int32_t tc = wc[a];
            double tv = wv[a];
            int q = a;
            while (q > 0 && wc[q - 1] > tc) wc[q] = wc[q - 1], wv[q] = wv[q - 1], q--;
            wc[q] = tc, wv[q] = tv;
        }
        for (int a = 0; a < nwc; a++) EMIT(wc[a], wv[a]);
#undef EMIT
        if (dpos < 0) dpos = k0 + cnt++;
        if (fill) {
            A->col[dpos] = row;
            /* + the compressibility of water over dt^2 (weak compressibility,
             * Koshizuka's practice): keeps a pocket without free surface solvable */
            A->val[dpos] = diag + COMPRESSIBILITY * inv_dt2;
            /* Eq. 14; the density error is capped at MAX_SOURCE so that a state compressed by another
             * solver (Clavet's runs 50% dense) relaxes over several sub-steps instead of exploding */
            double err = (nst - (double)s->n0) / (double)s->n0;
            err = err > MAX_SOURCE ? MAX_SOURCE : err;
            s->b[row] = RELAX * inv_dt2 * err;
        } else {
            s->rnnz[row] = cnt;
        }
    }
}

static void count_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    row_task_impl(vctx, b, e, false);
}
static void fill_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    row_task_impl(vctx, b, e, true);
}

/* Eq. 5 (with p^_i) and Eq. 15-17, then the safety rails and the heat. */
static void correct_task(int b, int e, int worker, void *vctx) {
    ctx *c = vctx;
    fs_world *w = c->w;
    mps_state *s = c->s;
    fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *P = s->press;
    const float dt = c->dt, ren = s->re_n, vmax = w->max_speed, pmin_r = PMIN_R * s->l0;
    /* the rail: centres stay RAIL l0 inside the box's faces; the walls' pressure keeps them about
     * l0 / 2 from them (the lattice's first row), so the rail only catches what the walls let through */
    const float rail = RAIL * s->l0;
    const fs_vec3 lo = {w->dom.box_min.x + rail, w->dom.box_min.y + rail, w->dom.box_min.z + rail},
                  hi = {w->dom.box_max.x - rail, w->dom.box_max.y - rail, w->dom.box_max.z - rail};
    uint64_t bad = 0, clamped = 0;
    for (int i = b; i < e; i++) {
        const int32_t *L = s->nn + (size_t)i * NN_MAX;
        const float *R = s->nr + (size_t)i * NN_MAX;
        const float xi = X[i], yi = Y[i], zi = Z[i];
        float pmin = P[i];
        for (int k = 0; k < s->nn_t[i]; k++) { /* p^_i over the nearest neighbours (PMIN_R, header) */
            if (R[k] >= pmin_r) continue;
            int j = L[k];
            float pj;
            if (j < w->cap) {
                pj = P[j];
            } else {
                int q = j - w->cap;
                if (s->wlayer[q] != 1) continue;
                pj = s->wp[q];
            }
            if (pj < pmin) pmin = pj;
        }
        float gx = 0, gy = 0, gz = 0;
        for (int k = 0; k < s->nn_t[i]; k++) {
            if (R[k] >= ren) continue;
            int j = L[k];
            float dx, dy, dz, pj;
            if (j < w->cap) {
                dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi, pj = P[j];
            } else {
                int q = j - w->cap;
                if (s->wlayer[q] != 1) continue;
                dx = s->wx[q] - xi, dy = s->wy[q] - yi, dz = s->wz[q] - zi, pj = s->wp[q];
            }
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= ren * ren || r2 < 1e-12f * s->l0 * s->l0) continue;
            float r = sqrtf(r2), f = (pj - pmin) * weight(r, ren, c->rmin) / r2;
            gx += f * dx, gy += f * dy, gz += f * dz;
        }
        const float k = -dt * c->grad_k / s->rho[i]; /* Eq. 15: u' = -dt/rho grad p */
        const float dux = k * gx, duy = k * gy, duz = k * gz;
        float v[3] = {p->vx[i] + dux, p->vy[i] + duy, p->vz[i] + duz}; /* Eq. 16: u* (swapped in) + u' */
        float x[3] = {xi + dt * dux, yi + dt * duy, zi + dt * duz};      /* Alg. 1: r* + u' dt */
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
        for (int o = 0; o < s->nobst; o++) {
            const fs_vec3 a = s->obst[o].lo, bb = s->obst[o].hi;
            if (x[0] <= a.x || x[0] >= bb.x || x[1] <= a.y || x[1] >= bb.y || x[2] <= a.z || x[2] >= bb.z) continue;
            const float d[6] = {x[0] - a.x, bb.x - x[0], x[1] - a.y, bb.y - x[1], x[2] - a.z, bb.z - x[2]};
            int f = 0;
            for (int q = 1; q < 6; q++)
                if (d[q] < d[f]) f = q;
            int ax = f / 2;
            float sg = f % 2 ? 1.0f : -1.0f; /* outward normal along ax */
            x[ax] += sg * d[f];
            if (v[ax] * sg < 0) v[ax] = 0;
            clamped++;
        }
        const float l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
        for (int a = 0; a < 3; a++) {
            if (x[a] < l[a]) {
                x[a] = l[a], v[a] = v[a] < 0 ? 0 : v[a], clamped++;
            } else if (x[a] > u[a]) {
                x[a] = u[a], v[a] = v[a] > 0 ? 0 : v[a], clamped++;
            }
        }
        w->nx[i] = x[0], w->ny[i] = x[1], w->nz[i] = x[2]; /* neighbours still read r* */
        p->vx[i] = v[0], p->vy[i] = v[1], p->vz[i] = v[2];
        s->p_slot[p->slot[i]] = P[i];
        float T = fs__heat_update(w, p->temp[i], c->m.heat, s->dT_slot[p->slot[i]], x[0], x[1], x[2], dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    c->bad[worker] += bad;
    c->clamped[worker] += clamped;
}

static void swap3(float **a, float **b) {
    float *t = *a;
    *a = *b, *b = t;
}

static void substep(fs_world *w, mps_state *s, ctx *c) {
    double *ph = w->st.phase_ms, t = fs__now_ms();
    const int n = w->n;
    /* neighbour search at r^n */
    fs__grid_build(w);
    fs__run(w, list_task, c, n);
    for (int a = 0; a < s->nact; a++) s->act_of[s->act[a]] = -1;
    s->nact = 0;
    for (int i = 0; i < n; i++) { /* first-layer walls within reach of a particle, serially */
        const int32_t *L = s->nn + (size_t)i * NN_MAX;
        for (int k = s->nn_f[i]; k < s->nn_t[i]; k++) {
            int q = s->wl1[L[k] - w->cap];
            if (q >= 0 && s->act_of[q] < 0) s->act_of[q] = 0x7fffffff;
        }
    }
    for (int q = 0; q < s->nl1; q++) /* ascending, so rows and columns stay sorted */
        if (s->act_of[q] == 0x7fffffff) s->act_of[q] = s->nact, s->act[s->nact++] = q;
    fs__run(w, wall_list_task, c, s->nact);
    ph[FS_PHASE_GRID] += fs__now_ms() - t;

    /* Eq. 9-10 */
    t = fs__now_ms();
    if (c->m.tension) fs__run(w, tension_a_task, c, n);
    fs__run(w, explicit_task, c, n);
    swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
    swap3(&w->p.vx, &w->nvx), swap3(&w->p.vy, &w->nvy), swap3(&w->p.vz, &w->nvz);
    fs__run(w, collide_task, c, n);
    swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
    swap3(&w->p.vx, &w->nvx), swap3(&w->p.vy, &w->nvy), swap3(&w->p.vz, &w->nvz);
    ph[FS_PHASE_VISCOSITY] += fs__now_ms() - t;

    /* n*, Eq. 18, Eq. 14 assembled */
    t = fs__now_ms();
    fs__run(w, nstar_task, c, n);
    fs__run(w, wall_nstar_task, c, s->nact);
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
    if (nnz > A->nnz_cap || nnz / 2 + rows > s->pcg.L.nnz_cap) { /* not seen: ~33 entries a row at rest */
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

    /* ICCG */
    t = fs__now_ms();
    double res = 0;
    int it = 0;
    if (rows > 0) {
        s->pcg.w = w;
        s->pcg.fallbacks = 0;
        bool pre = fs__ic0(A, &s->pcg);
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

    /* Eq. 15-17 */
    t = fs__now_ms();
    fs__run(w, correct_task, c, n);
    swap3(&w->p.x, &w->nx), swap3(&w->p.y, &w->ny), swap3(&w->p.z, &w->nz);
    ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
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
    float numax = 0;
    for (int m = 0; m < w->nmat; m++) {
        const float *q = w->mat[m].p;
        c.m.rho[m] = q[FS_P_MASS_DENSITY];
        c.m.nu[m] = q[FS_P_KIN_VISCOSITY];
        c.m.sigma[m] = q[FS_P_SURFACE_TENSION];
        c.m.diff[m] = q[FS_P_HEAT_DIFFUSIVITY] * w->lap_norm * w->h; /* as solver.c's mconst */
        c.m.heat |= c.m.diff[m] > 0;
        c.m.tension |= c.m.sigma[m] > 0;
    }
    bool present[FS_MAX_MATERIALS] = {false};
    float umax2 = 0;
    for (int i = 0; i < w->n; i++) {
        float v2 = w->p.vx[i] * w->p.vx[i] + w->p.vy[i] * w->p.vy[i] + w->p.vz[i] * w->p.vz[i];
        umax2 = v2 > umax2 ? v2 : umax2;
        present[w->p.mat[i]] = true;
    }
    float cap = INFINITY; /* the capillary limit sqrt(rho l0^3 / (2 pi sigma)) (Brackbill et al. 1992) */
    for (int m = 0; m < w->nmat; m++) {
        if (!present[m]) continue;
        if (c.m.nu[m] > numax) numax = c.m.nu[m];
        if (c.m.sigma[m] > 0) {
            float t = sqrtf(c.m.rho[m] * s->l0 * s->l0 * s->l0 / (2.0f * 3.14159265f * c.m.sigma[m]));
            cap = t < cap ? t : cap;
        }
    }
    /* the sub-step: Courant (with what gravity adds over it), viscous and capillary limits */
    const float l0 = s->l0, gmag = sqrtf(w->dom.gravity.x * w->dom.gravity.x + w->dom.gravity.y * w->dom.gravity.y +
                                         w->dom.gravity.z * w->dom.gravity.z);
    float umax = sqrtf(umax2) + gmag * w->dt;
    float lim = umax > 0 ? COURANT * l0 / umax : w->dt;
    if (numax > 0 && VISC_LIMIT * l0 * l0 / numax < lim) lim = VISC_LIMIT * l0 * l0 / numax;
    if (cap < lim) lim = cap;
    /* clamped before the conversion: a huge (or NaN) speed gives MAX_SUB (or 1) */
    int nsub = fs__floor_clamp(ceilf(w->dt / lim - 1e-4f), 1, MAX_SUB);
    c.dt = w->dt / (float)nsub;
    c.h2 = w->h * w->h;
    c.near2 = NEAR * l0 * NEAR * l0;
    if (c.near2 > c.h2) c.near2 = c.h2;
    c.rmin = RMIN * l0;
    c.lap_k = 2.0f * 3.0f / (s->lambda * s->n0l); /* Eq. 7, d = 3 */
    c.ppe_k = 2.0f * 3.0f / (s->lambda_n * s->n0);
    c.grad_k = 3.0f / s->n0;                      /* Eq. 5 */
    s->substeps = nsub;
    s->dt_sub = c.dt;
    double acc[FS_PHASE_COUNT] = {0};
    for (int k = 0; k < nsub && w->n > 0; k++) {
        for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] = 0;
        c.heat_now = c.m.heat && k == 0;
        substep(w, s, &c);
        for (int q = 0; q < FS_PHASE_COUNT; q++) acc[q] += ph[q];
    }
    for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] = acc[q];
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += c.bad[k];
        w->st.escapes_clamped += c.clamped[k];
    }
    w->st.sim_time += w->dt;
    w->st.step_ms = fs__now_ms() - t0;
}

/* ---- snapshots: obstacles, last pressures (per live particle, index order) and wall pressures */
#define STATE_MAGIC 0x3153504du /* "MPS1" */

static size_t mps_state_write(const fs_world *w, void *buf, size_t cap) {
    const mps_state *s = state_of(w);
    if (!s) return 0;
    int nw = s->built ? s->nwall : 0;
    size_t need = 4 * 4 + (size_t)s->nobst * 6 * 4 + (size_t)w->n * 4 + (size_t)nw * 4;
    if (!buf) return need;
    if (cap < need) return 0;
    unsigned char *b = buf;
    uint32_t hdr[4] = {STATE_MAGIC, (uint32_t)s->nobst, (uint32_t)w->n, (uint32_t)nw};
    memcpy(b, hdr, sizeof hdr), b += sizeof hdr;
    for (int o = 0; o < s->nobst; o++) {
        float v[6] = {s->obst[o].lo.x, s->obst[o].lo.y, s->obst[o].lo.z, s->obst[o].hi.x, s->obst[o].hi.y,
                      s->obst[o].hi.z};
        memcpy(b, v, sizeof v), b += sizeof v;
    }
    for (int i = 0; i < w->n; i++) memcpy(b, &s->p_slot[w->p.slot[i]], 4), b += 4;
    if (nw) memcpy(b, s->wp, (size_t)nw * 4);
    return need;
}

static fs_status mps_state_read(fs_world *w, const void *buf, size_t n, const fs__restore_ctx *rc, fs_error *err) {
    uint32_t hdr[4];
    const char *why = "header";
    if (n < sizeof hdr) goto bad;
    memcpy(hdr, buf, sizeof hdr);
    if (hdr[0] != STATE_MAGIC || hdr[1] > MAX_OBST || hdr[2] != (uint32_t)rc->particles || hdr[3] > (1u << 28))
        goto bad;
    size_t need = sizeof hdr + (size_t)hdr[1] * 24 + (size_t)hdr[2] * 4 + (size_t)hdr[3] * 4;
    why = "length";
    if (n != need) goto bad;
    const unsigned char *b = (const unsigned char *)buf + sizeof hdr;
    /* obstacles as fs_world_mps_add_obstacle leaves them: inside the box, a spacing thick */
    const fs_domain *d = rc->dom;
    why = "an obstacle is not inside the box or thinner than a spacing";
    for (uint32_t o = 0; o < hdr[1]; o++) {
        float v[6];
        memcpy(v, b + o * 24, sizeof v);
        if (!(v[0] >= d->box_min.x && v[1] >= d->box_min.y && v[2] >= d->box_min.z && v[3] <= d->box_max.x &&
              v[4] <= d->box_max.y && v[5] <= d->box_max.z && v[3] - v[0] >= d->spacing &&
              v[4] - v[1] >= d->spacing && v[5] - v[2] >= d->spacing))
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
    b += (size_t)hdr[2] * 4;
    if (s->built && (int)hdr[3] == s->nwall && s->nwall) memcpy(s->wp, b, (size_t)s->nwall * 4);
    return FS_OK;
bad:
    if (err) snprintf(err->msg, sizeof err->msg, "snapshot: the mps section is damaged (%s)", why);
    return FS_ERR_ARG;
}

/* ---- public extras --------------------------------------------------------- */
fs_status fs_world_mps_add_obstacle(fs_world *w, fs_vec3 lo, fs_vec3 hi, fs_error *err) {
    mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s) {
        if (err) snprintf(err->msg, sizeof err->msg, "obstacles need the mps solver (fs_world_set_solver)");
        return FS_ERR_ARG;
    }
    if (!(isfinite(lo.x) && isfinite(lo.y) && isfinite(lo.z) && isfinite(hi.x) && isfinite(hi.y) && isfinite(hi.z)) ||
        !(hi.x > lo.x && hi.y > lo.y && hi.z > lo.z)) {
        if (err) snprintf(err->msg, sizeof err->msg, "obstacle: lo < hi and finite, on every axis");
        return FS_ERR_ARG;
    }
    if (s->obst_epoch != w->epoch) s->nobst = 0, s->obst_epoch = w->epoch;
    if (s->nobst >= MAX_OBST) {
        if (err) snprintf(err->msg, sizeof err->msg, "obstacle: all %d slots in use", MAX_OBST);
        return FS_ERR_FULL;
    }
    /* clipped to the box */
    const fs_vec3 a = w->dom.box_min, b = w->dom.box_max;
    lo = (fs_vec3){fmaxf(lo.x, a.x), fmaxf(lo.y, a.y), fmaxf(lo.z, a.z)};
    hi = (fs_vec3){fminf(hi.x, b.x), fminf(hi.y, b.y), fminf(hi.z, b.z)};
    if (!(hi.x - lo.x >= w->dom.spacing && hi.y - lo.y >= w->dom.spacing && hi.z - lo.z >= w->dom.spacing)) {
        if (err) snprintf(err->msg, sizeof err->msg, "obstacle: less than one spacing thick inside the box");
        return FS_ERR_RANGE;
    }
    s->obst[s->nobst++] = (mps_obst){lo, hi};
    if (!build_walls(w, s) || !ensure_matrix(w, s)) {
        s->nobst--;
        s->built = false;
        if (err) snprintf(err->msg, sizeof err->msg, "obstacle: out of memory for its wall particles");
        return FS_ERR_NOMEM;
    }
    /* particles inside it leave */
    for (int i = w->n - 1; i >= 0; i--)
        if (w->p.x[i] > lo.x && w->p.x[i] < hi.x && w->p.y[i] > lo.y && w->p.y[i] < hi.y && w->p.z[i] > lo.z &&
            w->p.z[i] < hi.z)
            fs__remove_index(w, i);
    fs__sync_ids(w);
    return FS_OK;
}

bool fs_world_mps_info(const fs_world *w, fs_mps_info *o) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s || !o) return false;
    memset(o, 0, sizeof *o);
    o->l0 = s->l0, o->re_n = s->re_n, o->re_lap = s->re_l;
    o->n0 = s->n0, o->n0_lap = s->n0l, o->lambda = s->lambda;
    o->walls = s->nwall, o->obstacles = s->nobst;
    o->substeps = s->substeps, o->dt_sub = s->dt_sub;
    o->unknowns = s->unknowns, o->surface = s->surface, o->active_walls = s->nact;
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

const fs_solver_ops fs__mps_ops = {
    .name = "mps",
    .doc = "Premoze et al. 2003: Moving Particle Semi-implicit, pressure Poisson equation by ICCG, wall particles",
    .attach = mps_attach,
    .detach = mps_detach,
    .prepare = mps_prepare,
    .step = mps_step,
    .removed = mps_removed,
    .state_write = mps_state_write,
    .state_read = mps_state_read,
};
