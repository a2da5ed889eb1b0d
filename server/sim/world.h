/* world.h - fs_world_reset in parts, for a snapshot's restore (world.c):
 * the domain's check (no change) and the rest, which cannot fail. */
#ifndef SIM_WORLD_H
#define SIM_WORLD_H

#include "fluid_sim.h"

/* The domain's documented ranges for a world of capacity cap. */
fs_status fs__domain_check(const fs_domain *dom, int cap, fs_error *err);
/* Empties the world into the checked domain; takes ownership of the grid's
 * cell starts made by fs__grid_alloc for it. */
void fs__reset_apply(fs_world *w, const fs_domain *dom, int32_t *starts);

#endif
