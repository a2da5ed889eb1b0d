/* sim_internal.h - the world's private layout, shared by the sim's .c files.
 * Nothing outside server/sim/ includes this. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include <math.h>

#include "fluid_sim.h"

typedef struct fs_material {
    char name[16];
    float p[FS_P_COUNT];
} fs_material;

typedef struct fs_heater {
    fs_heater_def def;
    bool used;
} fs_heater;

typedef struct fs_body {
    uint32_t id;
    fs_shape shape;
    fs_vec3 size;
    float density, mass, inv_mass, friction, bound;
    fs_vec3 inv_inertia; /* body frame, diagonal */
    bool is_static, grab;
    fs_vec3 pos, vel, ang; /* ang: angular velocity, world frame */
    fs_vec3 vel_eff;       /* the velocity the last step advanced it with */
    fs_quat rot;
    fs_vec3 pos0;          /* Alg. 6 line 2: the saved pose */
    fs_quat rot0;
    fs_vec3 acc_J, acc_T;  /* line 7: the particles' impulse and its torque */
    fs_vec3 grab_local, grab_target;
} fs_body;

#define FS_MAX_CONTACTS 4096

typedef struct fs_emitter {
    fs_emitter_def def;
    bool used;
    int emitted;
    double accum; /* fractional particles owed */
} fs_emitter;

typedef struct fs_drain {
    fs_drain_def def;
    bool used;
} fs_drain;

/* Hot particle data, structure of arrays, in spatial (cell) order.  Every
 * array named here has a twin in `alt` so a reorder is a gather + swap. */
typedef struct fs_particles {
    float *x, *y, *z;    /* position (predicted position during a step) */
    float *px, *py, *pz; /* previous position (Alg. 1 line 8) */
    float *vx, *vy, *vz;
    uint8_t *mat;
    float *temp;    /* temperature, deg C (Solenthaler 2007, "Temperature Effects") */
    uint8_t *frozen; /* was fully solid at the end of the last step */
    uint32_t *id;   /* stable public id, never reused */
    int32_t *slot;  /* storage slot for cold per-particle data (springs) */
} fs_particles;

/* A solver (solver.c: Clavet; unified.c; mps.c).  The world owns the
 * particles and everything shared; a solver owns only the state it alone
 * reads, behind w->solver_state, and keeps any per-particle part of it by
 * storage slot (p.slot) so the grid's reorders never move it. */
typedef struct fs__restore_ctx {
    const fs_domain *dom; /* the snapshot's domain */
    int particles;        /* and its particle count */
    bool apply;
} fs__restore_ctx;

typedef struct fs_solver_ops {
    const char *name, *doc;
    /* Allocates the state for the world's capacity (may be NULL). */
    fs_status (*attach)(fs_world *w, fs_error *err);
    void (*detach)(fs_world *w); /* frees it (may be NULL) */
    /* Derives the state from the current particles: after a switch, after
     * a scene is built and after fs_world_reset.  No allocation (may be NULL). */
    void (*prepare)(fs_world *w);
    void (*step)(fs_world *w); /* one sub-step of w->dt */
    /* The particle in storage slot `slot` is being removed (may be NULL). */
    void (*removed)(fs_world *w, int slot);
    /* Snapshot section: write the state (buf NULL: count only) and read it
     * back.  read with rc->apply false only checks (against the snapshot's
     * domain and particle count, not yet the world's); with apply true it is
     * called after a successful check and after the particles were restored. */
    size_t (*state_write)(const fs_world *w, void *buf, size_t cap);
    fs_status (*state_read)(fs_world *w, const void *buf, size_t n, const fs__restore_ctx *rc, fs_error *err);
} fs_solver_ops;
extern const fs_solver_ops fs__clavet_ops;
extern const fs_solver_ops fs__unified_ops;
extern const fs_solver_ops fs__mps_ops;
const fs_solver_ops *fs__solver_ops(fs_solver s); /* NULL when not built in */
void fs__solver_detach(fs_world *w);             /* frees the current solver's state */

struct fs_world {
    fs_world_def def;
    fs_solver solver;
    void *solver_state;
    fs_domain dom;
    uint32_t epoch; /* counts fs_world_reset calls: solver state tied to a domain (MPS obstacles) */
    char scene[32];

    /* derived from def and dom */
    float dt;  /* one sub-step: def.dt / def.substeps */
    float h, inv_h, max_speed;
    fs_vec3 lo, hi; /* box shrunk by the particle radius: where centres may be */

    int cap, n;
    fs_particles p, alt;
    /* per-particle scratch, in the current order */
    float *s_a, *s_b;          /* pressure / near pressure (premultiplied) */
    float *nx, *ny, *nz;       /* output positions of a gather phase */
    float *nvx, *nvy, *nvz;    /* output velocities of a gather phase */
    int32_t *cell;             /* cell of each particle at the last grid build */
    int32_t *perm;             /* sort permutation */
    int32_t *spr_total;        /* Alg. 4: springs + candidates per particle */
    /* neighbour lists at the predicted positions, built once per step and
     * used by Alg. 4 and Alg. 2; nb_n[i] = -1 when i had more than NB_MAX */
    int32_t *nb, *nb_n;
    /* per worker: a neighbour scan's output, room for every particle (+16):
     * index j, |r_ij|^2 and r_ij */
    int32_t *scr_j;
    float *scr_r2, *scr_dx, *scr_dy, *scr_dz;

    /* ids and slots */
    uint32_t next_id;
    int32_t *slot_index; /* slot -> current index, -1 when free */
    int32_t *free_slots; /* stack */
    int nfree;
    int32_t *id_order;   /* slots in increasing id order, n entries */
    int32_t *by_id;      /* k -> index, rebuilt after each reorder */
    int32_t *seq_order;  /* FS_RELAX_SEQUENTIAL: a fixed random order of slots */

    /* springs, stored per slot so a reorder never moves them; each list is
     * sorted by partner slot; both ends hold the spring (kept identical). */
    int K;
    uint16_t *spr_n;  /* by slot */
    int32_t *spr_j;   /* partner slot, [slot * K + k] */
    float *spr_L;     /* rest length */
    int springs;      /* total springs (pairs) */

    /* uniform grid, cell size h / FS_GRID_DIV, over the box */
    float cs, inv_cs;
    int gx, gy, gz, ncell;
    int32_t *cell_start; /* ncell + 1 */

    fs_material mat[FS_MAX_MATERIALS];
    int nmat;

    fs_heater heat[FS_MAX_HEATERS];
    float lap_norm; /* Eq. 21 kernel normalisation from the rest lattice */
    float ambient;  /* temperature of new particles, deg C */
    float *dT;      /* per particle: dT/dt from diffusion, this step */
    float *solid;   /* per particle: solidity this step, 1 solid .. 0 liquid */
    fs_emitter emit[FS_MAX_EMITTERS];
    fs_drain drain[FS_MAX_DRAINS];

    fs_body bodies[FS_MAX_BODIES];
    int nbodies;
    uint32_t next_body_id;
    void *contacts, *contacts_prev; /* FS_MAX_CONTACTS each (bodies.c) */
    int ncontacts, ncontacts_prev;
    float stick_max;

    bool paused;
    int pending_steps;

    fs_stats st;
    uint64_t spr_refused_worker[FS_MAX_WORKERS];
};

#define FS_NB_MAX 128
#define FS_SCR_PAD 16

/* One worker's neighbour-scan output (fs_world.scr_*): index j, |r_ij|^2 and r_ij. */
typedef struct fs_scratch {
    int32_t *j;
    float *r2, *dx, *dy, *dz;
} fs_scratch;

static inline fs_scratch fs__scratch_of(const fs_world *w, int worker) {
    size_t off = (size_t)worker * ((size_t)w->cap + FS_SCR_PAD);
    fs_scratch s = {w->scr_j + off, w->scr_r2 + off, w->scr_dx + off, w->scr_dy + off, w->scr_dz + off};
    return s;
}

/* Clones of the hot pair passes for AVX2 and for any x86-64 (dispatched at
 * load time); the loops marked omp simd vectorise in the AVX2 clone.  Not
 * under ThreadSanitizer: gcc instruments the clones' ifunc resolver, which the
 * dynamic loader runs before the TSan runtime exists (SIGSEGV at start). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define FS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FS_SIMD_CLONES
#endif

/* The grid's cells are h/2 wide.  A particle's neighbours lie in the 5 x 5
 * rows of 5 cells (consecutive in x, hence contiguous index ranges of the
 * cell-sorted particles) around its cell; each row keeps its y and z extent
 * so a scan skips, per particle, rows that are farther than h. */
#define FS_GRID_DIV 2
typedef struct fs_ranges {
    int cell, cyz; /* cached cell and its (y, z) row index */
    int n;
    int32_t base[25]; /* first cell of each row */
    int32_t b[25], e[25];
    float ylo[25], yhi[25], zlo[25], zhi[25];
} fs_ranges;
void fs__ranges_of(const fs_world *w, int cell, fs_ranges *r);

/* kernels.c: the scan of the 27 cells around (xi, yi, zi), keeping j != i
 * with |r_ij|^2 < h2.  Writes j and r2 (and r_ij when d is true) packed,
 * returns how many.  Uses AVX2 when the CPU has it. */
void fs__scan_init(void); /* once, before any scan (fs_world_create calls it) */
int fs__scan(const float *X, const float *Y, const float *Z, const fs_ranges *r, int i, float h2, bool d,
             int32_t *oj, float *or2, float *odx, float *ody, float *odz);

/* world.c */
/* fs_world_reset in three parts: the domain's ranges for a world of capacity
 * cap (no change), the grid for it (NULL: out of memory), and the rest,
 * which cannot fail (takes ownership of starts). */
fs_status fs__domain_check(const fs_domain *dom, int cap, fs_error *err);
int32_t *fs__grid_alloc(const fs_domain *dom);
void fs__reset_apply(fs_world *w, const fs_domain *dom, int32_t *starts);
/* the set_emitter / set_heater / set_drain ranges, for snapshots too */
fs_status fs__emitter_check(const fs_emitter_def *d, int nmat, fs_error *err);
fs_status fs__heater_check(const fs_heater_def *d, fs_error *err);
fs_status fs__drain_check(const fs_drain_def *d, fs_error *err);
void fs__remove_index(fs_world *w, int i);
int fs__alloc_particle(fs_world *w, float x, float y, float z, float vx, float vy, float vz, int m);
void fs__rebuild_by_id(fs_world *w);
void fs__sync_ids(fs_world *w);
void fs__materials_init(fs_world *w);
double fs__now_ms(void);

/* sparse.c: CSR matrices and the incomplete-Cholesky conjugate gradient */
#define FS_DOT_CHUNKS 64
typedef struct fs_csr {
    int n, nnz, n_cap, nnz_cap;
    int32_t *rowptr, *col; /* columns sorted within a row */
    double *val;
} fs_csr;
typedef struct fs_pcg {
    fs_csr L; /* IC(0) factor */
    double *r, *z, *p, *q, *diag;
    int fallbacks; /* rows where IC(0) broke down and used the diagonal */
    fs_world *w;   /* when set, mat-vecs and vector updates run through fs__run (deterministic) */
} fs_pcg;
bool fs__csr_alloc(fs_csr *A, int n, int nnz_cap);
void fs__csr_free(fs_csr *A);
bool fs__pcg_alloc(fs_pcg *s, int n, int nnz_cap);
void fs__pcg_free(fs_pcg *s);
bool fs__ic0(const fs_csr *A, fs_pcg *s);
/* Solves A x = b from the x given, to |r| <= tol |b|; returns iterations. */
int fs__pcg(const fs_csr *A, fs_pcg *s, const double *b, double *x, double tol, int maxit, bool precond,
            double *resid);

/* bodies.c */
size_t fs__contact_size(void);
/* A snapshot's bodies (in id order, ids below next_id) and warm-start
 * contacts against their documented ranges, inside the domain's box; fills
 * in what derives from shape, size and density (mass, inertia, bound). */
#define FS_BODY_MAX_SPEED 1000.0f /* m/s: ten times the step's rail */
#define FS_BODY_MAX_SPIN 2000.0f  /* rad/s: ten times the step's rail */
fs_status fs__bodies_check(fs_body *bodies, int nb, uint32_t next_id, const fs_domain *dom, const void *contacts,
                           int nc, fs_error *err);
void fs__bodies_step(fs_world *w, float dt, float R, const float *mu, const float *stick_d, const float *stick_k,
                     const float *mass, void (*run)(fs_world *, fs_task_fn *, void *, int));

/* solver.c: the Clavet step, and pieces any solver may call */
void fs__grid_build(fs_world *w);
void fs__step(fs_world *w);
/* runs fn over [0, count) through the injected parallel_for (serially for
 * small counts or one worker) */
void fs__run(fs_world *w, fs_task_fn *fn, void *ctx, int count);
/* emitters and drains: the start of every solver's step */
void fs__emit_and_drain(fs_world *w);
/* Temperature T after dt: Eq. 21's rate dTdt (when diffuse) by explicit
 * Euler, then every heater of w->heat at (x, y, z). */
float fs__heat_update(const fs_world *w, float T, bool diffuse, float dTdt, float x, float y, float z, float dt);
/* Eq. 21's pair coefficient of material m: the diffusivity times the rest
 * lattice normalisation times h, so that dT_i/dt = sum_j (c_i + c_j)/2
 * (1 - r_ij/h) (T_j - T_i). */
float fs__heat_coef(const fs_world *w, int m);

/* unified.c: knobs and diagnostics for tests and benchmarks (no-ops or 0
 * when the world is on another solver) */
void fs__unified_set_cfl(fs_world *w, float cfl); /* default 0.4 */
int fs__unified_last_substeps(const fs_world *w, float *dt);
int fs__unified_components(fs_world *w, int *pairs, int *largest);
float fs__unified_max_strain(const fs_world *w);
float fs__unified_density_ratio(const fs_world *w, float *max);

/* floor(v) clamped to [lo, hi], NaN giving lo: a float outside int's range
 * never reaches the conversion (which would be undefined behaviour). */
static inline int fs__floor_clamp(float v, int lo, int hi) {
    if (!(v >= (float)lo)) return lo;
    if (v >= (float)hi) return hi;
    return (int)floorf(v);
}

/* The grid cell holding (x, y, z), clamped to the grid (any float, NaN included). */
static inline int fs__cell_of(const fs_world *w, float x, float y, float z) {
    int cx = fs__floor_clamp((x - w->dom.box_min.x) * w->inv_cs, 0, w->gx - 1);
    int cy = fs__floor_clamp((y - w->dom.box_min.y) * w->inv_cs, 0, w->gy - 1);
    int cz = fs__floor_clamp((z - w->dom.box_min.z) * w->inv_cs, 0, w->gz - 1);
    return (cz * w->gy + cy) * w->gx + cx;
}

/* Whether the sorted list J[0..n) holds t (springs, body neighbours). */
static inline bool fs__sorted_has(const int32_t *J, int n, int32_t t) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (J[mid] == t) return true;
        if (J[mid] < t)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return false;
}

/* deterministic hash-based noise in [0, 1) */
static inline float fs__rand01(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
