/* clavet_sequential.c - Algorithm 2 of Clavet et al. 2005 exactly as
 * printed (FS_RELAX_SEQUENTIAL): one thread, neighbours moved at once, in a
 * fixed random order of slots; kept to compare the parallel forms against
 * (tests/bench report both). */
#include "clavet_internal.h"

/* Whether j (not i) lies within sqrt(h2) of i: r_ij and |r_ij|^2 out. */
static inline bool near_pair(const float *X, const float *Y, const float *Z, int i, int j, float h2, float *dx,
                             float *dy, float *dz, float *r2) {
    if (j == i) return false;
    *dx = X[j] - X[i], *dy = Y[j] - Y[i], *dz = Z[j] - Z[i];
    *r2 = *dx * *dx + *dy * *dy + *dz * *dz;
    return *r2 < h2;
}

/* Algorithm 2 as printed: sequential, neighbours moved at once, particle i's
 * own displacement applied after its neighbour loop; fixed random order. */
void fs__clavet_relax_sequential(fs_world *w, step_ctx *c) {
    fs_particles *p = &w->p;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const float h2 = c->h2, inv_h = c->inv_h;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int o = 0; o < w->cap; o++) {
        int i = w->slot_index[c->s->seq_order[o]];
        if (i < 0) continue;
        r.cell = -1;
        fs__ranges_of(w, w->cell[i], &r);
        float rho = 0, rhon = 0;
        for (int k = 0; k < r.n; k++)
            for (int j = r.b[k]; j < r.e[k]; j++) {
                float dx, dy, dz, r2;
                if (!near_pair(X, Y, Z, i, j, h2, &dx, &dy, &dz, &r2)) continue;
                float q = 1.0f - sqrtf(r2) * inv_h;
                rho += q * q, rhon += q * q * q;
            }
        wall_density(w, X[i], Y[i], Z[i], &rho, &rhon);
        int m = p->mat[i];
        float P = c->m.k[m] * (rho - c->m.rho0[m]), PN = c->m.kn[m] * rhon;
        float ax = 0, ay = 0, az = 0;
        for (int k = 0; k < r.n; k++)
            for (int j = r.b[k]; j < r.e[k]; j++) {
                float dx, dy, dz, r2;
                if (!near_pair(X, Y, Z, i, j, h2, &dx, &dy, &dz, &r2)) continue;
                float rr = sqrtf(r2);
                if (rr < 1e-9f) {
                    fs__coincident_dir(p, i, j, 21, &dx, &dy, &dz);
                } else {
                    float inv = 1.0f / rr;
                    dx *= inv, dy *= inv, dz *= inv;
                }
                float q = 1.0f - rr * inv_h;
                float D = P * q + PN * q * q;
                X[j] += 0.5f * D * dx, Y[j] += 0.5f * D * dy, Z[j] += 0.5f * D * dz;
                ax -= 0.5f * D * dx, ay -= 0.5f * D * dy, az -= 0.5f * D * dz;
            }
        wall_push(w, X[i], Y[i], Z[i], P, PN, &ax, &ay, &az);
        X[i] += ax, Y[i] += ay, Z[i] += az;
    }
}
