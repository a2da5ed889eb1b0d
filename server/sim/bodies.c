/* bodies.c - rigid bodies coupled both ways with the fluid: Clavet et al.
 * 2005, Sec. 6 and Algorithm 6, with stickiness (Eq. 12).
 *
 * A body is a sphere, a box or a capsule with a density (so a mass and an
 * inertia tensor), a pose (position, unit quaternion) and a velocity.
 * Collision of particles with a body uses the shape's analytic signed
 * distance.  Body-body and body-wall contacts use sample spheres on each
 * shape against the other's signed distance (the point-against-distance
 * scheme of Guendelman et al. 2003, which the paper's rigid-body solver
 * follows), resolved by sequential impulses with accumulated, clamped
 * normal and Coulomb friction impulses, warm-started from the previous step,
 * and a Baumgarte bias for penetration beyond a slop.
 *
 * The three steps of Algorithm 6 run inside resolveCollisions (Alg. 1 line
 * 17), after the relaxation:
 *   1. each body: save the pose, advance it with (V, w); collision impulses of
 *      the particles inside it are accumulated into force and torque;
 *   2. each body: V, w change by them; advance again from the saved pose;
 *      contacts between bodies and with the walls are resolved;
 *   3. each particle inside a body: the impulse of Eq. 9-11 (plus Eq. 12)
 *      with the body at infinite mass, then extraction if still inside.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bodies.h"
#include "world_internal.h"
#include "sim_util.h"

/* ---- small vector algebra -------------------------------------------------- */
typedef fs_vec3 v3;
static inline v3 add(v3 a, v3 b) {
    return (v3){a.x + b.x, a.y + b.y, a.z + b.z};
}
static inline v3 sub(v3 a, v3 b) {
    return (v3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline v3 mul(v3 a, float s) {
    return (v3){a.x * s, a.y * s, a.z * s};
}
static inline float dot(v3 a, v3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline v3 cross(v3 a, v3 b) {
    return (v3){a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x};
}
static inline float len(v3 a) {
    return sqrtf(dot(a, a));
}
static inline v3 norm(v3 a) {
    float l = len(a);
    return l > 1e-12f ? mul(a, 1.0f / l) : (v3){0, 1, 0};
}

static inline v3 qrot(fs_quat q, v3 v) { /* q v q* */
    v3 u = {q.x, q.y, q.z};
    v3 t = mul(cross(u, v), 2.0f);
    return add(add(v, mul(t, q.w)), cross(u, t));
}
static inline v3 qrot_inv(fs_quat q, v3 v) {
    return qrot((fs_quat){q.w, -q.x, -q.y, -q.z}, v);
}
static inline fs_quat qnorm(fs_quat q) {
    float l = sqrtf(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
    if (!(l > 1e-12f)) return (fs_quat){1, 0, 0, 0};
    return (fs_quat){q.w / l, q.x / l, q.y / l, q.z / l};
}
/* q advanced by angular velocity w over dt */
static inline fs_quat qintegrate(fs_quat q, v3 w, float dt) {
    fs_quat d = {0, w.x, w.y, w.z};
    fs_quat r = {-d.x * q.x - d.y * q.y - d.z * q.z, d.w * q.x + d.x * q.w + d.y * q.z - d.z * q.y,
                 d.w * q.y - d.x * q.z + d.y * q.w + d.z * q.x, d.w * q.z + d.x * q.y - d.y * q.x + d.z * q.w};
    float h = 0.5f * dt;
    return qnorm((fs_quat){q.w + h * r.w, q.x + h * r.x, q.y + h * r.y, q.z + h * r.z});
}

/* world inverse inertia applied to a vector: R diag(inv) R^T v */
static inline v3 inv_inertia_mul(const fs_body *b, v3 v) {
    v3 l = qrot_inv(b->rot, v);
    l = (v3){l.x * b->inv_inertia.x, l.y * b->inv_inertia.y, l.z * b->inv_inertia.z};
    return qrot(b->rot, l);
}

/* ---- shapes: signed distance in the body frame ---------------------------- */
/* Distance from local point p to the surface (negative inside) and the
 * outward unit normal (local). */
static float sdf_local(const fs_body *b, v3 p, v3 *n) {
    switch (b->shape) {
    case FS_SHAPE_SPHERE: {
        float l = len(p);
        *n = l > 1e-9f ? mul(p, 1.0f / l) : (v3){0, 1, 0};
        return l - b->size.x;
    }
    case FS_SHAPE_CAPSULE: {
        float hl = b->size.y, y = p.y < -hl ? -hl : (p.y > hl ? hl : p.y);
        v3 d = {p.x, p.y - y, p.z};
        float l = len(d);
        *n = l > 1e-9f ? mul(d, 1.0f / l) : (v3){1, 0, 0};
        return l - b->size.x;
    }
    case FS_SHAPE_BOX:
    default: {
        v3 h = b->size;
        v3 q = {fabsf(p.x) - h.x, fabsf(p.y) - h.y, fabsf(p.z) - h.z};
        v3 o = {q.x > 0 ? q.x : 0, q.y > 0 ? q.y : 0, q.z > 0 ? q.z : 0};
        float out = len(o);
        if (out > 0) {
            *n = (v3){p.x < 0 ? -o.x / out : o.x / out, p.y < 0 ? -o.y / out : o.y / out,
                      p.z < 0 ? -o.z / out : o.z / out};
            return out;
        }
        /* inside: the nearest face */
        if (q.x >= q.y && q.x >= q.z) {
            *n = (v3){p.x < 0 ? -1.0f : 1.0f, 0, 0};
            return q.x;
        }
        if (q.y >= q.z) {
            *n = (v3){0, p.y < 0 ? -1.0f : 1.0f, 0};
            return q.y;
        }
        *n = (v3){0, 0, p.z < 0 ? -1.0f : 1.0f};
        return q.z;
    }
    }
}

/* World-space signed distance and normal at the body's current pose. */
static inline float sdf_world(const fs_body *b, v3 x, v3 *n) {
    v3 nl;
    float d = sdf_local(b, qrot_inv(b->rot, sub(x, b->pos)), &nl);
    *n = qrot(b->rot, nl);
    return d;
}

/* Bounding radius about the centre. */
static float bound_radius(const fs_body *b) {
    switch (b->shape) {
    case FS_SHAPE_SPHERE:
        return b->size.x;
    case FS_SHAPE_CAPSULE:
        return b->size.x + b->size.y;
    default:
        return len(b->size);
    }
}

/* Half extents of the body's world-axis-aligned bounding box. */
static v3 half_extent(const fs_body *b) {
    v3 ax = qrot(b->rot, (v3){1, 0, 0}), ay = qrot(b->rot, (v3){0, 1, 0}), az = qrot(b->rot, (v3){0, 0, 1});
    switch (b->shape) {
    case FS_SHAPE_SPHERE:
        return (v3){b->size.x, b->size.x, b->size.x};
    case FS_SHAPE_CAPSULE: {
        float r = b->size.x, hl = b->size.y;
        return (v3){fabsf(ay.x) * hl + r, fabsf(ay.y) * hl + r, fabsf(ay.z) * hl + r};
    }
    default: {
        v3 h = b->size;
        return (v3){fabsf(ax.x) * h.x + fabsf(ay.x) * h.y + fabsf(az.x) * h.z,
                    fabsf(ax.y) * h.x + fabsf(ay.y) * h.y + fabsf(az.y) * h.z,
                    fabsf(ax.z) * h.x + fabsf(ay.z) * h.y + fabsf(az.z) * h.z};
    }
    }
}

/* Sample spheres (local centre, radius) on the shape for body contacts:
 * box corners, edge midpoints and face centres; capsule axis points;
 * a sphere's centre. */
static int samples(const fs_body *b, v3 *c, float *r) {
    int k = 0;
    if (b->shape == FS_SHAPE_SPHERE) {
        c[0] = (v3){0, 0, 0}, r[0] = b->size.x;
        return 1;
    }
    if (b->shape == FS_SHAPE_CAPSULE) {
        for (int i = -2; i <= 2; i++) c[k] = (v3){0, b->size.y * (float)i / 2.0f, 0}, r[k] = b->size.x, k++;
        return k;
    }
    v3 h = b->size;
    for (int ix = -1; ix <= 1; ix++)
        for (int iy = -1; iy <= 1; iy++)
            for (int iz = -1; iz <= 1; iz++) {
                int nz = (ix != 0) + (iy != 0) + (iz != 0);
                if (nz == 0) continue; /* centre */
                /* 1% inside the faces they lie on, so that stacked boxes'
                 * corners do not sit exactly on each other's edges, where the
                 * distance gradient is ambiguous */
                c[k] = (v3){0.99f * h.x * (float)ix, 0.99f * h.y * (float)iy, 0.99f * h.z * (float)iz}, r[k] = 0.0f,
                k++;
            }
    return k; /* 8 corners + 12 edges + 6 faces */
}
#define MAX_SAMPLES 26

/* ---- public API -------------------------------------------------------------- */
fs_body_def fs_default_body_def(void) {
    fs_body_def d;
    memset(&d, 0, sizeof d);
    d.shape = FS_SHAPE_BOX;
    d.size = (fs_vec3){0.2f, 0.2f, 0.2f};
    d.density = 500.0f;
    d.rot = (fs_quat){1, 0, 0, 0};
    d.friction = 0.5f;
    return d;
}

static fs_body *find(fs_world *w, uint32_t id) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) return &w->bodies[i];
    return NULL;
}

static bool finite3(v3 v) {
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

static void set_mass(fs_body *b) {
    float rho = b->density;
    v3 s = b->size;
    float m, ix, iy, iz;
    switch (b->shape) {
    case FS_SHAPE_SPHERE:
        m = rho * 4.18879f * s.x * s.x * s.x;
        ix = iy = iz = 0.4f * m * s.x * s.x;
        break;
    case FS_SHAPE_CAPSULE: {
        float r = s.x, hl = s.y;
        float mc = rho * 3.14159265f * r * r * 2.0f * hl, ms = rho * 4.18879f * r * r * r;
        m = mc + ms;
        iy = mc * r * r * 0.5f + ms * 0.4f * r * r;
        ix = iz = mc * (hl * hl / 3.0f + r * r / 4.0f) + ms * (0.4f * r * r + hl * hl + 0.75f * hl * r);
        break;
    }
    default:
        m = rho * 8.0f * s.x * s.y * s.z;
        ix = m / 3.0f * (s.y * s.y + s.z * s.z);
        iy = m / 3.0f * (s.x * s.x + s.z * s.z);
        iz = m / 3.0f * (s.x * s.x + s.y * s.y);
    }
    b->mass = m;
    if (b->is_static) {
        b->inv_mass = 0, b->inv_inertia = (v3){0, 0, 0};
    } else {
        b->inv_mass = 1.0f / m, b->inv_inertia = (v3){1.0f / ix, 1.0f / iy, 1.0f / iz};
    }
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
    if ((int)d->shape < 0 || d->shape > FS_SHAPE_CAPSULE) {
        SETERR(err, "body: unknown shape %d", (int)d->shape);
        return -1;
    }
    if (!finite3(d->size) || !finite3(d->pos) || !finite3(d->vel) || !finite3(d->ang_vel) || !isfinite(d->density) ||
        !isfinite(d->friction) || !isfinite(d->rot.w) || !isfinite(d->rot.x) || !isfinite(d->rot.y) ||
        !isfinite(d->rot.z)) {
        SETERR(err, "body: every number must be finite");
        return -1;
    }
    float smin = d->shape == FS_SHAPE_BOX ? fminf(d->size.x, fminf(d->size.y, d->size.z)) : d->size.x;
    if (smin < 0.01f || d->size.x > 5 || d->size.y > 5 || d->size.z > 5 ||
        (d->shape == FS_SHAPE_CAPSULE && d->size.y < 0)) {
        SETERR(err, "body: sizes must be within 0.01..5 m");
        return -1;
    }
    if (d->density < 10.0f || d->density > 20000.0f) {
        SETERR(err, "body: density %g outside 10..20000 kg/m^3", d->density);
        return -1;
    }
    if (d->friction < 0 || d->friction > 2) {
        SETERR(err, "body: friction %g outside 0..2", d->friction);
        return -1;
    }
    if (len(d->vel) > 100 || len(d->ang_vel) > 100) {
        SETERR(err, "body: speed above 100 m/s or 100 rad/s");
        return -1;
    }
    fs_body b;
    memset(&b, 0, sizeof b);
    b.id = w->next_body_id++;
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
    set_mass(&b);
    /* keep the body inside the box: its axis-aligned extent, at most half the box */
    v3 ext = half_extent(&b);
    v3 lo = w->dom.box_min, hi = w->dom.box_max;
    float ex = fminf(ext.x, 0.5f * (hi.x - lo.x)), ey = fminf(ext.y, 0.5f * (hi.y - lo.y)),
          ez = fminf(ext.z, 0.5f * (hi.z - lo.z));
    b.pos = d->pos;
    b.pos.x = fminf(fmaxf(b.pos.x, lo.x + ex), hi.x - ex);
    b.pos.y = fminf(fmaxf(b.pos.y, lo.y + ey), hi.y - ey);
    b.pos.z = fminf(fmaxf(b.pos.z, lo.z + ez), hi.z - ez);
    w->bodies[w->nbodies++] = b;
    return (int64_t)b.id;
}

bool fs_world_destroy_body(fs_world *w, uint32_t id) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) {
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

static void state_of(const fs_body *b, fs_body_state *o) {
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
    state_of(&w->bodies[index], out);
    return true;
}

bool fs_world_body_get(const fs_world *w, uint32_t id, fs_body_state *out) {
    for (int i = 0; i < w->nbodies; i++)
        if (w->bodies[i].id == id) {
            state_of(&w->bodies[i], out);
            return true;
        }
    return false;
}

static void apply_impulse(fs_body *b, v3 point, v3 J) {
    if (b->is_static) return;
    b->vel = add(b->vel, mul(J, b->inv_mass));
    b->ang = add(b->ang, inv_inertia_mul(b, cross(sub(point, b->pos), J)));
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
    /* at most a 50 m/s change of the centre's speed */
    if (len(J) * b->inv_mass > 50.0f) {
        SETERR(err, "impulse: %g N s would change body %u's speed by more than 50 m/s", len(J), id);
        return FS_ERR_RANGE;
    }
    apply_impulse(b, point, J);
    b->vel_eff = b->vel;
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

/* ---- particles against bodies ----------------------------------------------- */
/* Eq. 9-11 (and Eq. 12): the impulse I that the particle at x with velocity
 * v receives from body b, as a velocity change: v += dv.  Returns false when
 * the particle is out of reach. */
static bool particle_impulse(const fs_body *b, v3 x, v3 v, float R, float mu, float stick_d, float stick_k, float dt,
                             v3 *dv, float *depth, v3 *normal) {
    v3 n;
    float d = sdf_world(b, x, &n) - R; /* distance of the particle's surface */
    if (d >= stick_d) return false;
    v3 vp = add(b->vel, cross(b->ang, sub(x, b->pos))); /* body velocity at x */
    v3 rel = sub(v, vp);
    float vn = dot(rel, n);
    v3 out = {0, 0, 0};
    if (d < 0 && vn < 0) {
        /* Eq. 9-11: cancel the approaching normal velocity, remove mu of the
         * tangential velocity */
        v3 vt = sub(rel, mul(n, vn));
        out = sub(out, add(mul(n, vn), mul(vt, mu)));
    }
    if (d > 0 && stick_k > 0) {
        /* Eq. 12: attraction towards the body, largest at stick_d / 2 */
        out = sub(out, mul(n, dt * stick_k * d * (1.0f - d / stick_d)));
    }
    *dv = out;
    *depth = d;
    *normal = n;
    return true;
}

typedef struct body_ctx {
    fs_world *w;
    float dt, R;
    const float *stick_d, *stick_k, *mu, *mass;
} body_ctx;

/* The grid cells (as x-runs) that the body's bounding sphere, grown by
 * `more`, overlaps. */
typedef struct cell_box {
    int x0, x1, y0, y1, z0, z1;
} cell_box;

static inline int clampi(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The body's reach may lie partly or wholly outside the box (step 1 tests
 * the advanced pose): both ends of each range are clamped into the grid, so
 * an empty or outside range scans nothing or only the nearest cells. */
static cell_box cells_near(const fs_world *w, const fs_body *b, float more) {
    float reach = b->bound + more;
    const v3 o = w->dom.box_min;
    float f[6] = {(b->pos.x - reach - o.x) * w->inv_cs, (b->pos.x + reach - o.x) * w->inv_cs,
                  (b->pos.y - reach - o.y) * w->inv_cs, (b->pos.y + reach - o.y) * w->inv_cs,
                  (b->pos.z - reach - o.z) * w->inv_cs, (b->pos.z + reach - o.z) * w->inv_cs};
    const int g[3] = {w->gx, w->gy, w->gz};
    int c[6];
    for (int k = 0; k < 6; k++) {
        float v = isfinite(f[k]) ? fminf(fmaxf(f[k], -1.0f), (float)g[k / 2]) : -1.0f; /* no int overflow */
        c[k] = clampi((int)floorf(v), 0, g[k / 2] - 1);
    }
    cell_box cb = {c[0], c[1], c[2], c[3], c[4], c[5]};
    return cb;
}

/* The particles within reach of body b, in index order (deterministic), each
 * against b with Eq. 9-12.  Returns the momentum the body receives (the
 * opposite of the particles') and its torque about the body's centre.
 * apply = false: Alg. 6 lines 5-7, the impulses are only summed (step 1, at
 * the advanced pose).  apply = true: lines 12-15, the body at infinite mass,
 * each particle is moved by its impulse and then extracted if still inside;
 * the torque is taken at the moved position. */
static void body_particles(body_ctx *c, const fs_body *b, bool apply, v3 *J_out, v3 *T_out, uint64_t *extracted) {
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    cell_box cb = cells_near(w, b, c->R + w->stick_max);
    v3 J = {0, 0, 0}, T = {0, 0, 0};
    for (int z = cb.z0; z <= cb.z1; z++)
        for (int y = cb.y0; y <= cb.y1; y++) {
            int base = (z * w->gy + y) * w->gx;
            for (int i = w->cell_start[base + cb.x0]; i < w->cell_start[base + cb.x1 + 1]; i++) {
                v3 x = {p->x[i], p->y[i], p->z[i]};
                v3 v = {(x.x - p->px[i]) / c->dt, (x.y - p->py[i]) / c->dt, (x.z - p->pz[i]) / c->dt};
                int m = p->mat[i];
                v3 dv, n;
                float d;
                if (!particle_impulse(b, x, v, c->R, c->mu[m], c->stick_d[m], c->stick_k[m], c->dt, &dv, &d, &n))
                    continue;
                v3 Ji = mul(dv, -c->mass[m]); /* opposite of the particle's momentum change */
                J = add(J, Ji);
                if (!apply) {
                    T = add(T, cross(sub(x, b->pos), Ji));
                    continue;
                }
                v3 x1 = add(x, mul(dv, c->dt)); /* x -= I dt (line 14) */
                T = add(T, cross(sub(x1, b->pos), Ji));
                float d2 = sdf_world(b, x1, &n) - c->R;
                if (d2 < 0) {
                    /* line 15: extract what is still inside.  A move of
                     * position only (the previous position moves with it):
                     * a particle found deep inside, e.g. under a body just
                     * created on it, is put outside without being fired out
                     * at (depth / dt). */
                    v3 e = mul(n, -d2);
                    x1 = add(x1, e);
                    p->px[i] += e.x, p->py[i] += e.y, p->pz[i] += e.z;
                    (*extracted)++;
                }
                p->x[i] = x1.x, p->y[i] = x1.y, p->z[i] = x1.z;
            }
        }
    *J_out = J, *T_out = T;
}

/* Step 1 (Alg. 6 lines 5-7), one body per task item. */
static void accumulate_task(int bb, int be, int worker, void *vctx) {
    (void)worker;
    body_ctx *c = vctx;
    for (int k = bb; k < be; k++) {
        fs_body *b = &c->w->bodies[k];
        b->acc_J = (v3){0, 0, 0}, b->acc_T = (v3){0, 0, 0};
        if (!b->is_static) body_particles(c, b, false, &b->acc_J, &b->acc_T, NULL);
    }
}

/* Step 3 (lines 12-15), bodies in index order.  The momentum the particles
 * gain here is what the body must lose; step 1 gave the body an estimate of
 * it (at the tentative pose), so the difference is returned to the body's
 * velocity now, and fluid plus bodies conserve momentum exactly (an
 * addition to the paper, which leaves the two steps' impulses unequal). */
static void particles_against_bodies(body_ctx *c) {
    fs_world *w = c->w;
    uint64_t extracted = 0;
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        v3 J, T;
        body_particles(c, b, true, &J, &T, &extracted);
        if (!b->is_static) {
            b->vel = add(b->vel, mul(sub(J, b->acc_J), b->inv_mass));
            b->ang = add(b->ang, inv_inertia_mul(b, sub(T, b->acc_T)));
        }
    }
    w->st.body_extractions += extracted;
}

/* ---- body contacts ------------------------------------------------------------- */
typedef struct contact {
    int a, b;     /* body indices; b = -1 - wall for a wall */
    uint32_t key; /* identifies the feature for warm starting */
    v3 p, n;      /* world point, normal from b towards a */
    float depth;  /* penetration (> 0) */
    v3 ra, rb;
    float mn, mt1, mt2, bias;
    v3 t1, t2;
    float jn, jt1, jt2;
} contact;

static float eff_mass(const fs_body *a, const fs_body *b, v3 ra, v3 rb, v3 n) {
    float k = a->inv_mass + dot(cross(inv_inertia_mul(a, cross(ra, n)), ra), n);
    if (b) k += b->inv_mass + dot(cross(inv_inertia_mul(b, cross(rb, n)), rb), n);
    return k > 0 ? 1.0f / k : 0.0f;
}

static void add_contact(fs_world *w, int a, int b, uint32_t key, v3 p, v3 n, float depth) {
    if (w->ncontacts >= FS_MAX_CONTACTS) return;
    contact *c = (contact *)w->contacts + w->ncontacts++;
    memset(c, 0, sizeof *c);
    c->a = a, c->b = b, c->key = key, c->p = p, c->n = n, c->depth = depth;
}

#define CONTACT_MARGIN 0.01f

static void find_contacts(fs_world *w) {
    w->ncontacts = 0;
    v3 sc[MAX_SAMPLES];
    float sr[MAX_SAMPLES];
    const v3 lo = w->dom.box_min, hi = w->dom.box_max;
    for (int a = 0; a < w->nbodies; a++) {
        fs_body *A = &w->bodies[a];
        if (A->is_static) continue;
        int ns = samples(A, sc, sr);
        /* walls: each sample sphere against the six faces */
        for (int s = 0; s < ns; s++) {
            v3 p = add(A->pos, qrot(A->rot, sc[s]));
            const float pl[6] = {p.x - lo.x, hi.x - p.x, p.y - lo.y, hi.y - p.y, p.z - lo.z, hi.z - p.z};
            const v3 nn[6] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
            for (int f = 0; f < 6; f++) {
                float d = pl[f] - sr[s];
                if (d < CONTACT_MARGIN)
                    add_contact(w, a, -1 - f, (uint32_t)(s * 8 + f), sub(p, mul(nn[f], sr[s])), nn[f], -d);
            }
        }
        /* other bodies: A's samples against B's distance, both ways round */
        for (int b = 0; b < w->nbodies; b++) {
            if (b == a) continue;
            fs_body *B = &w->bodies[b];
            if (len(sub(A->pos, B->pos)) > A->bound + B->bound + CONTACT_MARGIN) continue;
            if (!B->is_static && b < a) continue; /* a pair of dynamic bodies once */
            for (int pass = 0; pass < 2; pass++) {
                /* pass 0: A's samples in B; pass 1: B's samples in A (normal flipped) */
                fs_body *S = pass ? B : A, *D = pass ? A : B;
                int m = samples(S, sc, sr);
                for (int s = 0; s < m; s++) {
                    v3 p = add(S->pos, qrot(S->rot, sc[s])), n;
                    float d = sdf_world(D, p, &n) - sr[s];
                    if (d >= CONTACT_MARGIN) continue;
                    /* normal from D towards S; contact point on S's surface */
                    v3 cp = sub(p, mul(n, sr[s]));
                    if (pass == 0)
                        add_contact(w, a, b, (uint32_t)(1000 + s), cp, n, -d);
                    else
                        add_contact(w, a, b, (uint32_t)(2000 + s), cp, mul(n, -1.0f), -d);
                }
            }
        }
    }
}

static void prepare_contacts(fs_world *w, float dt) {
    contact *cs = (contact *)w->contacts;
    contact *prev = (contact *)w->contacts_prev;
    for (int k = 0; k < w->ncontacts; k++) {
        contact *c = &cs[k];
        fs_body *A = &w->bodies[c->a], *B = c->b >= 0 ? &w->bodies[c->b] : NULL;
        c->ra = sub(c->p, A->pos);
        c->rb = B ? sub(c->p, B->pos) : (v3){0, 0, 0};
        c->t1 = norm(fabsf(c->n.x) < 0.9f ? cross(c->n, (v3){1, 0, 0}) : cross(c->n, (v3){0, 1, 0}));
        c->t2 = cross(c->n, c->t1);
        c->mn = eff_mass(A, B, c->ra, c->rb, c->n);
        c->mt1 = eff_mass(A, B, c->ra, c->rb, c->t1);
        c->mt2 = eff_mass(A, B, c->ra, c->rb, c->t2);
        /* Baumgarte: push out 20% of the penetration beyond a 5 mm slop per step */
        float pen = c->depth - 0.005f;
        c->bias = pen > 0 ? 0.2f * pen / dt : 0.0f;
        if (c->bias > 2.0f) c->bias = 2.0f;
        /* warm start from the same feature last step */
        for (int q = 0; q < w->ncontacts_prev; q++) {
            if (prev[q].a == c->a && prev[q].b == c->b && prev[q].key == c->key) {
                c->jn = prev[q].jn, c->jt1 = prev[q].jt1, c->jt2 = prev[q].jt2;
                v3 J = add(mul(c->n, c->jn), add(mul(c->t1, c->jt1), mul(c->t2, c->jt2)));
                apply_impulse(A, c->p, J);
                if (B) apply_impulse(B, c->p, mul(J, -1.0f));
                break;
            }
        }
    }
}

static v3 rel_vel(const fs_body *A, const fs_body *B, const contact *c) {
    v3 va = add(A->vel, cross(A->ang, c->ra));
    v3 vb = B ? add(B->vel, cross(B->ang, c->rb)) : (v3){0, 0, 0};
    return sub(va, vb);
}

static void solve_contacts(fs_world *w, int iterations) {
    contact *cs = (contact *)w->contacts;
    for (int it = 0; it < iterations; it++) {
        for (int k = 0; k < w->ncontacts; k++) {
            contact *c = &cs[k];
            fs_body *A = &w->bodies[c->a], *B = c->b >= 0 ? &w->bodies[c->b] : NULL;
            float mu = B ? sqrtf(A->friction * B->friction) : A->friction;
            /* friction first, limited by the current normal impulse */
            v3 dv = rel_vel(A, B, c);
            float lim = mu * c->jn;
            float j1 = -dot(dv, c->t1) * c->mt1, o1 = c->jt1;
            c->jt1 = fmaxf(-lim, fminf(lim, o1 + j1));
            float j2 = -dot(dv, c->t2) * c->mt2, o2 = c->jt2;
            c->jt2 = fmaxf(-lim, fminf(lim, o2 + j2));
            v3 Jt = add(mul(c->t1, c->jt1 - o1), mul(c->t2, c->jt2 - o2));
            apply_impulse(A, c->p, Jt);
            if (B) apply_impulse(B, c->p, mul(Jt, -1.0f));
            /* normal: non-penetration with the Baumgarte bias, accumulated >= 0 */
            dv = rel_vel(A, B, c);
            float jn = (-dot(dv, c->n) + c->bias) * c->mn, on = c->jn;
            c->jn = fmaxf(0.0f, on + jn);
            v3 Jn = mul(c->n, c->jn - on);
            apply_impulse(A, c->p, Jn);
            if (B) apply_impulse(B, c->p, mul(Jn, -1.0f));
        }
    }
    /* keep this step's impulses for the next warm start */
    memcpy(w->contacts_prev, w->contacts, sizeof(contact) * (size_t)w->ncontacts);
    w->ncontacts_prev = w->ncontacts;
}

size_t fs__contact_size(void) {
    return sizeof(contact);
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
                           int nc, fs_error *err) {
    for (int k = 0; k < nb; k++) {
        fs_body *b = &bodies[k];
        const char *why = NULL;
        float smin = b->shape == FS_SHAPE_BOX ? fminf(b->size.x, fminf(b->size.y, b->size.z)) : b->size.x;
        if ((int)b->shape < 0 || b->shape > FS_SHAPE_CAPSULE)
            why = "shape is not sphere, box or capsule";
        else if (b->id >= next_id || (k > 0 && b->id <= bodies[k - 1].id))
            why = "id out of order or not below the next id";
        else if (!finite3(b->size) || !(smin >= 0.01f) || b->size.x > 5 || b->size.y > 5 || b->size.z > 5 ||
                 (b->shape == FS_SHAPE_CAPSULE && b->size.y < 0) ||
                 (b->shape == FS_SHAPE_SPHERE && (b->size.y != b->size.x || b->size.z != b->size.x)) ||
                 (b->shape == FS_SHAPE_CAPSULE && b->size.z != b->size.x))
            why = "size outside 0.01..5 m (or not the shape's)";
        else if (!(b->density >= 10.0f && b->density <= 20000.0f))
            why = "density outside 10..20000 kg/m^3";
        else if (!(b->friction >= 0 && b->friction <= 2))
            why = "friction outside 0..2";
        else if (!inside(b->pos, dom) || !within(b->pos0, 2 * FS_DOMAIN_MAX_COORD))
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
        /* derived from shape, size, density: recomputed, not trusted */
        set_mass(b);
        b->bound = bound_radius(b);
    }
    const contact *cs = contacts;
    for (int k = 0; k < nc; k++) {
        contact c;
        memcpy(&c, cs + k, sizeof c);
        bool ok = c.a >= 0 && c.a < nb && c.b >= -6 && c.b < nb && c.b != c.a;
        const float f[] = {c.p.x,  c.p.y,  c.p.z,  c.n.x,  c.n.y,  c.n.z, c.depth, c.ra.x, c.ra.y,
                           c.ra.z, c.rb.x, c.rb.y, c.rb.z, c.mn,   c.mt1, c.mt2,   c.bias, c.t1.x,
                           c.t1.y, c.t1.z, c.t2.x, c.t2.y, c.t2.z, c.jn,  c.jt1,   c.jt2};
        for (size_t q = 0; q < sizeof f / sizeof f[0] && ok; q++) ok = isfinite(f[q]) && fabsf(f[q]) <= 1e12f;
        if (!ok || c.jn < 0) {
            SETERR(err, "snapshot: contact %d names bodies %d, %d of %d or has a bad impulse", k, c.a, c.b, nb);
            return FS_ERR_ARG;
        }
    }
    return FS_OK;
}

/* A safety rail like the particles': at most 100 m/s and 200 rad/s (a
 * snapshot accepts ten times these). */
static void rail(fs_body *b) {
    float sp = len(b->vel);
    if (!(sp < 100.0f)) b->vel = isfinite(sp) ? mul(b->vel, 100.0f / sp) : (v3){0, 0, 0};
    float wsp = len(b->ang);
    if (!(wsp < 200.0f)) b->ang = isfinite(wsp) ? mul(b->ang, 200.0f / wsp) : (v3){0, 0, 0};
}

/* ---- Algorithm 6 ------------------------------------------------------------------ */
void fs__bodies_step(fs_world *w, float dt, float R, const float *mu, const float *stick_d, const float *stick_k,
                     const float *mass, void (*run)(fs_world *, fs_task_fn *, void *, int)) {
    if (w->nbodies == 0) return;
    body_ctx c = {w, dt, R, stick_d, stick_k, mu, mass};
    float smax = 0;
    for (int m = 0; m < w->nmat; m++) smax = fmaxf(smax, stick_d[m]);
    w->stick_max = smax;
    const v3 g = w->dom.gravity;
    /* step 1: save the pose, apply gravity and the grab spring, advance */
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        b->bound = bound_radius(b);
        b->pos0 = b->pos, b->rot0 = b->rot;
        if (b->is_static) continue;
        b->vel = add(b->vel, mul(g, dt));
        if (b->grab) {
            /* a critically damped spring-damper at 3 Hz pulls the grab point
             * towards the target; the body still collides on the way */
            v3 anchor = add(b->pos, qrot(b->rot, b->grab_local));
            v3 va = add(b->vel, cross(b->ang, sub(anchor, b->pos)));
            float om = 2.0f * 3.14159265f * 3.0f;
            v3 F = sub(mul(sub(b->grab_target, anchor), b->mass * om * om), mul(va, 2.0f * b->mass * om));
            float fmax = b->mass * 100.0f; /* at most ~10 g */
            float fl = len(F);
            if (fl > fmax) F = mul(F, fmax / fl);
            apply_impulse(b, anchor, mul(F, dt));
            /* keep the grabbed body from spinning up */
            b->ang = mul(b->ang, 0.9f);
        }
        b->pos = add(b->pos, mul(b->vel, dt));
        b->rot = qintegrate(b->rot, b->ang, dt);
    }
    run(w, accumulate_task, &c, w->nbodies);
    /* step 2: velocities change by the fluid's impulses; advance again from the
     * saved pose after the contacts are resolved there */
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        b->pos = b->pos0, b->rot = b->rot0;
        if (b->is_static) continue;
        b->vel = add(b->vel, mul(b->acc_J, b->inv_mass));
        b->ang = add(b->ang, inv_inertia_mul(b, b->acc_T));
    }
    find_contacts(w);
    prepare_contacts(w, dt);
    solve_contacts(w, 12);
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        if (b->is_static) continue;
        rail(b);
        b->pos = add(b->pos, mul(b->vel, dt));
        b->rot = qintegrate(b->rot, b->ang, dt);
        b->vel_eff = b->vel;
        /* the centre never leaves the box (the wall contacts keep the rest in) */
        b->pos.x = fminf(fmaxf(b->pos.x, w->dom.box_min.x), w->dom.box_max.x);
        b->pos.y = fminf(fmaxf(b->pos.y, w->dom.box_min.y), w->dom.box_max.y);
        b->pos.z = fminf(fmaxf(b->pos.z, w->dom.box_min.z), w->dom.box_max.z);
    }
    /* step 3 */
    particles_against_bodies(&c);
    /* the rail again: step 3's impulses come after it, and a light body
     * could leave the step (and the snapshot's bounds) spinning at 1e7 rad/s */
    for (int k = 0; k < w->nbodies; k++)
        if (!w->bodies[k].is_static) rail(&w->bodies[k]);
}

/* Worst penetration of a particle into a body (m, >= 0): a diagnostic. */
float fs_world_body_penetration(const fs_world *w) {
    float worst = 0;
    const fs_particles *p = &w->p;
    for (int k = 0; k < w->nbodies; k++) {
        const fs_body *b = &w->bodies[k];
        for (int i = 0; i < w->n; i++) {
            v3 n;
            float d = sdf_world(b, (v3){p->x[i], p->y[i], p->z[i]}, &n) - w->dom.particle_radius;
            if (-d > worst) worst = -d;
        }
    }
    return worst;
}
