/* unified_phase.c - the unified solver's phases and body neighbours, once
 * per step (Solenthaler, Schläfli & Pajarola 2007): each particle's state
 * from its temperature (liquid, elastic or rigid; "Temperature Effects",
 * Fig. 5), and its body neighbours ("locally undeformed object", Fig. 3):
 * melting splits, solidifying merges, overstretched pairs part ("Plasticity
 * and Fracture"), body volume (Eq. 11); then the rigid bodies are labelled
 * (unified_rigid.c).  Choices: docs/sim-notes.md, "Unified solver", "Body
 * neighbours". */
#include <math.h>
#include <string.h>

#include "unified_internal.h"

/* solidity (Fig. 5) */
static inline float solidity(const uconst *c, int m, float T) {
    if (!c->phase[m]) return c->always_solid[m] ? 1.0f : 0.0f;
    float ts = c->tsolid[m], tm = c->tmelt[m];
    return T <= ts ? 1.0f : (T >= tm ? 0.0f : (tm - T) / (tm - ts));
}

/* ---- phase and body neighbours (once per step) ------------------------------ */
/* P1: solidity, state, fresh slots; the viscosity and stiffness of the state
 * (Fig. 5); the time step's inputs (max speed, viscosity, wave speed). */
static void phase_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    float vmax = 0, numax = 0, cmax = 0;
    int anynew = 0, anysolid = 0, anyrigid = 0;
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], m = p->mat[i];
        if (x->prepare || u->uid[s] != p->id[i]) {
            u->uid[s] = p->id[i], u->bn[s] = 0, u->was[s] = 0;
            memset(u->ep + (size_t)s * 6, 0, 6 * sizeof(float));
        }
        const float sol = solidity(c, m, p->temp[i]);
        w->solid[i] = sol;
        p->frozen[i] = sol >= 1.0f;
        uint8_t kind = sol <= 0.0f ? LIQUID : ((sol >= 1.0f && c->rigid[m]) ? RIGID : ELASTIC);
        u->kind[s] = kind;
        u->fresh[i] = sol > 0.0f && !u->was[s];
        anynew |= u->fresh[i];
        anysolid |= sol > 0.0f || u->bn[s] > 0;
        anyrigid |= kind == RIGID;
        u->was[s] = sol > 0.0f;
        if (sol <= 0.0f) memset(u->ep + (size_t)s * 6, 0, 6 * sizeof(float));
        /* Fig. 5: viscosity and Young's modulus interpolated in the soft state */
        float nu = c->nu_l[m] + sol * (c->nu_s[m] - c->nu_l[m]);
        nu = fminf(nu, c->nu_cap);
        float E = kind == ELASTIC ? sol * c->E[m] : 0.0f;
        const float pv = c->pois[m];
        float Mw = E * (1.0f - pv) / ((1.0f + pv) * (1.0f - 2.0f * pv)) / c->rho0[m]; /* P-wave speed^2 */
        if (Mw > c->E_cap_over_rho) E *= c->E_cap_over_rho / Mw, Mw = c->E_cap_over_rho;
        u->nu[s] = nu;
        u->young[s] = E;
        float v2 = p->vx[i] * p->vx[i] + p->vy[i] * p->vy[i] + p->vz[i] * p->vz[i];
        if (v2 > vmax) vmax = v2;
        if (nu > numax) numax = nu;
        if (Mw > cmax) cmax = Mw;
    }
    if (vmax > u->vmax[worker]) u->vmax[worker] = vmax;
    if (numax > u->numax[worker]) u->numax[worker] = numax;
    if (cmax > u->cmax[worker]) u->cmax[worker] = cmax;
    u->anynew[worker] |= anynew, u->anysolid[worker] |= anysolid, u->anyrigid[worker] |= anyrigid;
}

/* P2: each particle prunes its own list (melted partner or self, fracture)
 * and, when new pairs may form, sets its budget: the squared distance below
 * which it accepts new body neighbours (all within h when they fit in KB,
 * else the nearest ones).  Both ends decide each pair from the same numbers. */
static void prune_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], mi = p->mat[i];
        int n = u->bn[s], keep = 0;
        int32_t *J = u->bj + (size_t)s * KB;
        float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        const float si = w->solid[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            if (si <= 0.0f || j < 0 || w->solid[j] <= 0.0f) continue; /* melted: splitting */
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float d2 = dx * dx + dy * dy + dz * dz;
            float L2 = RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k];
            float f = 0.5f * (c->frac[mi] + c->frac[p->mat[j]]);
            if (d2 > f * f * L2) continue; /* "Plasticity and Fracture": the pair parts */
            J[keep] = J[k], RX[keep] = RX[k], RY[keep] = RY[k], RZ[keep] = RZ[k];
            keep++;
        }
        u->bn[s] = (uint8_t)keep;
        u->cut[i] = 0.0f;
        if (!x->any_new || si <= 0.0f) continue;
        /* candidates: solid particles within h, one of the two newly solid,
         * not yet body neighbours */
        fs__ranges_of(w, w->cell[i], &r);
        int nn = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        int cnt = 0;
        float *cand = sc.dx; /* squared distances of the candidates */
        for (int k = 0; k < nn; k++) {
            int j = sc.j[k];
            if (w->solid[j] <= 0.0f || !(u->fresh[i] || u->fresh[j]) || fs__sorted_has(J, keep, p->slot[j])) continue;
            cand[cnt++] = sc.r2[k];
        }
        int budget = KB - keep;
        if (cnt <= budget) {
            u->cut[i] = INFINITY;
        } else {
            /* the (budget+1)-th smallest distance: strictly below it at most
             * budget candidates remain (partial selection sort) */
            for (int a = 0; a <= budget; a++) {
                int best = a;
                for (int q = a + 1; q < cnt; q++)
                    if (cand[q] < cand[best]) best = q;
                float t = cand[a];
                cand[a] = cand[best], cand[best] = t;
            }
            u->cut[i] = cand[budget];
            u->refused[worker] += (uint64_t)(cnt - budget);
        }
    }
}

/* P3: add the new body neighbours (both ends add the pair: it passes both
 * budgets), reference vector = current X_j - X_i ("If objects merge, the
 * reference distances of the new neighbors are added", Fig. 3). */
static void bond_task(int b, int e, int worker, void *vctx) {
    UNIFIED_TASK(vctx, worker);
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        if (u->cut[i] <= 0.0f) continue;
        const int s = p->slot[i];
        int n0 = u->bn[s], n = n0;
        int32_t *J = u->bj + (size_t)s * KB;
        float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        fs__ranges_of(w, w->cell[i], &r);
        int nn = fs__scan(p->x, p->y, p->z, &r, i, c->h2, false, sc.j, sc.r2, NULL, NULL, NULL);
        for (int k = 0; k < nn && n < KB; k++) {
            int j = sc.j[k];
            if (w->solid[j] <= 0.0f || !(u->fresh[i] || u->fresh[j])) continue;
            if (!(sc.r2[k] < u->cut[i] && sc.r2[k] < u->cut[j])) continue;
            if (fs__sorted_has(J, n0, p->slot[j])) continue;
            J[n] = p->slot[j];
            RX[n] = p->x[j] - p->x[i], RY[n] = p->y[j] - p->y[i], RZ[n] = p->z[j] - p->z[i];
            n++;
        }
        for (int a = n0; a < n; a++) { /* insertion into the sorted list */
            int32_t tj = J[a];
            float tx = RX[a], ty = RY[a], tz = RZ[a];
            int q = a;
            while (q > 0 && J[q - 1] > tj) {
                J[q] = J[q - 1], RX[q] = RX[q - 1], RY[q] = RY[q - 1], RZ[q] = RZ[q - 1];
                q--;
            }
            J[q] = tj, RX[q] = tx, RY[q] = ty, RZ[q] = tz;
        }
        u->bn[s] = (uint8_t)n;
    }
}

/* P4: body volume, Eq. 11, with the cosine kernel (Eq. 17) */
static void vbar_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    UNIFIED_TASK(vctx, worker);
    const float w0 = c->cw * cos_w(0.0f, c->h);
    for (int i = b; i < e; i++) {
        const int s = p->slot[i], n = u->bn[s];
        const float mi = c->mass[p->mat[i]];
        float sum = mi * w0;
        const int32_t *J = u->bj + (size_t)s * KB;
        const float *RX = u->rx + (size_t)s * KB, *RY = u->ry + (size_t)s * KB, *RZ = u->rz + (size_t)s * KB;
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            float L = sqrtf(RX[k] * RX[k] + RY[k] * RY[k] + RZ[k] * RZ[k]);
            if (L < c->h) sum += c->mass[p->mat[j]] * c->cw * cos_w(L, c->h);
        }
        u->vbar[s] = mi / sum;
    }
}

void fs__unified_topology(fs_world *w, uctx *x) {
    ustate *u = x->u;
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        u->vmax[k] = u->numax[k] = u->cmax[k] = 0;
        u->anynew[k] = u->anysolid[k] = u->anyrigid[k] = 0;
    }
    fs__run(w, phase_task, x, w->n);
    int anynew = 0, anysolid = 0, anyrigid = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++)
        anynew |= u->anynew[k], anysolid |= u->anysolid[k], anyrigid |= u->anyrigid[k];
    x->any_new = anynew;
    if (anysolid) {
        fs__run(w, prune_task, x, w->n);
        if (anynew) fs__run(w, bond_task, x, w->n);
        fs__run(w, vbar_task, x, w->n);
    }
    u->ncomp = 0;
    if (anyrigid)
        fs__unified_rigid_label(w, u);
    else
        for (int i = 0; i < w->n; i++) u->comp[w->p.slot[i]] = -1;
}
