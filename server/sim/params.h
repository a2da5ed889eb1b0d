/* params.h - the presets a new world's materials start as (params.c; the
 * parameter table itself is public: fluid_sim.h). */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "fluid_sim.h"

/* Sets the world's materials to the presets (water, goo, ... oil). */
void fs__materials_init(fs_world *w);

#endif
