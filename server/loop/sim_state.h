/* sim_state.h - the sim thread's state (struct sim_thread), shared by the
 * files of loop/ and by nothing outside it. */
#ifndef SRV_SIM_STATE_H
#define SRV_SIM_STATE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "config.h"
#include "dedupe.h"
#include "fluid_sim.h"
#include "hub.h"
#include "persist.h"
#include "pool_choice.h"
#include "queue.h"
#include "rate.h"
#include "sim_stats.h"
#include "encoder.h"
#include "wire.h"

#define SIM_MAX_PENDING_STEPS 32
#define SIM_HEAT_TOOLS CMD_HEAT_TOOLS

/* A reply held back until the world has stepped to `tick`.  A value owned
 * by the sim thread. */
typedef struct sim_pending_step {
    uint32_t client, rid;
    uint64_t tick;
    int steps;
} sim_pending_step;

/* A recording start waiting for its first frame (encoder_record_outcome):
 * its reply is held until then.  A value owned by the sim thread. */
typedef struct sim_pending_record {
    uint64_t serial;
    uint32_t client, rid;
    bool reply; /* false: the start at launch (--record), only logged */
    char name[CMD_NAME_LEN];
} sim_pending_record;

/* Also declared in sim_thread.h (C11 allows the same typedef twice): the
 * files of loop/ include this header, not the public one. */
typedef struct sim_thread sim_thread;

/* Threads: sim_thread_create/destroy run on the main thread before the thread
 * starts and after it is joined; between those, every field except `stop` is
 * touched only by the sim thread.  `stop` is atomic (main writes, sim reads). */
struct sim_thread {
    const srv_config *cfg;
    const wire_static *st;
    hub *hub;
    cmd_queue *queue;
    fs_world *world;
    fs_pool *pool;        /* shared with other sim threads (not owned); NULL: steps alone */
    pool_choice pool_use; /* whether steps fan out to the pool now */
    pthread_t thread;
    bool started;
    atomic_bool stop;
    atomic_bool discard; /* its room was deleted: no more saves (sim_thread_discard) */
    atomic_bool evicted; /* asleep long enough: the thread ended, saved (sim_thread_evicted) */
    uint64_t busy_ns;    /* the last tick that had a viewer, a command or a REST request (idle rooms sleep) */
    wire_cursor *cursor; /* cfg->max_clients entries */
    int cursor_count;
    wire_body body[FS_MAX_BODIES];   /* frame scratch */
    wire_probe probe[FS_MAX_PROBES]; /* frame scratch */
    struct {
        uint32_t body, client;
    } grab[FS_MAX_BODIES]; /* who holds which body */
    int grab_count;
    /* heat tools: core heater slots FS_MAX_HEATERS - SIM_HEAT_TOOLS.., one per
     * client while it heats, switched off at until_tick */
    struct {
        bool used;
        uint32_t client;
        uint64_t until_tick;
    } heat_tool[SIM_HEAT_TOOLS];
    uint64_t next_save_ns;       /* 0: no periodic saves */
    uint64_t next_fleet_save_ns; /* a fleet's room: its next snapshot for the fleet thread (0: at its first tick) */
    double fleet_saved_sim;      /* ... and the simulated time of its last */
    bool fleet_saved_paused;     /* ... and whether the world was paused in it */
    bool parked;                 /* a fleet's room saved for its move (the fleet's last save): never stepped again */
    persist_file save;           /* the save file read at start, until restored */
    sim_pending_step pending[SIM_MAX_PENDING_STEPS];
    int pending_count;
    /* recording starts waiting for their first frame */
    sim_pending_record rec_wait[ENCODER_REC_OPS];
    int rec_wait_count;
    /* the last save's size (before one, the world's document's): the free space recordings leave */
    uint64_t save_bytes;
    uint64_t info_version;
    float dt;                     /* the world's fixed step */
    uint64_t earliest_unshown_ns; /* arrival of the oldest command applied since the last frame */
    bool dirty;                   /* something changed since the last frame */
    bool fenced;                  /* a fleet room past its lease's fence: not stepped (hub_fence) */
    bool fence_told;              /* ... and its log says so (not before its first claim) */
    encoder *encoder;             /* the v2 frame encoder thread */
    uint32_t epoch;               /* the frame stream's epoch: grows at every scene load or restore */
    rate_bucket rebuilds;         /* the world's bound on scene loads, solver switches, restores (rate.h) */
    dedupe *dedupe;               /* recent (sid, rid) pairs: a retried command is applied once */
    dedupe_entry *dedupe_cur;     /* the entry of the command being applied, until its reply */
    uint32_t dedupe_client;       /* ... and the client that reply goes to */
    sim_stats stats;
    /* the obstacles last published (sim_publish_obstacles): each one's
     * encoded placed mesh, kept to be handed out again while the obstacle
     * lives (an id names one placed mesh until the world is replaced) */
    struct {
        uint32_t id;
        uint64_t hash;
        msg_buf *mesh; /* one reference */
    } obstacle_pub[FS_MAX_OBSTACLES];
    int obstacle_pub_count;
    uint64_t obstacles_version; /* of the last `obstacles` message */
};

#endif
