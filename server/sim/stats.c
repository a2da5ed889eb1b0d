/* stats.c - the world's counters and diagnostics: fs_world_stats and the
 * mean neighbourhood of interior particles. */
#include <math.h>

#include "grid.h"
#include "kernels.h"

void fs_world_stats(const fs_world *w, fs_stats *out) {
    *out = w->st;
    out->particles = w->n;
    out->springs = w->springs;
    out->bodies = w->nbodies;
    out->contacts = w->ncontacts;
    out->solver = w->solver;
}

float fs_world_mean_neighbours(fs_world *w, float *mean_density, float *mean_near) {
    /* Interior particle: its neighbours' centroid lies within 0.1 h of it
     * (a balanced neighbourhood: not at a free surface, not at a wall). */
    const fs_particles *p = &w->p;
    float h = w->h, h2 = h * h;
    double sn = 0, sd = 0, snear = 0;
    long cnt = 0;
    fs__grid_build(w);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = 0; i < w->n; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        int nb = fs__scan(p->x, p->y, p->z, &r, i, h2, false, w->scr_j, w->scr_r2, NULL, NULL, NULL);
        double rho = 0, rhon = 0, mx = 0, my = 0, mz = 0;
        for (int k = 0; k < nb; k++) {
            int j = w->scr_j[k];
            float q = 1.0f - sqrtf(w->scr_r2[k]) / h;
            rho += q * q, rhon += q * q * q;
            mx += p->x[j] - p->x[i], my += p->y[j] - p->y[i], mz += p->z[j] - p->z[i];
        }
        if (nb < 8) continue;
        double off = sqrt(mx * mx + my * my + mz * mz) / nb;
        if (off > 0.1 * h) continue;
        sn += nb, sd += rho, snear += rhon;
        cnt++;
    }
    if (mean_density) *mean_density = cnt ? (float)(sd / cnt) : 0.0f;
    if (mean_near) *mean_near = cnt ? (float)(snear / cnt) : 0.0f;
    return cnt ? (float)(sn / cnt) : 0.0f;
}
