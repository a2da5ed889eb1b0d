/* step.h - what every solver's sub-step starts with (step.c). */
#ifndef SIM_STEP_H
#define SIM_STEP_H

#include <stdbool.h>

#include "fluid_sim.h"

/* Zeroes the sub-step's phase times, runs the emitters and drains and, when
 * grid is true, builds the grid on the current positions (timed as
 * FS_PHASE_GRID). */
void fs__step_begin(fs_world *w, bool grid);
/* fs__grid_build, its time added to FS_PHASE_GRID */
void fs__grid_build_timed(fs_world *w);

#endif
