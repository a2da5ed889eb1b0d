/* params.h - a material (its parameter values, fluid_sim.h's fs_param) and
 * the presets a new world starts with (params.c). */
#ifndef SIM_PARAMS_H
#define SIM_PARAMS_H

#include "fluid_sim.h"

typedef struct fs_material {
    char name[16];
    float p[FS_P_COUNT];
} fs_material;

/* Sets the world's materials to the presets (water, goo, ... oil). */
void fs__materials_init(fs_world *w);

#endif
