/* test_budget.c - C unit tests of the REST parties' budgets
 * (server/net/rest_budget.c) on explicit times: the party names of peer
 * addresses, the bound of answers under way per party and in all, the
 * per-minute buckets and their Retry-After, the reads of the recordings,
 * the refusals answered at once and those held, and the bounded table of
 * parties.  Nothing here reads a clock or times anything.
 * Prints "N passed, N failed"; exits non-zero on any failure. */
#include <stdio.h>
#include <string.h>

#include "rest_budget.h"
#include "testlib.h"

#define S 1000000000ull /* one second, in the budget's nanoseconds */

static rest_budget b; /* 256 parties: too large for the stack of every test */

static int admit(const char *key, rest_heavy kind, uint64_t now, rest_verdict *why, int *after) {
    return rest_budget_admit(&b, key, kind, now, why, after);
}

static void keys(void) {
    char k[REST_PARTY_KEY];
    rest_party_key("127.0.0.2", false, k, sizeof k);
    CHECK(!strcmp(k, "127.0.0.2"), "IPv4: %s", k);
    rest_party_key("::ffff:127.0.0.2", false, k, sizeof k);
    CHECK(!strcmp(k, "127.0.0.2"), "IPv4 on a dual-stack socket: %s", k);
    rest_party_key("127.0.0.2", true, k, sizeof k);
    CHECK(!strcmp(k, "127.0.0.2+token"), "with the token: %s", k);
    char a[REST_PARTY_KEY], c[REST_PARTY_KEY];
    rest_party_key("2001:db8:1:2:aaaa::1", false, a, sizeof a);
    rest_party_key("2001:db8:1:2:bbbb:cccc:dddd:eeee", false, c, sizeof c);
    CHECK(!strcmp(a, c) && !strcmp(a, "2001:db8:1:2::/64"), "one IPv6 /64, one party: %s, %s", a, c);
    rest_party_key("2001:db8:1:3::1", false, c, sizeof c);
    CHECK(strcmp(a, c), "another /64, another party: %s, %s", a, c);
    rest_party_key("", false, k, sizeof k);
    CHECK(k[0] != 0, "an unknown peer has a name (an empty one marks a free place): '%s'", k);
}

static void under_way(void) {
    memset(&b, 0, sizeof b);
    rest_verdict why;
    int after, place[REST_HEAVY_MAX + 1];
    place[0] = admit("a", REST_HEAVY_EXPORT, 1 * S, &why, &after);
    place[1] = admit("a", REST_HEAVY_SNAPSHOT, 1 * S, &why, &after);
    CHECK(place[0] > 0 && place[1] == place[0], "two for one party, one place: %d %d", place[0], place[1]);
    CHECK(!admit("a", REST_HEAVY_EXPORT, 1 * S, &why, &after) && why == REST_PARTY_BUSY && after >= 1,
          "a third: refused, verdict %d, Retry-After %d", why, after);
    CHECK(b.refused[REST_HEAVY_EXPORT] == 1, "counted: %llu", (unsigned long long)b.refused[REST_HEAVY_EXPORT]);
    int n = 2;
    const char *other[] = {"b", "b", "c", "c", "d", "d"};
    for (int i = 0; i < 6; i++) n += admit(other[i], REST_HEAVY_EXPORT, 1 * S, &why, &after) > 0;
    CHECK(n == REST_HEAVY_MAX && b.under_way == REST_HEAVY_MAX, "%d under way (bound %d)", n, REST_HEAVY_MAX);
    CHECK(!admit("e", REST_HEAVY_EXPORT, 1 * S, &why, &after) && why == REST_SERVER_BUSY,
          "all parties together: refused, verdict %d", why);
    CHECK(b.refused_busy == 1, "counted: %llu", (unsigned long long)b.refused_busy);
    rest_budget_release(&b, place[0]);
    CHECK(admit("e", REST_HEAVY_EXPORT, 1 * S, &why, &after) > 0, "one ended: the next is admitted");
    CHECK(!admit("a", REST_HEAVY_EXPORT, 1 * S, &why, &after) && why == REST_SERVER_BUSY,
          "a has room again, the server has none: verdict %d", why);
}

static void per_minute(void) {
    memset(&b, 0, sizeof b);
    rest_verdict why;
    int after, ok = 0;
    /* one at a time (each ends before the next), all in the same instant */
    for (int i = 0; i < 100; i++) {
        int p = admit("a", REST_HEAVY_SNAPSHOT, 5 * S, &why, &after);
        if (!p) break;
        rest_budget_release(&b, p);
        ok++;
    }
    CHECK(ok == REST_SNAPSHOTS_BURST, "%d snapshots in a row (burst %d)", ok, REST_SNAPSHOTS_BURST);
    CHECK(why == REST_PARTY_RATE && after == 60 / REST_SNAPSHOTS_PER_MIN,
          "verdict %d, Retry-After %d s (one token: %d s)", why, after, 60 / REST_SNAPSHOTS_PER_MIN);
    int e = admit("a", REST_HEAVY_EXPORT, 5 * S, &why, &after);
    CHECK(e > 0, "the exports' bucket is another");
    rest_budget_release(&b, e);
    const uint64_t tok = 60 / REST_SNAPSHOTS_PER_MIN; /* seconds a token takes */
    CHECK(!admit("a", REST_HEAVY_SNAPSHOT, (4 + tok) * S, &why, &after) && after == 1, "%llu s later: 1 s to go (%d)",
          (unsigned long long)(tok - 1), after);
    int p = admit("a", REST_HEAVY_SNAPSHOT, (5 + tok) * S, &why, &after);
    CHECK(p > 0, "%llu s later (60 s / %d): one token again", (unsigned long long)tok, REST_SNAPSHOTS_PER_MIN);
    rest_budget_release(&b, p);
    CHECK(!admit("a", REST_HEAVY_SNAPSHOT, (5 + tok) * S, &why, &after), "and only one");
    /* a request admitted but never sent on gets its token back */
    p = admit("a", REST_HEAVY_SNAPSHOT, (5 + 2 * tok) * S, &why, &after);
    rest_budget_cancel(&b, p, REST_HEAVY_SNAPSHOT);
    CHECK(b.under_way == 0, "cancelled: nothing under way (%d)", b.under_way);
    CHECK(admit("a", REST_HEAVY_SNAPSHOT, (5 + 2 * tok) * S, &why, &after) > 0, "cancelled: its token back");
    /* after a minute idle the bucket is full again, never fuller */
    memset(&b, 0, sizeof b);
    ok = 0;
    for (int i = 0; i < 100; i++) {
        int q = admit("a", REST_HEAVY_EXPORT, (uint64_t)i * S, &why, &after);
        if (q) rest_budget_release(&b, q);
        if (!q) break;
        ok++;
    }
    REPORT("exports at one a second: %d before the first refusal", ok);
    /* admitted at second i while the burst plus what refilled by then holds a token */
    const double r = REST_EXPORTS_PER_MIN / 60.0;
    const int expect = (int)((REST_EXPORTS_BURST - 1) / (1 - r)) + 1;
    CHECK(ok == expect, "%d exports at one a second (burst %d, %d a minute: %d expected)", ok, REST_EXPORTS_BURST,
          REST_EXPORTS_PER_MIN, expect);
    ok = 0;
    for (int i = 0; i < 100; i++) {
        int q = admit("a", REST_HEAVY_EXPORT, 1000 * S, &why, &after);
        if (q) rest_budget_release(&b, q);
        if (!q) break;
        ok++;
    }
    CHECK(ok == REST_EXPORTS_BURST, "after a long pause: %d (the burst, not more)", ok);
    /* the light kinds: paid for, nothing under way */
    memset(&b, 0, sizeof b);
    ok = 0;
    while (ok < 1000 && rest_budget_take(&b, "a", REST_RECORD_START, 1 * S, &after)) ok++;
    CHECK(ok == REST_RECORD_STARTS_BURST && b.under_way == 0 && after >= 1,
          "%d recording starts at once (burst %d), Retry-After %d", ok, REST_RECORD_STARTS_BURST, after);
    CHECK(admit("a", REST_HEAVY_EXPORT, 1 * S, &why, &after) > 0, "exports: a bucket of their own");
    CHECK(rest_budget_take(&b, "b", REST_RECORD_START, 1 * S, &after), "another party: its own buckets");
}

/* The recordings' reads: a bucket of their own; then the refusals, the
 * first ones answered at once and the rest held, until the bucket of
 * refusals refills. */
static void reads_and_holds(void) {
    memset(&b, 0, sizeof b);
    int after = 0, ok = 0;
    while (ok < 1000 && rest_budget_take(&b, "a", REST_REC_READ, 1 * S, &after)) ok++;
    CHECK(ok == REST_REC_READS_BURST && after == 1, "%d reads at once (burst %d), Retry-After %d", ok,
          REST_REC_READS_BURST, after);
    CHECK(b.refused[REST_REC_READ] == 1, "the refusal counted: %llu", (unsigned long long)b.refused[REST_REC_READ]);
    const uint64_t one = 60 * S / REST_REC_READS_PER_MIN + 1000; /* a token's refill, and a little */
    CHECK(rest_budget_take(&b, "a", REST_REC_READ, 1 * S + one, &after), "a token's time later, one");
    CHECK(!rest_budget_take(&b, "a", REST_REC_READ, 1 * S + one, &after), "and only one");
    CHECK(!rest_budget_pay(&b, "a", REST_REC_READ, 10, 1 * S + 9 * one, &after), "a page of 1000 costs 10: not yet");
    CHECK(rest_budget_pay(&b, "a", REST_REC_READ, 10, 1 * S + 11 * one, &after), "10 tokens later, paid");
    CHECK(!rest_budget_take(&b, "a", REST_REC_READ, 1 * S + 11 * one, &after), "all of them");
    CHECK(rest_budget_take(&b, "b", REST_REC_READ, 1 * S, &after), "another party reads");
    int at_once = 0, held = 0;
    for (int i = 0; i < 3 * REST_REFUSALS_BURST; i++) {
        if (rest_budget_refusal_held(&b, "a", 2 * S))
            held++;
        else
            at_once++;
    }
    CHECK(at_once == REST_REFUSALS_BURST && held == 2 * REST_REFUSALS_BURST,
          "%d refusals answered at once (burst %d), %d held", at_once, REST_REFUSALS_BURST, held);
    CHECK(b.refused[REST_REFUSAL] == (uint64_t)held, "the held ones counted: %llu",
          (unsigned long long)b.refused[REST_REFUSAL]);
    CHECK(!rest_budget_refusal_held(&b, "b", 2 * S), "another party's first refusal is answered at once");
    CHECK(!rest_budget_refusal_held(&b, "a", 3 * S), "a second later, refusals are answered at once again");
}

static void table(void) {
    memset(&b, 0, sizeof b);
    rest_verdict why;
    int after;
    char key[32];
    /* party 0 spends its bucket, and keeps as many exports under way as it may */
    int held = 0;
    for (int i = 0; i < REST_EXPORTS_BURST; i++) {
        int p = admit("p0", REST_HEAVY_EXPORT, 1 * S, &why, &after);
        if (i < REST_EXPORTS_BURST - REST_PARTY_HEAVY)
            rest_budget_release(&b, p);
        else
            held = p;
    }
    CHECK(held > 0 && !admit("p0", REST_HEAVY_EXPORT, 1 * S, &why, &after), "p0: bucket empty");
    /* many more parties than places, each one export, ended */
    for (int i = 1; i <= 3 * REST_PARTIES; i++) {
        snprintf(key, sizeof key, "p%d", i);
        int p = admit(key, REST_HEAVY_EXPORT, (uint64_t)(1 + i) * S, &why, &after);
        CHECK(p > 0, "party %s admitted", key);
        rest_budget_release(&b, p);
    }
    CHECK(b.parties_forgotten == 2 * REST_PARTIES + 1, "places taken over: %llu",
          (unsigned long long)b.parties_forgotten);
    CHECK(!admit("p0", REST_HEAVY_EXPORT, (3 * REST_PARTIES + 1) * S, &why, &after) && why == REST_PARTY_BUSY,
          "p0, with an export under way, was never forgotten: verdict %d", why);
    for (int i = 0; i < REST_PARTY_HEAVY; i++) rest_budget_release(&b, held);
    CHECK(b.under_way == 0, "nothing under way: %d", b.under_way);
}

int main(int argc, char **argv) {
    const tl_test tests[] = {
        {"keys", keys},
        {"under_way", under_way},
        {"per_minute", per_minute},
        {"table", table},
        {"reads_and_holds", reads_and_holds},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
