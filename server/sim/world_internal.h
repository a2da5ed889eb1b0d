/* world_internal.h - the world's private layout, shared by the sim's .c
 * files: struct fs_world, its particle arrays and the records it holds
 * (heaters, emitters, drains, bodies, mesh obstacles).  Nothing outside server/sim/
 * includes it. */
#ifndef SIM_WORLD_INTERNAL_H
#define SIM_WORLD_INTERNAL_H

#include "fluid_sim.h"
#include "material.h"
#include "sdf.h"
#include "sim_util.h"

/* The world's records of what the commands set (heat.c, sources.c) and of
 * its bodies (bodies.c). */
typedef struct fs_heater {
    fs_heater_def def;
    bool used;
} fs_heater;

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

typedef struct fs_body {
    uint32_t id;
    fs_shape shape;
    fs_vec3 size;
    float density, mass, inv_mass, friction, bound;
    fs_vec3 inv_inertia; /* body frame, diagonal */
    bool is_static, grab;
    /* FS_SHAPE_MESH: 1 + the index of its data in fs_world.body_meshes (0
     * for the other shapes).  It fills the padding after the flags: the
     * record's size and layout, which snapshots copy, are unchanged. */
    uint8_t mesh_slot;
    fs_vec3 pos, vel, ang; /* ang: angular velocity, world frame */
    fs_vec3 vel_eff;       /* the velocity the last step advanced it with, plus any kick since */
    fs_quat rot;
    fs_vec3 pos0; /* Alg. 6 line 2: the saved pose */
    fs_quat rot0;
    fs_vec3 acc_J, acc_T; /* line 7: the particles' impulse and its torque */
    fs_vec3 grab_local, grab_target;
} fs_body;

/* A mesh obstacle (obstacles.c): the placed mesh, in world coordinates, and
 * its distance field.  Immutable between its add and its removal. */
typedef struct fs_obstacle {
    uint32_t id;
    fs_vec3 pos;
    fs_quat rot;
    float scale;
    bool closed;
    fs_vec3 *verts; /* placed */
    uint32_t *tris;
    int nv, nt;
    fs_vec3 lo, hi; /* the placed mesh's bounding box */
    fs_sdf sdf;
} fs_obstacle;

#define FS_MAX_CONTACTS 4096

/* Hot particle data, structure of arrays, in spatial (cell) order.  Every
 * array named here has a twin in `alt` so a reorder is a gather + swap. */
typedef struct fs_particles {
    float *x, *y, *z;    /* position (predicted position during a step) */
    float *px, *py, *pz; /* previous position (Alg. 1 line 8) */
    float *vx, *vy, *vz;
    uint8_t *mat;
    float *temp;     /* temperature, deg C (Solenthaler 2007, "Temperature Effects") */
    uint8_t *frozen; /* was fully solid at the end of the last step */
    uint32_t *id;    /* stable public id, never reused */
    int32_t *slot;   /* storage slot for cold per-particle data (springs) */
} fs_particles;

struct fs_solver_ops;

/* The fewest particles a scene is loaded with (fs_world_load_scene; a snapshot's scene size is held to it). */
#define SCENE_MIN_PARTICLES 100

struct fs_world {
    fs_world_def def;
    fs_solver solver;
    const struct fs_solver_ops *ops; /* the table's row of `solver` (solver_table.c sets both) */
    void *solver_state;
    fs_domain dom;
    uint32_t epoch; /* counts fs_world_reset calls: solver state tied to a domain (MPS obstacles) */
    char scene[32];
    int scene_size; /* the particles the scene was loaded with (fs_world_scene_size); 0: none */

    /* derived from def and dom */
    float dt; /* one sub-step: def.dt / def.substeps */
    float h, inv_h, max_speed;
    fs_vec3 lo, hi; /* box shrunk by the particle radius: where centres may be */

    int cap, n;
    fs_particles p, alt;
    /* per-particle scratch any solver may use, in the current order */
    float *nx, *ny, *nz;    /* output positions of a gather phase */
    float *nvx, *nvy, *nvz; /* output velocities of a gather phase */
    int32_t *cell;          /* cell of each particle at the last grid build */
    int32_t *perm;          /* the grid's sort permutation */
    /* neighbour lists at the predicted positions, built once per step by a
     * solver's density pass; nb_n[i] = -1 when i had more than FS_NB_MAX */
    int32_t *nb, *nb_n;
    /* per worker: a neighbour scan's output, room for every particle (+16):
     * index j, |r_ij|^2 and r_ij */
    int32_t *scr_j;
    float *scr_r2, *scr_dx, *scr_dy, *scr_dz;

    /* ids and slots (particles.c) */
    uint32_t next_id;
    int32_t *slot_index; /* slot -> current index, -1 when free */
    int32_t *free_slots; /* stack */
    int nfree;
    int32_t *id_order; /* slots in increasing id order, n entries */
    int32_t *by_id;    /* k -> index, rebuilt after each reorder */

    /* springs (springs.c), stored per slot so a reorder never moves them;
     * each list is sorted by partner slot; both ends hold the spring (kept
     * identical).  World state: saved, hashed, made by scenes; the Clavet
     * step is the solver that moves them. */
    int K;
    uint16_t *spr_n; /* by slot */
    int32_t *spr_j;  /* partner slot, [slot * K + k] */
    float *spr_L;    /* rest length */
    int springs;     /* total springs (pairs) */

    /* uniform grid, cell size h / FS_GRID_DIV, over the box (grid.c) */
    float cs, inv_cs;
    int gx, gy, gz, ncell;
    int32_t *cell_start; /* ncell + 1 starts (and one more entry, fs__grid_build's) */
    /* particles [0, grid_n) are in the cell order of the last grid build
     * (cell_start, cell), though they may have moved since; the ones after
     * were appended since.  0 once anything reorders or rewrites them (a
     * removal, a reset, a snapshot): no particle is in a known cell. */
    int grid_n;

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
    struct fs_mesh_body *body_meshes[FS_MAX_BODIES]; /* the mesh bodies' data (body_mesh.c), by mesh_slot - 1 */
    uint32_t next_body_id;
    void *contacts, *contacts_prev; /* FS_MAX_CONTACTS each (body_contacts.c) */
    int ncontacts, ncontacts_prev;
    float stick_max;

    fs_obstacle obstacles[FS_MAX_OBSTACLES]; /* in id order */
    int nobstacles;
    uint32_t next_obstacle_id;
    uint32_t obstacles_gen; /* counts changes to the obstacles: boundaries built from them (MPS walls) */

    fs_probe_def probes[FS_MAX_PROBES]; /* probes.c, in the order added */
    float probe_value[FS_MAX_PROBES];
    uint64_t probe_tick[FS_MAX_PROBES];
    double probe_impulse[FS_MAX_PROBES]; /* pressure sensors: sum of value x dt over this step's sub-steps */
    double probe_span;                   /* the sub-steps' time those sums cover (0 between steps) */
    int nprobes;

    bool paused;
    int pending_steps;

    fs_stats st;
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

/* by_id[k] = index of the k-th particle in id order: after a reorder or a
 * batch of removals (fs__sync_ids); the entries k in [b, e). */
static inline void fs__rebuild_by_id_range(fs_world *w, int b, int e) {
    for (int k = b; k < e; k++) w->by_id[k] = w->slot_index[w->id_order[k]];
}
static inline void fs__rebuild_by_id(fs_world *w) {
    fs__rebuild_by_id_range(w, 0, w->n);
}

/* Direction r_ij of a coincident pair (r = 0): a pseudo-random unit vector
 * drawn from the pair's ids (random streams `stream` and `stream` + 1),
 * negated when i and j swap, so the pair still acts along one line with
 * equal and opposite shares. */
static inline void fs__coincident_dir(const fs_particles *p, int i, int j, uint64_t stream, float *dx, float *dy,
                                      float *dz) {
    uint32_t a = p->id[i], b = p->id[j];
    float sg = b > a ? 1.0f : -1.0f;
    uint64_t key = b > a ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    float z = 2.0f * fs__rand01(key, stream) - 1.0f, t = 6.2831853f * fs__rand01(key, stream + 1);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    *dx = sg * r * cosf(t), *dy = sg * r * sinf(t), *dz = sg * z;
}

#endif
