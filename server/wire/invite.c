/* invite.c - signing and checking a room's invite tokens (see invite.h).
 *
 * invite_verify in order: the token's size and alphabet (three base64url
 * parts, no padding); the header and the claims, decoded here (strict
 * base64url, no NUL, cJSON) and checked field by field; the signature's
 * length; libjwt's jwt_decode with the secret (the signature); the algorithm
 * libjwt used and the claims as libjwt (jansson) reads them, which must be
 * what was checked (no two parsers reading one token two ways); the room; and
 * the times.  libjwt never sees a token this file has not read first: its
 * 1.10 decoder takes the algorithm from the header (an HS512 token signed
 * with the secret verifies there) and sizes stack buffers by the token. */
#include "invite.h"
#include "refusal.h"
#include "room_name.h"

#include <cJSON.h>
#include <jwt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HS256_SIG_CHARS 43            /* 32 bytes in base64url without padding */
#define CLAIM_TIME_MAX 253402300799LL /* 9999-12-31T23:59:59Z */
#define PART_MAX (INVITE_MAX_TOKEN / 4 * 3 + 3)

static int b64url_value(unsigned char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '-') return 62;
    if (c == '_') return 63;
    return -1;
}

/* Strict base64url without padding (RFC 4648 5): only its alphabet, no
 * length of 1 mod 4, the unused bits of the last character zero (one text
 * per byte string).  The byte count, or -1. */
static long b64url_decode(const char *s, size_t n, unsigned char *out, size_t cap) {
    if (n % 4 == 1 || n / 4 * 3 + 2 > cap) return -1;
    size_t o = 0;
    unsigned acc = 0;
    int bits = 0;
    for (size_t i = 0; i < n; i++) {
        int v = b64url_value((unsigned char)s[i]);
        if (v < 0) return -1;
        acc = (acc << 6) | (unsigned)v;
        bits += 6;
        if (bits >= 8) {
            bits -= 8;
            out[o++] = (unsigned char)(acc >> bits);
            acc &= (1u << bits) - 1;
        }
    }
    if (acc) return -1; /* non-zero unused bits */
    return (long)o;
}

/* A part of the token as JSON: an object, or NULL with err. */
static cJSON *part_json(const char *s, size_t n, const char *what, char *err, size_t errlen) {
    unsigned char buf[PART_MAX + 1];
    long len = b64url_decode(s, n, buf, sizeof buf - 1);
    if (len < 0) {
        wire_refuse(err, errlen, "the invite's %s is not base64url", what);
        return NULL;
    }
    if (memchr(buf, 0, (size_t)len)) {
        wire_refuse(err, errlen, "the invite's %s holds a NUL byte", what);
        return NULL;
    }
    buf[len] = 0;
    cJSON *j = cJSON_ParseWithLengthOpts((const char *)buf, (size_t)len + 1, NULL, true);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        wire_refuse(err, errlen, "the invite's %s is not a JSON object", what);
        return NULL;
    }
    return j;
}

/* A printable excerpt of an untrusted string, for an error. */
static const char *excerpt(const char *s, char *buf, size_t cap) {
    size_t o = 0;
    for (; s && *s && o + 1 < cap; s++) buf[o++] = (*s > 0x20 && *s < 0x7f && *s != '\'') ? *s : '?';
    buf[o] = 0;
    return buf;
}

/* The header: {"alg": "HS256"} and optionally "typ": "JWT", nothing else. */
static int check_header(const char *s, size_t n, char *err, size_t errlen) {
    cJSON *h = part_json(s, n, "header", err, errlen);
    if (!h) return -1;
    int rc = 0, algs = 0, typs = 0;
    char ex[24];
    for (const cJSON *e = h->child; e && !rc; e = e->next) {
        const char *k = e->string ? e->string : "";
        if (!strcmp(k, "alg")) {
            algs++;
            if (!cJSON_IsString(e))
                rc = wire_refuse(err, errlen, "the invite's header 'alg' is not a string: only HS256 is accepted");
            else if (strcmp(e->valuestring, "HS256"))
                rc = wire_refuse(err, errlen, "the invite is signed with '%s': only HS256 is accepted",
                                 excerpt(e->valuestring, ex, sizeof ex));
        } else if (!strcmp(k, "typ")) {
            typs++;
            if (!cJSON_IsString(e) || strcmp(e->valuestring, "JWT"))
                rc = wire_refuse(err, errlen, "the invite's header 'typ' must be \"JWT\"");
        } else {
            rc = wire_refuse(err, errlen, "the invite's header has the field '%s': only 'alg' and 'typ' are accepted",
                             excerpt(k, ex, sizeof ex));
        }
    }
    if (!rc && (algs != 1 || typs > 1))
        rc = wire_refuse(err, errlen, "the invite's header must name 'alg' once (HS256)%s",
                         typs > 1 ? ", 'typ' at most once" : "");
    cJSON_Delete(h);
    return rc;
}

typedef struct claims {
    char room[ROOM_NAME_CAP];
    role r;
    long long exp, iat;
} claims;

static const char *const claim_names[4] = {"room", "role", "exp", "iat"};

/* One claim's value into c (index i of claim_names). */
static int read_claim(int i, const cJSON *e, claims *c, char *err, size_t errlen) {
    char why[160];
    if (i <= 1 && !cJSON_IsString(e))
        return wire_refuse(err, errlen, "the invite's '%s' must be a string", claim_names[i]);
    if (i == 0) {
        if (!room_name_ok(e->valuestring, strlen(e->valuestring), why, sizeof why))
            return wire_refuse(err, errlen, "the invite's 'room': %s", why);
        snprintf(c->room, sizeof c->room, "%s", e->valuestring);
        return 0;
    }
    if (i == 1) {
        char ex[24];
        if (role_parse(e->valuestring, strlen(e->valuestring), &c->r) || c->r == ROLE_ADMIN)
            return wire_refuse(err, errlen, "the invite's 'role' '%s' is not one of viewer, player, editor, owner",
                               excerpt(e->valuestring, ex, sizeof ex));
        return 0;
    }
    double v = cJSON_IsNumber(e) ? e->valuedouble : -1;
    /* the range first: only a double within it converts to long long (1e999 is inf, NaN compares false) */
    if (!(v >= 0 && v <= (double)CLAIM_TIME_MAX) || v != (double)(long long)v)
        return wire_refuse(err, errlen, "the invite's '%s' must be an integer number of seconds (0..%lld)",
                           claim_names[i], CLAIM_TIME_MAX);
    *(i == 2 ? &c->exp : &c->iat) = (long long)v;
    return 0;
}

/* The claims: exactly room, role, exp and iat, each once and of its type. */
static int check_claims(const char *s, size_t n, claims *c, char *err, size_t errlen) {
    cJSON *p = part_json(s, n, "claims", err, errlen);
    if (!p) return -1;
    int seen[4] = {0}, rc = 0;
    char ex[24];
    for (const cJSON *e = p->child; e && !rc; e = e->next) {
        const char *k = e->string ? e->string : "";
        int i = 0;
        while (i < 4 && strcmp(k, claim_names[i])) i++;
        if (i == 4)
            rc = wire_refuse(err, errlen, "the invite has the claim '%s': only room, role, exp and iat are accepted",
                             excerpt(k, ex, sizeof ex));
        else if (seen[i]++)
            rc = wire_refuse(err, errlen, "the invite's claim '%s' is given twice", k);
        else
            rc = read_claim(i, e, c, err, errlen);
    }
    for (int i = 0; i < 4 && !rc; i++)
        if (!seen[i]) rc = wire_refuse(err, errlen, "the invite has no '%s' claim", claim_names[i]);
    cJSON_Delete(p);
    return rc;
}

/* libjwt's reading of an integer claim: jansson's own text of it, which
 * must be digits (a real such as 1e9 or 5.0 is not an integer), equal to v. */
static bool jwt_int_is(jwt_t *j, const char *name, long long v) {
    char *t = jwt_get_grants_json(j, name);
    bool ok = t && *t && strlen(t) <= 19;
    for (const char *q = t; ok && *q; q++) ok = *q >= '0' && *q <= '9';
    ok = ok && strtoll(t, NULL, 10) == v && jwt_get_grant_int(j, name) == v;
    free(t);
    return ok;
}

/* After libjwt: the algorithm it verified with, and the claims as it reads
 * them, are what check_header and check_claims accepted. */
static int check_as_libjwt(jwt_t *j, const claims *c, char *err, size_t errlen) {
    const char *alg = jwt_get_header(j, "alg");
    if (jwt_get_alg(j) != JWT_ALG_HS256 || !alg || strcmp(alg, "HS256"))
        return wire_refuse(err, errlen, "the invite is not signed with HS256");
    const char *room = jwt_get_grant(j, "room"), *rname = jwt_get_grant(j, "role");
    if (!room || strcmp(room, c->room) || !rname || strcmp(rname, role_name(c->r)) || !jwt_int_is(j, "exp", c->exp) ||
        !jwt_int_is(j, "iat", c->iat))
        return wire_refuse(err, errlen,
                           "the invite's claims are not plain: 'exp' and 'iat' must be integers, 'room' and "
                           "'role' plain strings");
    return 0;
}

/* The room, then the times. */
static int check_validity(const claims *c, const char *room_expected, int64_t now, char *err, size_t errlen) {
    if (strcmp(c->room, room_expected))
        return wire_refuse(err, errlen, "the invite is for the room '%s', not '%.31s'", c->room, room_expected);
    if (c->exp <= c->iat)
        return wire_refuse(err, errlen, "the invite's 'exp' (%lld) is not after its 'iat' (%lld)", c->exp, c->iat);
    if (c->exp - c->iat > INVITE_MAX_TTL_S)
        return wire_refuse(err, errlen, "the invite lives %lld s: at most %ld s", c->exp - c->iat, INVITE_MAX_TTL_S);
    if (c->iat > now + INVITE_SKEW_S)
        return wire_refuse(err, errlen, "the invite is not valid yet (issued at %lld, now %lld)", c->iat,
                           (long long)now);
    if (c->exp <= now)
        return wire_refuse(err, errlen, "the invite has expired (at %lld, now %lld)", c->exp, (long long)now);
    return 0;
}

/* Its three parts: lengths of header and claims, and where the signature
 * starts.  Only the base64url alphabet and two dots. */
static int split(const char *t, size_t len, size_t *hl, size_t *pl, size_t *so, char *err, size_t errlen) {
    size_t dots[2], nd = 0;
    for (size_t i = 0; i < len; i++) {
        if (t[i] == '.') {
            if (nd == 2) return wire_refuse(err, errlen, "the invite is not a JWT: more than three parts");
            dots[nd++] = i;
        } else if (b64url_value((unsigned char)t[i]) < 0) {
            return wire_refuse(err, errlen, "the invite is not a JWT: byte %zu is not base64url", i + 1);
        }
    }
    if (nd != 2) return wire_refuse(err, errlen, "the invite is not a JWT: three base64url parts joined by '.'");
    *hl = dots[0];
    *pl = dots[1] - dots[0] - 1;
    *so = dots[1] + 1;
    return 0;
}

int invite_verify(const secret_key *key, const char *token, size_t len, const char *room_expected, int64_t now,
                  role *out, char *err, size_t errlen) {
    if (len > INVITE_MAX_TOKEN) return wire_refuse(err, errlen, "the invite is longer than %d bytes", INVITE_MAX_TOKEN);
    if (!len) return wire_refuse(err, errlen, "the invite is empty");
    size_t hl = 0, pl = 0, so = 0;
    if (split(token, len, &hl, &pl, &so, err, errlen) || check_header(token, hl, err, errlen)) return -1;
    if (len - so != HS256_SIG_CHARS)
        return wire_refuse(err, errlen, "the invite's signature is %zu characters: an HS256 signature is %d", len - so,
                           HS256_SIG_CHARS);
    claims c;
    memset(&c, 0, sizeof c);
    if (check_claims(token + hl + 1, pl, &c, err, errlen)) return -1;
    char tok[INVITE_MAX_TOKEN + 1];
    memcpy(tok, token, len);
    tok[len] = 0;
    jwt_t *j = NULL;
    if (key->len < SECRET_MIN || jwt_decode(&j, tok, key->bytes, (int)key->len) || !j) {
        jwt_free(j);
        return wire_refuse(err, errlen, "the invite's signature does not verify: it was not made with this room's key");
    }
    int rc = check_as_libjwt(j, &c, err, errlen);
    jwt_free(j);
    if (rc || check_validity(&c, room_expected, now, err, errlen)) return -1;
    *out = c.r;
    return 0;
}

void invite_room_key(const secret_key *server, const char *room, unsigned gen, secret_key *out) {
    size_t k = server->len < SECRET_MAX - 48 ? server->len : SECRET_MAX - 48;
    memcpy(out->bytes, server->bytes, k);
    int w = snprintf((char *)out->bytes + k, SECRET_MAX - k, "\n%.31s\n%u", room, gen);
    out->len = k + (size_t)(w > 0 ? w : 0);
}

int invite_sign(const secret_key *key, const char *room, role r, int64_t ttl_s, int64_t now, char *out, size_t cap,
                char *err, size_t errlen) {
    char why[160];
    if (!room_name_ok(room, strlen(room), why, sizeof why)) return wire_refuse(err, errlen, "invite: %s", why);
    if (r < ROLE_VIEWER || r > ROLE_OWNER)
        return wire_refuse(err, errlen, "invite: the role must be viewer, player, editor or owner");
    if (ttl_s < 1 || ttl_s > INVITE_MAX_TTL_S)
        return wire_refuse(err, errlen, "invite: 'ttl_s' must be 1..%ld seconds", INVITE_MAX_TTL_S);
    if (now < 0 || now + ttl_s > CLAIM_TIME_MAX) return wire_refuse(err, errlen, "invite: the clock is out of range");
    if (key->len < SECRET_MIN || key->len > SECRET_MAX)
        return wire_refuse(err, errlen, "invite: the key is not a secret");
    jwt_t *j = NULL;
    char *t = NULL;
    if (!jwt_new(&j) && !jwt_set_alg(j, JWT_ALG_HS256, key->bytes, (int)key->len) && !jwt_add_grant(j, "room", room) &&
        !jwt_add_grant(j, "role", role_name(r)) && !jwt_add_grant_int(j, "exp", (long)(now + ttl_s)) &&
        !jwt_add_grant_int(j, "iat", (long)now))
        t = jwt_encode_str(j);
    jwt_free(j);
    int rc = 0;
    if (!t)
        rc = wire_refuse(err, errlen, "invite: libjwt could not sign the token");
    else if (strlen(t) >= cap)
        rc = wire_refuse(err, errlen, "invite: the token (%zu bytes) does not fit %zu", strlen(t), cap);
    else
        memcpy(out, t, strlen(t) + 1);
    free(t);
    return rc;
}
