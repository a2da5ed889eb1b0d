/* bench_spheric2.c - SPHERIC Benchmark Test 2 (the MARIN dam break on a box,
 * Kleefsman et al. 2005) at several resolutions and in several solvers, in
 * process: loads the scene `spheric2`, steps it, reads its twelve probes
 * after every step and compares them with the measurements
 * (the CSV files of ../shared/validation/spheric2): the mean absolute error of each
 * water height over the run, H2's arrival (first above 2 cm; measured
 * 0.368 s), P1's first impact (first above 1 kPa; measured 0.394 s), its peak
 * and its mean over 1 s to the end, the impulse of its first impact (below,
 * impact_impulse) against the data's, and when the surge's tip (the leading
 * particle's edge) passes H2 and reaches the box (the data's first water
 * at H2 is at about 0.347 s).  Crossing times are given as
 * the first sample above the level and interpolated linearly between the
 * samples either side.  One markdown row per run, the load average before
 * and after it, and (with BENCH_SERIES=DIR) each run's series as
 * DIR/spheric2_<solver>_<n>.csv (t, H1-H4, P1-P8, front, and in MPS P1near:
 * P1 read from the particles within a spacing of it, p1_near) for plotting
 * (examples/spheric2.py --from-csv).  The figures are only as good as the
 * machine was quiet: the wall time is printed, not judged.
 * Usage: bench_spheric2 [solver ...]; BENCH_N (list, default "20000 60000"),
 * BENCH_SECONDS (6), BENCH_DT (seconds per step, 1/60; the probes are read
 * once a step), BENCH_THREADS (2), BENCH_DATA (the measurements' folder),
 * BENCH_SERIES (a folder for the series), BENCH_SIGMA (the water's surface
 * tension, N/m, for a comparison: unset keeps the preset), BENCH_SWEEPS (the
 * Clavet relaxation's sweeps a step: unset keeps the default, 2). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fluid_sim.h"

#define NPROBE 12
#define MAXROWS 8000
#define WET 0.02   /* m: H2 counts as reached above this */
#define IMPACT 1e3 /* Pa: P1's first impact */
static const char *NAMES[NPROBE] = {"H1", "H2", "H3", "H4", "P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"};

typedef struct series {
    int n;
    double t[MAXROWS], v[MAXROWS];
} series;

static series meas[NPROBE];

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void load_average(char *out, size_t cap) {
    FILE *f = fopen("/proc/loadavg", "r");
    snprintf(out, cap, "?");
    if (f) {
        if (fgets(out, (int)cap, f)) out[strcspn(out, "\n")] = 0;
        fclose(f);
    }
}

/* A measurement file: '#' comments, a 't,value' header, rows t,value. */
static bool read_csv(const char *dir, const char *name, series *s) {
    char path[1024], line[256];
    snprintf(path, sizeof path, "%s/%s.csv", dir, name);
    FILE *f = fopen(path, "r");
    s->n = 0;
    if (!f) return false;
    while (fgets(line, sizeof line, f) && s->n < MAXROWS) {
        double t, v;
        if (line[0] == '#' || line[0] == 't') continue;
        if (sscanf(line, "%lf,%lf", &t, &v) == 2) s->t[s->n] = t, s->v[s->n] = v, s->n++;
    }
    fclose(f);
    return s->n > 1;
}

/* The measurement at t, linearly interpolated. */
static double at(const series *s, double t) {
    if (t <= s->t[0]) return s->v[0];
    int lo = 0, hi = s->n - 1;
    if (t >= s->t[hi]) return s->v[hi];
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (s->t[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    return s->v[lo] + (s->v[hi] - s->v[lo]) * (t - s->t[lo]) / (s->t[hi] - s->t[lo]);
}

/* The first sample above level (*sample) and the crossing interpolated
 * between it and the one before; -1 when never. */
static double first_above(const double *t, const double *v, int n, double level, double *sample) {
    for (int k = 0; k < n; k++)
        if (v[k] > level) {
            *sample = t[k];
            if (k == 0) return t[0];
            return t[k - 1] + (t[k] - t[k - 1]) * (level - v[k - 1]) / (v[k] - v[k - 1]);
        }
    *sample = -1;
    return -1;
}

/* The impulse of the first impact on P1 (fs_world_def's pressure sensor reads the mean over each step, so
 * the sum of readings times the step is its impulse to the digit, however the steps sample the spike):
 * I(t), the integral of p from IMP_FROM, linear between samples (a sample's mean over its step, or the
 * data's trapezoids); the impact starts where I first reaches IMP_LEVEL (1 kPa for 2 ms) and *j[k] is
 * I over the IMP_SPAN[k] that follow.  The start in s, -1 when never. */
#define IMP_FROM 0.3
#define IMP_LEVEL 2.0
static const double IMP_SPAN[2] = {0.05, 0.1};

static double cum_at(const double *t, const double *c, int n, double x) {
    if (x <= t[0]) return c[0];
    for (int k = 1; k < n; k++)
        if (t[k] >= x) return c[k - 1] + (c[k] - c[k - 1]) * (x - t[k - 1]) / (t[k] - t[k - 1]);
    return c[n - 1];
}

/* means: each v[k] is the mean over (t[k-1], t[k]] (the sensor); else samples (trapezoids). */
static double impact_impulse(const double *t, const double *v, int n, bool means, double j[2]) {
    double *c = malloc(sizeof(double) * (size_t)n), t0 = -1;
    c[0] = 0;
    for (int k = 1; k < n; k++) {
        const double a = t[k - 1] > IMP_FROM ? t[k - 1] : IMP_FROM, b = t[k] > IMP_FROM ? t[k] : IMP_FROM;
        c[k] = c[k - 1] + (b - a) * (means ? v[k] : 0.5 * (v[k - 1] + v[k]));
    }
    for (int k = 1; k < n && t0 < 0; k++)
        if (c[k] >= IMP_LEVEL) t0 = t[k - 1] + (t[k] - t[k - 1]) * (IMP_LEVEL - c[k - 1]) / (c[k] - c[k - 1]);
    for (int q = 0; q < 2; q++)
        j[q] = t0 < 0 || t0 + IMP_SPAN[q] > t[n - 1] ? -1 : cum_at(t, c, n, t0 + IMP_SPAN[q]) - IMP_LEVEL;
    free(c);
    return t0;
}

static double env_double(const char *name, double def) {
    return getenv(name) ? atof(getenv(name)) : def;
}

typedef struct run {
    int rows, n;
    double *t, *v[NPROBE], *front, *p1near;
    double wall, spacing, ms_step;
} run;

/* MPS: P1 as a small sensor would read it, the mean of p + rho g dy over
 * the particles whose centres lie within a spacing of the face and within
 * a spacing of the sensor across it (the probe's own reading is a
 * kernel mean over h = 3.1 spacings, fs_world_probes_measure). */
static double p1_near(const fs_world *w, float *press, int cap) {
    fs_particles_view v;
    fs_world_view(w, &v);
    const int n = fs_world_mps_fields(w, press, NULL, cap);
    const float s = fs_world_domain(w).spacing, x0 = 0.8245f, y0 = 0.021f, z0 = 0.2985f + 0.176f;
    double sum = 0;
    int k = 0;
    for (int i = 0; i < n; i++) {
        const float dx = v.x[i] - x0, dy = v.y[i] - y0, dz = v.z[i] - z0;
        if (dx < 0 || dx > s || dy * dy + dz * dz > s * s) continue;
        sum += press[i] + 1000.0 * 9.81 * dy, k++;
    }
    return k ? sum / k : 0;
}

static bool simulate(fs_solver solver, int want, double seconds, run *r) {
    fs_world_def def = fs_default_world_def();
    const int threads = (int)env_double("BENCH_THREADS", 2);
    fs_pool *pool = threads > 1 ? fs_pool_create(threads) : NULL;
    def.capacity = want + want / 4 + 1000;
    def.dt = (float)env_double("BENCH_DT", 1.0 / 60.0);
    if (getenv("BENCH_SWEEPS"))
        def.clavet.relax_iterations = (int)env_double("BENCH_SWEEPS", 2); /* Clavet's sweeps a step */
    if (pool) def.worker_count = threads, def.parallel_for = fs_pool_parallel_for, def.task_user = pool;
    fs_world *w = fs_world_create(&def);
    fs_error err;
    if (!w || fs_world_set_solver(w, solver, &err) != FS_OK ||
        fs_world_load_scene(w, "spheric2", want, &err) != FS_OK) {
        fprintf(stderr, "spheric2 %s %d: %s\n", fs_solver_name(solver), want, w ? err.msg : "no world");
        return false;
    }
    if (getenv("BENCH_SIGMA") &&
        fs_world_set_param(w, FS_MAT_WATER, FS_P_SURFACE_TENSION, (float)env_double("BENCH_SIGMA", 0), &err) != FS_OK) {
        fprintf(stderr, "surface tension: %s\n", err.msg);
        return false;
    }
    int idx[NPROBE];
    for (int k = 0; k < NPROBE; k++) idx[k] = fs_world_probe_find(w, NAMES[k]);
    const double dt = fs_world_dt(w);
    const int steps = (int)ceil(seconds / dt - 1e-6);
    r->n = fs_world_particle_count(w);
    r->spacing = fs_world_domain(w).spacing;
    r->t = malloc(sizeof(double) * (size_t)(steps + 1)), r->front = malloc(sizeof(double) * (size_t)(steps + 1));
    r->p1near = malloc(sizeof(double) * (size_t)(steps + 1));
    float *press = malloc(sizeof(float) * (size_t)def.capacity);
    for (int k = 0; k < NPROBE; k++) r->v[k] = malloc(sizeof(double) * (size_t)(steps + 1));
    r->rows = 0;
    double t0 = now_s();
    for (int s = 0; s <= steps; s++) {
        if (s) fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        r->t[r->rows] = st.sim_time; /* the particles' time: an mps world's trails its steps by under a sub-step */
        for (int k = 0; k < NPROBE; k++) {
            float v = 0;
            if (idx[k] >= 0) fs_world_probe_get(w, idx[k], NULL, &v, NULL);
            r->v[k][r->rows] = v;
        }
        fs_particles_view pv;
        fs_world_view(w, &pv);
        float front = 1e9f;
        for (int i = 0; i < pv.count; i++) front = pv.x[i] < front ? pv.x[i] : front;
        r->front[r->rows] = front;
        r->p1near[r->rows] = p1_near(w, press, def.capacity);
        r->rows++;
    }
    r->wall = now_s() - t0;
    r->ms_step = 1e3 * r->wall / steps;
    free(press);
    fs_world_destroy(w);
    if (pool) fs_pool_destroy(pool);
    return true;
}

static void write_series(const char *dir, const char *solver, const run *r) {
    char path[1024];
    snprintf(path, sizeof path, "%s/spheric2_%s_%d.csv", dir, solver, r->n);
    FILE *f = fopen(path, "w");
    if (!f) return;
    fprintf(f, "# SPHERIC Test 2, solver %s, %d particles, spacing %.4f m (tests/bench/bench_spheric2.c)\nt", solver,
            r->n, r->spacing);
    for (int k = 0; k < NPROBE; k++) fprintf(f, ",%s", NAMES[k]);
    fprintf(f, ",front,P1near\n");
    for (int q = 0; q < r->rows; q++) {
        fprintf(f, "%.5f", r->t[q]);
        for (int k = 0; k < NPROBE; k++) fprintf(f, ",%.6g", r->v[k][q]);
        fprintf(f, ",%.5f,%.6g\n", r->front[q], r->p1near[q]);
    }
    fclose(f);
}

/* One markdown row: the errors and the crossing times. */
static void report(const char *solver, const run *r, const char *load0, const char *load1) {
    double mae[4] = {0};
    for (int k = 0; k < 4; k++) {
        if (!meas[k].n) continue;
        for (int q = 0; q < r->rows; q++) mae[k] += fabs(r->v[k][q] - at(&meas[k], r->t[q]));
        mae[k] /= r->rows;
    }
    double s_arr, s_imp, arr = first_above(r->t, r->v[1], r->rows, WET, &s_arr),
                         imp = first_above(r->t, r->v[4], r->rows, IMPACT, &s_imp);
    double peak = 0, late = 0, mlate = 0;
    int nl = 0;
    for (int q = 0; q < r->rows; q++) {
        peak = r->v[4][q] > peak ? r->v[4][q] : peak;
        if (r->t[q] >= 1.0) late += r->v[4][q], mlate += meas[4].n ? at(&meas[4], r->t[q]) : 0, nl++;
    }
    /* when the surge's tip (the leading particle's edge, half a spacing ahead of its centre) passes H2 and
     * reaches the box's face: -x of the front against the levels -0.992 and -0.8245 */
    double *negf = malloc(sizeof(double) * (size_t)r->rows), s_tip, tip[2];
    for (int q = 0; q < r->rows; q++) negf[q] = -(r->front[q] - 0.5 * r->spacing);
    tip[0] = first_above(r->t, negf, r->rows, -0.992, &s_tip);
    tip[1] = first_above(r->t, negf, r->rows, -0.8245, &s_tip);
    free(negf);
    double j[2] = {-1, -1}, mj[2] = {-1, -1}, t0 = impact_impulse(r->t, r->v[4], r->rows, true, j), mt0 = -1;
    if (meas[4].n) mt0 = impact_impulse(meas[4].t, meas[4].v, meas[4].n, false, mj);
    printf("| %s | %d | %.1f | %.1f | %.4f | %.4f | %.4f | %.4f | %.3f (%.3f) | %.3f (%.3f) | %.0f | %.0f (%.0f) | "
           "%.3f (%.3f) | %.0f / %.0f (%.0f / %.0f) | %.3f / %.3f | %.0f | %.1f | %s | %s |\n",
           solver, r->n, 1e3 * r->spacing, r->t[r->rows - 1], mae[1], mae[3], mae[0], mae[2], s_arr, arr, s_imp, imp,
           peak, nl ? late / nl : 0, nl ? mlate / nl : 0, t0, mt0, j[0], j[1], mj[0], mj[1], tip[0], tip[1], r->wall,
           r->ms_step, load0, load1);
    fflush(stdout);
}

int main(int argc, char **argv) {
    const char *data = getenv("BENCH_DATA") ? getenv("BENCH_DATA") : "../shared/validation/spheric2";
    for (int k = 0; k < NPROBE; k++)
        if (!read_csv(data, NAMES[k], &meas[k])) fprintf(stderr, "no measurement %s/%s.csv\n", data, NAMES[k]);
    const double seconds = env_double("BENCH_SECONDS", 6.0);
    const char *nlist = getenv("BENCH_N") ? getenv("BENCH_N") : "20000 60000";
    const char *dflt[] = {"clavet", "unified", "mps"};
    const int nsolv = argc > 1 ? argc - 1 : 3;
    printf("SPHERIC Test 2, %.2f s simulated at dt %.5f s; measured: H2 arrival 0.368 s, P1 first > 1 kPa 0.394 s, "
           "peak 11239 Pa; first water at H2 (above 2 mm) 0.350 s\n",
           seconds, env_double("BENCH_DT", 1.0 / 60.0));
    printf("| solver | particles | spacing mm | s | H2 MAE m | H4 MAE m | H1 MAE m | H3 MAE m | H2 > 2 cm: sample "
           "(interp.) s | P1 > 1 kPa: sample (interp.) s | P1 peak Pa | P1 mean 1 s-end (measured) Pa | P1 impact "
           "from (measured) s | its impulse over 50 / 100 ms (measured) Pa s | tip at H2 / at the box s | wall s | "
           "ms/step | load before | load after |\n");
    printf(
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
        "| --- |\n");
    for (int a = 0; a < nsolv; a++) {
        const char *sname = argc > 1 ? argv[a + 1] : dflt[a];
        int solver = fs_solver_find(sname);
        if (solver < 0) {
            fprintf(stderr, "unknown solver %s\n", sname);
            return 2;
        }
        char buf[256];
        snprintf(buf, sizeof buf, "%s", nlist);
        for (char *tok = strtok(buf, " ,"); tok; tok = strtok(NULL, " ,")) {
            char load0[128], load1[128];
            run r;
            load_average(load0, sizeof load0);
            if (!simulate((fs_solver)solver, atoi(tok), seconds, &r)) return 1;
            load_average(load1, sizeof load1);
            report(sname, &r, load0, load1);
            if (getenv("BENCH_SERIES")) write_series(getenv("BENCH_SERIES"), sname, &r);
            free(r.t), free(r.front), free(r.p1near);
            for (int k = 0; k < NPROBE; k++) free(r.v[k]);
        }
    }
    return 0;
}
