/* clavet.c - the Clavet solver: one step of Clavet, Beaudoin & Poulin 2005,
 * "Particle-based viscoelastic fluid simulation", Algorithm 1, in 3D.
 *
 * Stages (Algorithm 1):
 *   emit / drain                       (commands; outside the paper; sources.c)
 *   grid on x                          (Sec. 7.1, uniform grid of h/2 cells, counting sort; grid.c)
 *   gravity + viscosity (Alg. 5)       lines 1-5 (coloured sweeps: and XSPH for liquids)
 *   prediction                          lines 6-10
 *   grid on predicted x
 *   adjustSprings (Alg. 4, Eq. 7-8)    line 12
 *   applySpringDisplacements (Alg. 3)  line 15 (coloured sweeps: plastic springs only)
 *   doubleDensityRelaxation (Alg. 2)   line 16 (coloured sweeps: elastic springs projected after each;
 *                                      walls as mirror images of the neighbourhood)
 *   resolveCollisions (Eq. 9-11)       line 17, bodies (Alg. 6, body_step.c), mesh obstacles (Eq. 9-12,
 *                                      obstacles.c), then the walls of the box
 *   new velocities                      lines 18-20, then NaN repair and box clamp
 * all of it once a step, or in sub-steps where gravity would move the water
 * more than a tenth of a spacing in one (clavet_substeps; an extension).
 *
 * The coloured sweeps (the default) reorder the first stages after position-
 * based fluids (Macklin & Mueller 2013, Algorithm 1): gravity and prediction,
 * one grid on the predicted positions, the plastic springs, then one scan a
 * step (list_task, clavet_colour.c) that stores the sweeps' lists and sums Alg. 5's impulses
 * over the same pairs, which then move the prediction by dt each.
 *
 * Parallel form.  Algorithms 2, 3 and 5 apply each pair's displacement (or
 * impulse) at once, so their sequential result depends on the visiting order.
 * Here every pairwise stage is a *gather*: each particle sums, from the same
 * input state, the share it receives from each pair, and the pair's two
 * shares are computed by the same expression with r_ij negated, so they are
 * bitwise equal and opposite.  Pairwise action-reaction along r_ij holds
 * exactly per pair, hence linear and angular momentum are conserved to
 * round-off, and the result does not depend on the thread count or on how
 * the work is split.  For the relaxation this means: densities from the
 * predicted positions, then the pair (i, j) exchanges
 *     D_ij = dt^2 ((P_i + P_j)(1-q) + (P_i^near + P_j^near)(1-q)^2) r_ij / 2,
 * i.e. the sum of the two displacements Algorithm 2 would give the pair when
 * visiting i and when visiting j, evaluated at one configuration (Jacobi)
 * instead of sequentially (Gauss-Seidel).  FS_RELAX_SEQUENTIAL runs
 * Algorithm 2 exactly as printed for comparison (tests/bench report both).
 *
 * Files: this one drives the step (Algorithm 1) with its per-material
 * constants, the prediction and the collisions with the box's walls;
 * clavet_springs.c the springs (Alg. 3-4) and the phase change;
 * clavet_jacobi.c the Jacobi form of Alg. 2 and 5; clavet_sequential.c
 * Alg. 2 as printed; clavet_colour.c the coloured sweeps; clavet_internal.h
 * what they share.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "clavet_internal.h"
#include "obstacles.h"
#include "probes.h"

static void clavet_detach(fs_world *w) {
    clavet_state *st = w->solver_state;
    if (!st) return;
    free(st->s_a), free(st->s_b), free(st->s_c), free(st->spr_total), free(st->seq_order), free(st->nb_off);
    fs__solver_state_free(w);
}

static fs_status clavet_attach(fs_world *w, fs_error *err) {
    clavet_state *st = fs__solver_state_new(w, sizeof *st);
    size_t n = (size_t)w->cap;
    if (st) {
        st->s_a = malloc(sizeof(float) * n), st->s_b = malloc(sizeof(float) * n), st->s_c = malloc(sizeof(float) * n);
        st->spr_total = malloc(sizeof(int32_t) * n), st->seq_order = malloc(sizeof(int32_t) * n);
        st->nb_off = malloc(sizeof(int32_t) * n);
    }
    if (!st || !st->s_a || !st->s_b || !st->s_c || !st->spr_total || !st->seq_order || !st->nb_off) {
        clavet_detach(w);
        SETERR(err, "clavet: out of memory");
        return FS_ERR_NOMEM;
    }
    /* A fixed random order of slots for the sequential relaxation
     * ("randomized but not modified throughout the simulation", Sec. 4.3). */
    for (int i = 0; i < w->cap; i++) st->seq_order[i] = i;
    for (int i = w->cap - 1; i > 0; i--) {
        int j = (int)(fs__rand01(77, (uint64_t)i) * (float)(i + 1));
        if (j > i) j = i;
        int32_t t = st->seq_order[i];
        st->seq_order[i] = st->seq_order[j];
        st->seq_order[j] = t;
    }
    return FS_OK;
}

/* XSPH velocity smoothing (Monaghan 1989; Schechter & Bridson 2012; Macklin
 * & Mueller 2013, Eq. 17), an extension for the coloured sweeps:
 * v_i += sum_j c/rho0 (1-q)^2 (v_j - v_i), with the old velocities, so each
 * pair's exchange is antisymmetric and linear momentum is kept.  Two
 * Gauss-Seidel sweeps a step leave every particle a velocity of their
 * unconverged correction, fresh each step (lag-one correlation 0.3): with the
 * mirrored walls below a settled pool kept 0.37 m/s rms.  c = 0.4 per 1/60 s
 * takes it to 0.09 and puts the dam break's residual column within 8.4% of
 * Martin & Moyce (0.3: 10.3%, 0.5: 11.9%; docs/clavet-notes.md, "XSPH").
 * Only liquids: a material with springs keeps its own damping. */
#define XSPH_C 0.4f

static void mconst_init(const fs_world *w, float dt, mconst *m) {
    const float h = w->h;
    memset(m, 0, sizeof *m);
    for (int i = 0; i < w->nmat; i++) {
        const float *p = w->mat[i].p;
        m->sigma[i] = dt * p[FS_P_VISC_SIGMA];
        m->beta[i] = dt * p[FS_P_VISC_BETA] / h;
        m->k[i] = h * p[FS_P_STIFFNESS];
        m->kn[i] = h * p[FS_P_NEAR_STIFFNESS];
        m->rho0[i] = p[FS_P_REST_DENSITY];
        m->ks[i] = p[FS_P_SPRING_STIFFNESS];
        m->alpha[i] = dt * p[FS_P_PLASTICITY];
        m->ys[i] = p[FS_P_YIELD_STRETCH];
        m->yc[i] = p[FS_P_YIELD_COMPRESS];
        m->brk[i] = p[FS_P_SPRING_BREAK] * h;
        m->springs[i] = p[FS_P_SPRINGS] != 0.0f;
        m->add[i] = m->springs[i] && p[FS_P_SPRING_ADD] != 0.0f;
        m->mu[i] = p[FS_P_FRICTION];
        m->stick_d[i] = p[FS_P_STICK_DISTANCE] * h;
        m->stick_k[i] = p[FS_P_STICK_STRENGTH];
        m->diff[i] = fs__heat_coef(w, i);
        m->phase[i] = p[FS_P_PHASE_CHANGE] != 0.0f;
        /* XSPH_C per 1/60 s, compounded for the step's dt */
        if (w->def.clavet.relax == FS_RELAX_COLORED && !m->springs[i] && m->rho0[i] > 0.0f)
            m->xsph[i] = (1.0f - powf(1.0f - XSPH_C, dt * 60.0f)) / m->rho0[i];
        m->tsolid[i] = p[FS_P_SOLID_POINT];
        m->tmelt[i] = p[FS_P_MELT_POINT] > p[FS_P_SOLID_POINT] ? p[FS_P_MELT_POINT] : p[FS_P_SOLID_POINT];
        m->any_phase |= m->phase[i];
        m->heat |= m->diff[i] > 0;
        m->any_springs |= m->springs[i];
    }
}

static void visc_params_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    for (int i = b; i < e; i++) {
        int m = w->p.mat[i];
        c->s->s_a[i] = c->m.sigma[m];
        c->s->s_b[i] = c->m.beta[m];
        c->s->s_c[i] = c->m.xsph[m];
    }
}

/* Alg. 1 lines 6-10: save previous position, advance to predicted (the
 * coloured sweeps' order: gravity first, line 3). */
static void predict_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_particles *p = &c->w->p;
    const float dt = c->dt;
    if (c->colored) { /* the coloured order: gravity here, Alg. 5 after the lists */
        const float gdx = c->g.x * dt, gdy = c->g.y * dt, gdz = c->g.z * dt;
        for (int i = b; i < e; i++) p->vx[i] += gdx, p->vy[i] += gdy, p->vz[i] += gdz;
    }
    for (int i = b; i < e; i++) {
        p->px[i] = p->x[i], p->py[i] = p->y[i], p->pz[i] = p->z[i];
        p->x[i] += dt * p->vx[i], p->y[i] += dt * p->vy[i], p->z[i] += dt * p->vz[i];
    }
}

/* ---- collisions with the box walls (Eq. 9-11), new velocities ---------- */
static void collide_task(int b, int e, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    const float dt = c->dt, inv_dt = 1.0f / dt, vmax = w->max_speed, R = w->dom.particle_radius;
    const bool on_wall = c->colored;
    const fs_vec3 lo = w->lo, hi = w->hi;
    const fs_vec3 mid = {0.5f * (lo.x + hi.x), 0.5f * (lo.y + hi.y), 0.5f * (lo.z + hi.z)};
    uint64_t bad = 0, clamped = 0;
    for (int i = b; i < e; i++) {
        float x[3] = {p->x[i], p->y[i], p->z[i]};
        float xp[3] = {p->px[i], p->py[i], p->pz[i]};
        const float l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
        const int mat = p->mat[i];
        const float mu = c->m.mu[mat];
        /* The speed limit first (an extension: a bound on one step's path,
         * max_speed), so that every collision below meets the path the
         * particle keeps: the limit moves it back along its path, which
         * could end inside an obstacle the whole path had passed.  The
         * square in double: a throw of 1e20 m/s squares past a float.  The
         * collisions after it only take speed away (Eq. 11, the clamps; an
         * extraction moves the previous position with the particle) */
        float v[3] = {(x[0] - xp[0]) * inv_dt, (x[1] - xp[1]) * inv_dt, (x[2] - xp[2]) * inv_dt};
        const double s2 = (double)v[0] * v[0] + (double)v[1] * v[1] + (double)v[2] * v[2];
        const bool finite = isfinite(s2) && isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]);
        if (finite && s2 > (double)vmax * vmax) {
            const double f = vmax / sqrt(s2);
            for (int a = 0; a < 3; a++) v[a] = (float)(v[a] * f), x[a] = xp[a] + v[a] * dt;
        }
        if (finite && w->nobstacles) {
            /* mesh obstacles, as static bodies (Eq. 9-12) */
            float ex[3] = {0, 0, 0};
            if (fs__obstacles_particle(w, R, mu, c->m.stick_d[mat], c->m.stick_k[mat], dt, x, v, ex))
                for (int a = 0; a < 3; a++) xp[a] += ex[a];
        }
        for (int a = 0; a < 3; a++) {
            float nrm;
            /* on the wall counts when the coloured sweeps put particles back on it */
            if (x[a] < l[a] || (on_wall && x[a] == l[a]))
                nrm = 1.0f;
            else if (x[a] > u[a] || (on_wall && x[a] == u[a]))
                nrm = -1.0f;
            else
                continue;
            /* Eq. 9-10: velocity relative to the static wall, split */
            float vw[3] = {(x[0] - xp[0]) * inv_dt, (x[1] - xp[1]) * inv_dt, (x[2] - xp[2]) * inv_dt};
            float vn = vw[a] * nrm; /* < 0: moving into the wall; 0: resting on it */
            if (vn < 0.0f || (vn == 0.0f && on_wall)) {
                /* Eq. 11: cancel the normal part, remove mu of the tangential */
                float I[3] = {mu * vw[0], mu * vw[1], mu * vw[2]};
                I[a] = vw[a];
                for (int q = 0; q < 3; q++) x[q] -= I[q] * dt;
            }
            /* Alg. 6 line 15: extract what is still inside the wall */
            x[a] = x[a] < l[a] ? l[a] : (x[a] > u[a] ? u[a] : x[a]);
        }
        /* Alg. 1 lines 18-20 */
        float vx = (x[0] - xp[0]) * inv_dt, vy = (x[1] - xp[1]) * inv_dt, vz = (x[2] - xp[2]) * inv_dt;
        float sp2 = vx * vx + vy * vy + vz * vz;
        if (!finite || !(isfinite(sp2) && isfinite(x[0]) && isfinite(x[1]) && isfinite(x[2]))) {
            /* repair: back to the previous position (or the box centre), at rest */
            bool pf = isfinite(xp[0]) && isfinite(xp[1]) && isfinite(xp[2]);
            x[0] = pf ? xp[0] : mid.x, x[1] = pf ? xp[1] : mid.y, x[2] = pf ? xp[2] : mid.z;
            vx = vy = vz = 0;
            bad++;
        }
        for (int a = 0; a < 3; a++) {
            if (x[a] < l[a] || x[a] > u[a]) {
                x[a] = x[a] < l[a] ? l[a] : u[a];
                clamped++;
            }
        }
        p->x[i] = x[0], p->y[i] = x[1], p->z[i] = x[2];
        p->vx[i] = vx, p->vy[i] = vy, p->vz[i] = vz;
        float T = fs__heat_update(w, p->temp[i], c->m.heat, w->dT[i], x[0], x[1], x[2], dt);
        if (!isfinite(T)) T = w->ambient, bad++;
        p->temp[i] = T;
    }
    c->nonfinite[worker] += bad;
    c->clamped[worker] += clamped;
}

/* The materials present (c->present), and two tests that let the pair passes
 * skip work without changing a bit:
 * - all particles at one temperature: Eq. 21's exchanges are all zero, and
 *   T + dt * 0 = T, so the heat pass is skipped (c->m.heat cleared);
 * - the materials present share sigma, beta and the XSPH weight: the pair
 *   passes use i's constants (0.5 (a + a) = a) instead of gathering j's. */
static void step_shortcuts(const fs_world *w, step_ctx *c) {
    const fs_particles *p = &w->p;
    bool *present = c->present, iso = true;
    const float T0 = w->n ? p->temp[0] : 0.0f;
    for (int i = 0; i < w->n; i++) present[p->mat[i]] = true, iso &= p->temp[i] == T0;
    if (iso) c->m.heat = false;
    c->uni = true;
    int first = -1;
    for (int m = 0; m < w->nmat; m++) {
        if (!present[m]) continue;
        if (first < 0) first = m;
        c->uni &=
            c->m.sigma[m] == c->m.sigma[first] && c->m.beta[m] == c->m.beta[first] && c->m.xsph[m] == c->m.xsph[first];
    }
}

/* The sub-steps of one call (an extension: the paper steps at a fixed dt).
 * A step lets gravity move the water g dt^2 before the relaxation pushes it
 * back, and the two sweeps hold a column only while that is a small part
 * of a spacing: at 1/60 s and a spacing of 1.6 cm (SPHERIC's tank at 172k
 * particles, g dt^2 = 0.17 spacings) the column compressed to 3.7 times its
 * neighbours within 0.3 s, and lists overflowed every step; at 0.084
 * (2.9 cm) it held, at 0.12 (2.2 cm) it did not (docs/clavet-notes.md,
 * "Sub-steps").  So the fewest sub-steps for which g dt_sub^2 is at most
 * CLAVET_GRAVITY_STEP spacings; 1 for the server's worlds (0.034). */
#define CLAVET_GRAVITY_STEP 0.1f
#define CLAVET_SUBSTEPS_MAX 8

static int clavet_substeps(const fs_world *w) {
    const fs_vec3 g = w->dom.gravity;
    const float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z), s = w->dom.spacing;
    if (!(gm > 0.0f) || !(s > 0.0f)) return 1;
    const float need = gm * w->dt * w->dt / (CLAVET_GRAVITY_STEP * s); /* the count squared */
    int n = 1;
    while (n < CLAVET_SUBSTEPS_MAX && (float)(n * n) < need) n++;
    return n;
}

/* ---- Algorithm 1 -------------------------------------------------------- */
static void clavet_substep(fs_world *w, float dt, bool first) {
    double t;
    step_ctx c;
    memset(&c, 0, sizeof c);
    c.w = w;
    c.s = w->solver_state;
    mconst_init(w, dt, &c.m);
    c.dt = dt;
    c.h = w->h;
    c.h2 = w->h * w->h;
    c.inv_h = w->inv_h;
    c.g = w->dom.gravity;
    double *ph = w->st.phase_ms;
    /* the coloured sweeps build one grid and one set of lists a step, at the
     * predicted positions, and read Alg. 5's pairs from them
     * (list_task); the other forms follow Algorithm 1's order */
    const bool lists_first = w->def.clavet.relax == FS_RELAX_COLORED;
    c.colored = lists_first; /* until a list overflows (below) */
    if (first) {
        fs__step_begin(w, !lists_first);
    } else {
        for (int k = 0; k < FS_PHASE_COUNT; k++) w->st.phase_ms[k] = 0;
        if (!lists_first) fs__grid_build_timed(w);
    }
    step_shortcuts(w, &c);

    /* lines 1-5, then 6-10 */
    t = fs__now_ms();
    fs__run(w, visc_params_task, &c, w->n);
    if (!lists_first) fs__clavet_viscosity(w, &c);
    fs__run(w, predict_task, &c, w->n);
    ph[FS_PHASE_VISCOSITY] += fs__now_ms() - t;

    fs__grid_build_timed(w);

    /* lines 12, 15 */
    t = fs__now_ms();
    if (c.m.any_springs || c.m.any_phase) fs__clavet_springs(w, &c);
    ph[FS_PHASE_SPRINGS] += fs__now_ms() - t;

    /* line 16 */
    t = fs__now_ms();
    bool colored = lists_first;
    if (colored) {
        /* the neighbour lists of every sweep, Alg. 5's impulses and Eq. 21's
         * heat rates at the predicted positions; a particle with more than
         * FS_NB_MAX neighbours has no list, and the step falls back to the
         * Jacobi sweeps, which scan (timed as the relaxation) */
        colored = fs__clavet_lists(w, &c);
        w->st.relax_fallbacks += !colored;
        /* the springs stage left the elastic springs to the sweeps */
        if (!colored && w->springs) fs__clavet_springs_elastic(w, &c);
        c.colored = colored;
    }
    for (int it = 0; it < w->def.clavet.relax_iterations; it++) {
        if (colored) {
            fs__clavet_relax_colored(w, &c, it);
            if (w->springs) fs__clavet_springs_colored(w, &c, it);
        } else if (w->def.clavet.relax == FS_RELAX_SEQUENTIAL) {
            if (it == 0 && c.m.heat) fs__clavet_density(w, &c); /* Eq. 21 only */
            fs__clavet_relax_sequential(w, &c);
        } else {
            fs__clavet_relax_jacobi(w, &c);
        }
    }
    ph[FS_PHASE_RELAX] += fs__now_ms() - t;

    /* line 17: bodies (Algorithm 6), then the walls; lines 18-20 */
    t = fs__now_ms();
    if (w->nbodies) {
        float mu[FS_MAX_MATERIALS], sd[FS_MAX_MATERIALS], sk[FS_MAX_MATERIALS], ms[FS_MAX_MATERIALS];
        float vol = w->dom.spacing * w->dom.spacing * w->dom.spacing;
        for (int m = 0; m < w->nmat; m++) {
            mu[m] = w->mat[m].p[FS_P_FRICTION];
            sd[m] = w->mat[m].p[FS_P_STICK_DISTANCE] * w->h;
            sk[m] = w->mat[m].p[FS_P_STICK_STRENGTH];
            ms[m] = w->mat[m].p[FS_P_MASS_DENSITY] * vol;
        }
        const fs_body_coupling k = {w->dom.particle_radius, mu, sd, sk, ms, false, NULL, 0.0f};
        fs__bodies_step(w, c.dt, &k, fs__run);
    }
    fs__run(w, collide_task, &c, w->n);
    for (int k = 0; k < FS_MAX_WORKERS; k++) {
        w->st.nonfinite_repaired += c.nonfinite[k];
        w->st.escapes_clamped += c.clamped[k];
        w->st.springs_refused += c.s->spr_refused_worker[k];
        c.s->spr_refused_worker[k] = 0;
    }
    ph[FS_PHASE_COLLIDE] += fs__now_ms() - t;
    fs__probes_substep(w, dt);
}

static void clavet_step(fs_world *w) {
    const double t0 = fs__now_ms();
    const int n = clavet_substeps(w);
    double acc[FS_PHASE_COUNT] = {0};
    for (int k = 0; k < n; k++) {
        clavet_substep(w, w->dt / (float)n, k == 0);
        for (int q = 0; q < FS_PHASE_COUNT; q++) acc[q] += w->st.phase_ms[q];
    }
    for (int q = 0; q < FS_PHASE_COUNT; q++) w->st.phase_ms[q] = acc[q];
    w->st.solver_iterations = n;
    w->st.sim_time += w->dt;
    w->st.step_ms = fs__now_ms() - t0;
}

const fs_solver_ops fs__clavet_ops = {
    .name = "clavet",
    .doc = "Clavet, Beaudoin, Poulin 2005: double density relaxation, viscoelastic springs, plasticity",
    .attach = clavet_attach,
    .detach = clavet_detach,
    .step = clavet_step,
};
