/* unified.c - Solenthaler, Schläfli & Pajarola 2007, "A unified particle
 * model for fluid-solid interactions", in 3D: one SPH particle set in which
 * every particle is liquid, elastic or part of a rigid body according to its
 * material and temperature.  This file: the per-step constants, the liquid
 * (density, pressure, viscosity, walls), the integration, the step and its
 * internal steps, the lifetime, the snapshot section and the diagnostics.
 *
 * Per step of w->dt (sub-cycled: dt / n <= CFL h / (c + |v|max), CFL h /
 * sqrt(M/rho) and VISC_LIM h^2 / nu):
 *   emit / drain, grid                       (commands; the shared grid)
 *   phase state from temperature             ("Temperature Effects", Fig. 5)      unified_phase.c
 *   body neighbours: melt, fracture, merge   ("Phase Changes of Elastic and Rigid Bodies",
 *                                             "Plasticity and Fracture"), body volume Eq. 11
 *   rigid bodies: connected components of the rigid particles' body neighbours  unified_rigid.c
 *   n internal steps of dt / n, each:
 *     grid; density Eq. 4, pressure Eq. 9, heat Eq. 21,
 *       strain and stress Eq. 14-15 (+ plasticity)                                unified_elastic.c
 *     forces: pressure Eq. 7, viscosity Eq. 8, elasticity Eq. 12 + 16, gravity, walls
 *     leap-frog (kick-drift) integration of Eq. 6; rigid bodies Eq. 18-20       unified_rigid.c
 *     mesh obstacles (obstacles.c: a static body's Eq. 9-12 of Clavet 2005 on the
 *       sampled distance field; liquids slip, as at the walls),
 *     walls (clamp), repair, temperature (Eq. 21 + heaters, shared with the Clavet solver)
 *     shape bodies (body_step.c, Algorithm 6 of Clavet 2005 over the internal step,
 *       on the particles' velocities; liquids slip, as at the walls and obstacles)
 *
 * Kernels: the spiky kernel (h - r)^3 of Müller 2003 (the paper's ref. 10)
 * for the density (Eq. 4) and the pressure gradient (Eq. 7, in Monaghan's
 * symmetric form), the Laplacian of ref. 10's viscosity kernel for Eq. 8 and
 * Eq. 21, the cosine kernel of Eq. 17 for the elastic forces; each normalised
 * on the rest lattice.  Walls: boundary particles behind each face (tables),
 * a spring-damper and a clamp.  Equation of state p = c^2 (rho - rho-hat)
 * (Eq. 9), negative pressures clamped to 0.
 *
 * Why each choice, what else was tried, and the measured limits: docs/sim-notes.md,
 * "Unified solver".  Parallel form: every per-particle phase is a gather
 * through fs__run, so the state is bit-identical for any thread count;
 * per-particle state is kept by storage slot (p.slot), never by index.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "obstacles.h"
#include "probes.h"
#include "sim_util.h"
#include "unified.h"
#include "unified_internal.h"

/* ---- per-step constants ---------------------------------------------------- */
static void uconst_init(const fs_world *w, uconst *c) {
    memset(c, 0, sizeof *c);
    const float s = w->dom.spacing, h = w->h, vol = s * s * s;
    c->h = h, c->h2 = h * h, c->inv_h = w->inv_h, c->s = s, c->k = SOUND * SOUND, c->g = w->dom.gravity;
    for (int m = 0; m < w->nmat; m++) {
        const float *p = w->mat[m].p;
        c->rho0[m] = p[FS_P_MASS_DENSITY];
        c->mass[m] = c->rho0[m] * vol;
        c->nu_l[m] = fmaxf(p[FS_P_KIN_VISCOSITY], NU_NUMERIC);
        c->nu_s[m] = fmaxf(p[FS_P_SOLID_VISCOSITY], NU_NUMERIC);
        c->E[m] = p[FS_P_YOUNG];
        c->pois[m] = p[FS_P_POISSON];
        c->elim[m] = p[FS_P_ELASTIC_LIMIT];
        c->plim[m] = p[FS_P_PLASTIC_LIMIT];
        c->frac[m] = p[FS_P_FRACTURE];
        c->phase[m] = p[FS_P_PHASE_CHANGE] != 0.0f;
        c->rigid[m] = p[FS_P_RIGID] != 0.0f;
        c->always_solid[m] = !c->phase[m] && (c->E[m] > 0.0f || c->rigid[m]);
        c->tsolid[m] = p[FS_P_SOLID_POINT];
        c->tmelt[m] = p[FS_P_MELT_POINT] > p[FS_P_SOLID_POINT] ? p[FS_P_MELT_POINT] : p[FS_P_SOLID_POINT];
        c->diff[m] = fs__heat_coef(w, m);
        c->mu[m] = p[FS_P_FRICTION];
        c->stick_d[m] = p[FS_P_STICK_DISTANCE] * h;
        c->stick_k[m] = p[FS_P_STICK_STRENGTH];
        c->heat |= c->diff[m] > 0;
    }
    /* lattice sums over the rest lattice (self included where the kernel is
     * not a derivative) */
    double s6 = 0, scw = 0, scg = 0;
    int M = (int)(h / s) + 1;
    for (int k = -M; k <= M; k++)
        for (int j = -M; j <= M; j++)
            for (int i = -M; i <= M; i++) {
                double x = s * i, r = s * sqrt((double)(i * i + j * j + k * k));
                if (r >= h) continue;
                double q = (double)h - r;
                s6 += q * q * q;
                scw += cos_w((float)r, h);
                if (r > 0) scg += cos_g((float)r, h) * x * x / r;
            }
    c->w6 = (float)(1.0 / (vol * s6));
    c->gsp = 3.0f * c->w6; /* -dW/dr: the force is the gradient of the density */
    c->lap = w->lap_norm / vol;
    c->cw = (float)(1.0 / (vol * scw));
    c->cg = (float)(1.0 / (vol * scg));
    for (int t = 0; t <= WALL_TAB; t++) {
        double d = (double)h * t / WALL_TAB, f = 0, gg = 0;
        for (int k = 0; k <= M; k++) {
            double dp = d + s * (0.5 + k);
            if (dp >= h) break;
            for (int j = -M; j <= M; j++)
                for (int i = -M; i <= M; i++) {
                    double r2 = dp * dp + (double)s * s * (i * i + j * j);
                    if (r2 >= (double)h * h) continue;
                    double r = sqrt(r2), q = (double)h - r;
                    f += q * q * q;
                    gg += (h - r) * (h - r) * dp / r;
                }
        }
        c->wf[t] = (float)(f * vol * c->w6);
        c->wg[t] = (float)(gg * vol * c->gsp);
    }
    float dtmin = w->dt / (float)MAX_SUB;
    c->nu_cap = VISC_LIM * h * h / dtmin;
    float cs = CFL * h / dtmin;
    c->E_cap_over_rho = cs * cs;
}

static inline float wall_tab(const float *tab, float d, float inv_h) {
    float t = d * inv_h * WALL_TAB;
    if (!(t < WALL_TAB)) return 0.0f;
    if (t < 0.0f) t = 0.0f;
    int k = (int)t;
    float f = t - (float)k;
    return tab[k] + f * (tab[k + 1] - tab[k]);
}

/* ---- one internal step ----------------------------------------------------- */
/* S1: density (Eq. 4), pressure (Eq. 9), heat (Eq. 21); for elastic
 * particles the displacement gradient (Eq. 14-15), Green-Saint-Venant strain,
 * von Mises plasticity, Hooke's stress and the matrix of Eq. 12. */
FS_SIMD_CLONES static void density_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const float h2 = c->h2, w6 = c->w6, inv_h = c->inv_h;
    for (int i = b; i < e; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        if (n <= FS_NB_MAX) {
            memcpy(w->nb + (size_t)i * FS_NB_MAX, sc.j, sizeof(int32_t) * (size_t)n);
            w->nb_n[i] = n;
        } else {
            w->nb_n[i] = -1; /* the force pass scans again: same positions, same set */
        }
        const int m = p->mat[i];
        const int32_t *J = sc.j;
        const float *R2 = sc.r2;
        const uint8_t *MM = p->mat;
        float rho = 0, acc = 0;
        const float Ti = p->temp[i], Di = c->diff[m], hh = c->h;
        const float *MA = c->mass, *DF = c->diff, *T = p->temp;
        if (c->heat) {
#pragma omp simd reduction(+ : rho, acc)
            for (int k = 0; k < n; k++) {
                const int j = J[k];
                const float rr = sqrtf(R2[k]), q = hh - rr;
                rho += MA[MM[j]] * (q * q * q); /* Eq. 4 */
                /* Eq. 21, the Clavet solver's pair form: antisymmetric, so heat is conserved */
                acc += 0.5f * (Di + DF[MM[j]]) * (1.0f - rr * inv_h) * (T[j] - Ti);
            }
        } else {
#pragma omp simd reduction(+ : rho)
            for (int k = 0; k < n; k++) {
                const float q = hh - sqrtf(R2[k]);
                rho += MA[MM[J[k]]] * (q * q * q); /* Eq. 4 */
            }
        }
        rho = w6 * (rho + c->mass[m] * (c->h * c->h * c->h));
        {
            const float dd[6] = {p->x[i] - w->dom.box_min.x, w->dom.box_max.x - p->x[i], p->y[i] - w->dom.box_min.y,
                                 w->dom.box_max.y - p->y[i], p->z[i] - w->dom.box_min.z, w->dom.box_max.z - p->z[i]};
            float wsum = 0;
            for (int a = 0; a < 6; a++) wsum += wall_tab(c->wf, dd[a], inv_h);
            rho += c->rho0[m] * wsum; /* the walls' boundary particles */
        }
        u->rho[i] = rho;
        const float pr = c->k * (rho - c->rho0[m]); /* Eq. 9 */
        u->prs[i] = pr > 0.0f ? pr : 0.0f;
        u->q[i] = u->prs[i] / (rho * rho);
        u->ms[i] = c->mass[m];
        u->ri[i] = c->mass[m] / rho;
        u->mu[i] = c->rho0[m] * u->nu[p->slot[i]];
        u->lab[i] = u->comp[p->slot[i]];
        w->dT[i] = acc;

        /* elasticity (unified_elastic.c) */
        const int s = p->slot[i];
        u->hasA[i] = 0;
        if (u->kind[s] == ELASTIC && u->bn[s] != 0 && !(u->young[s] <= 0.0f)) fs__unified_elastic_stress(x, i);
    }
}

/* wall: a penalty spring-damper on the centre against each face of the
 * box shrunk by the particle radius (w->lo, w->hi) */
static inline float wall_acc(float x, float v, float lo, float hi, float kw, float om) {
    float a = 0;
    if (x < lo) a += kw * (lo - x) - (v < 0 ? om * v : 0);
    if (x > hi) a -= kw * (x - hi) + (v > 0 ? om * v : 0);
    return a;
}

/* Elasticity, Eq. 12 and 16, with the matrices A of unified_elastic.c:
 * F_i = sum_j (A_j d_ji - A_i d_ij), d_ij = vbar_j g_ij, d_ji = -vbar_i g_ij,
 * g_ij = grad W(x_ij) */
static inline void elastic_force(const uctx *x, int i, float f[3]) {
    const fs_world *w = x->w;
    const ustate *u = x->u;
    const uconst *c = &x->c;
    const int si = w->p.slot[i], nb = u->bn[si];
    const float h = c->h;
    const int32_t *BJ = u->bj + (size_t)si * KB;
    const float *RX = u->rx + (size_t)si * KB, *RY = u->ry + (size_t)si * KB, *RZ = u->rz + (size_t)si * KB;
    const float vbi = u->vbar[si];
    const float *Ai = u->A + (size_t)i * 9;
    const bool hai = u->hasA[i];
    float fx = 0, fy = 0, fz = 0;
    for (int k = 0; k < nb; k++) {
        const int j = w->slot_index[BJ[k]];
        const bool haj = u->hasA[j];
        if (!hai && !haj) continue;
        const float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
        if (!(L > 1e-9f) || L >= h) continue;
        const float gm = c->cg * cos_g(L, h) / L;
        const float g[3] = {gm * RX[k], gm * RY[k], gm * RZ[k]};
        const float vbj = u->vbar[BJ[k]];
        const float *Aj = u->A + (size_t)j * 9;
        float M[9];
        for (int q = 0; q < 9; q++) M[q] = (haj ? vbi * Aj[q] : 0.0f) + (hai ? vbj * Ai[q] : 0.0f);
        fx -= M[0] * g[0] + M[1] * g[1] + M[2] * g[2];
        fy -= M[3] * g[0] + M[4] * g[1] + M[5] * g[2];
        fz -= M[6] * g[0] + M[7] * g[1] + M[8] * g[2];
    }
    f[0] = fx, f[1] = fy, f[2] = fz;
}

/* S2: accelerations: pressure (Eq. 7) and viscosity (Eq. 8) over the SPH
 * neighbours, elasticity (Eq. 12, 16) over the body neighbours, gravity and
 * the walls; a = f / rho (Eq. 6). */
FS_SIMD_CLONES static void force_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const float *X = p->x, *Y = p->y, *Z = p->z, *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float h = c->h, gsp = c->gsp, lap = c->lap;
    const float *Q = u->q, *MU = u->mu;
    const int32_t *LAB = u->lab;
    const float kw = WALL_K * c->k * c->inv_h * c->inv_h, om = sqrtf(kw);
    for (int i = b; i < e; i++) {
        const int32_t *list;
        const int n = fs__neighbours_of(w, i, c->h2, &r, &sc, &list);
        const int m = p->mat[i], si = p->slot[i];
        const float xi = X[i], yi = Y[i], zi = Z[i], vxi = VX[i], vyi = VY[i], vzi = VZ[i];
        const float qi = Q[i], mui = MU[i], irhoi = 1.0f / u->rho[i];
        const int32_t ci = LAB[i];
        const float *MS = u->ms, *RI = u->ri;
        float ax = 0, ay = 0, az = 0;
        int coincident = 0;
        /* Eq. 7 / rho_i in Monaghan's symmetric form (the paper's ref. 1):
         * a_i = -sum_j m_j (p_i / rho_i^2 + p_j / rho_j^2) grad W(r_ij), the
         * gradient of Eq. 4's density, so pressure work is conservative
         * (Eq. 7 as printed is not: docs/sim-notes.md).  -grad W(r_ij) = gsp (h - r)^2 r_ij / r.
         * Eq. 8 / rho_i with the viscosity kernel's Laplacian on the lattice.
         * Pairs inside one rigid body are skipped (Sec. "Rigid Bodies"). */
#pragma omp simd reduction(+ : ax, ay, az, coincident)
        for (int k = 0; k < n; k++) {
            const int j = list[k];
            const float dx = xi - X[j], dy = yi - Y[j], dz = zi - Z[j]; /* r_ij */
            const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            const float inv = rr > 1e-9f ? 1.0f / rr : 0.0f;
            coincident += rr <= 1e-9f;
            const float keep = (float)((LAB[j] != ci) | (ci < 0));
            const float hr = h - rr;
            const float f = keep * MS[j] * (qi + Q[j]) * gsp * hr * hr * inv;
            const float vv = keep * 0.5f * (mui + MU[j]) * RI[j] * irhoi * lap * hr;
            ax += f * dx + vv * (VX[j] - vxi);
            ay += f * dy + vv * (VY[j] - vyi);
            az += f * dz + vv * (VZ[j] - vzi);
        }
        if (coincident) /* rare: pairs at one point push along a direction drawn from their ids */
            for (int k = 0; k < n; k++) {
                const int j = list[k];
                float dx = xi - X[j], dy = yi - Y[j], dz = zi - Z[j];
                if (sqrtf(dx * dx + dy * dy + dz * dz) > 1e-9f || (ci >= 0 && LAB[j] == ci)) continue;
                fs__coincident_dir(p, j, i, 31, &dx, &dy, &dz);
                const float f = MS[j] * (qi + Q[j]) * gsp * h * h;
                ax += f * dx, ay += f * dy, az += f * dz;
            }
        if (u->bn[si]) { /* elasticity, Eq. 12 and 16 */
            float fe[3];
            elastic_force(x, i, fe);
            const float im = 1.0f / c->mass[m];
            ax += fe[0] * im, ay += fe[1] * im, az += fe[2] * im;
        }
        /* walls: Eq. 7 against their boundary particles (same form), the
         * spring-damper, and for solid particles Coulomb friction
         * (FS_P_FRICTION, as Eq. 11 of Clavet's walls) on the velocity along
         * each face pressing on it, never more than stops the particle in
         * this internal step (liquids slip: their viscosity acts among them) */
        const float X3[3] = {xi, yi, zi}, V3[3] = {vxi, vyi, vzi};
        const float lo3[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
        const float hi3[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
        const float slo[3] = {w->lo.x, w->lo.y, w->lo.z}, shi[3] = {w->hi.x, w->hi.y, w->hi.z};
        const float pr = qi * c->rho0[m], ih = c->inv_h, mu = u->kind[si] != LIQUID ? c->mu[m] : 0.0f;
        float acc[3] = {ax, ay, az}, press[3];
        for (int a = 0; a < 3; a++) {
            float f = qi > 0.0f ? pr * (wall_tab(c->wg, X3[a] - lo3[a], ih) - wall_tab(c->wg, hi3[a] - X3[a], ih)) : 0;
            f += wall_acc(X3[a], V3[a], slo[a], shi[a], kw, om);
            press[a] = fabsf(f);
            acc[a] += f;
        }
        if (mu > 0.0f)
            for (int a = 0; a < 3; a++) {
                if (press[a] <= 0.0f) continue;
                const float vt[3] = {a == 0 ? 0 : V3[0], a == 1 ? 0 : V3[1], a == 2 ? 0 : V3[2]};
                const float vn = sqrtf(vt[0] * vt[0] + vt[1] * vt[1] + vt[2] * vt[2]);
                if (vn <= 0.0f) continue;
                const float dec = fminf(mu * press[a], vn / x->dt) / vn;
                for (int q = 0; q < 3; q++) acc[q] -= dec * vt[q];
            }
        ax = acc[0] + c->g.x, ay = acc[1] + c->g.y, az = acc[2] + c->g.z;
        u->ax[i] = ax, u->ay[i] = ay, u->az[i] = az;
    }
}

/* S3: leap-frog in kick-drift form for liquid and elastic particles */
static void integrate_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    const float dt = x->dt;
    for (int i = b; i < e; i++) {
        if (u->comp[p->slot[i]] >= 0) continue;
        p->vx[i] += dt * u->ax[i], p->vy[i] += dt * u->ay[i], p->vz[i] += dt * u->az[i];
        p->x[i] += dt * p->vx[i], p->y[i] += dt * p->vy[i], p->z[i] += dt * p->vz[i];
    }
}

/* How far the point lies outside the box of grid cell c (0 inside). */
static inline float cell_gap(const fs_world *w, int c, const float X[3]) {
    const int ci[3] = {c % w->gx, (c / w->gx) % w->gy, c / (w->gx * w->gy)};
    const float o[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
    float gap = 0;
    for (int a = 0; a < 3; a++) {
        const float lo = o[a] + (float)ci[a] * w->cs, hi = lo + w->cs;
        gap = fmaxf(gap, fmaxf(lo - X[a], X[a] - hi));
    }
    return gap;
}

/* S5: mesh obstacles as static bodies (Clavet 2005 Eq. 9-12, obstacles.c;
 * liquids slip, as at the walls), the box (a particle that passed the
 * wall's spring is put back and loses its velocity into the wall), repair,
 * speed limit, temperature; with shape bodies, how far the particles moved
 * out of their grid cells in this internal step (the bodies find them in
 * that grid). */
static void finish_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    const float dt = x->dt, vmax = w->max_speed, slack = 0.5f * w->dom.particle_radius, R = w->dom.particle_radius;
    const float l[3] = {w->lo.x - slack, w->lo.y - slack, w->lo.z - slack};
    const float hgh[3] = {w->hi.x + slack, w->hi.y + slack, w->hi.z + slack};
    const fs_vec3 mid = {0.5f * (w->lo.x + w->hi.x), 0.5f * (w->lo.y + w->hi.y), 0.5f * (w->lo.z + w->hi.z)};
    uint64_t bad = 0, clamped = 0;
    float drift = 0;
    for (int i = b; i < e; i++) {
        float X[3] = {p->x[i], p->y[i], p->z[i]}, V[3] = {p->vx[i], p->vy[i], p->vz[i]};
        float sp2 = V[0] * V[0] + V[1] * V[1] + V[2] * V[2];
        if (!(isfinite(sp2) && isfinite(X[0]) && isfinite(X[1]) && isfinite(X[2]))) {
            bool pf = isfinite(p->px[i]) && isfinite(p->py[i]) && isfinite(p->pz[i]);
            X[0] = pf ? p->px[i] : mid.x, X[1] = pf ? p->py[i] : mid.y, X[2] = pf ? p->pz[i] : mid.z;
            V[0] = V[1] = V[2] = 0;
            bad++;
        } else if (sp2 > vmax * vmax) {
            float f = vmax / sqrtf(sp2);
            V[0] *= f, V[1] *= f, V[2] *= f;
        }
        if (w->nobstacles) {
            const int m = p->mat[i];
            const float mu = u->kind[p->slot[i]] != LIQUID ? x->c.mu[m] : 0.0f;
            float moved[3] = {0, 0, 0};
            fs__obstacles_particle(w, R, mu, x->c.stick_d[m], x->c.stick_k[m], dt, X, V, moved);
        }
        for (int a = 0; a < 3; a++) {
            if (X[a] < l[a]) {
                X[a] = l[a], V[a] = V[a] < 0 ? 0 : V[a];
                clamped++;
            } else if (X[a] > hgh[a]) {
                X[a] = hgh[a], V[a] = V[a] > 0 ? 0 : V[a];
                clamped++;
            }
        }
        p->x[i] = X[0], p->y[i] = X[1], p->z[i] = X[2];
        p->vx[i] = V[0], p->vy[i] = V[1], p->vz[i] = V[2];
        if (w->nbodies) drift = fmaxf(drift, cell_gap(w, w->cell[i], X));
        float T = fs__heat_update(w, p->temp[i], x->c.heat, w->dT[i], X[0], X[1], X[2], dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    u->nonfinite[worker] += bad;
    u->clamped[worker] += clamped;
    u->drift[worker] = fmaxf(u->drift[worker], drift);
}

static void save_pos_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    fs_particles *p = &((uctx *)vctx)->w->p;
    for (int i = b; i < e; i++) p->px[i] = p->x[i], p->py[i] = p->y[i], p->pz[i] = p->z[i];
}

/* ---- the step -------------------------------------------------------------- */
static int substeps_for(const fs_world *w, const uctx *x) {
    const ustate *u = x->u;
    float v2 = 0, nu = 0, c2 = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++)
        v2 = fmaxf(v2, u->vmax[k]), nu = fmaxf(nu, u->numax[k]), c2 = fmaxf(c2, u->cmax[k]);
    const float h = w->h, cfl = u->cfl;
    float dt = cfl * h / (SOUND + sqrtf(v2));
    if (c2 > 0) dt = fminf(dt, cfl * h / sqrtf(c2));
    if (nu > 0) dt = fminf(dt, VISC_LIM * h * h / nu);
    float n = ceilf(w->dt / dt);
    if (!(n >= 1.0f)) n = 1.0f;
    return n > (float)MAX_SUB ? MAX_SUB : (int)n;
}

/* the grid, timed in the GRID phase */
static void grid_build_timed(fs_world *w) {
    const double t = fs__now_ms();
    fs__grid_build(w);
    w->st.phase_ms[FS_PHASE_GRID] += fs__now_ms() - t;
}

/* A particle a body pushed past the box is put back and loses its velocity
 * into the wall, as finish_task does. */
static void body_clamp_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    const float slack = 0.5f * w->dom.particle_radius;
    const float l[3] = {w->lo.x - slack, w->lo.y - slack, w->lo.z - slack};
    const float hgh[3] = {w->hi.x + slack, w->hi.y + slack, w->hi.z + slack};
    float *X[3] = {p->x, p->y, p->z}, *V[3] = {p->vx, p->vy, p->vz};
    uint64_t clamped = 0;
    for (int i = b; i < e; i++)
        for (int a = 0; a < 3; a++) {
            if (X[a][i] < l[a]) {
                X[a][i] = l[a], V[a][i] = V[a][i] < 0 ? 0 : V[a][i];
                clamped++;
            } else if (X[a][i] > hgh[a]) {
                X[a][i] = hgh[a], V[a][i] = V[a][i] > 0 ? 0 : V[a][i];
                clamped++;
            }
        }
    u->clamped[worker] += clamped;
}

/* Shape bodies (body_step.c, Algorithm 6 of Clavet 2005) at the end of an
 * internal step, as the obstacles and the walls are met: the impulses
 * change the particles' own velocities, and liquids slip (mu = 0) as they
 * do at the walls and the obstacles; solids take their material's
 * friction.  The bodies find their particles in the internal step's grid,
 * each over its reach grown by how far a particle moved out of its cell
 * since (finish_task); the next internal step builds the grid again. */
static void shape_bodies(fs_world *w, uctx *x) {
    const double t = fs__now_ms();
    ustate *u = x->u;
    const uconst *c = &x->c;
    float drift = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++) drift = fmaxf(drift, u->drift[k]), u->drift[k] = 0;
    const fs_body_coupling k = {w->dom.particle_radius, c->mu, c->stick_d, c->stick_k, c->mass, true, u->kind, drift};
    if (fs__bodies_step(w, x->dt, &k, fs__run) > 0) fs__run(w, body_clamp_task, x, w->n);
    w->st.phase_ms[FS_PHASE_COLLIDE] += fs__now_ms() - t;
}

static void unified_step(fs_world *w) {
    double t0 = fs__now_ms(), t;
    ustate *u = st_of(w);
    double *ph = w->st.phase_ms;
    for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] = 0;
    uctx c;
    memset(&c, 0, sizeof c);
    c.w = w, c.u = u;
    uconst_init(w, &c.c);

    fs__emit_and_drain(w);
    grid_build_timed(w);

    t = fs__now_ms();
    fs__unified_topology(w, &c);
    const int nsub = substeps_for(w, &c);
    c.dt = w->dt / (float)nsub;
    u->last_sub = nsub, u->last_dt = c.dt;
    fs__run(w, save_pos_task, &c, w->n);
    ph[FS_PHASE_SPRINGS] += fs__now_ms() - t;

    for (int k = 0; k < nsub; k++) {
        if (k > 0) grid_build_timed(w);
        t = fs__now_ms();
        fs__run(w, density_task, &c, w->n);
        fs__run(w, force_task, &c, w->n);
        ph[FS_PHASE_RELAX] += fs__now_ms() - t;
        t = fs__now_ms();
        fs__run(w, integrate_task, &c, w->n);
        fs__unified_rigid_solve(w, &c);
        if (u->ncomp) fs__run(w, fs__unified_rigid_move_task, &c, w->n);
        fs__run(w, finish_task, &c, w->n);
        ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
        if (w->nbodies) shape_bodies(w, &c);
        fs__probes_substep(w, c.dt);
    }

    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += u->nonfinite[k], u->nonfinite[k] = 0;
        w->st.escapes_clamped += u->clamped[k], u->clamped[k] = 0;
        w->st.springs_refused += u->refused[k], u->refused[k] = 0;
    }
    w->st.solver_iterations = nsub;
    w->st.sim_time += w->dt;
    w->st.step_ms = fs__now_ms() - t0;
}

/* ---- lifetime --------------------------------------------------------------- */
static void unified_detach(fs_world *w) {
    ustate *u = st_of(w);
    if (!u) return;
    free(u->uid), free(u->was), free(u->bn), free(u->bj), free(u->rx), free(u->ry), free(u->rz), free(u->ep);
    free(u->vbar), free(u->comp), free(u->uf);
    free(u->rho), free(u->prs), free(u->ax), free(u->ay), free(u->az), free(u->nu), free(u->young), free(u->cut);
    free(u->A), free(u->kind), free(u->fresh), free(u->hasA), free(u->rb);
    free(u->q), free(u->mu), free(u->ms), free(u->ri), free(u->lab);
    fs__solver_state_free(w);
}

static fs_status unified_attach(fs_world *w, fs_error *err) {
    ustate *u = fs__solver_state_new(w, sizeof *u);
    if (!u) goto nomem;
    size_t n = (size_t)w->cap, f = sizeof(float) * n;
    u->uid = malloc(sizeof(uint32_t) * n), u->was = calloc(n, 1), u->bn = calloc(n, 1);
    u->bj = malloc(sizeof(int32_t) * n * KB);
    u->rx = malloc(f * KB), u->ry = malloc(f * KB), u->rz = malloc(f * KB);
    u->ep = calloc(n * 6, sizeof(float));
    u->vbar = calloc(n, sizeof(float)), u->comp = malloc(sizeof(int32_t) * n), u->uf = malloc(sizeof(int32_t) * n);
    u->rho = malloc(f), u->prs = malloc(f), u->ax = malloc(f), u->ay = malloc(f), u->az = malloc(f);
    u->nu = malloc(f), u->young = malloc(f), u->cut = malloc(f);
    u->A = malloc(f * 9), u->kind = calloc(n, 1), u->fresh = calloc(n, 1), u->hasA = calloc(n, 1);
    u->rb = malloc(sizeof(double) * RB_N * n);
    u->q = malloc(f), u->mu = malloc(f), u->ms = malloc(f), u->ri = malloc(f), u->lab = malloc(sizeof(int32_t) * n);
    if (!(u->q && u->mu && u->ms && u->ri && u->lab && u->uid && u->bj && u->rx && u->ry && u->rz && u->ep && u->vbar &&
          u->comp && u->uf && u->rho && u->prs && u->ax && u->ay && u->az && u->nu && u->young && u->cut && u->A &&
          u->kind && u->fresh && u->hasA && u->rb && u->was && u->bn)) {
        unified_detach(w);
        goto nomem;
    }
    for (size_t s = 0; s < n; s++) u->uid[s] = STALE, u->comp[s] = -1;
    u->cfl = CFL;
    return FS_OK;
nomem:
    SETERR(err, "unified solver: out of memory for %d particles", w->cap);
    return FS_ERR_NOMEM;
}

/* Reference shapes from the current configuration: every solid particle
 * takes its solid neighbours within h as body neighbours. */
static void unified_prepare(fs_world *w) {
    ustate *u = st_of(w);
    if (!u) return;
    /* free slots (all of them after a reset, which restarts the ids) hold
     * no state */
    for (int s = 0; s < w->cap; s++)
        if (w->slot_index[s] < 0) u->uid[s] = STALE, u->bn[s] = 0, u->was[s] = 0;
    fs__grid_build(w);
    uctx c;
    memset(&c, 0, sizeof c);
    c.w = w, c.u = u, c.prepare = true;
    uconst_init(w, &c.c);
    fs__unified_topology(w, &c);
}

/* drop every reference to the removed slot */
static void unified_removed(fs_world *w, int slot) {
    ustate *u = st_of(w);
    if (!u) return;
    const int32_t *J = u->bj + (size_t)slot * KB;
    for (int k = 0; k < u->bn[slot]; k++) {
        int t = J[k], n = u->bn[t];
        int32_t *T = u->bj + (size_t)t * KB;
        float *RX = u->rx + (size_t)t * KB, *RY = u->ry + (size_t)t * KB, *RZ = u->rz + (size_t)t * KB;
        for (int q = 0; q < n; q++) {
            if (T[q] != slot) continue;
            size_t rest = (size_t)(n - q - 1);
            memmove(T + q, T + q + 1, rest * sizeof *T);
            memmove(RX + q, RX + q + 1, rest * sizeof *RX);
            memmove(RY + q, RY + q + 1, rest * sizeof *RY);
            memmove(RZ + q, RZ + q + 1, rest * sizeof *RZ);
            u->bn[t] = (uint8_t)(n - 1);
            break;
        }
    }
    u->bn[slot] = 0, u->uid[slot] = STALE, u->was[slot] = 0;
}

/* ---- snapshot section ---------------------------------------------------------
 * u32 magic, u32 KB, u32 count; then per live particle in index order: i32
 * slot, u32 uid, u8 was, u8 bn, bn x (i32 partner slot, 3 f32 reference),
 * 6 f32 plastic strain. */
static size_t put(uint8_t *buf, size_t at, size_t cap, const void *v, size_t n) {
    if (buf && at + n <= cap) memcpy(buf + at, v, n);
    return at + n;
}

static size_t unified_state_write(const fs_world *w, void *vbuf, size_t cap) {
    const ustate *u = st_of(w);
    uint8_t *buf = vbuf;
    size_t at = 0;
    uint32_t hdr[3] = {SNAP_MAGIC_U, KB, (uint32_t)w->n};
    at = put(buf, at, cap, hdr, sizeof hdr);
    for (int i = 0; i < w->n; i++) {
        int32_t s = w->p.slot[i];
        uint8_t was = u ? u->was[s] : 0, bn = u ? u->bn[s] : 0;
        uint32_t uid = u ? u->uid[s] : STALE;
        at = put(buf, at, cap, &s, 4);
        at = put(buf, at, cap, &uid, 4);
        at = put(buf, at, cap, &was, 1);
        at = put(buf, at, cap, &bn, 1);
        for (int k = 0; k < bn; k++) {
            size_t q = (size_t)s * KB + (size_t)k;
            at = put(buf, at, cap, &u->bj[q], 4);
            at = put(buf, at, cap, &u->rx[q], 4);
            at = put(buf, at, cap, &u->ry[q], 4);
            at = put(buf, at, cap, &u->rz[q], 4);
        }
        float ep[6] = {0};
        if (u) memcpy(ep, u->ep + (size_t)s * 6, sizeof ep);
        at = put(buf, at, cap, ep, sizeof ep);
    }
    return at;
}

static fs_status bad(fs_error *err, const char *what, long a) {
    SETERR(err, "snapshot: unified solver state: %s (%ld)", what, a);
    return FS_ERR_ARG;
}

static fs_status unified_state_read(fs_world *w, const void *vbuf, size_t n, const fs__restore_ctx *rc, fs_error *err) {
    const bool apply = rc->apply;
    const float rmax = 100.0f * rc->dom->h;
    const uint8_t *b = vbuf;
    size_t at = 0;
#define TAKE(dst, len)                                                                                                 \
    do {                                                                                                               \
        if (at + (len) > n) return bad(err, "truncated at byte", (long)at);                                            \
        memcpy((dst), b + at, (len));                                                                                  \
        at += (len);                                                                                                   \
    } while (0)
    uint32_t hdr[3];
    TAKE(hdr, sizeof hdr);
    if (hdr[0] != SNAP_MAGIC_U) return bad(err, "wrong magic", (long)hdr[0]);
    if (hdr[1] != KB) return bad(err, "body neighbours per particle differ", (long)hdr[1]);
    if (hdr[2] != (uint32_t)rc->particles) return bad(err, "not one entry per particle", (long)hdr[2]);
    ustate *u = st_of(w);
    if (apply) {
        if (!u) return bad(err, "solver not attached", 0);
        for (int s = 0; s < w->cap; s++) u->uid[s] = STALE, u->bn[s] = 0, u->was[s] = 0;
    }
    for (uint32_t i = 0; i < hdr[2]; i++) {
        int32_t s;
        uint32_t uid;
        uint8_t was, bn;
        TAKE(&s, 4);
        TAKE(&uid, 4);
        TAKE(&was, 1);
        TAKE(&bn, 1);
        if (s < 0 || s >= w->cap) return bad(err, "slot out of range", (long)s);
        if (was > 1) return bad(err, "bad phase flag", (long)was);
        if (bn > KB) return bad(err, "too many body neighbours", (long)bn);
        int32_t prev = -1;
        for (int k = 0; k < bn; k++) {
            int32_t j;
            float r[3];
            TAKE(&j, 4);
            TAKE(r, sizeof r);
            /* the lists are sorted (fs__sorted_has bisects them) */
            if (j < 0 || j >= w->cap || j == s || j <= prev)
                return bad(err, "body neighbour slot out of range or out of order", (long)j);
            prev = j;
            if (!(fabsf(r[0]) <= rmax && fabsf(r[1]) <= rmax && fabsf(r[2]) <= rmax))
                return bad(err, "reference vector not finite or longer than 100 h", (long)i);
            if (apply) {
                size_t q = (size_t)s * KB + (size_t)k;
                u->bj[q] = j, u->rx[q] = r[0], u->ry[q] = r[1], u->rz[q] = r[2];
            }
        }
        float ep[6];
        TAKE(ep, sizeof ep);
        for (int q = 0; q < 6; q++)
            if (!(fabsf(ep[q]) <= 1e6f)) return bad(err, "plastic strain not finite or above 1e6", (long)i);
        if (apply) {
            u->uid[s] = uid, u->was[s] = was, u->bn[s] = bn;
            memcpy(u->ep + (size_t)s * 6, ep, sizeof ep);
        }
    }
#undef TAKE
    if (at != n) return bad(err, "trailing bytes", (long)(n - at));
    return FS_OK;
}

/* ---- diagnostics for tests and benchmarks ------------------------------------ */
void fs__unified_set_cfl(fs_world *w, float cfl) {
    ustate *u = st_of(w);
    if (u && w->solver == FS_SOLVER_UNIFIED && cfl > 0) u->cfl = cfl;
}

int fs__unified_last_substeps(const fs_world *w, float *dt) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (dt) *dt = u ? u->last_dt : 0;
    return u ? u->last_sub : 0;
}

/* Density against rest density (rho / rho-hat) at the last internal step,
 * over the particles with at least 20 neighbours (not at a free surface):
 * the mean, and the largest through *max. */
float fs__unified_density_ratio(const fs_world *w, float *max) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (max) *max = 0;
    if (!u) return 0;
    double sum = 0;
    float big = 0;
    int cnt = 0;
    for (int i = 0; i < w->n; i++) {
        if (w->nb_n[i] >= 0 && w->nb_n[i] < 20) continue;
        float q = u->rho[i] / w->mat[w->p.mat[i]].p[FS_P_MASS_DENSITY];
        sum += q, cnt++;
        big = q > big ? q : big;
    }
    if (max) *max = big;
    return cnt ? (float)(sum / cnt) : 0;
}

/* Largest Frobenius norm of the Green-Saint-Venant strain over the elastic
 * particles (positions now, reference shapes as stored). */
float fs__unified_max_strain(const fs_world *w) {
    const ustate *u = w->solver == FS_SOLVER_UNIFIED ? st_of(w) : NULL;
    if (!u) return 0;
    uconst c;
    uconst_init(w, &c);
    const fs_particles *p = &w->p;
    float worst = 0;
    for (int i = 0; i < w->n; i++) {
        if (!u->bn[p->slot[i]]) continue;
        float G[3][3], eps[3][3];
        fs__unified_grad_u(w, u, &c, i, G);
        fs__unified_strain(G, eps);
        float sum = 0;
        for (int a = 0; a < 3; a++)
            for (int bb = 0; bb < 3; bb++) sum += eps[a][bb] * eps[a][bb];
        worst = fmaxf(worst, sqrtf(sum));
    }
    return worst;
}

const fs_solver_ops fs__unified_ops = FS_SOLVER_OPS(
    unified, "unified",
    "Solenthaler, Schlafli, Pajarola 2007: SPH liquids, elastic and rigid bodies, melting and solidification");
