/* command.h - the checked command value both edges (WebSocket, REST) build
 * and the sim thread applies: its kinds, names and edge limits.
 *
 * A cmd is a plain value: no pointers, fixed size.  Every field has already
 * been checked for type, finiteness and coarse range at the edge; the sim
 * thread re-checks anything that depends on the world (material names,
 * parameter ranges) through fluid_sim.h's validated calls.
 */
#ifndef SRV_COMMAND_H
#define SRV_COMMAND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"

#define CMD_NAME_LEN 32
#define CMD_SID_LEN 32 /* a page's session id (sid), with its terminator */
#define CMD_SID_MIN 8
#define CMD_MAX_STEPS 1000
#define CMD_MAX_COORD 1.0e4f
#define CMD_MAX_RADIUS 100.0f
#define CMD_MAX_STRENGTH 50.0f /* m/s, as the core (fs_world_push) */
#define CMD_MAX_SPEED 50.0f    /* m/s, emitters, as the core */
#define CMD_MAX_RATE 100000.0f
#define CMD_MAX_PARTICLES (1 << 20)
/* A body's ranges are the core's (fluid_sim.h): the edge accepts nothing fs_world_create_body refuses */
#define CMD_MIN_BODY_SIZE FS_BODY_MIN_SIZE        /* m, a radius, a box's half extents */
#define CMD_MAX_BODY_SIZE FS_BODY_MAX_HALF_EXTENT /* m, per half extent / radius / half length */
#define CMD_MIN_DENSITY FS_BODY_MIN_DENSITY       /* kg/m^3 */
#define CMD_MAX_DENSITY FS_BODY_MAX_DENSITY       /* kg/m^3 */
#define CMD_MAX_FRICTION FS_BODY_MAX_FRICTION
#define CMD_MAX_IMPULSE 10000.0f  /* N s */
#define CMD_MAX_HEAT_RATE 1000.0f /* K/s, heat tool */
#define CMD_MAX_HEAT_RADIUS 10.0f /* m, as the core's heaters */
#define CMD_MAX_HEAT_S 10.0f      /* s, how long one heat command heats */
#define CMD_DEFAULT_HEAT_S 0.25f
#define CMD_HEAT_TOOLS 4                                   /* heater slots kept for the heat tools (the last ones) */
#define CMD_HEATER_SLOTS (FS_MAX_HEATERS - CMD_HEAT_TOOLS) /* slots the heater command sets */
#define CMD_MAX_TEMPERATURE 1000.0f                        /* deg C, as the core's heaters */
#define CMD_MIN_TEMPERATURE (-100.0f)
#define CMD_MIN_RECORD_MB 0.1   /* a recording's max_mb: below, not even a segment fits */
#define CMD_MAX_RECORD_MB 1.0e6 /* ... and above; the server's budget (--record-total-mb) may be lower */
#define CMD_MIN_RECORD_S 0.1    /* a recording's max_seconds (simulated) */
#define CMD_MAX_RECORD_S 1.0e7

typedef enum cmd_kind {
    CMD_NONE = 0,
    CMD_PUSH,
    CMD_SET_PARAM,
    CMD_LOAD_SCENE,
    CMD_PAUSE,
    CMD_RESUME,
    CMD_STEP,
    CMD_EMITTER,
    CMD_CURSOR,
    CMD_AUTH,          /* WebSocket only; handled by the network thread */
    CMD_GET_PARTICLES, /* REST only: reply carries a particle snapshot */
    CMD_CLIENT_LEFT,   /* internal: a WebSocket client went away */
    CMD_BODY_CREATE,
    CMD_BODY_DESTROY,
    CMD_BODY_IMPULSE,
    CMD_BODY_GRAB,
    CMD_BODY_DRAG,
    CMD_BODY_RELEASE,
    CMD_GET_BODIES, /* REST only: reply carries a body snapshot */
    CMD_SET_SOLVER,
    CMD_HEAT,
    CMD_GET_SNAPSHOT, /* REST only: reply carries the world's snapshot */
    CMD_RESTORE,      /* REST only: restores the snapshot uploaded under u.restore.upload */
    CMD_HEATER,
    CMD_KEYFRAME, /* WebSocket only: the client asks for a keyframe; handled by the network thread */
    CMD_RECORD_START,
    CMD_RECORD_STOP,
    CMD_PACE,         /* WebSocket only: the most frames its decoder takes (every frame, 2nd, 4th); network thread */
    CMD_MESH_UPLOAD,  /* REST only: a mesh file read by a loader thread (net/rest_meshes.c); never queued */
    CMD_OBSTACLE_ADD, /* a stored mesh placed as a static obstacle */
    CMD_OBSTACLE_REMOVE,
    CMD_GET_OBSTACLES, /* REST only: reply carries the obstacles' list */
    CMD_PROBE_ADD,     /* a named height probe or pressure sensor (fluid_sim.h, "Probes") */
    CMD_PROBE_REMOVE,
    CMD_DETAIL, /* WebSocket only: the client pins the full world (or lets its link choose); network thread */
    CMD_KIND_COUNT
} cmd_kind;

/* Copies src into dst (capacity cap), truncating; always terminates. */
static inline void cmd_strlcpy(char *dst, size_t cap, const char *src) {
    size_t l = 0;
    while (src[l] && l + 1 < cap) l++;
    for (size_t i = 0; i < l; i++) dst[i] = src[i];
    dst[l] = 0;
}

/* A command's point or direction (float[3]) as the core's vector. */
static inline fs_vec3 cmd_vec3(const float v[3]) {
    return (fs_vec3){v[0], v[1], v[2]};
}

const char *cmd_kind_name(cmd_kind k);
/* True for commands that change the world (need the token when one is set). */
bool cmd_kind_mutates(cmd_kind k);

/* Threads: built by the network thread, copied through cmd_queue, read by the
 * sim thread.  A value: no pointers. */
typedef struct cmd {
    cmd_kind kind;
    uint32_t client;       /* WebSocket client id, or REST request id | CMD_REST_BIT */
    uint32_t rid;          /* the request id the client chose (0: none) */
    char sid[CMD_SID_LEN]; /* the page's session id ("": none): (sid, rid) names a command across retries */
    uint64_t arrival_ns;   /* CLOCK_MONOTONIC when the network thread accepted it */
    /* the role (roles.h) the edge established for the connection it came
     * through; the sim node checks it against the command's (apply.c) */
    uint8_t role;
    union {
        struct {
            float point[3], dir[3], radius, strength;
        } push;
        struct {
            char material[CMD_NAME_LEN];
            int count;
            char param[FS_P_COUNT][CMD_NAME_LEN];
            float value[FS_P_COUNT];
        } set_param;
        struct {
            char name[CMD_NAME_LEN];
            int particles; /* 0: scene default */
            int solver;    /* fs_solver, -1: the scene's own */
        } scene;
        struct {
            int solver; /* fs_solver */
        } solver;
        struct {
            float point[3], radius, rate, duration;
        } heat;
        struct {
            uint32_t upload; /* hub upload id */
        } restore;
        struct {
            int slot;
            bool has_def, enabled;
            int kind; /* fs_heat_kind */
            float point[3], radius, rate, temperature;
        } heater;
        struct {
            int steps;
        } step;
        struct {
            int stride; /* 1, 2 or 4 */
        } pace;
        struct {
            bool full; /* the full world whatever the link; false: the link chooses the tier */
        } detail;
        struct {
            char name[CMD_NAME_LEN];    /* "": a name from the time */
            double max_mb, max_seconds; /* 0: not given (the server's defaults) */
        } record;
        struct {
            int slot;
            bool has_def; /* false: only switch enabled */
            bool enabled;
            float pos[3], dir[3], speed, radius, rate;
            int cap;
            char material[CMD_NAME_LEN];
        } emitter;
        struct {
            bool visible;
            float pos[3];
        } cursor;
        struct {
            int offset, limit;
            int format; /* export_format (wire/export.h): 0 JSON pages; else the whole world as a file */
        } particles;
        struct {
            char token[512]; /* the server's token, or an invite (wire/invite.h) */
        } auth;
        struct {
            int shape; /* fs_shape */
            float size[3], pos[3], rot[4], vel[3], ang_vel[3], density, friction;
            bool is_static, has_density, has_friction;
            uint32_t mesh; /* FS_SHAPE_MESH: the stored mesh (hub's mesh_store), placed as an obstacle is */
            float scale;   /* FS_SHAPE_MESH: its uniform scale */
        } body_create;
        struct {
            uint32_t id;   /* remove: the obstacle */
            uint32_t mesh; /* add: the stored mesh (hub's mesh_store) */
            float pos[3], rot[4], scale;
            bool fit;     /* scale and centre the mesh into the domain's box (apply_obstacles.c) */
            bool has_pos; /* with fit: where the box's centre goes (else the domain's centre) */
        } obstacle;
        struct {
            uint32_t id;
            float point[3], vec[3]; /* impulse: point + impulse; grab: point + target; drag: vec = target */
        } body;
        struct {
            char name[FS_PROBE_NAME_LEN];
            int kind; /* fs_probe_kind */
            float pos[3], normal[3], radius;
        } probe;
    } u;
} cmd;

#define CMD_REST_BIT 0x80000000u
/* Client ids of a relay's clients carry the relay's id (1..CMD_RELAY_MAX)
 * above CMD_RELAY_SHIFT, so they are unique across relays and the sim node. */
#define CMD_RELAY_SHIFT 20
#define CMD_RELAY_MAX 2047
static inline uint32_t cmd_client_relay(uint32_t client) {
    return (client & ~CMD_REST_BIT) >> CMD_RELAY_SHIFT;
}

#endif
