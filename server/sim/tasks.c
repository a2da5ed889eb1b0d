/* tasks.c - running a step's work: fs__run through the injected
 * parallel_for (serially for small counts or one worker), and the clock the
 * step's phases are timed by. */
#include <time.h>

#include "tasks.h"
#include "world_internal.h"

double fs__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void fs__run(fs_world *w, fs_task_fn *fn, void *ctx, int count) {
    if (count <= 0) return;
    if (fs__workers(w) > 1 && count >= 512)
        w->def.parallel_for(fn, ctx, count, w->def.task_user);
    else
        fn(0, count, 0, ctx);
}

void fs__run_all(fs_world *w, fs_task_fn *fn, void *ctx, int count) {
    if (count <= 0) return;
    if (fs__workers(w) > 1)
        w->def.parallel_for(fn, ctx, count, w->def.task_user);
    else
        fn(0, count, 0, ctx);
}

int fs__workers(const fs_world *w) {
    return w->def.parallel_for && w->def.worker_count > 1 ? w->def.worker_count : 1;
}
