/* unified.h - the unified (Solenthaler 2007) solver's knobs and diagnostics
 * for tests and benchmarks (no-ops or 0 when the world is on another solver). */
#ifndef SIM_UNIFIED_H
#define SIM_UNIFIED_H

#include "fluid_sim.h"

void fs__unified_set_cfl(fs_world *w, float cfl); /* default 0.4 */
int fs__unified_last_substeps(const fs_world *w, float *dt);
int fs__unified_components(fs_world *w, int *pairs, int *largest);
float fs__unified_max_strain(const fs_world *w);
float fs__unified_density_ratio(const fs_world *w, float *max);

#endif
