/* link_rule.c - each client's stride and tier of detail from what its link
 * did (see link_rule.h). */
#include "link_rule.h"

link_state link_start(int tiers, uint64_t now) {
    return (link_state){
        .tiers = tiers > 0 ? tiers : 1, .stride = 1, .pace = 1, .stride_ns = now, .tier_ns = now, .probe_ns = now};
}

/* Moves to tier t at now: the next try no sooner than LINK_PROBE_NS on;
 * late picks within LINK_SETTLE_NS are the old tier's backlog when
 * `settle`. */
static void move(link_state *s, int t, uint64_t now, bool settle) {
    s->trying = false;
    s->tier = t;
    s->tier_ns = now;
    s->probe_ns = now + LINK_PROBE_NS;
    if (settle) s->settle_ns = now + LINK_SETTLE_NS;
}

/* A try that failed: back to the tier it was made from. */
static int back(link_state *s, uint64_t now) {
    move(s, s->from, now, true);
    return LINK_COARSER | LINK_BACK;
}

/* Too many late picks: a try that failed goes back to the tier it was made
 * from; else a coarser tier at the same stride, or (at the coarsest tier,
 * pinned, or with a slow reader) every 2nd (4th) frame. */
static int slower(link_state *s, uint64_t now, bool reader) {
    if (!s->pinned && !reader && s->trying && now - s->tier_ns < LINK_PROBE_JUDGE_NS) return back(s, now);
    if (!s->pinned && !reader && s->tier + 1 < s->tiers) {
        move(s, s->tier + 1, now, false);
        return LINK_COARSER;
    }
    if (s->stride >= LINK_STRIDE_MAX) return LINK_SAME;
    s->stride *= 2;
    s->stride_ns = now;
    s->bridging = false;
    return LINK_SLOWER;
}

/* The finest tier whose frames take at most share of the measured rate;
 * the coarsest when none does. */
static int fitting(const link_state *s, const link_window *w, double share) {
    for (int t = 0; t < s->tiers && t < LINK_TIERS_MAX; t++)
        if (w->need[t] > 0 && w->need[t] <= share * w->rate) return t;
    return s->tiers - 1;
}

/* A rate measured since the tier was chosen, recent enough to choose by. */
static bool measured(const link_state *s, const link_window *w) {
    return w->rate > 0 && w->rate_ns > s->tier_ns && w->rate_ns <= w->now && w->now - w->rate_ns <= LINK_RATE_FRESH_NS;
}

/* The tier the measured rate allows.  Coarser at once when the tier's
 * frames take more than the whole rate (a try it refuses failed); finer, no
 * sooner than a try would be, when a finer tier's take at most
 * LINK_BUSY_TO_FAST of it: between the two the tier stays (a rate sampled a
 * little lower or higher moves nothing, and each move costs a keyframe).  A
 * try the whole rate carries held. */
static int by_rate(link_state *s, const link_window *w) {
    int fine = fitting(s, w, LINK_BUSY_TO_FAST), was = s->tier;
    bool carried = was < LINK_TIERS_MAX && w->need[was] > 0 && w->need[was] <= w->rate;
    if (!(!carried && fine > was) && !(fine < was && w->now >= s->probe_ns)) {
        if (s->trying && carried) s->trying = false;
        return LINK_SAME;
    }
    move(s, fine, w->now, true);
    return (fine > was ? LINK_COARSER : LINK_FINER) | LINK_MEASURED;
}

/* The bytes of the full world's frames over this tier's. */
static double ratio_to_full(const link_state *s, const link_window *w) {
    if (w->ratio > 0) return w->ratio;
    if (s->tier < LINK_TIERS_MAX && w->need[0] > 0 && w->need[s->tier] > 0) return w->need[0] / w->need[s->tier];
    return 3.0 * s->tier;
}

/* Whether the full world may be tried now: a coarser tier, neither pinned
 * nor bridging nor slower than its decoder's pace, its wait over, and the
 * window's busy time, scaled to the full world's bytes, idle enough.
 * Without a measured rate the try is the measurement: the full world's
 * keyframe fills the link (a token bucket's burst, a bottleneck's queue),
 * and the kernel measures it. */
static bool try_due(const link_state *s, const link_window *w) {
    return s->tier > 0 && !s->pinned && !s->bridging && s->stride <= s->pace && w->now >= s->probe_ns &&
           w->busy * ratio_to_full(s, w) < LINK_BUSY_TO_FAST;
}

static int try_full(link_state *s, uint64_t now) {
    s->from = s->tier;
    move(s, 0, now, false);
    s->trying = true;
    return LINK_FINER;
}

int link_measure(link_state *s, const link_window *w) {
    return !s->pinned && measured(s, w) ? by_rate(s, w) : LINK_SAME;
}

/* Frames first: every frame again (by a bridge coding) when even every
 * frame would leave the link idle enough, once the stride has held. */
static int faster(link_state *s, const link_window *w) {
    if (s->stride <= s->pace || s->bridging) return LINK_SAME;
    if (w->busy * s->stride < LINK_BUSY_TO_FAST && w->now - s->stride_ns > LINK_STRIDE_HOLD_NS) {
        s->bridging = true;
        return LINK_BRIDGE;
    }
    return LINK_SAME;
}

int link_try(link_state *s, const link_window *w) {
    if (w->late || w->now - w->from < LINK_TRY_HOLD_NS) return LINK_SAME;
    if (s->stride > s->pace) return faster(s, w);
    return try_due(s, w) ? try_full(s, w->now) : LINK_SAME;
}

int link_judge(link_state *s, const link_window *w) {
    uint64_t now = w->now;
    if (s->trying && now - s->tier_ns >= LINK_PROBE_JUDGE_NS) s->trying = false; /* the full world held */
    if (!s->pinned && measured(s, w)) {
        int what = by_rate(s, w);
        if (what) return what;
    }
    if (w->late >= LINK_LATE_TO_SLOW && now >= s->settle_ns) return slower(s, now, w->reader);
    if (w->late) return LINK_SAME;
    /* frames first */
    if (s->stride > s->pace && !s->bridging) return faster(s, w);
    /* then detail */
    return try_due(s, w) ? try_full(s, now) : LINK_SAME;
}

void link_pin(link_state *s, bool full, uint64_t now) {
    s->pinned = full;
    if (full && s->tier) {
        s->tier = 0;
        s->tier_ns = now;
        s->trying = false;
    }
    if (!full) s->probe_ns = now; /* the rule chooses again from the next window */
}

void link_bridged(link_state *s, uint64_t now) {
    s->bridging = false;
    s->stride = s->pace > 1 ? s->pace : 1; /* from every frame a slower stride starts at once */
    s->stride_ns = now;
}

uint64_t link_proof_ns(const link_window *w, uint64_t bytes, uint64_t min_rtt_ns) {
    if (!(w->need[0] > 0)) return 0;
    double send_s = (double)bytes * LINK_BUSY_TO_FAST / w->need[0];
    return (uint64_t)(send_s * 1e9) + 2 * min_rtt_ns + LINK_PROOF_SLACK_NS;
}

int link_proof_failed(link_state *s, uint64_t now) {
    return s->trying && !s->pinned ? back(s, now) : LINK_SAME;
}

void link_settle(link_state *s, const link_window *w, double queued) {
    if (!(w->rate > 0) || queued <= 0) return;
    int t = s->tier < LINK_TIERS_MAX ? s->tier : LINK_TIERS_MAX - 1;
    double left = w->rate - w->need[t];
    if (left < 0.25 * w->rate) left = 0.25 * w->rate;
    double ns = queued / left * 1e9;
    if (ns < (double)LINK_SETTLE_NS) ns = (double)LINK_SETTLE_NS;
    if (ns > (double)LINK_SETTLE_MAX_NS) ns = (double)LINK_SETTLE_MAX_NS;
    uint64_t until = w->now + (uint64_t)ns;
    if (until > s->settle_ns) s->settle_ns = until;
}
