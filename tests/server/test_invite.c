/* test_invite.c - C unit tests of the invite tokens (server/wire/invite.c)
 * and the signing secret (server/base/secret.c): the round trip; every
 * refusal, on tokens made by hand here (base64url parts, signatures from
 * OpenSSL's HMAC with the secret, so that only the one flaw under test is
 * wrong); libjwt 1.10's own acceptance of an HS512 token, the reason
 * invite.c reads the header itself; PyJWT (python3-jwt) reading ours and
 * making one ours reads; and the secret file's rules (size, mode, creation).
 *
 *   test_invite_san [NAME...]
 * Prints "N passed, N failed, 0 skipped". */
#include <errno.h>
#include <fcntl.h>
#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "invite.h"
#include "room_name.h"
#include "secret.h"
#include "testlib.h"
#include "../b64url.h"

#define NOW 1700000000LL /* the tests' clock: a fixed instant, nothing here reads the time */

static secret_key g_key, g_other;

static void keys_init(void) {
    g_key.len = 32;
    g_other.len = 32;
    for (int i = 0; i < 32; i++) {
        g_key.bytes[i] = (unsigned char)(i * 7 + 3);
        g_other.bytes[i] = (unsigned char)(i * 11 + 5);
    }
}

/* ---- Tokens by hand ------------------------------------------------------ */

/* sig: "sha256", "sha384", "sha512" (HMAC of header.payload with key), or the
 * signature's text itself (prefix "=": "=" alone is an empty signature). */
static char *make_token(const char *header, const char *payload, const char *sig, const secret_key *key) {
    size_t cap = 2 * (strlen(header) + strlen(payload)) + 256;
    char *t = malloc(cap);
    b64url((const unsigned char *)header, strlen(header), t);
    strcat(t, ".");
    b64url((const unsigned char *)payload, strlen(payload), t + strlen(t));
    const EVP_MD *md = !strcmp(sig, "sha256")   ? EVP_sha256()
                       : !strcmp(sig, "sha384") ? EVP_sha384()
                       : !strcmp(sig, "sha512") ? EVP_sha512()
                                                : NULL;
    char s[128] = "";
    if (md) {
        unsigned char mac[EVP_MAX_MD_SIZE];
        unsigned len = 0;
        HMAC(md, key->bytes, (int)key->len, (const unsigned char *)t, strlen(t), mac, &len);
        b64url(mac, len, s);
    } else {
        snprintf(s, sizeof s, "%s", sig + 1);
    }
    strcat(t, ".");
    strcat(t, s);
    return t;
}

static const char *HS256 = "{\"alg\":\"HS256\",\"typ\":\"JWT\"}";

static char *claims_text(const char *room, const char *role_s, long long exp, long long iat) {
    char *p = malloc(256);
    snprintf(p, 256, "{\"room\":\"%s\",\"role\":\"%s\",\"exp\":%lld,\"iat\":%lld}", room, role_s, exp, iat);
    return p;
}

/* Verifies t for room "lab" at NOW: 0 and the role, or -1 and err. */
static int verify(const char *t, size_t len, role *r, char *err, size_t errlen) {
    return invite_verify(&g_key, t, len, "lab", NOW, r, err, errlen);
}

/* A refused token: -1, the role left as it was, and an error containing why. */
static void expect_refused(const char *name, const char *t, size_t len, const char *why) {
    role r = ROLE_COUNT;
    char err[256] = "";
    int rc = verify(t, len, &r, err, sizeof err);
    CHECK(rc == -1 && r == ROLE_COUNT, "%s: accepted (role %s)", name, role_name(r));
    CHECK(strstr(err, why) != NULL, "%s: the error '%s' does not say '%s'", name, err, why);
}

static void expect_refused_made(const char *name, const char *header, const char *payload, const char *sig,
                                const char *why) {
    char *t = make_token(header, payload, sig, &g_key);
    expect_refused(name, t, strlen(t), why);
    free(t);
}

/* ---- The tests ----------------------------------------------------------- */

static void test_round_trip(void) {
    for (int r = ROLE_VIEWER; r <= ROLE_OWNER; r++) {
        char tok[INVITE_MAX_TOKEN + 1], err[256] = "";
        int rc = invite_sign(&g_key, "lab", (role)r, 3600, NOW, tok, sizeof tok, err, sizeof err);
        CHECK(rc == 0, "signing a %s invite: %s", role_name((role)r), err);
        role got = ROLE_COUNT;
        rc = verify(tok, strlen(tok), &got, err, sizeof err);
        CHECK(rc == 0 && got == (role)r, "a %s invite verifies as %s: %s", role_name((role)r), role_name(got), err);
        if (r == ROLE_OWNER) REPORT("an owner's invite: %zu bytes", strlen(tok));
        /* it is valid until exp, exclusive */
        rc = invite_verify(&g_key, tok, strlen(tok), "lab", NOW + 3599, &got, err, sizeof err);
        CHECK(rc == 0, "valid one second before it expires: %s", err);
        rc = invite_verify(&g_key, tok, strlen(tok), "lab", NOW + 3600, &got, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "expired"), "expired at exp: %s", err);
        rc = invite_verify(&g_other, tok, strlen(tok), "lab", NOW, &got, err, sizeof err);
        CHECK(rc == -1 && strstr(err, "signature does not verify"), "another key: %s", err);
    }
    /* what signing refuses */
    char tok[INVITE_MAX_TOKEN + 1], err[256];
    CHECK(invite_sign(&g_key, "lab", ROLE_ADMIN, 60, NOW, tok, sizeof tok, err, sizeof err) == -1, "no admin invite");
    CHECK(invite_sign(&g_key, "Lab", ROLE_VIEWER, 60, NOW, tok, sizeof tok, err, sizeof err) == -1 &&
              strstr(err, ROOM_NAME_RULE),
          "a bad room name: %s", err);
    CHECK(invite_sign(&g_key, "lab", ROLE_VIEWER, 0, NOW, tok, sizeof tok, err, sizeof err) == -1, "ttl 0");
    CHECK(invite_sign(&g_key, "lab", ROLE_VIEWER, INVITE_MAX_TTL_S + 1, NOW, tok, sizeof tok, err, sizeof err) == -1,
          "ttl beyond the longest");
    CHECK(invite_sign(&g_key, "lab", ROLE_VIEWER, INVITE_MAX_TTL_S, NOW, tok, sizeof tok, err, sizeof err) == 0,
          "the longest ttl: %s", err);
    CHECK(invite_sign(&g_key, "lab", ROLE_VIEWER, 60, NOW, tok, 40, err, sizeof err) == -1, "a buffer too small");
    secret_key short_key = g_key;
    short_key.len = 31;
    CHECK(invite_sign(&short_key, "lab", ROLE_VIEWER, 60, NOW, tok, sizeof tok, err, sizeof err) == -1,
          "a key of 31 bytes");
    role got = ROLE_COUNT;
    invite_sign(&g_key, "lab", ROLE_PLAYER, 60, NOW, tok, sizeof tok, err, sizeof err);
    CHECK(invite_verify(&short_key, tok, strlen(tok), "lab", NOW, &got, err, sizeof err) == -1 && got == ROLE_COUNT,
          "verifying with a key of 31 bytes");
}

/* The hand-made builder makes tokens invite.c accepts: a refusal below is
 * the one flaw each token has. */
static void test_hand_made_accepted(void) {
    char *p = claims_text("lab", "editor", NOW + 60, NOW);
    const char *headers[] = {HS256, "{\"alg\":\"HS256\"}", "{\"typ\":\"JWT\",\"alg\":\"HS256\"}"};
    for (size_t i = 0; i < sizeof headers / sizeof *headers; i++) {
        char *t = make_token(headers[i], p, "sha256", &g_key);
        role r = ROLE_COUNT;
        char err[256] = "";
        CHECK(verify(t, strlen(t), &r, err, sizeof err) == 0 && r == ROLE_EDITOR, "header %s: %s", headers[i], err);
        free(t);
    }
    free(p);
    /* the claims in another order, iat just within the skew */
    char q[256];
    snprintf(q, sizeof q, "{\"iat\":%lld,\"exp\":%lld,\"role\":\"viewer\",\"room\":\"lab\"}", NOW + INVITE_SKEW_S,
             NOW + 600);
    char *t = make_token(HS256, q, "sha256", &g_key);
    role r = ROLE_COUNT;
    char err[256] = "";
    CHECK(verify(t, strlen(t), &r, err, sizeof err) == 0 && r == ROLE_VIEWER, "iat at the skew: %s", err);
    free(t);
}

static void test_refused_algorithms(void) {
    char *p = claims_text("lab", "owner", NOW + 60, NOW);
    expect_refused_made("alg none, empty signature", "{\"alg\":\"none\"}", p, "=", "signed with 'none'");
    expect_refused_made("alg none with typ", "{\"alg\":\"none\",\"typ\":\"JWT\"}", p, "=", "signed with 'none'");
    expect_refused_made("alg None", "{\"alg\":\"None\"}", p, "=", "signed with 'None'");
    expect_refused_made("alg NONE with an HS256 signature", "{\"alg\":\"NONE\"}", p, "sha256", "signed with 'NONE'");
    expect_refused_made("alg HS512 signed with HMAC-SHA512", "{\"alg\":\"HS512\",\"typ\":\"JWT\"}", p, "sha512",
                        "signed with 'HS512'");
    expect_refused_made("alg HS384 signed with HMAC-SHA384", "{\"alg\":\"HS384\"}", p, "sha384", "signed with 'HS384'");
    expect_refused_made("alg RS256", "{\"alg\":\"RS256\"}", p, "sha256", "signed with 'RS256'");
    expect_refused_made("alg ES256", "{\"alg\":\"ES256\"}", p, "sha256", "signed with 'ES256'");
    expect_refused_made("alg hs256 (libjwt ignores case)", "{\"alg\":\"hs256\"}", p, "sha256", "signed with 'hs256'");
    expect_refused_made("alg not a string", "{\"alg\":256}", p, "sha256", "'alg' is not a string");
    expect_refused_made("no alg", "{\"typ\":\"JWT\"}", p, "sha256", "must name 'alg' once");
    expect_refused_made("alg twice", "{\"alg\":\"HS256\",\"alg\":\"none\"}", p, "sha256", "signed with 'none'");
    expect_refused_made("alg twice, both HS256", "{\"alg\":\"HS256\",\"alg\":\"HS256\"}", p, "sha256",
                        "must name 'alg' once");
    expect_refused_made("typ other than JWT", "{\"alg\":\"HS256\",\"typ\":\"JWS\"}", p, "sha256", "'typ' must be");
    expect_refused_made("a kid", "{\"alg\":\"HS256\",\"kid\":\"k1\"}", p, "sha256", "the field 'kid'");
    expect_refused_made("crit", "{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", p, "sha256", "the field 'crit'");
    expect_refused_made("a header array", "[\"HS256\"]", p, "sha256", "header is not a JSON object");

    /* why: libjwt 1.10 alone takes the algorithm from the header, and accepts
     * an HS512 token signed with the secret */
    char *t = make_token("{\"alg\":\"HS512\",\"typ\":\"JWT\"}", p, "sha512", &g_key);
    jwt_t *j = NULL;
    int rc = jwt_decode(&j, t, g_key.bytes, (int)g_key.len);
    CHECK(rc == 0 && j && jwt_get_alg(j) == JWT_ALG_HS512, "libjwt alone: rc %d", rc);
    REPORT("libjwt 1.10 alone %s an HS512 token signed with the secret", rc == 0 ? "accepts" : "refuses");
    jwt_free(j);
    free(t);
    /* and, without a key, an alg none token */
    t = make_token("{\"alg\":\"none\"}", p, "=", &g_key);
    j = NULL;
    rc = jwt_decode(&j, t, NULL, 0);
    REPORT("libjwt 1.10 alone, given no key, %s an alg none token", rc == 0 ? "accepts" : "refuses");
    jwt_free(j);
    free(t);
    free(p);
}

static void test_refused_signatures(void) {
    char *p = claims_text("lab", "player", NOW + 60, NOW);
    char *t = make_token(HS256, p, "sha256", &g_other);
    expect_refused("signed with another key", t, strlen(t), "signature does not verify");
    free(t);
    t = make_token(HS256, p, "sha256", &g_key);
    size_t n = strlen(t);
    t[n - 2] = t[n - 2] == 'A' ? 'B' : 'A';
    expect_refused("one character of the signature changed", t, n, "signature does not verify");
    t[n - 2] = 'A';
    free(t);
    t = make_token(HS256, p, "sha256", &g_key);
    n = strlen(t);
    t[n - 1] = (char)(t[n - 1] ^ 1); /* the last character's unused bits: a second spelling of the same MAC */
    role r = ROLE_COUNT;
    char err[256] = "";
    CHECK(verify(t, n, &r, err, sizeof err) == -1 && r == ROLE_COUNT, "a non-canonical last character: %s", err);
    free(t);
    expect_refused_made("an empty signature", HS256, p, "=", "signature is 0 characters");
    expect_refused_made("a signature of 42 characters", HS256, p, "=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
                        "signature is 42 characters");
    expect_refused_made("an HS512 MAC under an HS256 header", HS256, p, "sha512", "signature is 86 characters");
    free(p);
}

static void test_refused_claims(void) {
    char p[512];
    const struct {
        const char *name, *payload, *why;
    } cases[] = {
        {"no room", "{\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}", "no 'room' claim"},
        {"no role", "{\"room\":\"lab\",\"exp\":%lld,\"iat\":%lld}", "no 'role' claim"},
        {"no exp", "{\"room\":\"lab\",\"role\":\"owner\",\"iat\":%lld}", "no 'exp' claim"},
        {"no iat", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld}", "no 'iat' claim"},
        {"room a number", "{\"room\":5,\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}", "'room' must be a string"},
        {"role a bool", "{\"room\":\"lab\",\"role\":true,\"exp\":%lld,\"iat\":%lld}", "'role' must be a string"},
        {"exp a string", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":\"%lld\",\"iat\":%lld}",
         "'exp' must be an integer"},
        {"exp a fraction", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld.5,\"iat\":%lld}",
         "'exp' must be an integer"},
        {"exp negative", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":-%lld,\"iat\":%lld}",
         "'exp' must be an integer"},
        {"iat null", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":null}", "'iat' must be an integer"},
        {"iat an array", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":[%lld]}",
         "'iat' must be an integer"},
        {"exp huge", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":1%lld0000000,\"iat\":%lld}",
         "'exp' must be an integer"},
        {"exp beyond a double (inf)", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":1e999,\"iat\":%lld}",
         "'exp' must be an integer"},
        {"iat written 1.7e9", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":1.7e9}", "not plain"},
        {"exp written with .0", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld.0,\"iat\":%lld}", "not plain"},
        {"an nbf too", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld,\"nbf\":0}", "the claim 'nbf'"},
        {"role twice", "{\"room\":\"lab\",\"role\":\"viewer\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}",
         "'role' is given twice"},
        {"room twice", "{\"room\":\"lab\",\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}",
         "'room' is given twice"},
        {"role unknown", "{\"room\":\"lab\",\"role\":\"root\",\"exp\":%lld,\"iat\":%lld}", "'role' 'root' is not one"},
        {"role admin", "{\"room\":\"lab\",\"role\":\"admin\",\"exp\":%lld,\"iat\":%lld}", "'role' 'admin' is not one"},
        {"role Owner", "{\"room\":\"lab\",\"role\":\"Owner\",\"exp\":%lld,\"iat\":%lld}", "'role' 'Owner' is not one"},
        {"room upper case", "{\"room\":\"Lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}", ROOM_NAME_RULE},
        {"room too long",
         "{\"room\":\"abcdefghijklmnopqrstuvwxyz012345\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}",
         ROOM_NAME_RULE},
        {"room with a NUL", "{\"room\":\"lab\\u0000x\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}", "signature"},
        {"claims an array", "[%lld,%lld]", "claims is not a JSON object"},
        {"claims not JSON", "{room: lab %lld %lld", "claims is not a JSON object"},
        {"claims with more after", "{\"room\":\"lab\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}x",
         "claims is not a JSON object"},
        {"another room", "{\"room\":\"other\",\"role\":\"owner\",\"exp\":%lld,\"iat\":%lld}",
         "for the room 'other', not 'lab'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        snprintf(p, sizeof p, cases[i].payload, NOW + 60, NOW);
        expect_refused_made(cases[i].name, HS256, p, "sha256", cases[i].why);
    }
    REPORT("%zu kinds of bad claims refused", sizeof cases / sizeof *cases);
}

static void test_refused_times(void) {
    const struct {
        const char *name;
        long long exp, iat;
        const char *why;
    } cases[] = {
        {"expired at now", NOW, NOW - 60, "has expired"},
        {"expired a day ago", NOW - 86400, NOW - 90000, "has expired"},
        {"issued beyond the skew", NOW + 1000, NOW + INVITE_SKEW_S + 1, "not valid yet"},
        {"exp before iat", NOW + 10, NOW + 20, "is not after its 'iat'"},
        {"exp at iat", NOW + 10, NOW + 10, "is not after its 'iat'"},
        {"living too long", NOW + INVITE_MAX_TTL_S + 1, NOW, "at most"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *p = claims_text("lab", "viewer", cases[i].exp, cases[i].iat);
        expect_refused_made(cases[i].name, HS256, p, "sha256", cases[i].why);
        free(p);
    }
}

static void test_refused_shapes(void) {
    char *p = claims_text("lab", "viewer", NOW + 60, NOW);
    char *good = make_token(HS256, p, "sha256", &g_key);
    size_t n = strlen(good);
    expect_refused("empty", "", 0, "is empty");
    expect_refused("two parts", "eyJhbGciOiJIUzI1NiJ9.e30", 24, "three base64url parts");
    char *t = malloc(n + 8);
    snprintf(t, n + 8, "%s.AA", good);
    expect_refused("four parts", t, strlen(t), "more than three parts");
    snprintf(t, n + 8, "%s=", good);
    expect_refused("base64 padding", t, strlen(t), "is not base64url");
    memcpy(t, good, n + 1);
    t[5] = ' ';
    expect_refused("a space", t, n, "byte 6 is not base64url");
    memcpy(t, good, n + 1);
    t[5] = '+';
    expect_refused("base64's '+'", t, n, "byte 6 is not base64url");
    memcpy(t, good, n + 1);
    t[n - 3] = 0; /* a NUL inside, the length still n */
    expect_refused("a NUL inside", t, n, "is not base64url");
    memcpy(t, good, n + 1);
    expect_refused("cut short", t, n - 1, "signature is 42 characters");
    free(t);
    /* a header of 1 mod 4 characters: not base64url */
    expect_refused("a header of 5 characters", "eyJhb.e30.AAAA", 14, "header is not base64url");
    /* oversize: a token of 4097 bytes, refused before anything else is read */
    char *big = malloc(INVITE_MAX_TOKEN + 2);
    memset(big, 'A', INVITE_MAX_TOKEN + 1);
    big[INVITE_MAX_TOKEN + 1] = 0;
    expect_refused("4097 bytes", big, INVITE_MAX_TOKEN + 1, "longer than 4096 bytes");
    /* 4096 bytes of well-formed token: refused for its claim, not its size */
    char q[4096];
    free(big);
    big = NULL;
    for (int pad = 3100; pad > 2900; pad--) { /* the longest such token within 4096 bytes */
        snprintf(q, sizeof q, "{\"room\":\"lab\",\"role\":\"viewer\",\"exp\":%lld,\"iat\":%lld,\"x\":\"%0*d\"}",
                 NOW + 60, NOW, pad, 0);
        free(big);
        big = make_token(HS256, q, "sha256", &g_key);
        if (strlen(big) <= INVITE_MAX_TOKEN) break;
    }
    REPORT("a token with a long claim: %zu bytes", strlen(big));
    CHECK(strlen(big) <= INVITE_MAX_TOKEN && strlen(big) >= INVITE_MAX_TOKEN - 2, "the long token: %zu bytes",
          strlen(big));
    expect_refused("a long claim", big, strlen(big), "the claim 'x'");
    free(big);
    free(good);
    free(p);
}

/* ---- PyJWT ---------------------------------------------------------------- */

static void key_hex(char *out) {
    for (size_t i = 0; i < g_key.len; i++) sprintf(out + 2 * i, "%02x", g_key.bytes[i]);
}

/* Runs python3 with a script and arguments; its first line of output in out. */
static int python(const char *script, const char *args, char *out, size_t cap) {
    char line[8192];
    snprintf(line, sizeof line, "/usr/bin/python3 -c '%s' %s 2>&1", script, args);
    FILE *f = popen(line, "r");
    if (!f) return -1;
    out[0] = 0;
    if (!fgets(out, (int)cap, f)) out[0] = 0;
    out[strcspn(out, "\n")] = 0;
    return pclose(f);
}

static void test_pyjwt(void) {
    char hex[2 * SECRET_MAX + 1], out[4200], args[8600];
    key_hex(hex);
    int rc = python("import jwt", "", out, sizeof out);
    CHECK(rc == 0, "python3 with PyJWT (python3-jwt; scripts/deps.sh test installs it): %s", out);
    if (rc) return;
    /* ours, read by PyJWT (HS256 only; the clock's checks off: the tokens carry a fixed time) */
    char tok[INVITE_MAX_TOKEN + 1], err[256] = "";
    CHECK(invite_sign(&g_key, "room-7", ROLE_EDITOR, 900, NOW, tok, sizeof tok, err, sizeof err) == 0, "%s", err);
    snprintf(args, sizeof args, "%s %s", hex, tok);
    rc = python("import sys, jwt\n"
                "c = jwt.decode(sys.argv[2], bytes.fromhex(sys.argv[1]), algorithms=[\"HS256\"],\n"
                "               options={\"verify_exp\": False, \"verify_iat\": False})\n"
                "h = jwt.get_unverified_header(sys.argv[2])\n"
                "print(h[\"alg\"], c[\"room\"], c[\"role\"], c[\"exp\"], c[\"iat\"], sorted(c))",
                args, out, sizeof out);
    char want[256];
    snprintf(want, sizeof want, "HS256 room-7 editor %lld %lld ['exp', 'iat', 'role', 'room']", NOW + 900, NOW);
    CHECK(rc == 0 && !strcmp(out, want), "PyJWT reads ours as '%s', not '%s'", out, want);
    /* PyJWT's, read by ours */
    snprintf(args, sizeof args, "%s %lld", hex, NOW);
    rc = python("import sys, jwt\n"
                "n = int(sys.argv[2])\n"
                "print(jwt.encode({\"room\": \"lab\", \"role\": \"player\", \"exp\": n + 60, \"iat\": n},\n"
                "                 bytes.fromhex(sys.argv[1]), algorithm=\"HS256\"))",
                args, out, sizeof out);
    CHECK(rc == 0 && strlen(out) > 40, "PyJWT signs: %s", out);
    role r = ROLE_COUNT;
    rc = verify(out, strlen(out), &r, err, sizeof err);
    CHECK(rc == 0 && r == ROLE_PLAYER, "ours reads PyJWT's token as %s: %s", role_name(r), err);
    /* PyJWT's HS512 token with the same key: refused */
    snprintf(args, sizeof args, "%s %lld", hex, NOW);
    rc = python("import sys, jwt\n"
                "n = int(sys.argv[2])\n"
                "print(jwt.encode({\"room\": \"lab\", \"role\": \"owner\", \"exp\": n + 60, \"iat\": n},\n"
                "                 bytes.fromhex(sys.argv[1]), algorithm=\"HS512\"))",
                args, out, sizeof out);
    CHECK(rc == 0, "PyJWT signs HS512: %s", out);
    expect_refused("PyJWT's HS512 token", out, strlen(out), "signed with 'HS512'");
}

/* ---- The secret file ----------------------------------------------------- */

static char g_dir[64];

static void write_file(const char *path, const void *bytes, size_t n, mode_t mode) {
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0600);
    CHECK(fd >= 0, "creating %s: %s", path, strerror(errno));
    if (fd < 0) return;
    CHECK(write(fd, bytes, n) == (ssize_t)n, "writing %s", path);
    close(fd);
    chmod(path, mode);
}

static void expect_file_refused(const char *name, const char *path, const char *why) {
    secret_key k;
    memset(&k, 0x55, sizeof k);
    char err[512] = "";
    int rc = secret_read_file(path, &k, err, sizeof err);
    CHECK(rc == -1 && k.len == 0, "%s: read (len %zu)", name, k.len);
    CHECK(strstr(err, why) != NULL, "%s: the error '%s' does not say '%s'", name, err, why);
    CHECK(!strstr(err, "QQQQ"), "%s: the error shows the file's bytes: %s", name, err);
    bool wiped = true;
    for (size_t i = 0; i < sizeof k.bytes; i++) wiped = wiped && !k.bytes[i];
    CHECK(wiped, "%s: the key's bytes are wiped", name);
}

static void test_secret_file(void) {
    char path[128], err[512];
    snprintf(path, sizeof path, "%s/s", g_dir);
    char text[1100];
    memset(text, 'Q', sizeof text);
    write_file(path, text, 32, 0600);
    secret_key k;
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == 32, "32 bytes at 0600: %s", err);
    CHECK(!memcmp(k.bytes, text, 32), "the bytes as they are");
    write_file(path, text, 32, 0400);
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == 32, "0400: %s", err);
    memcpy(text + 32, "\n", 1);
    write_file(path, text, 33, 0600);
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == 32, "a final newline is not the key's: %zu",
          k.len);
    memcpy(text + 40, "\r\n", 2);
    write_file(path, text, 42, 0600);
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == 40, "nor a final CR LF: %zu", k.len);
    text[31] = '\r'; /* a final CR without LF is the key's */
    write_file(path, text, 32, 0600);
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == 32, "a final CR alone is the key's: %zu", k.len);
    memset(text, 'Q', sizeof text);
    write_file(path, text, SECRET_MAX, 0600);
    CHECK(secret_read_file(path, &k, err, sizeof err) == 0 && k.len == SECRET_MAX, "%d bytes: %s", SECRET_MAX, err);

    write_file(path, text, 31, 0600);
    expect_file_refused("31 bytes", path, "holds 31 bytes: a secret has at least 32");
    memcpy(text + 31, "\n", 1);
    write_file(path, text, 32, 0600);
    expect_file_refused("31 bytes and a newline", path, "holds 31 bytes");
    memset(text, 'Q', sizeof text);
    write_file(path, text, SECRET_MAX + 1, 0600);
    expect_file_refused("1025 bytes", path, "longer than 1024 bytes");
    write_file(path, text, 0, 0600);
    expect_file_refused("empty", path, "holds 0 bytes");
    const mode_t open_modes[] = {0644, 0640, 0604, 0620, 0602, 0660};
    for (size_t i = 0; i < sizeof open_modes / sizeof *open_modes; i++) {
        write_file(path, text, 32, open_modes[i]);
        char why[64];
        snprintf(why, sizeof why, "by its group or others (mode %04o)", (unsigned)open_modes[i]);
        expect_file_refused("group or others' permission", path, why);
    }
    unlink(path);
    expect_file_refused("missing", path, "No such file");
    expect_file_refused("a folder", g_dir, "not a regular file");
    CHECK(mkfifo(path, 0600) == 0, "mkfifo %s", path);
    expect_file_refused("a FIFO (opened without waiting for a writer)", path, "not a regular file");
    unlink(path);
}

static void test_secret_created(void) {
    char dir[128], path[160], err[512] = "";
    snprintf(dir, sizeof dir, "%s/data", g_dir);
    CHECK(mkdir(dir, 0700) == 0, "mkdir %s", dir);
    secret_key a, b;
    bool created = false;
    CHECK(secret_load_or_create(dir, &a, &created, err, sizeof err) == 0 && created && a.len == SECRET_NEW,
          "made at first start: %s (len %zu)", err, a.len);
    snprintf(path, sizeof path, "%s/%s", dir, SECRET_FILE);
    struct stat st;
    CHECK(stat(path, &st) == 0 && (st.st_mode & 07777) == 0600 && st.st_size == SECRET_NEW, "mode %04o, %lld bytes",
          (unsigned)(st.st_mode & 07777), (long long)st.st_size);
    CHECK(secret_load_or_create(dir, &b, &created, err, sizeof err) == 0 && !created && b.len == a.len &&
              !memcmp(a.bytes, b.bytes, a.len),
          "read back at the next start: %s", err);
    /* another folder: another secret (32 random bytes) */
    char dir2[128];
    snprintf(dir2, sizeof dir2, "%s/data2", g_dir);
    mkdir(dir2, 0700);
    CHECK(secret_load_or_create(dir2, &b, &created, err, sizeof err) == 0 && created && memcmp(a.bytes, b.bytes, 32),
          "a second folder's secret differs: %s", err);
    /* every new secret reads back whole: 1,500 of them (a new secret's last byte is '\n' once in 256
     * draws, which the reading would take for a newline were it not drawn again) */
    int whole = 0;
    for (int i = 0; i < 1500; i++) {
        char p2[192];
        snprintf(p2, sizeof p2, "%s/%s", dir2, SECRET_FILE);
        unlink(p2);
        whole += secret_load_or_create(dir2, &b, &created, err, sizeof err) == 0 && created && b.len == SECRET_NEW;
    }
    CHECK(whole == 1500, "%d of 1500 new secrets read back whole: %s", whole, err);
    /* a secret file others may read is refused, not replaced */
    chmod(path, 0644);
    CHECK(secret_load_or_create(dir, &b, &created, err, sizeof err) == -1 && !created && strstr(err, "mode 0644"),
          "an open secret.key: %s", err);
    CHECK(stat(path, &st) == 0 && st.st_size == SECRET_NEW, "left as it was");
    /* a missing folder */
    char nodir[160];
    snprintf(nodir, sizeof nodir, "%s/none", g_dir);
    CHECK(secret_load_or_create(nodir, &b, &created, err, sizeof err) == -1 && strstr(err, "No such file"),
          "a missing folder: %s", err);
    /* a symbolic link named secret.key is not followed to be written */
    char dir3[128], target[160], link3[192];
    snprintf(dir3, sizeof dir3, "%s/data3", g_dir);
    mkdir(dir3, 0700);
    snprintf(target, sizeof target, "%s/elsewhere", g_dir);
    snprintf(link3, sizeof link3, "%s/%s", dir3, SECRET_FILE);
    CHECK(symlink(target, link3) == 0, "symlink");
    CHECK(secret_load_or_create(dir3, &b, &created, err, sizeof err) == -1 && !created, "a dangling link: %s", err);
    CHECK(access(target, F_OK) != 0, "nothing written through the link");
    unlink(link3);
    rmdir(dir3);
    unlink(path);
    rmdir(dir);
    snprintf(path, sizeof path, "%s/%s", dir2, SECRET_FILE);
    unlink(path);
    rmdir(dir2);
}

int main(int argc, char **argv) {
    keys_init();
    snprintf(g_dir, sizeof g_dir, "/tmp/test-invite-XXXXXX");
    if (!mkdtemp(g_dir)) {
        perror("mkdtemp");
        return 1;
    }
    static const tl_test tests[] = {
        {"round_trip", test_round_trip},
        {"hand_made_accepted", test_hand_made_accepted},
        {"refused_algorithms", test_refused_algorithms},
        {"refused_signatures", test_refused_signatures},
        {"refused_claims", test_refused_claims},
        {"refused_times", test_refused_times},
        {"refused_shapes", test_refused_shapes},
        {"pyjwt", test_pyjwt},
        {"secret_file", test_secret_file},
        {"secret_created", test_secret_created},
    };
    int rc = tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
    rmdir(g_dir);
    return rc;
}
