/* body_step.c - Algorithm 6 of Clavet et al. 2005: rigid bodies coupled
 * both ways with the particles, with stickiness (Eq. 12), run inside
 * resolveCollisions (Alg. 1 line 17) after the relaxation:
 *   1. each body: save the pose, advance it with (V, w); collision impulses of
 *      the particles inside it are accumulated into force and torque;
 *   2. each body: V, w change by them; advance again from the saved pose;
 *      contacts between bodies and with the walls are resolved
 *      (body_contacts.c);
 *   3. each particle inside a body: the impulse of Eq. 9-11 (plus Eq. 12)
 *      with the body at infinite mass, then extraction if still inside. */
#include "bodies.h"
#include "body_internal.h"

/* ---- particles against bodies ----------------------------------------------- */
/* Eq. 9-11 (and Eq. 12): the impulse I that the particle at x with velocity
 * v receives from body b, as a velocity change: v += dv.  Returns false when
 * the particle is out of reach. */
static bool particle_impulse(const fs_world *w, const fs_body *b, v3 x, v3 v, float R, float mu, float stick_d,
                             float stick_k, float dt, v3 *dv, float *depth, v3 *normal) {
    v3 n;
    float d = sdf_world(w, b, x, &n) - R; /* distance of the particle's surface */
    if (d >= stick_d) return false;
    v3 vp = add(b->vel, cross(b->ang, sub(x, b->pos))); /* body velocity at x */
    v3 rel = sub(v, vp);
    float vn = dot(rel, n);
    v3 out = {0, 0, 0};
    if (d < 0 && vn < 0) {
        /* Eq. 9-11: cancel the approaching normal velocity, remove mu of the
         * tangential velocity */
        v3 vt = sub(rel, mul(n, vn));
        out = sub(out, add(mul(n, vn), mul(vt, mu)));
    }
    if (d > 0 && stick_k > 0) {
        /* Eq. 12: attraction towards the body, largest at stick_d / 2 */
        out = sub(out, mul(n, dt * stick_k * d * (1.0f - d / stick_d)));
    }
    *dv = out;
    *depth = d;
    *normal = n;
    return true;
}

typedef struct body_ctx {
    fs_world *w;
    float dt;
    const fs_body_coupling *k;
} body_ctx;

/* The grid cells (as x-runs) that the body's bounding sphere, grown by
 * `more`, overlaps. */
typedef struct cell_box {
    int x0, x1, y0, y1, z0, z1;
} cell_box;

static inline int clampi(int v, int lo, int hi) {
    return v < lo ? lo : (v > hi ? hi : v);
}

/* The body's reach may lie partly or wholly outside the box (step 1 tests
 * the advanced pose): both ends of each range are clamped into the grid, so
 * an empty or outside range scans nothing or only the nearest cells. */
static cell_box cells_near(const fs_world *w, const fs_body *b, float more) {
    float reach = b->bound + more;
    const v3 o = w->dom.box_min;
    float f[6] = {(b->pos.x - reach - o.x) * w->inv_cs, (b->pos.x + reach - o.x) * w->inv_cs,
                  (b->pos.y - reach - o.y) * w->inv_cs, (b->pos.y + reach - o.y) * w->inv_cs,
                  (b->pos.z - reach - o.z) * w->inv_cs, (b->pos.z + reach - o.z) * w->inv_cs};
    const int g[3] = {w->gx, w->gy, w->gz};
    int c[6];
    for (int k = 0; k < 6; k++) {
        float v = isfinite(f[k]) ? fminf(fmaxf(f[k], -1.0f), (float)g[k / 2]) : -1.0f; /* no int overflow */
        c[k] = clampi((int)floorf(v), 0, g[k / 2] - 1);
    }
    cell_box cb = {c[0], c[1], c[2], c[3], c[4], c[5]};
    return cb;
}

/* The particles within reach of body b, in index order (deterministic), each
 * against b with Eq. 9-12.  Returns the momentum the body receives (the
 * opposite of the particles') and its torque about the body's centre.
 * apply = false: Alg. 6 lines 5-7, the impulses are only summed (step 1, at
 * the advanced pose).  apply = true: lines 12-15, the body at infinite mass,
 * each particle is moved by its impulse and then extracted if still inside;
 * the torque is taken at the moved position.  A particle's velocity is its
 * own (velocities: it changes by the impulse) or (x - px) / dt (the impulse
 * changes it through x); *moved counts the particles moved. */
static void body_particles(body_ctx *c, const fs_body *b, bool apply, v3 *J_out, v3 *T_out, uint64_t *extracted,
                           int *moved) {
    fs_world *w = c->w;
    const fs_body_coupling *k = c->k;
    fs_particles *p = &w->p;
    cell_box cb = cells_near(w, b, k->R + w->stick_max + k->drift);
    v3 J = {0, 0, 0}, T = {0, 0, 0};
    for (int z = cb.z0; z <= cb.z1; z++)
        for (int y = cb.y0; y <= cb.y1; y++) {
            int base = (z * w->gy + y) * w->gx;
            for (int i = w->cell_start[base + cb.x0]; i < w->cell_start[base + cb.x1 + 1]; i++) {
                v3 x = {p->x[i], p->y[i], p->z[i]};
                v3 v = k->velocities
                           ? (v3){p->vx[i], p->vy[i], p->vz[i]}
                           : (v3){(x.x - p->px[i]) / c->dt, (x.y - p->py[i]) / c->dt, (x.z - p->pz[i]) / c->dt};
                int m = p->mat[i];
                float mu = k->solid && !k->solid[p->slot[i]] ? 0.0f : k->mu[m];
                v3 dv, n;
                float d;
                if (!particle_impulse(w, b, x, v, k->R, mu, k->stick_d[m], k->stick_k[m], c->dt, &dv, &d, &n)) continue;
                v3 Ji = mul(dv, -k->mass[m]); /* opposite of the particle's momentum change */
                J = add(J, Ji);
                if (!apply) {
                    T = add(T, cross(sub(x, b->pos), Ji));
                    continue;
                }
                v3 x1 = add(x, mul(dv, c->dt)); /* x -= I dt (line 14) */
                T = add(T, cross(sub(x1, b->pos), Ji));
                if (k->velocities) p->vx[i] += dv.x, p->vy[i] += dv.y, p->vz[i] += dv.z;
                float d2 = sdf_world(w, b, x1, &n) - k->R;
                if (d2 < 0) {
                    /* line 15: extract what is still inside.  A move of
                     * position only (the previous position moves with it):
                     * a particle found deep inside, e.g. under a body just
                     * created on it, is put outside without being fired out
                     * at (depth / dt). */
                    v3 e = mul(n, -d2);
                    x1 = add(x1, e);
                    if (!k->velocities) p->px[i] += e.x, p->py[i] += e.y, p->pz[i] += e.z;
                    (*extracted)++;
                }
                *moved += x1.x != x.x || x1.y != x.y || x1.z != x.z;
                p->x[i] = x1.x, p->y[i] = x1.y, p->z[i] = x1.z;
            }
        }
    *J_out = J, *T_out = T;
}

/* Step 1 (Alg. 6 lines 5-7), one body per task item. */
static void accumulate_task(int bb, int be, int worker, void *vctx) {
    (void)worker;
    body_ctx *c = vctx;
    for (int k = bb; k < be; k++) {
        fs_body *b = &c->w->bodies[k];
        b->acc_J = (v3){0, 0, 0}, b->acc_T = (v3){0, 0, 0};
        if (!b->is_static) body_particles(c, b, false, &b->acc_J, &b->acc_T, NULL, NULL);
    }
}

/* Step 3 (lines 12-15), bodies in index order.  The momentum the particles
 * gain here is what the body must lose; step 1 gave the body an estimate of
 * it (at the tentative pose), so the difference is returned to the body's
 * velocity now, and fluid plus bodies conserve momentum exactly (an
 * addition to the paper, which leaves the two steps' impulses unequal). */
static int particles_against_bodies(body_ctx *c) {
    fs_world *w = c->w;
    uint64_t extracted = 0;
    int moved = 0;
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        v3 J, T;
        body_particles(c, b, true, &J, &T, &extracted, &moved);
        if (!b->is_static) {
            b->vel = add(b->vel, mul(sub(J, b->acc_J), b->inv_mass));
            b->ang = add(b->ang, inv_inertia_mul(b, sub(T, b->acc_T)));
        }
    }
    w->st.body_extractions += extracted;
    return moved;
}

/* A safety rail like the particles': at most FS_BODY_RAIL_SPEED and
 * FS_BODY_RAIL_SPIN (a snapshot accepts ten times these). */
static void rail(fs_body *b) {
    float sp = len(b->vel);
    if (!(sp < FS_BODY_RAIL_SPEED)) b->vel = isfinite(sp) ? mul(b->vel, FS_BODY_RAIL_SPEED / sp) : (v3){0, 0, 0};
    float wsp = len(b->ang);
    if (!(wsp < FS_BODY_RAIL_SPIN)) b->ang = isfinite(wsp) ? mul(b->ang, FS_BODY_RAIL_SPIN / wsp) : (v3){0, 0, 0};
}

/* ---- Algorithm 6 ------------------------------------------------------------------ */
int fs__bodies_step(fs_world *w, float dt, const fs_body_coupling *kc,
                    void (*run)(fs_world *, fs_task_fn *, void *, int)) {
    if (w->nbodies == 0) return 0;
    body_ctx c = {w, dt, kc};
    float smax = 0;
    for (int m = 0; m < w->nmat; m++) smax = fmaxf(smax, kc->stick_d[m]);
    w->stick_max = smax;
    const v3 g = w->dom.gravity;
    /* step 1: save the pose, apply gravity and the grab spring, advance */
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        b->bound = fs__body_bound_radius(w, b);
        b->pos0 = b->pos, b->rot0 = b->rot;
        if (b->is_static) continue;
        b->vel = add(b->vel, mul(g, dt));
        if (b->grab) {
            /* a critically damped spring-damper at 3 Hz pulls the grab point
             * towards the target; the body still collides on the way */
            v3 anchor = add(b->pos, qrot(b->rot, b->grab_local));
            v3 va = add(b->vel, cross(b->ang, sub(anchor, b->pos)));
            float om = 2.0f * 3.14159265f * 3.0f;
            v3 F = sub(mul(sub(b->grab_target, anchor), b->mass * om * om), mul(va, 2.0f * b->mass * om));
            float fmax = b->mass * 100.0f; /* at most ~10 g */
            float fl = len(F);
            if (fl > fmax) F = mul(F, fmax / fl);
            apply_impulse(b, anchor, mul(F, dt));
            /* keep the grabbed body from spinning up: 0.9 per step of the
             * world (w->dt), whatever the steps it is met in */
            b->ang = mul(b->ang, dt == w->dt ? 0.9f : powf(0.9f, dt / w->dt));
        }
        b->pos = add(b->pos, mul(b->vel, dt));
        b->rot = qintegrate(b->rot, b->ang, dt);
    }
    run(w, accumulate_task, &c, w->nbodies);
    /* step 2: velocities change by the fluid's impulses; advance again from the
     * saved pose after the contacts are resolved there */
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        b->pos = b->pos0, b->rot = b->rot0;
        if (b->is_static) continue;
        b->vel = add(b->vel, mul(b->acc_J, b->inv_mass));
        b->ang = add(b->ang, inv_inertia_mul(b, b->acc_T));
    }
    fs__bodies_contacts(w, dt, 12);
    for (int k = 0; k < w->nbodies; k++) {
        fs_body *b = &w->bodies[k];
        if (b->is_static) continue;
        rail(b);
        b->pos = add(b->pos, mul(b->vel, dt));
        b->rot = qintegrate(b->rot, b->ang, dt);
        b->vel_eff = b->vel;
        /* the centre never leaves the box (the wall contacts keep the rest in) */
        b->pos.x = fminf(fmaxf(b->pos.x, w->dom.box_min.x), w->dom.box_max.x);
        b->pos.y = fminf(fmaxf(b->pos.y, w->dom.box_min.y), w->dom.box_max.y);
        b->pos.z = fminf(fmaxf(b->pos.z, w->dom.box_min.z), w->dom.box_max.z);
    }
    /* step 3 */
    const int moved = particles_against_bodies(&c);
    /* the rail again: step 3's impulses come after it, and a light body
     * could leave the step (and the snapshot's bounds) spinning at 1e7 rad/s */
    for (int k = 0; k < w->nbodies; k++)
        if (!w->bodies[k].is_static) rail(&w->bodies[k]);
    return moved;
}

/* Worst penetration of a particle into a body (m, >= 0): a diagnostic. */
float fs_world_body_penetration(const fs_world *w) {
    float worst = 0;
    const fs_particles *p = &w->p;
    for (int k = 0; k < w->nbodies; k++) {
        const fs_body *b = &w->bodies[k];
        for (int i = 0; i < w->n; i++) {
            v3 n;
            float d = sdf_world(w, b, (v3){p->x[i], p->y[i], p->z[i]}, &n) - w->dom.particle_radius;
            if (-d > worst) worst = -d;
        }
    }
    return worst;
}
