/* mesh.c - checking a triangle mesh (fs_mesh) before the core uses it: its
 * bounds, finite coordinates, indices, degenerate triangles, and whether it
 * is closed (every edge shared by two triangles running along it in opposite
 * directions), with the offending edge named. */
#include <math.h>
#include <stdlib.h>

#include "sim_util.h"

/* Twice the area of triangle (a, b, c) and its longest edge squared, in
 * double: products of floats are exact there. */
static void tri_measure(fs_vec3 a, fs_vec3 b, fs_vec3 c, double *area2, double *edge2) {
    double e1[3] = {(double)b.x - a.x, (double)b.y - a.y, (double)b.z - a.z};
    double e2[3] = {(double)c.x - a.x, (double)c.y - a.y, (double)c.z - a.z};
    double e3[3] = {(double)c.x - b.x, (double)c.y - b.y, (double)c.z - b.z};
    double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
    *area2 = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
    double l1 = e1[0] * e1[0] + e1[1] * e1[1] + e1[2] * e1[2];
    double l2 = e2[0] * e2[0] + e2[1] * e2[1] + e2[2] * e2[2];
    double l3 = e3[0] * e3[0] + e3[1] * e3[1] + e3[2] * e3[2];
    *edge2 = fmax(l1, fmax(l2, l3));
}

fs_status fs_mesh_check(const fs_mesh *m, fs_error *err) {
    if (!m || !m->vertices || !m->triangles) {
        SETERR(err, "mesh: missing vertices or triangles");
        return FS_ERR_ARG;
    }
    if (m->triangle_count < 1 || m->triangle_count > FS_MESH_MAX_TRIANGLES) {
        SETERR(err, "mesh: %d triangles, outside 1..%d", m->triangle_count, FS_MESH_MAX_TRIANGLES);
        return FS_ERR_RANGE;
    }
    if (m->vertex_count < 3 || m->vertex_count > FS_MESH_MAX_VERTICES) {
        SETERR(err, "mesh: %d vertices, outside 3..%d", m->vertex_count, FS_MESH_MAX_VERTICES);
        return FS_ERR_RANGE;
    }
    for (int i = 0; i < m->vertex_count; i++) {
        fs_vec3 v = m->vertices[i];
        if (!fs__vec_finite(v)) {
            SETERR(err, "mesh: vertex %d is not finite", i);
            return FS_ERR_ARG;
        }
        if (fabsf(v.x) > FS_MESH_MAX_COORD || fabsf(v.y) > FS_MESH_MAX_COORD || fabsf(v.z) > FS_MESH_MAX_COORD) {
            SETERR(err, "mesh: vertex %d (%g, %g, %g) lies beyond +-%g m", i, v.x, v.y, v.z, FS_MESH_MAX_COORD);
            return FS_ERR_RANGE;
        }
    }
    for (int t = 0; t < m->triangle_count; t++) {
        const uint32_t *T = m->triangles + 3 * (size_t)t;
        for (int k = 0; k < 3; k++) {
            if (T[k] >= (uint32_t)m->vertex_count) {
                SETERR(err, "mesh: triangle %d names vertex %u of %d", t, T[k], m->vertex_count);
                return FS_ERR_RANGE;
            }
        }
        double a2, e2;
        tri_measure(m->vertices[T[0]], m->vertices[T[1]], m->vertices[T[2]], &a2, &e2);
        if (T[0] == T[1] || T[1] == T[2] || T[0] == T[2] || !(a2 > 1e-10 * e2)) {
            SETERR(err, "mesh: triangle %d (vertices %u, %u, %u) is degenerate (zero area)", t, T[0], T[1], T[2]);
            return FS_ERR_ARG;
        }
    }
    return FS_OK;
}

/* A directed edge a -> b of triangle t. */
typedef struct half_edge {
    uint64_t key; /* a << 32 | b */
    int32_t tri;
} half_edge;

static int half_edge_cmp(const void *pa, const void *pb) {
    uint64_t a = ((const half_edge *)pa)->key, b = ((const half_edge *)pb)->key;
    return a < b ? -1 : (a > b ? 1 : 0);
}

/* The index of key in the sorted E[0..n), or -1. */
static long find_edge(const half_edge *E, long n, uint64_t key) {
    long lo = 0, hi = n - 1;
    while (lo <= hi) {
        long mid = lo + (hi - lo) / 2;
        if (E[mid].key == key) return mid;
        if (E[mid].key < key)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

fs_status fs_mesh_check_closed(const fs_mesh *m, fs_error *err) {
    fs_status st = fs_mesh_check(m, err);
    if (st != FS_OK) return st;
    long n = 3L * m->triangle_count;
    half_edge *E = malloc(sizeof *E * (size_t)n);
    if (!E) {
        SETERR(err, "mesh: out of memory checking %d triangles", m->triangle_count);
        return FS_ERR_NOMEM;
    }
    for (int t = 0; t < m->triangle_count; t++) {
        const uint32_t *T = m->triangles + 3 * (size_t)t;
        for (int k = 0; k < 3; k++) {
            E[3L * t + k].key = (uint64_t)T[k] << 32 | T[(k + 1) % 3];
            E[3L * t + k].tri = t;
        }
    }
    qsort(E, (size_t)n, sizeof *E, half_edge_cmp);
    st = FS_OK;
    for (long i = 0; i < n && st == FS_OK; i++) {
        uint32_t a = (uint32_t)(E[i].key >> 32), b = (uint32_t)E[i].key;
        fs_vec3 pa = m->vertices[a];
        if (i + 1 < n && E[i + 1].key == E[i].key) {
            SETERR(err, "mesh: not closed: edge %u-%u at (%g, %g, %g) runs the same way in triangles %d and %d", a, b,
                   pa.x, pa.y, pa.z, E[i].tri, E[i + 1].tri);
            st = FS_ERR_ARG;
        } else if (find_edge(E, n, (uint64_t)b << 32 | a) < 0) {
            SETERR(err, "mesh: not closed: edge %u-%u at (%g, %g, %g) of triangle %d borders no other triangle", a, b,
                   pa.x, pa.y, pa.z, E[i].tri);
            st = FS_ERR_ARG;
        }
    }
    free(E);
    return st;
}

/* The corner of the vertices' box that pick (fminf or fmaxf) chooses. */
static fs_vec3 bounds(const fs_mesh *m, float (*pick)(float, float)) {
    fs_vec3 c = m->vertices[0];
    for (int i = 1; i < m->vertex_count; i++) {
        fs_vec3 v = m->vertices[i];
        c.x = pick(c.x, v.x), c.y = pick(c.y, v.y), c.z = pick(c.z, v.z);
    }
    return c;
}

fs_vec3 fs_mesh_bounds_min(const fs_mesh *m) {
    return bounds(m, fminf);
}

fs_vec3 fs_mesh_bounds_max(const fs_mesh *m) {
    return bounds(m, fmaxf);
}
