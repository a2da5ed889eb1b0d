/* particles.h - adding and removing particles: storage slots, stable ids
 * and the id order (particles.c). */
#ifndef SIM_PARTICLES_H
#define SIM_PARTICLES_H

#include "fluid_sim.h"

/* Appends a particle of material m at the ambient temperature, clamped into
 * the box; returns its index or -1 when full. */
int fs__alloc_particle(fs_world *w, float x, float y, float z, float vx, float vy, float vz, int m);
/* Removes the particle at index i (swap with the last one); call
 * fs__sync_ids after a batch of removals, before any particle is added. */
void fs__remove_index(fs_world *w, int i);
void fs__sync_ids(fs_world *w);

#endif
