/* bench_probes.c - what the probes cost: the SPHERIC Test 2 scene (spheric2,
 * 20k particles) with its twelve probes (H1-H4 heights, P1-P8 pressures)
 * against the same scene without them, in each solver.  Two worlds in one
 * run, stepped in turn (A B, then B A: a drift of the machine's load falls
 * on both), so they go through the same flow step by step: CPU ms per step
 * of each, and the measurement itself: a step reads the pressure sensors
 * after each of its sub-steps (their mean over the step) and the heights at
 * its end, so fs_world_probes_measure (every probe read once) is timed again
 * after each step of the world with probes and counted once a sub-step (a
 * bound: the heights are read once), as a share of the step without them;
 * the bar is <= 1%.  The load average is printed before and after.
 * Usage: bench_probes [solver ...]; BENCH_N (20000), BENCH_WARM (24 steps of
 * 1/60 s: the front reaches the box), BENCH_STEPS (36, the impact),
 * BENCH_THREADS (1: the CPU time is then the step's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fluid_sim.h"

typedef struct result {
    double cpu[2];  /* ms per step: [0] without probes, [1] with */
    double measure; /* ms per call of fs_world_probes_measure */
    double subs;    /* the solver's sub-steps a step (mean) */
    int particles, probes;
} result;

static fs_world *spheric2(fs_solver s, fs_pool *pool, int threads, int n, bool probes) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 2 * n;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err = {{0}};
    if (!w || fs_world_set_solver(w, s, &err) != FS_OK || fs_world_load_scene(w, "spheric2", n, &err) != FS_OK) {
        printf("cannot load spheric2 in %s: %s\n", fs_solver_name(s), w ? err.msg : "out of memory");
        exit(1);
    }
    while (!probes && fs_world_probe_count(w) > 0) {
        fs_probe_def p;
        fs_world_probe_get(w, 0, &p, NULL, NULL);
        fs_world_remove_probe(w, p.name);
    }
    return w;
}

static result run(fs_solver s, int threads, int n, int warm, int steps) {
    fs_pool *pool = fs_pool_create(threads);
    fs_world *w[2] = {spheric2(s, pool, threads, n, false), spheric2(s, pool, threads, n, true)};
    for (int t = 0; t < warm; t++) fs_world_step(w[0]), fs_world_step(w[1]);
    result r = {{0, 0}, 0, 0, fs_world_particle_count(w[1]), fs_world_probe_count(w[1])};
    for (int t = 0; t < steps; t++) {
        for (int q = 0; q < 2; q++) {
            const int k = (t % 2) ^ q; /* A B, B A, ... */
            double c0 = cpu_ms();
            fs_world_step(w[k]);
            r.cpu[k] += cpu_ms() - c0;
        }
        fs_stats st;
        fs_world_stats(w[1], &st);
        fs_mps_info mi;
        r.subs += s != FS_SOLVER_MPS ? st.solver_iterations : fs_world_mps_info(w[1], &mi) && mi.taken ? mi.taken : 1;
        double c0 = cpu_ms();
        fs_world_probes_measure(w[1]);
        r.measure += cpu_ms() - c0;
    }
    r.cpu[0] /= steps, r.cpu[1] /= steps, r.measure /= steps, r.subs /= steps;
    fs_world_destroy(w[0]), fs_world_destroy(w[1]);
    fs_pool_destroy(pool);
    return r;
}

int main(int argc, char **argv) {
    const int n = env_int("BENCH_N", 20000), warm = env_int("BENCH_WARM", 24), steps = env_int("BENCH_STEPS", 36),
              threads = env_int("BENCH_THREADS", 1);
    printf("Probe cost: spheric2 with its 12 probes against none, two worlds stepped in turn (A B, B A) in one run; "
           "%d threads; %d warm-up steps of 1/60 s, then %d timed\n",
           threads, warm, steps);
    load_average("before");
    printf("solver   particles probes | ms/step CPU: without  with  (difference) | measure ms | sub-steps | share of a "
           "step\n");
    bool met = true;
    for (int s = 0; s < FS_SOLVER_COUNT; s++) {
        bool chosen = argc < 2;
        for (int a = 1; a < argc; a++) chosen |= strcmp(argv[a], fs_solver_name((fs_solver)s)) == 0;
        if (!chosen) continue;
        result r = run((fs_solver)s, threads, n, warm, steps);
        const double share = 100 * r.measure * r.subs / r.cpu[0];
        met &= share <= 1.0;
        printf("%-8s %9d %6d |              %8.2f %8.2f (%+.2f%%) | %10.4f | %9.1f | %.2f%%\n",
               fs_solver_name((fs_solver)s), r.particles, r.probes, r.cpu[0], r.cpu[1],
               100 * (r.cpu[1] - r.cpu[0]) / r.cpu[0], r.measure, r.subs, share);
        fflush(stdout);
    }
    printf("bar: the probes' measurement <= 1%% of a step in each solver: %s\n", met ? "met" : "NOT met");
    load_average("after");
    return 0;
}
