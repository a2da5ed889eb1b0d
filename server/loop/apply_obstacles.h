/* apply_obstacles.h - the mesh obstacle commands: place a stored mesh
 * (hub.meshes) as a static obstacle, remove one, list them.  Sim thread only. */
#ifndef SRV_APPLY_OBSTACLES_H
#define SRV_APPLY_OBSTACLES_H

#include "command.h"
#include "fluid_sim.h"
#include "sim_state.h"

#define APPLY_FIT_SHARE 0.5f /* fit: the mesh's box takes this share of the domain box on its tightest axis */

/* Fit: the scale and position that put the mesh, rotated by rot, into the
 * domain's box: the rotated mesh's bounding box scaled uniformly to
 * APPLY_FIT_SHARE of the box's extent on the axis where it is tightest, its
 * centre at centre.  false when the mesh has no extent. */
bool apply_obstacle_fit(const fs_mesh *m, fs_quat rot, fs_vec3 box_min, fs_vec3 box_max, fs_vec3 centre, float *scale,
                        fs_vec3 *pos);

void apply_obstacle_add(sim_thread *s, const cmd *c);
void apply_obstacle_remove(sim_thread *s, const cmd *c);
void apply_get_obstacles(sim_thread *s, const cmd *c);

#endif
