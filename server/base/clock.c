/* clock.c - the monotonic clock and the fixed-rate schedule (see clock.h). */
#include "clock.h"

#include <time.h>

uint64_t clock_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t clock_thread_cpu_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The fixed-step loop with a clamped accumulator (G. Fiedler, "Fix your
 * timestep!", 2004): ticks that ran late are made up, up to a bound. */
uint64_t clock_next_tick(uint64_t due, uint64_t now, uint64_t period, uint64_t max_debt) {
    const uint64_t next = due + period;
    return now > next && now - next > max_debt * period ? now : next;
}
