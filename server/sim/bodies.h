/* bodies.h - rigid bodies (Clavet 2005 Sec. 6, Algorithm 6): their step
 * and a snapshot's checks (bodies.c); the body record is the world's
 * (world_internal.h). */
#ifndef SIM_BODIES_H
#define SIM_BODIES_H

#include "world_internal.h" /* fs_body */

size_t fs__contact_size(void);
/* The step's safety rail, like the particles': a body moves at most this
 * fast (m/s) and spins at most this fast (rad/s). */
#define FS_BODY_RAIL_SPEED 100.0f
#define FS_BODY_RAIL_SPIN 200.0f
/* A snapshot's bodies (in id order, ids below next_id) and warm-start
 * contacts against their documented ranges, inside the domain's box; fills
 * in what derives from shape, size and density (mass, inertia, bound).
 * Mesh bodies only when meshes (the snapshot carries their meshes); their
 * size, mass and bound come from the mesh (fs__body_mesh_adopt, fs__body_set_mass). */
#define FS_BODY_MAX_SPEED (10.0f * FS_BODY_RAIL_SPEED) /* m/s: ten times the step's rail */
#define FS_BODY_MAX_SPIN (10.0f * FS_BODY_RAIL_SPIN)   /* rad/s: ten times the step's rail */
fs_status fs__bodies_check(fs_body *bodies, int nb, uint32_t next_id, const fs_domain *dom, const void *contacts,
                           int nc, bool meshes, fs_error *err);
/* Frees every mesh body's data (body_mesh.c): before the bodies are
 * emptied (fs_world_reset) and when the world is destroyed. */
void fs__body_meshes_clear(fs_world *w);
/* How the particles meet the bodies (Eq. 9-12 of Clavet 2005): their
 * collision radius, and per material the friction mu, the stick distance
 * (m) and strength (1/s^2) and the particle's mass.  velocities: the
 * particles' velocities are p.vx, p.vy, p.vz, which the impulses change
 * (the unified solver); else a particle's velocity is (x - px) / dt and an
 * impulse changes it through x (Clavet's prediction-relaxation).  solid,
 * per storage slot, or NULL: a particle whose entry is 0 slips (mu = 0).
 * drift: how far (m) a particle may have moved out of the grid cell it was
 * sorted into (the bodies find their particles in the grid, each body
 * over its reach grown by this much). */
typedef struct fs_body_coupling {
    float R;
    const float *mu, *stick_d, *stick_k, *mass;
    bool velocities;
    const uint8_t *solid;
    float drift;
} fs_body_coupling;
/* Algorithm 6 for one sub-step of dt; run fans work out (fs__run).
 * Returns how many particles it moved. */
int fs__bodies_step(fs_world *w, float dt, const fs_body_coupling *kc,
                    void (*run)(fs_world *, fs_task_fn *, void *, int));

#endif
