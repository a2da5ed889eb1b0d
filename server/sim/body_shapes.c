/* body_shapes.c - the rigid bodies' shapes (sphere, box, capsule, and a
 * mesh's, whose data body_mesh.c makes): the signed distance in the body
 * frame, bounding radius and box, the sample spheres body contacts test,
 * and mass and inertia from the density. */
#include "body_internal.h"

/* ---- shapes: signed distance in the body frame ---------------------------- */
/* Distance from local point p to the surface (negative inside) and the
 * outward unit normal (local). */
float fs__body_sdf_local(const fs_world *w, const fs_body *b, v3 p, v3 *n) {
    switch (b->shape) {
    case FS_SHAPE_MESH:
        return fs__mesh_body_sdf(fs__mesh_of(w, b), p, n);
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

/* Bounding radius about the centre. */
float fs__body_bound_radius(const fs_world *w, const fs_body *b) {
    switch (b->shape) {
    case FS_SHAPE_MESH:
        return fs__mesh_body_bound(fs__mesh_of(w, b));
    case FS_SHAPE_SPHERE:
        return b->size.x;
    case FS_SHAPE_CAPSULE:
        return b->size.x + b->size.y;
    default:
        return len(b->size);
    }
}

/* Half extents of the body's world-axis-aligned bounding box. */
v3 fs__body_half_extent(const fs_world *w, const fs_body *b) {
    v3 ax = qrot(b->rot, (v3){1, 0, 0}), ay = qrot(b->rot, (v3){0, 1, 0}), az = qrot(b->rot, (v3){0, 0, 1});
    switch (b->shape) {
    case FS_SHAPE_SPHERE:
        return (v3){b->size.x, b->size.x, b->size.x};
    case FS_SHAPE_CAPSULE: {
        float r = b->size.x, hl = b->size.y;
        return (v3){fabsf(ay.x) * hl + r, fabsf(ay.y) * hl + r, fabsf(ay.z) * hl + r};
    }
    default: { /* a box; a mesh: the box about its centre that holds it */
        v3 h = b->shape == FS_SHAPE_MESH ? fs__mesh_body_half(fs__mesh_of(w, b)) : b->size;
        return (v3){fabsf(ax.x) * h.x + fabsf(ay.x) * h.y + fabsf(az.x) * h.z,
                    fabsf(ax.y) * h.x + fabsf(ay.y) * h.y + fabsf(az.y) * h.z,
                    fabsf(ax.z) * h.x + fabsf(ay.z) * h.y + fabsf(az.z) * h.z};
    }
    }
}

/* Sample spheres (local centre, radius) on the shape for body contacts:
 * box corners, edge midpoints and face centres; capsule axis points;
 * a sphere's centre. */
int fs__body_samples(const fs_world *w, const fs_body *b, v3 *c, float *r) {
    int k = 0;
    if (b->shape == FS_SHAPE_MESH) return fs__mesh_body_samples(fs__mesh_of(w, b), c, r);
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

void fs__body_set_mass(const fs_world *w, fs_body *b) {
    float rho = b->density;
    v3 s = b->size;
    float m, ix, iy, iz;
    switch (b->shape) {
    case FS_SHAPE_MESH: { /* exact over its tetrahedra (body_mesh.c), principal axes */
        double vol;
        v3 mo;
        fs__mesh_body_unit_mass(fs__mesh_of(w, b), &vol, &mo);
        m = (float)(rho * vol);
        ix = rho * mo.x, iy = rho * mo.y, iz = rho * mo.z;
        break;
    }
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
