/* publish.h - what the sim thread tells the network side besides frames: the
 * world's description (world_info) and the reply to each command, counted in
 * its statistics.  Sim thread only. */
#ifndef SRV_PUBLISH_H
#define SRV_PUBLISH_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "fluid_sim.h"
#include "reply.h"
#include "sim_state.h"

/* The world's current tick. */
uint64_t sim_world_tick(sim_thread *s);
/* Fills wi from the world (a new version) and hands a copy to the hub. */
void sim_publish_info(sim_thread *s, world_info *wi);

/* Publishes the obstacles now: each one's placed mesh encoded
 * (obstacle_mesh.h; an obstacle already published keeps its encoding unless
 * forget is set: the world was replaced), the list to the hub for new viewers
 * and as an `obstacles` broadcast naming by.  Allocates: called when the
 * obstacles change, never in the step loop. */
void sim_publish_obstacles(sim_thread *s, uint32_t by, bool forget);
/* Drops the encodings sim_publish_obstacles keeps (the thread's end). */
void sim_obstacles_free(sim_thread *s);

/* A reply to c at the current tick, not yet ok and carrying nothing. */
cmd_reply sim_reply_to(sim_thread *s, const cmd *c);
/* Posts r (and what it carries) to the hub, counted by kind and result,
 * after the statistics of the world the command left. */
void sim_reply_post(sim_thread *s, cmd_reply *r);
/* Copies the world's tick, time, counts and pause state into the sim
 * thread's statistics (published by hub_set_stats). */
void sim_stats_of_world(sim_thread *s, const fs_stats *fst);
/* Replies ok with value (presence and drag updates are not acknowledged). */
void sim_reply_ok(sim_thread *s, const cmd *c, int64_t value);
/* Refuses c with code and the error "<kind>: <fmt ...>". */
void sim_reply_error(sim_thread *s, const cmd *c, reply_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Replies ok with value when st is FS_OK, else refuses with the code of st
 * (reply_code_of_status) and the error "<kind>: <e's text>". */
void sim_reply_status(sim_thread *s, const cmd *c, fs_status st, const fs_error *e, int64_t value);

#endif
