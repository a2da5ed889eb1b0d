/* test_pool_choice.c - C unit tests of the choice between the shared pool
 * and one thread (server/loop/pool_choice.c) on given step means and times:
 * a small world steps alone, a large one on the pool, the gap between the
 * two thresholds, a busy machine, and no pool at all.
 * Nothing here reads a clock or times anything.
 * Prints "N passed, N failed"; exits non-zero on any failure. */
#include "pool_choice.h"
#include "testlib.h"

#define PERIOD 16.7 /* ms, 60 Hz */

static void small_world_alone(void) {
    pool_choice c = {0};
    pool_choice_update(&c, 2.3, 2.3, 1458, PERIOD, 2);
    CHECK(!c.pooled, "never measured alone: the next second is alone");
    pool_choice_update(&c, 1.3, 1.3, 1458, PERIOD, 2);
    CHECK(!c.pooled && c.alone_ms_per_particle > 0, "1.3 ms alone of 16.7: stays alone");
    pool_choice c2 = {.pooled = true, .alone_ms_per_particle = 1.3 / 1458};
    pool_choice_update(&c2, 2.3, 2.3, 1458, PERIOD, 2);
    CHECK(!c2.pooled, "a pooled small world goes back to one thread");
}

static void large_world_pooled(void) {
    pool_choice c = {0};
    pool_choice_update(&c, 23.0, 23.0, 20812, PERIOD, 2);
    CHECK(c.pooled, "23 ms alone (over %.1f): pooled", POOL_ON * PERIOD);
    pool_choice_update(&c, 9.2, 9.2, 20812, PERIOD, 2);
    CHECK(c.pooled, "9.2 ms pooled, 23 alone: stays pooled");
    CHECK(c.alone_ms_per_particle > 23.0 / 20812 * 0.999 && c.alone_ms_per_particle < 23.0 / 20812 * 1.001,
          "the cost alone is learnt only from steps alone: %g", c.alone_ms_per_particle);
    pool_choice_update(&c, 2.6, 2.6, 4000, PERIOD, 2);
    CHECK(!c.pooled, "drained to 4000 particles (4.4 ms alone, under %.1f): alone", POOL_OFF * PERIOD);
}

static void the_gap(void) {
    /* alone 6 ms: between POOL_OFF (5.0) and POOL_ON (6.7) of the tick */
    pool_choice alone = {0};
    pool_choice_update(&alone, 6.0, 6.0, 6000, PERIOD, 2);
    CHECK(!alone.pooled, "alone at 6.0 ms stays alone");
    pool_choice pooled = {.pooled = true, .alone_ms_per_particle = 6.0 / 6000};
    pool_choice_update(&pooled, 3.5, 3.5, 6000, PERIOD, 2);
    CHECK(pooled.pooled, "pooled at an estimated 6.0 ms alone stays pooled");
}

static void slow_pool(void) {
    /* a busy machine stretches a pooled step past the estimate alone: it stays pooled (alone would be slower still) */
    pool_choice c = {.pooled = true, .alone_ms_per_particle = 23.0 / 20812};
    pool_choice_update(&c, 30.0, 15.0, 20812, PERIOD, 2);
    CHECK(c.pooled, "a 20k world pooled at 30 ms against 23 alone stays pooled");
}

static void busy_machine(void) {
    /* another process holds the cores: a 1,458-particle step alone takes 9 ms of wall time but 1.3 ms of CPU */
    pool_choice c = {0};
    pool_choice_update(&c, 9.0, 1.3, 1458, PERIOD, 2);
    CHECK(!c.pooled, "the cost alone is its CPU time: stays alone");
    CHECK(c.alone_ms_per_particle < 1.31 / 1458, "learnt %g ms a particle", c.alone_ms_per_particle);
}

static void no_pool(void) {
    pool_choice c = {.pooled = true};
    pool_choice_update(&c, 30.0, 30.0, 20000, PERIOD, 1);
    CHECK(!c.pooled, "one thread in all: never pooled");
    pool_choice_update(&c, 0.0, 0.0, 20000, PERIOD, 2);
    CHECK(!c.pooled, "no step in the second (paused): unchanged");
}

int main(int argc, char **argv) {
    const tl_test tests[] = {
        {"small_world_alone", small_world_alone},
        {"large_world_pooled", large_world_pooled},
        {"the_gap", the_gap},
        {"slow_pool", slow_pool},
        {"busy_machine", busy_machine},
        {"no_pool", no_pool},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
