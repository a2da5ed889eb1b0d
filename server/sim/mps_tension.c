/* mps_tension.c - the MPS solver's surface tension: Appendix A of Premoze
 * et al. 2003 at free-surface particles, the neighbour counts of Eq. 34-35
 * and the curvature of Eq. 36-39 along the gradient of n, applied as Eq. 33
 * (delta = 1 / l0).  Choices and measurements: docs/sim-notes.md, "MPS", "Surface
 * tension".  The counts of Eq. 34-35 and n at r^n come from mps.c's
 * list pass. */
#include <math.h>

#include "mps_internal.h"

/* Adds Eq. 33's acceleration of particle i (at r^n, lists of this sub-step)
 * to *ax, *ay, *az when i is at the free surface of a fluid with tension. */
void fs__mps_tension_acc(const ctx *c, int i, float *ax, float *ay, float *az) {
    const fs_world *w = c->w;
    const mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z;
    const float sig = c->m.sigma[w->p.mat[i]], rst2 = s->re_st * s->re_st;
    if (!(c->m.tension && sig > 0 && s->nrn[i] < BETA * s->n0)) return;
    const int32_t *L = s->nn + (size_t)i * NN_STRIDE; /* within NEAR l0 >= r_e^st at r^n (not yet cut by n*) */
    const float xi = X[i], yi = Y[i], zi = Z[i];
    /* Appendix A at a free-surface particle: Eq. 36-37, then 38-39 */
    float n2 = 0, gx = 0, gy = 0, gz = 0, gsum = 0;
    const float n1i = s->nst1[i];
    for (int k = 0; k < s->nn_f[i]; k++) {
        int j = L[k];
        float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= rst2) continue;
        if (s->nst1[j] > n1i) n2 += 1.0f;
        const float r = sqrtf(r2), wn = weight(r, s->re_n, c->rmin);
        gx += dx * wn, gy += dy * wn, gz += dz * wn;
        gsum += r * wn;
    }
    float theta = 0.5f * 3.14159265f * n2 / s->nst_flat; /* Eq. 39 */
    theta = theta > 3.14159265f ? 3.14159265f : theta;
    const float kappa = 2.0f * cosf(theta) / s->re_st; /* Eq. 38 */
    const float gl = sqrtf(gx * gx + gy * gy + gz * gz);
    if (gl > 1e-12f && gl >= ST_ONE_SIDED * gsum) {
        /* Eq. 33: sigma kappa delta n / rho, delta = 1 / l0, n towards the fluid */
        const float f = sig * kappa / (s->rho[i] * s->l0 * gl);
        *ax += f * gx, *ay += f * gy, *az += f * gz;
    }
}
