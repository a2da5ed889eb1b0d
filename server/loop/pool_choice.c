/* pool_choice.c - a small world steps on its own thread; the shared pool
 * is for worlds one thread cannot keep in time.
 *
 * At the pool's scale the fan-out of a small world's short jobs (eight
 * colours a sweep) costs more than it saves: the dam break of 1,458
 * particles took 1.3 ms a step alone and 2.3 ms on two threads (4.6
 * core-ms), and rooms sharing the pool wait for each other's jobs (on a busy
 * machine a pooled step of it took 13 ms).  So a world steps alone while a
 * step alone, estimated as its particles times the CPU time of a particle
 * when it last stepped alone, fits POOL_ON of the tick; on the pool from
 * above that, and alone again under POOL_OFF (the gap keeps a world near the
 * line from switching every second).  The estimate is CPU time, the work a
 * step does: a busy machine stretches the wall time of both ways of
 * stepping, and a measure of one way taken in a quiet second says nothing
 * of the other in a busy one (comparing them sent a 20k world off the pool
 * while a relay flooded the node, at 0.58 realtime).  Results do not depend
 * on the choice (fs_parallel_for_fn: the same for any split). */
#include "pool_choice.h"

void pool_choice_learn(pool_choice *c, double alone_ms, int particles) {
    if (alone_ms > 0 && particles > 0) c->alone_ms_per_particle = alone_ms / particles;
}

void pool_choice_update(pool_choice *c, double mean_ms, double cpu_ms, int particles, double period_ms, int threads) {
    if (threads < 2) {
        c->pooled = false;
        return;
    }
    if (mean_ms <= 0) return;
    if (!c->pooled) pool_choice_learn(c, cpu_ms, particles);
    if (c->alone_ms_per_particle <= 0) { /* never measured alone: the next second is */
        c->pooled = false;
        return;
    }
    const double alone = c->alone_ms_per_particle * particles;
    if (!c->pooled)
        c->pooled = alone > POOL_ON * period_ms;
    else if (alone < POOL_OFF * period_ms)
        c->pooled = false;
}
