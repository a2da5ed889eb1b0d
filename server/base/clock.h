/* clock.h - the monotonic clock every thread reads (nanoseconds). */
#ifndef SRV_CLOCK_H
#define SRV_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in nanoseconds. */
uint64_t clock_now_ns(void);

#endif
