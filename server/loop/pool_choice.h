/* pool_choice.h - whether a world steps on the shared worker pool or on its
 * sim thread alone: a value the sim thread owns, updated once a second from
 * its mean step (pool_choice.c). */
#ifndef SRV_POOL_CHOICE_H
#define SRV_POOL_CHOICE_H

#include <stdbool.h>
#include <stdint.h>

#define POOL_ON 0.4  /* pooled from when a step alone takes more than this share of the tick */
#define POOL_OFF 0.3 /* alone again under this share */

typedef struct pool_choice {
    bool pooled;
    double alone_ms_per_particle; /* a particle-step's cost on one thread, last measured (0: not yet) */
} pool_choice;

/* A mean of ms a step on one thread, at this many particles. */
void pool_choice_learn(pool_choice *c, double alone_ms, int particles);
/* Once a second: mean_ms is the last second's mean step (wall time) and
 * cpu_ms the sim thread's CPU time a step, taken all in the mode c->pooled
 * says; threads the pool's (below 2, never pooled).  The cost alone is
 * learnt from cpu_ms: a step's work, not the waits of a busy machine. */
void pool_choice_update(pool_choice *c, double mean_ms, double cpu_ms, int particles, double period_ms, int threads);

#endif
