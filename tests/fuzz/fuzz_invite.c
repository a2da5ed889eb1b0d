/* fuzz_invite.c - libFuzzer harness: the invite tokens (server/wire/invite.c)
 * with tokens, headers and claims built from the input.
 *
 * Input layout: the first byte's low 2 bits choose what the rest is:
 *   0  a token, verified as it is (up to 8 KiB: the size refusal too);
 *   1  a header and claims (JSON text, split at the first NUL byte), made
 *      into a token signed with the harness's key (HMAC-SHA256), so that what
 *      follows the signature check (libjwt's own parse, the claims) is
 *      reached by every input;
 *   2  claims alone under the header {"alg":"HS256","typ":"JWT"}, signed;
 *   3  a round trip: byte 1 the role, bytes 2-5 the ttl, 6-9 the clock, the
 *      rest the room's name: what invite_sign accepts, invite_verify must
 *      accept (the same role) at that instant and refuse at its expiry and for
 *      another room.
 *
 * Seeds: tests/fuzz/corpus/fuzz_invite/, named by what they hold (the signed
 * ones with the harness's key, bytes i * 7 + 3).
 *
 * Checks, besides ASan/UBSan: a refusal leaves the role untouched and says
 * why (a terminated, non-empty error); an accepted token grants a role of a
 * room (never admin), for the room asked, with claims (read again here with
 * cJSON) valid at the instant asked. */
#include <cJSON.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "invite.h"
#include "../b64url.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define NOW 1700000000LL
#define ROLE_UNSET ROLE_COUNT

static secret_key g_key;

static void key_init(void) {
    if (g_key.len) return;
    for (int i = 0; i < 32; i++) g_key.bytes[i] = (unsigned char)(i * 7 + 3);
    g_key.len = 32;
}

/* An accepted token's claims, read again: the room asked, the role granted,
 * valid at now. */
static void check_accepted(const char *tok, size_t len, const char *room, int64_t now, role r) {
    FUZZ_REQUIRE(r >= ROLE_VIEWER && r <= ROLE_OWNER);
    const char *d1 = memchr(tok, '.', len);
    FUZZ_REQUIRE(d1);
    const char *d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok));
    FUZZ_REQUIRE(d2);
    /* base64url -> bytes, with the inverse alphabet */
    size_t n = (size_t)(d2 - d1 - 1);
    unsigned char *buf = malloc(n + 1);
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        char c = d1[1 + i];
        int v = c >= 'A' && c <= 'Z'   ? c - 'A'
                : c >= 'a' && c <= 'z' ? c - 'a' + 26
                : c >= '0' && c <= '9' ? c - '0' + 52
                : c == '-'             ? 62
                                       : 63;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            buf[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    cJSON *j = cJSON_ParseWithLength((const char *)buf, o);
    free(buf);
    FUZZ_REQUIRE(cJSON_IsObject(j) && cJSON_GetArraySize(j) == 4);
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(j, "room"), *jo = cJSON_GetObjectItemCaseSensitive(j, "role");
    const cJSON *je = cJSON_GetObjectItemCaseSensitive(j, "exp"), *ji = cJSON_GetObjectItemCaseSensitive(j, "iat");
    FUZZ_REQUIRE(cJSON_IsString(jr) && !strcmp(jr->valuestring, room));
    FUZZ_REQUIRE(cJSON_IsString(jo) && !strcmp(jo->valuestring, role_name(r)));
    FUZZ_REQUIRE(cJSON_IsNumber(je) && cJSON_IsNumber(ji));
    FUZZ_REQUIRE(je->valuedouble > (double)now && ji->valuedouble <= (double)(now + INVITE_SKEW_S));
    FUZZ_REQUIRE(je->valuedouble > ji->valuedouble && je->valuedouble - ji->valuedouble <= (double)INVITE_MAX_TTL_S);
    cJSON_Delete(j);
}

/* Verifies and checks the outcome's promises; 0 when accepted. */
static int verify_checked(const char *tok, size_t len, const char *room, int64_t now, role *out) {
    char err[256];
    memset(err, 0x7f, sizeof err);
    role r = ROLE_UNSET;
    int rc = invite_verify(&g_key, tok, len, room, now, &r, err, sizeof err);
    FUZZ_REQUIRE(rc == 0 || rc == -1);
    if (rc) {
        FUZZ_REQUIRE(r == ROLE_UNSET);
        fz_check_error(err, sizeof err);
    } else {
        check_accepted(tok, len, room, now, r);
    }
    *out = r;
    return rc;
}

/* header.claims signed with the harness's key (HMAC-SHA256), verified. */
static void signed_token(const char *header, size_t hl, const char *claims, size_t cl) {
    size_t cap = (hl + cl) / 3 * 4 + 128;
    char *t = malloc(cap);
    size_t o = b64url((const unsigned char *)header, hl, t);
    t[o++] = '.';
    o += b64url((const unsigned char *)claims, cl, t + o);
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned ml = 0;
    HMAC(EVP_sha256(), g_key.bytes, (int)g_key.len, (const unsigned char *)t, o, mac, &ml);
    t[o++] = '.';
    o += b64url(mac, ml, t + o);
    role r;
    verify_checked(t, o, "lab", NOW, &r);
    free(t);
}

static void round_trip(const uint8_t *d, size_t n) {
    if (n < 9) return;
    role want = (role)(d[0] % (ROLE_COUNT + 1));
    int64_t ttl = (int64_t)((uint32_t)d[1] | (uint32_t)d[2] << 8 | (uint32_t)d[3] << 16 | (uint32_t)d[4] << 24);
    int64_t now = NOW + (int32_t)((uint32_t)d[5] | (uint32_t)d[6] << 8 | (uint32_t)d[7] << 16 | (uint32_t)d[8] << 24);
    char room[64];
    size_t rl = n - 9 < sizeof room - 1 ? n - 9 : sizeof room - 1;
    memcpy(room, d + 9, rl);
    room[rl] = 0;
    char tok[INVITE_MAX_TOKEN + 1], err[256];
    if (invite_sign(&g_key, room, want, ttl, now, tok, sizeof tok, err, sizeof err)) {
        fz_check_error(err, sizeof err);
        return;
    }
    FUZZ_REQUIRE(want <= ROLE_OWNER && ttl >= 1 && ttl <= INVITE_MAX_TTL_S);
    role r;
    FUZZ_REQUIRE(verify_checked(tok, strlen(tok), room, now, &r) == 0 && r == want);
    FUZZ_REQUIRE(verify_checked(tok, strlen(tok), room, now + ttl, &r) == -1);
    FUZZ_REQUIRE(verify_checked(tok, strlen(tok), strcmp(room, "lab") ? "lab" : "lab2", now, &r) == -1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 8300) return 0;
    key_init();
    const char *rest = (const char *)data + 1;
    size_t n = size - 1;
    role r;
    switch (data[0] & 3) {
    case 0:
        verify_checked(rest, n, "lab", NOW, &r);
        break;
    case 1: {
        const char *nul = memchr(rest, 0, n);
        size_t hl = nul ? (size_t)(nul - rest) : n;
        signed_token(rest, hl, nul ? nul + 1 : "", nul ? n - hl - 1 : 0);
        break;
    }
    case 2: {
        static const char h[] = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";
        signed_token(h, sizeof h - 1, rest, n);
        break;
    }
    case 3:
        round_trip(data + 1, n);
        break;
    }
    return 0;
}
