/* test_clock.c - C unit tests of the sim thread's fixed-rate schedule
 * (clock_next_tick, server/base/clock.c) on a virtual clock: a loop whose
 * ticks cost given times is replayed against the schedule, and the simulated
 * time it keeps is counted.  Nothing here reads a real clock or times anything.
 * Prints "N passed, N failed"; exits non-zero on any failure. */
#include <stdint.h>

#include "clock.h"
#include "testlib.h"

enum { PERIOD = 1000, DEBT = 6 };

/* The sim thread's loop (server/loop/sim_thread.c, sim_main) on a virtual
 * clock: tick k costs cost[k % ncost], until `end`. */
typedef struct run {
    int ticks, overruns; /* ticks run; ticks run at once (late or catching up) */
    uint64_t worst_debt; /* how far the schedule fell behind the clock at most */
} run;

static run replay(const uint64_t *cost, int ncost, uint64_t end) {
    uint64_t now = 0, due = 0;
    run r = {0, 0, 0};
    while (now < end) {
        now += cost[r.ticks % ncost];
        r.ticks++;
        due = clock_next_tick(due, now, PERIOD, DEBT);
        if (due <= now) {
            r.overruns++;
            if (now - due > r.worst_debt) r.worst_debt = now - due;
        } else {
            now = due; /* sleep_until */
        }
    }
    return r;
}

static void on_time(void) {
    CHECK(clock_next_tick(1000, 1500, PERIOD, DEBT) == 2000, "a tick that ends early waits for its slot");
    CHECK(clock_next_tick(1000, 2000, PERIOD, DEBT) == 2000, "one ending on the slot runs the next at once");
    const uint64_t cost[1] = {400};
    const run r = replay(cost, 1, 100 * PERIOD);
    CHECK(r.ticks == 100 && r.overruns == 0, "100 periods of 0.4-period ticks: %d ticks, %d late", r.ticks, r.overruns);
}

/* A transient: one tick of 3.5 periods among 0.5-period ones is made up. */
static void transient_made_up(void) {
    CHECK(clock_next_tick(0, 3500, PERIOD, DEBT) == 1000, "late by 2.5 periods: the next slot is in the past");
    uint64_t cost[50];
    for (int k = 0; k < 50; k++) cost[k] = 500;
    cost[10] = 3500;
    const run r = replay(cost, 50, 50 * PERIOD);
    /* every slot of the 50 periods got its tick: simulated time kept up */
    CHECK(r.ticks == 50, "ticks in 50 periods with a 3.5-period stall: %d (want 50)", r.ticks);
    CHECK(r.overruns >= 3 && r.overruns <= 6, "the stall's debt made up by running ticks at once: %d", r.overruns);
}

/* Sustained overload: ticks of 1.5 periods.  The schedule moves once the debt
 * passes its bound, so the loop never runs more than the work allows and never
 * piles up an unbounded debt (no spiral). */
static void overload_moves(void) {
    CHECK(clock_next_tick(0, 8000, PERIOD, DEBT) == 8000, "7 periods behind: the schedule moves to now");
    CHECK(clock_next_tick(0, 7000, PERIOD, DEBT) == 1000, "6 periods behind: still made up");
    const uint64_t cost[1] = {1500};
    const run r = replay(cost, 1, 300 * PERIOD);
    CHECK(r.ticks == 200, "300 periods of 1.5-period ticks: %d ticks (the work allows 200)", r.ticks);
    /* the debt stays bounded: the schedule is at most DEBT+1 periods behind */
    CHECK(r.worst_debt <= (DEBT + 1) * PERIOD, "largest debt %llu, bound %d", (unsigned long long)r.worst_debt,
          (DEBT + 1) * PERIOD);
}

int main(int argc, char **argv) {
    const tl_test tests[] = {
        {"on_time", on_time},
        {"transient_made_up", transient_made_up},
        {"overload_moves", overload_moves},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
