/* fleet_doc.c - a fleet's directory values as JSON, checked (see fleet_doc.h). */
#include "fleet_doc.h"
#include "refusal.h"

#include <cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A node's id as a key spells it: 1..FLEET_NODE_MAX, no leading zero, nothing after. */
static bool key_id(const char *p, uint32_t *id) {
    uint32_t v = 0;
    int digits = 0;
    const char *d = p;
    for (; *p >= '0' && *p <= '9' && digits < 6; p++, digits++) v = v * 10 + (uint32_t)(*p - '0');
    if (*p || !digits || *d == '0' || v < 1 || v > FLEET_NODE_MAX) return false;
    *id = v;
    return true;
}

fleet_key_kind fleet_key_parse(const char *key, uint32_t *id, char name[ROOM_NAME_CAP]) {
    if (!key) return FLEET_KEY_OTHER;
    if (!strncmp(key, "node.", 5)) return key_id(key + 5, id) ? FLEET_KEY_NODE : FLEET_KEY_OTHER;
    if (!strncmp(key, "drain.", 6)) return key_id(key + 6, id) ? FLEET_KEY_DRAIN : FLEET_KEY_OTHER;
    if (!strncmp(key, "room.", 5)) {
        const char *n = key + 5;
        size_t len = strlen(n);
        if (!room_name_ok(n, len, NULL, 0)) return FLEET_KEY_OTHER;
        memcpy(name, n, len + 1);
        return FLEET_KEY_ROOM;
    }
    return FLEET_KEY_OTHER;
}

/* A field's name, known or not: 1 to FLEET_FIELD_NAME_MAX of a-z, 0-9, '_'. */
static bool name_ok(const char *k) {
    size_t len = 0;
    for (; k[len]; len++)
        if (len >= FLEET_FIELD_NAME_MAX ||
            !((k[len] >= 'a' && k[len] <= 'z') || (k[len] >= '0' && k[len] <= '9') || k[len] == '_'))
            return false;
    return len > 0;
}

/* An object's fields: at most FLEET_FIELDS_MAX, each named by the rule and
 * once (a field twice is refused, known or not: which one counts would be
 * a guess).  0, or -1 with err. */
static int fields_ok(const cJSON *o, const char *what, char *err, size_t errlen) {
    if (cJSON_GetArraySize(o) > FLEET_FIELDS_MAX)
        return wire_refuse(err, errlen, "%s has more than %d fields", what, FLEET_FIELDS_MAX);
    for (const cJSON *f = o->child; f; f = f->next) {
        if (!name_ok(f->string)) return wire_refuse(err, errlen, "%s has a field named '%.32s'", what, f->string);
        for (const cJSON *g = o->child; g != f; g = g->next)
            if (!strcmp(g->string, f->string))
                return wire_refuse(err, errlen, "%s has the field '%.32s' twice", what, f->string);
    }
    return 0;
}

/* The value as a JSON object whose fields are by fields_ok, or NULL with err. */
static cJSON *parse(const void *p, size_t n, const char *what, char *err, size_t errlen) {
    if (n > FLEET_DOC_MAX) {
        wire_refuse(err, errlen, "%zu bytes, more than %d", n, FLEET_DOC_MAX);
        return NULL;
    }
    cJSON *j = n ? cJSON_ParseWithLength(p, n) : NULL;
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        wire_refuse(err, errlen, "not a JSON object");
        return NULL;
    }
    if (fields_ok(j, what, err, errlen)) {
        cJSON_Delete(j);
        return NULL;
    }
    return j;
}

/* A whole number in [lo, hi] (also checks its type). */
static bool whole(const cJSON *f, double lo, double hi) {
    return cJSON_IsNumber(f) && isfinite(f->valuedouble) && f->valuedouble >= lo && f->valuedouble <= hi &&
           f->valuedouble == floor(f->valuedouble);
}

/* Printable ASCII, no quote or backslash, shorter than cap. */
static bool text_ok(const cJSON *f, size_t cap) {
    if (!cJSON_IsString(f)) return false;
    size_t len = strlen(f->valuestring);
    if (len >= cap) return false;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)f->valuestring[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
}

/* A scene's name: "" or lower-case letters, digits and '_'. */
static bool scene_ok(const char *s) {
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return false;
    return true;
}

static const char *const node_fields[7] = {"id", "url", "budget_ms", "used_ms", "rooms", "clients", "cap_rooms"};
static const char *const room_fields[9] = {"node",      "claim", "public_role", "key_gen", "scene",
                                           "particles", "error", "snap",        "ms"};
#define ROOM_REQUIRED 0xffu /* every field of room_fields but ms (its cost): a key without it has the cost unknown */
static const char *const snap_fields[5] = {"save", "chunks", "bytes", "sha256", "tick"};

/* A field's bit among the n of its value (n for another: a field of a later
 * version, ignored). */
static unsigned field_bit(const char *k, const char *const names[], unsigned n) {
    for (unsigned i = 0; i < n; i++)
        if (!strcmp(k, names[i])) return i;
    return n;
}

#define WHOLE_MAX 9007199254740992.0 /* 2^53: a JSON number's whole numbers */

/* "sha256": 64 lower-case hex digits. */
static bool sha_ok(const cJSON *f) {
    if (!cJSON_IsString(f) || strlen(f->valuestring) != FLEET_SHA256_HEX) return false;
    for (const char *p = f->valuestring; *p; p++)
        if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'))) return false;
    return true;
}

/* "snap": null (no snapshot yet), or its five fields (and any of a later
 * version, ignored), the bytes as many as the chunks hold (every chunk full
 * but the last). */
static int snap_read(const cJSON *o, fleet_snap_manifest *m, char *err, size_t errlen) {
    memset(m, 0, sizeof *m);
    if (cJSON_IsNull(o)) return 0;
    if (!cJSON_IsObject(o))
        return wire_refuse(err, errlen, "'snap' is null or an object of save, chunks, bytes, sha256 and tick");
    if (fields_ok(o, "'snap'", err, errlen)) return -1;
    unsigned seen = 0;
    for (const cJSON *f = o->child; f; f = f->next) {
        const char *k = f->string;
        const unsigned bit = field_bit(k, snap_fields, 5);
        if (bit == 5) continue; /* a later version's */
        seen |= 1u << bit;
        if (!strcmp(k, "save") && whole(f, 1, WHOLE_MAX))
            m->save = (uint64_t)f->valuedouble;
        else if (!strcmp(k, "chunks") && whole(f, 1, FLEET_CHUNKS_MAX))
            m->chunks = (int)f->valuedouble;
        else if (!strcmp(k, "bytes") && whole(f, 1, (double)FLEET_CHUNKS_MAX * FLEET_CHUNK_MAX))
            m->bytes = (uint64_t)f->valuedouble;
        else if (!strcmp(k, "sha256") && sha_ok(f))
            memcpy(m->sha256, f->valuestring, FLEET_SHA256_HEX + 1);
        else if (!strcmp(k, "tick") && whole(f, 0, WHOLE_MAX))
            m->tick = (uint64_t)f->valuedouble;
        else
            return wire_refuse(err, errlen, "snap's field '%.32s' is not of its type and range", k);
    }
    if (seen != 0x1f) return wire_refuse(err, errlen, "'snap' has save, chunks, bytes, sha256 and tick");
    if (m->bytes <= (uint64_t)(m->chunks - 1) * FLEET_CHUNK_MAX || m->bytes > (uint64_t)m->chunks * FLEET_CHUNK_MAX)
        return wire_refuse(err, errlen, "'snap': %llu bytes are not %d chunks of at most %u",
                           (unsigned long long)m->bytes, m->chunks, FLEET_CHUNK_MAX);
    return 0;
}

size_t fleet_chunk_len(uint64_t n, int k) {
    const uint64_t at = (uint64_t)k * FLEET_CHUNK_MAX;
    if (k < 0 || at >= n) return 0;
    return (size_t)(n - at < FLEET_CHUNK_MAX ? n - at : FLEET_CHUNK_MAX);
}

/* A header's value: a whole number of at most 16 digits as written (no
 * sign, no leading zero), or -1. */
static long long header_number(const char *v) {
    if (!v || !*v || strlen(v) > 16 || (v[0] == '0' && v[1])) return -1;
    long long x = 0;
    for (; *v; v++) {
        if (*v < '0' || *v > '9') return -1;
        x = x * 10 + (*v - '0');
    }
    return x;
}

int fleet_chunk_check(const fleet_snap_manifest *m, int k, const char *save, const char *chunks, size_t len, char *err,
                      size_t errlen) {
    const long long sv = header_number(save), ch = header_number(chunks);
    if (k < 0 || k >= m->chunks) return wire_refuse(err, errlen, "chunk %d of %d", k, m->chunks);
    if (sv < 0 || (uint64_t)sv != m->save)
        return wire_refuse(err, errlen, "chunk %d is of save %.20s, not %llu", k, save ? save : "(none)",
                           (unsigned long long)m->save);
    if (ch != m->chunks)
        return wire_refuse(err, errlen, "chunk %d says %.20s chunks, not %d", k, chunks ? chunks : "(none)", m->chunks);
    if (len != fleet_chunk_len(m->bytes, k))
        return wire_refuse(err, errlen, "chunk %d holds %zu bytes, not %zu", k, len, fleet_chunk_len(m->bytes, k));
    return 0;
}

/* Text written into a value: printable ASCII, a quote or a backslash as '?'. */
static void tidy(const char *in, char *out, size_t cap) {
    size_t i = 0;
    for (; in[i] && i + 1 < cap; i++) {
        unsigned char c = (unsigned char)in[i];
        out[i] = c < 0x20 || c > 0x7e || c == '"' || c == '\\' ? '?' : (char)c;
    }
    out[i] = 0;
}

int fleet_node_write(const fleet_node_rec *r, char *out, size_t cap) {
    char url[FLEET_URL_CAP];
    tidy(r->url, url, sizeof url);
    int n = snprintf(out, cap,
                     "{\"id\":%u,\"url\":\"%s\",\"budget_ms\":%.3f,\"used_ms\":%.3f,\"rooms\":%d,\"clients\":%d,"
                     "\"cap_rooms\":%d}",
                     (unsigned)r->id, url, r->budget_ms, r->used_ms, r->rooms, r->clients, r->cap_rooms);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int fleet_node_read(const void *p, size_t n, fleet_node_rec *r, char *err, size_t errlen) {
    cJSON *j = parse(p, n, "a node record", err, errlen);
    if (!j) return -1;
    memset(r, 0, sizeof *r);
    int rc = 0;
    unsigned seen = 0;
    for (const cJSON *f = j->child; f && !rc; f = f->next) {
        const char *k = f->string;
        const unsigned bit = field_bit(k, node_fields, 7);
        if (bit == 7) continue; /* a later version's */
        seen |= 1u << bit;
        if (!strcmp(k, "id") && whole(f, 1, FLEET_NODE_MAX))
            r->id = (uint32_t)f->valuedouble;
        else if (!strcmp(k, "url") && text_ok(f, sizeof r->url))
            snprintf(r->url, sizeof r->url, "%s", f->valuestring);
        else if (!strcmp(k, "budget_ms") && cJSON_IsNumber(f) && f->valuedouble >= 0 && f->valuedouble <= FLEET_MS_MAX)
            r->budget_ms = f->valuedouble;
        else if (!strcmp(k, "used_ms") && cJSON_IsNumber(f) && f->valuedouble >= 0 && f->valuedouble <= FLEET_MS_MAX)
            r->used_ms = f->valuedouble;
        else if (!strcmp(k, "rooms") && whole(f, 0, FLEET_COUNT_MAX))
            r->rooms = (int)f->valuedouble;
        else if (!strcmp(k, "clients") && whole(f, 0, FLEET_COUNT_MAX))
            r->clients = (int)f->valuedouble;
        else if (!strcmp(k, "cap_rooms") && whole(f, 0, FLEET_COUNT_MAX))
            r->cap_rooms = (int)f->valuedouble;
        else
            rc = wire_refuse(err, errlen, "field '%.32s' is not of its type and range", k);
    }
    if (!rc && seen != 0x7f)
        rc = wire_refuse(err, errlen, "a node record has id, url, budget_ms, used_ms, rooms, clients and cap_rooms");
    cJSON_Delete(j);
    return rc;
}

int fleet_room_write(const fleet_room_rec *r, char *out, size_t cap) {
    char scene[FLEET_SCENE_CAP], error[FLEET_ERROR_CAP];
    tidy(r->scene, scene, sizeof scene);
    tidy(r->error, error, sizeof error);
    char snap[200] = "null";
    const fleet_snap_manifest *m = &r->snap;
    if (m->save) {
        char sha[FLEET_SHA256_HEX + 1];
        tidy(m->sha256, sha, sizeof sha);
        snprintf(snap, sizeof snap, "{\"save\":%llu,\"chunks\":%d,\"bytes\":%llu,\"sha256\":\"%s\",\"tick\":%llu}",
                 (unsigned long long)m->save, m->chunks, (unsigned long long)m->bytes, sha,
                 (unsigned long long)m->tick);
    }
    const double ms = r->ms >= 0 && r->ms <= FLEET_MS_MAX ? r->ms : 0;
    int n = snprintf(out, cap,
                     "{\"node\":%u,\"claim\":%llu,\"public_role\":\"%s\",\"key_gen\":%u,\"scene\":\"%s\","
                     "\"particles\":%d,\"error\":\"%s\",\"snap\":%s,\"ms\":%.3f}",
                     (unsigned)r->node, (unsigned long long)r->claim, role_name(r->public_role), r->key_gen, scene,
                     r->particles, error, snap, ms);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int fleet_room_read(const void *p, size_t n, fleet_room_rec *r, char *err, size_t errlen) {
    cJSON *j = parse(p, n, "a room's claim", err, errlen);
    if (!j) return -1;
    memset(r, 0, sizeof *r);
    int rc = 0;
    unsigned seen = 0;
    for (const cJSON *f = j->child; f && !rc; f = f->next) {
        const char *k = f->string;
        role pr;
        const unsigned bit = field_bit(k, room_fields, 9);
        if (bit == 9) continue; /* a later version's */
        seen |= 1u << bit;
        if (!strcmp(k, "snap")) {
            rc = snap_read(f, &r->snap, err, errlen);
            continue;
        }
        if (!strcmp(k, "node") && whole(f, 0, FLEET_NODE_MAX))
            r->node = (uint32_t)f->valuedouble;
        else if (!strcmp(k, "claim") && whole(f, 0, WHOLE_MAX))
            r->claim = (uint64_t)f->valuedouble;
        else if (!strcmp(k, "public_role") && cJSON_IsString(f) &&
                 !role_parse(f->valuestring, strlen(f->valuestring), &pr) && pr >= ROLE_VIEWER && pr <= ROLE_OWNER)
            r->public_role = pr;
        else if (!strcmp(k, "key_gen") && whole(f, 0, 4294967295.0))
            r->key_gen = (unsigned)f->valuedouble;
        else if (!strcmp(k, "scene") && text_ok(f, sizeof r->scene) && scene_ok(f->valuestring))
            snprintf(r->scene, sizeof r->scene, "%s", f->valuestring);
        else if (!strcmp(k, "particles") && whole(f, 0, 1 << 20))
            r->particles = (int)f->valuedouble;
        else if (!strcmp(k, "error") && text_ok(f, sizeof r->error))
            snprintf(r->error, sizeof r->error, "%s", f->valuestring);
        else if (!strcmp(k, "ms") && cJSON_IsNumber(f) && f->valuedouble >= 0 && f->valuedouble <= FLEET_MS_MAX)
            r->ms = f->valuedouble;
        else
            rc = wire_refuse(err, errlen, "field '%.32s' is not of its type and range", k);
    }
    if (!rc && (seen & ROOM_REQUIRED) != ROOM_REQUIRED) /* ms may be missing: a key of a node older than it */
        rc = wire_refuse(err, errlen,
                         "a room's claim has node, claim, public_role, key_gen, scene, particles, error and snap");
    if (!rc && !r->node && !r->claim) /* node 0 is a room released by its holder, which was claimed */
        rc = wire_refuse(err, errlen, "node 0 (released) is a claimed room's (claim 1 or more)");
    cJSON_Delete(j);
    return rc;
}
