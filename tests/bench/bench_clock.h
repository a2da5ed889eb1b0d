/* bench_clock.h - the sim benchmarks' clocks (bench_sim.c, bench_meshes.c):
 * the wall clock and the process's CPU time, in milliseconds. */
#ifndef BENCH_CLOCK_H
#define BENCH_CLOCK_H

#include <time.h>

static inline double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* CPU time of the whole process (every thread), which excludes the time a
 * virtual CPU is stolen by its host or another process takes the core: with
 * one thread, a steadier figure than the wall clock on a shared machine
 * (with two, it counts the workers' spin). */
static inline double cpu_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

#endif
