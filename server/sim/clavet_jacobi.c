/* clavet_jacobi.c - the Clavet solver's Jacobi form: Algorithm 5's
 * viscosity impulses and Algorithm 2's double density relaxation as
 * gathers from one state (the parallel form described in clavet.c), each
 * pass scanning the grid, with the box's walls as mirror particles. */
#include "clavet_internal.h"

/* Alg. 1 lines 1-5 at the step's start (the Jacobi and sequential forms): a
 * scan of the grid on x, gravity and the viscosity impulses into nv. */
FS_SIMD_CLONES static void viscosity_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float gdx = c->g.x * c->dt, gdy = c->g.y * c->dt, gdz = c->g.z * c->dt;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, true, sc.j, sc.r2, sc.dx, sc.dy, sc.dz);
        float ax, ay, az;
        visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n, false, &ax, &ay, &az);
        /* Alg. 1 line 3 (gravity) + the viscosity impulses */
        w->nvx[i] = p->vx[i] + gdx + ax;
        w->nvy[i] = p->vy[i] + gdy + ay;
        w->nvz[i] = p->vz[i] + gdz + az;
    }
}

/* Pass 1: density and near-density (Eq. 1, 4), pressures (Eq. 2, 5),
 * premultiplied by dt^2 so that pass 2 is Eq. 6 directly. */
FS_SIMD_CLONES static void density_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float inv_h = c->inv_h;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        store_list(w, i, sc.j, n);
        const float *R2 = sc.r2;
        const int m = p->mat[i];
        float rho = 0, rhon = 0;
#pragma omp simd reduction(+ : rho, rhon)
        for (int k = 0; k < n; k++) {
            const float q = 1.0f - sqrtf(R2[k]) * inv_h, q2 = q * q;
            rho += q2;      /* Eq. 1 */
            rhon += q2 * q; /* Eq. 4 */
        }
        if (c->m.heat) w->dT[i] = heat_sum(c, i, sc.j, R2, n);
        wall_density(w, p->x[i], p->y[i], p->z[i], &rho, &rhon);
        c->s->s_a[i] = c->m.k[m] * (rho - c->m.rho0[m]); /* Eq. 2, times dt^2 h */
        c->s->s_b[i] = c->m.kn[m] * rhon;                /* Eq. 5, times dt^2 h */
    }
}

/* Pass 2: Eq. 6 for every pair from both sides, applied as a gather. */
FS_SIMD_CLONES static void displace_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const float *X = p->x, *Y = p->y, *Z = p->z, *P = c->s->s_a, *PN = c->s->s_b;
    const float inv_h = c->inv_h;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        const int32_t *list;
        const int n = fs__neighbours_of(w, i, c->h2, &r, &sc, &list);
        const float xi = X[i], yi = Y[i], zi = Z[i], pi = P[i], pni = PN[i];
        float ax = 0, ay = 0, az = 0;
        int coincident = 0;
#pragma omp simd reduction(+ : ax, ay, az, coincident)
        for (int k = 0; k < n; k++) {
            const int j = list[k];
            const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
            const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            const float inv = rr >= 1e-9f ? 1.0f / rr : 0.0f;
            coincident += rr < 1e-9f;
            const float q = 1.0f - rr * inv_h;
            /* Eq. 6 from i's visit plus Eq. 6 from j's visit; x_i receives
             * -D/2 along r_ij (Alg. 2 line 20) */
            const float D = 0.5f * ((pi + P[j]) * q + (pni + PN[j]) * q * q) * inv;
            ax -= D * dx, ay -= D * dy, az -= D * dz;
        }
        if (coincident) /* rare: pairs at one point act along a direction drawn from their ids */
            for (int k = 0; k < n; k++) {
                const int j = list[k];
                const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
                if (sqrtf(dx * dx + dy * dy + dz * dz) >= 1e-9f) continue;
                float ux, uy, uz;
                fs__coincident_dir(p, i, j, 21, &ux, &uy, &uz);
                const float D = 0.5f * ((pi + P[j]) + (pni + PN[j]));
                ax -= D * ux, ay -= D * uy, az -= D * uz;
            }
        wall_push(w, xi, yi, zi, pi, pni, &ax, &ay, &az);
        w->nx[i] = xi + ax, w->ny[i] = yi + ay, w->nz[i] = zi + az;
    }
}

void fs__clavet_viscosity(fs_world *w, step_ctx *c) {
    fs__run(w, viscosity_task, c, w->n);
    swap_velocities(w);
}

void fs__clavet_density(fs_world *w, step_ctx *c) {
    fs__run(w, density_task, c, w->n);
}

void fs__clavet_relax_jacobi(fs_world *w, step_ctx *c) {
    fs__run(w, density_task, c, w->n);
    fs__run(w, displace_task, c, w->n);
    swap_positions(w);
}
