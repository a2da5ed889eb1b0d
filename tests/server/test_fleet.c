/* test_fleet.c - unit tests of a fleet's pure parts: the lease rule
 * (server/fleet/lease.c: orphans from revision changes on the watcher's own
 * clock, the holder's fence, takeover ranks; every instant passed in, so
 * nothing here reads a clock) and the directory's values
 * (server/wire/fleet_doc.c: node records and room claims written and read
 * back, and refused when malformed, over-long or out of range; a field of
 * another version: a room's key without its cost, a field not known); the
 * heartbeat rule (a round's fence ends before a node that acknowledged it
 * may claim) and the heartbeats' text (server/wire/fleet_alive.c). */
#include <stdio.h>
#include <string.h>

#include "fleet_alive.h"
#include "fleet_doc.h"
#include "lease.h"
#include "testlib.h"

#define S 1000000000ull /* one second in ns */

static void test_orphan_from_revisions(void) {
    const lease_rule r = lease_default_rule();
    lease_watch w = {0};
    CHECK(!lease_orphaned(&w, &r, 100 * S), "a key never seen is not an orphan");
    lease_seen(&w, 7, 10 * S);
    CHECK(!lease_orphaned(&w, &r, 12 * S), "2 s after its revision moved");
    lease_seen(&w, 7, 12 * S); /* the same revision again: the instant stays */
    CHECK(w.moved_ns == 10 * S, "the same revision does not move the instant (%llu)", (unsigned long long)w.moved_ns);
    CHECK(lease_orphaned(&w, &r, 13 * S), "a lease (3 s) after its revision last moved");
    lease_seen(&w, 8, 13 * S); /* a renewal */
    CHECK(!lease_orphaned(&w, &r, 15 * S), "a renewal moves it on");
    CHECK(lease_age(&w, 15 * S) == 2 * S, "its age: 2 s (%llu)", (unsigned long long)lease_age(&w, 15 * S));
    CHECK(lease_orphaned(&w, &r, 16 * S), "orphaned again a lease after the renewal");
}

static void test_fence_before_orphan(void) {
    const lease_rule r = lease_default_rule();
    const uint64_t sent = 50 * S, fence = lease_fence(&r, sent);
    CHECK(fence == sent + r.lease_ns - r.margin_ns, "fence = sent + lease - margin");
    CHECK(lease_may_step(fence - 1, sent), "steps right after the renewal");
    CHECK(lease_may_step(fence, fence - 1) && !lease_may_step(fence, fence), "steps up to its fence, not at it");
    /* another node sees the renewal's revision no earlier than it was sent: its orphan instant is at least a
     * margin after the holder's fence */
    for (uint64_t seen = sent; seen < sent + 2 * S; seen += S / 4) {
        lease_watch w = {0};
        lease_seen(&w, 3, seen);
        uint64_t t = fence;
        while (!lease_orphaned(&w, &r, t)) t += S / 100;
        CHECK(t >= fence + r.margin_ns, "orphaned at %llu, fence %llu", (unsigned long long)t,
              (unsigned long long)fence);
    }
    CHECK(lease_renew_every(&r) == r.lease_ns / 3, "renewals every lease/3");
}

/* A round sent at t, heard by another node at h >= t (on its clock: no
 * earlier, in real time, than the sending) and acknowledged: the holder's
 * fence from it ends before that node may claim any room the round listed,
 * by at least a margin for a tick under way at the fence. */
static void test_heartbeat_rule(void) {
    const lease_rule r = lease_default_rule();
    CHECK(r.alive_quiet_ns >= r.alive_keep_ns + r.margin_ns, "quiet %llu >= keep %llu + margin %llu",
          (unsigned long long)r.alive_quiet_ns, (unsigned long long)r.alive_keep_ns, (unsigned long long)r.margin_ns);
    CHECK(r.alive_every_ns * 3 <= r.alive_keep_ns, "several rounds within a round's extension");
    CHECK(r.alive_quiet_ns < r.lease_ns, "a dead holder's rooms are claimed at the lease, as before");
    for (uint64_t t = 10 * S; t < 12 * S; t += S / 8) {
        const uint64_t fence = lease_alive_fence(&r, t);
        for (uint64_t h = t; h < t + S; h += S / 10) {
            uint64_t claim = h;
            while (lease_heard(&r, h, claim)) claim += S / 100;
            CHECK(claim >= fence + r.margin_ns, "claimable at %llu, the round's fence %llu", (unsigned long long)claim,
                  (unsigned long long)fence);
        }
    }
    CHECK(!lease_heard(&r, 0, 5 * S), "never heard: no hold");
    CHECK(lease_heard(&r, 5 * S, 5 * S) && !lease_heard(&r, 5 * S, 5 * S + r.alive_quiet_ns),
          "held off for alive_quiet_ns after the heartbeat");
}

static void test_heartbeat_text(void) {
    static fleet_alive_msg m, back;
    char text[FLEET_ALIVE_MAX + 1], err[200];
    m.round = 42;
    m.nrooms = 2;
    snprintf(m.rooms[0], ROOM_NAME_CAP, "lab");
    snprintf(m.rooms[1], ROOM_NAME_CAP, "class-7b");
    int len = fleet_alive_write(&m, text, sizeof text);
    CHECK(len == (int)strlen("42\nlab\nclass-7b\n") && !strcmp(text, "42\nlab\nclass-7b\n"), "written: %s", text);
    CHECK(!fleet_alive_read(text, (size_t)len, &back, err, sizeof err), "read back: %s", err);
    CHECK(back.round == 42 && back.nrooms == 2 && !strcmp(back.rooms[1], "class-7b"), "the same");
    CHECK(!fleet_alive_read("7\n", 2, &back, err, sizeof err) && back.nrooms == 0, "a round with no room reads");
    m.nrooms = FLEET_ALIVE_ROOMS; /* the most: every name as long as the rule allows */
    for (int i = 0; i < m.nrooms; i++)
        snprintf(m.rooms[i], ROOM_NAME_CAP, "room-%03u-abcdefghijklmnopqrstu", (unsigned)i % 1000u);
    m.round = 9223372036854775807ull;
    len = fleet_alive_write(&m, text, sizeof text);
    CHECK(len > 0 && len <= FLEET_ALIVE_MAX, "the longest fits: %d of %d", len, FLEET_ALIVE_MAX);
    CHECK(!fleet_alive_read(text, (size_t)len, &back, err, sizeof err) && back.nrooms == FLEET_ALIVE_ROOMS &&
              back.round == m.round,
          "and reads back: %s", err);
    static const char *const bad[] = {
        "",                      /* no round */
        "0\nlab\n",              /* round 0 */
        "07\nlab\n",             /* a leading zero */
        "-1\nlab\n",             /* a sign */
        "9223372036854775808\n", /* past 2^63-1 */
        "3 \nlab\n",             /* a space */
        "3\nLab\n",              /* a name off the rule */
        "3\nlab",                /* its last line unterminated */
        "3\nlab\nlab\n",         /* a room twice */
        "3\n\n",                 /* an empty name */
        "3\nl\0b\n",             /* a NUL in a name */
    };
    static const size_t bad_len[] = {0, 6, 7, 7, 20, 7, 6, 5, 10, 3, 6};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = 0;
        CHECK(fleet_alive_read(bad[i], bad_len[i], &back, err, sizeof err) == -1 && err[0], "refused: case %zu (%s)", i,
              err);
    }
    CHECK(fleet_alive_read(text, FLEET_ALIVE_MAX + 1, &back, err, sizeof err) == -1, "an over-long one unread");
    uint64_t round = 0;
    len = fleet_ack_write(77, text, sizeof text);
    CHECK(len == 2 && !fleet_ack_read(text, (size_t)len, &round, err, sizeof err) && round == 77, "an ack");
    CHECK(fleet_ack_read("77\n", 3, &round, err, sizeof err) == -1, "an ack is the round alone");
    CHECK(fleet_ack_read("", 0, &round, err, sizeof err) == -1, "an empty ack");
}

static void test_takeover_rank(void) {
    const lease_rule r = lease_default_rule();
    const double free[] = {5.0, 9.0, 9.0, 1.0};
    const uint32_t id[] = {1, 2, 3, 4};
    CHECK(lease_rank(9.0, 2, free, id, 4) == 0, "most free, lowest id: first");
    CHECK(lease_rank(9.0, 3, free, id, 4) == 1, "as free, higher id: second");
    CHECK(lease_rank(5.0, 1, free, id, 4) == 2, "third");
    CHECK(lease_rank(1.0, 4, free, id, 4) == 3, "least free: last");
    lease_watch w = {0};
    lease_seen(&w, 9, 100 * S);
    CHECK(lease_takeover_at(&w, &r, 0) == 103 * S, "rank 0 tries a lease after the last move");
    CHECK(lease_takeover_at(&w, &r, 2) == 103 * S + 2 * r.rank_step_ns, "rank 2 two steps later");
    CHECK(lease_released_take_at(&w, &r, 0) == 100 * S, "a released room: rank 0 tries at once");
    CHECK(lease_released_take_at(&w, &r, 2) == 100 * S + 2 * r.rank_step_ns, "... rank 2 two steps later");
}

/* A room released by its holder (node 0, still claimed) and its cost. */
#define ROOM_HEAD_NO_MS                                                                                                \
    "{\"node\":1,\"claim\":2,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,\"error\":\"\","

#define SHA "\"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef\""

static void test_released_and_cost(void) {
    fleet_room_rec r = {.node = 0, .claim = 3, .public_role = ROLE_PLAYER, .ms = 1.25};
    char text[FLEET_DOC_MAX], err[200] = "";
    int len = fleet_room_write(&r, text, sizeof text);
    fleet_room_rec back;
    CHECK(len > 0 && !fleet_room_read(text, (size_t)len, &back, err, sizeof err), "released read back: %s", err);
    CHECK(back.node == 0 && back.claim == 3 && back.ms == 1.25, "released fields: node %u claim %llu ms %g",
          (unsigned)back.node, (unsigned long long)back.claim, back.ms);
    r.claim = 0;
    len = fleet_room_write(&r, text, sizeof text);
    CHECK(len > 0 && fleet_room_read(text, (size_t)len, &back, err, sizeof err) == -1 && strstr(err, "released"),
          "node 0 of a room never claimed refused: %s", err);
    const char *good = ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":0.5}";
    CHECK(!fleet_room_read(good, strlen(good), &back, err, sizeof err) && back.ms == 0.5, "a cost: %s", err);
    static const char *bad[] = {
        ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":-1}",        ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":1e8}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":\"1\"}",     ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":null}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":true}",      ROOM_HEAD_NO_MS "\"snap\":null,\"ms\":1,\"ms\":2}",
        ROOM_HEAD_NO_MS "\"ms\":1,\"snap\":null,\"ms\":1}"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        CHECK(fleet_room_read(bad[i], strlen(bad[i]), &back, err, sizeof err) == -1, "a bad cost refused: %s", bad[i]);
}

/* Nodes of two versions in one fleet (docs/fleet.md, "Versions of the
 * values"): a room's key of a node older than its "ms" reads with the cost
 * unknown (0, as not measured); a field of a later version is ignored, in a
 * room's key, its snapshot's manifest and a node's record, and not written
 * back; a field twice, known or not, a field's name out of the rule, and
 * more fields than FLEET_FIELDS_MAX are refused. */
static void test_versions(void) {
    char text[FLEET_DOC_MAX], err[200] = "";
    fleet_room_rec back;
    const char *older = ROOM_HEAD_NO_MS "\"snap\":null}";
    CHECK(!fleet_room_read(older, strlen(older), &back, err, sizeof err), "a key without ms read: %s", err);
    CHECK(back.node == 1 && back.claim == 2 && back.public_role == ROLE_PLAYER && back.ms == 0,
          "its fields, the cost unknown: node %u claim %llu ms %g", (unsigned)back.node, (unsigned long long)back.claim,
          back.ms);
    int len = fleet_room_write(&back, text, sizeof text);
    CHECK(len > 0 && strstr(text, "\"ms\":0.000"), "written back with ms: %s", text);
    const char *newer =
        ROOM_HEAD_NO_MS "\"zone\":\"eu-2\",\"snap\":{\"save\":3,\"chunks\":1,\"bytes\":10,\"sha256\":" SHA
                        ",\"tick\":9,\"codec\":{\"v\":[1,2]}},\"ms\":0.75,\"hint_2\":null}";
    CHECK(!fleet_room_read(newer, strlen(newer), &back, err, sizeof err), "a key with later fields read: %s", err);
    CHECK(back.node == 1 && back.claim == 2 && back.ms == 0.75 && back.snap.save == 3 && back.snap.tick == 9,
          "its known fields: node %u claim %llu ms %g save %llu", (unsigned)back.node, (unsigned long long)back.claim,
          back.ms, (unsigned long long)back.snap.save);
    len = fleet_room_write(&back, text, sizeof text);
    CHECK(len > 0 && !strstr(text, "zone") && !strstr(text, "codec") && !strstr(text, "hint_2"),
          "the later fields not written back: %s", text);
    const char *node = "{\"id\":3,\"url\":\"\",\"budget_ms\":1,\"used_ms\":0,\"rooms\":0,\"clients\":0,\"cap_rooms\":1,"
                       "\"gpu_ms\":2.5}";
    fleet_node_rec n;
    CHECK(!fleet_node_read(node, strlen(node), &n, err, sizeof err) && n.id == 3,
          "a node record with a later field: %s", err);
    static const char *bad[] = {
        ROOM_HEAD_NO_MS "\"snap\":null,\"zone\":1,\"zone\":2}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"Zone\":1}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"a_name_longer_than_thirty_two_chars\":1}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"node\":1}",
        ROOM_HEAD_NO_MS "\"snap\":null,\"snap\":null}",
        "{\"node\":1,\"claim\":2,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,\"ms\":1,"
        "\"snap\":null}",
        "{\"id\":3,\"url\":\"\",\"budget_ms\":1,\"used_ms\":0,\"rooms\":0,\"clients\":0,\"cap_rooms\":1,\"id\":3}",
    };
    int refused = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        fleet_node_rec nr;
        int rc = i + 1 < sizeof bad / sizeof *bad ? fleet_room_read(bad[i], strlen(bad[i]), &back, err, sizeof err)
                                                  : fleet_node_read(bad[i], strlen(bad[i]), &nr, err, sizeof err);
        CHECK(rc == -1 && err[0], "refused with a reason: %s", bad[i]);
        refused += rc == -1;
    }
    /* FLEET_FIELDS_MAX fields at most, known or not */
    for (int extra = FLEET_FIELDS_MAX - 9; extra <= FLEET_FIELDS_MAX - 8; extra++) {
        int at = snprintf(text, sizeof text, "%s\"snap\":null", ROOM_HEAD_NO_MS);
        for (int k = 0; k < extra; k++) at += snprintf(text + at, sizeof text - (size_t)at, ",\"f%d\":0", k);
        snprintf(text + at, sizeof text - (size_t)at, "}");
        const int rc = fleet_room_read(text, strlen(text), &back, err, sizeof err);
        CHECK(extra + 8 <= FLEET_FIELDS_MAX ? rc == 0 : rc == -1, "%d fields: %s", extra + 8, rc ? err : "read");
    }
    REPORT("a key without ms read (cost unknown), later fields ignored; %d malformed values refused", refused);
}

static void test_values_round_trip(void) {
    fleet_node_rec n = {.id = 7, .budget_ms = 23.333, .used_ms = 4.5, .rooms = 3, .clients = 2, .cap_rooms = 256};
    snprintf(n.url, sizeof n.url, "http://127.0.0.1:8080/");
    char text[FLEET_DOC_MAX], err[200];
    int len = fleet_node_write(&n, text, sizeof text);
    fleet_node_rec back;
    CHECK(len > 0 && !fleet_node_read(text, (size_t)len, &back, err, sizeof err), "node record read back: %s", err);
    CHECK(back.id == 7 && back.rooms == 3 && back.clients == 2 && !strcmp(back.url, n.url), "node fields");
    fleet_room_rec r = {.node = 2, .claim = 5, .public_role = ROLE_EDITOR, .key_gen = 3, .particles = 2000};
    snprintf(r.scene, sizeof r.scene, "dam_break");
    snprintf(r.error, sizeof r.error, "a \"quoted\" reason\\");
    len = fleet_room_write(&r, text, sizeof text);
    fleet_room_rec rb;
    CHECK(len > 0 && !fleet_room_read(text, (size_t)len, &rb, err, sizeof err), "room claim read back: %s", err);
    CHECK(rb.node == 2 && rb.claim == 5 && rb.public_role == ROLE_EDITOR && rb.key_gen == 3 && rb.particles == 2000 &&
              !strcmp(rb.scene, "dam_break"),
          "room fields");
    CHECK(!strcmp(rb.error, "a ?quoted? reason?"), "quotes and backslashes written as '?': %s", rb.error);
}

static void test_values_refused(void) {
    static const char *bad_rooms[] = {
        "",
        "[]",
        "{\"ms\":0,\"node\":1}",
        "{\"ms\":0,\"node\":0,\"claim\":0,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":"
        "\"\"}",
        "{\"ms\":0,\"node\":1,\"claim\":-1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":"
        "\"\"}",
        "{\"ms\":0,\"node\":1,\"claim\":1,\"public_role\":\"admin\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":"
        "\"\"}",
        "{\"ms\":0,\"node\":1,\"claim\":1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"../x\",\"particles\":0,"
        "\"error\":\"\"}",
        "{\"ms\":0,\"node\":1,\"claim\":1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":2e9,"
        "\"error\":\"\"}",
        "{\"ms\":0,\"node\":1,\"node\":1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":"
        "\"\"}",
        "{\"ms\":0,\"node\":1,\"claim\":1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":"
        "\"\","
        "\"X\":1}",
        "{\"ms\":0,\"node\":1.5,\"claim\":1,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"
        "\"error\":\"\"}",
    };
    int refused = 0;
    for (size_t i = 0; i < sizeof bad_rooms / sizeof *bad_rooms; i++) {
        fleet_room_rec r;
        char err[200] = "";
        int rc = fleet_room_read(bad_rooms[i], strlen(bad_rooms[i]), &r, err, sizeof err);
        CHECK(rc == -1 && err[0], "refused with a reason: %s", bad_rooms[i]);
        refused += rc == -1;
    }
    REPORT("%d malformed room claims refused", refused);
    char big[FLEET_DOC_MAX + 2];
    memset(big, ' ', sizeof big);
    fleet_node_rec n;
    char err[200] = "";
    CHECK(fleet_node_read(big, sizeof big, &n, err, sizeof err) == -1 && strstr(err, "more than"), "over-long: %s",
          err);
    const char *bad_node = "{\"id\":70000,\"url\":\"\",\"budget_ms\":1,\"used_ms\":0,\"rooms\":0,\"clients\":0,"
                           "\"cap_rooms\":1}";
    CHECK(fleet_node_read(bad_node, strlen(bad_node), &n, err, sizeof err) == -1, "an id past 65535");
}

#define ROOM_HEAD                                                                                                      \
    "{\"ms\":0,\"node\":1,\"claim\":2,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,"        \
    "\"error\":\"\","

static void test_snapshot_manifest(void) {
    fleet_room_rec r = {.node = 3, .claim = 4, .public_role = ROLE_PLAYER};
    r.snap = (fleet_snap_manifest){.save = 17, .chunks = 2, .bytes = FLEET_CHUNK_MAX + 5, .tick = 1234};
    memset(r.snap.sha256, 'a', FLEET_SHA256_HEX);
    char text[FLEET_DOC_MAX], err[200] = "";
    int len = fleet_room_write(&r, text, sizeof text);
    fleet_room_rec back;
    CHECK(len > 0 && !fleet_room_read(text, (size_t)len, &back, err, sizeof err), "with a snapshot read back: %s", err);
    CHECK(back.snap.save == 17 && back.snap.chunks == 2 && back.snap.bytes == FLEET_CHUNK_MAX + 5 &&
              back.snap.tick == 1234 && !strcmp(back.snap.sha256, r.snap.sha256),
          "manifest fields");
    const char *none = ROOM_HEAD "\"snap\":null}";
    CHECK(!fleet_room_read(none, strlen(none), &back, err, sizeof err) && back.snap.save == 0, "snap null: %s", err);
    static const char *bad[] = {
        ROOM_HEAD "\"snap\":{}}",
        ROOM_HEAD "\"snap\":1}",
        ROOM_HEAD "\"snap\":{\"save\":0,\"chunks\":1,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":0,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":513,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":2,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":1,\"bytes\":524289,\"sha256\":" SHA ",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":1,\"bytes\":10,\"sha256\":\"ABC\",\"tick\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":1,\"bytes\":10,\"sha256\":" SHA ",\"save\":0}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":1,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0,\"x\":1,\"x\":1}}",
        ROOM_HEAD "\"snap\":{\"save\":1,\"chunks\":1,\"bytes\":10,\"sha256\":" SHA ",\"tick\":0,\"\":1}}",
        ROOM_HEAD "\"snap\":null,\"snap\":null}",
        "{\"node\":1,\"claim\":2,\"public_role\":\"player\",\"key_gen\":0,\"scene\":\"\",\"particles\":0,\"error\":"
        "\"\"}",
    };
    int refused = 0;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        err[0] = 0;
        int rc = fleet_room_read(bad[i], strlen(bad[i]), &back, err, sizeof err);
        CHECK(rc == -1 && err[0], "refused with a reason: %s", bad[i]);
        refused += rc == -1;
    }
    REPORT("%d malformed snapshot manifests refused", refused);
}

static void test_chunk_check(void) {
    const fleet_snap_manifest m = {.save = 9, .chunks = 3, .bytes = 2 * (uint64_t)FLEET_CHUNK_MAX + 100};
    char err[200] = "";
    CHECK(fleet_chunk_len(m.bytes, 0) == FLEET_CHUNK_MAX && fleet_chunk_len(m.bytes, 2) == 100 &&
              fleet_chunk_len(m.bytes, 3) == 0,
          "chunk lengths");
    CHECK(!fleet_chunk_check(&m, 1, "9", "3", FLEET_CHUNK_MAX, err, sizeof err), "a chunk that belongs: %s", err);
    CHECK(!fleet_chunk_check(&m, 2, "9", "3", 100, err, sizeof err), "the last, shorter: %s", err);
    CHECK(fleet_chunk_check(&m, 1, "8", "3", FLEET_CHUNK_MAX, err, sizeof err) == -1 && strstr(err, "save"),
          "another save's chunk: %s", err);
    CHECK(fleet_chunk_check(&m, 1, NULL, "3", FLEET_CHUNK_MAX, err, sizeof err) == -1, "no save header");
    CHECK(fleet_chunk_check(&m, 1, "9", "2", FLEET_CHUNK_MAX, err, sizeof err) == -1, "another count");
    CHECK(fleet_chunk_check(&m, 1, "9", "3x", FLEET_CHUNK_MAX, err, sizeof err) == -1, "a count not a number");
    CHECK(fleet_chunk_check(&m, 1, "-9", "3", FLEET_CHUNK_MAX, err, sizeof err) == -1, "a negative save");
    CHECK(fleet_chunk_check(&m, 2, "9", "3", 99, err, sizeof err) == -1 && strstr(err, "bytes"),
          "a chunk of another length: %s", err);
}

static void test_keys(void) {
    uint32_t id = 0;
    char name[ROOM_NAME_CAP];
    CHECK(fleet_key_parse("node.12", &id, name) == FLEET_KEY_NODE && id == 12, "node.12");
    CHECK(fleet_key_parse("room.lab-1", &id, name) == FLEET_KEY_ROOM && !strcmp(name, "lab-1"), "room.lab-1");
    CHECK(fleet_key_parse("drain.3", &id, name) == FLEET_KEY_DRAIN && id == 3, "drain.3");
    static const char *other[] = {
        "node.0",  "node.012", "node.65536",  "node.",    "node.1x",
        "room.",   "room.UP",  "room.a.b",    "other",    "room.0123456789012345678901234567890123",
        "drain.0", "drain.",   "drain.70000", "drain.1.2"};
    for (size_t i = 0; i < sizeof other / sizeof *other; i++)
        CHECK(fleet_key_parse(other[i], &id, name) == FLEET_KEY_OTHER, "not a key of the directory: %s", other[i]);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        {"orphan_from_revisions", test_orphan_from_revisions},
        {"fence_before_orphan", test_fence_before_orphan},
        {"takeover_rank", test_takeover_rank},
        {"heartbeat_rule", test_heartbeat_rule},
        {"heartbeat_text", test_heartbeat_text},
        {"values_round_trip", test_values_round_trip},
        {"values_refused", test_values_refused},
        {"snapshot_manifest", test_snapshot_manifest},
        {"released_and_cost", test_released_and_cost},
        {"versions", test_versions},
        {"chunk_check", test_chunk_check},
        {"keys", test_keys},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
