/* clavet_springs.c - the Clavet solver's springs: viscoelasticity
 * (Clavet et al. 2005, Sec. 5, Algorithm 4's spring adjustment with Eq. 7-8
 * plasticity, in three gathers, then Algorithm 3's displacements), and the
 * phase change that makes and melts them (solidity from temperature,
 * freezing springs).  The coloured sweeps project the elastic springs
 * themselves (clavet_colour.c); here Algorithm 3 then moves only the
 * plastic ones. */
#include "clavet_internal.h"

/* ---- temperature and springs (the phase change, for this solver) -------
 * A material with a phase change has a solidity s = 1 below its
 * solidification point, 0 above its melting point, linear between.  Its
 * springs hold while s > 0 (a material without one: while it has springs),
 * yield faster as s falls (plasticity + (1 - s) SOFT_ALPHA), and break at
 * s = 0.  A particle that becomes fully solid freezes to its fully solid
 * neighbours: springs at their current distance.  An extension of the paper
 * in the spirit of Fig. 12's mold. */
#define SOFT_ALPHA 20.0f /* 1/s */

static inline bool holds(const mconst *m, int mat, float s) {
    return m->phase[mat] ? s > 0.0f : m->springs[mat];
}

static inline bool may_add(const step_ctx *c, const fs_world *w, int i) {
    int m = w->p.mat[i];
    return c->m.add[m] || (c->freezing && c->m.phase[m] && w->solid[i] >= 1.0f);
}

/* 0: no new spring between i and j; 1: Alg. 4 (rest length h); 2: freezing
 * (rest length r).  Symmetric in (i, j). */
static inline int new_spring(const step_ctx *c, const fs_world *w, int i, int j) {
    int mi = w->p.mat[i], mj = w->p.mat[j];
    if (c->freezing && c->m.phase[mi] && c->m.phase[mj] && w->solid[i] >= 1.0f && w->solid[j] >= 1.0f &&
        (!w->p.frozen[i] || !w->p.frozen[j]))
        return 2;
    return (c->m.add[mi] && c->m.add[mj]) ? 1 : 0;
}

/* ---- springs: Algorithm 4 (adjust) in three gathers, then Algorithm 3 --- */

/* The neighbours of i within h at the current positions, into sc.j and sc.r2. */
static inline int scan_within_h(const step_ctx *c, int i, fs_ranges *r, const fs_scratch *sc) {
    const fs_world *w = c->w;
    fs__ranges_of(w, w->cell[i], r);
    return fs__scan(w->p.x, w->p.y, w->p.z, r, i, c->h2, false, sc->j, sc->r2, NULL, NULL, NULL);
}

/* S1: Eq. 8 rest-length update of every existing spring, and Alg. 4 lines
 * 12-14 removal (L > h), plus removal when stretched past the break length or
 * when a material no longer has springs.  Both ends compute the same numbers
 * from the same inputs, so the two copies stay identical. */
static void spring_plastic_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const int K = w->K;
    const float h = c->h;
    for (int i = b; i < e; i++) {
        int s = p->slot[i];
        int n = w->spr_n[s], m = 0;
        int32_t *J = w->spr_j + (size_t)s * K;
        float *L = w->spr_L + (size_t)s * K;
        int mi = p->mat[i];
        const float si = w->solid[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            int mj = p->mat[j];
            const float sj = w->solid[j];
            if (!holds(&c->m, mi, si) || !holds(&c->m, mj, sj)) continue; /* melted, or springs off */
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            float Lk = L[k];
            float alpha = 0.5f * (c->m.alpha[mi] + c->m.alpha[mj]);
            /* warming towards the melting point makes the material yield */
            if (c->m.phase[mi] || c->m.phase[mj]) alpha += (1.0f - (si < sj ? si : sj)) * SOFT_ALPHA * c->dt;
            float ys = 0.5f * (c->m.ys[mi] + c->m.ys[mj]), yc = 0.5f * (c->m.yc[mi] + c->m.yc[mj]);
            float brk = 0.5f * (c->m.brk[mi] + c->m.brk[mj]);
            /* Alg. 4 lines 7-11: tolerable deformation d = gamma L */
            float ds = ys * Lk, dc = yc * Lk;
            if (rr > Lk + ds)
                Lk += alpha * (rr - Lk - ds);
            else if (rr < Lk - dc)
                Lk -= alpha * (Lk - dc - rr);
            /* Alg. 4 lines 13-14 */
            if (Lk > h || rr > brk) continue;
            J[m] = J[k];
            L[m] = Lk;
            m++;
        }
        w->spr_n[s] = (uint16_t)m;
    }
}

/* S2: how many springs each particle would have if Alg. 4 line 5 added one
 * for every eligible neighbour within h. */
static void spring_count_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        int s = w->p.slot[i], n = w->spr_n[s];
        int total = n;
        if (may_add(c, w, i)) {
            const int32_t *J = w->spr_j + (size_t)s * w->K;
            int nn = scan_within_h(c, i, &r, &sc);
            for (int k = 0; k < nn; k++)
                if (new_spring(c, w, i, sc.j[k]) && !fs__sorted_has(J, n, w->p.slot[sc.j[k]])) total++;
        }
        c->s->spr_total[i] = total;
    }
}

/* S3: Alg. 4 line 5, add spring ij with rest length h.  A pair is added
 * only when both ends have room for all their candidates, so both ends make
 * the same decision without talking to each other. */
static void spring_add_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    const int K = w->K;
    fs_scratch sc = fs__scratch_of(w, worker);
    const int32_t *list = sc.j;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = b; i < e; i++) {
        int s = p->slot[i], n0 = w->spr_n[s];
        if (c->s->spr_total[i] == n0) continue;
        if (c->s->spr_total[i] > K) {
            c->s->spr_refused_worker[worker] += (uint64_t)(c->s->spr_total[i] - n0);
            continue;
        }
        int32_t *J = w->spr_j + (size_t)s * K;
        float *L = w->spr_L + (size_t)s * K;
        int n = n0;
        int nn = scan_within_h(c, i, &r, &sc);
        for (int k = 0; k < nn; k++) {
            int j = list[k];
            int kind = new_spring(c, w, i, j);
            if (!kind || c->s->spr_total[j] > K) continue;
            if (fs__sorted_has(J, n0, p->slot[j])) continue;
            J[n] = p->slot[j];
            /* Alg. 4 line 5 inserts at rest length h; a pair that freezes
             * together keeps the shape it froze in */
            L[n] = kind == 2 ? sqrtf(sc.r2[k]) : c->h;
            n++;
        }
        fs__sort_keyed(J, L, sizeof *L, n0, n); /* the appended tail into the sorted list */
        w->spr_n[s] = (uint16_t)n;
    }
}

/* Particle i's springs: partner slots and rest lengths; returns how many. */
static inline int springs_of(const fs_world *w, int i, const int32_t **J, const float **L) {
    const int s = w->p.slot[i];
    *J = w->spr_j + (size_t)s * w->K, *L = w->spr_L + (size_t)s * w->K;
    return w->spr_n[s];
}

/* Algorithm 3: D = dt^2 k_spring (1 - L/h)(L - r) r_ij; x_i -= D/2. */
static void spring_displace_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    for (int i = b; i < e; i++) {
        const int32_t *J;
        const float *L;
        const int n = springs_of(w, i, &J, &L);
        float ax = 0, ay = 0, az = 0;
        int mi = p->mat[i];
        for (int k = 0; k < n; k++) {
            int j = w->slot_index[J[k]];
            if (c->spr_pass != SPR_ALL && spring_elastic(c, w, i, j) != (c->spr_pass == SPR_ELASTIC)) continue;
            float dx = p->x[j] - p->x[i], dy = p->y[j] - p->y[i], dz = p->z[j] - p->z[i];
            float rr = sqrtf(dx * dx + dy * dy + dz * dz);
            if (rr < 1e-9f) {
                fs__coincident_dir(p, i, j, 21, &dx, &dy, &dz), rr = 0;
            } else {
                float inv = 1.0f / rr;
                dx *= inv, dy *= inv, dz *= inv;
            }
            float ks = 0.5f * (c->m.ks[mi] + c->m.ks[p->mat[j]]);
            float D = 0.5f * ks * (1.0f - L[k] * c->inv_h) * (L[k] - rr);
            ax -= D * dx, ay -= D * dy, az -= D * dz;
        }
        w->nx[i] = p->x[i] + ax, w->ny[i] = p->y[i] + ay, w->nz[i] = p->z[i] + az;
    }
}

static void solidity_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    uint64_t events = 0;
    for (int i = b; i < e; i++) {
        int m = p->mat[i];
        float s = 1.0f;
        if (c->m.phase[m]) {
            float T = p->temp[i], ts = c->m.tsolid[m], tm = c->m.tmelt[m];
            s = T <= ts ? 1.0f : (T >= tm ? 0.0f : (tm - T) / (tm - ts));
            events += s >= 1.0f && !p->frozen[i];
            /* no longer fully solid: clear now (nothing below reads it for
             * such a particle); becoming solid is recorded by frozen_task
             * after this step's freezing springs are made */
            if (s < 1.0f) p->frozen[i] = 0;
        }
        w->solid[i] = s;
    }
    c->freeze_events[worker] += events;
}

static void frozen_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    for (int i = b; i < e; i++)
        if (c->m.phase[w->p.mat[i]]) w->p.frozen[i] = w->solid[i] >= 1.0f;
}

void fs__clavet_springs(fs_world *w, step_ctx *c) {
    /* Alg. 4 insertion only when a material that inserts springs is present */
    bool any_add = false;
    for (int m = 0; m < w->nmat; m++) any_add |= c->m.add[m] && c->present[m];
    fs__run(w, solidity_task, c, w->n);
    uint64_t ev = 0;
    for (int k = 0; k < FS_MAX_WORKERS; k++) ev += c->freeze_events[k], c->freeze_events[k] = 0;
    c->freezing = ev > 0;
    any_add |= c->freezing;
    if (w->springs == 0 && !any_add) return; /* no freezing (it would be in any_add) */
    fs__run(w, spring_plastic_task, c, w->n);
    if (any_add) {
        fs__run(w, spring_count_task, c, w->n);
        fs__run(w, spring_add_task, c, w->n);
    }
    if (c->freezing) fs__run(w, frozen_task, c, w->n);
    long total = 0;
    for (int i = 0; i < w->n; i++) total += w->spr_n[w->p.slot[i]];
    w->springs = (int)(total / 2);
    if (w->springs == 0) return;
    /* coloured: the elastic springs are projected in the sweeps (fs__clavet_springs_colored) */
    c->spr_pass = c->colored ? SPR_PLASTIC : SPR_ALL;
    fs__run(w, spring_displace_task, c, w->n);
    swap_positions(w);
}

void fs__clavet_springs_elastic(fs_world *w, step_ctx *c) {
    c->spr_pass = SPR_ELASTIC;
    fs__run(w, spring_displace_task, c, w->n);
    swap_positions(w);
}
