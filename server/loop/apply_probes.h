/* apply_probes.h - the probe commands: add a named height probe or
 * pressure sensor to the world, remove one.  Their values reach the network
 * thread in the sim thread's statistics (sim_stats.probe).  Sim thread only. */
#ifndef SRV_APPLY_PROBES_H
#define SRV_APPLY_PROBES_H

#include "command.h"
#include "sim_state.h"

void apply_probe_add(sim_thread *s, const cmd *c);
void apply_probe_remove(sim_thread *s, const cmd *c);

#endif
