/* scene_spheric2.h - the SPHERIC Test 2 scene (scene_spheric2.c): its
 * geometry, which tests and scripts share, and its builder, which the
 * scene table (scenes.c) lists. */
#ifndef SIM_SCENE_SPHERIC2_H
#define SIM_SCENE_SPHERIC2_H

#include "fluid_sim.h"

/* Metres, the world's axes (y up; the experiment's z): the tank, the water
 * column behind the gate at the far end, and the box. */
#define SPHERIC2_TANK_X 3.22f
#define SPHERIC2_TANK_Y 1.0f
#define SPHERIC2_TANK_Z 1.0f
#define SPHERIC2_COLUMN_X0 1.992f
#define SPHERIC2_COLUMN_Y 0.55f
#define SPHERIC2_BOX_X0 0.6635f
#define SPHERIC2_BOX_X1 0.8245f
#define SPHERIC2_BOX_Y 0.161f
#define SPHERIC2_BOX_Z0 0.2985f
#define SPHERIC2_BOX_Z1 0.7015f

/* Resets the world to the case with about n particles in the column (the
 * spacing follows from n); h over the spacing is h_over_s. */
fs_status fs__build_spheric2(fs_world *w, int n, float h_over_s, fs_error *err);

#endif
