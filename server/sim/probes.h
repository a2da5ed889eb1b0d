/* probes.h - the check of a probe's definition that fs_world_add_probe and a
 * snapshot's restore share (probes.c). */
#ifndef SIM_PROBES_H
#define SIM_PROBES_H

#include "world_internal.h"

/* def against the domain's box: its name, kind, position (inside the box),
 * size (0..the box's largest extent) and, for a pressure sensor, its normal
 * (finite, non-zero).  FS_OK with *out the definition kept: the name padded
 * with zeros, the normal of unit length (a height probe's (0, 1, 0)); else
 * a sentence naming the value.  Names taken and the count are the caller's. */
fs_status fs__probe_check(const fs_domain *dom, const fs_probe_def *def, fs_probe_def *out, fs_error *err);

#endif
