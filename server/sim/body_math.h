/* body_math.h - the small vector and quaternion algebra of the rigid
 * bodies' files (bodies.c, body_shapes.c, body_contacts.c, body_step.c):
 * sums, products, norms, rotation by a unit quaternion and its integration,
 * and a body's world inverse inertia.  Internal to server/sim. */
#ifndef FS_BODY_MATH_H
#define FS_BODY_MATH_H

#include <math.h>

#include "world_internal.h" /* fs_body */

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

static inline bool finite3(v3 v) {
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

#endif
