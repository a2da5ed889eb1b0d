/* test_tiers.c - C unit tests of the tiers of detail: each tier's subset of
 * particles (server/wire/frame_tier.c: a hash of the id, the same from call
 * to call and nested tier in tier, about 1 in keep of any run of ids) and
 * grid, and the rule that moves a client between tiers and strides
 * (server/wire/link_rule.c) replayed on a virtual clock: windows of given
 * late picks and busy fractions, picks between them, measured rates.  Nothing here reads a real clock or times
 * anything.  Prints "N passed, N failed"; exits non-zero on any failure. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "frame_codec.h"
#include "frame_tier.h"
#include "link_rule.h"
#include "testlib.h"

/* The subsets: deterministic, nested, about 1 in keep of consecutive ids
 * (the ids of a fresh scene) and of a strided run (ids an emitter left). */
static void subsets(void) {
    enum { N = 65536 };
    int count[FC_TIERS] = {0}, nested_bad = 0, unstable = 0, strided = 0;
    for (uint32_t id = 0; id < N; id++) {
        for (int t = 0; t < FC_TIERS; t++) {
            bool has = fc_tier_has(t, id);
            count[t] += has;
            unstable += has != fc_tier_has(t, id);
            if (t > 0 && has && !fc_tier_has(t - 1, id)) nested_bad++;
        }
        strided += fc_tier_has(2, id * 64 + 7);
    }
    CHECK(count[0] == N, "tier 0 holds every id (%d of %d)", count[0], N);
    for (int t = 1; t < FC_TIERS; t++) {
        int keep = fc_tier_of(t).keep, want = N / keep;
        REPORT("tier %d: 1 in %d, %d of %d consecutive ids", t, keep, count[t], N);
        CHECK(count[t] > want * 97 / 100 && count[t] < want * 103 / 100, "tier %d: %d ids, want about %d", t, count[t],
              want);
    }
    CHECK(!unstable && !nested_bad, "%d answers changed, %d ids of a coarser tier missing from the finer", unstable,
          nested_bad);
    int want2 = N / fc_tier_of(2).keep;
    CHECK(strided > want2 * 95 / 100 && strided < want2 * 105 / 100, "tier 2 on ids 64 apart: %d, want about %d",
          strided, want2);
    /* the same ids as when the tiers were chosen: a particle's membership
     * never depends on the build */
    static const uint32_t first1[8] = {0, 1, 5, 7, 8, 12, 14, 18};
    uint32_t got[8];
    int k = 0;
    for (uint32_t id = 0; k < 8; id++)
        if (fc_tier_has(1, id)) got[k++] = id;
    CHECK(!memcmp(got, first1, sizeof got), "tier 1's first ids: %u %u %u %u %u %u %u %u", got[0], got[1], got[2],
          got[3], got[4], got[5], got[6], got[7]);
    /* fc_tier_subset: the same members, as indices, through an order */
    uint32_t ids[16];
    int32_t order[16], out[16];
    for (int i = 0; i < 16; i++) ids[i] = (uint32_t)(15 - i), order[i] = 15 - i; /* ids stored backwards */
    int m = fc_tier_subset(1, ids, order, 16, out), bad = 0;
    for (int j = 0; j < m; j++) bad += !fc_tier_has(1, ids[out[j]]) || (j && ids[out[j]] <= ids[out[j - 1]]);
    int members = 0;
    for (uint32_t id = 0; id < 16; id++) members += fc_tier_has(1, id);
    CHECK(m == members && !bad, "subset through an order: %d of %d members, %d out of order or not members", m, members,
          bad);
}

/* Each tier's grid: the same origin, the step times step_mult, levels that
 * cover the full grid's span. */
static void grids(void) {
    fc_grid g;
    char err[160];
    const float lo[3] = {0, 0, 0}, hi[3] = {6.89f, 4.14f, 1.72f};
    CHECK(!fc_grid_make(&g, lo, hi, 0.00673f, err, sizeof err), "%s", err);
    for (int t = 0; t < FC_TIERS; t++) {
        fc_grid c = fc_tier_grid(&g, t);
        int m = fc_tier_of(t).step_mult;
        CHECK(c.step == g.step * (float)m, "tier %d: step %g, want %g", t, (double)c.step, (double)g.step * m);
        for (int a = 0; a < 3; a++) {
            CHECK(c.origin[a] == g.origin[a], "tier %d: origin moved", t);
            CHECK((c.levels[a] - 1) * m >= g.levels[a] - 1 && (c.levels[a] - 2) * m < g.levels[a] - 1,
                  "tier %d axis %d: %u levels for %u full ones", t, a, c.levels[a], g.levels[a]);
        }
    }
}

enum { S = 1000000000 }; /* a virtual second, ns */

/* Judges a window of `late` late picks and `busy` sending time at now. */
static int judge(link_state *s, uint64_t now, int late, double busy) {
    link_window w = {.now = now, .late = late, .busy = busy};
    return link_judge(s, &w);
}

/* A slow link: detail goes first (a coarser tier at every frame), then
 * frames at the coarsest tier; an idle link gets frames back first, then
 * detail, a tier at a time. */
static void rule_slow_then_fast(void) {
    uint64_t t = 0;
    link_state s = link_start(FC_TIERS, t);
    CHECK(s.tier == 0 && s.stride == 1, "a new client: tier %d stride %d", s.tier, s.stride);
    t += S / 2;
    CHECK(judge(&s, t, 2, 0.9) == LINK_COARSER && s.tier == 1 && s.stride == 1, "late: tier %d stride %d", s.tier,
          s.stride);
    t += S / 2;
    CHECK(judge(&s, t, 3, 0.9) == LINK_COARSER && s.tier == 2 && s.stride == 1, "late again: tier %d stride %d", s.tier,
          s.stride);
    t += S / 2;
    CHECK(judge(&s, t, 2, 0.9) == LINK_SLOWER && s.tier == 2 && s.stride == 2,
          "late at the coarsest tier: tier %d stride %d", s.tier, s.stride);
    t += S / 2;
    CHECK(judge(&s, t, 2, 0.9) == LINK_SLOWER && s.stride == 4, "stride %d", s.stride);
    CHECK(judge(&s, t + 1, 5, 1.0) == LINK_SAME && s.stride == 4, "no slower than every 4th: %d", s.stride);
    /* idle: every frame again first (once the stride has held 1.5 s) */
    t += S;
    CHECK(judge(&s, t, 0, 0.05) == LINK_SAME, "stride changed within its hold");
    t += S;
    CHECK(judge(&s, t, 0, 0.05) == LINK_BRIDGE && s.bridging, "idle: bridging %d", s.bridging);
    link_bridged(&s, t);
    CHECK(s.stride == 1 && s.tier == 2, "bridged: stride %d tier %d", s.stride, s.tier);
    /* then detail: without a measured rate, the full world is tried */
    t += 2 * S;
    CHECK(judge(&s, t, 0, 0.05) == LINK_FINER && s.tier == 0 && s.trying, "idle at every frame: tier %d", s.tier);
    t += 2 * S;
    CHECK(judge(&s, t, 0, 0.05) == LINK_SAME && s.tier == 0, "the full world stays: tier %d", s.tier);
    /* busy: a finer tier would not fit (its frames about 3 times the bytes) */
    s = link_start(FC_TIERS, 0);
    s.tier = 1;
    link_window busy = {.now = 10ull * S, .busy = 0.3, .ratio = 3};
    CHECK(link_judge(&s, &busy) == LINK_SAME && s.tier == 1, "busy 0.3 at 3 times the bytes: tier %d", s.tier);
    busy.ratio = 2;
    CHECK(link_judge(&s, &busy) == LINK_FINER && s.tier == 0, "busy 0.3 at twice the bytes: tier %d", s.tier);
    /* between windows too (a link raised while it took every 2nd frame): every frame again at the first calm
     * pick past the stride's hold, not at the window's end */
    s = link_start(FC_TIERS, 0);
    s.tier = 2, s.stride = 2, s.stride_ns = 0;
    link_window w = {.now = S, .from = S / 4, .busy = 0.05};
    CHECK(link_try(&s, &w) == LINK_SAME && !s.bridging, "within the stride's hold");
    w.now = 2 * S;
    w.late = 1;
    CHECK(link_try(&s, &w) == LINK_SAME && !s.bridging, "a late pick in the window so far");
    w.late = 0;
    w.busy = 0.5;
    CHECK(link_try(&s, &w) == LINK_SAME && !s.bridging, "busy 0.5 at every 2nd frame");
    w.busy = 0.05;
    CHECK(link_try(&s, &w) == LINK_BRIDGE && s.bridging && s.tier == 2, "calm past the hold: bridging, tier %d",
          s.tier);
}

/* A try of the full world that fails (late picks within its trial) goes
 * back to the tier it was made from, its keyframe due at once (LINK_BACK);
 * the next try comes LINK_PROBE_NS later however many failed before (a link
 * raised at any moment is found within about that); one that holds past its
 * trial stays. */
static void rule_tries(void) {
    uint64_t t = 0;
    link_state s = link_start(FC_TIERS, t);
    s.tier = 2;
    uint64_t waits[8];
    uint64_t failed = t;
    for (int i = 0; i < 8; i++) {
        /* idle until the rule tries the full world */
        while (judge(&s, t += S / 10, 0, 0.0) != LINK_FINER) {
        }
        waits[i] = t - failed;
        CHECK(s.tier == 0 && s.trying && s.from == 2, "try %d: tier %d, from %d", i, s.tier, s.from);
        t += S / 2;
        int what = judge(&s, t, 2, 0.9);
        CHECK(what == (LINK_COARSER | LINK_BACK) && s.tier == 2 && !s.trying, "try %d failed: %d, tier %d", i, what,
              s.tier);
        failed = t;
        /* the try's backlog: late picks just after it cost nothing */
        CHECK(judge(&s, t + S / 2, 3, 0.9) == LINK_SAME && s.tier == 2 && s.stride == 1,
              "late after the failed try: tier %d stride %d", s.tier, s.stride);
        t += S / 2;
    }
    REPORT("waits before each try, from the failure before it (virtual s): %.1f %.1f %.1f %.1f %.1f %.1f %.1f %.1f",
           waits[0] / 1e9, waits[1] / 1e9, waits[2] / 1e9, waits[3] / 1e9, waits[4] / 1e9, waits[5] / 1e9,
           waits[6] / 1e9, waits[7] / 1e9);
    for (int i = 1; i < 8; i++)
        CHECK(waits[i] >= LINK_PROBE_NS && waits[i] <= LINK_PROBE_NS + S / 10,
              "try %d came %.1f s after the failure before it", i, waits[i] / 1e9);
    /* a try that holds past its trial stays, no longer on trial */
    while (judge(&s, t += S / 10, 0, 0.0) != LINK_FINER) {
    }
    t += LINK_PROBE_JUDGE_NS + S;
    judge(&s, t, 0, 0.0);
    CHECK(!s.trying && s.tier == 0, "held: tier %d, trying %d", s.tier, s.trying);
    /* late picks then cost detail a tier at a time, as from any tier */
    CHECK(judge(&s, t + S, 2, 0.9) == LINK_COARSER && s.tier == 1, "late after it held: tier %d", s.tier);
}

/* A viewer on 1 Mbit/s whose link is raised to 10 Mbit/s, replayed as the
 * network thread feeds the rule: a pick every 1/30 s (link_try on the window
 * so far), a window judged every 2 s (link_judge), and the kernel's rate
 * sample under each keyframe of the full world (link_measure: 125 kB/s,
 * 1250 kB/s once raised).  The window restarts at each change of tier, as
 * ws_frames.c does.  Before the raise: tier 2, the full world tried every
 * LINK_PROBE_NS or so and sent back at once; the link is raised just after
 * the third try was sent back (the worst moment), and the full world holds
 * from the next try on.  Counts picks, never a clock. */
static void rule_step_up(void) {
    enum { HZ = 30, PICKS = 15 * HZ };
    link_state s = link_start(FC_TIERS, 0);
    link_window w = {.need = {420e3, 170e3, 80e3}};
    uint64_t from = 0, key_ns = 0;
    int tries = 0, back = 0, raise = 0, full_at = 0, tier2 = 0, last_try = 0, gap_max = 0;
    bool measure_next = true; /* the first keyframe (the full world's) is measured */
    for (int k = 1; k <= PICKS; k++) {
        uint64_t now = (uint64_t)k * S / HZ;
        int what = LINK_SAME;
        w.now = now, w.from = from, w.late = 0, w.busy = 0.02, w.rate_ns = key_ns;
        if (measure_next) { /* the kernel's sample under the keyframe just sent */
            w.rate_ns = key_ns = now, w.rate = raise ? 1250e3 : 125e3;
            what = link_measure(&s, &w);
            measure_next = false;
            if (tries && (what & LINK_COARSER) && ++back == 3) raise = k;
        } else if (now - from >= LINK_WINDOW_NS) {
            what = link_judge(&s, &w);
            from = now;
        } else {
            what = link_try(&s, &w);
        }
        if (what & (LINK_COARSER | LINK_FINER)) from = now;
        if (what == LINK_FINER) { /* a try: its keyframe is measured at the next pick */
            if (tries && k - last_try > gap_max) gap_max = k - last_try;
            tries++;
            last_try = k;
            measure_next = true;
        }
        if (raise && !full_at && s.tier == 0 && !s.trying) full_at = k;
        if (!raise && k > 1) {
            tier2 += s.tier == 2;
            CHECK(s.tier == 2 || (s.tier == 0 && s.trying), "pick %d, before the raise: tier %d", k, s.tier);
        }
    }
    REPORT("1 Mbit/s: %d tries before the raise, at most %d picks apart, %d of %d picks at tier 2; raised: the full "
           "world held %d picks (at 30 a second) after",
           back, gap_max, tier2, raise - 1, full_at - raise);
    CHECK(raise > 0 && tier2 >= (raise - 1) * 9 / 10, "tier 2 between the tries: %d of %d picks", tier2, raise - 1);
    CHECK(gap_max <= (int)(LINK_PROBE_NS * HZ / S) + 2, "tries at most %d picks apart", gap_max);
    CHECK(tries == back + 1, "%d tries, %d sent back", tries, back);
    CHECK(full_at > raise && full_at - raise <= 2 * HZ, "the full world %d picks after the raise", full_at - raise);
    CHECK(s.tier == 0 && !s.trying, "at the end: tier %d", s.tier);
}

/* The measured rate (bytes a second the kernel saw delivered while the
 * link was full) chooses the finest tier whose bytes fit 70 % of it, at
 * once, coarser or finer; a try of the full world it refuses is a failed
 * try; late picks just after a measured change are its backlog's. */
static void rule_measured(void) {
    uint64_t t = S;
    link_state s = link_start(FC_TIERS, 0);
    link_window w = {.need = {420e3, 170e3, 80e3}};
    /* 1 Mbit/s under the first keyframe: tier 2 (tier 1's 170 kB/s > 0.7 x 125) */
    w.now = w.rate_ns = t, w.rate = 125e3;
    CHECK(link_measure(&s, &w) == (LINK_COARSER | LINK_MEASURED) && s.tier == 2, "125 kB/s: tier %d", s.tier);
    CHECK(!s.trying, "not a try");
    t += S / 2;
    CHECK(judge(&s, t, 3, 0.9) == LINK_SAME && s.stride == 1, "late within the settling: stride %d", s.stride);
    /* a sample from before the change chooses nothing */
    w.now = t;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 2, "an old sample: tier %d", s.tier);
    /* unmeasured since: the full world is tried, its keyframe measured 1 Mbit/s: back, a failed try */
    t += 2 * S;
    CHECK(judge(&s, t, 0, 0.02) == LINK_FINER && s.tier == 0 && s.trying, "tried: tier %d", s.tier);
    t += S / 5;
    w.now = w.rate_ns = t;
    CHECK(link_measure(&s, &w) == (LINK_COARSER | LINK_MEASURED) && s.tier == 2 && !s.trying, "refused: tier %d",
          s.tier);
    uint64_t wait = s.probe_ns - t;
    CHECK(wait == LINK_PROBE_NS, "the next try waits %.1f s", wait / 1e9);
    t += S;
    CHECK(judge(&s, t, 0, 0.02) == LINK_SAME && s.tier == 2, "within the wait: tier %d", s.tier);
    /* raised to 10 Mbit/s: the next try's keyframe measures it, the full world holds */
    t += S;
    CHECK(judge(&s, t, 0, 0.02) == LINK_FINER && s.tier == 0 && s.trying, "tried again: tier %d", s.tier);
    t += S / 20;
    w.now = w.rate_ns = t, w.rate = 1250e3;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 0 && !s.trying, "held: tier %d", s.tier);
    /* a rate between 70 % and all of what the tier takes moves nothing */
    t += S;
    w.now = w.rate_ns = t, w.rate = 500e3;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 0, "500 kB/s: tier %d", s.tier);
    /* lowered to 3 Mbit/s: tier 1 at once; then a rate that fits tier 0 again: the full world, no try */
    t += S;
    w.now = w.rate_ns = t, w.rate = 375e3;
    CHECK(link_measure(&s, &w) == (LINK_COARSER | LINK_MEASURED) && s.tier == 1, "375 kB/s: tier %d", s.tier);
    t += S;
    w.now = w.rate_ns = t, w.rate = 700e3;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 1, "finer, but within a try's wait: tier %d", s.tier);
    t += S;
    w.now = w.rate_ns = t;
    CHECK(link_measure(&s, &w) == (LINK_FINER | LINK_MEASURED) && s.tier == 0 && !s.trying, "700 kB/s: tier %d",
          s.tier);
    /* a stale rate chooses nothing; pinned, the rate never moves the tier */
    t += LINK_RATE_FRESH_NS + S;
    w.now = t, w.rate = 50e3;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 0, "stale: tier %d", s.tier);
    link_pin(&s, true, t);
    w.rate_ns = t + 1, w.now = t + 2;
    CHECK(link_measure(&s, &w) == LINK_SAME && s.tier == 0, "pinned: tier %d", s.tier);
}

/* Pinned: the full world at once, only the stride moves; unpinned the rule
 * chooses again. */
static void rule_pinned(void) {
    uint64_t t = 0;
    link_state s = link_start(FC_TIERS, t);
    s.tier = 2;
    link_pin(&s, true, t);
    CHECK(s.tier == 0 && s.pinned, "pinned: tier %d", s.tier);
    t += S;
    CHECK(judge(&s, t, 2, 1.0) == LINK_SLOWER && s.tier == 0 && s.stride == 2, "pinned and late: tier %d stride %d",
          s.tier, s.stride);
    t += S;
    CHECK(judge(&s, t, 2, 1.0) == LINK_SLOWER && s.tier == 0 && s.stride == 4, "stride %d", s.stride);
    link_pin(&s, false, t);
    t += S;
    CHECK(judge(&s, t, 2, 1.0) == LINK_COARSER && s.tier == 1, "unpinned and late: tier %d", s.tier);
    /* a decoder's pace holds the stride: a finer tier comes at its pace */
    s = link_start(FC_TIERS, 0);
    s.tier = 1, s.pace = 2, s.stride = 2;
    CHECK(judge(&s, 10ull * S, 0, 0.0) == LINK_FINER && s.tier == 0 && s.stride == 2, "paced: tier %d stride %d",
          s.tier, s.stride);
}

/* Late picks while the receiver's window held the sender back: the reader
 * (a busy page, a loaded machine) is slow, not the link, so it loses frames
 * and keeps every particle; the same late picks from a full link cost detail. */
static void rule_slow_reader(void) {
    uint64_t t = 0;
    link_state s = link_start(FC_TIERS, t);
    t += S / 2;
    link_window w = {.now = t, .late = 2, .busy = 0.9, .reader = true};
    CHECK(link_judge(&s, &w) == LINK_SLOWER && s.tier == 0 && s.stride == 2, "slow reader: tier %d stride %d", s.tier,
          s.stride);
    w.now = t += S / 2;
    CHECK(link_judge(&s, &w) == LINK_SLOWER && s.tier == 0 && s.stride == 4, "slower reader: tier %d stride %d", s.tier,
          s.stride);
    w.now = t += S / 2, w.reader = false;
    CHECK(link_judge(&s, &w) == LINK_COARSER && s.tier == 1, "then a full link: tier %d", s.tier);
}

/* A try's keyframe, delivered through a token bucket (tc tbf: `burst`
 * bytes at once, then `rate` bytes a second) after one round trip: the
 * seconds from its pick until every byte is acknowledged. */
static double bucket_delivery_s(double bytes, double burst, double rate, double rtt_s) {
    return (bytes > burst ? (bytes - burst) / rate : 0) + rtt_s;
}

/* The try's proof (link_proof_ns): the 20k world's keyframe (51.6 kB, its
 * deltas 20 kB at 30 a second) is not delivered in time through the
 * shaped 1 Mbit/s link of the shaped-link bench (a 32 kB bucket, full when
 * the try comes), and is through 10 Mbit/s, also with a 100 ms round trip;
 * a failed proof sends the try back (LINK_BACK), and nothing else. */
static void rule_proof(void) {
    link_window w = {.need = {600e3, 250e3, 66e3}};
    const double key = 51.6e3, burst = 32768;
    uint64_t t = link_proof_ns(&w, (uint64_t)key, 0);
    double want = key * LINK_BUSY_TO_FAST / 600e3 + LINK_PROOF_SLACK_NS / 1e9;
    CHECK(fabs(t / 1e9 - want) < 1e-6, "the keyframe's time: %.4f s, want %.4f", t / 1e9, want);
    double slow = bucket_delivery_s(key, burst, 125e3, 0.001), fast = bucket_delivery_s(key, burst, 1.25e6, 0.001);
    REPORT("a 51.6 kB keyframe: %.0f ms allowed; delivered in %.0f ms at 1 Mbit/s, %.0f ms at 10 Mbit/s", t / 1e6,
           slow * 1e3, fast * 1e3);
    CHECK(slow > t / 1e9, "1 Mbit/s delivers the keyframe in %.3f s, within its %.3f s", slow, t / 1e9);
    CHECK(fast < t / 1e9, "10 Mbit/s delivers it in %.3f s, past its %.3f s", fast, t / 1e9);
    uint64_t far = link_proof_ns(&w, (uint64_t)key, 100000000ull);
    double far_s = bucket_delivery_s(key, burst, 1.25e6, 0.1);
    CHECK(far_s < far / 1e9, "10 Mbit/s with a 100 ms round trip: %.3f s, past its %.3f s", far_s, far / 1e9);
    w.need[0] = 0;
    CHECK(link_proof_ns(&w, (uint64_t)key, 0) == 0, "no proof without the full world's rate");

    link_state s = link_start(FC_TIERS, 0);
    s.tier = 2;
    while (judge(&s, t += S / 10, 0, 0.0) != LINK_FINER) {
    }
    CHECK(s.trying && s.tier == 0, "tried: tier %d", s.tier);
    CHECK(link_proof_failed(&s, t + S / 10) == (LINK_COARSER | LINK_BACK) && s.tier == 2 && !s.trying,
          "the proof failed: tier %d trying %d", s.tier, s.trying);
    CHECK(link_proof_failed(&s, t + S / 5) == LINK_SAME && s.tier == 2, "no try on: tier %d", s.tier);
}

/* The settle after a move a backlog followed (link_settle): the queued
 * bytes over the rate the new tier's frames leave, between LINK_SETTLE_NS
 * and LINK_SETTLE_MAX_NS, never earlier than a settle already set. */
static void rule_settle(void) {
    link_state s = link_start(FC_TIERS, 0);
    s.tier = 2;
    link_window w = {.now = 10ull * S, .rate = 125e3, .need = {600e3, 250e3, 66e3}};
    link_settle(&s, &w, 72e3);
    double got = (double)(s.settle_ns - w.now) / 1e9, want = 72e3 / (125e3 - 66e3);
    CHECK(fabs(got - want) < 1e-6, "72 kB queued at 125 kB/s, 66 kB/s taken: %.3f s, want %.3f", got, want);
    s.settle_ns = 0;
    link_settle(&s, &w, 5e3);
    CHECK(s.settle_ns == w.now + LINK_SETTLE_NS, "a small backlog: %.3f s", (double)(s.settle_ns - w.now) / 1e9);
    link_settle(&s, &w, 1e6);
    CHECK(s.settle_ns == w.now + LINK_SETTLE_MAX_NS, "a huge one: %.3f s", (double)(s.settle_ns - w.now) / 1e9);
    link_settle(&s, &w, 5e3);
    CHECK(s.settle_ns == w.now + LINK_SETTLE_MAX_NS, "not shortened: %.3f s", (double)(s.settle_ns - w.now) / 1e9);
    /* a tier whose frames take nearly the whole rate: a quarter of it drains the backlog */
    s.settle_ns = 0;
    w.need[2] = 120e3;
    link_settle(&s, &w, 40e3);
    got = (double)(s.settle_ns - w.now) / 1e9, want = 40e3 / (0.25 * 125e3);
    CHECK(fabs(got - want) < 1e-6, "a quarter of the rate: %.3f s, want %.3f", got, want);
    s.settle_ns = 0;
    w.rate = 0;
    link_settle(&s, &w, 40e3);
    CHECK(s.settle_ns == 0, "no rate: no settle");
}

int main(int argc, char **argv) {
    const tl_test tests[] = {
        {"subsets", subsets},
        {"grids", grids},
        {"rule_slow_then_fast", rule_slow_then_fast},
        {"rule_tries", rule_tries},
        {"rule_step_up", rule_step_up},
        {"rule_pinned", rule_pinned},
        {"rule_measured", rule_measured},
        {"rule_slow_reader", rule_slow_reader},
        {"rule_proof", rule_proof},
        {"rule_settle", rule_settle},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
