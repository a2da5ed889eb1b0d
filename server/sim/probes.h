/* probes.h - the check of a probe's definition that fs_world_add_probe and a
 * snapshot's restore share, and the pressure sensors' sum over a step's
 * sub-steps that the solvers feed (probes.c). */
#ifndef SIM_PROBES_H
#define SIM_PROBES_H

#include "world_internal.h"

/* def against the domain's box: its name, kind, position (inside the box),
 * size (0..the box's largest extent) and, for a pressure sensor, its normal
 * (finite, non-zero).  FS_OK with *out the definition kept: the name padded
 * with zeros, the normal of unit length (a height probe's (0, 1, 0)); else
 * a sentence naming the value.  Names taken and the count are the caller's. */
fs_status fs__probe_check(const fs_domain *dom, const fs_probe_def *def, fs_probe_def *out, fs_error *err);

/* After each of a solver's sub-steps of dt (its whole step, if it has
 * none): adds each pressure sensor's reading times dt to its sum, so that
 * fs_world_probes_measure reports the mean over the step (the impulse on
 * the patch over the step, per area and second).  Nothing without
 * pressure sensors; no allocation. */
void fs__probes_substep(fs_world *w, float dt);

#endif
