/* clock.h - the monotonic clock every thread reads (nanoseconds), and the
 * fixed-rate schedule kept on it. */
#ifndef SRV_CLOCK_H
#define SRV_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_now_ns(void);
/* The calling thread's CPU time in nanoseconds (CLOCK_THREAD_CPUTIME_ID):
 * the work a step did, whatever else held the cores meanwhile. */
uint64_t clock_thread_cpu_ns(void);

/* A fixed-rate schedule with a bounded catch-up: the tick just run was due at
 * `due` and the clock now reads `now`.  Returns when the next tick is due:
 * due + period, or `now` when that lies more than max_debt periods in the
 * past (the schedule moves; no catch-up spiral).  A result <= now means run
 * the next tick at once. */
uint64_t clock_next_tick(uint64_t due, uint64_t now, uint64_t period, uint64_t max_debt);

#endif
