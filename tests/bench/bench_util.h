/* bench_util.h - what the sim benchmarks share (bench_sim.c, bench_meshes.c,
 * bench_probes.c): the wall clock and the process's CPU time in
 * milliseconds, an integer knob from the environment, and the machine's
 * load average (a figure is only as good as the machine was quiet). */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
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

static inline int env_int(const char *name, int def) {
    return getenv(name) ? atoi(getenv(name)) : def;
}

/* Prints "load average <when>: <the three averages ...>" from /proc/loadavg. */
static inline void load_average(const char *when) {
    FILE *f = fopen("/proc/loadavg", "r");
    char line[128] = "?";
    if (f) {
        if (!fgets(line, sizeof line, f)) snprintf(line, sizeof line, "?\n");
        fclose(f);
    }
    printf("load average %s: %s", when, line);
}

#endif
