/* test_mps.c - the MPS solver (Premoze et al. 2003): validation against
 * experiment and hydrostatics, two fluids, the preconditioned CG solve, determinism. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "fluid_sim.h"
#include "sim_testing.h"
#include "sim_tests.h"
#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__)
#define SAN_BUILD 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SAN_BUILD 1
#endif
#endif
#ifndef SAN_BUILD
#define SAN_BUILD 0
#endif

static fs_world *mps_world(int capacity, int threads, fs_pool **pool) {
    fs_world_def d = fs_default_world_def();
    d.capacity = capacity;
    *pool = NULL;
    if (threads > 1) {
        *pool = fs_pool_create(threads);
        d.worker_count = threads;
        d.parallel_for = fs_pool_parallel_for;
        d.task_user = *pool;
    }
    fs_world *w = fs_world_create(&d);
    fs_error err;
    CHECK(fs_world_set_solver(w, FS_SOLVER_MPS, &err) == FS_OK, "set_solver: %s", err.msg);
    return w;
}

/* No particle of the run had a full neighbour list (pairs left out of n, Eq. 5 and 14). */
static void lists_never_full(const fs_world *w) {
    fs_stats st;
    fs_world_stats(w, &st);
    CHECK(st.lists_full == 0, "%llu particle sub-steps with a full neighbour list", (unsigned long long)st.lists_full);
}

static void release(fs_world *w, fs_pool *pool) {
    fs_world_destroy(w);
    if (pool) fs_pool_destroy(pool);
}

static void drop(fs_world *w, fs_pool *pool) {
    lists_never_full(w);
    release(w, pool);
}

/* A domain of spacing l0 and h = 3.1 l0 (the MPS Laplacian radius); the
 * solver's walls follow it at the next step. */
static void mps_domain(fs_world *w, fs_vec3 box, float l0) {
    fs_domain d = {{0, 0, 0}, box, {0, -9.81f, 0}, 3.1f * l0, l0, 0.5f * l0};
    fs_error err;
    CHECK(fs_world_reset(w, &d, &err) == FS_OK, "reset: %s", err.msg);
}

/* Water on the lattice filling nx x ny x nz spacings of a tank 6 spacings
 * taller, 2 threads; *count (if given) the particles added. */
static fs_world *lattice_tank(int nx, int ny, int nz, float l0, fs_pool **pool, int *count) {
    fs_world *w = mps_world(nx * ny * nz + 1000, 2, pool);
    mps_domain(w, (fs_vec3){nx * l0, (ny + 6) * l0, nz * l0}, l0);
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){nx * l0, ny * l0, nz * l0}, FS_MAT_WATER, 0.0f);
    if (count) *count = n;
    return w;
}

static bool finite_inside(fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    fs_domain d = fs_world_domain(w);
    for (int i = 0; i < v.count; i++)
        if (!(isfinite(v.x[i]) && isfinite(v.y[i]) && isfinite(v.z[i]) && isfinite(v.vx[i]) && isfinite(v.vy[i]) &&
              isfinite(v.vz[i]) && v.x[i] >= d.box_min.x && v.x[i] <= d.box_max.x && v.y[i] >= d.box_min.y &&
              v.y[i] <= d.box_max.y && v.z[i] >= d.box_min.z && v.z[i] <= d.box_max.z))
            return false;
    return true;
}

/* Number density (Eq. 3-4, r_e = 2.1 l0) of particle i from the particles
 * alone, brute force: for interior particles, whose reach holds no wall. */
static double number_density(const fs_particles_view *v, int i, float l0) {
    const double re = 2.1 * l0;
    double n = 0;
    for (int j = 0; j < v->count; j++) {
        if (j == i) continue;
        double dx = v->x[j] - v->x[i], dy = v->y[j] - v->y[i], dz = v->z[j] - v->z[i];
        double r = sqrt(dx * dx + dy * dy + dz * dz);
        if (r < re) n += re / (r > 0.05 * l0 ? r : 0.05 * l0) - 1.0;
    }
    return n;
}

/* ---- 2. hydrostatics ------------------------------------------------------
 * A tank at rest: the pressure, averaged over time and over each layer of
 * the central columns, against rho g d (d below the free surface at rest),
 * and the number density of interior particles against n0. */
void test_mps_hydrostatic(void) {
    fs_pool *pool;
    fs_world *w = mps_world(20000, 2, &pool);
    const float l0 = 0.02f;
    const int nx = SAN_BUILD ? 10 : 14, ny = SAN_BUILD ? 12 : 20, nz = SAN_BUILD ? 7 : 7;
    mps_domain(w, (fs_vec3){nx * l0, (ny + 8) * l0, nz * l0}, l0);
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){nx * l0, ny * l0, nz * l0}, FS_MAT_WATER, 0.0f);
    const float H = ny * l0, rho = 1000.0f, g = 9.81f;
    const int settle = 60, avg = SAN_BUILD ? 30 : 180; /* 1 s to settle, then 3 s: the tank breathes, and a 1 s
                                                        * average moved by +-2.5% with any change of the flow */
    for (int t = 0; t < settle; t++) fs_world_step(w);
    enum { LAYERS = 64 };
    double psum[LAYERS] = {0}, ysum[LAYERS] = {0};
    long cnt[LAYERS] = {0};
    float *P = malloc(sizeof(float) * (size_t)n);
    int maxsub = 0, maxit = 0;
    double maxres = 0, still2 = 0;
    long still_n = 0;
    for (int t = 0; t < avg; t++) {
        fs_world_step(w);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        fs_stats st;
        fs_world_stats(w, &st);
        maxsub = in.substeps > maxsub ? in.substeps : maxsub;
        maxit = st.solver_iterations > maxit ? st.solver_iterations : maxit;
        maxres = st.solver_residual > maxres ? st.solver_residual : maxres;
        fs_particles_view v;
        fs_world_view(w, &v);
        int m = fs_world_mps_fields(w, P, NULL, n);
        if (t >= avg - 30) /* the last 0.5 s: the still water's speed */
            for (int i = 0; i < v.count; i++)
                still2 += v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i], still_n++;
        for (int i = 0; i < m; i++) {
            int layer = (int)floorf(v.y[i] / l0);
            if (layer < 0 || layer >= LAYERS || v.x[i] < 3 * l0 || v.x[i] > (nx - 3) * l0) continue;
            psum[layer] += P[i], ysum[layer] += v.y[i], cnt[layer]++;
        }
    }
    fs_mps_info in;
    fs_world_mps_info(w, &in);
    REPORT("tank %d x %d x %d particles (l0 = %.0f mm), %d wall particles; n0 = %.3f, n0_lap = %.3f, lambda = %.3f "
           "l0^2; up to %d CFL sub-steps of 1/60 s; CG up to %d iterations, residual up to %.1e",
           nx, ny, nz, l0 * 1e3, in.walls, in.n0, in.n0_lap, in.lambda / (l0 * l0), maxsub, maxit, maxres);
    double worst = 0, sum = 0;
    int used = 0;
    for (int k = 0; k < ny; k++) {
        if (!cnt[k]) continue;
        double y = ysum[k] / cnt[k], p = psum[k] / cnt[k], d = H - y, ref = rho * g * d;
        double e = (p - ref) / ref;
        if (d > 0.25 * H) { /* below the top quarter, where the Dirichlet layer no longer dominates */
            worst = fabs(e) > worst ? fabs(e) : worst;
            sum += fabs(e), used++;
        }
        if (k % 3 == 1 || k == ny - 1)
            REPORT("  depth %.3f m: p = %7.1f Pa, rho g d = %7.1f Pa, error %+5.1f%%", d, p, ref, 100 * e);
    }
    /* interior number density at the end-of-step positions */
    fs_particles_view v;
    fs_world_view(w, &v);
    double nerr = 0, nmax = 0, vmax = 0, v2 = 0;
    long ncnt = 0;
    for (int i = 0; i < v.count; i++) {
        double sp = sqrt(v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]);
        vmax = sp > vmax ? sp : vmax, v2 += sp * sp;
        if (v.x[i] > 3 * l0 && v.x[i] < (nx - 3) * l0 && v.y[i] > 3 * l0 && v.y[i] < H - 3 * l0 && v.z[i] > 3 * l0 &&
            v.z[i] < (nz - 3) * l0) {
            double e = (number_density(&v, i, l0) - in.n0) / in.n0;
            nerr += fabs(e), nmax = fabs(e) > nmax ? fabs(e) : nmax, ncnt++;
        }
    }
    REPORT("pressure below the top quarter: mean |error| %.1f%%, worst %.1f%% (time average over %d steps); "
           "interior number density |n - n0| / n0 (%ld particles): mean %.2f%%, worst %.2f%%; fastest particle "
           "%.3f m/s, rms speed %.3f m/s (the method's noise: see mps.c)",
           used ? 100 * sum / used : 0.0, 100 * worst, avg, ncnt, ncnt ? 100 * nerr / ncnt : 0.0, 100 * nmax, vmax,
           sqrt(v2 / v.count));
    CHECK(used > 3, "too few layers");
    /* The target is "within a few percent".  With p^_i of Eq. 5 the least pressure within 2.1 l0 this tank
     * read 9.1% low on average (worst 10.7%): the pressure's slope with depth was ~8% short, the bias
     * (p_i - p^_i) sum r w / r^2 of a not quite regular arrangement carrying part of the weight, and p_i - p^_i
     * is rho g times the reach of the search (2 l0).  With p^_i over r < 1.1 l0 (PMIN_R, mps.c) it reads mean
     * 1.5%, worst 3.7% (14 x 20 x 7, 1 s settled, 1 s averaged).  Other tanks and windows (the tank breathes
     * slowly): 16 x 24 x 8 2.1% / 4.9% (was 8.4% / 10.8%), windows 1.5 + 1.5 s 1.1% / 2.9% (6.5% / 9.2%),
     * 2 + 0.5 s 3.5% / 7.1% (2.6% / 7.9%), 10 x 12 x 7 over 0.5 s (the ASan tank) 9.2% / 10.4% (13.7% / 16.9%).
     * The ASan build's smaller tank, shorter average: 0.15 / 0.12 (was 0.25 / 0.20).  Over 1 s the figure moved
     * with any change of the flow (1.5% / 3.7%, 2.5% / 5.6% without surface tension, 4.2% / 8.1% with the drop's
     * surface tension fixes); over 3 s: 1.1-1.8% / 2.4-3.6% for the same variants (now 1.8% / 3.6%). */
    CHECK(worst < (SAN_BUILD ? 0.15 : 0.06) && sum / used < (SAN_BUILD ? 0.12 : 0.03),
          "hydrostatic pressure off by %.1f%% (mean %.1f%%)", 100 * worst, 100 * sum / used);
    CHECK(ncnt > 0 && nerr / ncnt < 0.03, "interior number density error %.2f%%", ncnt ? 100 * nerr / ncnt : 0.0);
    CHECK(vmax < 3.0, "blew up: %.2f m/s", vmax);
    /* The still water's noise (docs/sim-notes.md, "Still water"), rms over the last 0.5 s: 0.26 m/s with Eq. 5
     * as printed, 0.13-0.15 with particle shifting, 0.016-0.025 in five tanks since Eq. 5 takes the dynamic
     * pressure (docs/sim-notes.md, "Eq. 5: the dynamic pressure"); the bar: 0.03 after 3 s in this 0.4 m tank
     * (4 s here).  The sanitizer build's tank is shallower and younger (1.5 s): 0.028 there. */
    const double still = sqrt(still2 / (double)still_n);
    REPORT("rms speed over the last 0.5 s: %.3f m/s", still);
    CHECK(still < (SAN_BUILD ? 0.04 : 0.03), "the still tank is noisy: rms %.3f m/s over the last 0.5 s", still);
    CHECK(finite_inside(w), "NaN or escaped particle");
    free(P);
    drop(w, pool);
}

/* ---- 2b. the free surface (Eq. 18) ---------------------------------------
 * A tank on the lattice with one particle taken out of its middle.  Eq. 18
 * alone (n* < 0.97 n0) would put the gap's 18 nearest particles (one
 * neighbour short: n* 0.92-0.97 n0) on the free surface with the top layer,
 * and a pressure of a few pascals in the middle of the water; the
 * neighbour-asymmetry test keeps them in the solve.  After two sub-steps: the
 * Dirichlet particles are the top layer, and the gap's neighbours carry the
 * pressure of their depth away from the gap. */
void test_mps_free_surface(void) {
    fs_pool *pool;
    const float l0 = 0.02f;
    const int nx = 10, ny = 12, nz = 8;
    int n;
    fs_world *w = lattice_tank(nx, ny, nz, l0, &pool, &n);
    fs_particles_view v;
    fs_world_view(w, &v);
    const fs_vec3 mid = {0.5f * nx * l0, 0.5f * ny * l0, 0.5f * nz * l0};
    int gap = -1;
    float best = 1e9f;
    for (int i = 0; i < v.count; i++) {
        float d = fabsf(v.x[i] - mid.x) + fabsf(v.y[i] - mid.y) + fabsf(v.z[i] - mid.z);
        if (d < best) best = d, gap = i;
    }
    const fs_vec3 g0 = {v.x[gap], v.y[gap], v.z[gap]};
    CHECK(fs_world_remove_particle(w, v.id[gap]), "remove");
    n--;
    fs_mps_info in;
    int subs = 0; /* two sub-steps from rest (the force limit's, 9 ms each: the first call takes one) */
    while (subs < 2) {
        fs_world_step(w);
        fs_world_mps_info(w, &in);
        subs += in.taken;
    }
    float *P = malloc(sizeof(float) * (size_t)n);
    int m = fs_world_mps_fields(w, P, NULL, n);
    fs_world_view(w, &v);
    double worst = 0;
    int near = 0;
    for (int i = 0; i < m; i++) {
        const float dx = v.x[i] - g0.x, dy = v.y[i] - g0.y, dz = v.z[i] - g0.z;
        if (dx * dx + dy * dy + dz * dz > 1.5f * 1.5f * l0 * l0) continue;
        double ref = 0; /* the same depth away from the gap (the first step's pressure is not yet rho g d) */
        int cnt = 0;
        for (int j = 0; j < m; j++)
            if (fabsf(v.y[j] - v.y[i]) < 0.3f * l0 && fabsf(v.x[j] - g0.x) > 3 * l0) ref += P[j], cnt++;
        ref = cnt ? ref / cnt : 0;
        const double e = ref > 0 ? fabs(P[i] - ref) / ref : 1.0;
        worst = e > worst ? e : worst, near++;
    }
    REPORT("%d x %d x %d lattice less one particle at its centre: %d Dirichlet particles (the top layer holds %d); "
           "the gap's %d nearest read their depth's pressure within %.1f%%",
           nx, ny, nz, in.surface, nx * nz, near, 100 * worst);
    CHECK(in.surface == nx * nz, "%d free-surface particles, the top layer holds %d", in.surface, nx * nz);
    CHECK(near == 18 && worst < 0.1, "the gap's neighbours: %d, pressure off by %.1f%%", near, 100 * worst);
    free(P);
    drop(w, pool);

    /* water at rest without gravity (no viscosity or surface tension: no limit applies): one sub-step of the
     * whole step each call, the particles never behind the clock */
    w = mps_world(2000, 2, &pool);
    const fs_domain d = {{0, 0, 0}, {6 * l0, 12 * l0, 6 * l0}, {0, 0, 0}, 3.1f * l0, l0, 0.5f * l0};
    fs_error err;
    CHECK(fs_world_reset(w, &d, &err) == FS_OK, "reset: %s", err.msg);
    CHECK(fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){6 * l0, 6 * l0, 6 * l0}, FS_MAT_WATER, 0.0f) > 0, "add");
    CHECK(fs_world_set_param(w, FS_MAT_WATER, FS_P_KIN_VISCOSITY, 0.0f, &err) == FS_OK &&
              fs_world_set_param(w, FS_MAT_WATER, FS_P_SURFACE_TENSION, 0.0f, &err) == FS_OK,
          "params: %s", err.msg);
    int off = 0;
    for (int t = 0; t < 5; t++) {
        fs_world_step(w);
        fs_world_mps_info(w, &in);
        off += in.taken != 1 || in.behind != 0 || in.dt_sub != fs_world_dt(w);
    }
    fs_stats st;
    fs_world_stats(w, &st);
    REPORT("without gravity, at rest: %d of 5 calls not one sub-step of the step; %.4f s after 5 calls", off,
           st.sim_time);
    CHECK(off == 0 && fabs(st.sim_time - 5.0 * fs_world_dt(w)) < 1e-6, "%d calls otherwise, time %.6f s", off,
          st.sim_time);
    drop(w, pool);
}

/* ---- 1. dam break against Martin & Moyce (1952) ----------------------------
 * Martin, J.C. & Moyce, W.J. 1952, "Part IV. An experimental study of the
 * collapse of liquid columns on a rigid horizontal plane", Phil. Trans. R.
 * Soc. A 244, 312-324: surge front Z = x/a against T = t sqrt(2g/a) for the
 * column of height 2a (n^2 = 2).  Front: the leading edge of the surge on
 * the floor, x/a = 1 at T = 0.  Two transcriptions of their measurements,
 * each up to x/a = 3:
 *  - MM: a = 2.25 in (the a simulated here), their Fig. 3 as digitised in
 *    PySPH's pysph/examples/db_exp_data.py (github.com/pypr/pysph, commit
 *    483e4449, "mm_data_2"; the next point is at x/a = 4.13);
 *  - MMT: the times at which the front passed their marks x/a = 1 + k/4.5,
 *    as transcribed in Lethe's dam-break example (github.com/chaos-polymtl/
 *    lethe, examples/multiphysics/dam-break/dam-break-2d.py, commit
 *    129b71aa, citing Martin & Moyce 1952; it does not say which column, and
 *    its times lie closer to PySPH's a = 1.125 in set, "mm_data_1").  The
 *    flow simulated is scale-free (see mps.c), so both compare in T.
 * Time origin.  The simulation releases the column at once; the experiment
 * took a finite time to release it, so the measured surge starts late, and
 * numerical studies shift the experiment's clock: Lethe's example (the same
 * file) adds TAU0 = 0.175 to the simulated T.  This test does the same and
 * asserts that the front follows both sets within 10% up to x/a = 3 with
 * that shift; it prints, and bounds at 20%, the raw comparison too (the
 * simulated front reaches each point 11-15 ms early, while its speed agrees;
 * see the note in server/sim/mps.c), and the shift that would fit best. */
static const double MM_T[] = {0.832, 1.219, 1.997, 2.547}, MM_Z[] = {1.217, 1.474, 2.292, 2.995};
static const double MMT_T[] = {0.41, 0.84, 1.19, 1.43, 1.63, 1.82, 1.97, 2.2, 2.32, 2.5},
                    MMT_Z[] = {1.11, 1.23, 1.44, 1.67, 1.89, 2.11, 2.33, 2.56, 2.78, 3.0};
#define TAU0 0.175
/* The same PySPH file's "ko_data": Koshizuka & Oka's own MPS front (Nucl. Sci. Eng. 123, 421-434,
 * 1996), printed for comparison. */
static const double KO_T[] = {0.0, 0.381, 0.769, 1.153, 1.537, 1.935, 2.323, 2.719, 3.096},
                    KO_Z[] = {1.000, 1.111, 1.252, 1.505, 1.892, 2.241, 2.615, 3.003, 3.624};

static double interp(const double *t, const double *z, int n, double at) {
    if (at <= t[0]) return z[0];
    for (int k = 1; k < n; k++)
        if (at <= t[k]) return z[k - 1] + (z[k] - z[k - 1]) * (at - t[k - 1]) / (t[k] - t[k - 1]);
    return z[n - 1];
}

/* The largest relative deviation of the simulated front (T, Z; ns samples)
 * from a measured set, the simulation's clock shifted by tau; the sum of
 * squared deviations is added to *sq. */
static double front_error(const double *T, const double *Z, int ns, const double *mt, const double *mz, int m,
                          double tau, double *sq) {
    double worst = 0;
    for (int k = 0; k < m; k++) {
        double e = (interp(T, Z, ns, mt[k] - tau) - mz[k]) / mz[k];
        worst = fabs(e) > worst ? fabs(e) : worst;
        if (sq) *sq += e * e;
    }
    return worst;
}

/* A thin 3D tank (the column a x 2a, `deep` particles deep between two
 * walls, so a 2D flow as in the experiment's long channel); a = 2.25 in. */
void test_mps_dam_break(void) {
    const int na = SAN_BUILD ? 10 : 20, deep = SAN_BUILD ? 3 : 4;
    const float a = 0.05715f, l0 = a / (float)na, g = 9.81f;
    fs_world_def d = fs_default_world_def();
    d.capacity = na * 2 * na * deep + 100;
    d.dt = 0.002f; /* a sample every 2 ms (the solver sub-cycles inside) */
    fs_pool *pool = fs_pool_create(2);
    d.worker_count = 2, d.parallel_for = fs_pool_parallel_for, d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    CHECK(fs_world_set_solver(w, FS_SOLVER_MPS, &err) == FS_OK, "%s", err.msg);
    mps_domain(w, (fs_vec3){5 * a, 2.2f * a, (float)deep * l0}, l0);
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){a, 2 * a, (float)deep * l0}, FS_MAT_WATER, 0.0f);
    const double Tscale = sqrt(2.0 * g / a);
    enum { MAXS = 400 };
    double T[MAXS], Z[MAXS];
    int ns = 0, maxsub = 0;
    /* the sub-steps: never longer than the Courant limit allows at the call's start (mps.c's plan_substeps: 0.9
     * of it where a call catches up, 0.8 otherwise; u_max with what gravity adds in the call), and the particles
     * never a call or more behind the clock; the count rises with the front's speed */
    int raises = 0, lastsub = 0, over = 0, lagging = 0;
    float worst_courant = 0, worst_lag = 0;
    T[ns] = 0, Z[ns++] = 1.0;
    int invalid = 0;
    while (ns < MAXS) {
        float umax = 0;
        {
            fs_particles_view v;
            fs_world_view(w, &v);
            for (int i = 0; i < v.count; i++)
                umax = fmaxf(umax, sqrtf(v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]));
        }
        fs_world_step(w);
        invalid += !fs__mps_blocks_valid(w);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        maxsub = in.substeps > maxsub ? in.substeps : maxsub;
        raises += lastsub && in.substeps > lastsub;
        lastsub = in.substeps;
        const float courant = in.dt_sub * (umax + g * d.dt) / l0;
        worst_courant = fmaxf(worst_courant, courant), over += courant > 0.9f + 1e-4f;
        worst_lag = fmaxf(worst_lag, in.behind), lagging += !(in.behind >= 0 && in.behind < d.dt);
        fs_particles_view v;
        fs_world_view(w, &v);
        float front = 0;
        for (int i = 0; i < v.count; i++) front = v.x[i] > front ? v.x[i] : front;
        fs_stats now;
        fs_world_stats(w, &now);
        T[ns] = now.sim_time * Tscale; /* the particles' own time: the calls' less their lag */
        lagging += fabs(now.sim_time + in.behind - ns * (double)d.dt) > 1e-5; /* the two clocks agree */
        Z[ns] = (front + 0.5 * l0) / a;
        ns++;
        /* run past the last point (T = 2.547): interp() holds the last sample beyond the run, so a run
         * stopped at x/a > 3.3 (T = 2.52) read the last point and the speed from a clamped sample */
        if (T[ns - 1] > MM_T[3] + 0.05 || Z[ns - 1] > 4.5) break;
    }
    fs_stats st;
    fs_world_stats(w, &st);
    REPORT("%d particles (column %d x %d x %d, l0 = %.2f mm, a = %.1f mm), up to %d CFL sub-steps per 2 ms; "
           "surface tension %.4f N/m, nu %.1e m^2/s",
           n, na, 2 * na, deep, l0 * 1e3, a * 1e3, maxsub, fs_world_get_param(w, FS_MAT_WATER, FS_P_SURFACE_TENSION),
           fs_world_get_param(w, FS_MAT_WATER, FS_P_KIN_VISCOSITY));
    const double mms = 1e3 / Tscale; /* ms per unit of T */
    for (int k = 0; k < 4; k++) {
        double tz = T[ns - 1]; /* when the simulated front reached Martin & Moyce's x/a */
        for (int q = 1; q < ns; q++)
            if (Z[q] >= MM_Z[k]) {
                tz = T[q - 1] + (T[q] - T[q - 1]) * (MM_Z[k] - Z[q - 1]) / (Z[q] - Z[q - 1]);
                break;
            }
        double raw = interp(T, Z, ns, MM_T[k]), shifted = interp(T, Z, ns, MM_T[k] - TAU0);
        REPORT("  MM T = %.3f: x/a = %.3f, Martin & Moyce %.3f: %+.1f%% with the release shift, %+.1f%% raw "
               "(x/a %.3f; reached at T = %.3f, %.1f ms early); Koshizuka & Oka's MPS %.3f",
               MM_T[k], shifted, MM_Z[k], 100 * (shifted - MM_Z[k]) / MM_Z[k], 100 * (raw - MM_Z[k]) / MM_Z[k], raw, tz,
               mms * (MM_T[k] - tz), interp(KO_T, KO_Z, 9, MM_T[k]));
    }
    for (int k = 0; k < 10; k++) {
        double raw = interp(T, Z, ns, MMT_T[k]), shifted = interp(T, Z, ns, MMT_T[k] - TAU0);
        REPORT("  MMT T = %.2f: x/a = %.3f, Martin & Moyce %.2f: %+.1f%% with the release shift, %+.1f%% raw", MMT_T[k],
               shifted, MMT_Z[k], 100 * (shifted - MMT_Z[k]) / MMT_Z[k], 100 * (raw - MMT_Z[k]) / MMT_Z[k]);
    }
    for (int k = 0; k < ns; k += ns / 8 + 1) REPORT("  T = %.2f  x/a = %.3f", T[k], Z[k]);
    double w_mm = front_error(T, Z, ns, MM_T, MM_Z, 4, TAU0, NULL),
           w_mmt = front_error(T, Z, ns, MMT_T, MMT_Z, 10, TAU0, NULL),
           raw_mm = front_error(T, Z, ns, MM_T, MM_Z, 4, 0, NULL),
           raw_mmt = front_error(T, Z, ns, MMT_T, MMT_Z, 10, 0, NULL);
    double best = 0, best_sq = INFINITY; /* the shift that fits both sets best, for the record */
    for (double tau = 0; tau <= 0.5; tau += 0.005) {
        double sq = 0;
        front_error(T, Z, ns, MM_T, MM_Z, 4, tau, &sq);
        front_error(T, Z, ns, MMT_T, MMT_Z, 10, tau, &sq);
        if (sq < best_sq) best_sq = sq, best = tau;
    }
    /* the speed of the surge, dZ/dT between the last two points */
    double slope = (interp(T, Z, ns, MM_T[3]) - interp(T, Z, ns, MM_T[2])) / (MM_T[3] - MM_T[2]),
           mm_slope = (MM_Z[3] - MM_Z[2]) / (MM_T[3] - MM_T[2]);
    REPORT("largest deviation up to x/a = 3 with the release shift T0 = %.3f (%.1f ms): %.1f%% (MM), %.1f%% (MMT) "
           "(target and assert: 10%%); raw: %.1f%% (MM), %.1f%% (MMT) (asserted: 20%%); best-fitting shift %.3f "
           "(%.1f ms: %.1f%%, %.1f%%)",
           TAU0, mms * TAU0, 100 * w_mm, 100 * w_mmt, 100 * raw_mm, 100 * raw_mmt, best, mms * best,
           100 * front_error(T, Z, ns, MM_T, MM_Z, 4, best, NULL),
           100 * front_error(T, Z, ns, MMT_T, MMT_Z, 10, best, NULL));
    REPORT("speed of the surge dZ/dT over T = %.2f..%.2f: %.3f, Martin & Moyce %.3f (%+.1f%%)", MM_T[2], MM_T[3], slope,
           mm_slope, 100 * (slope - mm_slope) / mm_slope);
    REPORT("sub-steps over %d calls: the count raised %d times, the largest Courant number u_max dt / l0 %.3f, the "
           "particles at most %.2f ms behind the clock",
           ns - 1, raises, worst_courant, worst_lag * 1e3);
    /* the sanitizer build's column (10 spacings across, 5.7 mm) needs one sub-step of 2 ms throughout: its front
     * stays under Courant 0.8's 2.3 m/s, so only the full build's (20 across) raises the count */
    CHECK(raises > 0 || SAN_BUILD, "the sub-step count never rose with the front's speed");
    CHECK(over == 0, "%d calls' sub-steps past 0.9 of the Courant limit (largest %.3f)", over, worst_courant);
    CHECK(lagging == 0, "%d calls left the particles a call or more behind the clock (largest lag %.2f ms)", lagging,
          worst_lag * 1e3);
    CHECK(invalid == 0, "%d solves whose rows broke the two-thread sweeps' blocks", invalid);
    CHECK(T[ns - 1] > MM_T[3], "the run stopped early: T %.2f, x/a %.2f", T[ns - 1], Z[ns - 1]);
    CHECK(w_mm < 0.10 && w_mmt < 0.10, "surge front off Martin & Moyce by %.1f%% / %.1f%% (release shift %.3f)",
          100 * w_mm, 100 * w_mmt, TAU0);
    CHECK(raw_mm < 0.20 && raw_mmt < 0.20, "raw surge front off Martin & Moyce by %.1f%% / %.1f%%", 100 * raw_mm,
          100 * raw_mmt);
    CHECK(fabs(slope - mm_slope) / mm_slope < (SAN_BUILD ? 0.25 : 0.10), "surge speed %.3f against %.3f", slope,
          mm_slope);
    CHECK(finite_inside(w), "NaN or escaped particle");
    CHECK(st.nonfinite_repaired == 0, "%llu particles repaired", (unsigned long long)st.nonfinite_repaired);
    lists_never_full(w);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}
/* ---- surface tension (Appendix A): a cube of water in free fall ----------
 * A 1 mm lattice cube of water with no gravity: surface tension alone must
 * pull it into a ball and hold it together (with nu = 1e-6 m^2/s it rings
 * for long; the capillary time sqrt(rho R^3 / sigma) is ~75 ms).  Shape: the
 * extent along the four body diagonals over the extent along the three
 * axes, 1.73 for the cube, 1 for a ball.  Pressure: Laplace's jump is
 * 2 sigma / R; Appendix A's curvature (Eq. 38, kappa = 1/R, a 2D form) and
 * the MPS surface layer carry only part of it, so the test asserts that the
 * pressure inside is positive and proportional to sigma (a run at sigma/2)
 * and prints its ratio to 2 sigma / R. */
typedef struct drop_result {
    double shape0, shape, worst_shape, rg, worst_rg, farthest, p_in, req;
} drop_result;

static drop_result water_drop(float sigma, int m, double duration) {
    drop_result r = {0};
    /* the world's step is the server's 1/60 s: the solver sub-steps within the capillary limit
     * sqrt(rho l0^3 / (2 pi sigma)), 1.5 ms here (without it the drop burst in the first step) */
    fs_pool *pool;
    fs_world *w = mps_world(m * m * m + 10, 2, &pool);
    const float l0 = 1e-3f, box = 3.0f * (float)m * l0, c0 = 0.5f * box - 0.5f * (float)m * l0;
    const double dt = fs_default_world_def().dt;
    fs_domain dom = {{0, 0, 0}, {box, box, box}, {0, 0, 0}, 3.1f * l0, l0, 0.5f * l0};
    fs_error err;
    CHECK(fs_world_reset(w, &dom, &err) == FS_OK, "reset: %s", err.msg);
    int n = fs_world_add_block(w, (fs_vec3){c0, c0, c0}, (fs_vec3){c0 + m * l0, c0 + m * l0, c0 + m * l0}, FS_MAT_WATER,
                               0.0f);
    CHECK(fs_world_set_param(w, FS_MAT_WATER, FS_P_SURFACE_TENSION, sigma, &err) == FS_OK, "%s", err.msg);
    r.req = cbrt(3.0 * n / (4.0 * 3.14159265358979)) * l0;
    float *P = malloc(sizeof(float) * (size_t)n);
    const int steps = (int)(duration / dt + 0.5);
    int samples = 0;
    for (int s = 0; s <= steps; s++) {
        if (s > 0) fs_world_step(w);
        fs_particles_view v;
        fs_world_view(w, &v);
        double c[3] = {0, 0, 0};
        for (int i = 0; i < v.count; i++) c[0] += v.x[i], c[1] += v.y[i], c[2] += v.z[i];
        for (int a = 0; a < 3; a++) c[a] /= v.count;
        double axis[3] = {0, 0, 0}, diag[4] = {0, 0, 0, 0}, rg = 0, far = 0, pin = 0;
        int nin = 0, k = fs_world_mps_fields(w, P, NULL, n);
        for (int i = 0; i < v.count; i++) {
            double x = v.x[i] - c[0], y = v.y[i] - c[1], z = v.z[i] - c[2], rr = sqrt(x * x + y * y + z * z);
            double q[7] = {fabs(x),         fabs(y),         fabs(z),         fabs(x + y + z),
                           fabs(x + y - z), fabs(x - y + z), fabs(-x + y + z)};
            for (int a = 0; a < 3; a++) axis[a] = q[a] > axis[a] ? q[a] : axis[a];
            for (int a = 0; a < 4; a++) diag[a] = q[3 + a] / sqrt(3.0) > diag[a] ? q[3 + a] / sqrt(3.0) : diag[a];
            rg += rr * rr, far = rr > far ? rr : far;
            if (i < k && rr < 0.5 * r.req) pin += P[i], nin++;
        }
        double shape = (diag[0] + diag[1] + diag[2] + diag[3]) / 4 / ((axis[0] + axis[1] + axis[2]) / 3);
        rg = sqrt(rg / v.count) / r.req;
        if (s == 0) r.shape0 = shape;
        r.worst_rg = rg > r.worst_rg ? rg : r.worst_rg;
        r.farthest = far / r.req > r.farthest ? far / r.req : r.farthest;
        if (s * dt >= 0.5 * duration) { /* the second half: after a few capillary times */
            r.shape += shape, r.rg += rg, r.p_in += nin ? pin / nin : 0, samples++;
            r.worst_shape = shape > r.worst_shape ? shape : r.worst_shape;
        }
    }
    r.shape /= samples, r.rg /= samples, r.p_in /= samples;
    CHECK(finite_inside(w), "NaN or escaped particle");
    free(P);
    drop(w, pool);
    return r;
}

void test_mps_surface_tension(void) {
    const int m = SAN_BUILD ? 10 : 12;
    const double duration = SAN_BUILD ? 0.3 : 0.4, sigma = 0.0728;
    drop_result a = water_drop((float)sigma, m, duration), b = water_drop((float)(0.5 * sigma), m, duration);
    const double ball_rg = sqrt(0.6); /* a uniform ball's radius of gyration over its radius */
    REPORT("a %d^3 cube of water (l0 = 1 mm, R_eq = %.2f mm) without gravity, %.2f s, sigma = %.4f N/m: diagonal/axis "
           "extent %.3f at the start, %.3f on average over the second half (worst %.3f; a ball: 1); radius of "
           "gyration %.3f R_eq (a ball %.3f, the cube %.3f; largest %.3f); farthest particle %.2f R_eq",
           m, 1e3 * a.req, duration, sigma, a.shape0, a.shape, a.worst_shape, a.rg, ball_rg,
           sqrt(0.25) * m / (a.req / 1e-3), a.worst_rg, a.farthest);
    REPORT("pressure inside (r < R_eq / 2, second half): %.2f Pa at sigma, %.2f Pa at sigma / 2 (ratio %.2f); "
           "Laplace's 2 sigma / R = %.1f Pa (measured / Laplace %.2f)",
           a.p_in, b.p_in, a.p_in / b.p_in, 2 * sigma / a.req, a.p_in / (2 * sigma / a.req));
    CHECK(a.shape0 > 1.6, "the start is not a cube: %.3f", a.shape0);
    CHECK(a.shape < 1.15 && b.shape < 1.15, "the drop did not round up: %.3f, %.3f", a.shape, b.shape);
    CHECK(a.worst_rg < 0.85 && b.worst_rg < 0.85, "the drop came apart: radius of gyration %.3f, %.3f R_eq", a.worst_rg,
          b.worst_rg);
    CHECK(a.farthest < 1.6 && b.farthest < 1.6, "a particle left the drop: %.2f, %.2f R_eq", a.farthest, b.farthest);
    CHECK(a.p_in > 0 && b.p_in > 0 && fabs(a.p_in / b.p_in - 2.0) < 0.5,
          "pressure inside %.2f / %.2f Pa, not "
          "proportional to sigma",
          a.p_in, b.p_in);
}

/* ---- inflow and outflow: the mps_obstacle scene ---------------------------
 * A jet (an emitter) lands on a box obstacle of wall particles and the water
 * leaves through a drain in the far corner: the count of particles must
 * level off where the drain takes what the jet brings, no particle may end
 * inside the obstacle. */
void test_mps_inflow_outflow(void) {
    fs_pool *pool;
    fs_world *w = mps_world(3200, 2, &pool);
    fs_error err;
    CHECK(fs_world_load_scene(w, "mps_obstacle", 800, &err) == FS_OK, "%s", err.msg);
    const fs_domain dom = fs_world_domain(w);
    const float L = dom.box_max.x, e = 0.5f * dom.spacing;
    const int n0 = fs_world_particle_count(w);
    fs_mps_info in;
    fs_world_mps_info(w, &in);
    int inside = 0, on_top = 0, count[6] = {0};
    uint64_t emitted[6] = {0}, drained[6] = {0};
    for (int s = 1; s <= 300; s++) { /* 5 s */
        fs_world_step(w);
        if (s % 60) continue;
        fs_stats st;
        fs_world_stats(w, &st);
        fs_particles_view v;
        fs_world_view(w, &v);
        const int k = s / 60;
        count[k] = v.count, emitted[k] = st.emitted, drained[k] = st.drained;
        on_top = 0;
        for (int i = 0; i < v.count; i++) {
            bool over = v.x[i] > 0.35f * L && v.x[i] < 0.6f * L && v.z[i] > 0.1f * L && v.z[i] < 0.4f * L;
            if (over && v.y[i] >= 0.25f * L) on_top++;
            if (v.x[i] > 0.35f * L + e && v.x[i] < 0.6f * L - e && v.y[i] < 0.25f * L - e && v.z[i] > 0.1f * L + e &&
                v.z[i] < 0.4f * L - e)
                inside++;
        }
        REPORT("  t = %d s: %d particles, %llu emitted, %llu drained, %d over the obstacle's top (the jet and the "
               "water on it)",
               k, v.count, (unsigned long long)st.emitted, (unsigned long long)st.drained, on_top);
    }
    const double in_last = (double)(emitted[5] - emitted[4]), out_last = (double)(drained[5] - drained[4]);
    REPORT("mps_obstacle at 800: %d at the start, %d wall particles (%d obstacle); over the last second %.0f in, "
           "%.0f out (%.0f%%), the count %d -> %d; %d particles ever inside the obstacle",
           n0, in.walls, in.obstacles, in_last, out_last, 100 * out_last / in_last, count[4], count[5], inside);
    CHECK(in.obstacles == 1, "%d obstacles", in.obstacles);
    CHECK(count[5] == n0 + (int)emitted[5] - (int)drained[5], "particles not conserved: %d != %d + %llu - %llu",
          count[5], n0, (unsigned long long)emitted[5], (unsigned long long)drained[5]);
    CHECK(in_last > 0 && out_last > 0.8 * in_last, "the drain does not keep up: %.0f in, %.0f out", in_last, out_last);
    /* At 5 s the tank still fills slowly: +20 to +32 particles in the last second (4.5-7% of the count) across
     * builds that differ only in rounding; without the drain it would climb by the emitter's 200 (45%). */
    CHECK(count[5] - count[4] < count[4] / 10, "the count still climbs: %d -> %d", count[4], count[5]);
    CHECK(inside == 0, "%d particles inside the obstacle", inside);
    CHECK(on_top > 10, "only %d particles over the obstacle", on_top);
    CHECK(finite_inside(w), "NaN or escaped particle");
    drop(w, pool);
}

/* ---- 3. two fluids (Sec. 3.4): oil below water rises above it ------------- */
void test_mps_oil_water(void) {
    fs_pool *pool;
    fs_world *w = mps_world(6000, 2, &pool);
    const float l0 = 0.02f;
    const int nx = SAN_BUILD ? 12 : 20, nz = SAN_BUILD ? 4 : 6, layers = SAN_BUILD ? 8 : 10;
    mps_domain(w, (fs_vec3){nx * l0, (2 * layers + 8) * l0, nz * l0}, l0);
    int no = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){nx * l0, layers * l0, nz * l0}, FS_MAT_OIL, 0.0f);
    int nw = fs_world_add_block(w, (fs_vec3){0, layers * l0, 0}, (fs_vec3){nx * l0, 2 * layers * l0, nz * l0},
                                FS_MAT_WATER, 0.0f);
    /* a small tilt of the interface seeds the overturn deterministically */
    fs_world_push(w, (fs_vec3){0.25f * nx * l0, layers * l0, 0.5f * nz * l0}, 4 * l0, (fs_vec3){0, 1, 0}, 0.05f, NULL,
                  NULL);
    const int steps = 420; /* 7 s */
    double yo = 0, yw = 0;
    for (int t = 0; t <= steps; t++) {
        if (t % (steps / 4) == 0) {
            fs_particles_view v;
            fs_world_view(w, &v);
            double so = 0, sw = 0;
            int co = 0, cw = 0;
            for (int i = 0; i < v.count; i++) {
                if (v.material[i] == FS_MAT_OIL)
                    so += v.y[i], co++;
                else
                    sw += v.y[i], cw++;
            }
            yo = so / co, yw = sw / cw;
            fs_mps_info in;
            fs_world_mps_info(w, &in);
            REPORT("t = %.2f s: mean height of oil %.3f m, of water %.3f m (%d sub-steps of %.2f ms)", t / 60.0, yo, yw,
                   in.substeps, in.dt_sub * 1e3);
        }
        if (t < steps) fs_world_step(w);
    }
    REPORT("%d oil (900 kg/m^3, nu %.0e m^2/s) below %d water (1000 kg/m^3, nu %.0e m^2/s), l0 = %.0f mm", no,
           fs_world_get_param(w, FS_MAT_OIL, FS_P_KIN_VISCOSITY), nw,
           fs_world_get_param(w, FS_MAT_WATER, FS_P_KIN_VISCOSITY), l0 * 1e3);
    CHECK(yo > yw + 1.5f * l0, "the oil (%.3f m) is not above the water (%.3f m)", yo, yw);
    CHECK(finite_inside(w), "NaN or escaped particle");
    drop(w, pool);
}

/* ---- heat (Solenthaler Eq. 21, as the Clavet solver) and heaters under MPS */
void test_mps_heat(void) {
    fs_pool *pool;
    const float l0 = 0.02f;
    const int nx = 12, ny = 8, nz = 6;
    fs_world *w = lattice_tank(nx, ny, nz, l0, &pool, NULL);
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) ((float *)v.temperature)[i] = v.x[i] < 0.5f * nx * l0 ? 10.0f : 30.0f;
    double q0 = fs_world_total_heat(w), spread0 = 0, spread1 = 0, mean = q0 / v.count;
    for (int i = 0; i < v.count; i++) spread0 += fabs(v.temperature[i] - mean);
    for (int t = 0; t < 30; t++) fs_world_step(w);
    double q1 = fs_world_total_heat(w);
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) spread1 += fabs(v.temperature[i] - mean);
    /* then a hot plate on the floor */
    fs_heater_def h = {FS_HEAT_FLOOR, {0, 0, 0}, 1.5f * l0, 2.0f, 80.0f, true};
    fs_world_set_heater(w, -1, &h, NULL);
    for (int t = 0; t < 30; t++) fs_world_step(w);
    double q2 = fs_world_total_heat(w);
    REPORT("%d particles at 10 / 30 C, 0.5 s insulated: total heat %.3f -> %.3f (relative %.1e), mean deviation "
           "%.2f -> %.2f C; 0.5 s on an 80 C plate: mean %.2f -> %.2f C",
           v.count, q0, q1, fabs(q1 - q0) / q0, spread0 / v.count, spread1 / v.count, q1 / v.count, q2 / v.count);
    CHECK(fabs(q1 - q0) / q0 < 1e-5, "heat not conserved: %.6f -> %.6f", q0, q1);
    CHECK(spread1 < 0.9 * spread0, "no diffusion");
    CHECK(q2 / v.count > q1 / v.count + 1.0, "the plate did not heat");
    drop(w, pool);
}

/* ---- 4. the preconditioned CG solve on a 20k-particle tank ---------------- */
void test_mps_cg_20k(void) {
    fs_pool *pool;
    const int nx = SAN_BUILD ? 20 : 40, ny = SAN_BUILD ? 12 : 25, nz = 20; /* 20 000 (4 800 under ASan) */
    fs_world *w = mps_world(nx * ny * nz + 10, 2, &pool);
    const float l0 = 0.02f;
    mps_domain(w, (fs_vec3){nx * l0, (ny + 5) * l0, nz * l0}, l0);
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){nx * l0, ny * l0, nz * l0}, FS_MAT_WATER, 0.0f);
    int worst = 0;
    double res = 0;
    for (int t = 0; t < 3; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        REPORT("step %d: %d particles, %d unknowns (%d free-surface particles "
               "Dirichlet), %d sub-steps; last CG solve: %d iterations, relative residual %.2e; assemble %.1f ms, "
               "solve %.1f ms",
               t + 1, n, in.unknowns, in.surface, in.substeps, st.solver_iterations, st.solver_residual,
               st.phase_ms[FS_PHASE_ASSEMBLE], st.phase_ms[FS_PHASE_SOLVE]);
        worst = st.solver_iterations > worst ? st.solver_iterations : worst;
        res = st.solver_residual > res ? st.solver_residual : res;
    }
    CHECK(worst > 0 && worst <= 100, "CG took %d iterations", worst);
    CHECK(res <= 1e-3, "residual %.2e above the tolerance (the solver's CG_TOL, 1e-3)", res);
    drop(w, pool);
}

/* ---- 5. determinism: thread counts and snapshots ------------------------- */
static fs_world *obstacle_world(int threads, fs_pool **pool) {
    fs_world *w = mps_world(3000, threads, pool);
    fs_error err;
    CHECK(fs_world_load_scene(w, "mps_obstacle", 1500, &err) == FS_OK, "%s", err.msg);
    fs_heater_def h = {FS_HEAT_SPHERE, {0.3f, 0.1f, 0.3f}, 0.3f, 30.0f, 0, true};
    fs_world_set_heater(w, -1, &h, NULL);
    return w;
}

void test_mps_determinism(void) {
    const int steps = SAN_BUILD ? 40 : 60;
    uint64_t h[3];
    fs_mps_info in = {0};
    fs_stats st = {0};
    int invalid = 0;
    for (int k = 0; k < 3; k++) {
        fs_pool *pool;
        fs_world *w = obstacle_world(k == 0 ? 1 : 2, &pool);
        for (int t = 0; t < steps; t++) fs_world_step(w), invalid += !fs__mps_blocks_valid(w);
        h[k] = fs_world_hash(w);
        fs_world_mps_info(w, &in);
        fs_world_stats(w, &st);
        drop(w, pool);
    }
    REPORT("mps_obstacle (jet, drain, box obstacle of %d wall particles, a heater), %d steps: %llu emitted, %llu "
           "drained; hash %016llx (1 thread) %016llx (2 threads) %016llx (2 again)",
           in.walls, steps, (unsigned long long)st.emitted, (unsigned long long)st.drained, (unsigned long long)h[0],
           (unsigned long long)h[1], (unsigned long long)h[2]);
    CHECK(in.obstacles == 1, "the scene's obstacle is missing");
    CHECK(st.emitted > 0 && st.drained > 0, "emitter or drain idle");
    CHECK(h[0] == h[1] && h[1] == h[2], "state differs between thread counts");
    CHECK(invalid == 0, "%d solves whose rows broke the two-thread sweeps' blocks", invalid);
    /* snapshot at steps/2, restored into another world, continues bit-identically */
    fs_pool *pa, *pb;
    fs_world *a = obstacle_world(2, &pa), *b = mps_world(3000, 1, &pb);
    for (int t = 0; t < steps / 2; t++) fs_world_step(a);
    size_t n = fs_world_snapshot_size(a);
    unsigned char *buf = malloc(n);
    CHECK(fs_world_snapshot_write(a, buf, n) == n, "write");
    for (int t = 0; t < steps / 2; t++) fs_world_step(a);
    fs_world_load_scene(b, "oil_water", 1000, NULL); /* something else first */
    fs_error err;
    CHECK(fs_world_restore(b, buf, n, &err) == FS_OK, "restore: %s", err.msg);
    fs_mps_info ib;
    fs_world_mps_info(b, &ib);
    for (int t = 0; t < steps / 2; t++) fs_world_step(b);
    uint64_t ha = fs_world_hash(a), hb = fs_world_hash(b);
    REPORT("snapshot of %zu bytes at step %d (obstacles restored: %d): %d steps later %016llx saved, %016llx restored",
           n, steps / 2, ib.obstacles, steps / 2, (unsigned long long)ha, (unsigned long long)hb);
    CHECK(ha == hb, "restored world diverged");
    /* a damaged mps section is refused and changes nothing */
    uint64_t before = fs_world_hash(b);
    buf[n - 8] ^= 0x5a;
    fs_world_restore(b, buf, n, NULL);
    CHECK(fs_world_hash(b) == before || finite_inside(b), "a damaged snapshot broke the world");
    buf[n - 8] ^= 0x5a;
    /* the section's header ("MPS3": magic, obstacles, particles, wall pressures, the last call's sub-steps and
     * how far the particles trail the clock, as float bits): a sub-step count past MAX_SUB, or a lag outside
     * [0, 0.1] s, is refused with the world unchanged; an "MPS2" section (whose last word was a count of calm
     * calls, 29 at most) restores with the particles at the clock, and an "MPS1" section (neither word) too */
    static const unsigned char magic3[4] = {'M', 'P', 'S', '3'};
    size_t at = 0;
    for (size_t k = 4; k + 24 <= n && !at; k++)
        if (!memcmp(buf + k, magic3, 4)) at = k;
    CHECK(at > 0, "no MPS3 section in the snapshot");
    if (at) {
        uint32_t sub, sn;
        memcpy(&sub, buf + at + 16, 4);
        CHECK(sub >= 1 && sub <= 200, "the section's sub-step count %u", sub);
        uint32_t bad = 201;
        memcpy(buf + at + 16, &bad, 4);
        before = fs_world_hash(b);
        CHECK(fs_world_restore(b, buf, n, &err) != FS_OK && strstr(err.msg, "mps section"),
              "a sub-step count of 201 accepted");
        CHECK(fs_world_hash(b) == before, "a refused snapshot changed the world");
        memcpy(buf + at + 16, &sub, 4);
        float behind;
        memcpy(&behind, buf + at + 20, 4);
        CHECK(behind >= 0 && behind < 1.0f / 60, "the section's lag %g s", (double)behind);
        const float lags_bad[3] = {-1e-3f, 0.2f, NAN};
        for (int k = 0; k < 3; k++) {
            memcpy(buf + at + 20, &lags_bad[k], 4);
            CHECK(fs_world_restore(b, buf, n, &err) != FS_OK && strstr(err.msg, "lag behind the clock"),
                  "a lag of %g s accepted", (double)lags_bad[k]);
            CHECK(fs_world_hash(b) == before, "a refused snapshot changed the world");
        }
        /* as MPS2: the calm count's word (any below 30) read as no lag: the same world as an MPS3 section with 0 */
        uint64_t after[3];
        const uint32_t calm[2] = {29, 7}, calm_bad = 30;
        const float zero = 0;
        memcpy(buf + at + 20, &zero, 4);
        CHECK(fs_world_restore(b, buf, n, &err) == FS_OK, "a lag of 0 refused: %s", err.msg);
        for (int t = 0; t < 3; t++) fs_world_step(b);
        after[2] = fs_world_hash(b);
        buf[at + 3] = '2';
        memcpy(buf + at + 20, &calm_bad, 4);
        CHECK(fs_world_restore(b, buf, n, &err) != FS_OK && strstr(err.msg, "mps section"),
              "an MPS2 calm count of 30 accepted");
        for (int k = 0; k < 2; k++) {
            memcpy(buf + at + 20, &calm[k], 4);
            CHECK(fs_world_restore(b, buf, n, &err) == FS_OK, "an MPS2 section (calm count %u) refused: %s", calm[k],
                  err.msg);
            for (int t = 0; t < 3; t++) fs_world_step(b);
            after[k] = fs_world_hash(b);
        }
        CHECK(after[0] == after[2] && after[1] == after[2],
              "an MPS2 section restored otherwise than no lag: %016llx, %016llx against %016llx",
              (unsigned long long)after[0], (unsigned long long)after[1], (unsigned long long)after[2]);
        buf[at + 3] = '3';
        memcpy(buf + at + 20, &behind, 4);
        unsigned char *old = malloc(n); /* the same section as MPS1: 8 bytes shorter */
        memcpy(&sn, buf + at - 4, 4);
        sn -= 8;
        memcpy(old, buf, at - 4);
        memcpy(old + at - 4, &sn, 4);
        memcpy(old + at, "MPS1", 4);
        memcpy(old + at + 4, buf + at + 4, 12);
        memcpy(old + at + 16, buf + at + 24, n - at - 24);
        CHECK(fs_world_restore(b, old, n - 8, &err) == FS_OK, "an MPS1 section refused: %s", err.msg);
        fs_world_step(b);
        CHECK(finite_inside(b) && fs_world_particle_count(b) > 0, "the world restored from MPS1 broke");
        free(old);
    }
    free(buf);
    drop(a, pa);
    drop(b, pb);
#if defined(__GLIBC__) && !SAN_BUILD
    /* no allocation in the step once the walls stand (jet, drain, obstacle) */
    fs_pool *pc;
    fs_world *c = obstacle_world(2, &pc);
    fs_world_step(c);
    struct mallinfo2 m0 = mallinfo2();
    for (int t = 0; t < 30; t++) fs_world_step(c);
    struct mallinfo2 m1 = mallinfo2();
    REPORT("30 steps of mps_obstacle: heap in use %zu -> %zu bytes", m0.uordblks, m1.uordblks);
    CHECK(m0.uordblks == m1.uordblks, "the step allocated %zd bytes", (ssize_t)(m1.uordblks - m0.uordblks));
    drop(c, pc);
#endif
    /* the walls are built once per reset and change of obstacles, not by every step (a scene without a box
     * obstacle once rebuilt them, and their grid's arrays, on every call) */
    fs_pool *pd;
    fs_world *d = mps_world(3000, 2, &pd);
    CHECK(fs_world_load_scene(d, "mps_dam_break", 1000, &err) == FS_OK, "load: %s", err.msg);
    fs_world_step(d);
    const uint32_t b0 = fs__mps_wall_builds(d);
    for (int t = 0; t < 30; t++) fs_world_step(d);
    const uint32_t b1 = fs__mps_wall_builds(d);
    const fs_domain dd = fs_world_domain(d);
    const fs_vec3 lo = {dd.box_max.x - 0.3f, 0, 0}, hi = {dd.box_max.x - 0.2f, 0.2f, dd.box_max.z};
    CHECK(fs_world_mps_add_obstacle(d, lo, hi, &err) == FS_OK, "obstacle: %s", err.msg);
    for (int t = 0; t < 5; t++) fs_world_step(d);
    const uint32_t b2 = fs__mps_wall_builds(d);
    REPORT("mps_dam_break: walls built %u times by the load and first step, %u more by 30 steps, %u more by an "
           "obstacle and 5 steps",
           b0, b1 - b0, b2 - b1);
    CHECK(b0 >= 1 && b1 == b0 && b2 > b1 && b2 - b1 <= 2, "walls built %u, %u, %u", b0, b1, b2);
    drop(d, pd);
}

/* ---- the lists' reach -----------------------------------------------------
 * The lists are built at r^n and read at r*: they hold every pair the
 * sub-step needs while no pair's separation changes by more than 1.0 l0,
 * and the solver checks that instead of assuming it (docs/sim-notes.md,
 * "Time step").  Two blocks of water meet head on at 3 m/s each, without
 * gravity: the Courant limit (1.0 l0 a sub-step for each particle) lets
 * the fronts close by 2 l0 in a sub-step.  Every sub-step's lists are
 * compared with every particle and wall particle within r_e at r* by brute
 * force: without the check they miss pairs, with it none (sub-steps cut in
 * two, none taken past the lists); the same in the dam break.  A domain
 * whose h leaves the lists no margin is not checked (none is cut). */
/* A tube without gravity, TUBE_L x TUBE_M x TUBE_M spacings of TUBE_L0 (h = 3.1 l0), for water hurled along x. */
#define TUBE_L 40
#define TUBE_M 10
#define TUBE_L0 0.02f
static fs_world *tube(fs_pool **pool) {
    fs_world *w = mps_world(4000, 2, pool);
    const float l0 = TUBE_L0;
    fs_domain d = {{0, 0, 0}, {TUBE_L * l0, TUBE_M * l0, TUBE_M * l0}, {0, 0, 0}, 3.1f * l0, l0, 0.5f * l0};
    fs_error err;
    CHECK(fs_world_reset(w, &d, &err) == FS_OK, "reset: %s", err.msg);
    return w;
}

/* A block of B x S x S particles centred across the tube, its layers at x = x0 + dir (first + i) l0 (i < B),
 * moving at speed along -dir. */
static void tube_block(fs_world *w, float x0, float dir, float first, int B, int S, float speed) {
    const float l0 = TUBE_L0, y0 = 0.5f * (float)(TUBE_M - S) * l0;
    for (int i = 0; i < B; i++)
        for (int j = 0; j < S; j++)
            for (int k = 0; k < S; k++) {
                const fs_vec3 p = {x0 + dir * ((first + (float)i) * l0), y0 + ((float)j + 0.5f) * l0,
                                   y0 + ((float)k + 0.5f) * l0};
                CHECK(fs_world_add_particle(w, p, (fs_vec3){-dir * speed, 0, 0}, FS_MAT_WATER) >= 0, "add");
            }
}

static uint64_t head_on(bool unchecked, uint64_t *cuts, uint64_t *overruns, int *taken) {
    fs_pool *pool;
    fs_world *w = tube(&pool);
    const float mid = 0.5f * TUBE_L * TUBE_L0;
    for (int side = 0; side < 2; side++) /* blocks of 8 x 6 x 6 at 3 m/s, the fronts 3 spacings apart */
        tube_block(w, mid, side ? 1.0f : -1.0f, 1.5f, 8, 6, 3.0f);
    fs__mps_check_lists(w, true, unchecked);
    *taken = 0;
    for (int t = 0; t < 6; t++) {
        fs_world_step(w);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        *taken += in.taken;
    }
    fs_mps_info in;
    fs_world_mps_info(w, &in);
    *cuts = in.cuts, *overruns = in.overruns;
    const uint64_t missed = fs__mps_check_lists(w, false, false);
    CHECK(finite_inside(w), "a particle left the box or is not finite");
    if (unchecked) /* its fronts pass into each other unseen, and its lists may overflow: only the checked run's must
                      not */
        release(w, pool);
    else
        drop(w, pool);
    return missed;
}

void test_mps_reach(void) {
    uint64_t cuts0, over0, cuts1, over1;
    int taken0, taken1;
    const uint64_t miss0 = head_on(true, &cuts0, &over0, &taken0), miss1 = head_on(false, &cuts1, &over1, &taken1);
    REPORT("576 particles meeting at 6 m/s, 6 calls: without the check %d sub-steps, %llu pairs within r_e at r* "
           "missing from the lists; with it %d sub-steps (%llu cut in two, %llu taken past the lists), %llu missing",
           taken0, (unsigned long long)miss0, taken1, (unsigned long long)cuts1, (unsigned long long)over1,
           (unsigned long long)miss1);
    CHECK(miss0 > 0, "the fronts never outran the lists: the case does not test the check");
    CHECK(cuts0 == 0, "%llu cuts without the check", (unsigned long long)cuts0);
    CHECK(miss1 == 0, "%llu pairs missing from the lists", (unsigned long long)miss1);
    CHECK(cuts1 > 0 && over1 == 0, "%llu cuts, %llu overruns", (unsigned long long)cuts1, (unsigned long long)over1);

    /* the dam break's collapse and its run-up the far wall */
    fs_pool *pool;
    fs_world *w = mps_world(2000, 2, &pool);
    fs_error err;
    CHECK(fs_world_load_scene(w, "mps_dam_break", 1000, &err) == FS_OK, "load: %s", err.msg);
    fs__mps_check_lists(w, true, false);
    for (int t = 0; t < 90; t++) fs_world_step(w);
    fs_mps_info in;
    fs_world_mps_info(w, &in);
    const uint64_t miss = fs__mps_check_lists(w, false, false);
    const uint64_t far = fs__mps_far(w);
    REPORT("mps_dam_break, %d particles, 1.5 s: %llu sub-steps cut in two, %llu taken past the lists, %llu kept with "
           "a particle clear of obstacles moved past their reach by the pressure's correction, %llu pairs missing",
           fs_world_particle_count(w), (unsigned long long)in.cuts, (unsigned long long)in.overruns,
           (unsigned long long)far, (unsigned long long)miss);
    CHECK(miss == 0 && in.overruns == 0, "%llu pairs missing, %llu overruns", (unsigned long long)miss,
          (unsigned long long)in.overruns);
    CHECK(far > 0, "no particle moved past the lists' reach: the run does not test the clear particles' reach");
    drop(w, pool);

    /* a Clavet scene switched to MPS keeps its h = 2.1 l0: its lists have no margin beyond r_e, so nothing is
     * checked and the sub-steps keep Courant 0.5 (checked, every sub-step was cut four times over) */
    fs_world_def d = fs_default_world_def();
    d.capacity = 6000;
    pool = fs_pool_create(2);
    d.worker_count = 2, d.parallel_for = fs_pool_parallel_for, d.task_user = pool;
    w = fs_world_create(&d);
    CHECK(fs_world_load_scene(w, "dam_break", 3000, &err) == FS_OK, "load: %s", err.msg);
    CHECK(fs_world_set_solver(w, FS_SOLVER_MPS, &err) == FS_OK, "set_solver: %s", err.msg);
    const fs_domain dom = fs_world_domain(w);
    int taken = 0, planned = 0;
    for (int t = 0; t < 30; t++) {
        fs_world_step(w);
        fs_world_mps_info(w, &in);
        taken += in.taken, planned += in.substeps;
    }
    REPORT("dam_break switched to mps (h = %.1f l0), 30 calls: %d sub-steps taken, %d planned, %llu cut in two",
           dom.h / dom.spacing, taken, planned, (unsigned long long)in.cuts);
    CHECK(taken == planned && in.cuts == 0, "%d sub-steps taken of %d planned, %llu cuts", taken, planned,
          (unsigned long long)in.cuts);
    CHECK(finite_inside(w), "a particle left the box or is not finite");
    drop(w, pool);
}

/* ---- a thin obstacle -------------------------------------------------------
 * moved_ok keeps a particle whose lists hold an obstacle's wall particles
 * within 1.0 l0 of r^n by r^{n+1}, the pressure's correction included (the
 * others may move 2.0 l0: docs/sim-notes.md, "Time step"), so that an
 * impact's correction does not carry centres through a thin obstacle.  A
 * block of water hurled without gravity at a plate spanning the box's
 * section, 1, 2 and 3 spacings thick (the least an obstacle may be; the walls'
 * two layers), at 8, 12 and 20 m/s: no centre ever beyond the plate or inside
 * it.  With every particle allowed 2.0 l0 (the obstacle guard taken away)
 * 57-99 particle ticks pass the plate of one spacing at each speed.  The
 * "inside" count guards the rails' order: a centre pushed past the tank's
 * side where the plate meets it lies outside the plate's bounds when they are
 * tested, and a box clamp run only after them puts it inside the plate (1-2
 * centres at 12 m/s). */
void test_mps_thin_obstacle(void) {
    const float l0 = TUBE_L0, speeds[3] = {8.0f, 12.0f, 20.0f}, thick[3] = {1.0f, 2.0f, 3.0f};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++) {
            fs_pool *pool;
            fs_world *w = tube(&pool);
            const float x0 = 0.5f * TUBE_L * l0, x1 = x0 + thick[b] * l0, m = TUBE_M * l0;
            fs_error err;
            CHECK(fs_world_mps_add_obstacle(w, (fs_vec3){x0, 0, 0}, (fs_vec3){x1, m, m}, &err) == FS_OK, "obstacle: %s",
                  err.msg);
            tube_block(w, x0, -1.0f, 2.5f, 10, 8, speeds[a]); /* 10 x 8 x 8, its front 2.5 spacings from the plate */
            int past = 0, inside = 0;
            for (int t = 0; t < 30; t++) {
                fs_world_step(w);
                fs_particles_view v;
                fs_world_view(w, &v);
                for (int i = 0; i < v.count; i++) /* the rails put a centre on the face: inside by more than rounding */
                    past += v.x[i] > x1, inside += v.x[i] > x0 + 1e-3f * l0 && v.x[i] < x1 - 1e-3f * l0;
            }
            REPORT("%d particles at %.0f m/s against a plate %.0f spacings thick, 0.5 s: %d particle ticks beyond "
                   "it, %d inside it, %llu sub-steps with a particle past the lists' reach",
                   fs_world_particle_count(w), speeds[a], thick[b], past, inside, (unsigned long long)fs__mps_far(w));
            CHECK(past == 0 && inside == 0, "%d particle ticks beyond the plate, %d inside it", past, inside);
            CHECK(finite_inside(w), "a particle left the box or is not finite");
            drop(w, pool);
        }
}
