/* sim_thread.h - the thread that owns the world: applies queued commands at
 * tick boundaries, steps at a fixed rate, encodes frames and publishes them,
 * replies and snapshots through the hub.  What main.c needs; the thread's
 * state and the files of loop/ share sim_state.h. */
#ifndef SRV_SIM_THREAD_H
#define SRV_SIM_THREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "fluid_sim.h"
#include "hub.h"
#include "queue.h"
#include "wire.h"

typedef struct sim_thread sim_thread;

/* Creates the world and loads the first scene, or restores the save in
 * --data-dir (main thread).  pool: the worker pool the world's steps fan out
 * to, which other sim threads may share (the caller keeps it alive until
 * sim_thread_destroy); NULL: the sim thread steps alone.  Returns the
 * thread, not yet started, or NULL with a reason in err. */
sim_thread *sim_thread_create(const srv_config *cfg, const wire_static *st, fs_pool *pool, hub *h, cmd_queue *q,
                              char *err, size_t errlen);
/* Before it starts (the thread that created it): the milliseconds a tick of
 * its world takes as loaded on one thread (a few ticks to warm, then the
 * mean of a few more: the core-milliseconds it costs), and its particle
 * count; the world is loaded again as it was, so it still starts at its
 * first tick, on the pool only if one thread is too slow for it. */
double sim_thread_measure(sim_thread *s, int *particles);
/* Before it starts: its first scene loaded again with about n particles.
 * 0, or -1 with err. */
int sim_thread_resize(sim_thread *s, int n, char *err, size_t errlen);
/* Before it starts: its world restored from the snapshot document p (n
 * bytes; NULL: kept as it is), checked as an upload is (a world restores
 * only into one of the capacity it was saved from), and its frame stream
 * started at epoch (a fleet's room taken over: its viewers' decoders start
 * again at a keyframe).  0, or -1 with err (the world and the epoch are
 * still set: the caller keeps the room from its scene). */
int sim_thread_restore(sim_thread *s, const uint8_t *p, size_t n, uint32_t epoch, char *err, size_t errlen);
/* Asleep for --room-evict-s with a folder to restore from: the thread has
 * saved and ended, and its room may destroy it (sim_thread_destroy) and
 * make another from the save when it is wanted again (any thread). */
bool sim_thread_evicted(sim_thread *s);
/* Its room was deleted: the world is never saved again, at stop neither
 * (any thread). */
void sim_thread_discard(sim_thread *s);
/* Starts stepping.  0, or -1 when the thread cannot be created. */
int sim_thread_start(sim_thread *s);
/* Asks the thread to stop (it saves the world to --data-dir), joins it and
 * frees the world (main thread).  NULL is allowed. */
void sim_thread_destroy(sim_thread *s);

#endif
