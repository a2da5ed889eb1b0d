/* tasks.h - running a step's work: fs__run fans a range out through the
 * injected parallel_for; fs__now_ms is the clock the phases are timed by. */
#ifndef SIM_TASKS_H
#define SIM_TASKS_H

#include "fluid_sim.h"

/* runs fn over [0, count) through the injected parallel_for (serially for
 * small counts or one worker) */
void fs__run(fs_world *w, fs_task_fn *fn, void *ctx, int count);
/* monotonic milliseconds, for the step's phase times */
double fs__now_ms(void);

#endif
