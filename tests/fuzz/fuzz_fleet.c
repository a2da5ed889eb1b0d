/* fuzz_fleet.c - libFuzzer harness for the values a fleet's node reads from
 * the directory's bucket (server/wire/fleet_doc.c): the first input byte
 * picks the decoder (a node record, a room's claim with its snapshot's
 * manifest, a key, or a snapshot chunk's headers and length), the rest is
 * the value.  Each must refuse or decode, never read out of bounds, never
 * leak; what decodes is within its bounds (ids 1-65535, a room's node 0
 * only when claimed (released), known roles, a scene of its rule,
 * terminated texts, a manifest whose bytes fill its chunks, a cost in range:
 * 0 when a key of an older node has none), and writes and reads back the
 * same (a field of a later version, ignored, is not written back); a chunk
 * is accepted only with its save's number, its count and its length; a
 * heartbeat or an acknowledgement (server/wire/fleet_alive.c) reads to a
 * round of 1 to 2^63-1 and names by the rule, none twice, and writes back
 * to the very bytes it was read from.
 *
 * Built and run by tests/fuzz/fuzz.mk; seeds: tests/fuzz/corpus/fuzz_fleet. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fleet_alive.h"
#include "fleet_doc.h"
#include "fuzz_check.h"

static void node(const uint8_t *p, size_t n) {
    fleet_node_rec r, back;
    char err[200], text[FLEET_DOC_MAX];
    if (fleet_node_read(p, n, &r, err, sizeof err)) return;
    FUZZ_REQUIRE(r.id >= 1 && r.id <= FLEET_NODE_MAX && memchr(r.url, 0, sizeof r.url));
    FUZZ_REQUIRE(r.budget_ms >= 0 && r.budget_ms <= FLEET_MS_MAX && r.used_ms >= 0 && r.used_ms <= FLEET_MS_MAX);
    FUZZ_REQUIRE(r.rooms >= 0 && r.rooms <= FLEET_COUNT_MAX && r.clients >= 0 && r.cap_rooms >= 0);
    int len = fleet_node_write(&r, text, sizeof text);
    FUZZ_REQUIRE(len > 0 && !fleet_node_read(text, (size_t)len, &back, err, sizeof err));
    FUZZ_REQUIRE(back.id == r.id && back.rooms == r.rooms && !strcmp(back.url, r.url));
}

static void room(const uint8_t *p, size_t n) {
    fleet_room_rec r, back;
    char err[200], text[FLEET_DOC_MAX];
    if (fleet_room_read(p, n, &r, err, sizeof err)) return;
    FUZZ_REQUIRE(r.node <= FLEET_NODE_MAX && (r.node >= 1 || r.claim >= 1));
    FUZZ_REQUIRE(r.ms >= 0 && r.ms <= FLEET_MS_MAX);
    FUZZ_REQUIRE(r.public_role >= ROLE_VIEWER && r.public_role <= ROLE_OWNER);
    FUZZ_REQUIRE(memchr(r.scene, 0, sizeof r.scene) && memchr(r.error, 0, sizeof r.error));
    FUZZ_REQUIRE(r.particles >= 0 && r.particles <= (1 << 20));
    const fleet_snap_manifest *m = &r.snap;
    if (m->save) {
        FUZZ_REQUIRE(m->chunks >= 1 && m->chunks <= FLEET_CHUNKS_MAX);
        FUZZ_REQUIRE(m->bytes > (uint64_t)(m->chunks - 1) * FLEET_CHUNK_MAX &&
                     m->bytes <= (uint64_t)m->chunks * FLEET_CHUNK_MAX);
        FUZZ_REQUIRE(strlen(m->sha256) == FLEET_SHA256_HEX &&
                     strspn(m->sha256, "0123456789abcdef") == FLEET_SHA256_HEX);
        FUZZ_REQUIRE(fleet_chunk_len(m->bytes, m->chunks - 1) > 0 && fleet_chunk_len(m->bytes, m->chunks) == 0);
    } else {
        FUZZ_REQUIRE(!m->chunks && !m->bytes && !m->sha256[0]);
    }
    int len = fleet_room_write(&r, text, sizeof text);
    FUZZ_REQUIRE(len > 0 && !fleet_room_read(text, (size_t)len, &back, err, sizeof err));
    FUZZ_REQUIRE(back.node == r.node && back.claim == r.claim && back.public_role == r.public_role &&
                 !strcmp(back.scene, r.scene) && !strcmp(back.error, r.error));
    FUZZ_REQUIRE(back.ms >= r.ms - 0.0005 && back.ms <= r.ms + 0.0005); /* written to the microsecond */
    FUZZ_REQUIRE(back.snap.save == m->save && back.snap.chunks == m->chunks && back.snap.bytes == m->bytes &&
                 back.snap.tick == m->tick && !strcmp(back.snap.sha256, m->sha256));
}

/* A chunk's headers (two texts split at the first NUL) and its length (the
 * first 3 bytes) checked against a manifest of 3 chunks of save 9. */
static void chunk(const uint8_t *p, size_t n) {
    const fleet_snap_manifest m = {.save = 9, .chunks = 3, .bytes = 2 * (uint64_t)FLEET_CHUNK_MAX + 100};
    if (n < 4) return;
    const size_t len = ((size_t)p[0] << 16 | (size_t)p[1] << 8 | p[2]) % (FLEET_CHUNK_MAX + 2);
    const int k = p[3] % 4;
    char save[40], count[40];
    const uint8_t *t = p + 4;
    n -= 4;
    const uint8_t *z = memchr(t, 0, n);
    size_t a = z ? (size_t)(z - t) : n, b = z ? n - a - 1 : 0;
    if (a >= sizeof save) a = sizeof save - 1;
    if (b >= sizeof count) b = sizeof count - 1;
    memcpy(save, t, a);
    save[a] = 0;
    if (z) memcpy(count, z + 1, b);
    count[b] = 0;
    char err[200];
    if (fleet_chunk_check(&m, k, save, z ? count : NULL, len, err, sizeof err)) return;
    FUZZ_REQUIRE(!strcmp(save, "9") && !strcmp(count, "3") && len == fleet_chunk_len(m.bytes, k) && len > 0);
}

static void key(const uint8_t *p, size_t n) {
    char k[128], name[ROOM_NAME_CAP];
    if (n >= sizeof k) n = sizeof k - 1;
    memcpy(k, p, n);
    k[n] = 0;
    uint32_t id = 0;
    switch (fleet_key_parse(k, &id, name)) {
    case FLEET_KEY_NODE:
    case FLEET_KEY_DRAIN:
        FUZZ_REQUIRE(id >= 1 && id <= FLEET_NODE_MAX);
        break;
    case FLEET_KEY_ROOM:
        FUZZ_REQUIRE(room_name_ok(name, strlen(name), NULL, 0));
        break;
    default:
        break;
    }
}

static void alive(const uint8_t *p, size_t n) {
    static fleet_alive_msg m;
    static char text[FLEET_ALIVE_MAX + 1];
    char err[200];
    uint64_t round = 0;
    if (!fleet_ack_read(p, n, &round, err, sizeof err)) {
        FUZZ_REQUIRE(round >= 1 && round <= 9223372036854775807ull);
        const int len = fleet_ack_write(round, text, sizeof text);
        FUZZ_REQUIRE(len == (int)n && !memcmp(text, p, n));
    }
    if (fleet_alive_read(p, n, &m, err, sizeof err)) return;
    FUZZ_REQUIRE(m.round >= 1 && m.nrooms >= 0 && m.nrooms <= FLEET_ALIVE_ROOMS);
    for (int i = 0; i < m.nrooms; i++) {
        FUZZ_REQUIRE(room_name_ok(m.rooms[i], strlen(m.rooms[i]), NULL, 0));
        for (int j = 0; j < i; j++) FUZZ_REQUIRE(strcmp(m.rooms[i], m.rooms[j]));
    }
    const int len = fleet_alive_write(&m, text, sizeof text);
    FUZZ_REQUIRE(len == (int)n && !memcmp(text, p, n));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    switch (data[0] % 5) {
    case 0:
        node(p, n);
        break;
    case 1:
        room(p, n);
        break;
    case 2:
        key(p, n);
        break;
    case 4:
        alive(p, n);
        break;
    default:
        chunk(p, n);
        break;
    }
    return 0;
}
