/* material.h - a material as the world keeps it (and a snapshot stores it):
 * its name and a value for each parameter of fluid_sim.h's fs_param. */
#ifndef SIM_MATERIAL_H
#define SIM_MATERIAL_H

#include "fluid_sim.h"

typedef struct fs_material {
    char name[16];
    float p[FS_P_COUNT];
} fs_material;

#endif
