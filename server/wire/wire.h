/* wire.h - the msgpack protocol (protocol/PROTOCOL.md): encoders for every
 * server-to-client message and a bounds-checked decoder for client commands.
 *
 * Pure functions: no world, no sockets.  Encoders run on the sim thread
 * (frames, broadcasts) and the network thread (hello, replies); the decoder
 * runs on the network thread.
 */
#ifndef SRV_WIRE_H
#define SRV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "fluid_sim.h"
#include "msgbuf.h"
#include "reply.h"
#include "world_info.h"

#define WIRE_PROTOCOL_VERSION 2
#define WIRE_SUBPROTOCOL "fluid.v2"
#define WIRE_SUBPROTOCOL_V1 "fluid.v1" /* refused with a close reason */
#define WIRE_SNAPSHOT_VERSION 1        /* the snapshot document (saves keep their format) */
#define WIRE_MAX_MSG 4096              /* largest client message accepted, bytes */
#define WIRE_MAX_DEPTH 4               /* nesting accepted in a client message */
/* Frame temperatures: one byte per particle, T = WIRE_TEMP_LO + byte (deg C). */
#define WIRE_TEMP_LO (-40)
#define WIRE_TEMP_HI 215

/* A user's cursor as frames carry it.  A value; the sim thread keeps the
 * table of them and the frame encoder reads it. */
typedef struct wire_cursor {
    uint32_t client;
    float pos[3];
} wire_cursor;

/* A rigid body as frames carry it.  A value; the sim thread fills a table of
 * them for each frame. */
typedef struct wire_body {
    uint32_t id;
    uint32_t grabbed_by; /* client holding it, 0: none */
    int shape;           /* fs_shape */
    bool is_static;
    float size[3], pos[3], rot[4]; /* rot: w, x, y, z */
} wire_body;

const char *wire_shape_name(int shape);

/* A probe as frames carry it (fluid_sim.h, "Probes"): its name and its value
 * at the frame's tick (m for a height, Pa for a pressure).  A value. */
typedef struct wire_probe {
    char name[FS_PROBE_NAME_LEN];
    float value;
} wire_probe;

/* What a frame shows besides its particles (those are the v2 payload,
 * frame_codec.h).  Threads: the encoding thread only (points at data the
 * caller owns for the duration of the call). */
typedef struct wire_frame_head {
    uint64_t tick;
    double sim_time;
    bool paused;
    fs_vec3 box_min, box_max;
    int count;
    const wire_cursor *cursors;
    int cursor_count;
    const wire_body *bodies;
    int body_count;
    const wire_probe *probes; /* the world's, in the order added; none: the frame has no `probes` */
    int probe_count;
} wire_frame_head;

/* Static description handed to the hello and param encoders (so wire.c
 * needs no world).  Threads: filled by main before the threads start, then
 * read-only (sim thread and network thread). */
typedef struct wire_static {
    const fs_param_info *param[FS_P_COUNT];
    int scene_count;
    const char *scene[32];
    double tick_hz, frame_hz;
    int solver_count;
    const char *solver[FS_SOLVER_COUNT]; /* names of the solvers built in */
    bool auth_required;
    int relay_count;
    const char *relay[16]; /* --relays, split */
    int max_msg, rate_per_s, rate_burst;
} wire_static;

uint32_t wire_client_colour(uint32_t client); /* 0xRRGGBB */

/* A `frame` message: the head's fields, seq, whether data is a keyframe,
 * and the v2 payload (len bytes) as the bin `data`. */
msg_buf *wire_encode_frame(const wire_frame_head *s, uint32_t seq, bool key, const uint8_t *data, size_t len);
/* A tier of detail's frame (frame_tier.h): its `lod` map.  A value. */
typedef struct wire_lod {
    int tier, keep; /* tier > 0; 1 in keep particles */
    float step;     /* its grid's step, metres */
} wire_lod;
/* The same with the `lod` map (lod NULL: none, the full world; the head's
 * count is this frame's particles). */
msg_buf *wire_encode_frame_lod(const wire_frame_head *s, uint32_t seq, bool key, const wire_lod *lod,
                               const uint8_t *data, size_t len);
/* room: the room the connection watches; role: its role there (roles.h's name). */
msg_buf *wire_encode_hello(const world_info *wi, const wire_static *st, uint32_t client, const char *room,
                           const char *role);
msg_buf *wire_encode_param_bcast(const world_info *wi, const wire_static *st, int material, uint32_t by, uint64_t tick);
msg_buf *wire_encode_scene_bcast(const world_info *wi, uint32_t by, uint64_t tick);
msg_buf *wire_encode_state_bcast(bool paused, uint32_t by, uint64_t tick);
msg_buf *wire_encode_solver_bcast(const char *solver, uint32_t by, uint64_t tick);
/* An obstacle as the `obstacles` message lists it: its id, the content hash
 * of its placed mesh's encoding (obstacle_mesh.h), that mesh's bounds and
 * counts.  A value. */
typedef struct wire_obstacle {
    uint32_t id;
    uint64_t hash;
    fs_vec3 lo, hi;
    int triangles, vertices;
    bool closed;
} wire_obstacle;
/* {type: "obstacles", version, obstacles: [...], by, tick}: every obstacle
 * now, after each change; version grows with each list the room publishes. */
msg_buf *wire_encode_obstacles_bcast(const wire_obstacle *o, int n, uint64_t version, uint32_t by, uint64_t tick);
/* A relay's word to its viewers about the sim node's message bus:
 * {type: "status", connected, text}. */
msg_buf *wire_encode_status(bool connected, const char *text);
/* A relay of a fleet's word that the room moved to another sim node:
 * {type: "status", connected: true, moved: true, node, text}. */
msg_buf *wire_encode_moved(uint32_t node, const char *text);

/* The snapshot document (GET/POST /api/snapshot, the save file): a msgpack
 * map of descriptive fields and `world`, the core's snapshot bytes as a
 * bin.  fill writes exactly world_len bytes at dst and returns true. */
typedef struct wire_snapshot_meta {
    uint64_t tick;
    double sim_time;
    const char *scene, *solver;
    int particles, springs, bodies;
    bool paused;
} wire_snapshot_meta;
msg_buf *wire_encode_snapshot(const wire_snapshot_meta *m, size_t world_len,
                              bool (*fill)(void *dst, size_t n, void *ctx), void *ctx);
/* Finds `world` in a snapshot document (pointing into p).  Returns 0, or -1
 * with a reason in err. */
int wire_decode_snapshot(const uint8_t *p, size_t n, const uint8_t **world, size_t *world_len, char *err,
                         size_t errlen);
/* A reply to a command (ok or error).  For set_param/load_scene the caller
 * may pass wi to include the new state; may be NULL. */
msg_buf *wire_encode_reply(const cmd_reply *r);
/* An error that is not tied to a decoded command (rid may be 0, cmd_name
 * NULL: "none"), with its code. */
msg_buf *wire_encode_error(reply_code code, uint32_t rid, const char *cmd_name, const char *reason);

/* A server message read back (a recording's records): its type, and for a
 * `frame` the fields a reader needs, pointing into the bytes.  A value. */
typedef struct wire_frame_view {
    char type[16];
    bool is_frame, key;
    uint64_t tick;
    double sim_time;
    uint32_t seq, n;
    uint32_t capacity;   /* hello: the most particles a frame holds */
    const uint8_t *data; /* the v2 payload */
    size_t len;
} wire_frame_view;
/* Reads a server message with the bounded decoder (untrusted bytes: a
 * recording file).  Returns 0, or -1 with a reason. */
int wire_read_message(const uint8_t *p, size_t n, wire_frame_view *out, char *err, size_t errlen);

/* Decodes one client message.  Returns 0 with *out filled, or -1 with a
 * reason in err; *out->rid is set when the message carried a valid rid.
 * Never allocates; every declared length and count is checked against the
 * bytes present. */
int wire_decode_command(const uint8_t *p, size_t n, cmd *out, char *err, size_t errlen);

#endif
