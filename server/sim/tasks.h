/* tasks.h - running a step's work: fs__run fans a range out through the
 * injected parallel_for; fs__now_ms is the clock the phases are timed by. */
#ifndef SIM_TASKS_H
#define SIM_TASKS_H

#include "fluid_sim.h"

/* runs fn over [0, count) through the injected parallel_for (serially for
 * small counts or one worker) */
void fs__run(fs_world *w, fs_task_fn *fn, void *ctx, int count);
/* runs fn over [0, count) through the injected parallel_for whatever the
 * count (serially with one worker) */
void fs__run_all(fs_world *w, fs_task_fn *fn, void *ctx, int count);
/* the workers a step may fan out to (1: it runs serially) */
int fs__workers(const fs_world *w);
/* monotonic milliseconds, for the step's phase times */
double fs__now_ms(void);

#endif
