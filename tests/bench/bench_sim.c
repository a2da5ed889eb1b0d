/* bench_sim.c - the simulation core's benchmark: the 3D dam break at
 * dt = 1/60 s per step, h = 2.1 spacings, N = 10k, 59,319 (39^3, the
 * reference figure), 50k and 100k, with 1 and 2 threads.  Prints ms per step
 * by phase and particle-steps per second.  Then the MPS solver's dam break
 * (10k and 50k): wall-clock seconds per simulated second, split into
 * neighbour search, explicit part, assembly, solve and correction.
 * Usage: bench_sim [N ...] | bench_sim mps [N ...] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fluid_sim.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void run_bodies(int n, int nbodies, int threads, int warm, int steps);
static void run_mps(int n, int threads, int warm, int steps);

/* A dam break of about n particles on a pool of `threads` threads. */
static fs_world *dam_break(int n, int threads, fs_pool **pool) {
    *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
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
    return w;
}

static void run(int n, int threads, int warm, int steps) {
    fs_pool *pool;
    fs_world *w = dam_break(n, threads, &pool);
    float nb0 = fs_world_mean_neighbours(w, NULL, NULL);
    for (int t = 0; t < warm; t++) fs_world_step(w);
    double ph[FS_PHASE_COUNT] = {0}, total = 0;
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] += st.phase_ms[k];
        total += st.step_ms;
    }
    double wall = now_ms() - t0;
    float nb1 = fs_world_mean_neighbours(w, NULL, NULL);
    int np = fs_world_particle_count(w);
    printf("%7d  %d  %6.2f | %5.2f %5.2f %5.2f %5.2f %5.2f | %5.1f -> %5.1f | %6.2f M\n", np, threads,
           total / steps, ph[FS_PHASE_GRID] / steps, ph[FS_PHASE_VISCOSITY] / steps, ph[FS_PHASE_SPRINGS] / steps,
           ph[FS_PHASE_RELAX] / steps, ph[FS_PHASE_COLLIDE] / steps, nb0, nb1, (double)np * steps / wall * 1e-3);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

int main(int argc, char **argv) {
    int sizes[16] = {10000, 50000, 59319, 100000}, ns = 4;
    if (argc > 1 && strcmp(argv[1], "mps") == 0) {
        int mw = getenv("BENCH_MPS_WARM") ? atoi(getenv("BENCH_MPS_WARM")) : 30;
        int ms = getenv("BENCH_MPS_STEPS") ? atoi(getenv("BENCH_MPS_STEPS")) : 15;
        printf("MPS dam break (mps_dam_break: 8 cm spacing, h = 3.1 spacings), %d warm-up steps of 1/60 s, then %d\n", mw,
               ms);
        printf("      N  T  s per sim s | grid  explicit  assemble  solve  correct (ms per step) | sub-steps  CG its\n");
        if (argc > 2)
            for (int i = 2; i < argc; i++) run_mps(atoi(argv[i]), 2, mw, ms);
        else
            for (int i = 0; i < 2; i++) run_mps(i ? 50000 : 10000, 2, mw, ms);
        return 0;
    }
    if (argc > 1) {
        ns = 0;
        for (int i = 1; i < argc && ns < 16; i++) sizes[ns++] = atoi(argv[i]);
    }
    int warm = getenv("BENCH_WARM") ? atoi(getenv("BENCH_WARM")) : 60;
    int steps = getenv("BENCH_STEPS") ? atoi(getenv("BENCH_STEPS")) : 120;
    printf("Clavet dam break, dt = 1/60 s per step, h = 2.1 spacings; %d warm-up steps (1 s), then the mean of %d\n",
           warm, steps);
    printf("      N  T  ms/step|  grid  visc  sprg relax  coll | neighbours (start -> run) | particle-steps/s\n");
    for (int i = 0; i < ns; i++)
        for (int t = 1; t <= 2; t++) run(sizes[i], t, warm, steps);
    if (argc <= 1) {
        printf("\nRigid bodies (Algorithm 6): the same dam break, 50k particles, with and without 20 bodies\n");
        printf("      N  bodies  T  ms/step  (collide phase, which holds the bodies' work)\n");
        for (int t = 1; t <= 2; t++) {
            run_bodies(50000, 0, t, warm, steps);
            run_bodies(50000, 20, t, warm, steps);
        }
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
    double ph[FS_PHASE_COUNT] = {0}, subs = 0, its = 0;
    double t0 = now_ms();
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        fs_mps_info in;
        fs_world_mps_info(w, &in);
        for (int k = 0; k < FS_PHASE_COUNT; k++) ph[k] += st.phase_ms[k];
        subs += in.substeps, its += st.solver_iterations;
    }
    double wall = now_ms() - t0, sim = steps * (double)fs_world_dt(w);
    printf("%7d  %d  %10.1f | %6.0f %8.0f %9.0f %6.0f %8.0f | %9.1f  %6.1f\n", fs_world_particle_count(w), threads,
           wall * 1e-3 / sim, ph[FS_PHASE_GRID] / steps, ph[FS_PHASE_VISCOSITY] / steps, ph[FS_PHASE_ASSEMBLE] / steps,
           ph[FS_PHASE_SOLVE] / steps, ph[FS_PHASE_COLLIDE] / steps, subs / steps, its / steps);
    fflush(stdout);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}
