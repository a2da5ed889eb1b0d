/* rate.c - token buckets and the cost of each command (see rate.h). */
#include "rate.h"

#include <stdio.h>

rate_bucket rate_bucket_full(double burst, uint64_t now_ns) {
    return (rate_bucket){.tokens = burst, .at_ns = now_ns};
}

void rate_bucket_fill(rate_bucket *b, double per_s, double burst, uint64_t now_ns) {
    if (now_ns > b->at_ns) b->tokens += (double)(now_ns - b->at_ns) / 1e9 * per_s;
    if (now_ns > b->at_ns) b->at_ns = now_ns;
    if (b->tokens > burst) b->tokens = burst;
}

bool rate_bucket_take(rate_bucket *b, double per_s, double burst, double cost, uint64_t now_ns) {
    rate_bucket_fill(b, per_s, burst, now_ns);
    if (b->tokens < cost) return false;
    b->tokens -= cost;
    return true;
}

bool rate_bucket_idle(const rate_bucket *b, double per_s, double burst, uint64_t now_ns) {
    rate_bucket c = *b;
    rate_bucket_fill(&c, per_s, burst, now_ns);
    return c.tokens >= burst;
}

double rate_extra_cost(cmd_kind k) {
    return k == CMD_LOAD_SCENE || k == CMD_SET_SOLVER || k == CMD_RECORD_START ? 29 : k == CMD_BODY_CREATE ? 4 : 0;
}

bool rate_cmd_heavy(cmd_kind k) {
    return k == CMD_LOAD_SCENE || k == CMD_RESTORE;
}

bool rate_cmd_rebuilds(cmd_kind k) {
    return k == CMD_LOAD_SCENE || k == CMD_RESTORE || k == CMD_SET_SOLVER;
}

double rate_rebuilds_per_s(int per_min) {
    return per_min > 0 ? per_min / 60.0 : 0;
}

double rate_rebuilds_burst(int per_min) {
    return per_min < 1 ? 1 : per_min < RATE_REBUILDS_BURST ? per_min : RATE_REBUILDS_BURST;
}

void rate_refusal(char *out, size_t n, cmd_kind k, int per_s, int burst) {
    double extra = rate_extra_cost(k);
    if (k != CMD_NONE && extra > 0)
        snprintf(out, n, "rate limited: %s costs %g commands of the %d per second allowed", cmd_kind_name(k), extra + 1,
                 per_s);
    else
        snprintf(out, n, "rate limited: at most %d commands per second (burst %d)", per_s, burst);
}
