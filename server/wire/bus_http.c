/* bus_http.c - a REST request over the bus and its answer (bus_http.h):
 * tags HREQ and HANS, format version 1, little-endian, every length
 * bounded before it is read. */
#include "bus_http.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "refusal.h"
#include "rest_route.h"

enum { VERSION = 1 };

static void w32(wbuf *b, uint32_t v, bool *oom) {
    uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    if (wbuf_append(b, x, 4)) *oom = true;
}

static void w_bytes(wbuf *b, const void *p, size_t n, bool *oom) {
    w32(b, (uint32_t)n, oom);
    if (n && wbuf_append(b, p, n)) *oom = true;
}

static msg_buf *done(wbuf *b, bool oom) {
    if (oom) {
        wbuf_free(b);
        return NULL;
    }
    return wbuf_finish(b);
}

typedef struct rd {
    const uint8_t *p;
    size_t n, off;
    bool bad;
} rd;

static uint32_t r32(rd *r) {
    if (r->bad || r->n - r->off < 4) {
        r->bad = true;
        return 0;
    }
    const uint8_t *b = r->p + r->off;
    r->off += 4;
    return (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24;
}

/* A length (at most max) and its bytes: NULL when truncated or too long
 * (r->bad), *len set. */
static const uint8_t *r_bytes(rd *r, uint32_t max, size_t *len) {
    uint32_t l = r32(r);
    if (r->bad || l > max || l > r->n - r->off) {
        r->bad = true;
        *len = 0;
        return NULL;
    }
    const uint8_t *at = r->p + r->off;
    r->off += l;
    *len = l;
    return at;
}

static int open_msg(rd *r, const uint8_t *p, size_t n, const char tag[4], char *err, size_t errlen) {
    *r = (rd){p, n, 0, false};
    if (n < 8 || memcmp(p, tag, 4)) return wire_refuse(err, errlen, "not a %.4s bus message", tag);
    r->off = 4;
    uint32_t v = r32(r);
    if (v != VERSION)
        return wire_refuse(err, errlen, "%.4s bus message of version %u (this node reads %d)", tag, v, VERSION);
    return 0;
}

msg_buf *bus_encode_http_req(const bus_http_req *q) {
    wbuf b;
    bool oom = false;
    size_t pl = strnlen(q->path, BUS_HTTP_PATH - 1);
    wbuf_init(&b, 32 + pl + q->cred_len + q->body_len, 0);
    if (wbuf_append(&b, "HREQ", 4)) oom = true;
    w32(&b, VERSION, &oom);
    w32(&b, (uint32_t)q->method, &oom);
    w_bytes(&b, q->path, pl, &oom);
    w_bytes(&b, q->cred, q->cred_len, &oom);
    w_bytes(&b, q->body, q->body_len, &oom);
    return done(&b, oom);
}

/* The room a path below /api names: "" for /rooms; 0, or -1 with why. */
static int path_room(const char *path, char room[ROOM_NAME_CAP], char *err, size_t errlen) {
    room[0] = 0;
    if (strncmp(path, "/rooms", 6) || (path[6] && path[6] != '/'))
        return wire_refuse(err, errlen, "REST over the bus: a path under /rooms, not '%.40s'", path);
    if (!path[6]) return 0;
    const char *name = path + 7, *end = strchr(name, '/');
    size_t nl = end ? (size_t)(end - name) : strlen(name);
    char why[160];
    if (!room_name_ok(name, nl, why, sizeof why)) return wire_refuse(err, errlen, "REST over the bus: %s", why);
    memcpy(room, name, nl);
    room[nl] = 0;
    return 0;
}

int bus_decode_http_req(const uint8_t *p, size_t n, bus_http_req *q, char *err, size_t errlen) {
    memset(q, 0, sizeof q[0]);
    rd r;
    if (open_msg(&r, p, n, "HREQ", err, errlen)) return -1;
    uint32_t m = r32(&r);
    size_t pl;
    const uint8_t *path = r_bytes(&r, BUS_HTTP_PATH - 1, &pl);
    q->cred = r_bytes(&r, BUS_HTTP_CRED, &q->cred_len);
    q->body = (const char *)r_bytes(&r, BUS_HTTP_BODY, &q->body_len);
    if (r.bad) return wire_refuse(err, errlen, "REST over the bus: truncated, or a part past its bound");
    if (r.off != r.n) return wire_refuse(err, errlen, "REST over the bus: %zu trailing bytes", r.n - r.off);
    if (m != HM_GET && m != HM_POST && m != HM_PATCH && m != HM_DELETE)
        return wire_refuse(err, errlen, "REST over the bus: GET, POST, PATCH or DELETE, not method %u", m);
    if (m == HM_GET && q->body_len) return wire_refuse(err, errlen, "REST over the bus: a GET with a body");
    for (size_t i = 0; i < pl; i++)
        if (path[i] < 0x21 || path[i] > 0x7e)
            return wire_refuse(err, errlen, "REST over the bus: a byte of the path outside printable ASCII");
    if (q->cred_len && memchr(q->cred, 0, q->cred_len))
        return wire_refuse(err, errlen, "REST over the bus: a NUL in its credential");
    memcpy(q->path, path, pl);
    q->path[pl] = 0;
    q->method = (int)m;
    if (path_room(q->path, q->room, err, errlen)) return -1;
    if (!q->room[0] && m != HM_POST)
        return wire_refuse(err, errlen, "REST over the bus: /rooms takes POST (each server lists the rooms itself)");
    if (!q->cred_len) q->cred = NULL;
    if (!q->body_len) q->body = NULL;
    return 0;
}

msg_buf *bus_encode_http_answer(const bus_http_answer *a) {
    wbuf b;
    bool oom = false;
    wbuf_init(&b, 24 + a->body_len, 0);
    if (wbuf_append(&b, "HANS", 4)) oom = true;
    w32(&b, VERSION, &oom);
    w32(&b, (uint32_t)a->status, &oom);
    w32(&b, (uint32_t)a->retry_after, &oom);
    w_bytes(&b, a->body, a->body_len, &oom);
    return done(&b, oom);
}

int bus_decode_http_answer(const uint8_t *p, size_t n, bus_http_answer *a, char *err, size_t errlen) {
    memset(a, 0, sizeof a[0]);
    rd r;
    if (open_msg(&r, p, n, "HANS", err, errlen)) return -1;
    uint32_t st = r32(&r), ra = r32(&r);
    a->body = (const char *)r_bytes(&r, BUS_HTTP_ANSWER, &a->body_len);
    if (r.bad)
        return wire_refuse(err, errlen, "REST answer over the bus: truncated, or its body past %u bytes",
                           BUS_HTTP_ANSWER);
    if (r.off != r.n) return wire_refuse(err, errlen, "REST answer over the bus: %zu trailing bytes", r.n - r.off);
    if (st < 200 || st > 599) return wire_refuse(err, errlen, "REST answer over the bus: status %u", st);
    if (ra > BUS_HTTP_RETRY_MAX) return wire_refuse(err, errlen, "REST answer over the bus: Retry-After %u s", ra);
    cJSON *j = a->body_len ? cJSON_ParseWithLength(a->body, a->body_len) : NULL;
    bool obj = cJSON_IsObject(j);
    cJSON_Delete(j);
    if (!obj) return wire_refuse(err, errlen, "REST answer over the bus: its body is not a JSON object");
    a->status = (int)st;
    a->retry_after = (int)ra;
    return 0;
}
