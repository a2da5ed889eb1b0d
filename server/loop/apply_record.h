/* apply_record.h - the recording commands (record_start, record_stop): the
 * sim thread checks them, makes the recording's folder and hands the
 * request to the encoder thread (encoder.c, recorder.c).  Sim thread only. */
#ifndef SRV_APPLY_RECORD_H
#define SRV_APPLY_RECORD_H

#include <stddef.h>

#include "command.h"
#include "sim_state.h"

void apply_record_start(sim_thread *s, const cmd *c);
void apply_record_stop(sim_thread *s, const cmd *c);
/* --record DIR: starts a recording at launch.  Returns 0, or -1 with a reason. */
int sim_record_at_start(sim_thread *s, char *err, size_t errlen);

#endif
