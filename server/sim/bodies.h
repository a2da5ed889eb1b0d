/* bodies.h - rigid bodies (Clavet 2005 Sec. 6, Algorithm 6): the body
 * record the world keeps, its step and a snapshot's checks (bodies.c). */
#ifndef SIM_BODIES_H
#define SIM_BODIES_H

#include "fluid_sim.h"

typedef struct fs_body {
    uint32_t id;
    fs_shape shape;
    fs_vec3 size;
    float density, mass, inv_mass, friction, bound;
    fs_vec3 inv_inertia; /* body frame, diagonal */
    bool is_static, grab;
    fs_vec3 pos, vel, ang; /* ang: angular velocity, world frame */
    fs_vec3 vel_eff;       /* the velocity the last step advanced it with */
    fs_quat rot;
    fs_vec3 pos0;          /* Alg. 6 line 2: the saved pose */
    fs_quat rot0;
    fs_vec3 acc_J, acc_T;  /* line 7: the particles' impulse and its torque */
    fs_vec3 grab_local, grab_target;
} fs_body;

#define FS_MAX_CONTACTS 4096

size_t fs__contact_size(void);
/* A snapshot's bodies (in id order, ids below next_id) and warm-start
 * contacts against their documented ranges, inside the domain's box; fills
 * in what derives from shape, size and density (mass, inertia, bound). */
#define FS_BODY_MAX_SPEED 1000.0f /* m/s: ten times the step's rail */
#define FS_BODY_MAX_SPIN 2000.0f  /* rad/s: ten times the step's rail */
fs_status fs__bodies_check(fs_body *bodies, int nb, uint32_t next_id, const fs_domain *dom, const void *contacts,
                           int nc, fs_error *err);
/* Algorithm 6 for one sub-step of dt, with per-material friction, stick
 * distance and strength, and particle mass; run fans work out (fs__run). */
void fs__bodies_step(fs_world *w, float dt, float R, const float *mu, const float *stick_d, const float *stick_k,
                     const float *mass, void (*run)(fs_world *, fs_task_fn *, void *, int));

#endif
