/* link_rule.c - each client's stride and tier of detail from what its link
 * did (see link_rule.h). */
#include "link_rule.h"

link_state link_start(int tiers, uint64_t now) {
    return (link_state){
        .tiers = tiers > 0 ? tiers : 1, .stride = 1, .pace = 1, .stride_ns = now, .tier_ns = now, .probe_ns = now};
}

static uint64_t probe_wait(int fails) {
    uint64_t w = LINK_PROBE_NS;
    for (int i = 0; i < fails && w < LINK_PROBE_MAX_NS; i++) w *= 2;
    return w < LINK_PROBE_MAX_NS ? w : LINK_PROBE_MAX_NS;
}

/* Too many late picks: a coarser tier at the same stride, or (at the
 * coarsest tier, or pinned) every 2nd (4th) frame. */
static int slower(link_state *s, uint64_t now) {
    if (!s->pinned && s->tier + 1 < s->tiers) {
        if (s->trying && now - s->tier_ns < LINK_PROBE_JUDGE_NS) s->fails++;
        s->trying = false;
        s->tier++;
        s->tier_ns = now;
        s->probe_ns = now + probe_wait(s->fails);
        return LINK_COARSER;
    }
    if (s->stride >= LINK_STRIDE_MAX) return LINK_SAME;
    s->stride *= 2;
    s->stride_ns = now;
    s->bridging = false;
    return LINK_SLOWER;
}

int link_judge(link_state *s, const link_window *w) {
    uint64_t now = w->now;
    if (s->trying && now - s->tier_ns >= LINK_PROBE_JUDGE_NS) { /* the finer tier held */
        s->trying = false;
        s->fails = 0;
    }
    if (w->late >= LINK_LATE_TO_SLOW) return slower(s, now);
    if (w->late) return LINK_SAME;
    /* frames first: a faster stride when even every frame would leave the
     * link idle enough */
    if (s->stride > s->pace && !s->bridging) {
        if (w->busy * s->stride < LINK_BUSY_TO_FAST && now - s->stride_ns > LINK_STRIDE_HOLD_NS) {
            s->bridging = true;
            return LINK_BRIDGE;
        }
        return LINK_SAME;
    }
    /* then detail: a finer tier when its bytes would still leave the link
     * idle enough, tried at most every probe_wait */
    double ratio = w->ratio > 0 ? w->ratio : 3.0;
    if (s->tier > 0 && !s->bridging && s->stride <= s->pace && now >= s->probe_ns &&
        w->busy * ratio < LINK_BUSY_TO_FAST) {
        s->tier--;
        s->tier_ns = now;
        s->trying = true;
        s->probe_ns = now + probe_wait(s->fails);
        return LINK_FINER;
    }
    return LINK_SAME;
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
