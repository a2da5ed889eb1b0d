/* bench_sim.c - the simulation core's benchmark: the 3D dam break at
 * dt = 1/60 s per step, h = 2.1 spacings, N = 10k, 59,319 (39^3, the
 * reference figure), 50k and 100k, with 1 and 2 threads.  Prints ms per step
 * by phase and particle-steps per second.  Usage: bench_sim [N ...] */
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

static void run(int n, int threads, int warm, int steps) {
    fs_pool *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
    d.capacity = n + n / 4;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    if (!w || fs_world_load_scene(w, "dam_break", n, &err) != FS_OK) {
        printf("cannot load: %s\n", w ? err.msg : "out of memory");
        exit(1);
    }
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
    return 0;
}
