/* lease.c - the lease rule of a fleet's room claims (see lease.h). */
#include "lease.h"

lease_rule lease_default_rule(void) {
    return (lease_rule){.lease_ns = 3000000000ull,
                        .margin_ns = 500000000ull,
                        .rank_step_ns = 150000000ull,
                        .alive_every_ns = 500000000ull,
                        .alive_keep_ns = 2000000000ull,
                        .alive_quiet_ns = 2500000000ull};
}

uint64_t lease_renew_every(const lease_rule *r) {
    return r->lease_ns / 3;
}

void lease_seen(lease_watch *w, uint64_t revision, uint64_t now) {
    if (w->revision == revision && w->moved_ns) return;
    w->revision = revision;
    w->moved_ns = now ? now : 1;
}

bool lease_orphaned(const lease_watch *w, const lease_rule *r, uint64_t now) {
    return w->moved_ns && now >= w->moved_ns && now - w->moved_ns >= r->lease_ns;
}

uint64_t lease_age(const lease_watch *w, uint64_t now) {
    return w->moved_ns && now > w->moved_ns ? now - w->moved_ns : 0;
}

uint64_t lease_fence(const lease_rule *r, uint64_t sent_ns) {
    const uint64_t keep = r->lease_ns > r->margin_ns ? r->lease_ns - r->margin_ns : 0;
    return sent_ns + keep;
}

bool lease_may_step(uint64_t fence_ns, uint64_t now) {
    return now < fence_ns;
}

uint64_t lease_alive_fence(const lease_rule *r, uint64_t sent_ns) {
    return sent_ns + r->alive_keep_ns;
}

bool lease_heard(const lease_rule *r, uint64_t heard_ns, uint64_t now) {
    return heard_ns && now >= heard_ns && now - heard_ns < r->alive_quiet_ns;
}

int lease_rank(double my_free, uint32_t my_id, const double *free, const uint32_t *id, int n) {
    int rank = 0;
    for (int i = 0; i < n; i++)
        if (id[i] != my_id && (free[i] > my_free || (free[i] == my_free && id[i] < my_id))) rank++;
    return rank;
}

uint64_t lease_takeover_at(const lease_watch *w, const lease_rule *r, int rank) {
    return w->moved_ns + r->lease_ns + (uint64_t)(rank > 0 ? rank : 0) * r->rank_step_ns;
}

uint64_t lease_released_take_at(const lease_watch *w, const lease_rule *r, int rank) {
    return w->moved_ns + (uint64_t)(rank > 0 ? rank : 0) * r->rank_step_ns;
}
