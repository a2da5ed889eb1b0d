/* sim_thread.h - the thread that owns the world: applies queued commands at
 * tick boundaries, steps at a fixed rate, encodes frames and publishes them,
 * replies and snapshots through the hub. */
#ifndef SRV_SIM_THREAD_H
#define SRV_SIM_THREAD_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "config.h"
#include "fluid_sim.h"
#include "hub.h"
#include "wire.h"
#include "queue.h"

#define SIM_MAX_PENDING_STEPS 32
#define SIM_HEAT_TOOLS CMD_HEAT_TOOLS

/* A reply held back until the world has stepped to `tick`.  A value owned
 * by the sim thread. */
typedef struct sim_pending_step {
    uint32_t client, rid;
    uint64_t tick;
    int steps;
} sim_pending_step;

/* Threads: sim_thread_init/destroy run on the main thread before the thread
 * starts and after it is joined; between those, every field except `stop` is
 * touched only by the sim thread.  `stop` is atomic (main writes, sim reads). */
typedef struct sim_thread {
    const srv_config *cfg;
    const wire_static *st;
    hub *hub;
    cmd_queue *queue;
    fs_world *world;
    fs_pool *pool;
    pthread_t thread;
    bool started;
    atomic_bool stop;
    wire_cursor *cursor; /* cfg->max_clients entries */
    int cursor_count;
    wire_body body[FS_MAX_BODIES]; /* frame scratch */
    struct {
        uint32_t body, client;
    } grab[FS_MAX_BODIES];       /* who holds which body */
    int grab_count;
    /* heat tools: core heater slots FS_MAX_HEATERS - SIM_HEAT_TOOLS.., one per
     * client while it heats, switched off at until_tick */
    struct {
        bool used;
        uint32_t client;
        uint64_t until_tick;
    } heat_tool[SIM_HEAT_TOOLS];
    uint64_t next_save_ns;        /* 0: no periodic saves */
    uint8_t *save;                /* the save file read at start, until restored */
    size_t save_len;
    const char *save_why;         /* why it cannot be used (static text), or NULL */
    sim_pending_step pending[SIM_MAX_PENDING_STEPS];
    int pending_count;
    uint64_t info_version;
    float dt;                     /* the world's fixed step */
    uint64_t earliest_unshown_ns; /* arrival of the oldest command applied since the last frame */
    bool dirty;                   /* something changed since the last frame */
    sim_stats stats;
} sim_thread;

/* Creates the world and loads the first scene (main thread).  Returns 0, or
 * -1 with a reason in err. */
int sim_thread_init(sim_thread *s, const srv_config *cfg, const wire_static *st, hub *h, cmd_queue *q,
                    char *err, size_t errlen);
int sim_thread_start(sim_thread *s);
/* Asks the thread to stop, joins it, frees the world (main thread). */
void sim_thread_destroy(sim_thread *s);

/* Sim thread only (sim_thread.c and sim_apply.c). */
void sim_apply(sim_thread *s, const cmd *c);
void sim_flush_pending_steps(sim_thread *s, bool all);
uint64_t sim_world_tick(sim_thread *s);
uint32_t sim_grab_owner(const sim_thread *s, uint32_t body);
void sim_publish_info(sim_thread *s, world_info *wi);
/* After a scene load or a restore: forgets grabs, heat tools and held steps,
 * publishes the new world info and tells every client. */
void sim_world_replaced(sim_thread *s, uint32_t by);
/* Switches heat tools whose time is up off (every tick). */
void sim_expire_heat(sim_thread *s);

/* persist.c */
msg_buf *sim_snapshot_doc(sim_thread *s);
int sim_restore_doc(sim_thread *s, const uint8_t *p, size_t n, char *err, size_t errlen);
bool sim_save(sim_thread *s);      /* to --data-dir; true when saved or nothing to do */
void sim_open_saved(sim_thread *s, fs_world_def *def); /* before the world exists */
int sim_load_saved(sim_thread *s); /* 1 restored, 0 nothing saved, -1 set aside */

#endif
