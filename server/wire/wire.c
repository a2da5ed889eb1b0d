/* wire.c - msgpack encoders and the bounds-checked command decoder.
 * See protocol/PROTOCOL.md for the messages. */
#include "wire.h"
#include "mp_reader.h"
#include "validate.h"

#include <math.h>
#include <msgpack.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(MP_MAX_DEPTH == WIRE_MAX_DEPTH, "the reader bounds nesting as the protocol says");

/* ---- Encoding helpers ---------------------------------------------------- */

static void pk_str(msgpack_packer *pk, const char *s) {
    size_t n = strlen(s);
    msgpack_pack_str(pk, n);
    msgpack_pack_str_body(pk, s, n);
}

static void pk_kv_str(msgpack_packer *pk, const char *k, const char *v) {
    pk_str(pk, k);
    pk_str(pk, v);
}

/* A key and its value, for each kind of number a message carries:
 * pk_kv_uint32(pk, "by", by) and so on. */
#define PK_KV(name, type)                                                                                              \
    static void pk_kv_##name(msgpack_packer *pk, const char *k, type v) {                                              \
        pk_str(pk, k);                                                                                                 \
        msgpack_pack_##name(pk, v);                                                                                    \
    }
PK_KV(uint32, uint32_t)
PK_KV(uint64, uint64_t)
PK_KV(int32, int32_t)
PK_KV(int64, int64_t)
PK_KV(double, double)

static void pk_kv_bool(msgpack_packer *pk, const char *k, bool v) {
    pk_str(pk, k);
    if (v)
        msgpack_pack_true(pk);
    else
        msgpack_pack_false(pk);
}

/* A message starts: a buffer of cap bytes (it grows), its packer, and a map
 * of entries entries whose first is "type": type. */
static void pk_begin(wbuf *b, msgpack_packer *pk, size_t cap, size_t entries, const char *type) {
    wbuf_init(b, cap, 0);
    msgpack_packer_init(pk, b, wbuf_msgpack_write);
    msgpack_pack_map(pk, entries);
    pk_kv_str(pk, "type", type);
}

/* A broadcast ends with who caused it and the tick. */
static msg_buf *bcast_finish(wbuf *b, msgpack_packer *pk, uint32_t by, uint64_t tick) {
    pk_kv_uint32(pk, "by", by);
    pk_kv_uint64(pk, "tick", tick);
    return wbuf_finish(b);
}

/* Floats go out as float64 holding the float's shortest decimal (7
 * significant digits), so 0.3f reads as 0.3 in JavaScript. */
static void pk_num(msgpack_packer *pk, float f) {
    char b[32];
    snprintf(b, sizeof b, "%.7g", (double)f);
    msgpack_pack_double(pk, strtod(b, NULL));
}

static void pk_kv_num(msgpack_packer *pk, const char *k, float v) {
    pk_str(pk, k);
    pk_num(pk, v);
}

/* An array of n strings under key k. */
static void pk_kv_strs(msgpack_packer *pk, const char *k, const char *const *v, int n) {
    pk_str(pk, k);
    msgpack_pack_array(pk, (size_t)n);
    for (int i = 0; i < n; i++) pk_str(pk, v[i]);
}

static void pk_bounds(msgpack_packer *pk, fs_vec3 lo, fs_vec3 hi) {
    pk_str(pk, "bounds");
    msgpack_pack_array(pk, 6);
    pk_num(pk, lo.x);
    pk_num(pk, lo.y);
    pk_num(pk, lo.z);
    pk_num(pk, hi.x);
    pk_num(pk, hi.y);
    pk_num(pk, hi.z);
}

static size_t bin_header_size(size_t n) {
    return n < 256 ? 2 : n < 65536 ? 3 : 5;
}

/* Writes a padding entry ("_x": "<L spaces>") sized so that the payload of
 * the bin that follows under `key` starts on a 4-byte boundary of the
 * message.  Always writes exactly one map entry. */
static void pk_pad_for_bin(msgpack_packer *pk, wbuf *b, const char *padkey, const char *key, size_t binlen) {
    size_t keylen = 1 + strlen(key);
    size_t fixed = b->len + 1 + strlen(padkey) + 1 + keylen + bin_header_size(binlen);
    size_t l = (4 - fixed % 4) % 4;
    pk_str(pk, padkey);
    msgpack_pack_str(pk, l);
    msgpack_pack_str_body(pk, "   ", l);
}

uint32_t wire_client_colour(uint32_t client) {
    static const uint32_t palette[12] = {0xe6194b, 0x3cb44b, 0xffe119, 0x4363d8, 0xf58231, 0x911eb4,
                                         0x46f0f0, 0xf032e6, 0xbcf60c, 0xfabebe, 0x008080, 0xe6beff};
    return palette[client % 12];
}

static void pk_colour(msgpack_packer *pk, uint32_t client) {
    char c[8];
    snprintf(c, sizeof c, "#%06x", (unsigned)wire_client_colour(client));
    pk_str(pk, c);
}

const char *wire_shape_name(int shape) {
    return shape == FS_SHAPE_SPHERE    ? "sphere"
           : shape == FS_SHAPE_BOX     ? "box"
           : shape == FS_SHAPE_CAPSULE ? "capsule"
           : shape == FS_SHAPE_MESH    ? "mesh"
                                       : "?";
}

static void pk_floats(msgpack_packer *pk, const float *v, int n) {
    msgpack_pack_array(pk, (size_t)n);
    for (int i = 0; i < n; i++) msgpack_pack_float(pk, v[i]);
}

/* ---- Server to client -------------------------------------------------- */

msg_buf *wire_encode_frame(const wire_frame_head *s, uint32_t seq, bool key, const uint8_t *data, size_t len) {
    return wire_encode_frame_lod(s, seq, key, NULL, data, len);
}

msg_buf *wire_encode_frame_lod(const wire_frame_head *s, uint32_t seq, bool key, const wire_lod *lod,
                               const uint8_t *data, size_t len) {
    int n = s->count > 0 ? s->count : 0, np = s->probe_count > 0 ? s->probe_count : 0;
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk,
             360 + len + (size_t)s->cursor_count * 48 + (size_t)s->body_count * 96 +
                 (size_t)np * (FS_PROBE_NAME_LEN + 8),
             13 + (lod ? 1 : 0) + (np ? 1 : 0), "frame");
    if (lod) {
        pk_str(&pk, "lod");
        msgpack_pack_map(&pk, 3);
        pk_kv_uint32(&pk, "tier", (uint32_t)lod->tier);
        pk_kv_uint32(&pk, "keep", (uint32_t)lod->keep);
        pk_kv_num(&pk, "step", lod->step);
    }
    pk_kv_uint64(&pk, "tick", s->tick);
    pk_kv_double(&pk, "time", s->sim_time);
    pk_kv_bool(&pk, "paused", s->paused);
    pk_kv_uint32(&pk, "n", (uint32_t)n);
    pk_bounds(&pk, s->box_min, s->box_max);
    pk_str(&pk, "cursors");
    msgpack_pack_array(&pk, (size_t)s->cursor_count);
    for (int c = 0; c < s->cursor_count; c++) {
        msgpack_pack_map(&pk, 3);
        pk_kv_uint32(&pk, "id", s->cursors[c].client);
        pk_str(&pk, "colour");
        pk_colour(&pk, s->cursors[c].client);
        pk_str(&pk, "pos");
        msgpack_pack_array(&pk, 3);
        for (int j = 0; j < 3; j++) msgpack_pack_float(&pk, s->cursors[c].pos[j]);
    }

    pk_str(&pk, "bodies");
    msgpack_pack_array(&pk, (size_t)s->body_count);
    for (int k = 0; k < s->body_count; k++) {
        const wire_body *bd = &s->bodies[k];
        msgpack_pack_map(&pk, 7);
        pk_kv_uint32(&pk, "id", bd->id);
        pk_kv_str(&pk, "shape", wire_shape_name(bd->shape));
        pk_str(&pk, "size");
        pk_floats(&pk, bd->size, 3);
        pk_str(&pk, "pos");
        pk_floats(&pk, bd->pos, 3);
        pk_str(&pk, "rot");
        pk_floats(&pk, bd->rot, 4);
        pk_kv_bool(&pk, "static", bd->is_static);
        pk_kv_uint32(&pk, "grabbed_by", bd->grabbed_by);
    }
    if (np) { /* name -> value, only when the world has probes */
        pk_str(&pk, "probes");
        msgpack_pack_map(&pk, (size_t)np);
        for (int k = 0; k < np; k++) {
            pk_str(&pk, s->probes[k].name);
            msgpack_pack_float(&pk, s->probes[k].value);
        }
    }
    pk_kv_uint32(&pk, "seq", seq);
    pk_kv_bool(&pk, "key", key);
    pk_str(&pk, "temp_range");
    msgpack_pack_array(&pk, 2);
    msgpack_pack_int32(&pk, WIRE_TEMP_LO);
    msgpack_pack_int32(&pk, WIRE_TEMP_HI);
    /* data: the v2 payload (frame_codec.h), 4-byte aligned in the message */
    pk_pad_for_bin(&pk, &b, "_a", "data", len);
    pk_str(&pk, "data");
    msgpack_pack_bin(&pk, len);
    msgpack_pack_bin_body(&pk, data, len);
    return wbuf_finish(&b);
}

static void pk_material_params(msgpack_packer *pk, const world_info *wi, const wire_static *st, int m) {
    msgpack_pack_map(pk, FS_P_COUNT);
    for (int p = 0; p < FS_P_COUNT; p++) {
        pk_str(pk, st->param[p] ? st->param[p]->name : "?");
        pk_num(pk, wi->param[m][p]);
    }
}

msg_buf *wire_encode_hello(const world_info *wi, const wire_static *st, uint32_t client, const char *room,
                           const char *role) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 4096, 27, "hello");
    pk_kv_uint32(&pk, "version", WIRE_PROTOCOL_VERSION);
    pk_kv_uint32(&pk, "client_id", client);
    pk_kv_str(&pk, "room", room);
    pk_kv_str(&pk, "role", role);
    pk_str(&pk, "colour");
    pk_colour(&pk, client);
    pk_bounds(&pk, wi->box_min, wi->box_max);
    pk_kv_num(&pk, "frame_step", wi->frame_step);
    pk_kv_double(&pk, "tick_hz", st->tick_hz);
    pk_kv_double(&pk, "frame_hz", st->frame_hz);
    pk_kv_num(&pk, "dt", wi->dt);
    pk_kv_num(&pk, "h", wi->h);
    pk_kv_num(&pk, "spacing", wi->spacing);
    pk_str(&pk, "gravity");
    msgpack_pack_array(&pk, 3);
    pk_num(&pk, wi->gravity.x);
    pk_num(&pk, wi->gravity.y);
    pk_num(&pk, wi->gravity.z);
    pk_kv_str(&pk, "scene", wi->scene);
    pk_kv_strs(&pk, "scenes", st->scene, st->scene_count);
    pk_kv_int32(&pk, "particles", wi->particles);
    pk_kv_int32(&pk, "scene_particles", wi->scene_particles);
    pk_kv_int32(&pk, "capacity", wi->capacity);
    pk_kv_bool(&pk, "paused", wi->paused);
    pk_kv_str(&pk, "solver", wi->solver);
    pk_kv_strs(&pk, "solvers", st->solver, st->solver_count);
    pk_kv_bool(&pk, "auth_required", st->auth_required);
    pk_kv_strs(&pk, "relays", st->relay, st->relay_count);
    pk_str(&pk, "limits");
    msgpack_pack_map(&pk, 9);
    pk_kv_int32(&pk, "max_msg", st->max_msg);
    pk_kv_int32(&pk, "rate_per_s", st->rate_per_s);
    pk_kv_int32(&pk, "rate_burst", st->rate_burst);
    /* the edge's ranges for the tools (commands.h), so a client can clamp */
    pk_kv_num(&pk, "push_strength", CMD_MAX_STRENGTH);
    pk_kv_num(&pk, "push_radius", CMD_MAX_RADIUS);
    pk_kv_num(&pk, "heat_rate", CMD_MAX_HEAT_RATE);
    pk_kv_num(&pk, "heat_radius", CMD_MAX_HEAT_RADIUS);
    pk_kv_num(&pk, "heat_duration", CMD_MAX_HEAT_S);
    pk_kv_int32(&pk, "steps", CMD_MAX_STEPS);
    pk_str(&pk, "params");
    msgpack_pack_array(&pk, FS_P_COUNT);
    for (int p = 0; p < FS_P_COUNT; p++) {
        const fs_param_info *pi = st->param[p];
        msgpack_pack_map(&pk, 6);
        pk_kv_str(&pk, "name", pi ? pi->name : "?");
        pk_kv_str(&pk, "unit", pi && pi->unit ? pi->unit : "");
        pk_kv_str(&pk, "doc", pi && pi->doc ? pi->doc : "");
        pk_kv_num(&pk, "min", pi ? pi->min : 0);
        pk_kv_num(&pk, "max", pi ? pi->max : 0);
        pk_kv_bool(&pk, "flag", pi && pi->is_flag);
    }
    pk_str(&pk, "materials");
    msgpack_pack_array(&pk, (size_t)wi->material_count);
    for (int m = 0; m < wi->material_count; m++) {
        msgpack_pack_map(&pk, 3);
        pk_kv_int32(&pk, "index", m);
        pk_kv_str(&pk, "name", wi->material[m]);
        pk_str(&pk, "params");
        pk_material_params(&pk, wi, st, m);
    }
    return wbuf_finish(&b);
}

msg_buf *wire_encode_param_bcast(const world_info *wi, const wire_static *st, int material, uint32_t by,
                                 uint64_t tick) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 512, 6, "param");
    pk_kv_str(&pk, "material", wi->material[material]);
    pk_kv_int32(&pk, "index", material);
    pk_str(&pk, "params");
    pk_material_params(&pk, wi, st, material);
    return bcast_finish(&b, &pk, by, tick);
}

msg_buf *wire_encode_scene_bcast(const world_info *wi, uint32_t by, uint64_t tick) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 256, 8, "scene");
    pk_kv_str(&pk, "scene", wi->scene);
    pk_kv_str(&pk, "solver", wi->solver);
    pk_kv_int32(&pk, "particles", wi->particles);
    pk_kv_int32(&pk, "scene_particles", wi->scene_particles);
    pk_bounds(&pk, wi->box_min, wi->box_max);
    return bcast_finish(&b, &pk, by, tick);
}

msg_buf *wire_encode_state_bcast(bool paused, uint32_t by, uint64_t tick) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 64, 4, "state");
    pk_kv_bool(&pk, "paused", paused);
    return bcast_finish(&b, &pk, by, tick);
}

msg_buf *wire_encode_solver_bcast(const char *solver, uint32_t by, uint64_t tick) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 64, 4, "solver");
    pk_kv_str(&pk, "solver", solver);
    return bcast_finish(&b, &pk, by, tick);
}

msg_buf *wire_encode_obstacles_bcast(const wire_obstacle *o, int n, uint64_t version, uint32_t by, uint64_t tick) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 64 + 128 * (size_t)n, 5, "obstacles");
    pk_kv_uint64(&pk, "version", version);
    pk_str(&pk, "obstacles");
    msgpack_pack_array(&pk, (size_t)n);
    for (int i = 0; i < n; i++) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)o[i].hash);
        msgpack_pack_map(&pk, 6);
        pk_kv_uint32(&pk, "id", o[i].id);
        pk_kv_str(&pk, "hash", hex);
        pk_bounds(&pk, o[i].lo, o[i].hi);
        pk_kv_int32(&pk, "triangles", o[i].triangles);
        pk_kv_int32(&pk, "vertices", o[i].vertices);
        pk_kv_bool(&pk, "closed", o[i].closed);
    }
    return bcast_finish(&b, &pk, by, tick);
}

msg_buf *wire_encode_snapshot(const wire_snapshot_meta *m, size_t world_len,
                              bool (*fill)(void *dst, size_t n, void *ctx), void *ctx) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 256 + world_len, 11, "snapshot");
    pk_kv_uint32(&pk, "version", WIRE_SNAPSHOT_VERSION);
    pk_kv_uint64(&pk, "tick", m->tick);
    pk_kv_double(&pk, "time", m->sim_time);
    pk_kv_str(&pk, "scene", m->scene);
    pk_kv_str(&pk, "solver", m->solver);
    pk_kv_int32(&pk, "particles", m->particles);
    pk_kv_int32(&pk, "springs", m->springs);
    pk_kv_int32(&pk, "bodies", m->bodies);
    pk_kv_bool(&pk, "paused", m->paused);
    pk_str(&pk, "world");
    msgpack_pack_bin(&pk, world_len);
    uint8_t *o = wbuf_grow(&b, world_len);
    if (!o || !fill(o, world_len, ctx)) {
        wbuf_free(&b);
        return NULL;
    }
    return wbuf_finish(&b);
}

/* A reply under the command name cmd_name: rid, cmd, ok, then the tick and
 * the kind's value, or the error and its code; duplicate when it is one. */
static msg_buf *encode_reply(const cmd_reply *r, const char *cmd_name) {
    const char *extra = NULL;
    if (r->ok) {
        if (r->kind == CMD_PUSH)
            extra = "touched";
        else if (r->kind == CMD_LOAD_SCENE)
            extra = "particles";
        else if (r->kind == CMD_STEP)
            extra = "steps";
        else if (r->kind == CMD_EMITTER || r->kind == CMD_HEATER)
            extra = "slot";
        else if (r->kind == CMD_BODY_CREATE || r->kind == CMD_OBSTACLE_ADD)
            extra = "id";
    }
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 128, (r->ok ? (extra ? 6 : 5) : 6) + (r->duplicate ? 1 : 0), "reply");
    pk_kv_uint32(&pk, "rid", r->rid);
    pk_kv_str(&pk, "cmd", cmd_name);
    pk_str(&pk, "ok");
    if (r->ok) {
        msgpack_pack_true(&pk);
        pk_kv_uint64(&pk, "tick", r->tick);
        if (extra) {
            pk_kv_int64(&pk, extra, r->value);
        }
    } else {
        msgpack_pack_false(&pk);
        pk_kv_str(&pk, "error", r->error);
        pk_kv_str(&pk, "code", reply_code_name(cmd_reply_code(r)));
    }
    if (r->duplicate) {
        pk_str(&pk, "duplicate");
        msgpack_pack_true(&pk);
    }
    return wbuf_finish(&b);
}

msg_buf *wire_encode_reply(const cmd_reply *r) {
    return encode_reply(r, cmd_kind_name(r->kind));
}

msg_buf *wire_encode_error(reply_code code, uint32_t rid, const char *cmd_name, const char *reason) {
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.rid = rid;
    cmd_reply_refuse(&r, code, "%s", reason);
    /* cmd_kind_name(CMD_NONE) is "none"; a known name is echoed when given. */
    return encode_reply(&r, cmd_name ? cmd_name : "none");
}

/* ---- Client to server: the command decoder (over mp_reader.h) ------------ */

/* The rid, when one was decoded and is valid: replies to a refused message
 * still echo it. */
static uint32_t fields_rid(const cmd_fields *f) {
    if (!(f->present & CF_BIT(CF_RID)) || !(f->rid >= 0 && f->rid <= 4294967295.0) || f->rid != floor(f->rid)) return 0;
    return (uint32_t)f->rid;
}

/* Decodes the value v of field fi into f.  Returns 1 when it is of the
 * field's type, 0 when not (the value, containers included, has been
 * skipped), -1 when the message is malformed (err filled).  Every write
 * into f is bounded by the field's storage: strings by their capacity,
 * vectors by 3 or 4, parameter maps by FS_P_COUNT entries. */
static int decode_field(mp_rd *r, const mp_obj *v, int fi, cmd_fields *f, char *err, size_t errlen) {
    cmd_ftype t = cmd_field_defs[fi].type;
    if (mp_is_container(v) && t != CFT_VEC3 && t != CFT_VEC4 && t != CFT_PARAMS) {
        if (!mp_skip_body(r, v, 1)) {
            snprintf(err, errlen, "malformed message: truncated or too deep");
            return -1;
        }
        return 0;
    }
    switch (t) {
    case CFT_STR: {
        size_t cap;
        char *dst = cmd_field_str(f, fi, &cap);
        return mp_copy_str(v, dst, cap);
    }
    case CFT_UINT:
    case CFT_INT:
    case CFT_NUM:
        return mp_read_num(v, cmd_field_num(f, fi));
    case CFT_BOOL:
        if (v->type != MP_BOOL) return 0;
        *cmd_field_bool(f, fi) = v->b;
        return 1;
    case CFT_VEC3:
    case CFT_VEC4: {
        uint32_t want = t == CFT_VEC4 ? 4 : 3;
        double *dst = cmd_field_vec(f, fi);
        if (fi == CF_POS && v->type == MP_NIL) {
            f->pos_nil = true;
            return 1;
        }
        if (v->type != MP_ARRAY || v->n != want) {
            if (!mp_skip_body(r, v, 1)) {
                snprintf(err, errlen, "malformed message: truncated or too deep");
                return -1;
            }
            return 0;
        }
        int ok = 1;
        for (uint32_t j = 0; j < want; j++) {
            mp_obj e;
            if (!mp_next(r, &e)) {
                snprintf(err, errlen, "malformed message: truncated");
                return -1;
            }
            if (!mp_read_num(&e, &dst[j])) {
                ok = 0;
                if (!mp_skip_body(r, &e, 2)) {
                    snprintf(err, errlen, "malformed message: truncated or too deep");
                    return -1;
                }
            }
        }
        return ok;
    }
    case CFT_PARAMS: {
        if (v->type != MP_MAP || v->n > FS_P_COUNT) {
            if (!mp_skip_body(r, v, 1)) {
                snprintf(err, errlen, "malformed message: truncated or too deep");
                return -1;
            }
            return 0;
        }
        int ok = 1;
        for (uint32_t j = 0; j < v->n; j++) {
            mp_obj pk, pv;
            if (!mp_next(r, &pk) || pk.type != MP_STR) {
                snprintf(err, errlen, "malformed message: 'params' keys must be strings");
                return -1;
            }
            if (!mp_next(r, &pv)) {
                snprintf(err, errlen, "malformed message: truncated");
                return -1;
            }
            if (f->n_params < FS_P_COUNT && mp_copy_str(&pk, f->pname[f->n_params], CMD_NAME_LEN) &&
                mp_read_num(&pv, &f->pvalue[f->n_params]))
                f->n_params++;
            else
                ok = 0;
            if (!mp_skip_body(r, &pv, 2)) {
                snprintf(err, errlen, "malformed message: truncated or too deep");
                return -1;
            }
        }
        return ok;
    }
    }
    return 0;
}

int wire_decode_command(const uint8_t *p, size_t n, cmd *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (n > WIRE_MAX_MSG) {
        snprintf(err, errlen, "message too large (%zu bytes, limit %d)", n, WIRE_MAX_MSG);
        return -1;
    }
    mp_rd r = {p, p + n};
    mp_obj top;
    if (!mp_next(&r, &top) || top.type != MP_MAP) {
        snprintf(err, errlen, "malformed message: expected a msgpack map");
        return -1;
    }
    if (top.n > CF_COUNT) {
        snprintf(err, errlen, "malformed message: too many fields (%u)", (unsigned)top.n);
        return -1;
    }
    cmd_fields f;
    memset(&f, 0, sizeof f);
    char first_err[FS_ERROR_LEN] = "";
    for (uint32_t i = 0; i < top.n; i++) {
        mp_obj k, v;
        if (!mp_next(&r, &k) || k.type != MP_STR) {
            snprintf(err, errlen, "malformed message: map keys must be strings");
            out->rid = fields_rid(&f);
            return -1;
        }
        int fi = cmd_field_find((const char *)k.s, k.n);
        if (fi >= 0 && (f.present & CF_BIT(fi))) {
            /* Refused before its value is read: a second copy must never
             * add to (or overwrite) what the first one stored. */
            if (f.present & CF_BIT(CF_TYPE))
                snprintf(err, errlen, "%s: field '%s' given twice", f.type, cmd_field_defs[fi].name);
            else
                snprintf(err, errlen, "field '%s' given twice", cmd_field_defs[fi].name);
            out->rid = fields_rid(&f);
            return -1;
        }
        if (!mp_next(&r, &v)) {
            snprintf(err, errlen, "malformed message: truncated");
            out->rid = fields_rid(&f);
            return -1;
        }
        if (fi < 0) {
            if (!first_err[0])
                snprintf(first_err, sizeof first_err, "unknown field '%.*s'", (int)(k.n > 32 ? 32 : k.n),
                         (const char *)k.s);
            if (!mp_skip_body(&r, &v, 1)) {
                snprintf(err, errlen, "malformed message: truncated or too deep");
                out->rid = fields_rid(&f);
                return -1;
            }
            continue;
        }
        int st = decode_field(&r, &v, fi, &f, err, errlen);
        if (st < 0) {
            out->rid = fields_rid(&f);
            return -1;
        }
        /* A field counts as given even when its value is refused, so that
         * a second copy is still a duplicate. */
        f.present |= CF_BIT(fi);
        if (!st && !first_err[0]) {
            const char *want = fi == CF_TOKEN ? "a string (under 128 bytes)"
                               : fi == CF_SID ? "a string (8 to 31 characters)"
                                              : cmd_ftype_text(cmd_field_defs[fi].type, false);
            if (cmd_field_defs[fi].type == CFT_PARAMS)
                snprintf(first_err, sizeof first_err, "'%s' must be %s (at most %d, one per parameter)",
                         cmd_field_defs[fi].name, want, FS_P_COUNT);
            else
                snprintf(first_err, sizeof first_err, "'%s' must be %s", cmd_field_defs[fi].name, want);
        }
    }
    if (r.p != r.end) {
        snprintf(err, errlen, "malformed message: %zu trailing bytes", (size_t)(r.end - r.p));
        out->rid = fields_rid(&f);
        return -1;
    }
    if (first_err[0]) {
        out->rid = fields_rid(&f);
        if (f.present & CF_BIT(CF_TYPE) && f.type[0])
            snprintf(err, errlen, "%s: %s", f.type, first_err);
        else
            snprintf(err, errlen, "%s", first_err);
        return -1;
    }
    cmd tmp;
    int rc = cmd_from_fields(&f, &tmp, err, errlen);
    out->rid = tmp.rid;
    if (rc) return -1;
    *out = tmp;
    return 0;
}

int wire_decode_snapshot(const uint8_t *p, size_t n, const uint8_t **world, size_t *world_len, char *err,
                         size_t errlen) {
    mp_rd r = {p, p + n};
    mp_obj top;
    *world = NULL;
    *world_len = 0;
    if (!mp_next(&r, &top) || top.type != MP_MAP) {
        snprintf(err, errlen, "snapshot: expected a msgpack map");
        return -1;
    }
    bool typed = false, seen_type = false;
    for (uint32_t i = 0; i < top.n; i++) {
        mp_obj k, v;
        if (!mp_next(&r, &k) || k.type != MP_STR || !mp_next(&r, &v) || !mp_skip_body(&r, &v, 1)) {
            snprintf(err, errlen, "snapshot: malformed map");
            return -1;
        }
        if (k.n == 5 && !memcmp(k.s, "world", 5)) {
            if (*world) {
                snprintf(err, errlen, "snapshot: 'world' given twice");
                return -1;
            }
            if (v.type != MP_BIN) {
                snprintf(err, errlen, "snapshot: 'world' must be a bin");
                return -1;
            }
            *world = v.s;
            *world_len = v.n;
        } else if (k.n == 4 && !memcmp(k.s, "type", 4)) {
            if (seen_type) {
                snprintf(err, errlen, "snapshot: 'type' given twice");
                return -1;
            }
            seen_type = true;
            typed = v.type == MP_STR && v.n == 8 && !memcmp(v.s, "snapshot", 8);
        }
    }
    if (r.p != r.end) {
        snprintf(err, errlen, "snapshot: %zu trailing bytes", (size_t)(r.end - r.p));
        return -1;
    }
    if (!typed || !*world) {
        snprintf(err, errlen, "snapshot: not a snapshot document (needs type 'snapshot' and a 'world' bin)");
        return -1;
    }
    return 0;
}

/* One top-level map's field of a server message: key k, value v. */
static void frame_field(const mp_obj *k, const mp_obj *v, wire_frame_view *out) {
    if (k->n == 4 && !memcmp(k->s, "type", 4))
        out->is_frame = v->type == MP_STR && v->n == 5 && !memcmp(v->s, "frame", 5);
    if (v->type == MP_INT && v->num >= 0) {
        if (k->n == 4 && !memcmp(k->s, "tick", 4)) out->tick = (uint64_t)v->num;
        if (k->n == 3 && !memcmp(k->s, "seq", 3)) out->seq = (uint32_t)v->num;
        if (k->n == 1 && k->s[0] == 'n') out->n = (uint32_t)v->num;
        if (k->n == 8 && !memcmp(k->s, "capacity", 8)) out->capacity = (uint32_t)v->num;
    }
    if ((v->type == MP_FLOAT || v->type == MP_INT) && k->n == 4 && !memcmp(k->s, "time", 4)) out->sim_time = v->num;
    if (v->type == MP_BOOL && k->n == 3 && !memcmp(k->s, "key", 3)) out->key = v->b;
    if (v->type == MP_BIN && k->n == 4 && !memcmp(k->s, "data", 4)) {
        out->data = v->s;
        out->len = v->n;
    }
}

int wire_read_message(const uint8_t *p, size_t n, wire_frame_view *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    mp_rd r = {p, p + n};
    mp_obj top;
    if (!mp_next(&r, &top) || top.type != MP_MAP) {
        snprintf(err, errlen, "message: expected a msgpack map");
        return -1;
    }
    for (uint32_t i = 0; i < top.n; i++) {
        mp_obj k, v;
        if (!mp_next(&r, &k) || k.type != MP_STR || !mp_next(&r, &v) || !mp_skip_body(&r, &v, 1)) {
            snprintf(err, errlen, "message: malformed map");
            return -1;
        }
        if (k.n == 4 && !memcmp(k.s, "type", 4) && v.type == MP_STR)
            snprintf(out->type, sizeof out->type, "%.*s", (int)(v.n < sizeof out->type ? v.n : sizeof out->type - 1),
                     (const char *)v.s);
        frame_field(&k, &v, out);
    }
    if (r.p != r.end) {
        snprintf(err, errlen, "message: %zu trailing bytes", (size_t)(r.end - r.p));
        return -1;
    }
    if (out->is_frame && !out->data) {
        snprintf(err, errlen, "frame: no 'data' payload");
        return -1;
    }
    return 0;
}

msg_buf *wire_encode_status(bool connected, const char *text) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 256, 3, "status");
    pk_kv_bool(&pk, "connected", connected);
    pk_kv_str(&pk, "text", text);
    return wbuf_finish(&b);
}

msg_buf *wire_encode_moved(uint32_t node, const char *text) {
    wbuf b;
    msgpack_packer pk;
    pk_begin(&b, &pk, 256, 5, "status");
    pk_kv_bool(&pk, "connected", true);
    pk_kv_bool(&pk, "moved", true);
    pk_kv_uint32(&pk, "node", node);
    pk_kv_str(&pk, "text", text);
    return wbuf_finish(&b);
}
