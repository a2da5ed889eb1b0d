/* fluid_sim.h - the simulation core's whole public interface.
 *
 * A plain C11 library: it knows nothing of sockets, JSON, msgpack or which
 * thread owns it.  One fs_world is touched by one thread at a time (the
 * caller's); the library may fan work out to helper threads only through the
 * parallel_for callback the caller injects in fs_world_def.
 *
 * Units: metres, seconds.  Three solvers (fs_world_set_solver): Clavet,
 * Beaudoin, Poulin 2005, "Particle-based viscoelastic fluid simulation"
 * (Algorithms 1-5, Eq. 1-11; clavet.c), the default; Solenthaler, Schläfli,
 * Pajarola 2007, "A unified particle model for fluid-solid interactions"
 * (unified.c); Premoze et al. 2003, "Particle-based simulation of fluids"
 * (moving particle semi-implicit, MPS; mps.c).
 * Material parameters that carry a length are expressed in units of the
 * interaction radius h, so a material behaves the same at any particle count;
 * stiffnesses are per step (k dt^2), see params.c.
 *
 * The header reads as the world's API first: creation and the domain,
 * particles, materials, interaction, running, solvers, bodies, scenes,
 * stats, snapshots, the thread pool.  Each solver's own settings and calls
 * follow in its section (Clavet, MPS), and the world's definition, which
 * carries those settings, closes it.
 */
#ifndef FLUID_SIM_H
#define FLUID_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define FS_MAX_MATERIALS 8
#define FS_MAX_EMITTERS 8
#define FS_MAX_DRAINS 8
#define FS_MAX_HEATERS 8
/* Most workers a step fans out to (fs_world_def.worker_count, the pool's
 * threads): per-worker tallies are arrays of this size. */
#define FS_MAX_WORKERS 64
#define FS_ERROR_LEN 160

typedef struct fs_world fs_world;

typedef struct fs_vec3 {
    float x, y, z;
} fs_vec3;

typedef enum fs_status {
    FS_OK = 0,
    FS_ERR_ARG,     /* malformed argument (NaN, negative radius, ...) */
    FS_ERR_RANGE,   /* value outside its documented range */
    FS_ERR_UNKNOWN, /* unknown name (scene, material, parameter) */
    FS_ERR_FULL,    /* capacity reached */
    FS_ERR_NOMEM
} fs_status;

/* Every call that can refuse writes a human-readable reason here. */
typedef struct fs_error {
    char msg[FS_ERROR_LEN];
} fs_error;

/* ---- Task system (injected, Box2D v3 style) ----------------------------
 * parallel_for must call fn over disjoint [begin, end) ranges that cover
 * [0, count) and return when all are done.  worker is in [0, worker_count).
 * Results never depend on how the range is split: every phase is written as
 * a gather, so the state is bit-identical for any thread count. */
typedef void fs_task_fn(int begin, int end, int worker, void *ctx);
typedef void fs_parallel_for_fn(fs_task_fn *fn, void *ctx, int count, void *user);

/* ---- World ------------------------------------------------------------- */
/* What a world is created with; its fields are in "The world's
 * definition", the last section, after the solvers' settings it carries. */
typedef struct fs_world_def fs_world_def;
fs_world_def fs_default_world_def(void);
fs_world *fs_world_create(const fs_world_def *def);
void fs_world_destroy(fs_world *w);

/* The domain: an axis-aligned box with walls, gravity, interaction radius h
 * and the rest spacing particles are laid out at. */
typedef struct fs_domain {
    fs_vec3 box_min, box_max;
    fs_vec3 gravity;
    float h;
    float spacing;
    float particle_radius; /* wall collision radius */
} fs_domain;

/* Empties the world (particles, bodies, emitters, drains, heaters) and sets
 * a new domain.  Allocates (the only calls that do, with fs_world_create).
 * The domain is refused (the world left as it was) unless every number is
 * finite, the box is non-empty with corners within +-FS_DOMAIN_MAX_COORD
 * and 2^20 spacings of the origin,
 * |gravity| <= FS_DOMAIN_MAX_GRAVITY, the spacing lies in
 * FS_DOMAIN_MIN_SPACING..FS_DOMAIN_MAX_SPACING, h / spacing in
 * FS_DOMAIN_MIN_H_OVER_S..FS_DOMAIN_MAX_H_OVER_S, 0 <= particle_radius <= h
 * (0: half the spacing) and below half of each extent, the grid of h/2
 * cells has at most FS_DOMAIN_MAX_CELLS, and the box holds at most
 * max(FS_DOMAIN_SITES_FLOOR, FS_DOMAIN_SITES_PER_PARTICLE x capacity)
 * lattice sites of the spacing, with at most max(FS_DOMAIN_FACE_FLOOR,
 * FS_DOMAIN_FACE_PER_PARTICLE x capacity^(2/3)) on its faces (area /
 * spacing^2).  The scenes use h = 2.1 and 3.1 spacings of 8 cm. */
#define FS_DOMAIN_MAX_COORD 1e4f
#define FS_DOMAIN_MAX_GRAVITY 100.0
#define FS_DOMAIN_MIN_SPACING 1e-3f
#define FS_DOMAIN_MAX_SPACING 10.0f
#define FS_DOMAIN_MIN_H_OVER_S 1.0
#define FS_DOMAIN_MAX_H_OVER_S 8.0
#define FS_DOMAIN_MAX_CELLS 64e6
#define FS_DOMAIN_SITES_FLOOR 16777216.0
#define FS_DOMAIN_SITES_PER_PARTICLE 64.0
#define FS_DOMAIN_FACE_FLOOR 262144.0
#define FS_DOMAIN_FACE_PER_PARTICLE 64.0
fs_status fs_world_reset(fs_world *w, const fs_domain *dom, fs_error *err);
fs_domain fs_world_domain(const fs_world *w);
/* Simulated seconds per fs_world_step (the def's dt; substeps split it). */
float fs_world_dt(const fs_world *w);
int fs_world_capacity(const fs_world *w);

/* Particles.  Returns the new particle's stable id, or -1 when full. */
int64_t fs_world_add_particle(fs_world *w, fs_vec3 pos, fs_vec3 vel, int material);
/* Fills [lo, hi] with particles on a cubic lattice of the domain spacing,
 * jittered by jitter * spacing (deterministic).  Returns the count added. */
int fs_world_add_block(fs_world *w, fs_vec3 lo, fs_vec3 hi, int material, float jitter);
int fs_world_add_sphere(fs_world *w, fs_vec3 centre, float radius, int material, float jitter);
/* The "mold" of Fig. 12: springs between every pair of particles of a
 * spring material closer than h, with rest length their current distance. */
int fs_world_make_springs(fs_world *w);
bool fs_world_remove_particle(fs_world *w, uint32_t id);
int fs_world_particle_count(const fs_world *w);
int fs_world_spring_count(const fs_world *w);
/* Copies up to max springs as (id_a < id_b, rest length); returns how many
 * springs the world has. */
int fs_world_springs(const fs_world *w, uint32_t *id_a, uint32_t *id_b, float *rest, int max);

/* Read-only view of particle state in internal (spatially sorted) order.
 * Valid until the next call that changes the world. */
typedef struct fs_particles_view {
    int count;
    const float *x, *y, *z;
    const float *vx, *vy, *vz;
    const uint8_t *material;
    const float *temperature; /* deg C */
    const uint32_t *id;
    /* by_id[k] is the internal index of the k-th particle in increasing id
     * order: the order frames use. */
    const int32_t *by_id;
} fs_particles_view;
void fs_world_view(const fs_world *w, fs_particles_view *out);

/* ---- Materials --------------------------------------------------------- */
typedef enum fs_param {
    FS_P_REST_DENSITY = 0, /* rho0, Eq. 2 (kernel-sum units) */
    FS_P_STIFFNESS,        /* k dt^2, Eq. 2-3 [h per unit density, per step] */
    FS_P_NEAR_STIFFNESS,   /* k_near dt^2, Eq. 5-6 [h per step] */
    FS_P_VISC_SIGMA,       /* sigma, Alg. 5 linear viscosity [1/s] */
    FS_P_VISC_BETA,        /* beta, Alg. 5 quadratic viscosity [s/h] */
    FS_P_SPRINGS,          /* 0/1: the material carries springs (Sec. 5) */
    FS_P_SPRING_ADD,       /* 0/1: Alg. 4 adds springs between new neighbours */
    FS_P_SPRING_STIFFNESS, /* k_spring dt^2, Alg. 3 [per step] */
    FS_P_PLASTICITY,       /* alpha, Eq. 7-8 [1/s] */
    FS_P_YIELD_STRETCH,    /* gamma for r > L, Eq. 8 */
    FS_P_YIELD_COMPRESS,   /* gamma for r < L, Eq. 8 */
    FS_P_SPRING_BREAK,     /* spring removed when r > break * h (not in paper) */
    FS_P_FRICTION,         /* mu, Eq. 11, wall friction 0 slip .. 1 no-slip */
    FS_P_MASS_DENSITY,     /* kg/m^3: a particle's mass is this times spacing^3 (bodies) */
    FS_P_STICK_DISTANCE,   /* d_stick of Eq. 12 [h] */
    FS_P_STICK_STRENGTH,   /* k_stick of Eq. 12 [1/s^2] */
    FS_P_HEAT_DIFFUSIVITY, /* c of Solenthaler Eq. 21 [m^2/s] */
    FS_P_PHASE_CHANGE,     /* 0/1: temperature moves it between solid and liquid */
    FS_P_SOLID_POINT,      /* deg C: fully solid at or below */
    FS_P_MELT_POINT,       /* deg C: liquid at or above (taken as the solid point if lower) */
    /* physical parameters of the unified (Solenthaler) and MPS solvers */
    FS_P_KIN_VISCOSITY,   /* nu, kinematic viscosity of the liquid [m^2/s] */
    FS_P_SURFACE_TENSION, /* surface tension coefficient [N/m] */
    FS_P_YOUNG,           /* E, Young's modulus of the solid [Pa] */
    FS_P_POISSON,         /* Poisson's ratio of the solid */
    /* the unified (Solenthaler 2007) solver's solid state */
    FS_P_SOLID_VISCOSITY, /* kinematic viscosity of the fully solid state [m^2/s] (Fig. 5 interpolates) */
    FS_P_RIGID,           /* 0/1: the fully solid state is a rigid body (Eq. 18-20), else elastic */
    FS_P_ELASTIC_LIMIT,   /* von Mises elastic limit (strain) before plastic flow */
    FS_P_PLASTIC_LIMIT,   /* largest plastic strain; 0: perfectly elastic */
    FS_P_FRACTURE,        /* body neighbours part when stretched beyond this ratio of the reference */
    FS_P_COUNT
} fs_param;

typedef struct fs_param_info {
    const char *name; /* wire name, e.g. "stiffness" */
    const char *unit;
    const char *doc;
    float min, max;   /* inclusive range; set_param refuses anything else */
    bool is_flag;     /* 0 or 1 only */
    uint32_t solvers; /* FS_SOLVER_BIT of each solver whose step reads it */
} fs_param_info;
#define FS_SOLVER_BIT(s) (1u << (unsigned)(s))

const fs_param_info *fs_param_get_info(fs_param p);
int fs_param_find(const char *name); /* -1 when unknown */
/* A solver's parameter set: true when solver s (an fs_solver, below) reads
 * parameter p.  Setting one that the running solver does not read is
 * allowed and changes nothing until a solver that reads it runs. */
bool fs_param_used_by(fs_param p, int solver);

int fs_world_material_count(const fs_world *w);
const char *fs_world_material_name(const fs_world *w, int material);
int fs_world_material_find(const fs_world *w, const char *name); /* -1 */
float fs_world_get_param(const fs_world *w, int material, fs_param p);
/* Validated: a NaN, an out-of-range value or an unknown material is refused
 * with a reason and the world is left as it was. */
fs_status fs_world_set_param(fs_world *w, int material, fs_param p, float value, fs_error *err);

/* Presets, in table order: water, goo, jelly, clay, honey, chocolate, oil. */
enum {
    FS_MAT_WATER = 0,
    FS_MAT_GOO,
    FS_MAT_JELLY,
    FS_MAT_CLAY,
    FS_MAT_HONEY,
    FS_MAT_CHOCOLATE,
    FS_MAT_OIL, /* 900 kg/m^3, 50x the kinematic viscosity of water (MPS multi-fluid scenes) */
    FS_MAT_PRESETS
};

/* ---- Interaction (the server's entry points) -------------------------- */
/* Adds strength * dir * (1 - (r/radius)^2) to the velocity of each particle
 * within radius of point.  dir is normalised; strength is in m/s, |strength|
 * <= 50 (negative pushes against dir), radius in (0, 100] m.  Returns
 * the number of particles touched through *touched (may be NULL). */
fs_status fs_world_push(fs_world *w, fs_vec3 point, float radius, fs_vec3 dir, float strength, int *touched,
                        fs_error *err);

typedef struct fs_emitter_def {
    fs_vec3 pos;
    fs_vec3 dir;  /* normalised */
    float speed;  /* m/s */
    float radius; /* nozzle radius, m */
    float rate;   /* particles per second */
    int cap;      /* emits only while the world holds fewer particles than this
                     (0: until the world is full); with a drain it runs forever */
    int material;
    bool enabled;
} fs_emitter_def;
/* Returns the emitter slot or -1 with a reason.  Ranges: speed 0..50 m/s,
 * radius 0..100 m, rate 0..1e6 particles/s, cap >= 0, a known material, a
 * non-zero direction, the position within 2e4 m of the origin. */
#define FS_EMITTER_MAX_SPEED 50.0f
#define FS_EMITTER_MAX_RADIUS 100.0f
#define FS_EMITTER_MAX_RATE 1e6f
int fs_world_set_emitter(fs_world *w, int slot, const fs_emitter_def *def, fs_error *err);
fs_status fs_world_enable_emitter(fs_world *w, int slot, bool enabled, fs_error *err);
int fs_world_emitter_count(const fs_world *w);

typedef struct fs_drain_def {
    fs_vec3 centre;
    float radius;
    bool enabled;
} fs_drain_def;
int fs_world_set_drain(fs_world *w, int slot, const fs_drain_def *def, fs_error *err);

/* Heat (Solenthaler 2007, "Temperature Effects"): every particle carries a
 * temperature that diffuses by Eq. 21.  A heater either adds `rate` K/s,
 * (deg C per second), falling off as 1 - (r/radius)^2, to the particles within `radius` of
 * `centre` (FS_HEAT_SPHERE; rate may be negative), or pulls the particles
 * within `radius` of the floor towards `temperature` at `rate` per second
 * (FS_HEAT_FLOOR: a hot or cold plate). */
typedef enum fs_heat_kind { FS_HEAT_SPHERE = 0, FS_HEAT_FLOOR } fs_heat_kind;
typedef struct fs_heater_def {
    fs_heat_kind kind;
    fs_vec3 centre;
    float radius;
    float rate;
    float temperature;
    bool enabled;
} fs_heater_def;
int fs_world_set_heater(fs_world *w, int slot, const fs_heater_def *def, fs_error *err);
/* The heater in a slot; false when the slot is empty. */
bool fs_world_get_heater(const fs_world *w, int slot, fs_heater_def *out);
/* The range every temperature stays in (deg C). */
#define FS_TEMP_MIN -273.15f
#define FS_TEMP_MAX 1e6f
/* Sum of temperatures (heat with equal heat capacities), for diagnostics. */
double fs_world_total_heat(const fs_world *w);

void fs_world_set_paused(fs_world *w, bool paused);
bool fs_world_paused(const fs_world *w);
/* Queues n single steps to run while paused. */
void fs_world_request_steps(fs_world *w, int n);
/* Steps once if running or if single steps are queued; returns true if it
 * stepped. */
bool fs_world_advance(fs_world *w);
/* One step of the current solver (def.substeps sub-steps), paused or not. */
void fs_world_step(fs_world *w);

/* ---- Solvers ------------------------------------------------------------
 * The world (particles, grid, bodies, heat sources, emitters) is shared; a
 * solver is the step that moves it.  "clavet" (Clavet 2005, the default),
 * "unified" (Solenthaler 2007) and "mps" (Premoze 2003) when built in. */
typedef enum fs_solver { FS_SOLVER_CLAVET = 0, FS_SOLVER_UNIFIED, FS_SOLVER_MPS, FS_SOLVER_COUNT } fs_solver;
/* Wire name ("clavet", "unified", "mps") and one line on it; NULL for a
 * solver this build does not have. */
const char *fs_solver_name(fs_solver s);
const char *fs_solver_doc(fs_solver s);
int fs_solver_find(const char *name); /* -1 when unknown or not built in */
/* Switches solver.  Positions, velocities and temperatures carry over; the
 * new solver derives its own state (reference shapes, pressures) from the
 * current particles.  Allocates: not a step-loop call. */
fs_status fs_world_set_solver(fs_world *w, fs_solver s, fs_error *err);
fs_solver fs_world_solver(const fs_world *w);

/* ---- Rigid bodies (Sec. 6, Algorithm 6) ------------------------------- */
#define FS_MAX_BODIES 64

typedef struct fs_quat {
    float w, x, y, z;
} fs_quat;

/* FS_SHAPE_MESH: a closed triangle mesh ("Mesh bodies", below). */
typedef enum fs_shape { FS_SHAPE_SPHERE = 0, FS_SHAPE_BOX, FS_SHAPE_CAPSULE, FS_SHAPE_MESH } fs_shape;

typedef struct fs_body_def {
    fs_shape shape;
    /* box: half extents; sphere: size.x is the radius; capsule: size.x the
     * radius, size.y half the length of its axis (the local y axis); mesh:
     * not read (the mesh gives it) */
    fs_vec3 size;
    float density; /* kg/m^3 (water is 1000) */
    fs_vec3 pos;
    fs_quat rot;
    fs_vec3 vel, ang_vel;
    bool is_static;
    float friction; /* Coulomb, against bodies and walls */
    /* FS_SHAPE_MESH only: the mesh (copied) and its uniform scale; pos, rot
     * and scale place it as an obstacle is placed (x = pos + rot (scale
     * x_mesh)).  Default NULL and 1. */
    const struct fs_mesh *mesh;
    float scale;
} fs_body_def;
fs_body_def fs_default_body_def(void);
/* The ranges fs_world_create_body holds a definition to (a snapshot's bodies
 * are held to the same; the server's edge refuses anything outside them). */
#define FS_BODY_MIN_SIZE 0.01f         /* m: a sphere's or capsule's radius, a box's least half extent */
#define FS_BODY_MAX_HALF_EXTENT 5.0f   /* m: every component of size (a capsule's half length may be 0) */
#define FS_BODY_MIN_DENSITY 10.0f      /* kg/m^3 */
#define FS_BODY_MAX_DENSITY 20000.0f   /* kg/m^3 */
#define FS_BODY_MAX_FRICTION 2.0f      /* from 0 */
#define FS_BODY_MAX_START_SPEED 100.0f /* |vel| in m/s and |ang_vel| in rad/s */
/* The most one fs_world_body_impulse may change a body's centre's speed, m/s. */
#define FS_BODY_MAX_SPEED_CHANGE 50.0f

typedef struct fs_body_state {
    uint32_t id;
    fs_shape shape;
    fs_vec3 size; /* as in fs_body_def; a mesh body: the half extents of its box about pos, in its frame */
    bool is_static, grabbed;
    float mass, density;
    fs_vec3 inertia; /* principal moments of inertia, kg m^2, about the axes of rot (also for a static body) */
    fs_vec3 pos;
    fs_quat rot;
    fs_vec3 vel, ang_vel;
} fs_body_state;

/* Returns the new body's stable id, or -1 with a reason. */
int64_t fs_world_create_body(fs_world *w, const fs_body_def *def, fs_error *err);
bool fs_world_destroy_body(fs_world *w, uint32_t id);
int fs_world_body_count(const fs_world *w);
bool fs_world_body_at(const fs_world *w, int index, fs_body_state *out); /* in id order */
bool fs_world_body_get(const fs_world *w, uint32_t id, fs_body_state *out);
/* An impulse (N s) at a world point. */
fs_status fs_world_body_impulse(fs_world *w, uint32_t id, fs_vec3 point, fs_vec3 impulse, fs_error *err);
/* Grab the body at a world point on it and pull that point towards target
 * with a critically damped spring (3 Hz); drag moves the target. */
fs_status fs_world_body_grab(fs_world *w, uint32_t id, fs_vec3 point, fs_vec3 target, fs_error *err);
fs_status fs_world_body_drag(fs_world *w, uint32_t id, fs_vec3 target, fs_error *err);
fs_status fs_world_body_release(fs_world *w, uint32_t id, fs_error *err);
/* Deepest penetration of a particle (its collision sphere) into a body, m. */
float fs_world_body_penetration(const fs_world *w);

/* ---- Meshes ---------------------------------------------------------------
 * A triangle mesh as the caller holds it (a value: the library copies what
 * it keeps).  Triangles are three indices into vertices, counter-clockwise
 * seen from outside (the mass properties take either orientation of a closed
 * mesh).  Metres.  Reading files is not the core's: a loader outside sim/
 * fills one of these. */
typedef struct fs_mesh {
    const fs_vec3 *vertices;
    int vertex_count;
    const uint32_t *triangles; /* 3 * triangle_count indices */
    int triangle_count;
} fs_mesh;
#define FS_MESH_MAX_TRIANGLES 200000
#define FS_MESH_MAX_VERTICES (3 * FS_MESH_MAX_TRIANGLES)
#define FS_MESH_MAX_COORD 1e4f
/* Refused with a reason unless 1..FS_MESH_MAX_TRIANGLES triangles and
 * 3..FS_MESH_MAX_VERTICES vertices, every coordinate finite and within
 * +-FS_MESH_MAX_COORD, every index below vertex_count, and no triangle
 * degenerate (two corners at one index or one point, or the three on a
 * line: twice its area below 1e-10 of its longest edge squared). */
fs_status fs_mesh_check(const fs_mesh *m, fs_error *err);
/* FS_OK when the (checked) mesh is closed: every edge borders exactly two
 * triangles, which run along it in opposite directions (a consistently
 * oriented 2-manifold, joined by vertex index).  Otherwise FS_ERR_ARG, and
 * the reason names the first offending edge by its vertex indices and
 * position and the triangle it belongs to.  Allocates scratch. */
fs_status fs_mesh_check_closed(const fs_mesh *m, fs_error *err);
fs_vec3 fs_mesh_bounds_min(const fs_mesh *m);
fs_vec3 fs_mesh_bounds_max(const fs_mesh *m);

/* Volume, centre and inertia of the solid a closed mesh bounds, at unit
 * density, integrated exactly over its tetrahedra (Eberly 2002, "Polyhedral
 * Mass Properties (Revisited)", after Mirtich 1996): multiply by a density
 * for mass and inertia. */
typedef struct fs_mass_props {
    double volume;        /* m^3, > 0 */
    fs_vec3 centre;       /* centre of volume */
    double inertia[3][3]; /* m^5: the inertia tensor about the centre, mesh axes */
} fs_mass_props;
/* Checks the mesh (fs_mesh_check, fs_mesh_check_closed) first. */
fs_status fs_mesh_mass_properties(const fs_mesh *m, fs_mass_props *out, fs_error *err);

/* ---- Mesh obstacles ---------------------------------------------------------
 * A static mesh placed in the world: x_world = pos + rot (scale x_mesh).
 * The Clavet and unified solvers see it through a signed distance field
 * sampled once, when it is added, on a grid of half the particle spacing
 * (coarser, up to one spacing, for a large one) over its bounding box grown
 * by 2 h, clipped to the domain's box grown by as much; particles meet it
 * as they meet the bodies (Clavet 2005, Eq. 9-12: friction and stickiness of
 * each material).  A closed mesh is a solid; an open one a thin shell of one
 * particle spacing (which a fast particle may cross in one step).
 * The MPS solver makes wall particles of them, in the two layers of its
 * box walls (fs_mps_info.walls counts them): the points of a lattice of the
 * spacing, aligned to the placed mesh's bounding box, that lie under the
 * field's surface by less than two spacings (layer 1 + floor(depth /
 * spacing)); an open mesh's shell gives one layer.  Adding one to an mps
 * world removes the particles inside it (as fs_world_mps_add_obstacle does).
 * Obstacles belong to the domain: fs_world_reset and scene loads clear
 * them; a snapshot carries them (each one's placement and placed mesh) and
 * a restore brings back the snapshot's.  Allocates: not a step-loop call. */
#define FS_MAX_OBSTACLES 16
#define FS_OBSTACLE_MAX_NODES 8000000 /* distance samples of one obstacle */
#define FS_OBSTACLE_MIN_SCALE 1e-4f
#define FS_OBSTACLE_MAX_SCALE 1e4f
typedef struct fs_obstacle_state {
    uint32_t id;
    fs_vec3 pos;
    fs_quat rot;
    float scale;
    bool closed;
    int triangles, vertices;
    fs_vec3 lo, hi; /* the placed mesh's bounding box */
    int nodes[3];   /* the distance grid's samples along x, y, z */
    float cell;     /* and their spacing, m */
} fs_obstacle_state;
/* Returns the new obstacle's stable id, or -1 with a reason: a mesh that
 * fails fs_mesh_check, a rotation that is not finite or is zero (it is
 * normalised), a scale outside FS_OBSTACLE_MIN_SCALE..MAX_SCALE, a placed
 * mesh outside +-FS_DOMAIN_MAX_COORD or wholly outside the domain's box, a
 * grid of more than FS_OBSTACLE_MAX_NODES, FS_MAX_OBSTACLES already, no
 * memory for the mps solver's wall particles. */
int64_t fs_world_add_obstacle(fs_world *w, const fs_mesh *mesh, fs_vec3 pos, fs_quat rot, float scale, fs_error *err);
bool fs_world_remove_obstacle(fs_world *w, uint32_t id);
int fs_world_obstacle_count(const fs_world *w);
bool fs_world_obstacle_at(const fs_world *w, int index, fs_obstacle_state *out); /* in id order */
/* The placed mesh of obstacle `index` (vertices in world coordinates), valid
 * until the obstacle is removed; false when there is none. */
bool fs_world_obstacle_mesh(const fs_world *w, int index, fs_mesh *out);
/* Signed distance from a world point to the obstacles' surface as the
 * solvers see it (the sampled field, negative inside; a large positive value
 * away from every obstacle), m: a diagnostic. */
float fs_world_obstacle_distance(const fs_world *w, fs_vec3 point);

/* ---- Mesh bodies ------------------------------------------------------------
 * A rigid body of shape FS_SHAPE_MESH (fs_world_create_body, def.mesh and
 * def.scale): its volume, centre and inertia tensor come from the closed
 * mesh, integrated exactly (fs_mesh_mass_properties), times the density.
 * The body's frame lies at the mesh's centre of mass along the principal
 * axes of its inertia tensor (so fs_body_state's pos is the placed mesh's
 * centre of mass, rot = def.rot times the principal axes' rotation, inertia
 * the principal moments).  Particles meet it through its signed distance,
 * sampled once on a grid in its frame as an obstacle's (cell half the
 * particle spacing, coarser up to FS_BODY_MESH_MAX_NODES samples, over its
 * box grown by 2 h), with each material's friction and stickiness (Clavet
 * 2005 Sec. 6, Eq. 9-12, as the other shapes); other bodies and the walls
 * through up to FS_BODY_MESH_SAMPLES points on its surface (its vertices,
 * edge midpoints and triangle centroids, spread by farthest-point
 * sampling) against their signed distance, and its field against theirs.
 * Refused with a reason: a mesh that fails fs_mesh_check or is open (the
 * reason names the open edge), a scale outside FS_OBSTACLE_MIN_SCALE..
 * MAX_SCALE, placed half extents outside FS_BODY_MIN_SIZE..
 * FS_BODY_MAX_HALF_EXTENT, a grid the work bound of an obstacle's refuses.
 * The library copies the mesh; memory is taken when the body is created and
 * given back when it is destroyed, never in the step.  A snapshot carries
 * each mesh body's mesh in its frame with its volume and principal moments,
 * and a restore rebuilds the same body from them bit for bit (not placed
 * and diagonalised again); a snapshot of a version before them that holds
 * a mesh body is refused. */
#define FS_BODY_MESH_SAMPLES 64
#define FS_BODY_MESH_MAX_NODES 2000000
/* The mesh of body `index` (in id order) in its frame (vertices relative to
 * pos, along the axes of rot), valid until the body is destroyed; false
 * when that body is not a mesh. */
bool fs_world_body_mesh(const fs_world *w, int index, fs_mesh *out);

/* ---- Probes ---------------------------------------------------------------
 * Named sampling points the world measures over every fs_world_step (and
 * when one is added), as gauges in a tank do.  "Up" is
 * +y (the scenes' gravity is -y); g is |gravity|.
 * FS_PROBE_HEIGHT: the water's height above pos.y at (pos.x, pos.z): the
 *   particles' volume (spacing^3 each) above pos.y per unit floor area,
 *   summed with a normalised 2D kernel 6/(pi R^2) (1 - r/R)^2 of the
 *   horizontal distance r, R = size (default max(h, 2 spacing)).  Where the
 *   water is continuous this is its surface; spray adds only its own
 *   volume, so a drop above the probe does not read as a wave (a capacitance
 *   gauge integrates the same way).  Keep R from the walls: a clipped
 *   column reads low.
 * FS_PROBE_PRESSURE: the pressure (Pa, gauge) on a patch of a face, centre
 *   pos, outward normal `normal` (pointing into the fluid), side `size`;
 *   averaged over the patch with the kernel (1 - r/R)^2, R = max(size, h)
 *   (size 0: max(h, 2 spacing)), over the particles within R in front of
 *   the face (r.normal >= 0).  MPS: the solver's pressure field (Eq. 14)
 *   of those particles, each carried to the patch's height by
 *   rho g dy.  Clavet and unified (whose pressures are not in
 *   pascals): the weight of the water column above the patch, measured as
 *   a height probe of radius R whose centre is moved R along the normal's
 *   horizontal part (so it stands in the fluid in front of a wall), times
 *   the particles' mass density and g, plus the stagnation pressure
 *   1/2 rho (v.n)^2 of the particles within R moving into the face
 *   (kernel-weighted mean): a model of the pressure, not the solver's own.
 *   In every solver a pressure sensor's value is the mean of that reading
 *   over the step's sub-steps, each weighted by its duration: the impulse
 *   the step delivered to the patch, per area, over the step's time (an
 *   incompressible solver's impact pressure lasts one sub-step; read at the
 *   step's end it would be caught or missed by chance).  A height probe's
 *   value is the state at the step's end.
 * At most FS_MAX_PROBES, names unique, 1..FS_PROBE_NAME_LEN-1 characters of
 * [A-Za-z0-9_.-].  fs_world_reset and scene loads clear them (a scene may
 * then define its own); a snapshot carries them (each one's definition,
 * latest value and tick) and a restore brings back the snapshot's.  No
 * allocation. */
#define FS_MAX_PROBES 16
#define FS_PROBE_NAME_LEN 32
typedef enum fs_probe_kind { FS_PROBE_HEIGHT = 0, FS_PROBE_PRESSURE, FS_PROBE_KIND_COUNT } fs_probe_kind;
typedef struct fs_probe_def {
    char name[FS_PROBE_NAME_LEN];
    fs_probe_kind kind;
    fs_vec3 pos;
    fs_vec3 normal; /* pressure: unit after normalising; ignored for height */
    float size;     /* m; 0: the default above */
} fs_probe_def;
/* "height" / "pressure"; NULL for an unknown kind. */
const char *fs_probe_kind_name(fs_probe_kind k);
/* Returns the probe's index, or -1 with a reason: a bad or taken name, an
 * unknown kind, a position outside the domain's box, a zero or non-finite
 * normal (pressure), a size outside 0..the domain's largest extent, or
 * FS_MAX_PROBES already. */
int fs_world_add_probe(fs_world *w, const fs_probe_def *def, fs_error *err);
bool fs_world_remove_probe(fs_world *w, const char *name);
int fs_world_probe_count(const fs_world *w);
int fs_world_probe_find(const fs_world *w, const char *name); /* index, or -1 */
/* The probe at index (in the order added) and its latest value (m or Pa)
 * and the tick it was measured at; false when there is none. */
bool fs_world_probe_get(const fs_world *w, int index, fs_probe_def *def, float *value, uint64_t *tick);
/* Measures every probe now (fs_world_step does it after each step). */
void fs_world_probes_measure(fs_world *w);

/* ---- Scenes ------------------------------------------------------------- */
typedef struct fs_scene_info {
    const char *name;
    const char *doc;
    int default_particles;
    fs_solver solver; /* the solver the scene is made for */
} fs_scene_info;
int fs_scene_count(void);
const fs_scene_info *fs_scene_get(int i);
int fs_scene_find(const char *name); /* index, or -1 when unknown */
/* Resets the world to a named scene with about `particles` particles
 * (0: the scene's default).  Material parameters are kept; particles,
 * bodies, emitters, drains and heaters are replaced by the scene's.  The
 * current solver is kept (fs_world_set_solver first to change it). */
fs_status fs_world_load_scene(fs_world *w, const char *name, int particles, fs_error *err);
const char *fs_world_scene_name(const fs_world *w);
/* The particles the current scene was loaded with: those asked for, or the
 * scene's default when 0 was.  Loading the scene again with it gives the
 * same world; its particle count may not (a scene sized by volume holds
 * fewer, and emitters change it).  0 for a world no scene made (reset) or
 * restored from a snapshot older than version 6, which does not carry it. */
int fs_world_scene_size(const fs_world *w);

/* ---- Stats -------------------------------------------------------------- */
typedef enum fs_phase {
    FS_PHASE_GRID = 0,  /* both neighbour grids (counting sort + reorder) */
    FS_PHASE_VISCOSITY, /* gravity + Algorithm 5 + prediction */
    FS_PHASE_SPRINGS,   /* Algorithms 4 and 3 */
    FS_PHASE_RELAX,     /* Algorithm 2 */
    FS_PHASE_COLLIDE,   /* walls (Eq. 9-11), velocities, repair */
    FS_PHASE_ASSEMBLE,  /* implicit solvers: building the linear system */
    FS_PHASE_SOLVE,     /* implicit solvers: solving it */
    FS_PHASE_COUNT
} fs_phase;

typedef struct fs_stats {
    uint64_t tick;
    double sim_time; /* the particles' simulated time: the steps' dt, less an mps world's lag (fs_mps_info.behind) */
    int particles;
    int springs;
    double phase_ms[FS_PHASE_COUNT]; /* last step */
    double step_ms;                  /* last step */
    uint64_t nonfinite_repaired;     /* particles whose state was NaN/inf and was repaired */
    uint64_t escapes_clamped;        /* particles put back inside the box by the final clamp */
    uint64_t springs_refused;        /* spring insertions refused for lack of slots */
    uint64_t relax_fallbacks;        /* Clavet steps relaxed by Jacobi sweeps (a neighbour list overflowed) */
    uint64_t lists_full; /* MPS: particle sub-steps whose neighbour list was full (pairs past its end left out) */
    uint64_t emitted, drained;
    int bodies;
    int contacts;              /* body-body and body-wall contacts, last step */
    uint64_t body_extractions; /* particles pushed out of a body (Alg. 6 line 15) */
    fs_solver solver;
    int solver_iterations;  /* mps: iterations of the last solve; unified, clavet: sub-steps of the last step */
    double solver_residual; /* and its relative residual */
} fs_stats;
void fs_world_stats(const fs_world *w, fs_stats *out);

/* Mean number of neighbours within h (excluding itself) of particles whose
 * whole neighbourhood is full: an O(N) diagnostic, not called by the step. */
float fs_world_mean_neighbours(fs_world *w, float *mean_density, float *mean_near);

/* ---- Snapshots --------------------------------------------------------- */
/* The whole state as bytes (a format of this library, versioned): a world
 * restored from it steps bit-identically to the one saved.  write returns
 * the bytes written, 0 when cap is too small. */
size_t fs_world_snapshot_size(const fs_world *w);
size_t fs_world_snapshot_write(const fs_world *w, void *buf, size_t cap);
/* Checks everything before it changes anything: a damaged or foreign
 * snapshot is refused with a reason and the world is left as it was.  The
 * world must have the snapshot's step and spring slots and room for its
 * particles.  Every field is held to the range its setter documents: the
 * domain to fs_world_reset's, materials to the parameter table, emitters,
 * drains, heaters and bodies to theirs; particle positions lie in the box
 * grown by h, velocities within FS_SNAPSHOT_MAX_SPEED, temperatures in
 * FS_TEMP_MIN..FS_TEMP_MAX; springs are held by both ends. */
#define FS_SNAPSHOT_MAX_SPEED 1e4f
fs_status fs_world_restore(fs_world *w, const void *buf, size_t size, fs_error *err);
/* What a world must be created with to restore a snapshot: its capacity,
 * spring slots and step.  false when buf does not start like a snapshot of
 * this version. */
typedef struct fs_snapshot_info {
    int capacity, springs_per_particle, particles;
    float dt;
} fs_snapshot_info;
bool fs_snapshot_peek(const void *buf, size_t size, fs_snapshot_info *out);

/* 64-bit hash of the whole state (particles in id order, springs, tick). */
uint64_t fs_world_hash(const fs_world *w);

/* ---- A small thread pool satisfying fs_parallel_for_fn ------------------
 * Several threads may call fs_pool_parallel_for on one pool (each stepping
 * its own world): the calls take turns, one job at a time, and each world's
 * results are those it has alone. */
typedef struct fs_pool fs_pool;
fs_pool *fs_pool_create(int threads); /* threads includes the caller */
void fs_pool_destroy(fs_pool *p);
int fs_pool_threads(const fs_pool *p);
void fs_pool_parallel_for(fs_task_fn *fn, void *ctx, int count, void *user /* fs_pool* */);

/* ---- The Clavet solver (Clavet, Beaudoin, Poulin 2005): its settings ----
 * Given in fs_world_def.clavet and read by its step alone (clavet.c). */
typedef enum fs_relax_mode {
    /* Pairwise-symmetric Jacobi form of Algorithm 2: densities are
     * computed for every particle from the same predicted positions, then each
     * pair exchanges the sum of the two displacements Eq. 6 gives when i and
     * when j is visited.  Parallel, deterministic, momentum conserved pair by pair. */
    FS_RELAX_JACOBI = 0,
    /* Algorithm 2 exactly as printed (Gauss-Seidel: neighbours move at once),
     * in a fixed random order.  Single-threaded reference. */
    FS_RELAX_SEQUENTIAL = 1,
    /* Algorithm 2 as a Gauss-Seidel sweep over blocks of 2h in eight colours
     * (blocks of one colour share no particle, so they run in parallel; the
     * result does not depend on the thread count), with the compression side
     * of Eq. 2 taken as a Newton step on the density constraint (Macklin &
     * Mueller 2013, Eq. 9-11) instead of a fixed k, and relax_iterations
     * sweeps per step over neighbour lists built once per step.  The default. */
    FS_RELAX_COLORED = 2
} fs_relax_mode;

/* Sweeps per step of the default relaxation (FS_RELAX_COLORED); the density
 * error and cost of each count: docs/clavet-notes.md. */
#define FS_DEFAULT_RELAX_ITERATIONS 2

typedef struct fs_clavet_def {
    fs_relax_mode relax;
    int relax_iterations; /* relaxation sweeps per step (default FS_DEFAULT_RELAX_ITERATIONS; the paper: 1) */
} fs_clavet_def;

/* ---- The MPS solver's extras (Premoze et al. 2003) ---------------------
 * Solid walls are fixed particles in two layers (the box, box obstacles
 * added here and the world's mesh obstacles, fs_world_add_obstacle; the
 * first layer mirrors the pressure); they live in the solver, not among the
 * world's particles.  A particle's centre is kept out of a box obstacle and
 * half a distance-grid cell out of a mesh obstacle (the sampled field
 * overestimates the distance near a convex edge or corner).  Obstacles belong to the domain: fs_world_reset and scene
 * loads clear them.  Refused (FS_ERR_ARG) when the world's solver is not "mps". Allocates: not a step-loop call. */
fs_status fs_world_mps_add_obstacle(fs_world *w, fs_vec3 lo, fs_vec3 hi, fs_error *err);
typedef struct fs_mps_info {
    float l0, re_n, re_lap;   /* spacing, number-density and Laplacian radii [m] */
    float n0, n0_lap, lambda; /* Eq. 3-8 constants from the rest lattice */
    int walls, obstacles;     /* wall particles (all layers), box obstacles */
    int substeps;             /* CFL sub-steps the last call planned (of its fs_world_step sub-step's dt and what
                               * the call before left behind) */
    float dt_sub;             /* their length [s] */
    float behind;             /* how far the particles trail the calls' time (their count times fs_world_dt),
                               * less than one sub-step: a call's time beyond its last whole sub-step, carried to
                               * the next; fs_stats.sim_time is the particles' own time [s] */
    int taken;                /* sub-steps the last call took: substeps, more where one was cut in two because a
                               * pair's separation would have changed by more than the lists' margin */
    uint64_t cuts;            /* sub-steps cut in two for that (cumulative) */
    uint64_t overruns;        /* sub-steps taken past the margin after the most cuts allowed (cumulative; 0 seen) */
    int unknowns, surface;    /* last pressure solve: rows, free-surface (Dirichlet) particles */
    int skipped_solves;       /* sub-steps without a pressure solve for want of matrix room (cumulative; 0 seen) */
} fs_mps_info;
bool fs_world_mps_info(const fs_world *w, fs_mps_info *out);
/* Pressure [Pa] and number density n* (Eq. 14's, at the predicted
 * positions) of the last sub-step, per particle in view order.  Returns the
 * count written (0 when the solver is not mps). */
int fs_world_mps_fields(const fs_world *w, float *pressure, float *number_density, int max);

/* ---- The world's definition ----------------------------------------------
 * What fs_world_create is given (fs_default_world_def fills in the
 * defaults): its sizes, the step, the task system and each solver's
 * settings. */
struct fs_world_def {
    int capacity;             /* most particles the world can hold */
    int springs_per_particle; /* spring slots per particle (default 48) */
    float dt;                 /* seconds per step (default 1/60) */
    int substeps;             /* fs_world_step runs this many steps of dt / substeps (default 1) */
    fs_clavet_def clavet;     /* the Clavet solver's settings (its section) */
    int worker_count;         /* > 1 only with parallel_for; at most FS_MAX_WORKERS */
    fs_parallel_for_fn *parallel_for;
    void *task_user;
};

#ifdef __cplusplus
}
#endif
#endif
