/* test_wire.c - C unit tests of the server's protocol core: the bounds-checked
 * command decoder (valid, invalid, adversarial and random input), the frame
 * encoder (alignment, quantization, id runs), the command queue, and the golden
 * vectors in protocol/golden shared with the JavaScript tests.
 *
 *   test_server_wire_san DIR                 run (DIR: protocol/golden)
 *   test_server_wire_san --write-golden DIR  (re)write the .msgpack files in DIR
 * Prints "N passed, N failed"; exits non-zero on any failure. */
#include <cJSON.h>
#include <math.h>
#include <msgpack.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus_codec.h"
#include "bus_http.h"
#include "command.h"
#include "fmt_num.h"
#include "frame_codec.h"
#include "hub.h"
#include "msgbuf.h"
#include "obstacle_mesh.h"
#include "rest_route.h"
#include "wire.h"
#include "queue.h"
#include "rate.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            g_pass++;                                                                                                  \
        } else {                                                                                                       \
            g_fail++;                                                                                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

/* ---- Building client messages with msgpack-c (as a client would) --------- */

typedef struct pk_ctx {
    wbuf b;
    msgpack_packer pk;
} pk_ctx;

static void pk_begin(pk_ctx *c) {
    wbuf_init(&c->b, 64, 0);
    msgpack_packer_init(&c->pk, &c->b, wbuf_msgpack_write);
}

static void pk_s(pk_ctx *c, const char *s) {
    msgpack_pack_str(&c->pk, strlen(s));
    msgpack_pack_str_body(&c->pk, s, strlen(s));
}

/* JSON value -> msgpack: integers as the smallest int, other numbers float64. */
static void pack_json(msgpack_packer *pk, const cJSON *j) {
    if (cJSON_IsObject(j)) {
        msgpack_pack_map(pk, (size_t)cJSON_GetArraySize(j));
        for (const cJSON *e = j->child; e; e = e->next) {
            msgpack_pack_str(pk, strlen(e->string));
            msgpack_pack_str_body(pk, e->string, strlen(e->string));
            pack_json(pk, e);
        }
    } else if (cJSON_IsArray(j)) {
        msgpack_pack_array(pk, (size_t)cJSON_GetArraySize(j));
        for (const cJSON *e = j->child; e; e = e->next) pack_json(pk, e);
    } else if (cJSON_IsString(j)) {
        msgpack_pack_str(pk, strlen(j->valuestring));
        msgpack_pack_str_body(pk, j->valuestring, strlen(j->valuestring));
    } else if (cJSON_IsBool(j)) {
        if (cJSON_IsTrue(j))
            msgpack_pack_true(pk);
        else
            msgpack_pack_false(pk);
    } else if (cJSON_IsNull(j)) {
        msgpack_pack_nil(pk);
    } else if (cJSON_IsNumber(j)) {
        double d = j->valuedouble;
        if (d == floor(d) && fabs(d) < 9e15)
            msgpack_pack_int64(pk, (int64_t)d);
        else
            msgpack_pack_double(pk, d);
    }
}

static int decode_json(const char *json, cmd *c, char *err) {
    cJSON *j = cJSON_Parse(json);
    if (!j) {
        snprintf(err, FS_ERROR_LEN, "bad test json");
        return -2;
    }
    pk_ctx p;
    pk_begin(&p);
    pack_json(&p.pk, j);
    cJSON_Delete(j);
    int rc = wire_decode_command(p.b.data, p.b.len, c, err, FS_ERROR_LEN);
    wbuf_free(&p.b);
    return rc;
}

/* ---- Decoder: valid commands ------------------------------------------------ */

static void test_decode_valid(void) {
    cmd c;
    char err[FS_ERROR_LEN];
    int rc = decode_json("{\"type\":\"push\",\"rid\":9,\"point\":[1,2,3],\"radius\":0.5,\"strength\":-3,"
                         "\"direction\":[0,0,2]}",
                         &c, err);
    CHECK(rc == 0, "push decodes: %s", err);
    CHECK(c.kind == CMD_PUSH && c.rid == 9, "push kind/rid");
    CHECK(c.u.push.point[2] == 3.0f && c.u.push.radius == 0.5f && c.u.push.strength == -3.0f, "push values");
    CHECK(c.u.push.dir[2] == 1.0f && c.u.push.dir[0] == 0.0f, "push direction normalised");

    rc = decode_json("{\"type\":\"set_param\",\"rid\":1,\"material\":\"water\",\"params\":{\"stiffness\":5,"
                     "\"friction\":0.5}}",
                     &c, err);
    CHECK(rc == 0 && c.kind == CMD_SET_PARAM && c.u.set_param.count == 2, "set_param map: %s", err);
    CHECK(!strcmp(c.u.set_param.param[1], "friction") && c.u.set_param.value[1] == 0.5f, "set_param values");

    rc = decode_json("{\"type\":\"step\",\"rid\":4294967295}", &c, err);
    CHECK(rc == 0 && c.u.step.steps == 1 && c.rid == 4294967295u, "step default and max rid: %s", err);
    rc = decode_json("{\"type\":\"cursor\",\"pos\":null}", &c, err);
    CHECK(rc == 0 && c.kind == CMD_CURSOR && !c.u.cursor.visible, "cursor hide: %s", err);
    rc = decode_json("{\"type\":\"emitter\",\"rid\":5,\"slot\":2,\"enabled\":false}", &c, err);
    CHECK(rc == 0 && !c.u.emitter.has_def && !c.u.emitter.enabled && c.u.emitter.slot == 2, "emitter toggle: %s", err);
    rc = decode_json("{\"type\":\"load_scene\",\"rid\":6,\"name\":\"drop\"}", &c, err);
    CHECK(rc == 0 && c.u.scene.particles == 0 && !strcmp(c.u.scene.name, "drop"), "load_scene: %s", err);
    rc = decode_json("{\"type\":\"pause\",\"rid\":7,\"sid\":\"Ab_9-xYzAb_9-xYzAb_9-x\"}", &c, err);
    CHECK(rc == 0 && c.rid == 7 && !strcmp(c.sid, "Ab_9-xYzAb_9-xYzAb_9-x"), "sid kept: %s", err);
    rc = decode_json("{\"type\":\"pause\",\"rid\":7}", &c, err);
    CHECK(rc == 0 && !c.sid[0], "no sid: empty");
    for (int s = 1; s <= 4; s *= 2) {
        char j[64];
        snprintf(j, sizeof j, "{\"type\":\"pace\",\"stride\":%d}", s);
        rc = decode_json(j, &c, err);
        CHECK(rc == 0 && c.kind == CMD_PACE && c.u.pace.stride == s && c.rid == 0, "pace %d (no rid needed): %s", s,
              err);
    }
}

/* ---- Decoder: invalid commands get reasons ---------------------------------- */

static void expect_error(const char *json, const char *want) {
    cmd c;
    char err[FS_ERROR_LEN] = "";
    int rc = decode_json(json, &c, err);
    CHECK(rc == -1 && strstr(err, want), "%s -> '%s' (want '%s')", json, err, want);
}

static void test_decode_invalid(void) {
    expect_error("{\"rid\":1}", "missing field 'type'");
    expect_error("{\"type\":\"pause\",\"rid\":1,\"sid\":\"short\"}", "'sid' must be 8 to 31 characters");
    expect_error("{\"type\":\"pause\",\"rid\":1,\"sid\":\"has space in it\"}", "'sid' must be 8 to 31 characters");
    expect_error("{\"type\":\"pause\",\"rid\":1,\"sid\":7}", "'sid' must be");
    expect_error("{\"type\":\"pause\",\"rid\":1,\"sid\":\"0123456789012345678901234567890123\"}", "'sid' must be");
    expect_error("{\"type\":\"pause\"}", "pause: missing field 'rid'");
    expect_error("{\"type\":\"explode\",\"rid\":3}", "unknown command 'explode'");
    expect_error("{\"type\":\"push\",\"point\":[0,0,0],\"radius\":1,\"strength\":1}", "missing field 'direction'");
    expect_error("{\"type\":\"push\",\"point\":[0,0],\"radius\":1,\"strength\":1,\"direction\":[0,1,0]}",
                 "'point' must be an array of 3 numbers");
    expect_error("{\"type\":\"push\",\"point\":[0,0,0],\"radius\":\"big\",\"strength\":1,\"direction\":[0,1,0]}",
                 "'radius' must be a number");
    expect_error("{\"type\":\"push\",\"point\":[0,0,0],\"radius\":-1,\"strength\":1,\"direction\":[0,1,0]}",
                 "'radius' must be in");
    expect_error("{\"type\":\"push\",\"point\":[0,0,0],\"radius\":1,\"strength\":1e9,\"direction\":[0,1,0]}",
                 "'strength' must be in");
    expect_error("{\"type\":\"push\",\"point\":[0,0,0],\"radius\":1,\"strength\":1,\"direction\":[0,0,0]}",
                 "must not be zero");
    expect_error("{\"type\":\"push\",\"point\":[1e30,0,0],\"radius\":1,\"strength\":1,\"direction\":[0,1,0]}",
                 "'point' must be 3 finite");
    expect_error("{\"type\":\"step\",\"steps\":0}", "'steps' must be an integer in [1, 1000]");
    expect_error("{\"type\":\"step\",\"steps\":2.5}", "'steps' must be an integer");
    expect_error("{\"type\":\"pace\",\"stride\":3}", "pace: 'stride' must be 1, 2 or 4");
    expect_error("{\"type\":\"pace\",\"stride\":8}", "pace: 'stride' must be 1, 2 or 4");
    expect_error("{\"type\":\"pace\",\"stride\":0}", "pace: 'stride' must be 1, 2 or 4");
    expect_error("{\"type\":\"pace\",\"stride\":1.5}", "pace: 'stride' must be 1, 2 or 4");
    expect_error("{\"type\":\"pace\"}", "pace: missing field 'stride'");
    expect_error("{\"type\":\"pause\",\"radius\":1}", "unexpected field 'radius'");
    expect_error("{\"type\":\"pause\",\"colour\":1}", "unknown field 'colour'");
    expect_error("{\"type\":\"pause\",\"rid\":-1}", "'rid' must be");
    expect_error("{\"type\":\"set_param\",\"material\":\"water\"}", "give either");
    expect_error("{\"type\":\"set_param\",\"material\":\"water\",\"param\":\"stiffness\"}", "go together");
    expect_error("{\"type\":\"load_scene\",\"name\":\"drop\",\"particles\":-5}", "'particles' must be");
    expect_error("{\"type\":\"emitter\",\"slot\":99,\"enabled\":true}", "'slot' must be");
    expect_error("{\"type\":\"cursor\",\"pos\":[1,2,\"x\"]}", "'pos' must be");
    expect_error("{\"type\":\"pause\",\"type\":\"resume\"}", "given twice");
    expect_error("{\"type\":\"load_scene\",\"name\":\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"}",
                 "'name' must be a string");
    expect_error("{\"type\":\"body_create\",\"shape\":\"cone\",\"size\":[1,1,1],\"pos\":[0,0,0]}",
                 "'shape' must be sphere, box, capsule or mesh");
    expect_error("{\"type\":\"body_create\",\"shape\":\"box\",\"size\":[1,0,1],\"pos\":[0,0,0]}",
                 "'size' components must be in");
    expect_error("{\"type\":\"body_create\",\"shape\":\"mesh\",\"pos\":[0,0,0]}", "missing field 'mesh'");
    expect_error("{\"type\":\"body_create\",\"shape\":\"mesh\",\"mesh\":1,\"size\":[1,1,1],\"pos\":[0,0,0]}",
                 "takes no 'size'");
    expect_error("{\"type\":\"body_create\",\"shape\":\"sphere\",\"mesh\":1,\"size\":[1,0,0],\"pos\":[0,0,0]}",
                 "'mesh' and 'scale' are a mesh body's");
    expect_error("{\"type\":\"body_create\",\"shape\":\"sphere\",\"pos\":[0,0,0]}", "missing field 'size'");
    expect_error("{\"type\":\"body_create\",\"shape\":\"mesh\",\"mesh\":0,\"pos\":[0,0,0]}",
                 "'mesh' must be a mesh id");
    expect_error("{\"type\":\"body_create\",\"shape\":\"sphere\",\"size\":[1,0,0],\"pos\":[0,0,0],"
                 "\"rot\":[0,0,0,0]}",
                 "'rot' must not be zero");
    expect_error("{\"type\":\"body_create\",\"shape\":\"sphere\",\"size\":[1,0,0],\"pos\":[0,0,0],"
                 "\"rot\":[1,0,0]}",
                 "'rot' must be an array of 4 numbers");
    expect_error("{\"type\":\"body_create\",\"shape\":\"sphere\",\"size\":[1,0,0],\"pos\":[0,0,0],"
                 "\"density\":-1}",
                 "'density' must be in");
    expect_error("{\"type\":\"body_impulse\",\"id\":1,\"point\":[0,0,0],\"impulse\":[1e9,0,0]}",
                 "'impulse' must be 3 numbers");
    expect_error("{\"type\":\"body_drag\",\"id\":-2,\"target\":[0,0,0]}", "'id' must be an integer");
    expect_error("{\"type\":\"body_grab\",\"id\":1,\"point\":[0,0,0]}", "missing field 'target'");
}

/* ---- Decoder: adversarial bytes ------------------------------------------- */

static void expect_bytes_error(const uint8_t *p, size_t n, const char *want, const char *what) {
    cmd c;
    char err[FS_ERROR_LEN] = "";
    int rc = wire_decode_command(p, n, &c, err, sizeof err);
    CHECK(rc == -1 && strstr(err, want), "%s -> '%s' (want '%s')", what, err, want);
}

static void test_decode_adversarial(void) {
    static const uint8_t huge_map[] = {0xdf, 0xff, 0xff, 0xff, 0xff};
    static const uint8_t huge_str[] = {0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a'};
    static const uint8_t huge_bin[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xc6, 0x7f, 0xff, 0xff, 0xff};
    static const uint8_t huge_ext[] = {0x81, 0xa1, 'x', 0xc9, 0xff, 0xff, 0xff, 0xf0, 0x01};
    static const uint8_t never[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xc1};
    static const uint8_t trailing[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xa5, 'p', 'a', 'u', 's', 'e', 0x00};
    static const uint8_t nul_in_str[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xa5, 'p', 'a', 0, 's', 'e'};
    expect_bytes_error(huge_map, sizeof huge_map, "malformed", "map declaring 4G entries");
    expect_bytes_error(huge_str, sizeof huge_str, "malformed", "str declaring 4 GB");
    expect_bytes_error(huge_bin, sizeof huge_bin, "malformed", "bin declaring 2 GB");
    expect_bytes_error(huge_ext, sizeof huge_ext, "malformed", "ext declaring 4 GB");
    expect_bytes_error(never, sizeof never, "malformed", "0xc1");
    expect_bytes_error(trailing, sizeof trailing, "trailing", "trailing byte");
    expect_bytes_error(nul_in_str, sizeof nul_in_str, "'type' must be a string", "NUL inside a string");
    expect_bytes_error((const uint8_t *)"", 0, "malformed", "empty message");
    /* Deep nesting under an unknown key is refused, not recursed into. */
    uint8_t deep[300];
    size_t k = 0;
    deep[k++] = 0x81;
    deep[k++] = 0xa1;
    deep[k++] = 'z';
    for (int i = 0; i < 200; i++) deep[k++] = 0x91;
    deep[k++] = 0xc0;
    expect_bytes_error(deep, k, "too deep", "200 nested arrays");
    /* Oversized. */
    uint8_t *big = calloc(WIRE_MAX_MSG + 1, 1);
    expect_bytes_error(big, WIRE_MAX_MSG + 1, "too large", "4097 bytes");
    free(big);
    /* NaN and infinity. */
    pk_ctx p;
    pk_begin(&p);
    msgpack_pack_map(&p.pk, 3);
    pk_s(&p, "type");
    pk_s(&p, "set_param");
    pk_s(&p, "material");
    pk_s(&p, "water");
    pk_s(&p, "params");
    msgpack_pack_map(&p.pk, 1);
    pk_s(&p, "stiffness");
    msgpack_pack_double(&p.pk, NAN);
    expect_bytes_error(p.b.data, p.b.len, "must be finite", "NaN parameter");
    wbuf_free(&p.b);
    pk_begin(&p);
    msgpack_pack_map(&p.pk, 5);
    pk_s(&p, "type");
    pk_s(&p, "push");
    pk_s(&p, "point");
    msgpack_pack_array(&p.pk, 3);
    msgpack_pack_double(&p.pk, INFINITY);
    msgpack_pack_double(&p.pk, 0);
    msgpack_pack_double(&p.pk, 0);
    pk_s(&p, "radius");
    msgpack_pack_float(&p.pk, 1);
    pk_s(&p, "strength");
    msgpack_pack_float(&p.pk, 1);
    pk_s(&p, "direction");
    msgpack_pack_array(&p.pk, 3);
    msgpack_pack_int(&p.pk, 0);
    msgpack_pack_int(&p.pk, 1);
    msgpack_pack_int(&p.pk, 0);
    expect_bytes_error(p.b.data, p.b.len, "finite", "infinite point");
    wbuf_free(&p.b);
}

/* Every prefix of a valid message, and many random mutations, must be
 * handled without a crash or an out-of-bounds read (ASan checks that). */
/* A decoder result is either a command of a known kind (rc 0) or a refusal
 * with a reason: a non-empty, terminated message (rc -1). */
static bool decode_result_ok(int rc, const cmd *c, const char *err, size_t errlen) {
    if (rc == 0) return c->kind > CMD_NONE && c->kind < CMD_KIND_COUNT;
    return rc == -1 && err[0] && memchr(err, 0, errlen) != NULL;
}

static void test_decode_fuzz(void) {
    pk_ctx p;
    pk_begin(&p);
    cJSON *j = cJSON_Parse("{\"type\":\"emitter\",\"rid\":8,\"slot\":0,\"pos\":[0.5,1.5,0.5],\"direction\":[0,-1,0],"
                           "\"speed\":2,\"radius\":0.05,\"rate\":500,\"cap\":1000,\"material\":\"water\","
                           "\"enabled\":true}");
    pack_json(&p.pk, j);
    cJSON_Delete(j);
    cmd c;
    char err[FS_ERROR_LEN];
    CHECK(wire_decode_command(p.b.data, p.b.len, &c, err, sizeof err) == 0, "emitter decodes: %s", err);
    int prefixes_refused = 0;
    for (size_t n = 0; n < p.b.len; n++) {
        uint8_t *copy = malloc(n ? n : 1); /* exact size: ASan catches any over-read */
        memcpy(copy, p.b.data, n);
        prefixes_refused += wire_decode_command(copy, n, &c, err, sizeof err) == -1;
        free(copy);
    }
    CHECK(prefixes_refused == (int)p.b.len, "every strict prefix refused (%d of %zu)", prefixes_refused, p.b.len);
    unsigned seed = 12345;
    int ok = 0, refused = 0, malformed = 0;
    for (int it = 0; it < 200000; it++) {
        size_t n = p.b.len;
        uint8_t *m = malloc(n);
        memcpy(m, p.b.data, n);
        int flips = 1 + (int)((seed = seed * 1103515245u + 12345u) >> 16) % 4;
        for (int f = 0; f < flips; f++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % n;
            seed = seed * 1103515245u + 12345u;
            m[at] = (uint8_t)(seed >> 16);
        }
        seed = seed * 1103515245u + 12345u;
        size_t len = (seed >> 20) % 4 == 0 ? (seed >> 4) % (n + 1) : n;
        int rc = wire_decode_command(m, len, &c, err, sizeof err);
        if (rc == 0)
            ok++;
        else
            refused++;
        malformed += !decode_result_ok(rc, &c, err, sizeof err);
        free(m);
    }
    /* Byte flips in an emitter command: some still decode (a changed
     * number), most are refused; every result is a command or a reason. */
    CHECK(ok > 0 && refused > ok && malformed == 0, "fuzz: %d accepted, %d refused, %d malformed results", ok, refused,
          malformed);
    /* Random garbage. */
    int garbage_refused = 0;
    malformed = 0;
    for (int it = 0; it < 100000; it++) {
        uint8_t m[64];
        size_t n = (size_t)(it % 64);
        for (size_t i = 0; i < n; i++) {
            seed = seed * 1103515245u + 12345u;
            m[i] = (uint8_t)(seed >> 16);
        }
        if (n) m[0] = (uint8_t)(0x80 | (m[0] & 0x0f)); /* mostly fixmaps */
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, m, n);
        int rc = wire_decode_command(copy, n, &c, err, sizeof err);
        garbage_refused += rc != 0;
        malformed += !decode_result_ok(rc, &c, err, sizeof err);
        free(copy);
    }
    /* Garbage has no 'type' a schema knows (and fixmaps of random keys): all
     * of it is refused, each with a reason. */
    CHECK(garbage_refused == 100000 && malformed == 0, "random garbage: %d of 100000 refused, %d malformed results",
          garbage_refused, malformed);
    wbuf_free(&p.b);
}

/* ---- Frame encoder ------------------------------------------------------------- */

static const msgpack_object *map_get(const msgpack_object *m, const char *key) {
    if (m->type != MSGPACK_OBJECT_MAP) return NULL;
    for (uint32_t i = 0; i < m->via.map.size; i++) {
        const msgpack_object_kv *kv = &m->via.map.ptr[i];
        if (kv->key.type == MSGPACK_OBJECT_STR && kv->key.via.str.size == strlen(key) &&
            !memcmp(kv->key.via.str.ptr, key, strlen(key)))
            return &kv->val;
    }
    return NULL;
}

/* The frame message: the head's fields, seq, key, the probes (a map of name
 * to value, only when there are some), and the v2 payload as the bin `data`,
 * 4-byte aligned in the message whatever the cursors and probes before it. */
static void test_frame_encoder(void) {
    uint8_t payload[300];
    for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)(i * 7);
    wire_cursor cur[3] = {{1, {0.5f, 0.5f, 0.5f}}, {2, {0.1f, 0.2f, 0.3f}}, {12, {0.1f, 0.2f, 0.3f}}};
    wire_probe pr[2] = {{"H1", 0.25f}, {"P.long-name_2", 11200.5f}};
    for (size_t len = 0; len < sizeof payload; len += 37) {
        for (int nc = 0; nc <= 3; nc++) {
            const int np = nc % 2 ? 2 : 0;
            wire_frame_head h = {.tick = 5,
                                 .sim_time = 0.25,
                                 .box_min = {0, 0, 0},
                                 .box_max = {1, 2, 4},
                                 .count = (int)len,
                                 .cursors = cur,
                                 .cursor_count = nc,
                                 .probes = pr,
                                 .probe_count = np};
            msg_buf *m = wire_encode_frame(&h, 77, nc == 1, payload, len);
            CHECK(m != NULL, "frame encodes (len %zu)", len);
            if (!m) continue;
            msgpack_unpacked u;
            msgpack_unpacked_init(&u);
            size_t off = 0;
            int rc = msgpack_unpack_next(&u, (const char *)m->data, m->len, &off);
            CHECK(rc == MSGPACK_UNPACK_SUCCESS && off == m->len, "frame is one msgpack object");
            const msgpack_object *data = map_get(&u.data, "data"), *seq = map_get(&u.data, "seq"),
                                 *key = map_get(&u.data, "key"), *nn = map_get(&u.data, "n"),
                                 *probes = map_get(&u.data, "probes");
            CHECK(data && seq && key && nn && data->type == MSGPACK_OBJECT_BIN && seq->via.u64 == 77 &&
                      key->via.boolean == (nc == 1) && nn->via.u64 == len,
                  "frame fields (len %zu, cursors %d)", len, nc);
            if (np == 0) CHECK(probes == NULL, "no probes, no field");
            if (np > 0) {
                bool ok = probes && probes->type == MSGPACK_OBJECT_MAP && probes->via.map.size == (uint32_t)np;
                for (int k = 0; ok && k < np; k++) {
                    const msgpack_object *v = map_get(probes, pr[k].name);
                    ok = v && v->type == MSGPACK_OBJECT_FLOAT32 && (float)v->via.f64 == pr[k].value &&
                         probes->via.map.ptr[k].key.via.str.size == strlen(pr[k].name);
                }
                CHECK(ok, "probes: name -> float32 value, in order (len %zu)", len);
            }
            if (data && data->type == MSGPACK_OBJECT_BIN) {
                size_t at = (size_t)((const uint8_t *)data->via.bin.ptr - m->data);
                CHECK(len == 0 || at % 4 == 0, "data 4-byte aligned (at %zu, len %zu, cursors %d, probes %d)", at, len,
                      nc, np);
                CHECK(data->via.bin.size == len && !memcmp(data->via.bin.ptr, payload, len), "data is the payload");
            }
            msgpack_unpacked_destroy(&u);
            msg_buf_unref(m);
        }
    }
}

/* ---- Command queue ----------------------------------------------------------- */

static bool heavy(const cmd *c) {
    return rate_cmd_heavy(c->kind);
}

static void test_queue(void) {
    cmd_queue q;
    CHECK(cmd_queue_init(&q, 8, 2) == 0, "queue init");
    cmd c;
    memset(&c, 0, sizeof c);
    int pushed = 0;
    for (int i = 0; i < 20; i++) {
        c.rid = (uint32_t)i;
        pushed += cmd_queue_push(&q, &c, false);
    }
    CHECK(pushed == 6, "client commands stop at cap - reserve (%d)", pushed);
    CHECK(cmd_queue_push(&q, &c, true) && cmd_queue_push(&q, &c, true) && !cmd_queue_push(&q, &c, true),
          "internal commands use the reserve, then stop");
    cmd out[16];
    int n = cmd_queue_pop(&q, out, 16);
    CHECK(n == 8 && out[0].rid == 0 && out[5].rid == 5, "FIFO order");
    /* popping through a scene load: it is the last of the batch, those behind it stay queued, in order */
    for (int i = 0; i < 5; i++) {
        c.rid = (uint32_t)(100 + i);
        c.kind = i == 1 || i == 2 ? CMD_LOAD_SCENE : CMD_PUSH;
        cmd_queue_push(&q, &c, false);
    }
    n = cmd_queue_pop_through(&q, out, 16, heavy);
    CHECK(n == 2 && out[0].rid == 100 && out[1].rid == 101, "the batch ends with the first scene load (%d)", n);
    n = cmd_queue_pop_through(&q, out, 16, heavy);
    CHECK(n == 1 && out[0].rid == 102, "the next batch is the second scene load alone (%d)", n);
    n = cmd_queue_pop_through(&q, out, 16, heavy);
    CHECK(n == 2 && out[0].rid == 103 && out[1].rid == 104, "then the rest (%d)", n);
    cmd_queue_destroy(&q);
}

/* ---- Hub: broadcast history, newest frame, reply ring ------------------------ */

static void test_hub(void) {
    hub h;
    CHECK(hub_init(&h) == 0, "hub init");
    for (int i = 0; i < 100; i++) {
        uint8_t b = (uint8_t)i;
        hub_publish_bcast(&h, msg_buf_from_bytes(&b, 1));
    }
    msg_buf *out[HUB_BCAST_RING];
    bool lost = false;
    uint64_t next = 0;
    int k = hub_take_bcast(&h, &next, out, HUB_BCAST_RING, &lost);
    CHECK(lost && k == HUB_BCAST_RING && next == 100, "a reader 100 behind loses the oldest (k %d, next %llu)", k,
          (unsigned long long)next);
    CHECK(k > 0 && out[0]->data[0] == 100 - HUB_BCAST_RING && out[k - 1]->data[0] == 99, "keeps the newest, in order");
    for (int i = 0; i < k; i++) msg_buf_unref(out[i]);
    k = hub_take_bcast(&h, &next, out, HUB_BCAST_RING, &lost);
    CHECK(k == 0 && !lost, "nothing new");
    /* framesets: a ring of the newest HUB_FRAME_RING; a reader behind gets
     * the newest ones, oldest first, each once */
    for (uint32_t i = 1; i <= 20; i++) {
        uint8_t b = (uint8_t)i;
        frameset fs = {.epoch = 1, .seq = i, .count = 2};
        fs.coding[0] = (frame_coding){.base = FC_NONE, .prev = FC_NONE, .msg = msg_buf_from_bytes(&b, 1)};
        fs.coding[1] = (frame_coding){.base = i - 1, .prev = i - 2, .msg = msg_buf_from_bytes(&b, 1)};
        hub_publish_frameset(&h, &fs);
        CHECK(fs.count == 0, "the hub took the frameset's references");
    }
    frameset got_fs[HUB_FRAME_RING];
    uint64_t fnext = 0;
    int nf = hub_take_framesets(&h, &fnext, got_fs, HUB_FRAME_RING);
    CHECK(nf == HUB_FRAME_RING && fnext == 20 && got_fs[0].seq == 20 - HUB_FRAME_RING + 1 && got_fs[nf - 1].seq == 20 &&
              got_fs[nf - 1].coding[1].msg->data[0] == 20,
          "a reader 20 behind gets the newest %d framesets in order (got %d, next %llu)", HUB_FRAME_RING, nf,
          (unsigned long long)fnext);
    for (int i = 0; i < nf; i++) frameset_unref(&got_fs[i]);
    CHECK(hub_take_framesets(&h, &fnext, got_fs, HUB_FRAME_RING) == 0, "no frameset twice");
    frame_wants fw = {.clients = 3, .key_requests = 7, .stride2 = true}, fr;
    hub_set_frame_wants(&h, &fw);
    hub_get_frame_wants(&h, &fr);
    CHECK(fr.clients == 3 && fr.key_requests == 7 && fr.stride2 && !fr.stride4 && !fr.bridge, "wants cross the hub");
    int posted = 0;
    for (int i = 0; i < HUB_REPLY_RING + 10; i++) {
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.rid = (uint32_t)i;
        r.bodies = calloc(1, sizeof *r.bodies); /* dropped replies must free what they carry */
        hub_post_reply(&h, &r);
        posted++;
    }
    cmd_reply rs[64];
    int got = 0, n;
    while ((n = hub_take_replies(&h, rs, 64)) > 0) {
        for (int i = 0; i < n; i++) cmd_reply_free_payload(&rs[i]);
        got += n;
    }
    CHECK(posted == HUB_REPLY_RING + 10 && got == HUB_REPLY_RING && h.replies_dropped == 10,
          "reply ring bounded: %d kept, %llu dropped", got, (unsigned long long)h.replies_dropped);
    hub_destroy(&h); /* LSan: the ring's last references are freed */
}

/* ---- Golden vectors ------------------------------------------------------------- */

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc((size_t)n + 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    if (b) b[n] = 0;
    fclose(f);
    if (len) *len = (size_t)n;
    return b;
}

static float jnum(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return v ? (float)v->valuedouble : 0.0f;
}

static fs_vec3 jvec(const cJSON *a, int at) {
    return (fs_vec3){(float)cJSON_GetArrayItem(a, at)->valuedouble, (float)cJSON_GetArrayItem(a, at + 1)->valuedouble,
                     (float)cJSON_GetArrayItem(a, at + 2)->valuedouble};
}

static void world_from_json(const cJSON *w, world_info *wi) {
    memset(wi, 0, sizeof *wi);
    wi->box_min = jvec(cJSON_GetObjectItem(w, "box_min"), 0);
    wi->box_max = jvec(cJSON_GetObjectItem(w, "box_max"), 0);
    wi->gravity = jvec(cJSON_GetObjectItem(w, "gravity"), 0);
    wi->h = jnum(w, "h");
    wi->spacing = jnum(w, "spacing");
    wi->dt = jnum(w, "dt");
    wi->frame_step = jnum(w, "frame_step");
    snprintf(wi->scene, sizeof wi->scene, "%s", cJSON_GetObjectItem(w, "scene")->valuestring);
    snprintf(wi->solver, sizeof wi->solver, "%s", cJSON_GetObjectItem(w, "solver")->valuestring);
    wi->particles = (int)jnum(w, "particles");
    wi->scene_particles = (int)jnum(w, "scene_particles");
    wi->capacity = (int)jnum(w, "capacity");
    wi->paused = cJSON_IsTrue(cJSON_GetObjectItem(w, "paused"));
    const cJSON *mats = cJSON_GetObjectItem(w, "materials");
    wi->material_count = cJSON_GetArraySize(mats);
    for (int m = 0; m < wi->material_count; m++) {
        const cJSON *mo = cJSON_GetArrayItem(mats, m);
        snprintf(wi->material[m], CMD_NAME_LEN, "%s", cJSON_GetObjectItem(mo, "name")->valuestring);
        const cJSON *ps = cJSON_GetObjectItem(mo, "params");
        for (int p = 0; p < FS_P_COUNT; p++) { /* missing ones (a lagging stand-in table) read 0 */
            const cJSON *v = cJSON_GetArrayItem(ps, p);
            wi->param[m][p] = v ? (float)v->valuedouble : 0.0f;
        }
    }
}

/* Builds the message a server-to-client vector describes, with the real encoder. */
static msg_buf *encode_vector(const char *file, const cJSON *in, fs_param_info *pinfo, wire_static *st) {
    world_info wi;
    const cJSON *w = cJSON_GetObjectItem(in, "world");
    if (w) world_from_json(w, &wi);
    if (!strncmp(file, "s2c_frame", 9)) {
        const cJSON *parts = cJSON_GetObjectItem(in, "particles"), *b = cJSON_GetObjectItem(in, "bounds");
        int n = cJSON_GetArraySize(parts);
        float x[16], y[16], z[16], temp[16];
        uint8_t mat[16];
        uint32_t id[16];
        int32_t order[16];
        for (int k = 0; k < n; k++) { /* internal order: rotated by 2 */
            int i = (k + 2) % n;
            const cJSON *p = cJSON_GetArrayItem(parts, k);
            fs_vec3 v = jvec(cJSON_GetObjectItem(p, "pos"), 0);
            x[i] = v.x;
            y[i] = v.y;
            z[i] = v.z;
            mat[i] = (uint8_t)jnum(p, "mat");
            temp[i] = (float)jnum(p, "temp");
            id[i] = (uint32_t)jnum(p, "id");
            order[k] = i;
        }
        const cJSON *cs = cJSON_GetObjectItem(in, "cursors");
        wire_cursor cur[4];
        int nc = cJSON_GetArraySize(cs);
        for (int c = 0; c < nc && c < 4; c++) {
            const cJSON *co = cJSON_GetArrayItem(cs, c);
            cur[c].client = (uint32_t)jnum(co, "id");
            fs_vec3 v = jvec(cJSON_GetObjectItem(co, "pos"), 0);
            cur[c].pos[0] = v.x;
            cur[c].pos[1] = v.y;
            cur[c].pos[2] = v.z;
        }
        const cJSON *bs = cJSON_GetObjectItem(in, "bodies");
        wire_body bodies[4];
        int nb = cJSON_GetArraySize(bs);
        for (int k = 0; k < nb && k < 4; k++) {
            const cJSON *bo = cJSON_GetArrayItem(bs, k);
            bodies[k].id = (uint32_t)jnum(bo, "id");
            bodies[k].shape = (int)jnum(bo, "shape");
            bodies[k].is_static = cJSON_IsTrue(cJSON_GetObjectItem(bo, "static"));
            bodies[k].grabbed_by = (uint32_t)jnum(bo, "grabbed_by");
            fs_vec3 sz = jvec(cJSON_GetObjectItem(bo, "size"), 0), ps = jvec(cJSON_GetObjectItem(bo, "pos"), 0);
            const cJSON *rot = cJSON_GetObjectItem(bo, "rot");
            for (int a = 0; a < 3; a++) {
                bodies[k].size[a] = a == 0 ? sz.x : a == 1 ? sz.y : sz.z;
                bodies[k].pos[a] = a == 0 ? ps.x : a == 1 ? ps.y : ps.z;
            }
            for (int a = 0; a < 4; a++) bodies[k].rot[a] = (float)cJSON_GetArrayItem(rot, a)->valuedouble;
        }
        wire_frame_head head = {.bodies = bodies,
                                .body_count = nb < 4 ? nb : 4,
                                .tick = (uint64_t)jnum(in, "tick"),
                                .sim_time = cJSON_GetObjectItem(in, "time")->valuedouble,
                                .paused = cJSON_IsTrue(cJSON_GetObjectItem(in, "paused")),
                                .box_min = jvec(b, 0),
                                .box_max = jvec(b, 3),
                                .count = n,
                                .cursors = cur,
                                .cursor_count = nc};
        /* the particles: a keyframe (seq 1 of stream 1) on the vector's grid */
        fs_vec3 lo = jvec(b, 0), hi = jvec(b, 3);
        float blo[3] = {lo.x, lo.y, lo.z}, bhi[3] = {hi.x, hi.y, hi.z};
        fc_grid grid;
        char why[128];
        if (fc_grid_make(&grid, blo, bhi, (float)jnum(in, "step"), why, sizeof why)) return NULL;
        fc_input fin = {.count = n, .id = id, .x = x, .y = y, .z = z, .material = mat, .temp = temp, .order = order};
        fc_encoder *e = fc_encoder_create(16, 1);
        uint8_t payload[4096];
        size_t len = 0;
        if (e && !fc_encoder_push(e, 1, &grid, &fin, why, sizeof why))
            len = fc_encode(e, 1, FC_NONE, FC_NONE, payload, sizeof payload, why, sizeof why);
        fc_encoder_destroy(e);
        CHECK(len > 0, "s2c_frame: the keyframe encodes (%s)", len ? "ok" : why);
        return len ? wire_encode_frame(&head, 1, true, payload, len) : NULL;
    }
    if (!strcmp(file, "s2c_hello.msgpack")) {
        const cJSON *ps = cJSON_GetObjectItem(in, "params"), *sj = cJSON_GetObjectItem(in, "static");
        if (cJSON_GetArraySize(ps) != FS_P_COUNT) { /* gen_vectors.py's stand-in table lags the core's */
            CHECK(false, "s2c_hello: vectors.json has %d parameters, the core %d: update gen_vectors.py",
                  cJSON_GetArraySize(ps), FS_P_COUNT);
            return NULL;
        }
        for (int p = 0; p < FS_P_COUNT; p++) {
            const cJSON *po = cJSON_GetArrayItem(ps, p);
            pinfo[p].name = cJSON_GetObjectItem(po, "name")->valuestring;
            pinfo[p].unit = cJSON_GetObjectItem(po, "unit")->valuestring;
            pinfo[p].doc = cJSON_GetObjectItem(po, "doc")->valuestring;
            pinfo[p].min = jnum(po, "min");
            pinfo[p].max = jnum(po, "max");
            pinfo[p].is_flag = cJSON_IsTrue(cJSON_GetObjectItem(po, "flag"));
            st->param[p] = &pinfo[p];
        }
        const cJSON *sc = cJSON_GetObjectItem(sj, "scenes");
        st->scene_count = cJSON_GetArraySize(sc);
        for (int i = 0; i < st->scene_count; i++) st->scene[i] = cJSON_GetArrayItem(sc, i)->valuestring;
        st->tick_hz = jnum(sj, "tick_hz");
        st->frame_hz = jnum(sj, "frame_hz");
        const cJSON *sv = cJSON_GetObjectItem(sj, "solvers");
        st->solver_count = cJSON_GetArraySize(sv) < FS_SOLVER_COUNT ? cJSON_GetArraySize(sv) : FS_SOLVER_COUNT;
        for (int i = 0; i < st->solver_count; i++) st->solver[i] = cJSON_GetArrayItem(sv, i)->valuestring;
        st->auth_required = cJSON_IsTrue(cJSON_GetObjectItem(sj, "auth_required"));
        st->max_msg = (int)jnum(sj, "max_msg");
        st->rate_per_s = (int)jnum(sj, "rate_per_s");
        st->rate_burst = (int)jnum(sj, "rate_burst");
        return wire_encode_hello(&wi, st, (uint32_t)jnum(in, "client_id"), cJSON_GetObjectItem(in, "room")->valuestring,
                                 cJSON_GetObjectItem(in, "role")->valuestring);
    }
    if (!strcmp(file, "s2c_param.msgpack"))
        return wire_encode_param_bcast(&wi, st, (int)jnum(in, "material"), (uint32_t)jnum(in, "by"),
                                       (uint64_t)jnum(in, "tick"));
    if (!strcmp(file, "s2c_scene.msgpack"))
        return wire_encode_scene_bcast(&wi, (uint32_t)jnum(in, "by"), (uint64_t)jnum(in, "tick"));
    if (!strcmp(file, "s2c_solver.msgpack"))
        return wire_encode_solver_bcast(cJSON_GetObjectItem(in, "solver")->valuestring, (uint32_t)jnum(in, "by"),
                                        (uint64_t)jnum(in, "tick"));
    if (!strcmp(file, "s2c_obstacles.msgpack")) {
        wire_obstacle o[4];
        int n = 0;
        for (const cJSON *e = cJSON_GetObjectItem(in, "obstacles")->child; e && n < 4; e = e->next, n++) {
            const cJSON *lo = cJSON_GetObjectItem(e, "lo"), *hi = cJSON_GetObjectItem(e, "hi");
            o[n] = (wire_obstacle){
                .id = (uint32_t)jnum(e, "id"),
                .hash = strtoull(cJSON_GetObjectItem(e, "hash")->valuestring, NULL, 16),
                .lo = {(float)cJSON_GetArrayItem(lo, 0)->valuedouble, (float)cJSON_GetArrayItem(lo, 1)->valuedouble,
                       (float)cJSON_GetArrayItem(lo, 2)->valuedouble},
                .hi = {(float)cJSON_GetArrayItem(hi, 0)->valuedouble, (float)cJSON_GetArrayItem(hi, 1)->valuedouble,
                       (float)cJSON_GetArrayItem(hi, 2)->valuedouble},
                .triangles = (int)jnum(e, "triangles"),
                .vertices = (int)jnum(e, "vertices"),
                .closed = cJSON_IsTrue(cJSON_GetObjectItem(e, "closed"))};
        }
        return wire_encode_obstacles_bcast(o, n, (uint64_t)jnum(in, "version"), (uint32_t)jnum(in, "by"),
                                           (uint64_t)jnum(in, "tick"));
    }
    if (!strcmp(file, "s2c_state.msgpack"))
        return wire_encode_state_bcast(cJSON_IsTrue(cJSON_GetObjectItem(in, "paused")), (uint32_t)jnum(in, "by"),
                                       (uint64_t)jnum(in, "tick"));
    if (!strncmp(file, "s2c_reply", 9)) {
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.rid = (uint32_t)jnum(in, "rid");
        const char *k = cJSON_GetObjectItem(in, "cmd")->valuestring;
        for (int i = 0; i < CMD_KIND_COUNT; i++)
            if (!strcmp(cmd_kind_name((cmd_kind)i), k)) r.kind = (cmd_kind)i;
        r.ok = cJSON_IsTrue(cJSON_GetObjectItem(in, "ok"));
        r.tick = (uint64_t)jnum(in, "tick");
        r.value = (int64_t)jnum(in, "value");
        const cJSON *e = cJSON_GetObjectItem(in, "error"), *code = cJSON_GetObjectItem(in, "code");
        if (e) snprintf(r.error, sizeof r.error, "%s", e->valuestring);
        if (code) r.code = (reply_code)reply_code_find(code->valuestring);
        return wire_encode_reply(&r);
    }
    return NULL;
}

static void check_c2s(const char *file, const cJSON *in, const uint8_t *bytes, size_t len) {
    cmd c;
    char err[FS_ERROR_LEN] = "";
    int rc = wire_decode_command(bytes, len, &c, err, sizeof err);
    CHECK(rc == 0, "%s decodes: %s", file, err);
    if (rc) return;
    const char *type = cJSON_GetObjectItem(in, "type")->valuestring;
    CHECK(!strcmp(cmd_kind_name(c.kind), type), "%s kind %s", file, cmd_kind_name(c.kind));
    CHECK(c.rid == (uint32_t)jnum(in, "rid"), "%s rid", file);
    switch (c.kind) {
    case CMD_PUSH:
        CHECK(c.u.push.radius == jnum(in, "radius") && c.u.push.strength == jnum(in, "strength") &&
                  c.u.push.point[1] == (float)cJSON_GetArrayItem(cJSON_GetObjectItem(in, "point"), 1)->valuedouble,
              "%s values", file);
        break;
    case CMD_SET_PARAM:
        CHECK(!strcmp(c.u.set_param.material, cJSON_GetObjectItem(in, "material")->valuestring), "%s material", file);
        if (cJSON_GetObjectItem(in, "params"))
            CHECK(c.u.set_param.count == cJSON_GetArraySize(cJSON_GetObjectItem(in, "params")), "%s count", file);
        else
            CHECK(c.u.set_param.count == 1 && c.u.set_param.value[0] == jnum(in, "value"), "%s value", file);
        break;
    case CMD_LOAD_SCENE:
        CHECK(c.u.scene.particles == (int)jnum(in, "particles") &&
                  c.u.scene.solver == fs_solver_find(cJSON_GetObjectItem(in, "solver")->valuestring),
              "%s particles and solver", file);
        break;
    case CMD_SET_SOLVER:
        CHECK(c.u.solver.solver == fs_solver_find(cJSON_GetObjectItem(in, "name")->valuestring), "%s solver", file);
        break;
    case CMD_HEATER:
        CHECK(c.u.heater.slot == (int)jnum(in, "slot") && c.u.heater.has_def && c.u.heater.kind == FS_HEAT_FLOOR &&
                  c.u.heater.temperature == (float)jnum(in, "temperature") &&
                  c.u.heater.rate == (float)jnum(in, "rate"),
              "%s values", file);
        break;
    case CMD_HEAT:
        CHECK(c.u.heat.radius == (float)jnum(in, "radius") && c.u.heat.rate == (float)jnum(in, "rate") &&
                  c.u.heat.duration == (float)jnum(in, "duration") &&
                  c.u.heat.point[1] == (float)cJSON_GetArrayItem(cJSON_GetObjectItem(in, "point"), 1)->valuedouble,
              "%s values", file);
        break;
    case CMD_STEP:
        CHECK(c.u.step.steps == (int)jnum(in, "steps"), "%s steps", file);
        break;
    case CMD_EMITTER:
        CHECK(c.u.emitter.slot == (int)jnum(in, "slot") &&
                  c.u.emitter.enabled == cJSON_IsTrue(cJSON_GetObjectItem(in, "enabled")),
              "%s slot/enabled", file);
        if (cJSON_GetObjectItem(in, "rate"))
            CHECK(c.u.emitter.has_def && c.u.emitter.rate == jnum(in, "rate") &&
                      c.u.emitter.cap == (int)jnum(in, "cap"),
                  "%s definition", file);
        break;
    case CMD_CURSOR:
        CHECK(c.u.cursor.visible == !cJSON_IsNull(cJSON_GetObjectItem(in, "pos")), "%s visible", file);
        break;
    case CMD_AUTH:
        CHECK(!strcmp(c.u.auth.token, cJSON_GetObjectItem(in, "token")->valuestring), "%s token", file);
        break;
    case CMD_BODY_CREATE:
        CHECK(c.u.body_create.shape == FS_SHAPE_BOX && c.u.body_create.size[1] == 0.05f &&
                  c.u.body_create.has_density && c.u.body_create.density == 500.0f && c.u.body_create.rot[0] == 1.0f,
              "%s values", file);
        break;
    case CMD_BODY_DESTROY:
    case CMD_BODY_IMPULSE:
    case CMD_BODY_GRAB:
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE:
        CHECK(c.u.body.id == (uint32_t)jnum(in, "id"), "%s id", file);
        if (c.kind == CMD_BODY_IMPULSE) CHECK(c.u.body.vec[1] == 2.5f, "%s impulse", file);
        if (c.kind == CMD_BODY_DRAG) CHECK(c.u.body.vec[0] == 0.25f, "%s target", file);
        break;
    default:
        break;
    }
}

static int hexval(char ch) {
    return ch >= '0' && ch <= '9' ? ch - '0' : ch >= 'a' && ch <= 'f' ? ch - 'a' + 10 : -1;
}

/* The obstacle meshes of vectors.json ("obstacle_meshes"): gen_vectors.py
 * wrote their bytes from PROTOCOL.md's layout; the encoder must produce
 * exactly those, with the hash it reports. */
static void test_obstacle_meshes(const cJSON *root, const char *dir) {
    int n = 0;
    for (const cJSON *v = cJSON_GetObjectItem(root, "obstacle_meshes")->child; v; v = v->next, n++) {
        const char *file = cJSON_GetObjectItem(v, "file")->valuestring;
        const cJSON *in = cJSON_GetObjectItem(v, "input");
        fs_vec3 vert[8];
        uint32_t tri[3 * 8];
        int nv = 0, nt = 0;
        for (const cJSON *e = cJSON_GetObjectItem(in, "vertices")->child; e && nv < 8; e = e->next, nv++)
            vert[nv] =
                (fs_vec3){(float)cJSON_GetArrayItem(e, 0)->valuedouble, (float)cJSON_GetArrayItem(e, 1)->valuedouble,
                          (float)cJSON_GetArrayItem(e, 2)->valuedouble};
        for (const cJSON *e = cJSON_GetObjectItem(in, "triangles")->child; e && nt < 8; e = e->next, nt++)
            for (int k = 0; k < 3; k++) tri[3 * nt + k] = (uint32_t)cJSON_GetArrayItem(e, k)->valueint;
        fs_mesh m = {vert, nv, tri, nt};
        uint64_t hash = 0;
        msg_buf *b = obstacle_mesh_encode(&m, &hash);
        char path[1024], hex[17];
        snprintf(path, sizeof path, "%s/%s", dir, file);
        size_t len = 0;
        char *want = read_file(path, &len);
        CHECK(b && want && b->len == len && !memcmp(b->data, want, len), "%s: the encoder's bytes are the golden ones",
              file);
        CHECK(b && b->len == obstacle_mesh_size(nv, nt), "%s: obstacle_mesh_size says its length", file);
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)hash);
        CHECK(!strcmp(hex, cJSON_GetObjectItem(cJSON_GetObjectItem(v, "expect"), "hash")->valuestring),
              "%s: the hash %s is the golden one", file, hex);
        free(want);
        msg_buf_unref(b);
    }
    CHECK(n >= 2, "%d obstacle mesh vectors", n);
}

static void test_golden(const char *dir, bool write) {
    char path[1024];
    snprintf(path, sizeof path, "%s/vectors.json", dir);
    char *text = read_file(path, NULL);
    CHECK(text != NULL, "read %s", path);
    if (!text) return;
    cJSON *root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL, "vectors.json parses");
    if (!root) return;
    CHECK((int)jnum(root, "protocol_version") == WIRE_PROTOCOL_VERSION, "protocol version matches");
    fs_param_info pinfo[FS_P_COUNT];
    wire_static st;
    memset(&st, 0, sizeof st);
    /* Parameter names for param broadcasts come from the hello vector's table. */
    const cJSON *vs = cJSON_GetObjectItem(root, "vectors");
    for (const cJSON *v = vs->child; v; v = v->next) {
        const cJSON *f = cJSON_GetObjectItem(v, "file");
        if (cJSON_IsString(f) && !strcmp(f->valuestring, "s2c_hello.msgpack"))
            msg_buf_unref(encode_vector(f->valuestring, cJSON_GetObjectItem(v, "input"), pinfo, &st));
    }
    int n = 0;
    for (const cJSON *v = vs->child; v; v = v->next, n++) {
        const char *dirn = cJSON_GetObjectItem(v, "direction")->valuestring;
        const cJSON *in = cJSON_GetObjectItem(v, "input");
        if (!strcmp(dirn, "client_to_server_bad")) {
            const char *hex = cJSON_GetObjectItem(v, "hex")->valuestring;
            size_t hl = strlen(hex) / 2;
            uint8_t *b = malloc(hl ? hl : 1);
            for (size_t i = 0; i < hl; i++) b[i] = (uint8_t)(hexval(hex[2 * i]) << 4 | hexval(hex[2 * i + 1]));
            char what[64];
            snprintf(what, sizeof what, "bad vector %s", cJSON_GetObjectItem(v, "doc")->valuestring);
            expect_bytes_error(b, hl, cJSON_GetObjectItem(v, "error")->valuestring, what);
            free(b);
            continue;
        }
        const char *file = cJSON_GetObjectItem(v, "file")->valuestring;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        msg_buf *m = NULL;
        if (!strcmp(dirn, "server_to_client")) {
            m = encode_vector(file, in, pinfo, &st);
        } else {
            pk_ctx p;
            pk_begin(&p);
            pack_json(&p.pk, in);
            m = wbuf_finish(&p.b);
        }
        CHECK(m != NULL, "%s encodes", file);
        if (!m) continue;
        if (write) {
            FILE *fo = fopen(path, "wb");
            CHECK(fo && fwrite(m->data, 1, m->len, fo) == m->len, "write %s", path);
            if (fo) fclose(fo);
        }
        size_t len = 0;
        char *bytes = read_file(path, &len);
        CHECK(bytes != NULL, "read %s", path);
        if (bytes) {
            if (!strcmp(dirn, "server_to_client"))
                CHECK(len == m->len && !memcmp(bytes, m->data, len),
                      "%s: the encoder's bytes equal the golden bytes (%zu vs %zu)", file, m->len, len);
            else
                check_c2s(file, in, (const uint8_t *)bytes, len);
            free(bytes);
        }
        msg_buf_unref(m);
    }
    CHECK(n >= 20, "%d golden vectors", n);
    test_obstacle_meshes(root, dir);
    cJSON_Delete(root);
}

/* ---- Hostile commands: fields given twice, oversized maps, freed errors --- */

/* A set_param whose `params` holds `entries` numbers named p00, p01, ...,
 * given `copies` times (the reproducer fuzz_ws_command/params-twice: 2 copies
 * of 29). */
static void pack_params_msg(pk_ctx *p, int copies, int entries, bool real_names) {
    pk_begin(p);
    msgpack_pack_map(&p->pk, (size_t)(3 + copies));
    pk_s(p, "type");
    pk_s(p, "set_param");
    pk_s(p, "rid");
    msgpack_pack_uint32(&p->pk, 7);
    pk_s(p, "material");
    pk_s(p, "water");
    for (int c = 0; c < copies; c++) {
        pk_s(p, "params");
        msgpack_pack_map(&p->pk, (size_t)entries);
        for (int i = 0; i < entries; i++) {
            char name[16];
            snprintf(name, sizeof name, "p%02d", i);
            pk_s(p, real_names && i < FS_P_COUNT ? fs_param_get_info((fs_param)i)->name : name);
            msgpack_pack_double(&p->pk, 1.0);
        }
    }
}

static void test_decode_hostile_fields(void) {
    cmd c;
    char err[FS_ERROR_LEN] = "";
    pk_ctx p;
    /* The reproducer: `params` twice, 29 entries each.  Refused at the
     * second key, before its map is read: no write past pname/pvalue. */
    pack_params_msg(&p, 2, 29, false);
    CHECK(p.b.len > 700 && p.b.len < 900, "the reproducer is about 810 bytes (%zu)", p.b.len);
    int rc = wire_decode_command(p.b.data, p.b.len, &c, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "set_param: field 'params' given twice") && c.rid == 7,
          "params given twice -> '%s' (rid %u)", err, (unsigned)c.rid);
    wbuf_free(&p.b);
    /* Many copies of a full map. */
    pack_params_msg(&p, 8, 29, false);
    rc = wire_decode_command(p.b.data, p.b.len, &c, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "given twice"), "params 8 times -> '%s'", err);
    wbuf_free(&p.b);
    /* One more entry than there are parameters. */
    pack_params_msg(&p, 1, FS_P_COUNT + 1, true);
    rc = wire_decode_command(p.b.data, p.b.len, &c, err, sizeof err);
    char want[64];
    snprintf(want, sizeof want, "at most %d", FS_P_COUNT);
    CHECK(rc == -1 && strstr(err, "'params' must be a map") && strstr(err, want) && c.rid == 7,
          "params with %d entries -> '%s'", FS_P_COUNT + 1, err);
    wbuf_free(&p.b);
    /* Every parameter at once is a valid command (all or nothing). */
    pack_params_msg(&p, 1, FS_P_COUNT, true);
    rc = wire_decode_command(p.b.data, p.b.len, &c, err, sizeof err);
    CHECK(rc == 0 && c.u.set_param.count == FS_P_COUNT && c.u.set_param.value[FS_P_COUNT - 1] == 1.0f,
          "params with all %d parameters decodes: %s", FS_P_COUNT, rc ? err : "ok");
    wbuf_free(&p.b);
    /* A scalar field given twice is refused the same way, rid echoed. */
    expect_error("{\"type\":\"pause\",\"rid\":1,\"rid\":2}", "pause: field 'rid' given twice");
    expect_error("{\"type\":\"push\",\"rid\":1,\"point\":[0,0,0],\"point\":[1,1,1],\"radius\":1,\"strength\":1,"
                 "\"direction\":[0,1,0]}",
                 "field 'point' given twice");
    /* ...even when its first copy was refused. */
    expect_error("{\"type\":\"step\",\"rid\":1,\"steps\":\"x\",\"steps\":5}", "field 'steps' given twice");
    /* A container where a scalar belongs is skipped whole: its contents are
     * never read as fields of the command. */
    rc = decode_json("{\"type\":\"step\",\"rid\":3,\"steps\":{\"rid\":9}}", &c, err);
    CHECK(rc == -1 && strstr(err, "step: 'steps' must be an integer") && c.rid == 3, "map as steps -> '%s' rid %u", err,
          (unsigned)c.rid);
    rc = decode_json("{\"type\":\"pause\",\"rid\":4,\"name\":[\"rid\",1]}", &c, err);
    CHECK(rc == -1 && strstr(err, "'name' must be a string") && c.rid == 4, "array as name -> '%s'", err);
    /* params keys must be strings; a map key is not skipped into. */
    static const uint8_t map_key[] = {0x84, 0xa4, 't', 'y',  'p',  'e',  0xa9, 's',  'e',  't', '_',  'p', 'a',
                                      'r',  'a',  'm', 0xa3, 'r',  'i',  'd',  0x01, 0xa8, 'm', 'a',  't', 'e',
                                      'r',  'i',  'a', 'l',  0xa5, 'w',  'a',  't',  'e',  'r', 0xa6, 'p', 'a',
                                      'r',  'a',  'm', 's',  0x81, 0x81, 0xa1, 'a',  0x01, 0x01};
    expect_bytes_error(map_key, sizeof map_key, "'params' keys must be strings", "a map as a params key");
    /* Numbers: NaN, infinities and values beyond float's range are refused
     * (never converted). */
    expect_error("{\"type\":\"set_param\",\"rid\":1,\"material\":\"water\",\"param\":\"stiffness\",\"value\":1e300}",
                 "'value' must be finite");
    expect_error("{\"type\":\"set_param\",\"rid\":1,\"material\":\"water\",\"params\":{\"stiffness\":-1e39}}",
                 "must be finite");
    expect_error("{\"type\":\"load_scene\",\"rid\":1,\"name\":\"drop\",\"particles\":1e300}", "'particles' must be");
    expect_error("{\"type\":\"body_destroy\",\"rid\":1,\"id\":1e19}", "'id' must be an integer");
    expect_error("{\"type\":\"get_particles\",\"rid\":1,\"offset\":-1e300}", "'offset' must be");
    /* Positive as a double, 0 as the float the command carries (fuzz_ws_command). */
    expect_error("{\"type\":\"heater\",\"rid\":1,\"slot\":0,\"kind\":\"floor\",\"radius\":1e-300,\"rate\":2,"
                 "\"temperature\":5}",
                 "heater: radius in (0, 10] m");
    expect_error("{\"type\":\"push\",\"rid\":1,\"point\":[0,0,0],\"radius\":1e-50,\"strength\":1,"
                 "\"direction\":[0,1,0]}",
                 "'radius' must be in");
    expect_error("{\"type\":\"heat\",\"rid\":1,\"point\":[0,0,0],\"radius\":1,\"rate\":1,\"duration\":1e-46}",
                 "'duration' must be in");
    expect_error("{\"type\":\"body_create\",\"rid\":1,\"shape\":\"sphere\",\"size\":[1e-46,0,0],\"pos\":[0,0,0]}",
                 "'size' components must be in");
    expect_error("{\"type\":\"body_create\",\"rid\":1,\"shape\":\"sphere\",\"size\":[1,0,0],\"pos\":[0,0,0],"
                 "\"density\":1e-300}",
                 "'density' must be in");
}

/* The edge's body ranges are the core's (fluid_sim.h): at each end of each
 * range the edge accepts a body_create that fs_world_create_body then
 * accepts, and just outside it the edge refuses one the core refuses too. */
static bool core_accepts(const cmd *c) {
    fs_world_def wd = fs_default_world_def();
    wd.capacity = 16;
    fs_world *w = fs_world_create(&wd);
    fs_domain dom = {{-20, -20, -20}, {20, 20, 20}, {0, -9.81f, 0}, 0.5f, 0.25f, 0.1f};
    fs_error e = {{0}};
    CHECK(w && fs_world_reset(w, &dom, &e) == FS_OK, "a world for the body limits: %s", e.msg);
    fs_body_def d = fs_default_body_def();
    d.shape = (fs_shape)c->u.body_create.shape;
    d.size = (fs_vec3){c->u.body_create.size[0], c->u.body_create.size[1], c->u.body_create.size[2]};
    if (c->u.body_create.has_density) d.density = c->u.body_create.density;
    if (c->u.body_create.has_friction) d.friction = c->u.body_create.friction;
    const bool ok = fs_world_create_body(w, &d, &e) >= 0;
    fs_world_destroy(w);
    return ok;
}

static void test_body_limits_match_core(void) {
    static const struct {
        const char *shape, *size, *extra; /* extra: more fields, or "" */
        bool ok;
    } cases[] = {
        {"sphere", "[0.01,0,0]", "", true},
        {"sphere", "[0.009,0,0]", "", false},
        {"sphere", "[5,0,0]", "", true},
        {"sphere", "[5.01,0,0]", "", false},
        {"box", "[5,0.01,5]", "", true},
        {"box", "[5,0.009,5]", "", false},
        {"box", "[6,1,1]", "", false},
        {"capsule", "[0.01,5,0]", "", true},
        {"capsule", "[0.009,1,0]", "", false},
        {"capsule", "[1,5.01,0]", "", false},
        {"box", "[1,1,1]", ",\"density\":10", true},
        {"box", "[1,1,1]", ",\"density\":9.9", false},
        {"box", "[1,1,1]", ",\"density\":20000", true},
        {"box", "[1,1,1]", ",\"density\":20001", false},
        {"box", "[1,1,1]", ",\"friction\":2", true},
        {"box", "[1,1,1]", ",\"friction\":2.01", false},
    };
    int agreed = 0, n = (int)(sizeof cases / sizeof cases[0]);
    for (int k = 0; k < n; k++) {
        char json[192];
        snprintf(json, sizeof json,
                 "{\"type\":\"body_create\",\"rid\":1,\"shape\":\"%s\",\"size\":%s,\"pos\":[0,0,0]%s}", cases[k].shape,
                 cases[k].size, cases[k].extra);
        cmd c;
        char err[FS_ERROR_LEN] = "";
        const bool edge = decode_json(json, &c, err) == 0;
        CHECK(edge == cases[k].ok, "%s: the edge %s it (%s)", json, edge ? "accepts" : "refuses", err);
        if (edge) {
            CHECK(core_accepts(&c), "%s: the edge accepts what the core refuses", json);
        } else {
            /* the same numbers given to the core directly */
            cmd raw = {.kind = CMD_BODY_CREATE};
            raw.u.body_create.shape = !strcmp(cases[k].shape, "sphere") ? FS_SHAPE_SPHERE
                                      : !strcmp(cases[k].shape, "box")  ? FS_SHAPE_BOX
                                                                        : FS_SHAPE_CAPSULE;
            sscanf(cases[k].size, "[%f,%f,%f]", &raw.u.body_create.size[0], &raw.u.body_create.size[1],
                   &raw.u.body_create.size[2]);
            raw.u.body_create.has_density = sscanf(cases[k].extra, ",\"density\":%f", &raw.u.body_create.density) == 1;
            raw.u.body_create.has_friction =
                sscanf(cases[k].extra, ",\"friction\":%f", &raw.u.body_create.friction) == 1;
            CHECK(!core_accepts(&raw), "%s: the edge refuses what the core accepts", json);
        }
        agreed += edge == cases[k].ok;
    }
    printf("  body limits: %d of %d cases at the ends of the ranges agree between edge and core\n", agreed, n);
}

/* The REST translation (rest_route.c), without a socket. */
static const char *no_args(void *ctx, const char *name, char *buf, int len) {
    (void)ctx, (void)name, (void)buf, (void)len;
    return NULL;
}

static void rest_call(int method, const char *path, const char *body, rest_action *a) {
    /* An exact-size copy, not terminated: ASan sees any read past it. */
    size_t n = body ? strlen(body) : 0;
    char *b = n ? malloc(n) : NULL;
    if (n) memcpy(b, body, n);
    rest_request q = {.method = method, .path = path, .arg = no_args, .body = b, .body_len = n};
    rest_translate(&q, a);
    free(b);
}

static void test_rest_refusals(void) {
    rest_action a;
    /* PATCH with an unknown key: the error quotes the key, which used to be
     * read after cJSON_Delete (heap use-after-free under ASan). */
    rest_call(HM_PATCH, "/materials/water", "{\"bogus\":1}", &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_BAD_REQUEST && !strcmp(a.error, "unknown parameter 'bogus'"),
          "PATCH bogus -> %s '%s'", reply_code_name(a.code), a.error);
    rest_call(HM_PATCH, "/materials/water", "{\"stiffness\":\"soft\"}", &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_BAD_REQUEST && !strcmp(a.error, "'stiffness' must be a number"),
          "PATCH non-number -> %s '%s'", reply_code_name(a.code), a.error);
    /* Too many: FS_P_COUNT + 1 keys. */
    char body[4096];
    size_t k = 0;
    k += (size_t)snprintf(body + k, sizeof body - k, "{");
    for (int i = 0; i <= FS_P_COUNT; i++)
        k += (size_t)snprintf(body + k, sizeof body - k, "%s\"%s\":1", i ? "," : "",
                              fs_param_get_info((fs_param)(i % FS_P_COUNT))->name);
    snprintf(body + k, sizeof body - k, "}");
    rest_call(HM_PATCH, "/materials/water", body, &a);
    char want[64];
    snprintf(want, sizeof want, "too many parameters (at most %d)", FS_P_COUNT);
    CHECK(a.outcome == REST_ERROR && a.code == RC_BAD_REQUEST && !strcmp(a.error, want), "PATCH %d keys -> '%s'",
          FS_P_COUNT + 1, a.error);
    rest_call(HM_PATCH, "/materials/water", "{\"stiffness\":0.01,\"stiffness\":0.02}", &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_BAD_REQUEST && strstr(a.error, "'stiffness' given twice"),
          "PATCH duplicate -> '%s'", a.error);
    rest_call(HM_PATCH, "/materials/water", "{\"stiffness\":0.01,\"friction\":0.5}", &a);
    CHECK(a.outcome == REST_COMMAND && a.c.kind == CMD_SET_PARAM && a.c.u.set_param.count == 2 &&
              !strcmp(a.c.u.set_param.material, "water"),
          "PATCH two params -> a set_param (%s)", a.error);
    /* Body fields given twice, and the routes' other refusals. */
    rest_call(HM_POST, "/push",
              "{\"point\":[0,0,0],\"point\":[1,1,1],\"radius\":1,\"strength\":1,"
              "\"direction\":[0,1,0]}",
              &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_BAD_REQUEST && !strcmp(a.error, "push: field 'point' given twice"),
          "POST push duplicate -> '%s'", a.error);
    rest_call(HM_POST, "/step", NULL, &a);
    CHECK(a.outcome == REST_COMMAND && a.c.kind == CMD_STEP && a.c.u.step.steps == 1, "POST step, no body");
    rest_call(HM_GET, "/step", NULL, &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_METHOD_NOT_ALLOWED && a.close_after,
          "GET step -> method_not_allowed '%s'", a.error);
    rest_call(HM_DELETE, "/bodies/4294967296", NULL, &a);
    CHECK(a.outcome == REST_ERROR && a.code == RC_NOT_FOUND, "body id past uint32 -> not_found '%s'", a.error);
    rest_call(HM_POST, "/bodies/12/impulse", "{\"point\":[0,0,0],\"impulse\":[1,0,0]}", &a);
    CHECK(a.outcome == REST_COMMAND && a.c.kind == CMD_BODY_IMPULSE && a.c.u.body.id == 12, "impulse on body 12");
    rest_call(HM_GET, "/snapshot", NULL, &a);
    CHECK(a.outcome == REST_SNAPSHOT, "the snapshot route is rest.c's");
}

/* The snapshot document's wrapper: a key given twice is refused. */
static void test_snapshot_wrapper(void) {
    static const uint8_t ok[] = {0x82, 0xa4, 't',  'y', 'p', 'e', 0xa8, 's', 'n',  'a',  'p',  's', 'h',
                                 'o',  't',  0xa5, 'w', 'o', 'r', 'l',  'd', 0xc4, 0x02, 0xaa, 0xbb};
    static const uint8_t two_worlds[] = {0x83, 0xa4, 't', 'y',  'p', 'e', 0xa8, 's',  'n',  'a',  'p',  's',
                                         'h',  'o',  't', 0xa5, 'w', 'o', 'r',  'l',  'd',  0xc4, 0x02, 0xaa,
                                         0xbb, 0xa5, 'w', 'o',  'r', 'l', 'd',  0xc4, 0x01, 0xcc};
    static const uint8_t two_types[] = {0x83, 0xa4, 't', 'y', 'p',  'e',  0xa3, 'x',  'y',  'z', 0xa5, 'w',
                                        'o',  'r',  'l', 'd', 0xc4, 0x02, 0xaa, 0xbb, 0xa4, 't', 'y',  'p',
                                        'e',  0xa8, 's', 'n', 'a',  'p',  's',  'h',  'o',  't'};
    const uint8_t *w;
    size_t wl;
    char err[160] = "";
    CHECK(wire_decode_snapshot(ok, sizeof ok, &w, &wl, err, sizeof err) == 0 && wl == 2 && w[0] == 0xaa,
          "snapshot wrapper: %s", err);
    CHECK(wire_decode_snapshot(two_worlds, sizeof two_worlds, &w, &wl, err, sizeof err) == -1 &&
              !strcmp(err, "snapshot: 'world' given twice"),
          "two worlds -> '%s'", err);
    CHECK(wire_decode_snapshot(two_types, sizeof two_types, &w, &wl, err, sizeof err) == -1 &&
              !strcmp(err, "snapshot: 'type' given twice"),
          "two types -> '%s'", err);
}

/* protocol/PROTOCOL.md and openapi.json state the code's limit on params. */
static void test_params_limit_documented(const char *golden) {
    char path[1024];
    snprintf(path, sizeof path, "%s/../PROTOCOL.md", golden);
    size_t len = 0;
    char *md = read_file(path, &len);
    char want[96];
    snprintf(want, sizeof want, "(at most %d entries, one per parameter", FS_P_COUNT);
    CHECK(md && strstr(md, want), "PROTOCOL.md says '%s'", want);
    free(md);
    snprintf(path, sizeof path, "%s/../openapi.json", golden);
    char *oa = read_file(path, &len);
    snprintf(want, sizeof want, "\"maxProperties\": %d,", FS_P_COUNT);
    CHECK(oa && strstr(oa, want), "openapi.json says %s", want);
    free(oa);
}

/* The bus messages (relays): round trips, and every truncation and a
 * flipped tag refused without a crash. */
/* The code table: each code one name and one status, found by its name;
 * replies carry the code's name beside the error. */
static bool has_bytes(const msg_buf *m, const char *s) {
    size_t n = strlen(s);
    for (size_t i = 0; m && i + n <= m->len; i++)
        if (!memcmp(m->data + i, s, n)) return true;
    return false;
}

static void test_reply_codes(void) {
    int distinct = 1;
    for (int i = 0; i < RC_COUNT; i++) {
        const reply_code_info *ci = reply_code_get((reply_code)i);
        CHECK(reply_code_find(ci->name) == i, "code %d's name '%s' finds it", i, ci->name);
        CHECK(i == RC_OK ? ci->http == 200 : ci->http >= 400 && ci->http <= 599, "%s: HTTP %d", ci->name, ci->http);
        CHECK(ci->retry == (i == RC_BUSY || i == RC_RATE_LIMITED), "%s: Retry-After %d", ci->name, ci->retry);
        bool same = false;
        for (int j = 0; j < i; j++) same |= reply_code_http((reply_code)j) == ci->http;
        distinct += !same && i > 0;
    }
    CHECK(distinct == RC_COUNT, "%d codes, %d distinct HTTP statuses", RC_COUNT, distinct);
    CHECK(reply_code_find("nope") < 0 && reply_code_get(RC_COUNT) == reply_code_get(RC_INTERNAL),
          "an unknown name or value");
    CHECK(reply_code_of_status(FS_ERR_ARG) == RC_BAD_REQUEST && reply_code_of_status(FS_ERR_RANGE) == RC_BAD_REQUEST &&
              reply_code_of_status(FS_ERR_UNKNOWN) == RC_NOT_FOUND &&
              reply_code_of_status(FS_ERR_FULL) == RC_CONFLICT && reply_code_of_status(FS_ERR_NOMEM) == RC_INTERNAL &&
              reply_code_of_status(FS_OK) == RC_OK,
          "the core's statuses");
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.rid = 5;
    r.kind = CMD_BODY_GRAB;
    cmd_reply_refuse(&r, RC_CONFLICT, "body_grab: body 3 is held by client 2");
    msg_buf *m = wire_encode_reply(&r);
    CHECK(has_bytes(m, "\xa4"
                       "code"
                       "\xa8"
                       "conflict") &&
              has_bytes(m, "\xa5"
                           "error"),
          "a refusal says code: conflict");
    msg_buf_unref(m);
    r.ok = true;
    r.code = RC_OK;
    m = wire_encode_reply(&r);
    CHECK(!has_bytes(m, "\xa4"
                        "code"),
          "an ok reply has no code");
    msg_buf_unref(m);
    m = wire_encode_error(RC_RATE_LIMITED, 9, NULL, "rate limited: at most 50 commands per second (burst 100)");
    CHECK(has_bytes(m, "\xa4"
                       "code"
                       "\xac"
                       "rate_limited") &&
              has_bytes(m, "\xa4"
                           "none"),
          "an edge's refusal says its code");
    msg_buf_unref(m);
}

/* PROTOCOL.md's table of reply codes lists every code but ok, in the
 * enum's order (the bus carries a code by its number), with its status. */
static void test_reply_codes_documented(const char *golden) {
    char path[1024];
    snprintf(path, sizeof path, "%s/../PROTOCOL.md", golden);
    size_t len = 0;
    char *md = read_file(path, &len);
    const char *at = md ? strstr(md, "#### Reply codes") : NULL;
    const char *rows = at ? strstr(at, "| --- | --- | --- |\n") : NULL;
    int row = 0;
    for (const char *p = rows ? strchr(rows, '\n') + 1 : NULL; p && !strncmp(p, "| `", 3); p = strchr(p, '\n') + 1) {
        row++;
        char name[32];
        int http = 0;
        bool read = sscanf(p, "| `%31[a-z_]` | %d |", name, &http) == 2;
        CHECK(read && row < RC_COUNT && !strcmp(name, reply_code_name((reply_code)row)) &&
                  http == reply_code_http((reply_code)row),
              "PROTOCOL.md's reply code row %d: %.60s", row, p);
        if (!strchr(p, '\n')) break;
    }
    CHECK(row == RC_COUNT - 1, "PROTOCOL.md lists %d reply codes, the table %d", row, RC_COUNT - 1);
    free(md);
}

static void test_bus_codec(void) {
    char err[160];
    frameset fs = {.epoch = 3, .seq = 77, .tick = 1234567890123ull, .n = 5, .count = 3};
    fs.coding[0] = (frame_coding){FC_NONE, FC_NONE, msg_buf_from_bytes("keyframe", 8), 0};
    fs.coding[1] = (frame_coding){76, 75, msg_buf_from_bytes("delta", 5), 0};
    fs.coding[2] = (frame_coding){76, 75, msg_buf_from_bytes("coarse", 6), 2};
    /* tier 0 only: the coarse coding stays off the bus */
    msg_buf *m = bus_encode_frameset(&fs, 1u);
    frameset got;
    CHECK(m && bus_decode_frameset(m->data, m->len, &got, err, sizeof err) == 0, "frameset round trip (%s)", err);
    CHECK(got.epoch == 3 && got.seq == 77 && got.tick == 1234567890123ull && got.n == 5 && got.count == 2 &&
              got.coding[1].base == 76 && got.coding[1].prev == 75 && got.coding[1].msg->len == 5 &&
              got.coding[1].tier == 0 && !memcmp(got.coding[0].msg->data, "keyframe", 8),
          "frameset fields");
    frameset_unref(&got);
    msg_buf_unref(m);
    /* tiers 0 and 2: each coding with its tier */
    m = bus_encode_frameset(&fs, 1u | 4u);
    CHECK(m && bus_decode_frameset(m->data, m->len, &got, err, sizeof err) == 0 && got.count == 3 &&
              got.coding[2].tier == 2 && got.coding[2].msg->len == 6 && !memcmp(got.coding[2].msg->data, "coarse", 6),
          "a coarse tier's coding crosses the bus with its tier (%s)", err);
    frameset_unref(&got);
    /* a tier the node does not have: refused, whole */
    size_t at = m->len - 6 - 16; /* the coarse coding's tier field */
    uint8_t was = m->data[at];
    m->data[at] = FRAME_TIERS;
    CHECK(bus_decode_frameset(m->data, m->len, &got, err, sizeof err) != 0 && strstr(err, "tier"),
          "a coding of tier %d refused: %s", FRAME_TIERS, err);
    m->data[at] = was;
    int refused = 0;
    for (size_t cut = 0; m && cut < m->len; cut++)
        refused += bus_decode_frameset(m->data, cut, &got, err, sizeof err) != 0;
    CHECK(m && refused == (int)m->len, "every truncated frameset refused (%d of %zu)", refused, m ? m->len : 0);
    msg_buf_unref(m);
    frameset_unref(&fs);
    bus_room_wants rw[2] = {{.room = "default", .w = {.clients = 9, .key_requests = 4, .stride4 = true}},
                            {.room = "lab-2", .w = {.clients = 1}}},
                   rw2[2];
    rw[0].w.coarse[1] = (frame_tier_wants){.clients = 3, .key_requests = 11, .bridge = true};
    uint32_t relay;
    int nw = 0;
    m = bus_encode_wants(7, rw, 2);
    CHECK(bus_decode_wants(m->data, m->len, &relay, rw2, 2, &nw, err, sizeof err) == 0 && relay == 7 && nw == 2 &&
              rw2[0].w.clients == 9 && rw2[0].w.key_requests == 4 && rw2[0].w.stride4 && !rw2[0].w.stride2 &&
              !strcmp(rw2[1].room, "lab-2") && rw2[1].w.clients == 1,
          "wants round trip, per room");
    CHECK(rw2[0].w.coarse[1].clients == 3 && rw2[0].w.coarse[1].key_requests == 11 && rw2[0].w.coarse[1].bridge &&
              !rw2[0].w.coarse[1].stride2 && rw2[0].w.coarse[0].clients == 0 && rw2[1].w.coarse[1].clients == 0,
          "each coarser tier's wants round trip");
    msg_buf_unref(m);
    rw[0].w.coarse[1].clients = 10;
    m = bus_encode_wants(7, rw, 2);
    CHECK(bus_decode_wants(m->data, m->len, &relay, rw2, 2, &nw, err, sizeof err) != 0 && strstr(err, "tier 2"),
          "more clients of a tier than of the room refused: %s", err);
    rw[0].w.coarse[1].clients = 3;
    CHECK(bus_decode_wants(m->data, m->len, &relay, rw2, 1, &nw, err, sizeof err) != 0, "more rooms than room for");
    msg_buf_unref(m);
    m = bus_encode_wants(0, rw, 1);
    CHECK(bus_decode_wants(m->data, m->len, &relay, rw2, 2, &nw, err, sizeof err) != 0, "wants of relay 0 refused");
    msg_buf_unref(m);
    snprintf(rw[1].room, sizeof rw[1].room, "Lab");
    m = bus_encode_wants(7, rw, 2);
    CHECK(bus_decode_wants(m->data, m->len, &relay, rw2, 2, &nw, err, sizeof err) != 0 && strstr(err, "a room name"),
          "wants for a name that breaks the rule refused: %s", err);
    msg_buf_unref(m);
    bus_room_entry re[2] = {{"default", ROLE_PLAYER}, {"lab", ROLE_ADMIN}}, re2[2];
    m = bus_encode_rooms(re, 2);
    CHECK(bus_decode_rooms(m->data, m->len, re2, 2, &nw, err, sizeof err) == 0 && nw == 2 &&
              !strcmp(re2[1].name, "lab") && re2[1].public_role == ROLE_ADMIN,
          "rooms round trip (%s)", err);
    m->data[m->len - 4] = ROLE_COUNT;
    CHECK(bus_decode_rooms(m->data, m->len, re2, 2, &nw, err, sizeof err) != 0, "a role outside the table refused");
    msg_buf_unref(m);
    char rname[ROOM_NAME_CAP];
    CHECK(bus_subject_room("fluid.w.r.lab.frames", "fluid.w.r", "frames", rname, err, sizeof err) == 0 &&
              !strcmp(rname, "lab"),
          "a room's subject (%s)", err);
    static const char *const bad_rooms[] = {"fluid.w.r.lab.info",     "fluid.w.r.Lab.frames", "fluid.w.r..frames",
                                            "fluid.w.r.lab.frames.x", "fluid.w.lab.frames",   "fluid.w.r.lab"};
    int refused_rooms = 0;
    for (size_t i = 0; i < sizeof bad_rooms / sizeof *bad_rooms; i++)
        refused_rooms += bus_subject_room(bad_rooms[i], "fluid.w.r", "frames", rname, err, sizeof err) != 0;
    CHECK(refused_rooms == (int)(sizeof bad_rooms / sizeof *bad_rooms), "rooms' subjects refused: %d", refused_rooms);
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.client = 3u << CMD_RELAY_SHIFT | 5;
    r.rid = 11;
    r.kind = CMD_PUSH;
    r.ok = true;
    r.value = 42;
    m = bus_encode_reply(&r, "lab");
    cmd_reply r2;
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) == 0 && r2.client == r.client &&
              r2.rid == 11 && r2.kind == CMD_PUSH && r2.ok && r2.value == 42 && !r2.snap && !strcmp(rname, "lab"),
          "reply round trip");
    msg_buf_unref(m);
    r.duplicate = true;
    m = bus_encode_reply(&r, "default");
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) == 0 && r2.duplicate && r2.ok,
          "reply round trip: duplicate flag");
    msg_buf *wr = wire_encode_reply(&r);
    bool says = false;
    for (size_t i = 0; wr && i + 11 <= wr->len && !says; i++)
        says = !memcmp(wr->data + i,
                       "\xa9"
                       "duplicate\xc3",
                       11);
    CHECK(says, "a duplicate reply says duplicate: true");
    msg_buf_unref(wr);
    r.duplicate = false;
    m->data[8] = 0xff; /* client id: still a value; the kind is what is range checked */
    msg_buf_unref(m);
    /* a refusal crosses the bus with its code (the flags word's second byte) */
    cmd_reply_refuse(&r, RC_CONFLICT, "step: the world is running; pause it first");
    m = bus_encode_reply(&r, "default");
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) == 0 && !r2.ok && r2.code == RC_CONFLICT &&
              !strcmp(r2.error, r.error),
          "reply round trip: a refusal's code (%s)", reply_code_name(r2.code));
    m->data[4 + 4 + 12 + 1] = RC_COUNT; /* "RPLY", version, client, rid, kind; then the flags' code byte */
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) != 0, "a code outside the table refused: %s",
          err);
    m->data[4 + 4 + 12 + 1] = RC_OK;
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) == 0 && !r2.ok &&
              cmd_reply_code(&r2) == RC_INTERNAL,
          "a refusal without a code reads as internal");
    m->data[4 + 4 + 12] = 1, m->data[4 + 4 + 12 + 1] = RC_BUSY;
    CHECK(bus_decode_reply(m->data, m->len, &r2, rname, err, sizeof err) != 0,
          "an ok reply with a refusal's code refused: %s", err);
    msg_buf_unref(m);
    r.ok = true;
    r.code = RC_OK;
    const uint8_t cmdb[] = {0x81, 0xa4, 't', 'y', 'p', 'e', 0xa5, 'p', 'a', 'u', 's', 'e'};
    bus_forward f = {.relay = 3,
                     .client = 3u << CMD_RELAY_SHIFT | 9,
                     .kind = BUS_FWD_WS,
                     .room = "lab",
                     .cred = (const uint8_t *)"a.b.c",
                     .cred_len = 5,
                     .bytes = cmdb,
                     .len = sizeof cmdb},
                fo;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) == 0 && fo.relay == 3 && fo.kind == BUS_FWD_WS &&
              fo.len == sizeof cmdb && !memcmp(fo.bytes, cmdb, fo.len) && !strcmp(fo.room, "lab") && fo.cred_len == 5 &&
              !memcmp(fo.cred, "a.b.c", 5),
          "forward round trip: room, credential, bytes (%s)", err);
    msg_buf_unref(m);
    f.client = 4u << CMD_RELAY_SHIFT | 9;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0,
          "a relay may not speak for another relay's client: %s", err);
    msg_buf_unref(m);
    f.client = 3u << CMD_RELAY_SHIFT | 9;
    static char big[BUS_MAX_CRED + 1];
    memset(big, 'x', sizeof big);
    f.cred = (const uint8_t *)big;
    f.cred_len = sizeof big;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0, "a credential over the limit refused: %s",
          err);
    msg_buf_unref(m);
    f.cred = (const uint8_t *)"a\0b";
    f.cred_len = 3;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0, "a NUL in a credential refused");
    msg_buf_unref(m);
    f.cred_len = 0;
    snprintf(f.room, sizeof f.room, "no_room");
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0 && strstr(err, "a room name"),
          "a forward for a name that breaks the rule refused: %s", err);
    msg_buf_unref(m);
    snprintf(f.room, sizeof f.room, "default");
    /* the relay a message came from is the one its subject names */
    CHECK(bus_subject_relay("fluid.w.cmd.3", "fluid.w.cmd", &relay, err, sizeof err) == 0 && relay == 3,
          "subject relay 3 (%s)", err);
    CHECK(bus_subject_relay("fluid.w.cmd.2047", "fluid.w.cmd", &relay, err, sizeof err) == 0 && relay == 2047,
          "subject relay 2047");
    static const char *const bad_subjects[] = {"fluid.w.cmd",     "fluid.w.cmd.",     "fluid.w.cmd.0",
                                               "fluid.w.cmd.03",  "fluid.w.cmd.2048", "fluid.w.cmd.99999",
                                               "fluid.w.cmd.3.4", "fluid.w.cmd.-3",   "fluid.w.cmdx.3",
                                               "fluid.v.cmd.3",   "fluid.w.cmd.3 ",   "fluid.w.wants.3"};
    int refused_subjects = 0;
    for (size_t i = 0; i < sizeof bad_subjects / sizeof *bad_subjects; i++)
        refused_subjects += bus_subject_relay(bad_subjects[i], "fluid.w.cmd", &relay, err, sizeof err) != 0;
    CHECK(refused_subjects == (int)(sizeof bad_subjects / sizeof *bad_subjects),
          "malformed subjects refused: %d of %zu", refused_subjects, sizeof bad_subjects / sizeof *bad_subjects);
    CHECK(bus_subject_relay(NULL, "fluid.w.cmd", &relay, err, sizeof err) != 0, "no subject refused");
    msg_buf *rq = bus_pack_rest(HM_POST, "/pause", "{}", 2);
    f = (bus_forward){.relay = 3,
                      .client = CMD_REST_BIT | 3u << CMD_RELAY_SHIFT | 1,
                      .kind = BUS_FWD_REST,
                      .room = "default",
                      .bytes = rq->data,
                      .len = rq->len};
    m = bus_encode_forward(&f);
    int method;
    char path[64];
    const char *body;
    size_t blen;
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) == 0 && fo.kind == BUS_FWD_REST &&
              bus_unpack_rest(fo.bytes, fo.len, &method, path, sizeof path, &body, &blen, err, sizeof err) == 0 &&
              method == HM_POST && !strcmp(path, "/pause") && blen == 2,
          "a forwarded REST request round trip (%s)", err);
    msg_buf_unref(m);
    f.client = 3u << CMD_RELAY_SHIFT | 1;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0, "a REST forward needs a REST client id");
    msg_buf_unref(m);
    /* a credential alone: a WebSocket client's, or a REST request's (a relay checks both at the sim node) */
    f = (bus_forward){
        .relay = 3, .kind = BUS_FWD_AUTH, .room = "default", .cred = (const uint8_t *)"x.y.z", .cred_len = 5};
    int auth_ok = 0;
    for (int rest = 0; rest < 2; rest++) {
        f.client = (rest ? CMD_REST_BIT : 0) | 3u << CMD_RELAY_SHIFT | 1;
        m = bus_encode_forward(&f);
        auth_ok += bus_decode_forward(m->data, m->len, &fo, err, sizeof err) == 0 && fo.kind == BUS_FWD_AUTH &&
                   fo.client == f.client && fo.cred_len == 5;
        msg_buf_unref(m);
    }
    CHECK(auth_ok == 2, "a credential alone, of a WebSocket client and of a REST request (%s)", err);
    f.client = CMD_REST_BIT | 4u << CMD_RELAY_SHIFT | 1;
    m = bus_encode_forward(&f);
    CHECK(bus_decode_forward(m->data, m->len, &fo, err, sizeof err) != 0,
          "a credential alone of another relay's request");
    msg_buf_unref(m);
    msg_buf_unref(rq);
    world_info wi;
    memset(&wi, 0x41, sizeof wi); /* unterminated strings, a bool byte of 0x41, huge counts */
    m = bus_encode_info(&wi);
    world_info wo;
    CHECK(bus_decode_info(m->data, m->len, &wo, err, sizeof err) == 0 && strlen(wo.scene) < sizeof wo.scene &&
              wo.material_count == 0 && ((const uint8_t *)&wo)[offsetof(world_info, paused)] == 1,
          "info repaired: strings terminated, counts clamped, the bool byte 0x41 made 1");
    CHECK(bus_decode_info(m->data, m->len - 1, &wo, err, sizeof err) != 0, "a short info refused");
    m->data[0] = 'X';
    CHECK(bus_decode_info(m->data, m->len, &wo, err, sizeof err) != 0, "another tag refused");
    msg_buf_unref(m);
}

/* The obstacles' bus messages: a room's set, a mesh (checked against its
 * own hash), a relay's wants; each round trip, and the refusals. */
static void test_bus_obstacles(void) {
    char err[200];
    fs_vec3 v[4] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    uint32_t t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    fs_mesh mesh = {v, 4, t, 4};
    uint64_t h = 0, h2 = 0;
    msg_buf *enc = obstacle_mesh_encode(&mesh, &h);
    CHECK(enc && obstacle_mesh_check(enc->data, enc->len, &h2) == 0 && h2 == h, "a tetrahedron's encoding checks");
    msg_buf *m = bus_encode_obstacle_mesh(7, enc);
    uint32_t id = 0;
    const uint8_t *body;
    size_t len;
    CHECK(bus_decode_obstacle_mesh(m->data, m->len, &id, &h2, &body, &len, err, sizeof err) == 0 && id == 7 &&
              h2 == h && len == enc->len && !memcmp(body, enc->data, len),
          "a mesh message round trip: %s", err);
    m->data[m->len - 1] ^= 1; /* an index: the hash no longer matches */
    CHECK(bus_decode_obstacle_mesh(m->data, m->len, &id, &h2, &body, &len, err, sizeof err) != 0 && strstr(err, "hash"),
          "a changed mesh refused: %s", err);
    m->data[m->len - 1] ^= 1;
    CHECK(bus_decode_obstacle_mesh(m->data, m->len - 2, &id, &h2, &body, &len, err, sizeof err) != 0,
          "a short mesh message refused");
    msg_buf_unref(m);
    const char list[] = "\x81\xa4type\xa9obstacles";
    bus_obstacles o = {.count = 2, .id = {7, 9}, .hash = {h, 42}, .bytes = {(uint32_t)enc->len, 4096}};
    o.list = (const uint8_t *)list, o.list_len = sizeof list - 1;
    m = bus_encode_obstacles(&o);
    bus_obstacles oo;
    CHECK(bus_decode_obstacles(m->data, m->len, &oo, err, sizeof err) == 0 && oo.count == 2 && oo.id[1] == 9 &&
              oo.hash[0] == h && oo.bytes[0] == enc->len && oo.list_len == o.list_len &&
              !memcmp(oo.list, list, o.list_len),
          "an obstacle set round trip: %s", err);
    msg_buf_unref(m);
    o.bytes[1] = 20; /* below the encoding's head */
    m = bus_encode_obstacles(&o);
    CHECK(bus_decode_obstacles(m->data, m->len, &oo, err, sizeof err) != 0, "a mesh size below the head refused");
    msg_buf_unref(m);
    o.bytes[1] = 4096;
    m = bus_encode_obstacles(&o);
    m->data[8] = FS_MAX_OBSTACLES + 1; /* the count */
    CHECK(bus_decode_obstacles(m->data, m->len, &oo, err, sizeof err) != 0, "17 obstacles refused");
    msg_buf_unref(m);
    const uint32_t ids[3] = {1, 2, 3};
    m = bus_encode_mesh_wants(5, "lab", ids, 3);
    uint32_t relay = 0, got[FS_MAX_OBSTACLES];
    char room[ROOM_NAME_CAP];
    int k = -1;
    CHECK(bus_decode_mesh_wants(m->data, m->len, &relay, room, got, &k, err, sizeof err) == 0 && relay == 5 && k == 3 &&
              got[2] == 3 && !strcmp(room, "lab"),
          "mesh wants round trip: %s", err);
    msg_buf_unref(m);
    m = bus_encode_mesh_wants(0, "lab", ids, 3);
    CHECK(bus_decode_mesh_wants(m->data, m->len, &relay, room, got, &k, err, sizeof err) != 0, "relay 0 refused");
    msg_buf_unref(m);
    m = bus_encode_mesh_wants(5, "../x", ids, 3);
    CHECK(bus_decode_mesh_wants(m->data, m->len, &relay, room, got, &k, err, sizeof err) != 0,
          "a room name against the rule refused");
    msg_buf_unref(m);
    msg_buf_unref(enc);
}

/* The exports' numbers (fmt_num.h) are printf's, byte for byte: "%.9g" of
 * floats of every kind (every bit pattern: zeros, subnormals, the largest,
 * infinities, NaNs; and the values particles hold, near powers of ten and
 * near halfway roundings) and "%u". */
static void test_number_text(void) {
    uint64_t x = 88172645463325252ull;
    char fast[FMT_NUM_MAX], slow[64];
    int differ = 0, n = 0;
    const float edge[] = {0.0f,     -0.0f,        1e-14f,        1e14f,           9.99999994e-15f,
                          1.0f,     0.1f,         1e-5f,         1e-4f,           9.9999999e-5f,
                          1e8f,     1e9f,         999999999.0f,  123456789.0f,    0.5f,
                          2.5f,     100000000.5f, 3.4028235e38f, 1.17549435e-38f, 1.4e-45f,
                          -273.15f, 1e-45f};
    for (int i = 0; i < 600000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        uint32_t u = (uint32_t)x;
        float f;
        if (i < (int)(sizeof edge / sizeof *edge))
            f = edge[i];
        else if (i % 3 == 0)
            memcpy(&f, &u, 4); /* any bit pattern */
        else if (i % 3 == 1)
            f = (float)((double)(u % 2000000) / 1000.0 - 1000.0); /* positions, velocities, temperatures */
        else
            f = ldexpf((float)(u % 16777216), (int)(x >> 40) % 60 - 60); /* all scales */
        size_t l = fmt_g9(f, fast);
        snprintf(slow, sizeof slow, "%.9g", (double)f);
        if (strcmp(fast, slow) || l != strlen(slow)) {
            if (differ++ < 5) printf("  %%.9g of %a: %s, printf %s\n", (double)f, fast, slow);
        }
        n++;
        uint32_t w = i < 3 ? (uint32_t[]){0, 9, 4294967295u}[i] : (uint32_t)(x >> 32);
        l = fmt_u32(w, fast);
        snprintf(slow, sizeof slow, "%u", w);
        if (strcmp(fast, slow) || l != strlen(slow)) differ++;
    }
    CHECK(differ == 0, "numbers as printf writes them: %d of %d differ", differ, n);
}

/* A REST request over the bus (HREQ) and its answer (HANS): round trips, and
 * every part out of its bounds refused. */
static void test_bus_http(void) {
    char err[200];
    bus_http_req q = {.method = HM_PATCH, .cred = (const uint8_t *)"tok", .cred_len = 3, .body = "{}", .body_len = 2},
                 o;
    snprintf(q.path, sizeof q.path, "/rooms/lab");
    msg_buf *m = bus_encode_http_req(&q);
    CHECK(m && !bus_decode_http_req(m->data, m->len, &o, err, sizeof err) && o.method == HM_PATCH &&
              !strcmp(o.path, "/rooms/lab") && !strcmp(o.room, "lab") && o.cred_len == 3 && o.body_len == 2,
          "HREQ round trip (%s)", err);
    CHECK(m && bus_decode_http_req(m->data, m->len - 1, &o, err, sizeof err), "HREQ truncated refused");
    msg_buf_unref(m);
    static const struct {
        int method;
        const char *path;
    } bad[] = {{HM_GET, "/rooms/lab"}, /* (with q's body: a GET carries none) */
               {HM_GET, "/rooms"},     {HM_HEAD, "/rooms/lab"}, {HM_PUT, "/rooms/lab"}, {HM_POST, "/pause"},
               {HM_POST, "/roomsx"},   {HM_PATCH, "/rooms"},    {HM_POST, "/rooms/La"}, {HM_POST, "/rooms/lab/a b"}};
    int refused = 0;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q.method = bad[i].method;
        snprintf(q.path, sizeof q.path, "%s", bad[i].path);
        m = bus_encode_http_req(&q);
        refused += m && bus_decode_http_req(m->data, m->len, &o, err, sizeof err) != 0;
        msg_buf_unref(m);
    }
    CHECK(refused == (int)(sizeof bad / sizeof bad[0]), "HREQ: %d of %zu bad methods and paths refused", refused,
          sizeof bad / sizeof bad[0]);
    bus_http_req g = {.method = HM_GET, .cred = (const uint8_t *)"tok", .cred_len = 3};
    snprintf(g.path, sizeof g.path, "/rooms/lab/stats");
    m = bus_encode_http_req(&g);
    CHECK(m && !bus_decode_http_req(m->data, m->len, &o, err, sizeof err) && o.method == HM_GET &&
              !strcmp(o.path, "/rooms/lab/stats") && !strcmp(o.room, "lab") && o.cred_len == 3 && !o.body,
          "HREQ: a read of a room's route round trip (%s)", err);
    msg_buf_unref(m);
    q.method = HM_POST;
    snprintf(q.path, sizeof q.path, "/rooms");
    q.cred = (const uint8_t *)"a\0b";
    m = bus_encode_http_req(&q);
    CHECK(m && bus_decode_http_req(m->data, m->len, &o, err, sizeof err) && strstr(err, "NUL"),
          "a NUL in the credential refused");
    msg_buf_unref(m);
    bus_http_answer a = {.status = 503, .retry_after = 2, .body = "{\"code\":\"busy\"}", .body_len = 15}, ao;
    m = bus_encode_http_answer(&a);
    CHECK(m && !bus_decode_http_answer(m->data, m->len, &ao, err, sizeof err) && ao.status == 503 &&
              ao.retry_after == 2 && ao.body_len == 15,
          "HANS round trip (%s)", err);
    msg_buf_unref(m);
    const bus_http_answer bad_answers[] = {{.status = 199, .body = "{}", .body_len = 2},
                                           {.status = 200, .retry_after = 3601, .body = "{}", .body_len = 2},
                                           {.status = 200, .body = "[1]", .body_len = 3},
                                           {.status = 200, .body = "", .body_len = 0}};
    refused = 0;
    for (size_t i = 0; i < sizeof bad_answers / sizeof bad_answers[0]; i++) {
        m = bus_encode_http_answer(&bad_answers[i]);
        refused += m && bus_decode_http_answer(m->data, m->len, &ao, err, sizeof err) != 0;
        msg_buf_unref(m);
    }
    CHECK(refused == 4, "HANS: %d of 4 bad statuses, waits and bodies refused", refused);
}

int main(int argc, char **argv) {
    bool write = argc > 2 && !strcmp(argv[1], "--write-golden");
    const char *dir = write ? argv[2] : argc > 1 ? argv[1] : "protocol/golden";
    test_decode_valid();
    test_decode_invalid();
    test_decode_adversarial();
    test_decode_fuzz();
    test_frame_encoder();
    test_queue();
    test_hub();
    test_golden(dir, write);
    test_decode_hostile_fields();
    test_body_limits_match_core();
    test_rest_refusals();
    test_params_limit_documented(dir);
    test_snapshot_wrapper();
    test_reply_codes();
    test_reply_codes_documented(dir);
    test_bus_codec();
    test_bus_obstacles();
    test_bus_http();
    test_number_text();
    printf("test_server_wire: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
