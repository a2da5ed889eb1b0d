/* apply_record.h - the recording commands (record_start, record_stop): the
 * sim thread checks them, makes the recording's folder and hands the
 * request to the encoder thread (encoder.c, recorder.c); a start is answered
 * when it has written its first frame, or with why it did not start.
 * Sim thread only (sim_record_at_start and sim_record_limits also on the
 * main thread before the sim thread starts). */
#ifndef SRV_APPLY_RECORD_H
#define SRV_APPLY_RECORD_H

#include <stddef.h>

#include "command.h"
#include "sim_state.h"

void apply_record_start(sim_thread *s, const cmd *c);
void apply_record_stop(sim_thread *s, const cmd *c);
/* Answers the starts whose outcome the encoder thread has given (every tick
 * while some wait). */
void sim_record_poll(sim_thread *s);
/* --record DIR: starts a recording at launch; one that cannot start is
 * logged and the server runs on without it. */
void sim_record_at_start(sim_thread *s);
/* Hands the recordings' disk limits to the encoder thread: the budget, and
 * the free space the world's saves need (from s->save_bytes). */
void sim_record_limits(sim_thread *s);

#endif
