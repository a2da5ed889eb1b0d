/* bus_codec.c - the bus messages (see bus_codec.h). */
#include "bus_codec.h"
#include "refusal.h"

#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "command.h"
#include "obstacle_mesh.h"

enum { VERSION = 3 };

/* ---- Bytes -------------------------------------------------------------------- */

typedef struct wr {
    wbuf b;
    bool oom;
} wr;

static void w_bytes(wr *w, const void *p, size_t n) {
    uint8_t *o = wbuf_grow(&w->b, n);
    if (!o) {
        w->oom = true;
        return;
    }
    memcpy(o, p, n);
}

static void w32(wr *w, uint32_t v) {
    uint8_t b[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
    w_bytes(w, b, 4);
}

static void w64(wr *w, uint64_t v) {
    w32(w, (uint32_t)v);
    w32(w, (uint32_t)(v >> 32));
}

static void w_head(wr *w, const char tag[4], size_t cap) {
    wbuf_init(&w->b, cap, 0);
    w->oom = false;
    w_bytes(w, tag, 4);
    w32(w, VERSION);
}

static msg_buf *w_done(wr *w) {
    if (w->oom) {
        wbuf_free(&w->b);
        return NULL;
    }
    return wbuf_finish(&w->b);
}

typedef struct rd {
    const uint8_t *p;
    size_t n, off;
    bool bad;
} rd;

static const uint8_t *r_take(rd *r, size_t n) {
    if (r->bad || n > r->n - r->off) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *at = r->p + r->off;
    r->off += n;
    return at;
}

static uint32_t r32(rd *r) {
    const uint8_t *b = r_take(r, 4);
    return b ? (uint32_t)b[0] | (uint32_t)b[1] << 8 | (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24 : 0;
}

static uint64_t r64(rd *r) {
    uint64_t lo = r32(r);
    return lo | (uint64_t)r32(r) << 32;
}

/* Opens a message: its tag and version. */
static int r_head(rd *r, const uint8_t *p, size_t n, const char tag[4], char *err, size_t errlen) {
    *r = (rd){p, n, 0, false};
    if (n > BUS_MAX_MSG) return wire_refuse(err, errlen, "bus message of %zu bytes (limit %u)", n, BUS_MAX_MSG);
    const uint8_t *t = r_take(r, 4);
    if (!t || memcmp(t, tag, 4)) return wire_refuse(err, errlen, "not a %.4s bus message", tag);
    uint32_t v = r32(r);
    if (r->bad || v != VERSION)
        return wire_refuse(err, errlen, "%.4s bus message of version %u (this node reads %d)", tag, v, VERSION);
    return 0;
}

/* A room's name: its length, then its bytes. */
static void w_name(wr *w, const char *name) {
    size_t l = strnlen(name, ROOM_NAME_MAX + 1);
    w32(w, (uint32_t)l);
    w_bytes(w, name, l);
}

/* Reads a room's name into out (terminated): 0, or -1 (r->bad, or a name
 * that breaks the rule, with the reason). */
static int r_name(rd *r, char out[ROOM_NAME_CAP], char *err, size_t errlen) {
    uint32_t l = r32(r);
    if (r->bad) return -1;
    if (l > ROOM_NAME_MAX) {
        snprintf(err, errlen, "%s (a name of %u bytes)", ROOM_NAME_RULE, l);
        return -1;
    }
    const uint8_t *b = r_take(r, l);
    if (!b) return -1;
    if (!room_name_ok((const char *)b, l, err, errlen)) return -1;
    memcpy(out, b, l);
    out[l] = 0;
    return 0;
}

static int r_end(const rd *r, const char *what, char *err, size_t errlen) {
    if (r->bad) return wire_refuse(err, errlen, "%s: truncated", what);
    if (r->off != r->n) return wire_refuse(err, errlen, "%s: %zu trailing bytes", what, r->n - r->off);
    return 0;
}

/* ---- Framesets ---------------------------------------------------------------- */

/* Whether coding i goes: its tier in the mask. */
static bool coding_goes(const frameset *fs, int i, unsigned tiers) {
    int t = fs->coding[i].tier;
    return t >= 0 && t < 32 && (tiers >> t & 1u);
}

msg_buf *bus_encode_frameset(const frameset *fs, unsigned tiers) {
    /* a relay's clients take the tiers their links carry: those some relay's clients take */
    size_t cap = 64;
    uint32_t count = 0;
    for (int i = 0; i < fs->count; i++)
        if (coding_goes(fs, i, tiers)) cap += 16 + fs->coding[i].msg->len, count++;
    wr w;
    w_head(&w, "FSET", cap);
    w32(&w, fs->epoch);
    w32(&w, fs->seq);
    w64(&w, fs->tick);
    w32(&w, (uint32_t)fs->n);
    w32(&w, count);
    for (int i = 0; i < fs->count; i++) {
        if (!coding_goes(fs, i, tiers)) continue;
        w32(&w, (uint32_t)fs->coding[i].tier);
        w32(&w, fs->coding[i].base);
        w32(&w, fs->coding[i].prev);
        w32(&w, (uint32_t)fs->coding[i].msg->len);
        w_bytes(&w, fs->coding[i].msg->data, fs->coding[i].msg->len);
    }
    return w_done(&w);
}

int bus_decode_frameset(const uint8_t *p, size_t n, frameset *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    rd r;
    if (r_head(&r, p, n, "FSET", err, errlen)) return -1;
    out->epoch = r32(&r);
    out->seq = r32(&r);
    out->tick = r64(&r);
    uint32_t np = r32(&r), count = r32(&r);
    if (r.bad || np > (1u << 24) || count > FRAMESET_MAX) return wire_refuse(err, errlen, "frameset: bad counts");
    out->n = (int)np;
    for (uint32_t i = 0; i < count; i++) {
        uint32_t tier = r32(&r), base = r32(&r), prev = r32(&r), len = r32(&r);
        if (!r.bad && tier >= FRAME_TIERS) {
            frameset_unref(out);
            return wire_refuse(err, errlen, "frameset: a coding of tier %u (there are %d)", tier, FRAME_TIERS);
        }
        const uint8_t *b = r_take(&r, len);
        if (!b) break;
        msg_buf *m = msg_buf_from_bytes(b, len);
        if (!m) {
            frameset_unref(out);
            return wire_refuse(err, errlen, "frameset: out of memory");
        }
        out->coding[out->count++] = (frame_coding){.base = base, .prev = prev, .tier = (int)tier, .msg = m};
    }
    if (r_end(&r, "frameset", err, errlen)) {
        frameset_unref(out);
        return -1;
    }
    return 0;
}

/* ---- Wants, replies, forwards ------------------------------------------------- */

static uint32_t wants_flags(bool stride2, bool stride4, bool bridge) {
    return (uint32_t)stride2 | (uint32_t)stride4 << 1 | (uint32_t)bridge << 2;
}

/* A room's wants: tier 0's clients (all the relay's), keyframe requests and
 * flags, then each coarser tier's. */
msg_buf *bus_encode_wants(uint32_t relay, const bus_room_wants *rw, int k) {
    wr o;
    w_head(&o, "WANT", 32 + (size_t)k * (12 * FRAME_TIERS + 4 + ROOM_NAME_CAP));
    w32(&o, relay);
    w32(&o, (uint32_t)k);
    for (int i = 0; i < k; i++) {
        const frame_wants *w = &rw[i].w;
        w_name(&o, rw[i].room);
        w32(&o, (uint32_t)w->clients);
        w32(&o, w->key_requests);
        w32(&o, wants_flags(w->stride2, w->stride4, w->bridge));
        for (int t = 1; t < FRAME_TIERS; t++) {
            const frame_tier_wants *c = &w->coarse[t - 1];
            w32(&o, (uint32_t)c->clients);
            w32(&o, c->key_requests);
            w32(&o, wants_flags(c->stride2, c->stride4, c->bridge));
        }
    }
    return w_done(&o);
}

int bus_decode_wants(const uint8_t *p, size_t n, uint32_t *relay, bus_room_wants *out, int cap, int *k, char *err,
                     size_t errlen) {
    rd r;
    *k = 0;
    if (r_head(&r, p, n, "WANT", err, errlen)) return -1;
    *relay = r32(&r);
    uint32_t count = r32(&r);
    if (r.bad || count > (uint32_t)cap || count > BUS_MAX_ROOMS)
        return wire_refuse(err, errlen, "wants: %u rooms (at most %d)", count,
                           cap < BUS_MAX_ROOMS ? cap : BUS_MAX_ROOMS);
    for (uint32_t i = 0; i < count; i++) {
        char why[160] = "";
        if (r_name(&r, out[i].room, why, sizeof why))
            return r.bad ? wire_refuse(err, errlen, "wants: truncated") : wire_refuse(err, errlen, "wants: %s", why);
        uint32_t clients = r32(&r), keys = r32(&r), flags = r32(&r);
        if (clients > 1000000) return wire_refuse(err, errlen, "wants: %u clients out of range", clients);
        out[i].w = (frame_wants){.clients = (int)clients,
                                 .key_requests = keys,
                                 .stride2 = flags & 1,
                                 .stride4 = (flags >> 1) & 1,
                                 .bridge = (flags >> 2) & 1};
        for (int t = 1; t < FRAME_TIERS; t++) {
            uint32_t tc = r32(&r), tk = r32(&r), tf = r32(&r);
            /* a coarser tier's clients are among the room's */
            if (tc > clients)
                return wire_refuse(err, errlen, "wants: %u clients of tier %d, of %u in all", tc, t, clients);
            out[i].w.coarse[t - 1] = (frame_tier_wants){.clients = (int)tc,
                                                        .key_requests = tk,
                                                        .stride2 = tf & 1,
                                                        .stride4 = (tf >> 1) & 1,
                                                        .bridge = (tf >> 2) & 1};
        }
    }
    if (r_end(&r, "wants", err, errlen)) return -1;
    if (*relay < 1 || *relay > CMD_RELAY_MAX) return wire_refuse(err, errlen, "wants: relay %u out of range", *relay);
    *k = (int)count;
    return 0;
}

msg_buf *bus_encode_reply(const cmd_reply *r, const char *room) {
    wr w;
    w_head(&w, "RPLY", 128 + sizeof r->error + sizeof r->name + ROOM_NAME_CAP);
    w32(&w, r->client);
    w32(&w, r->rid);
    w32(&w, (uint32_t)r->kind);
    w32(&w, (uint32_t)r->ok | (uint32_t)r->duplicate << 1 | (uint32_t)cmd_reply_code(r) << 8);
    w64(&w, r->tick);
    w64(&w, (uint64_t)r->value);
    w_bytes(&w, r->error, sizeof r->error);
    w_bytes(&w, r->name, sizeof r->name);
    w_name(&w, room);
    return w_done(&w);
}

int bus_decode_reply(const uint8_t *p, size_t n, cmd_reply *out, char room[ROOM_NAME_CAP], char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    rd r;
    if (r_head(&r, p, n, "RPLY", err, errlen)) return -1;
    out->client = r32(&r);
    out->rid = r32(&r);
    uint32_t kind = r32(&r), flags = r32(&r), ok = flags & 0xff, code = flags >> 8;
    out->tick = r64(&r);
    out->value = (int64_t)r64(&r);
    const uint8_t *e = r_take(&r, sizeof out->error), *nm = r_take(&r, sizeof out->name);
    char why[160] = "";
    if (r_name(&r, room, why, sizeof why) && !r.bad) return wire_refuse(err, errlen, "reply: %s", why);
    if (r_end(&r, "reply", err, errlen)) return -1;
    if (kind >= CMD_KIND_COUNT) return wire_refuse(err, errlen, "reply: unknown command kind %u", kind);
    if (ok > 3) return wire_refuse(err, errlen, "reply: unknown flags %u", ok);
    /* (a refusal without a code, 0, reads as internal: cmd_reply_code) */
    if (code >= RC_COUNT || ((ok & 1) && code != RC_OK))
        return wire_refuse(err, errlen, "reply: code %u outside the table, or on an ok reply", code);
    out->kind = (cmd_kind)kind;
    out->ok = ok & 1;
    out->code = (reply_code)code;
    out->duplicate = (ok >> 1) & 1;
    memcpy(out->error, e, sizeof out->error);
    out->error[sizeof out->error - 1] = 0;
    memcpy(out->name, nm, sizeof out->name);
    out->name[sizeof out->name - 1] = 0;
    return 0;
}

msg_buf *bus_encode_forward(const bus_forward *f) {
    wr w;
    w_head(&w, "FWRD", 48 + ROOM_NAME_CAP + f->cred_len + f->len);
    w32(&w, f->relay);
    w32(&w, f->client);
    w32(&w, (uint32_t)f->kind);
    w_name(&w, f->room);
    w32(&w, (uint32_t)f->cred_len);
    if (f->cred_len) w_bytes(&w, f->cred, f->cred_len);
    w32(&w, (uint32_t)f->len);
    if (f->len) w_bytes(&w, f->bytes, f->len);
    return w_done(&w);
}

int bus_decode_forward(const uint8_t *p, size_t n, bus_forward *f, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    rd r;
    if (r_head(&r, p, n, "FWRD", err, errlen)) return -1;
    f->relay = r32(&r);
    f->client = r32(&r);
    uint32_t k = r32(&r);
    char why[160] = "";
    if (r_name(&r, f->room, why, sizeof why) && !r.bad) return wire_refuse(err, errlen, "client message: %s", why);
    uint32_t cl = r32(&r);
    if (cl > BUS_MAX_CRED)
        return wire_refuse(err, errlen, "client message: a credential of %u bytes (at most %d)", cl, BUS_MAX_CRED);
    f->cred = r_take(&r, cl);
    f->cred_len = cl;
    uint32_t l = r32(&r);
    f->bytes = r_take(&r, l);
    f->len = l;
    if (r_end(&r, "client message", err, errlen)) return -1;
    if (k > BUS_FWD_AUTH) return wire_refuse(err, errlen, "client message: unknown kind %u", k);
    if (cl && memchr(f->cred, 0, cl)) return wire_refuse(err, errlen, "client message: a NUL in its credential");
    f->kind = (int)k;
    bool rest = k == BUS_FWD_REST;
    /* (a credential alone is a WebSocket client's or a REST request's: a relay checks both) */
    if (f->relay < 1 || f->relay > CMD_RELAY_MAX || cmd_client_relay(f->client) != f->relay ||
        (k != BUS_FWD_LEFT && k != BUS_FWD_AUTH && rest != ((f->client & CMD_REST_BIT) != 0)))
        return wire_refuse(err, errlen, "client message: client %u is not one of relay %u's", f->client, f->relay);
    return 0;
}

/* ---- Rooms ---------------------------------------------------------------------- */

msg_buf *bus_encode_rooms(const bus_room_entry *e, int k) {
    wr w;
    w_head(&w, "ROOM", 16 + (size_t)k * (8 + ROOM_NAME_CAP));
    w32(&w, (uint32_t)k);
    for (int i = 0; i < k; i++) {
        w_name(&w, e[i].name);
        w32(&w, (uint32_t)e[i].public_role);
    }
    return w_done(&w);
}

int bus_decode_rooms(const uint8_t *p, size_t n, bus_room_entry *out, int cap, int *k, char *err, size_t errlen) {
    rd r;
    *k = 0;
    if (r_head(&r, p, n, "ROOM", err, errlen)) return -1;
    uint32_t count = r32(&r);
    if (r.bad || count > (uint32_t)cap || count > BUS_MAX_ROOMS)
        return wire_refuse(err, errlen, "rooms: %u rooms (at most %d)", count,
                           cap < BUS_MAX_ROOMS ? cap : BUS_MAX_ROOMS);
    for (uint32_t i = 0; i < count; i++) {
        char why[160] = "";
        if (r_name(&r, out[i].name, why, sizeof why))
            return r.bad ? wire_refuse(err, errlen, "rooms: truncated") : wire_refuse(err, errlen, "rooms: %s", why);
        uint32_t pr = r32(&r);
        if (pr >= ROLE_COUNT) return wire_refuse(err, errlen, "rooms: '%s': unknown role %u", out[i].name, pr);
        out[i].public_role = (role)pr;
    }
    if (r_end(&r, "rooms", err, errlen)) return -1;
    *k = (int)count;
    return 0;
}

int bus_subject_relay(const char *subject, const char *base, uint32_t *relay, char *err, size_t errlen) {
    size_t bl = strlen(base);
    if (!subject || strncmp(subject, base, bl) || subject[bl] != '.')
        return wire_refuse(err, errlen, "subject '%.80s' is not %.80s.<relay>", subject ? subject : "", base);
    const char *d = subject + bl + 1;
    uint32_t v = 0;
    size_t i = 0;
    for (; d[i]; i++) {
        if (d[i] < '0' || d[i] > '9' || i >= 4 || (i == 0 && d[i] == '0'))
            return wire_refuse(err, errlen, "subject '%.80s': not a relay id", subject);
        v = v * 10 + (uint32_t)(d[i] - '0');
    }
    if (i == 0 || v < 1 || v > CMD_RELAY_MAX)
        return wire_refuse(err, errlen, "subject '%.80s': not a relay id", subject);
    *relay = v;
    return 0;
}

int bus_subject_room(const char *subject, const char *base, const char *leaf, char room[ROOM_NAME_CAP], char *err,
                     size_t errlen) {
    size_t bl = strlen(base), ll = strlen(leaf);
    if (!subject || strncmp(subject, base, bl) || subject[bl] != '.')
        return wire_refuse(err, errlen, "subject '%.80s' is not %.80s.<room>.%s", subject ? subject : "", base, leaf);
    const char *name = subject + bl + 1, *dot = strchr(name, '.');
    if (!dot || strcmp(dot + 1, leaf) || strlen(dot + 1) != ll)
        return wire_refuse(err, errlen, "subject '%.80s' is not %.80s.<room>.%s", subject, base, leaf);
    char why[160] = "";
    if (!room_name_ok(name, (size_t)(dot - name), why, sizeof why))
        return wire_refuse(err, errlen, "subject '%.80s': %s", subject, why);
    memcpy(room, name, (size_t)(dot - name));
    room[dot - name] = 0;
    return 0;
}

msg_buf *bus_pack_rest(int method, const char *path, const char *body, size_t body_len) {
    size_t pl = strlen(path);
    wr w;
    w_head(&w, "REST", 32 + pl + body_len);
    w32(&w, (uint32_t)method);
    w32(&w, (uint32_t)pl);
    w_bytes(&w, path, pl);
    w32(&w, (uint32_t)body_len);
    if (body_len) w_bytes(&w, body, body_len);
    return w_done(&w);
}

int bus_unpack_rest(const uint8_t *p, size_t n, int *method, char *path, size_t cap, const char **body,
                    size_t *body_len, char *err, size_t errlen) {
    rd r;
    if (r_head(&r, p, n, "REST", err, errlen)) return -1;
    uint32_t m = r32(&r), pl = r32(&r);
    const uint8_t *pp = r_take(&r, pl);
    uint32_t bl = r32(&r);
    const uint8_t *bb = r_take(&r, bl);
    if (r_end(&r, "REST request", err, errlen)) return -1;
    if (m > 16 || (size_t)pl + 1 > cap || memchr(pp, 0, pl))
        return wire_refuse(err, errlen, "REST request: bad method or path");
    *method = (int)m;
    memcpy(path, pp, pl);
    path[pl] = 0;
    *body = (const char *)bb;
    *body_len = bl;
    return 0;
}

/* ---- The world's description and the statistics --------------------------------- */

/* Both cross as their C layout (the sim node and its relays run the same
 * build: the size is checked), then every field that is not a plain
 * number is repaired: strings terminated, counts clamped, booleans read as
 * bytes, floats finite. */
static int pod(const uint8_t *p, size_t n, const char tag[4], void *out, size_t size, char *err, size_t errlen) {
    rd r;
    if (r_head(&r, p, n, tag, err, errlen)) return -1;
    uint32_t sz = r32(&r);
    const uint8_t *b = r_take(&r, size);
    if (sz != size || !b)
        return wire_refuse(err, errlen, "%.4s: %u bytes, this build's are %zu (run the same version)", tag, sz, size);
    if (r_end(&r, tag, err, errlen)) return -1;
    memcpy(out, b, size);
    return 0;
}

static msg_buf *pod_encode(const char tag[4], const void *v, size_t size) {
    wr w;
    w_head(&w, tag, 16 + size);
    w32(&w, (uint32_t)size);
    w_bytes(&w, v, size);
    return w_done(&w);
}

static void fix_bool(void *base, size_t off) {
    uint8_t *b = (uint8_t *)base + off;
    *b = *b != 0;
}

static void fix_str(char *s, size_t n) {
    s[n - 1] = 0;
}

static void fix_float(float *f) {
    if (!isfinite(*f)) *f = 0;
}

/* ---- Obstacles ----------------------------------------------------------------- */

/* The largest encoded mesh the core can give (obstacle_mesh.h). */
static size_t mesh_bytes_max(void) {
    return obstacle_mesh_size(FS_MESH_MAX_VERTICES, FS_MESH_MAX_TRIANGLES);
}

msg_buf *bus_encode_obstacles(const bus_obstacles *o) {
    const int count = o->count < FS_MAX_OBSTACLES ? o->count : FS_MAX_OBSTACLES;
    wr w;
    w_head(&w, "OBST", 64 + 16 * (size_t)count + o->list_len);
    w32(&w, (uint32_t)count);
    for (int i = 0; i < count; i++) w32(&w, o->id[i]), w64(&w, o->hash[i]), w32(&w, o->bytes[i]);
    w32(&w, (uint32_t)o->list_len);
    w_bytes(&w, o->list, o->list_len);
    return w_done(&w);
}

int bus_decode_obstacles(const uint8_t *p, size_t n, bus_obstacles *o, char *err, size_t errlen) {
    rd r;
    memset(o, 0, sizeof *o);
    if (r_head(&r, p, n, "OBST", err, errlen)) return -1;
    uint32_t count = r32(&r);
    if (r.bad || count > FS_MAX_OBSTACLES)
        return wire_refuse(err, errlen, "obstacles: %u of them (at most %d)", count, FS_MAX_OBSTACLES);
    for (uint32_t i = 0; i < count; i++) {
        o->id[i] = r32(&r), o->hash[i] = r64(&r), o->bytes[i] = r32(&r);
        if (!r.bad && (o->bytes[i] < OBSTACLE_MESH_HEAD || o->bytes[i] > mesh_bytes_max()))
            return wire_refuse(err, errlen, "obstacles: a mesh of %u bytes (the encoding's bound: %zu)", o->bytes[i],
                               mesh_bytes_max());
    }
    uint32_t len = r32(&r);
    if (!r.bad && len > BUS_MAX_OBST_LIST)
        return wire_refuse(err, errlen, "obstacles: a list of %u bytes (at most %u)", len, BUS_MAX_OBST_LIST);
    o->list = r_take(&r, len);
    o->list_len = len;
    if (r_end(&r, "obstacles", err, errlen)) return -1;
    o->count = (int)count;
    return 0;
}

msg_buf *bus_encode_obstacle_mesh(uint32_t id, const msg_buf *mesh) {
    wr w;
    w_head(&w, "OMSH", 16 + mesh->len);
    w32(&w, id);
    w32(&w, (uint32_t)mesh->len);
    w_bytes(&w, mesh->data, mesh->len);
    return w_done(&w);
}

int bus_decode_obstacle_mesh(const uint8_t *p, size_t n, uint32_t *id, uint64_t *hash, const uint8_t **mesh,
                             size_t *len, char *err, size_t errlen) {
    rd r;
    if (r_head(&r, p, n, "OMSH", err, errlen)) return -1;
    *id = r32(&r);
    uint32_t l = r32(&r);
    if (!r.bad && l > mesh_bytes_max())
        return wire_refuse(err, errlen, "obstacle mesh: %u bytes (the encoding's bound: %zu)", l, mesh_bytes_max());
    const uint8_t *m = r_take(&r, l);
    if (r_end(&r, "obstacle mesh", err, errlen)) return -1;
    if (obstacle_mesh_check(m, l, hash))
        return wire_refuse(err, errlen, "obstacle mesh: not a mesh encoding (head, counts, size, indices or hash)");
    *mesh = m, *len = l;
    return 0;
}

msg_buf *bus_encode_mesh_wants(uint32_t relay, const char *room, const uint32_t *ids, int k) {
    wr w;
    w_head(&w, "OWNT", 32 + ROOM_NAME_CAP + 4 * (size_t)k);
    w32(&w, relay);
    w_name(&w, room);
    w32(&w, (uint32_t)k);
    for (int i = 0; i < k; i++) w32(&w, ids[i]);
    return w_done(&w);
}

int bus_decode_mesh_wants(const uint8_t *p, size_t n, uint32_t *relay, char room[ROOM_NAME_CAP],
                          uint32_t ids[FS_MAX_OBSTACLES], int *k, char *err, size_t errlen) {
    rd r;
    *k = 0;
    if (r_head(&r, p, n, "OWNT", err, errlen)) return -1;
    *relay = r32(&r);
    char why[160] = "";
    if (r_name(&r, room, why, sizeof why))
        return r.bad ? wire_refuse(err, errlen, "mesh wants: truncated")
                     : wire_refuse(err, errlen, "mesh wants: %s", why);
    uint32_t count = r32(&r);
    if (!r.bad && count > FS_MAX_OBSTACLES)
        return wire_refuse(err, errlen, "mesh wants: %u obstacles (at most %d)", count, FS_MAX_OBSTACLES);
    for (uint32_t i = 0; i < count && !r.bad; i++) ids[i] = r32(&r);
    if (r_end(&r, "mesh wants", err, errlen)) return -1;
    if (*relay < 1 || *relay > CMD_RELAY_MAX)
        return wire_refuse(err, errlen, "mesh wants: relay %u out of range", *relay);
    *k = (int)count;
    return 0;
}

msg_buf *bus_encode_info(const world_info *wi) {
    return pod_encode("INFO", wi, sizeof *wi);
}

int bus_decode_info(const uint8_t *p, size_t n, world_info *wi, char *err, size_t errlen) {
    if (pod(p, n, "INFO", wi, sizeof *wi, err, errlen)) return -1;
    fix_bool(wi, offsetof(world_info, paused));
    fix_str(wi->scene, sizeof wi->scene);
    fix_str(wi->solver, sizeof wi->solver);
    if (wi->material_count < 0 || wi->material_count > FS_MAX_MATERIALS) wi->material_count = 0;
    for (int m = 0; m < FS_MAX_MATERIALS; m++) {
        fix_str(wi->material[m], sizeof wi->material[m]);
        for (int k = 0; k < FS_P_COUNT; k++) fix_float(&wi->param[m][k]);
    }
    float *fl[] = {&wi->box_min.x, &wi->box_min.y, &wi->box_min.z, &wi->box_max.x, &wi->box_max.y,
                   &wi->box_max.z, &wi->gravity.x, &wi->gravity.y, &wi->gravity.z, &wi->h,
                   &wi->spacing,   &wi->dt,        &wi->frame_step};
    for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) fix_float(fl[i]);
    if (wi->particles < 0) wi->particles = 0;
    if (wi->capacity < 0 || wi->capacity > (1 << 24)) wi->capacity = 0;
    return 0;
}

msg_buf *bus_encode_stats(const sim_stats *s) {
    return pod_encode("STAT", s, sizeof *s);
}

int bus_decode_stats(const uint8_t *p, size_t n, sim_stats *s, char *err, size_t errlen) {
    if (pod(p, n, "STAT", s, sizeof *s, err, errlen)) return -1;
    fix_bool(s, offsetof(sim_stats, paused));
    if (s->probe_count < 0 || s->probe_count > FS_MAX_PROBES) s->probe_count = 0;
    for (int k = 0; k < FS_MAX_PROBES; k++) {
        fs_probe_def *d = &s->probe[k];
        fix_str(d->name, sizeof d->name);
        if ((unsigned)d->kind >= FS_PROBE_KIND_COUNT) d->kind = FS_PROBE_HEIGHT;
        float *fl[] = {&d->pos.x,    &d->pos.y,    &d->pos.z, &d->normal.x,
                       &d->normal.y, &d->normal.z, &d->size,  &s->probe_value[k]};
        for (size_t i = 0; i < sizeof fl / sizeof fl[0]; i++) fix_float(fl[i]);
    }
    return 0;
}
