/* apply_bodies.h - the rigid-body commands (create, destroy, impulse, grab, drag,
 * release, list) and who holds which body.  Sim thread only. */
#ifndef SRV_APPLY_BODIES_H
#define SRV_APPLY_BODIES_H

#include <stdint.h>

#include "command.h"
#include "sim_state.h"

void apply_body_create(sim_thread *s, const cmd *c);
void apply_body_destroy(sim_thread *s, const cmd *c);
void apply_body_impulse(sim_thread *s, const cmd *c);
void apply_body_grab(sim_thread *s, const cmd *c);
void apply_body_drag(sim_thread *s, const cmd *c);
void apply_body_release(sim_thread *s, const cmd *c);
void apply_get_bodies(sim_thread *s, const cmd *c);

/* The client holding the body, or 0. */
uint32_t sim_grab_owner(const sim_thread *s, uint32_t body);
/* A client went away: lets go of what it held. */
void sim_release_all(sim_thread *s, uint32_t client);
/* The bodies were replaced (scene load, restore): nobody holds any. */
void sim_forget_grabs(sim_thread *s);

#endif
