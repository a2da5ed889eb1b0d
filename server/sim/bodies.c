/* bodies.c - rigid bodies coupled both ways with the fluid (Clavet et al.
 * 2005, Sec. 6 and Algorithm 6, with stickiness, Eq. 12): the public calls
 * (create, destroy, query, impulse, grab and drag) and a snapshot's bodies'
 * checks.
 *
 * A body is a sphere, a box, a capsule or a closed mesh (body_mesh.c) with
 * a density (so a mass and an inertia tensor), a pose (position, unit
 * quaternion) and a velocity.
 * Collision of particles with a body uses the shape's analytic signed
 * distance (body_shapes.c); body-body and body-wall contacts use sample
 * spheres on each shape against the other's signed distance (the
 * point-against-distance scheme of Guendelman et al. 2003, which the
 * paper's rigid-body solver follows; body_contacts.c).  Algorithm 6 itself
 * is body_step.c; body_math.h is the vector algebra they share.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bodies.h"
#include "body_internal.h"
#include "sim_util.h"

/* ---- public API -------------------------------------------------------------- */
fs_body_def fs_default_body_def(void) {
    fs_body_def d;
    memset(&d, 0, sizeof d);
    d.shape = FS_SHAPE_BOX;
    d.size = (fs_vec3){0.2f, 0.2f, 0.2f};
    d.density = 500.0f;
    d.rot = (fs_quat){1, 0, 0, 0};
    d.friction = 0.5f;
    d.scale = 1.0f;
    return d;
}

/* The ranges of a body's definition (fluid_sim.h), which fs_world_create_body
 * and a snapshot's checks share; every number already known finite. */
static bool size_within(fs_shape shape, v3 s) {
    float smin = shape == FS_SHAPE_BOX ? fminf(s.x, fminf(s.y, s.z)) : s.x;
    return smin >= FS_BODY_MIN_SIZE && s.x <= FS_BODY_MAX_HALF_EXTENT && s.y <= FS_BODY_MAX_HALF_EXTENT &&
           s.z <= FS_BODY_MAX_HALF_EXTENT && !(shape == FS_SHAPE_CAPSULE && s.y < 0);
}
static bool density_within(float rho) {
    return rho >= FS_BODY_MIN_DENSITY && rho <= FS_BODY_MAX_DENSITY;
}
static bool friction_within(float mu) {
    return mu >= 0 && mu <= FS_BODY_MAX_FRICTION;
}

static fs_body *find(fs_world *w, uint32_t id) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) return &w->bodies[i];
    return NULL;
}

int64_t fs_world_create_body(fs_world *w, const fs_body_def *d, fs_error *err) {
    if (!d) {
        SETERR(err, "body: missing definition");
        return -1;
    }
    if (w->nbodies >= FS_MAX_BODIES) {
        SETERR(err, "body: the world holds %d bodies already (the most)", FS_MAX_BODIES);
        return -1;
    }
    if ((int)d->shape < 0 || d->shape > FS_SHAPE_MESH) {
        SETERR(err, "body: unknown shape %d", (int)d->shape);
        return -1;
    }
    const bool mesh = d->shape == FS_SHAPE_MESH;
    if (mesh && !d->mesh) {
        SETERR(err, "body: a mesh body needs a mesh");
        return -1;
    }
    if ((!mesh && !finite3(d->size)) || !finite3(d->pos) || !finite3(d->vel) || !finite3(d->ang_vel) ||
        !isfinite(d->density) || !isfinite(d->friction) || !isfinite(d->rot.w) || !isfinite(d->rot.x) ||
        !isfinite(d->rot.y) || !isfinite(d->rot.z)) {
        SETERR(err, "body: every number must be finite");
        return -1;
    }
    if (!mesh && !size_within(d->shape, d->size)) {
        SETERR(err, "body: sizes must be within %g..%g m", FS_BODY_MIN_SIZE, FS_BODY_MAX_HALF_EXTENT);
        return -1;
    }
    if (!density_within(d->density)) {
        SETERR(err, "body: density %g outside %g..%g kg/m^3", d->density, FS_BODY_MIN_DENSITY, FS_BODY_MAX_DENSITY);
        return -1;
    }
    if (!friction_within(d->friction)) {
        SETERR(err, "body: friction %g outside 0..%g", d->friction, FS_BODY_MAX_FRICTION);
        return -1;
    }
    if (len(d->vel) > FS_BODY_MAX_START_SPEED || len(d->ang_vel) > FS_BODY_MAX_START_SPEED) {
        SETERR(err, "body: speed above %g m/s or %g rad/s", FS_BODY_MAX_START_SPEED, FS_BODY_MAX_START_SPEED);
        return -1;
    }
    fs_body b;
    memset(&b, 0, sizeof b);
    b.id = w->next_body_id;
    b.shape = d->shape;
    b.size = d->size;
    if (b.shape == FS_SHAPE_SPHERE) b.size.y = b.size.z = b.size.x;
    if (b.shape == FS_SHAPE_CAPSULE) b.size.z = b.size.x;
    b.density = d->density;
    b.is_static = d->is_static;
    b.friction = d->friction;
    b.rot = qnorm(d->rot);
    b.vel = d->is_static ? (v3){0, 0, 0} : d->vel;
    b.vel_eff = b.vel;
    b.ang = d->is_static ? (v3){0, 0, 0} : d->ang_vel;
    b.pos = d->pos;
    /* a mesh: its data, and pos, rot and size from the placed mesh (body_mesh.c) */
    if (mesh && fs__body_mesh_make(w, d, &b, err) != FS_OK) return -1;
    fs__body_set_mass(w, &b);
    /* keep the body inside the box: its axis-aligned extent, at most half the box */
    v3 ext = fs__body_half_extent(w, &b);
    v3 lo = w->dom.box_min, hi = w->dom.box_max;
    float ex = fminf(ext.x, 0.5f * (hi.x - lo.x)), ey = fminf(ext.y, 0.5f * (hi.y - lo.y)),
          ez = fminf(ext.z, 0.5f * (hi.z - lo.z));
    b.pos.x = fminf(fmaxf(b.pos.x, lo.x + ex), hi.x - ex);
    b.pos.y = fminf(fmaxf(b.pos.y, lo.y + ey), hi.y - ey);
    b.pos.z = fminf(fmaxf(b.pos.z, lo.z + ez), hi.z - ez);
    w->next_body_id++;
    w->bodies[w->nbodies++] = b;
    return (int64_t)b.id;
}

bool fs_world_destroy_body(fs_world *w, uint32_t id) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) {
            fs__body_mesh_release(w, &w->bodies[i]);
            memmove(&w->bodies[i], &w->bodies[i + 1], sizeof(fs_body) * (size_t)(w->nbodies - i - 1));
            w->nbodies--;
            w->ncontacts_prev = 0; /* indices changed: no warm start this step */
            return true;
        }
    return false;
}

int fs_world_body_count(const fs_world *w) {
    return w->nbodies;
}

static void state_of(const fs_world *w, const fs_body *b, fs_body_state *o) {
    fs_body dyn = *b; /* a static body's moments too */
    dyn.is_static = false;
    fs__body_set_mass(w, &dyn);
    o->inertia = (fs_vec3){1.0f / dyn.inv_inertia.x, 1.0f / dyn.inv_inertia.y, 1.0f / dyn.inv_inertia.z};
    o->id = b->id;
    o->shape = b->shape;
    o->size = b->size;
    o->is_static = b->is_static;
    o->mass = b->mass;
    o->density = b->density;
    o->pos = b->pos;
    o->rot = b->rot;
    o->vel = b->vel_eff; /* the velocity it moved with in the last step */
    o->ang_vel = b->ang;
    o->grabbed = b->grab;
}

bool fs_world_body_at(const fs_world *w, int index, fs_body_state *out) {
    if (index < 0 || index >= w->nbodies) return false;
    state_of(w, &w->bodies[index], out);
    return true;
}

bool fs_world_body_get(const fs_world *w, uint32_t id, fs_body_state *out) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) {
            state_of(w, &w->bodies[i], out);
            return true;
        }
    return false;
}

/* The dynamic body `id` for a command, or NULL with the reason in *st. */
static fs_body *dynamic_body(fs_world *w, uint32_t id, const char *what, v3 a, v3 b2, fs_status *st, fs_error *err) {
    fs_body *b = find(w, id);
    *st = FS_OK;
    if (!b) {
        SETERR(err, "%s: body %u does not exist", what, id);
        *st = FS_ERR_UNKNOWN;
    } else if (!finite3(a) || !finite3(b2)) {
        SETERR(err, "%s: every number must be finite", what);
        *st = FS_ERR_ARG;
    } else if (b->is_static) {
        SETERR(err, "%s: body %u is static", what, id);
        *st = FS_ERR_ARG;
    }
    return *st == FS_OK ? b : NULL;
}

fs_status fs_world_body_impulse(fs_world *w, uint32_t id, fs_vec3 point, fs_vec3 J, fs_error *err) {
    fs_status st;
    fs_body *b = dynamic_body(w, id, "impulse", point, J, &st, err);
    if (!b) return st;
    if (len(J) * b->inv_mass > FS_BODY_MAX_SPEED_CHANGE) {
        SETERR(err, "impulse: %g N s would change body %u's speed by more than %g m/s", len(J), id,
               FS_BODY_MAX_SPEED_CHANGE);
        return FS_ERR_RANGE;
    }
    /* The velocity reported (vel_eff, the one it last moved with) changes by
     * what the impulse adds, not to vel: the fluid's reaction since the move
     * is in vel already and would otherwise show up as part of the kick. */
    fs_vec3 before = b->vel;
    apply_impulse(b, point, J);
    b->vel_eff = add(b->vel_eff, sub(b->vel, before));
    return FS_OK;
}

fs_status fs_world_body_grab(fs_world *w, uint32_t id, fs_vec3 point, fs_vec3 target, fs_error *err) {
    fs_status st;
    fs_body *b = dynamic_body(w, id, "grab", point, target, &st, err);
    if (!b) return st;
    b->grab = true;
    b->grab_local = qrot_inv(b->rot, sub(point, b->pos));
    b->grab_target = target;
    return FS_OK;
}

fs_status fs_world_body_drag(fs_world *w, uint32_t id, fs_vec3 target, fs_error *err) {
    fs_body *b = find(w, id);
    if (!b || !b->grab) {
        SETERR(err, "body %u is not grabbed", id);
        return FS_ERR_UNKNOWN;
    }
    if (!finite3(target)) {
        SETERR(err, "drag: target must be finite");
        return FS_ERR_ARG;
    }
    b->grab_target = target;
    return FS_OK;
}

fs_status fs_world_body_release(fs_world *w, uint32_t id, fs_error *err) {
    fs_body *b = find(w, id);
    if (!b) {
        SETERR(err, "body %u does not exist", id);
        return FS_ERR_UNKNOWN;
    }
    b->grab = false;
    return FS_OK;
}

/* ---- snapshot checks ---------------------------------------------------------- */
static bool within(v3 v, float lim) {
    return finite3(v) && len(v) <= lim;
}
static bool inside(v3 p, const fs_domain *d) {
    return p.x >= d->box_min.x && p.x <= d->box_max.x && p.y >= d->box_min.y && p.y <= d->box_max.y &&
           p.z >= d->box_min.z && p.z <= d->box_max.z;
}
static float qlen(fs_quat q) {
    return sqrtf(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
}
static bool unit(fs_quat q) {
    return fabsf(qlen(q) - 1.0f) < 1e-3f;
}

fs_status fs__bodies_check(fs_body *bodies, int nb, uint32_t next_id, const fs_domain *dom, const void *contacts,
                           int nc, bool meshes, fs_error *err) {
    for (int k = 0; k < nb; k++) {
        fs_body *b = &bodies[k];
        const bool mesh = b->shape == FS_SHAPE_MESH;
        const char *why = NULL;
        char range[80];
        if (mesh && !meshes)
            why = "a mesh body (snapshots before version 4 do not carry its mesh)";
        else if ((int)b->shape < 0 || b->shape > FS_SHAPE_MESH)
            why = "shape is not sphere, box, capsule or mesh";
        else if (b->id >= next_id || (k > 0 && b->id <= bodies[k - 1].id))
            why = "id out of order or not below the next id";
        else if (!mesh && (!finite3(b->size) || !size_within(b->shape, b->size) ||
                           (b->shape == FS_SHAPE_SPHERE && (b->size.y != b->size.x || b->size.z != b->size.x)) ||
                           (b->shape == FS_SHAPE_CAPSULE && b->size.z != b->size.x))) {
            snprintf(range, sizeof range, "size outside %g..%g m (or not the shape's)", FS_BODY_MIN_SIZE,
                     FS_BODY_MAX_HALF_EXTENT);
            why = range;
        } else if (!density_within(b->density)) {
            snprintf(range, sizeof range, "density outside %g..%g kg/m^3", FS_BODY_MIN_DENSITY, FS_BODY_MAX_DENSITY);
            why = range;
        } else if (!friction_within(b->friction)) {
            snprintf(range, sizeof range, "friction outside 0..%g", FS_BODY_MAX_FRICTION);
            why = range;
        } else if (!inside(b->pos, dom) || !within(b->pos0, 2 * FS_DOMAIN_MAX_COORD))
            why = "centre outside the box";
        else if (!unit(b->rot) || !(qlen(b->rot0) <= 1.001f)) /* rot0: the step's scratch (zero until it runs) */
            why = "orientation is not a unit quaternion";
        else if (!within(b->vel, FS_BODY_MAX_SPEED) || !within(b->vel_eff, FS_BODY_MAX_SPEED) ||
                 !within(b->ang, FS_BODY_MAX_SPIN))
            why = "velocity above the bounds";
        else if (!finite3(b->acc_J) || !finite3(b->acc_T) || !within(b->grab_local, 100.0f) || !finite3(b->grab_target))
            why = "a non-finite impulse or grab point";
        if (why) {
            SETERR(err, "snapshot: body %d (id %u): %s", k, b->id, why);
            return FS_ERR_ARG;
        }
        /* derived from shape, size, density: recomputed, not trusted (a
         * mesh body's from its mesh, when it is adopted: body_mesh.c) */
        b->mesh_slot = 0;
        if (mesh) continue;
        fs__body_set_mass(NULL, b);
        b->bound = fs__body_bound_radius(NULL, b);
    }
    return fs__contacts_check(contacts, nc, nb, err);
}
