/* mps_tension.c - the MPS solver's surface tension: Appendix A of Premoze
 * et al. 2003 at free-surface particles, the neighbour counts of Eq. 34-35
 * and the curvature of Eq. 36-39 along the gradient of n, applied as Eq. 33
 * (delta = 1 / l0).  Choices and measurements: docs/sim-notes.md, "MPS", "Surface
 * tension".  The counts of Eq. 34-35 and n at r^n come from mps.c's
 * list pass. */
#include <math.h>

#include "mps_internal.h"

/* Adds Eq. 33's acceleration of particle i (at r^n, lists of this sub-step)
 * to *ax, *ay, *az when i is at the free surface of a fluid with tension.
 * The near list's fluid pairs in whole vectors of LANES, masked past its end
 * (the lanes there read i itself), the lane sums added in a fixed order, as
 * the other pair passes (docs/sim-notes.md, "Speed"). */
FS_SIMD_CLONES void fs__mps_tension_acc(const ctx *c, int i, float *ax, float *ay, float *az) {
    const fs_world *w = c->w;
    const mps_state *s = c->s;
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, *N1 = s->nst1;
    const float sig = c->m.sigma[w->p.mat[i]], rst2 = s->re_st * s->re_st, re = s->re_n, rmin = c->rmin;
    if (!(c->m.tension && sig > 0 && s->nrn[i] < BETA * s->n0)) return;
    const int32_t *L = s->nn + (size_t)i * NN_STRIDE; /* within NEAR l0 >= r_e^st at r^n (not yet cut by n*) */
    const float xi = X[i], yi = Y[i], zi = Z[i];
    const int nf = s->nn_f[i];
    /* Appendix A at a free-surface particle: Eq. 36-37, then 38-39 */
    const float n1i = N1[i];
    float n28[LANES] = {0}, gx8[LANES] = {0}, gy8[LANES] = {0}, gz8[LANES] = {0}, gs8[LANES] = {0};
    for (int kb = 0; kb < nf; kb += LANES) {
#pragma omp simd
        for (int l = 0; l < LANES; l++) {
            const int k = kb + l, live = -(k < nf), j = (L[k] & live) | (i & ~live);
            const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi, r2 = dx * dx + dy * dy + dz * dz;
            const float r = sqrtf(r2), v = re / (r > rmin ? r : rmin) - 1.0f, n1j = N1[j];
            const bool in = (k < nf) & (r2 < rst2);
            const float wn = in & (r < re) ? v : 0.0f; /* weight(r, re, rmin) within r_e^st */
            n28[l] += in & (n1j > n1i) ? 1.0f : 0.0f;
            gx8[l] += dx * wn, gy8[l] += dy * wn, gz8[l] += dz * wn;
            gs8[l] += r * wn;
        }
    }
    const float n2 = lanes_sum(n28), gx = lanes_sum(gx8), gy = lanes_sum(gy8), gz = lanes_sum(gz8),
                gsum = lanes_sum(gs8);
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
