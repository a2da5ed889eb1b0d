/* bench_sim.c - the simulation core's benchmark: the 3D dam break at
 * dt = 1/60 s per step, h = 2.1 spacings, N = 10k, 59,319 (39^3, the
 * reference figure), 50k and 100k, with 1 and 2 threads.  Prints ms per step
 * by phase and particle-steps per second; then rigid bodies; then the unified
 * solver against Clavet and the largest stable step of each; then the MPS
 * solver's dam break (10k and 50k): wall-clock seconds per simulated second,
 * split into neighbour search, explicit part, assembly, solve and correction.
 * Usage: bench_sim [N ...] | bench_sim mps [N ...]; BENCH_UNIFIED_ONLY=1 runs the unified section only;
 * BENCH_SWEEPS=K sets the Clavet relaxation's sweeps per step, BENCH_JACOBI=1 its Jacobi form, BENCH_THREADS=T
 * runs the Clavet rows with T threads only (1 or 2), BENCH_REST_DENSITY=R gives every material the rest density R
 * (3.0 is the reference's material) and BENCH_STIFFNESS=K the stiffness K (the coloured sweeps' over-relaxation is
 * K / 0.01, at most 1.5): the knobs of a comparison at equal compression, see BENCHMARKS.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fluid_sim.h"
#include "sim_testing.h" /* the unified solver's step count and CFL knob */

static void run_bodies(int n, int nbodies, int threads, int warm, int steps);
static void unified_section(int warm, int steps);
static void run_mps(int n, int threads, int warm, int steps);

/* The MPS dam break at the given sizes (default 10k and 50k). */
static void mps_section(const int *n, int count) {
    int mw = getenv("BENCH_MPS_WARM") ? atoi(getenv("BENCH_MPS_WARM")) : 30;
    int ms = getenv("BENCH_MPS_STEPS") ? atoi(getenv("BENCH_MPS_STEPS")) : 15;
    printf("\nMPS dam break (mps_dam_break: 8 cm spacing, h = 3.1 spacings), %d warm-up steps of 1/60 s, then %d\n", mw,
           ms);
    printf("      N  T  s per sim s | grid  explicit  assemble  solve  correct (ms per step) | sub-steps  CG its |  "
           "walls unknowns\n");
    if (count)
        for (int i = 0; i < count; i++)
            run_mps(n[i], getenv("BENCH_MPS_THREADS") ? atoi(getenv("BENCH_MPS_THREADS")) : 2, mw, ms);
    else
        for (int i = 0; i < 2; i++) run_mps(i ? 50000 : 10000, 2, mw, ms);
}

/* The reference's neighbour measure (peer_bench's countNeighbours): the mean
 * over every particle, surface and walls included, of the j != i with
 * 0 < |x_i - x_j| < h.  Particles are bucketed by cells of h, sorted by
 * cell key (the view's order is already spatial, so the sort is short). */
typedef struct {
    long long key;
    int i;
} cell_entry;
static int by_key(const void *a, const void *b) {
    long long x = ((const cell_entry *)a)->key, y = ((const cell_entry *)b)->key;
    return (x > y) - (x < y);
}
static long long cell_key(long long cx, long long cy, long long cz) {
    return (cx * 4096 + cy) * 4096 + cz;
}
static double mean_neighbours_all(const fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    const float h = fs_world_domain(w).h;
    const int n = v.count;
    cell_entry *e = malloc(sizeof *e * (size_t)(n ? n : 1));
    if (!e) return 0;
    for (int i = 0; i < n; i++)
        e[i] = (cell_entry){cell_key((long long)floorf(v.x[i] / h) + 2048, (long long)floorf(v.y[i] / h) + 2048,
                                     (long long)floorf(v.z[i] / h) + 2048),
                            i};
    qsort(e, (size_t)n, sizeof *e, by_key);
    long long pairs = 0;
    for (int a = 0; a < n; a++) {
        const int i = e[a].i;
        for (int d = 0; d < 27; d++) {
            const long long want = e[a].key + cell_key(d % 3 - 1, d / 3 % 3 - 1, d / 9 - 1);
            int lo = 0, hi = n;
            while (lo < hi) {
                int m = lo + (hi - lo) / 2;
                if (e[m].key < want)
                    lo = m + 1;
                else
                    hi = m;
            }
            for (int b = lo; b < n && e[b].key == want; b++) {
                const int j = e[b].i;
                float dx = v.x[i] - v.x[j], dy = v.y[i] - v.y[j], dz = v.z[i] - v.z[j];
                float r2 = dx * dx + dy * dy + dz * dz;
                pairs += j != i && r2 > 0 && r2 < h * h;
            }
        }
    }
    free(e);
    return n ? (double)pairs / n : 0;
}

/* BENCH_REST_DENSITY and BENCH_STIFFNESS, given to every material. */
static void materials_from_env(fs_world *w) {
    const char *env[2] = {"BENCH_REST_DENSITY", "BENCH_STIFFNESS"};
    const fs_param par[2] = {FS_P_REST_DENSITY, FS_P_STIFFNESS};
    fs_error err;
    for (int k = 0; k < 2; k++)
        for (int m = 0; getenv(env[k]) && m < fs_world_material_count(w); m++)
            if (fs_world_set_param(w, m, par[k], (float)atof(getenv(env[k])), &err) != FS_OK) {
                printf("%s: %s\n", env[k], err.msg);
                exit(1);
            }
}

/* A dam break of about n particles on a pool of `threads` threads. */
static fs_world *dam_break(int n, int threads, fs_pool **pool) {
    *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
    if (getenv("BENCH_SWEEPS")) d.clavet.relax_iterations = atoi(getenv("BENCH_SWEEPS"));
    if (getenv("BENCH_JACOBI")) d.clavet.relax = FS_RELAX_JACOBI;
    d.capacity = n + n / 4;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = *pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    if (!w || fs_world_load_scene(w, "dam_break", n, &err) != FS_OK) {
        printf("cannot load: %s\n", w ? err.msg : "out of memory");
        exit(1);
    }
    materials_from_env(w);
    return w;
}

static void run(int n, int threads, int warm, int steps) {
    fs_pool *pool;
    fs_world *w = dam_break(n, threads, &pool);
    float nb0 = fs_world_mean_neighbours(w, NULL, NULL);
    double all0 = mean_neighbours_all(w);
    for (int t = 0; t < warm; t++) fs_world_step(w);
    double ph[FS_PHASE_COUNT] = {0}, total = 0;
    double t0 = now_ms(), c0 = cpu_ms();
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] += st.phase_ms[k];
        total += st.step_ms;
    }
    double wall = now_ms() - t0, cpu = cpu_ms() - c0;
    float nb1 = fs_world_mean_neighbours(w, NULL, NULL);
    double all1 = mean_neighbours_all(w);
    int np = fs_world_particle_count(w);
    printf("%7d  %d  %6.2f | %5.2f %5.2f %5.2f %5.2f %5.2f | %5.1f -> %5.1f | %5.1f -> %5.1f | %6.2f M | %6.2f\n", np,
           threads, total / steps, ph[FS_PHASE_GRID] / steps, ph[FS_PHASE_VISCOSITY] / steps,
           ph[FS_PHASE_SPRINGS] / steps, ph[FS_PHASE_RELAX] / steps, ph[FS_PHASE_COLLIDE] / steps, nb0, nb1, all0, all1,
           (double)np * steps / wall * 1e-3, cpu / steps);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

int main(int argc, char **argv) {
    int sizes[16] = {10000, 50000, 59319, 100000}, ns = 4;
    if (argc > 1 && strcmp(argv[1], "mps") == 0) {
        int n[14], k = 0;
        for (int i = 2; i < argc && k < 14; i++) n[k++] = atoi(argv[i]);
        mps_section(n, k);
        return 0;
    }
    if (argc > 1) {
        ns = 0;
        for (int i = 1; i < argc && ns < 16; i++) sizes[ns++] = atoi(argv[i]);
    }
    int warm = getenv("BENCH_WARM") ? atoi(getenv("BENCH_WARM")) : 60;
    int steps = getenv("BENCH_STEPS") ? atoi(getenv("BENCH_STEPS")) : 120;
    if (getenv("BENCH_UNIFIED_ONLY")) {
        unified_section(warm, steps);
        return 0;
    }
    printf("Clavet dam break, dt = 1/60 s per step, h = 2.1 spacings; %d warm-up steps (1 s), then the mean of %d\n",
           warm, steps);
    printf("Neighbours, start -> end: of interior particles (fs_world_mean_neighbours), then of every particle (the "
           "reference's measure)\n");
    printf("      N  T  ms/step|  grid  visc  sprg relax  coll |   interior    |  all particles | particle-steps/s | "
           "CPU ms/step\n");
    /* BENCH_THREADS=T: only that thread count */
    const int t_only = getenv("BENCH_THREADS") ? atoi(getenv("BENCH_THREADS")) : 0;
    for (int i = 0; i < ns; i++)
        for (int t = 1; t <= 2; t++)
            if (!t_only || t == t_only) run(sizes[i], t, warm, steps);
    if (argc <= 1) {
        printf("\nRigid bodies (Algorithm 6): the same dam break, 50k particles, with and without 20 bodies\n");
        printf("      N  bodies  T  ms/step  (collide phase, which holds the bodies' work)\n");
        for (int t = 1; t <= 2; t++) {
            run_bodies(50000, 0, t, warm, steps);
            run_bodies(50000, 20, t, warm, steps);
        }
        unified_section(warm, steps);
        mps_section(NULL, 0);
    }
    return 0;
}

static void run_bodies(int n, int nbodies, int threads, int warm, int steps) {
    fs_pool *pool;
    fs_world *w = dam_break(n, threads, &pool);
    fs_domain dom = fs_world_domain(w);
    /* 20 bodies of every shape and several densities over the tank, where the
     * collapsing column reaches them */
    for (int k = 0; k < nbodies; k++) {
        fs_body_def b = fs_default_body_def();
        b.shape = (fs_shape)(k % 3);
        float sz = 0.15f + 0.05f * (float)(k % 4);
        b.size = (fs_vec3){sz, sz * 0.8f, sz};
        b.density = 300.0f + 250.0f * (float)(k % 5);
        b.pos = (fs_vec3){dom.box_max.x * (0.35f + 0.6f * (float)(k % 5) / 5.0f), dom.box_max.y * 0.3f,
                          dom.box_max.z * (0.2f + 0.6f * (float)(k / 5) / 4.0f)};
        fs_world_create_body(w, &b, NULL);
    }
    for (int t = 0; t < warm; t++) fs_world_step(w);
    double total = 0, coll = 0;
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        total += st.step_ms, coll += st.phase_ms[FS_PHASE_COLLIDE];
    }
    printf("%7d  %6d  %d  %7.2f  (%.2f)\n", fs_world_particle_count(w), fs_world_body_count(w), threads, total / steps,
           coll / steps);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* ---- the unified solver (Solenthaler 2007) against Clavet ------------------ */
static fs_world *world(int n, int threads, fs_pool **pool, float dt, fs_solver solver, const char *scene) {
    *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
    if (getenv("BENCH_SWEEPS")) d.clavet.relax_iterations = atoi(getenv("BENCH_SWEEPS"));
    if (getenv("BENCH_JACOBI")) d.clavet.relax = FS_RELAX_JACOBI;
    d.capacity = n + n / 4;
    d.dt = dt;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = *pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    if (!w || fs_world_set_solver(w, solver, &err) != FS_OK || fs_world_load_scene(w, scene, n, &err) != FS_OK) {
        printf("cannot load: %s\n", w ? err.msg : "out of memory");
        exit(1);
    }
    return w;
}

/* ms per 1/60 s step, and the unified solver's internal steps */
static void run_solver(fs_solver solver, const char *scene, int n, int threads, int warm, int steps) {
    fs_pool *pool;
    fs_world *w = world(n, threads, &pool, 1.0f / 60.0f, solver, scene);
    for (int t = 0; t < warm; t++) fs_world_step(w);
    double total = 0, sub = 0;
    float dt = 0, dtmin = 1;
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        total += st.step_ms;
        sub += fs__unified_last_substeps(w, &dt);
        if (dt > 0 && dt < dtmin) dtmin = dt;
    }
    if (solver == FS_SOLVER_UNIFIED)
        printf("%-8s %-16s %7d  %d  %8.2f  %5.1f x %.2f ms (smallest %.2f ms)\n", fs_solver_name(solver), scene,
               fs_world_particle_count(w), threads, total / steps, sub / steps, 1e3 / 60.0 / (sub / steps),
               dtmin * 1e3);
    else
        printf("%-8s %-16s %7d  %d  %8.2f  1 x 16.67 ms\n", fs_solver_name(solver), scene, fs_world_particle_count(w),
               threads, total / steps);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* Stability of a time step: 3 s of the dam break (3000 particles); stable
 * when nothing was repaired, at most a few particles were clamped back into
 * the box, and the kinetic energy after 3 s is within 1.5x that of the
 * smallest step tried (the column has settled into sloshing). */
typedef struct stab {
    double ke_end;
    unsigned long long repaired, clamped;
    float dtmin, dtmax;
} stab;

static stab stability_run(fs_solver solver, float world_dt, float cfl) {
    fs_pool *pool;
    fs_world *w = world(3000, 2, &pool, world_dt, solver, "dam_break");
    if (cfl > 0) fs__unified_set_cfl(w, cfl);
    stab r = {0, 0, 0, 1, 0};
    int n = (int)(3.0f / world_dt + 0.5f);
    for (int t = 0; t < n; t++) {
        fs_world_step(w);
        float dt;
        if (fs__unified_last_substeps(w, &dt)) {
            r.dtmin = dt < r.dtmin ? dt : r.dtmin;
            r.dtmax = dt > r.dtmax ? dt : r.dtmax;
        }
    }
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) r.ke_end += 0.5 * (v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]);
    r.ke_end /= v.count;
    fs_stats st;
    fs_world_stats(w, &st);
    r.repaired = st.nonfinite_repaired, r.clamped = st.escapes_clamped;
    fs_world_destroy(w);
    fs_pool_destroy(pool);
    return r;
}

static void unified_section(int warm, int steps) {
    printf("\nUnified solver (Solenthaler 2007) against Clavet: ms per 1/60 s step, 2 threads\n");
    printf("solver   scene                  N  T  ms/step  internal steps\n");
    const int sizes[2] = {20000, 50000};
    int uw = warm / 2, us = steps / 2; /* the unified solver is slower: fewer steps */
    for (int k = 0; k < 2; k++) {
        run_solver(FS_SOLVER_CLAVET, "dam_break", sizes[k], 2, warm, steps);
        run_solver(FS_SOLVER_UNIFIED, "dam_break", sizes[k], 2, uw, us);
    }
    const char *scenes[3] = {"chocolate_bunny", "shell", "merge"};
    const int counts[3] = {20000, 20000, 12000}; /* the scenes' defaults */
    for (int k = 0; k < 3; k++) run_solver(FS_SOLVER_UNIFIED, scenes[k], counts[k], 2, uw, us);

    printf("\nLargest stable time step, dam break of 3000 particles, 3 s simulated (stable: nothing repaired, <= 20\n"
           "particles clamped into the box, kinetic energy at 3 s within 1.5x of the smallest step's)\n");
    const float cfls[6] = {0.2f, 0.4f, 0.6f, 0.8f, 1.0f, 1.3f};
    stab ref = stability_run(FS_SOLVER_UNIFIED, 1.0f / 60.0f, cfls[0]);
    for (int k = 0; k < 6; k++) {
        stab r = k ? stability_run(FS_SOLVER_UNIFIED, 1.0f / 60.0f, cfls[k]) : ref;
        bool ok = r.repaired == 0 && r.clamped <= 20 && r.ke_end <= 1.5 * ref.ke_end;
        printf("unified  CFL %.1f: internal step %.2f .. %.2f ms: KE at 3 s %.3f J/kg, %llu repaired, %llu clamped: "
               "%s\n",
               cfls[k], r.dtmin * 1e3, r.dtmax * 1e3, r.ke_end, r.repaired, r.clamped, ok ? "stable" : "UNSTABLE");
    }
    const float dts[5] = {1.0f / 120, 1.0f / 60, 1.0f / 30, 1.0f / 20, 1.0f / 15};
    stab cref = stability_run(FS_SOLVER_CLAVET, dts[0], 0);
    for (int k = 0; k < 5; k++) {
        stab r = k ? stability_run(FS_SOLVER_CLAVET, dts[k], 0) : cref;
        bool ok = r.repaired == 0 && r.clamped <= 20 && r.ke_end <= 1.5 * cref.ke_end;
        printf("clavet   dt %5.2f ms: KE at 3 s %.3f J/kg, %llu repaired, %llu clamped: %s\n", dts[k] * 1e3, r.ke_end,
               r.repaired, r.clamped, ok ? "stable" : "UNSTABLE");
    }
}

/* The MPS dam break: seconds of wall clock per simulated second, and where they go. */
static void run_mps(int n, int threads, int warm, int steps) {
    fs_pool *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
    d.capacity = n + n / 4;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    if (!w || fs_world_set_solver(w, FS_SOLVER_MPS, &err) != FS_OK ||
        fs_world_load_scene(w, "mps_dam_break", n, &err) != FS_OK) {
        printf("cannot load: %s\n", w ? err.msg : "out of memory");
        exit(1);
    }
    for (int t = 0; t < warm; t++) fs_world_step(w);
    double ph[FS_PHASE_COUNT] = {0}, subs = 0, its = 0, unk = 0;
    int walls = 0;
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] += st.phase_ms[k];
        subs += in.taken, its += st.solver_iterations, unk += in.unknowns;
        walls = in.walls;
    }
    double wall = now_ms() - t0, sim = steps * (double)fs_world_dt(w);
    printf("%7d  %d  %10.2f | %6.1f %8.1f %9.1f %6.1f %8.1f | %9.2f  %6.1f | %6d %8.0f\n", fs_world_particle_count(w),
           threads, wall * 1e-3 / sim, ph[FS_PHASE_GRID] / steps, ph[FS_PHASE_VISCOSITY] / steps,
           ph[FS_PHASE_ASSEMBLE] / steps, ph[FS_PHASE_SOLVE] / steps, ph[FS_PHASE_COLLIDE] / steps, subs / steps,
           its / steps, walls, unk / steps);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}
