/* mesh_mass.c - volume, centre and inertia tensor of the solid a closed
 * triangle mesh bounds, integrated exactly: Eberly 2002, "Polyhedral Mass
 * Properties (Revisited)" (Geometric Tools), which reduces Mirtich 1996,
 * "Fast and Accurate Computation of Polyhedral Mass Properties", to sums
 * over the triangles.  By the divergence theorem each volume integral of
 * 1, x, y, z, x^2, y^2, z^2, xy, yz, zx is a sum over the faces; over a
 * triangle the polynomial is integrated in closed form (the subexpressions
 * f1, f2, f3, g0, g1, g2 of Eberly's paper), which is the same as summing
 * the tetrahedra each triangle spans with the origin. */
#include <math.h>

#include "sim_util.h"

/* Eberly's subexpressions for one coordinate w0, w1, w2 of the triangle. */
static void subexpressions(double w0, double w1, double w2, double *f1, double *f2, double *f3, double *g0, double *g1,
                           double *g2) {
    double t0 = w0 + w1, t1 = w0 * w0, t2 = t1 + w1 * t0;
    *f1 = t0 + w2;
    *f2 = t2 + w2 * *f1;
    *f3 = w0 * t1 + w1 * t2 + w2 * *f2;
    *g0 = *f2 + w0 * (*f1 + w0);
    *g1 = *f2 + w1 * (*f1 + w1);
    *g2 = *f2 + w2 * (*f1 + w2);
}

fs_status fs_mesh_mass_properties(const fs_mesh *m, fs_mass_props *out, fs_error *err) {
    fs_status st = fs_mesh_check_closed(m, err);
    if (st != FS_OK) return st;
    /* about the bounding box's centre, which keeps the sums' cancellation small */
    fs_vec3 lo = fs_mesh_bounds_min(m), hi = fs_mesh_bounds_max(m);
    const double o[3] = {0.5 * ((double)lo.x + hi.x), 0.5 * ((double)lo.y + hi.y), 0.5 * ((double)lo.z + hi.z)};
    double in[10] = {0}; /* 1, x, y, z, x^2, y^2, z^2, xy, yz, zx */
    for (int t = 0; t < m->triangle_count; t++) {
        const uint32_t *T = m->triangles + 3 * (size_t)t;
        double P[3][3];
        for (int k = 0; k < 3; k++) {
            fs_vec3 v = m->vertices[T[k]];
            P[k][0] = v.x - o[0], P[k][1] = v.y - o[1], P[k][2] = v.z - o[2];
        }
        double a1 = P[1][0] - P[0][0], b1 = P[1][1] - P[0][1], c1 = P[1][2] - P[0][2];
        double a2 = P[2][0] - P[0][0], b2 = P[2][1] - P[0][1], c2 = P[2][2] - P[0][2];
        double d0 = b1 * c2 - b2 * c1, d1 = a2 * c1 - a1 * c2, d2 = a1 * b2 - a2 * b1; /* the face normal */
        double f1x, f2x, f3x, g0x, g1x, g2x, f1y, f2y, f3y, g0y, g1y, g2y, f1z, f2z, f3z, g0z, g1z, g2z;
        subexpressions(P[0][0], P[1][0], P[2][0], &f1x, &f2x, &f3x, &g0x, &g1x, &g2x);
        subexpressions(P[0][1], P[1][1], P[2][1], &f1y, &f2y, &f3y, &g0y, &g1y, &g2y);
        subexpressions(P[0][2], P[1][2], P[2][2], &f1z, &f2z, &f3z, &g0z, &g1z, &g2z);
        in[0] += d0 * f1x;
        in[1] += d0 * f2x, in[2] += d1 * f2y, in[3] += d2 * f2z;
        in[4] += d0 * f3x, in[5] += d1 * f3y, in[6] += d2 * f3z;
        in[7] += d0 * (P[0][1] * g0x + P[1][1] * g1x + P[2][1] * g2x);
        in[8] += d1 * (P[0][2] * g0y + P[1][2] * g1y + P[2][2] * g2y);
        in[9] += d2 * (P[0][0] * g0z + P[1][0] * g1z + P[2][0] * g2z);
    }
    static const double mult[10] = {1.0 / 6,  1.0 / 24, 1.0 / 24,  1.0 / 24,  1.0 / 60,
                                    1.0 / 60, 1.0 / 60, 1.0 / 120, 1.0 / 120, 1.0 / 120};
    /* an inside-out mesh (clockwise seen from outside) gives every integral negated */
    const double sign = in[0] < 0 ? -1.0 : 1.0;
    for (int k = 0; k < 10; k++) in[k] *= mult[k] * sign;
    const double V = in[0];
    if (!(V > 0) || !isfinite(V)) {
        SETERR(err, "mesh: the closed surface bounds no volume (%g m^3)", V);
        return FS_ERR_ARG;
    }
    const double c[3] = {in[1] / V, in[2] / V, in[3] / V};
    double(*I)[3] = out->inertia;
    I[0][0] = in[5] + in[6] - V * (c[1] * c[1] + c[2] * c[2]);
    I[1][1] = in[4] + in[6] - V * (c[2] * c[2] + c[0] * c[0]);
    I[2][2] = in[4] + in[5] - V * (c[0] * c[0] + c[1] * c[1]);
    I[0][1] = I[1][0] = -(in[7] - V * c[0] * c[1]);
    I[1][2] = I[2][1] = -(in[8] - V * c[1] * c[2]);
    I[0][2] = I[2][0] = -(in[9] - V * c[2] * c[0]);
    out->volume = V;
    out->centre = (fs_vec3){(float)(c[0] + o[0]), (float)(c[1] + o[1]), (float)(c[2] + o[2])};
    return FS_OK;
}
