/* test_meshes.h - closed triangle meshes made in the tests (a box, a UV
 * sphere, a torus, a tank with a well), outward and counter-clockwise, and an independent
 * point-in-mesh test (ray parity), for the mesh and obstacle tests. */
#ifndef TEST_MESHES_H
#define TEST_MESHES_H

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#include "fluid_sim.h"

#define TM_PI 3.14159265358979323846

typedef struct tmesh {
    fs_vec3 *v;
    uint32_t *t;
    int nv, nt;
} tmesh;

static inline fs_mesh tm_view(const tmesh *m) {
    fs_mesh r = {m->v, m->nv, m->t, m->nt};
    return r;
}

static inline void tm_free(tmesh *m) {
    free(m->v), free(m->t);
    m->v = NULL, m->t = NULL;
}

static inline void tm_tri(tmesh *m, uint32_t a, uint32_t b, uint32_t c) {
    m->t[3 * m->nt] = a, m->t[3 * m->nt + 1] = b, m->t[3 * m->nt + 2] = c;
    m->nt++;
}

/* A box of half extents (a, b, c) about centre: 8 corners (corner k has
 * bit 0, 1, 2 for +x, +y, +z), 12 triangles. */
static inline tmesh tm_box(fs_vec3 centre, float a, float b, float c) {
    tmesh m = {malloc(sizeof(fs_vec3) * 8), malloc(sizeof(uint32_t) * 36), 8, 0};
    for (int k = 0; k < 8; k++)
        m.v[k] = (fs_vec3){centre.x + ((k & 1) ? a : -a), centre.y + ((k & 2) ? b : -b), centre.z + ((k & 4) ? c : -c)};
    /* each face: four corners in counter-clockwise order seen from outside */
    static const uint32_t F[6][4] = {{0, 4, 6, 2}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                     {2, 6, 7, 3}, {0, 2, 3, 1}, {4, 5, 7, 6}};
    for (int f = 0; f < 6; f++) {
        tm_tri(&m, F[f][0], F[f][1], F[f][2]);
        tm_tri(&m, F[f][0], F[f][2], F[f][3]);
    }
    return m;
}

/* A UV sphere of radius r about centre: nu segments around z, nv rings
 * from pole to pole. */
static inline tmesh tm_sphere(fs_vec3 centre, float r, int nu, int nv) {
    tmesh m = {malloc(sizeof(fs_vec3) * (size_t)(nu * (nv - 1) + 2)), malloc(sizeof(uint32_t) * 6 * (size_t)nu * nv), 0,
               0};
    m.v[m.nv++] = (fs_vec3){centre.x, centre.y, centre.z + r}; /* north, 0 */
    for (int i = 1; i < nv; i++) {
        double th = TM_PI * i / nv;
        for (int j = 0; j < nu; j++) {
            double ph = 2 * TM_PI * j / nu;
            m.v[m.nv++] = (fs_vec3){centre.x + (float)(r * sin(th) * cos(ph)),
                                    centre.y + (float)(r * sin(th) * sin(ph)), centre.z + (float)(r * cos(th))};
        }
    }
    const uint32_t S = (uint32_t)m.nv;
    m.v[m.nv++] = (fs_vec3){centre.x, centre.y, centre.z - r}; /* south */
#define RING(i, j) (uint32_t)(1 + ((i)-1) * nu + ((j) % nu))
    for (int j = 0; j < nu; j++) tm_tri(&m, 0, RING(1, j), RING(1, j + 1));
    for (int i = 1; i < nv - 1; i++)
        for (int j = 0; j < nu; j++) {
            tm_tri(&m, RING(i, j), RING(i + 1, j), RING(i + 1, j + 1));
            tm_tri(&m, RING(i, j), RING(i + 1, j + 1), RING(i, j + 1));
        }
    for (int j = 0; j < nu; j++) tm_tri(&m, RING(nv - 1, j), S, RING(nv - 1, j + 1));
#undef RING
    return m;
}

/* A torus about the z axis through centre: major radius R, minor r; nu
 * segments around z, nv around the tube. */
static inline tmesh tm_torus(fs_vec3 centre, float R, float r, int nu, int nv) {
    tmesh m = {malloc(sizeof(fs_vec3) * (size_t)(nu * nv)), malloc(sizeof(uint32_t) * 6 * (size_t)nu * nv), 0, 0};
    for (int i = 0; i < nu; i++)
        for (int j = 0; j < nv; j++) {
            double u = 2 * TM_PI * i / nu, w = 2 * TM_PI * j / nv, q = R + r * cos(w);
            m.v[m.nv++] = (fs_vec3){centre.x + (float)(q * cos(u)), centre.y + (float)(q * sin(u)),
                                    centre.z + (float)(r * sin(w))};
        }
#define AT(i, j) (uint32_t)(((i) % nu) * nv + ((j) % nv))
    for (int i = 0; i < nu; i++)
        for (int j = 0; j < nv; j++) {
            tm_tri(&m, AT(i, j), AT(i + 1, j), AT(i + 1, j + 1));
            tm_tri(&m, AT(i, j), AT(i + 1, j + 1), AT(i, j + 1));
        }
#undef AT
    return m;
}

/* A tank as one closed mesh: the box [lo, hi] with a well open at the top,
 * walls and floor T thick (a cavity [lo + T, hi - T] in x and z, from
 * lo.y + T to the rim at hi.y).  16 corners (outer k, inner 8 + k; bit 0,
 * 1, 2 for +x, +y, +z; the inner +y corners on the rim), 32 triangles. */
static inline tmesh tm_cup(fs_vec3 lo, fs_vec3 hi, float T) {
    tmesh m = {malloc(sizeof(fs_vec3) * 16), malloc(sizeof(uint32_t) * 96), 16, 0};
    for (int k = 0; k < 8; k++) {
        m.v[k] = (fs_vec3){(k & 1) ? hi.x : lo.x, (k & 2) ? hi.y : lo.y, (k & 4) ? hi.z : lo.z};
        m.v[8 + k] = (fs_vec3){(k & 1) ? hi.x - T : lo.x + T, (k & 2) ? hi.y : lo.y + T, (k & 4) ? hi.z - T : lo.z + T};
    }
    /* the outer box's faces but its top, the cavity's the other way round, and the rim's four quads */
    static const uint32_t F[14][4] = {{0, 4, 6, 2},   {1, 3, 7, 5},     {0, 1, 5, 4},    {0, 2, 3, 1},
                                      {4, 5, 7, 6},   {8, 10, 14, 12},  {9, 13, 15, 11}, {8, 12, 13, 9},
                                      {8, 9, 11, 10}, {12, 14, 15, 13}, {2, 6, 14, 10},  {6, 7, 15, 14},
                                      {7, 3, 11, 15}, {3, 2, 10, 11}};
    for (int f = 0; f < 14; f++) {
        tm_tri(&m, F[f][0], F[f][1], F[f][2]);
        tm_tri(&m, F[f][0], F[f][2], F[f][3]);
    }
    return m;
}

/* Whether p lies inside the closed mesh: the parity of the triangles a ray
 * from p crosses (Moller & Trumbore 1997), along a direction no test mesh
 * is aligned with; in double. */
static inline bool tm_inside(const fs_mesh *m, fs_vec3 p) {
    const double D[3] = {0.5773502691896258, 0.5812381937190965, 0.5734623443633283};
    int crossings = 0;
    for (int t = 0; t < m->triangle_count; t++) {
        const fs_vec3 A = m->vertices[m->triangles[3 * t]], B = m->vertices[m->triangles[3 * t + 1]],
                      C = m->vertices[m->triangles[3 * t + 2]];
        double e1[3] = {B.x - A.x, B.y - A.y, B.z - A.z}, e2[3] = {C.x - A.x, C.y - A.y, C.z - A.z};
        double q[3] = {D[1] * e2[2] - D[2] * e2[1], D[2] * e2[0] - D[0] * e2[2], D[0] * e2[1] - D[1] * e2[0]};
        double det = e1[0] * q[0] + e1[1] * q[1] + e1[2] * q[2];
        if (fabs(det) < 1e-18) continue;
        double s[3] = {(double)p.x - A.x, (double)p.y - A.y, (double)p.z - A.z};
        double u = (s[0] * q[0] + s[1] * q[1] + s[2] * q[2]) / det;
        if (u < 0 || u > 1) continue;
        double r[3] = {s[1] * e1[2] - s[2] * e1[1], s[2] * e1[0] - s[0] * e1[2], s[0] * e1[1] - s[1] * e1[0]};
        double v = (D[0] * r[0] + D[1] * r[1] + D[2] * r[2]) / det;
        if (v < 0 || u + v > 1) continue;
        double tt = (e2[0] * r[0] + e2[1] * r[1] + e2[2] * r[2]) / det;
        if (tt > 0) crossings++;
    }
    return crossings & 1;
}

#endif
