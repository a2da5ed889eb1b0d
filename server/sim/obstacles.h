/* obstacles.h - the mesh obstacles' side of a step (obstacles.c): one
 * particle against every obstacle, and clearing them with the domain.
 * Internal to server/sim; the record is the world's (world_internal.h). */
#ifndef SIM_OBSTACLES_H
#define SIM_OBSTACLES_H

#include "world_internal.h"

/* Frees every obstacle (fs_world_reset, snapshot restores, destroy). */
void fs__obstacles_clear(fs_world *w);

/* The particle at x (its collision sphere of radius R) moving at v, of a
 * material with friction mu and stickiness stick_d (m), stick_k (1/s^2),
 * against every obstacle over a step of dt, as against a static body
 * (Clavet 2005 Eq. 9-12): the approaching normal velocity is cancelled and
 * mu of the tangential removed when it touches (d < 0), Eq. 12 pulls it in
 * within stick_d; x moves by the velocity change times dt, then out of
 * the obstacle if still inside.  The normal is the field's at x, or, for a
 * centre that ended inside after starting outside (x - v dt), the field's
 * where that path came within R of the surface.  moved gets that last extraction (a move of
 * position only, which the Clavet step gives the previous position too).
 * Returns true when it touched an obstacle.  Allocates nothing; reads only
 * the obstacles. */
bool fs__obstacles_particle(const fs_world *w, float R, float mu, float stick_d, float stick_k, float dt, float x[3],
                            float v[3], float moved[3]);

/* The unit normal out of obstacle s at x (field gradient g, value phi),
 * kept inside the box, and *depth, the field's value it goes with: an
 * obstacle standing on the floor has a face and edges there whose field
 * points into the floor, and the floor's clamp would put a centre sent
 * that way straight back inside.  Against a wall (x within R of w->lo or
 * w->hi), the normal loses its part out through the wall; if nothing is
 * left (a centre inside, nearest to the face on the floor), the field is
 * read again farther from that wall (the centre's depth plus R, doubled up
 * to three times) until the nearest face is another: the normal and the
 * value there (the depth under that face, which the lift along it does not
 * change), and *lifted (when given) says so.  False when no way out is
 * found.  Also the MPS solver's mesh rail (mps_walls.c). */
bool fs__obstacle_normal_in_box(const fs_world *w, const fs_sdf *s, const float x[3], float R, float phi,
                                const float g[3], float n[3], float *depth, bool *lifted);

#endif
