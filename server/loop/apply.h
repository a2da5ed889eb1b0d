/* apply.h - applying checked commands to the world at a tick boundary, and
 * what the sim thread holds for its clients between ticks: held step
 * replies, heat tools.  Sim thread only. */
#ifndef SRV_APPLY_H
#define SRV_APPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "sim_state.h"

/* Applies c and posts its reply (and broadcasts). */
void sim_apply(sim_thread *s, const cmd *c);
/* Posts the held step replies whose tick has come (all: every one). */
void sim_flush_pending_steps(sim_thread *s, bool all);
/* Switches heat tools whose time is up off (every tick). */
void sim_expire_heat(sim_thread *s);
/* After a scene load or a restore: forgets grabs, heat tools and held steps,
 * publishes the new world info and tells every client (by: who did it, 0:
 * the server or REST). */
void sim_world_replaced(sim_thread *s, uint32_t by);

#endif
