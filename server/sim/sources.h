/* sources.h - emitters (nozzles that add particles) and drains (spheres that
 * remove them), run at the start of every solver's step (sources.c). */
#ifndef SIM_SOURCES_H
#define SIM_SOURCES_H

#include "fluid_sim.h"

/* the set_emitter / set_drain ranges, for snapshots too */
fs_status fs__emitter_check(const fs_emitter_def *d, int nmat, fs_error *err);
fs_status fs__drain_check(const fs_drain_def *d, fs_error *err);
/* drains, then emitters: the start of every solver's step */
void fs__emit_and_drain(fs_world *w);

#endif
