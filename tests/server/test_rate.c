/* test_rate.c - C unit tests of the rate limits (server/hub/rate.c,
 * rate_table.c, relay_rate.c) on explicit timestamps: a bucket's burst and
 * refill, the costs, the bounded table (forgetting idle entries, refusing a
 * newcomer when every entry is in use, deletion keeping the others found),
 * and a relay's clients held each to a browser's limit and together to the
 * relay's.  Nothing here reads a clock.  Prints "N passed, N failed". */
#include <stdio.h>
#include <string.h>

#include "rate.h"
#include "rate_table.h"
#include "relay_rate.h"
#include "testlib.h"

#define S 1000000000ull /* one second of the explicit timestamps (not-timed: a unit's name) */

static void bucket(void) {
    rate_bucket b = rate_bucket_full(10, S);
    int taken = 0;
    while (rate_bucket_take(&b, 5, 10, 1, S)) taken++;
    CHECK(taken == 10, "a full bucket pays its burst at once: %d (want 10)", taken);
    CHECK(!rate_bucket_take(&b, 5, 10, 1, S), "then nothing");
    CHECK(rate_bucket_take(&b, 5, 10, 1, S + S / 5), "a fifth of a second later, one (5 a second)");
    CHECK(!rate_bucket_take(&b, 5, 10, 1, S + S / 5), "and only one");
    CHECK(!rate_bucket_take(&b, 5, 10, 1, S), "a clock that went back refills nothing");
    CHECK(!rate_bucket_idle(&b, 5, 10, 2 * S), "not refilled after 1 s (5 of 10)");
    CHECK(rate_bucket_idle(&b, 5, 10, 4 * S), "refilled after 3 s");
    rate_bucket c = rate_bucket_full(10, 0);
    CHECK(!rate_bucket_take(&c, 5, 10, 11, 0), "a cost above what it holds takes nothing");
    CHECK(c.tokens == 10, "and leaves it full: %g", c.tokens);
    rate_bucket_fill(&c, 5, 10, 100 * S);
    CHECK(c.tokens == 10, "never above its burst: %g", c.tokens);
}

static void costs(void) {
    CHECK(rate_extra_cost(CMD_LOAD_SCENE) == 29, "a scene load costs 30 in all");
    CHECK(rate_extra_cost(CMD_BODY_CREATE) == 4, "a body 5");
    CHECK(rate_extra_cost(CMD_PUSH) == 0 && rate_extra_cost(CMD_CURSOR) == 0, "others 1");
    CHECK(rate_cmd_heavy(CMD_LOAD_SCENE) && rate_cmd_heavy(CMD_RESTORE), "scene loads and restores rebuild the world");
    CHECK(!rate_cmd_heavy(CMD_PUSH) && !rate_cmd_heavy(CMD_BODY_CREATE), "others do not");
    CHECK(rate_extra_cost(CMD_SET_SOLVER) == 29, "a solver switch costs 30, as a scene load");
    CHECK(rate_cmd_rebuilds(CMD_LOAD_SCENE) && rate_cmd_rebuilds(CMD_RESTORE) && rate_cmd_rebuilds(CMD_SET_SOLVER),
          "scene loads, restores and solver switches count against the world's rebuilds");
    CHECK(!rate_cmd_rebuilds(CMD_PUSH) && !rate_cmd_rebuilds(CMD_RECORD_START), "others do not");
    CHECK(rate_rebuilds_per_s(120) == 2 && rate_rebuilds_burst(120) == RATE_REBUILDS_BURST,
          "120 a minute: 2 a second, %d at once", RATE_REBUILDS_BURST);
    CHECK(rate_rebuilds_burst(3) == 3 && rate_rebuilds_burst(1) == 1, "a smaller bound: at once no more than it");
    rate_bucket w = rate_bucket_full(rate_rebuilds_burst(120), 0);
    int applied = 0;
    for (int i = 0; i < 100; i++)
        applied += rate_bucket_take(&w, rate_rebuilds_per_s(120), rate_rebuilds_burst(120), 1, 0);
    CHECK(applied == RATE_REBUILDS_BURST, "a flood at once: %d applied (burst %d)", applied, RATE_REBUILDS_BURST);
    CHECK(rate_bucket_take(&w, 2, rate_rebuilds_burst(120), 1, S / 2) && !rate_bucket_take(&w, 2, 10, 1, S / 2),
          "then one every half second");
    char why[160];
    rate_refusal(why, sizeof why, CMD_LOAD_SCENE, 120, 240);
    CHECK(!strcmp(why, "rate limited: load_scene costs 30 commands of the 120 per second allowed"), "%s", why);
    rate_refusal(why, sizeof why, CMD_NONE, 120, 240);
    CHECK(!strcmp(why, "rate limited: at most 120 commands per second (burst 240)"), "%s", why);
}

static void table(void) {
    rate_table t;
    CHECK(rate_table_init(&t, 100, 1, 2) == 0, "init");
    /* 100 keys whose buckets are in use (one token taken each) */
    for (uint32_t k = 1; k <= 100; k++) {
        rate_bucket *b = rate_table_get(&t, k * 7919u, 0);
        CHECK(b && rate_bucket_take(b, 1, 2, 1, 0), "key %u", (unsigned)k);
    }
    CHECK(t.count == 100, "100 entries: %d", t.count);
    CHECK(rate_table_get(&t, 5, 0) == NULL, "a newcomer with every entry in use is refused");
    CHECK(rate_table_get(&t, 0, 0) == NULL, "key 0 is not a key");
    rate_bucket *again = rate_table_get(&t, 50 * 7919u, 0);
    CHECK(again && again->tokens == 1, "a key found again keeps its bucket: %g", again ? again->tokens : -1);
    /* dropping every other key leaves the rest found, with their buckets */
    for (uint32_t k = 2; k <= 100; k += 2) rate_table_drop(&t, k * 7919u);
    rate_table_drop(&t, 123456); /* not there: nothing */
    CHECK(t.count == 50, "50 left: %d", t.count);
    int found = 0;
    for (uint32_t k = 1; k <= 100; k += 2) {
        rate_bucket *b = rate_table_get(&t, k * 7919u, 0);
        found += b && b->tokens == 1;
    }
    CHECK(found == 50 && t.count == 50, "each kept key found with its bucket: %d (count %d)", found, t.count);
    /* fill it up again; a second later every bucket has refilled: a newcomer
     * takes the place of the idle ones */
    for (uint32_t k = 1000; t.count < 100; k++) rate_bucket_take(rate_table_get(&t, k, 0), 1, 2, 1, 0);
    CHECK(rate_table_get(&t, 5, 0) == NULL, "full again");
    rate_bucket *b = rate_table_get(&t, 5, 1 * S);
    CHECK(b && b->tokens == 2, "one second later the idle entries are forgotten: a newcomer gets a full bucket");
    CHECK(t.count == 1, "and only it is kept: %d", t.count);
    rate_table_free(&t);
}

/* Sends `count` messages of kind k from client (of relay 1) at now; how many passed. */
static int send(relay_rate *r, uint32_t client, cmd_kind k, int count, uint64_t now, char *why) {
    int ok = 0;
    for (int i = 0; i < count; i++) ok += relay_rate_take(r, 1, client, false, k, now, why, 160) == 0;
    return ok;
}

static void relays(void) {
    relay_rate r;
    char why[160] = "";
    CHECK(relay_rate_init(&r, 120, 240) == 0, "init");
    const uint32_t a = (1u << CMD_RELAY_SHIFT) | 1, bc = (1u << CMD_RELAY_SHIFT) | 2;
    /* one client: a browser's limit */
    int ok = send(&r, a, CMD_PUSH, 1000, S, why);
    CHECK(ok == 240, "a client's burst: %d (want 240)", ok);
    CHECK(strstr(why, "rate limited: at most 120 commands per second") != NULL, "%s", why);
    ok = send(&r, a, CMD_PUSH, 1000, 2 * S, why);
    CHECK(ok == 120, "a second later, 120 more: %d", ok);
    /* scene loads: 8 of the burst, then 4 a second */
    ok = send(&r, bc, CMD_LOAD_SCENE, 100, 3 * S, why);
    CHECK(ok == 8, "scene loads from a fresh client: %d (want 8)", ok);
    CHECK(strstr(why, "rate limited: ") == why, "%s", why);
    ok = send(&r, bc, CMD_LOAD_SCENE, 1, 3 * S + S / 8, why);
    CHECK(ok == 0 && strstr(why, "load_scene costs 30") != NULL, "an eighth of a second on it holds 15: %s", why);
    ok = send(&r, bc, CMD_LOAD_SCENE, 1, 3 * S + S / 4, why);
    CHECK(ok == 1, "a quarter of a second on it holds 30 (a refusal takes nothing): one more load: %d", ok);
    /* many clients of one relay: the relay's share of costly commands is one
     * client's (a fresh client id buys nothing more) */
    relay_rate_free(&r);
    CHECK(relay_rate_init(&r, 120, 240) == 0, "init");
    ok = 0;
    for (uint32_t c = 1; c <= 50; c++) ok += send(&r, (1u << CMD_RELAY_SHIFT) | c, CMD_LOAD_SCENE, 10, S, why);
    CHECK(ok == 8, "scene loads from 50 clients of one relay: %d (want 8)", ok);
    CHECK(strstr(why, "clients of relay 1 share") != NULL, "%s", why);
    ok = 0;
    for (uint32_t c = 1; c <= 50; c++) ok += send(&r, (1u << CMD_RELAY_SHIFT) | c, CMD_LOAD_SCENE, 10, 2 * S, why);
    CHECK(ok == 4, "a second later: %d (want 4)", ok);
    /* and of messages, RELAY_RATE_SHARE clients' worth */
    ok = 0;
    for (uint32_t c = 100; c < 200; c++) ok += send(&r, (1u << CMD_RELAY_SHIFT) | c, CMD_PUSH, 100, 3 * S, why);
    CHECK(ok == 240 * RELAY_RATE_SHARE, "pushes from 100 clients of one relay: %d (want %d)", ok,
          240 * RELAY_RATE_SHARE);
    CHECK(strstr(why, "the clients of relay 1 together send at most 1920") != NULL, "%s", why);
    /* another relay has its own bound */
    CHECK(relay_rate_take(&r, 2, (2u << CMD_RELAY_SHIFT) | 1, false, CMD_PUSH, 3 * S, why, sizeof why) == 0,
          "relay 2 is not held to relay 1's");
    /* REST requests (one id each) count against their relay only */
    relay_rate_free(&r);
    CHECK(relay_rate_init(&r, 120, 240) == 0, "init");
    ok = 0;
    for (uint32_t i = 1; i <= 100; i++)
        ok += relay_rate_take(&r, 3, CMD_REST_BIT | (3u << CMD_RELAY_SHIFT) | i, true, CMD_LOAD_SCENE, S, why,
                              sizeof why) == 0;
    CHECK(ok == 8, "REST scene loads through one relay: %d (want 8)", ok);
    CHECK(r.clients.count == 0, "REST ids are not kept: %d", r.clients.count);
    /* the client table is bounded: a newcomer with every entry in use is refused */
    relay_rate_free(&r);
    CHECK(relay_rate_init(&r, 1, 240) == 0, "init");
    int refused = 0;
    for (uint32_t i = 0; i < RELAY_RATE_CLIENTS + 10; i++) {
        uint32_t relay = 1 + i / 2000, c = (relay << CMD_RELAY_SHIFT) | (1 + i % 2000);
        if (relay_rate_take(&r, relay, c, false, CMD_PUSH, S, why, sizeof why)) refused++;
    }
    CHECK(refused == 10, "clients beyond %d refused: %d (want 10)", RELAY_RATE_CLIENTS, refused);
    CHECK(strstr(why, "at most 4096 relay clients") != NULL, "%s", why);
    /* one that left frees its place */
    relay_rate_left(&r, (1u << CMD_RELAY_SHIFT) | 1);
    CHECK(relay_rate_take(&r, 3, (3u << CMD_RELAY_SHIFT) | 77, false, CMD_PUSH, S, why, sizeof why) == 0,
          "a client that left makes room: %s", why);
    REPORT("limited %llu, refused for a full table %llu", (unsigned long long)r.limited, (unsigned long long)r.full);
    relay_rate_free(&r);
}

/* A relay whose clients together spent their share is refused before its
 * messages are read, and its refusals are answered within its share. */
static void relay_flood(void) {
    relay_rate r;
    char why[160];
    CHECK(relay_rate_init(&r, 120, 240) == 0, "init");
    CHECK(!relay_rate_spent(&r, 1, S), "a new relay has its share");
    int ok = 0;
    for (uint32_t c = 1; c <= 100; c++) ok += send(&r, (1u << CMD_RELAY_SHIFT) | c, CMD_PUSH, 100, S, why);
    CHECK(ok == 240 * RELAY_RATE_SHARE, "the relay's burst: %d", ok);
    CHECK(relay_rate_spent(&r, 1, S), "spent once its clients sent the relay's burst");
    CHECK(!relay_rate_spent(&r, 2, S), "another relay is not");
    CHECK(!relay_rate_spent(&r, 1, S + S / 10), "a tenth of a second later: %d messages' worth again",
          120 * RELAY_RATE_SHARE / 10);
    const int share = 240 * RELAY_RATE_SHARE, flood = 18000;
    int answered = 0;
    for (int i = 0; i < flood; i++) answered += relay_rate_answer(&r, 1, 2 * S);
    CHECK(answered == share && r.unanswered == (uint64_t)(flood - share),
          "%d refusals in an instant: %d answered (the relay's burst), %llu not", flood, answered,
          (unsigned long long)r.unanswered);
    answered = 0;
    for (int i = 0; i < flood; i++) answered += relay_rate_answer(&r, 1, 2 * S + S / 2);
    CHECK(answered == 120 * RELAY_RATE_SHARE / 2, "half a second later: %d answered again", answered);
    CHECK(relay_rate_answer(&r, 2, 3 * S), "another relay's refusals are answered");
    relay_rate_free(&r);
}

/* A flooding relay is shed for 5 s, then 10, 20, ... when it floods again
 * soon after, up to 80 s; while one is shed the others heard lately are
 * read, each by name; a shed ends by itself. */
static void relay_shed(void) {
    relay_rate r;
    CHECK(relay_rate_init(&r, 120, 240) == 0, "init");
    uint32_t out[8];
    bool shedding = true;
    CHECK(relay_rate_readable(&r, S, out, 8, &shedding) == 0 && !shedding, "none shed: every relay read (wildcard)");
    relay_rate_heard(&r, 2, S);
    relay_rate_heard(&r, 3, S / 2);
    const uint64_t t = 20 * S;
    relay_rate_heard(&r, 4, t - S);
    CHECK(relay_rate_flooding(&r, 1, t) == RELAY_RATE_SHED_NS, "a first flood: shed for 5 s");
    CHECK(relay_rate_flooding(&r, 1, t + S) == 0, "shed already: not again");
    CHECK(relay_rate_is_shed(&r, 1, t + S) && !relay_rate_is_shed(&r, 2, t + S), "relay 1 shed, relay 2 not");
    int k = relay_rate_readable(&r, t + S, out, 8, &shedding);
    CHECK(shedding && k == 1 && out[0] == 4, "while shed, read the relays heard in the last 10 s: %d (relay %u)", k,
          k ? out[0] : 0);
    relay_rate_heard(&r, 2, t + 2 * S);
    k = relay_rate_readable(&r, t + 2 * S, out, 8, &shedding);
    CHECK(shedding && k == 2, "a relay heard again is read again: %d", k);
    k = relay_rate_readable(&r, t + RELAY_RATE_SHED_NS, out, 8, &shedding);
    CHECK(!shedding && k == 0, "the shed ends after 5 s: every relay read");
    CHECK(relay_rate_flooding(&r, 1, t + 7 * S) == 2 * RELAY_RATE_SHED_NS, "flooding again within a minute: 10 s");
    CHECK(relay_rate_flooding(&r, 1, t + 18 * S) == 4 * RELAY_RATE_SHED_NS, "and again: 20 s");
    uint64_t now = t + 40 * S, len = 0;
    for (int i = 0; i < 5; i++) {
        len = relay_rate_flooding(&r, 1, now);
        now += len + S;
    }
    CHECK(len == RELAY_RATE_SHED_MAX_NS, "at most 80 s: %.0f s", (double)len / 1e9);
    CHECK(relay_rate_flooding(&r, 1, now + RELAY_RATE_STRIKES_NS) == RELAY_RATE_SHED_NS,
          "a minute without a shed: 5 s again");
    CHECK(r.sheds == 9, "sheds counted: %llu", (unsigned long long)r.sheds);
    /* the notes are bounded: a new relay replaces the longest unheard one not shed */
    for (uint32_t i = 10; i < 10 + 2 * RELAY_RATE_NOTED; i++) relay_rate_heard(&r, i, now + RELAY_RATE_STRIKES_NS + i);
    CHECK(relay_rate_is_shed(&r, 1, now + RELAY_RATE_STRIKES_NS + S), "a shed relay's note is kept");
    k = relay_rate_readable(&r, now + RELAY_RATE_STRIKES_NS + S, out, 8, &shedding);
    CHECK(shedding && k == RELAY_RATE_NOTED - 1, "every relay noted and not shed is counted (the first 8 listed): %d",
          k);
    relay_rate_free(&r);
}

int main(int argc, char **argv) {
    const tl_test tests[] = {
        {"bucket", bucket},           {"costs", costs},           {"table", table}, {"relays", relays},
        {"relay_flood", relay_flood}, {"relay_shed", relay_shed},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
