/* hub.h - what the sim thread publishes for the network thread: the newest
 * encoded frame, broadcast messages, replies to commands, and immutable
 * snapshots of world information and statistics.
 *
 * Everything crosses as a value or as an immutable refcounted buffer; the
 * network thread never sees a pointer into the world.
 */
#ifndef SRV_HUB_H
#define SRV_HUB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "commands.h"
#include "fluid_sim.h"
#include "msgbuf.h"

#define HUB_BCAST_RING 64
#define HUB_REPLY_RING 2048

/* Threads: built by the sim thread, copied out under the hub mutex by the
 * network thread.  A value. */
typedef struct world_info {
    uint64_t version;
    fs_vec3 box_min, box_max, gravity;
    float h, spacing, dt;
    char scene[CMD_NAME_LEN];
    char solver[CMD_NAME_LEN];
    int particles, capacity;
    bool paused;
    int material_count;
    char material[FS_MAX_MATERIALS][CMD_NAME_LEN];
    float param[FS_MAX_MATERIALS][FS_P_COUNT];
} world_info;

/* Threads: built by the sim thread, copied by the network thread.  A value. */
typedef struct sim_stats {
    uint64_t tick;
    double sim_time;
    int particles, springs;
    bool paused;
    double step_ms_last, step_ms_mean, step_ms_max; /* mean/max over the last second */
    double phase_ms[FS_PHASE_COUNT];
    double realtime_ratio; /* simulated s per wall s over the last second */
    double tick_hz_actual; /* ticks (stepped or not) per wall second */
    uint64_t overruns;     /* ticks whose work took longer than the tick period */
    double encode_ms_last, encode_ms_mean;
    uint64_t frames_published;
    size_t frame_bytes;
    uint64_t commands_applied, commands_failed;
    double cmd_to_frame_ms_last, cmd_to_frame_ms_mean; /* command arrival -> frame published */
    uint64_t nonfinite_repaired, escapes_clamped, emitted, drained;
    uint64_t replies_dropped;
    /* the solver's implicit solve (or internal steps), last step; which
     * solver runs is in world_info */
    int solver_iterations;
    double solver_residual;
    int bodies;
    /* step time histogram (Prometheus): counts of steps at or under each bound */
#define SIM_STEP_BUCKETS 12
    uint64_t step_bucket[SIM_STEP_BUCKETS]; /* cumulative, le = sim_step_bucket_ms[k] */
    uint64_t step_count;
    double step_ms_sum;
    /* commands by kind and result */
    uint64_t cmd_ok[CMD_KIND_COUNT], cmd_failed[CMD_KIND_COUNT];
    /* persistence */
    uint64_t saves, save_failures;
    double save_ms_last;
    size_t save_bytes_last;
} sim_stats;
extern const double sim_step_bucket_ms[SIM_STEP_BUCKETS];

/* Threads: allocated and filled by the sim thread, then owned (read-only) by
 * the network thread, which frees it. */
typedef struct particles_snap {
    uint64_t tick;
    int total, offset, count;
    uint32_t *id;
    float *pos; /* 3 per particle */
    float *vel; /* 3 per particle */
    uint8_t *material;
    float *temp; /* deg C */
} particles_snap;

void particles_snap_free(particles_snap *s);

/* Threads: allocated and filled by the sim thread, then owned (read-only) by
 * the network thread, which frees it. */
typedef struct bodies_snap {
    uint64_t tick;
    int count;
    fs_body_state body[FS_MAX_BODIES];
    uint32_t grabbed_by[FS_MAX_BODIES];
} bodies_snap;

/* Threads: built by the sim thread, moved through the hub to the network
 * thread.  `snap` (GET_PARTICLES only) is handed over with the reply. */
typedef struct cmd_reply {
    uint32_t client, rid;
    cmd_kind kind;
    bool ok;
    char error[FS_ERROR_LEN];
    uint64_t tick;  /* tick at which the command took effect */
    int64_t value;  /* push: touched; load_scene: particles; step: steps; set_param: material; emitter: slot */
    particles_snap *snap;   /* GET_PARTICLES */
    bodies_snap *bodies;    /* GET_BODIES */
    msg_buf *blob;          /* GET_SNAPSHOT: the encoded snapshot (one reference) */
} cmd_reply;

/* Frees what a reply carries (snapshots) and clears the pointers. */
void cmd_reply_free_payload(cmd_reply *r);

typedef void hub_wake_fn(void *arg);

/* Threads: sim thread writes, network thread reads; every field under mtx. */
typedef struct hub {
    pthread_mutex_t mtx;
    msg_buf *frame;          /* newest encoded frame (hub holds one ref) */
    uint64_t frame_seq;
    msg_buf *bcast[HUB_BCAST_RING]; /* bcast[seq % RING] for seq in [bcast_next-RING, bcast_next) */
    uint64_t bcast_next;
    cmd_reply *replies;      /* ring of HUB_REPLY_RING */
    int reply_head, reply_count;
    uint64_t replies_dropped;
    world_info info;
    sim_stats stats;
    /* snapshot uploads waiting for the sim thread (POST /api/snapshot):
     * immutable buffers, one reference each, found by upload id */
#define HUB_UPLOADS 2
    struct {
        uint32_t id;
        msg_buf *buf;
    } upload[HUB_UPLOADS];
    uint32_t next_upload;
    hub_wake_fn *wake;       /* lws_cancel_service wrapper; set before threads start */
    void *wake_arg;
} hub;

int hub_init(hub *h);
void hub_destroy(hub *h);
/* Sim thread side.  Each takes ownership of the message reference. */
void hub_publish_frame(hub *h, msg_buf *frame);
void hub_publish_bcast(hub *h, msg_buf *m);
/* Takes ownership of r's snapshots.  Drops (and frees) them when the ring is full. */
void hub_post_reply(hub *h, cmd_reply *r);
void hub_set_info(hub *h, const world_info *wi);
void hub_set_stats(hub *h, const sim_stats *st);
/* Takes (removes) the upload with this id: the caller owns the reference; NULL if gone. */
msg_buf *hub_take_upload(hub *h, uint32_t id);
void hub_wake(hub *h);

/* Network thread side. */
void hub_get_info(hub *h, world_info *out);
void hub_get_stats(hub *h, sim_stats *out);
/* New reference to the newest frame if its seq differs from *seq (updates
 * *seq), else NULL. */
msg_buf *hub_take_frame(hub *h, uint64_t *seq);
/* Copies up to max broadcasts with seq >= *next into out (new references);
 * sets *next past them.  *lost is set when some were already overwritten. */
int hub_take_bcast(hub *h, uint64_t *next, msg_buf **out, int max, bool *lost);
int hub_take_replies(hub *h, cmd_reply *out, int max);
/* Parks an upload for the sim thread (takes the reference); returns its id,
 * or 0 when every slot is busy (the caller unrefs and answers 503). */
uint32_t hub_put_upload(hub *h, msg_buf *buf);
/* Drops the upload if it is still parked (its command never ran). */
void hub_drop_upload(hub *h, uint32_t id);

#endif
