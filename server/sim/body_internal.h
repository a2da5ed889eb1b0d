/* body_internal.h - what the rigid bodies' files share: the shapes'
 * geometry (body_shapes.c), an impulse applied to a body, and the contacts
 * between bodies and with the walls (body_contacts.c).  Internal to
 * server/sim; the bodies' entry points for the rest of the core are in
 * bodies.h. */
#ifndef FS_BODY_INTERNAL_H
#define FS_BODY_INTERNAL_H

#include "body_math.h"

/* body_shapes.c.  w gives a mesh body its data (fs_world.body_meshes);
 * the analytic shapes do not read it.  Distance from local point p to the
 * surface (negative inside) and the outward unit normal (local). */
float fs__body_sdf_local(const fs_world *w, const fs_body *b, v3 p, v3 *n);
/* Bounding radius about the centre. */
float fs__body_bound_radius(const fs_world *w, const fs_body *b);
/* Half extents of the body's world-axis-aligned bounding box. */
v3 fs__body_half_extent(const fs_world *w, const fs_body *b);
/* Sample spheres (local centre, radius) on the shape for body contacts,
 * at most FS_BODY_SAMPLES; returns how many. */
#define FS_BODY_SAMPLES FS_BODY_MESH_SAMPLES
int fs__body_samples(const fs_world *w, const fs_body *b, v3 *c, float *r);
/* Mass and inertia from shape, size and density (none for a static body);
 * w may be NULL for the analytic shapes. */
void fs__body_set_mass(const fs_world *w, fs_body *b);

/* body_mesh.c: a mesh body's data, made when it is created (b's pos, rot,
 * size and mesh_slot set from the definition's mesh, scale, pos, rot) and
 * released when it is destroyed (or the world reset: bodies.h). */
typedef struct fs_mesh_body fs_mesh_body;
fs_status fs__body_mesh_make(fs_world *w, const fs_body_def *d, fs_body *b, fs_error *err);
void fs__body_mesh_release(fs_world *w, fs_body *b);
/* Its signed distance and outward normal in its frame, bounding radius,
 * half extents about the centre, contact samples, and volume and principal
 * moments at unit density. */
float fs__mesh_body_sdf(const fs_mesh_body *m, v3 p, v3 *n);
float fs__mesh_body_bound(const fs_mesh_body *m);
v3 fs__mesh_body_half(const fs_mesh_body *m);
int fs__mesh_body_samples(const fs_mesh_body *m, v3 *c, float *r);
void fs__mesh_body_unit_mass(const fs_mesh_body *m, double *volume, v3 *moments);
/* A snapshot's mesh body: the mesh already in its body frame (as
 * fs_world_body_mesh gives it) with its saved volume and principal moments
 * at unit density, which must agree with the mesh's own (within 1e-3);
 * its field is built for a world of that h and particle spacing as the
 * body's was, so it is the same bit for bit.  Adopt puts it in a free slot
 * of w and gives b its size and bound (its mass: fs__body_set_mass after); free
 * drops one not adopted. */
fs_status fs__mesh_body_restore(float h, float spacing, const fs_mesh *framed, double volume, fs_vec3 moments,
                                fs_mesh_body **out, fs_error *err);
void fs__body_mesh_adopt(fs_world *w, fs_body *b, fs_mesh_body *m);
void fs__mesh_body_free(fs_mesh_body *m);
static inline const fs_mesh_body *fs__mesh_of(const fs_world *w, const fs_body *b) {
    return w->body_meshes[b->mesh_slot - 1];
}

/* World-space signed distance and normal at the body's current pose. */
static inline float sdf_world(const fs_world *w, const fs_body *b, v3 x, v3 *n) {
    v3 nl;
    float d = fs__body_sdf_local(w, b, qrot_inv(b->rot, sub(x, b->pos)), &nl);
    *n = qrot(b->rot, nl);
    return d;
}

static inline void apply_impulse(fs_body *b, v3 point, v3 J) {
    if (b->is_static) return;
    b->vel = add(b->vel, mul(J, b->inv_mass));
    b->ang = add(b->ang, inv_inertia_mul(b, cross(sub(point, b->pos), J)));
}

/* body_contacts.c.  Finds the contacts between the bodies and with the
 * box's walls at the current poses, warm-starts them from the last step's
 * and resolves them by sequential impulses (iterations passes). */
void fs__bodies_contacts(fs_world *w, float dt, int iterations);
/* A snapshot's warm-start contacts against nb bodies: indices in range,
 * every number finite and bounded, normal impulses not negative. */
fs_status fs__contacts_check(const void *contacts, int nc, int nb, fs_error *err);

#endif
