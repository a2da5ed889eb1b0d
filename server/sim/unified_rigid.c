/* unified_rigid.c - the unified solver's rigid bodies (Solenthaler,
 * Schläfli & Pajarola 2007, Eq. 18-20): the connected components of body
 * neighbours among rigid-state particles (union-find), recomputed every
 * step so bodies merge and split as particles change phase; per internal
 * step their mass, centre, inertia tensor, momentum and angular momentum
 * from the particles, Eq. 20 and Eq. 19, and the rigid move of their
 * particles; and the components diagnostic of the body-neighbour graph. */
#include <math.h>
#include <string.h>

#include "unified.h"
#include "unified_internal.h"

/* Rigid bodies: connected components of body neighbours among rigid-state
 * particles.  Union-find with the smaller slot as root, numbered in id
 * order: a function of the graph alone. */
static int32_t uf_find(int32_t *uf, int32_t a) {
    while (uf[a] != a) {
        uf[a] = uf[uf[a]];
        a = uf[a];
    }
    return a;
}

void fs__unified_rigid_label(fs_world *w, ustate *u) {
    const fs_particles *p = &w->p;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        u->uf[s] = s;
        u->comp[s] = -1;
    }
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        if (u->kind[s] != RIGID) continue;
        const int32_t *J = u->bj + (size_t)s * KB;
        for (int k = 0; k < u->bn[s]; k++) {
            if (u->kind[J[k]] != RIGID) continue;
            int32_t a = uf_find(u->uf, s), bb = uf_find(u->uf, J[k]);
            if (a < bb)
                u->uf[bb] = a;
            else if (bb < a)
                u->uf[a] = bb;
        }
    }
    /* number the components in id order; comp[root] doubles as the root's
     * number (roots are rigid particles) */
    int nc = 0;
    for (int k = 0; k < w->n; k++) {
        int s = w->id_order[k];
        if (u->kind[s] != RIGID) continue;
        int32_t root = uf_find(u->uf, s);
        if (u->comp[root] < 0) u->comp[root] = nc++;
        u->comp[s] = u->comp[root];
    }
    u->ncomp = nc;
}

/* S4: rigid bodies, Eq. 18-20.  Sums in index order (serial). */
void fs__unified_rigid_solve(fs_world *w, uctx *x) {
    ustate *u = x->u;
    const int nc = u->ncomp;
    if (!nc) return;
    const fs_particles *p = &w->p;
    const uconst *c = &x->c;
    double *rb = u->rb;
    memset(rb, 0, sizeof(double) * RB_N * (size_t)nc);
    for (int i = 0; i < w->n; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        double *B = rb + (size_t)k * RB_N, m = c->mass[p->mat[i]];
        B[RB_M] += m;
        B[RB_S] += m * p->x[i], B[RB_S + 1] += m * p->y[i], B[RB_S + 2] += m * p->z[i];
        B[RB_P] += m * p->vx[i], B[RB_P + 1] += m * p->vy[i], B[RB_P + 2] += m * p->vz[i];
        /* F_i: the force densities times the volume, i.e. m a (Eq. 18's F_i) */
        B[RB_F] += m * u->ax[i], B[RB_F + 1] += m * u->ay[i], B[RB_F + 2] += m * u->az[i];
    }
    for (int k = 0; k < nc; k++) {
        double *B = rb + (size_t)k * RB_N;
        for (int a = 0; a < 3; a++) B[RB_S + a] /= B[RB_M]; /* r_cm */
    }
    for (int i = 0; i < w->n; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        double *B = rb + (size_t)k * RB_N, m = c->mass[p->mat[i]];
        double r[3] = {p->x[i] - B[RB_S], p->y[i] - B[RB_S + 1], p->z[i] - B[RB_S + 2]};
        double v[3] = {p->vx[i], p->vy[i], p->vz[i]}, f[3] = {m * u->ax[i], m * u->ay[i], m * u->az[i]};
        /* angular momentum of the particles, L = sum m r x v */
        B[RB_L] += m * (r[1] * v[2] - r[2] * v[1]);
        B[RB_L + 1] += m * (r[2] * v[0] - r[0] * v[2]);
        B[RB_L + 2] += m * (r[0] * v[1] - r[1] * v[0]);
        /* Eq. 18: tau_i = (r_i - r_cm) x F_i */
        B[RB_T] += r[1] * f[2] - r[2] * f[1];
        B[RB_T + 1] += r[2] * f[0] - r[0] * f[2];
        B[RB_T + 2] += r[0] * f[1] - r[1] * f[0];
        /* inertia tensor xx yy zz xy yz zx */
        double r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        B[RB_I] += m * (r2 - r[0] * r[0]), B[RB_I + 1] += m * (r2 - r[1] * r[1]), B[RB_I + 2] += m * (r2 - r[2] * r[2]);
        B[RB_I + 3] -= m * r[0] * r[1], B[RB_I + 4] -= m * r[1] * r[2], B[RB_I + 5] -= m * r[2] * r[0];
    }
    const double dt = x->dt, s2 = (double)c->s * c->s;
    for (int k = 0; k < nc; k++) {
        double *B = rb + (size_t)k * RB_N;
        const double M = B[RB_M];
        double V[3], L[3];
        for (int a = 0; a < 3; a++) {
            V[a] = (B[RB_P + a] + B[RB_F + a] * dt) / M; /* momentum += F dt */
            L[a] = B[RB_L + a] + B[RB_T + a] * dt;       /* Eq. 20 */
        }
        /* Eq. 19: omega = I^-1 L; a tiny isotropic term keeps I invertible
         * for one particle or a line of them (whose L has no part there) */
        const double eps = 1e-6 * M * s2;
        double a11 = B[RB_I] + eps, a22 = B[RB_I + 1] + eps, a33 = B[RB_I + 2] + eps;
        double a12 = B[RB_I + 3], a23 = B[RB_I + 4], a13 = B[RB_I + 5];
        double c11 = a22 * a33 - a23 * a23, c12 = a13 * a23 - a12 * a33, c13 = a12 * a23 - a13 * a22;
        double c22 = a11 * a33 - a13 * a13, c23 = a12 * a13 - a11 * a23, c33 = a11 * a22 - a12 * a12;
        double det = a11 * c11 + a12 * c12 + a13 * c13;
        double om[3] = {0, 0, 0};
        if (det > 0 && isfinite(det)) {
            om[0] = (c11 * L[0] + c12 * L[1] + c13 * L[2]) / det;
            om[1] = (c12 * L[0] + c22 * L[1] + c23 * L[2]) / det;
            om[2] = (c13 * L[0] + c23 * L[1] + c33 * L[2]) / det;
        }
        /* rotation by omega dt (Rodrigues) */
        double th = sqrt(om[0] * om[0] + om[1] * om[1] + om[2] * om[2]) * dt;
        double R[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        if (th > 1e-12) {
            double kx = om[0] * dt / th, ky = om[1] * dt / th, kz = om[2] * dt / th;
            double cs = cos(th), sn = sin(th), t = 1 - cs;
            R[0] = cs + kx * kx * t, R[1] = kx * ky * t - kz * sn, R[2] = kx * kz * t + ky * sn;
            R[3] = ky * kx * t + kz * sn, R[4] = cs + ky * ky * t, R[5] = ky * kz * t - kx * sn;
            R[6] = kz * kx * t - ky * sn, R[7] = kz * ky * t + kx * sn, R[8] = cs + kz * kz * t;
        }
        /* the particles' velocities after the move: omega' = I'^-1 L with
         * the rotated inertia I' = R I R^T, so that L (not omega) carries
         * over to the next step, which takes it from these velocities */
        const double I0[9] = {a11, a12, a13, a12, a22, a23, a13, a23, a33};
        double RI[9], Ip[9];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                RI[a * 3 + b] = R[a * 3] * I0[b] + R[a * 3 + 1] * I0[3 + b] + R[a * 3 + 2] * I0[6 + b];
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++)
                Ip[a * 3 + b] = RI[a * 3] * R[b * 3] + RI[a * 3 + 1] * R[b * 3 + 1] + RI[a * 3 + 2] * R[b * 3 + 2];
        double d11 = Ip[4] * Ip[8] - Ip[5] * Ip[7], d12 = Ip[2] * Ip[7] - Ip[1] * Ip[8];
        double d13 = Ip[1] * Ip[5] - Ip[2] * Ip[4], d22 = Ip[0] * Ip[8] - Ip[2] * Ip[6];
        double d23 = Ip[2] * Ip[3] - Ip[0] * Ip[5], d33 = Ip[0] * Ip[4] - Ip[1] * Ip[3];
        double det2 = Ip[0] * d11 + Ip[1] * (Ip[5] * Ip[6] - Ip[3] * Ip[8]) + Ip[2] * (Ip[3] * Ip[7] - Ip[4] * Ip[6]);
        double om2[3] = {om[0], om[1], om[2]};
        if (det2 > 0 && isfinite(det2)) { /* I' is symmetric: its adjugate too */
            om2[0] = (d11 * L[0] + d12 * L[1] + d13 * L[2]) / det2;
            om2[1] = (d12 * L[0] + d22 * L[1] + d23 * L[2]) / det2;
            om2[2] = (d13 * L[0] + d23 * L[1] + d33 * L[2]) / det2;
        }
        /* keep: centre (RB_S), velocity (RB_P), angular velocity (RB_L), R
         * in RB_F .. RB_F + 8 (F, L and T are no longer needed) */
        for (int a = 0; a < 3; a++) B[RB_P + a] = V[a];
        double Rk[9];
        memcpy(Rk, R, sizeof R);
        for (int a = 0; a < 3; a++) B[RB_L + a] = om2[a];
        /* RB_F .. RB_F+2, RB_T .. RB_T+2 and RB_I .. RB_I+2 hold R's rows */
        B[RB_F] = Rk[0], B[RB_F + 1] = Rk[1], B[RB_F + 2] = Rk[2];
        B[RB_T] = Rk[3], B[RB_T + 1] = Rk[4], B[RB_T + 2] = Rk[5];
        B[RB_I] = Rk[6], B[RB_I + 1] = Rk[7], B[RB_I + 2] = Rk[8];
    }
}

void fs__unified_rigid_move_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    const double dt = x->dt;
    for (int i = b; i < e; i++) {
        int k = u->comp[p->slot[i]];
        if (k < 0) continue;
        const double *B = u->rb + (size_t)k * RB_N;
        const double *R0 = B + RB_F, *R1 = B + RB_T, *R2 = B + RB_I, *om = B + RB_L, *V = B + RB_P, *cm = B + RB_S;
        double r[3] = {p->x[i] - cm[0], p->y[i] - cm[1], p->z[i] - cm[2]};
        double q[3] = {R0[0] * r[0] + R0[1] * r[1] + R0[2] * r[2], R1[0] * r[0] + R1[1] * r[1] + R1[2] * r[2],
                       R2[0] * r[0] + R2[1] * r[1] + R2[2] * r[2]};
        p->x[i] = (float)(cm[0] + V[0] * dt + q[0]);
        p->y[i] = (float)(cm[1] + V[1] * dt + q[1]);
        p->z[i] = (float)(cm[2] + V[2] * dt + q[2]);
        p->vx[i] = (float)(V[0] + om[1] * q[2] - om[2] * q[1]);
        p->vy[i] = (float)(V[1] + om[2] * q[0] - om[0] * q[2]);
        p->vz[i] = (float)(V[2] + om[0] * q[1] - om[1] * q[0]);
    }
}

/* Connected components of the body-neighbour graph among particles that
 * have at least one body neighbour (isolated solid particles are not
 * counted); *pairs gets the number of pairs, *largest the biggest size. */
int fs__unified_components(fs_world *w, int *pairs, int *largest) {
    ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (pairs) *pairs = 0;
    if (largest) *largest = 0;
    if (!u) return 0;
    const fs_particles *p = &w->p;
    long np = 0;
    for (int i = 0; i < w->n; i++) u->uf[p->slot[i]] = p->slot[i], u->comp[p->slot[i]] = 0;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        np += u->bn[s];
        for (int k = 0; k < u->bn[s]; k++) {
            int32_t a = uf_find(u->uf, s), c = uf_find(u->uf, u->bj[(size_t)s * KB + k]);
            if (a < c)
                u->uf[c] = a;
            else if (c < a)
                u->uf[a] = c;
        }
    }
    int nc = 0, big = 0;
    for (int i = 0; i < w->n; i++) {
        int s = p->slot[i];
        if (!u->bn[s]) continue;
        int r = uf_find(u->uf, s);
        if (u->comp[r] == 0) nc++;
        u->comp[r]++;
        if (u->comp[r] > big) big = u->comp[r];
    }
    for (int i = 0; i < w->n; i++) u->comp[p->slot[i]] = -1; /* the next step relabels */
    if (pairs) *pairs = (int)(np / 2);
    if (largest) *largest = big;
    return nc;
}
