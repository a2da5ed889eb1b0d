/* fuzz_rest.c - libFuzzer harness: one REST request through rest_translate
 * (server/net/rest_route.c), the function rest.c calls for every /api request:
 * method + path + query + body -> a checked command, a view, or an error.
 *
 * Input layout (so that every route is reached and its body mutated):
 *   byte 0       the route (index into routes[] below, modulo its size);
 *   byte 1       the method: bit 7 clear -> the route's own method, set ->
 *                HM_* from bits 0-2 (wrong methods: 405 paths);
 *   then         the path parameter up to the first '\n' ({id} of /bodies/{id},
 *                {name} of /materials/{name}, or the whole path for "free"),
 *                the query string up to the next '\n' ("offset=5&limit=10"),
 *                and the body: every remaining byte (exactly those bytes, not
 *                terminated, as lws hands the server a body).
 * POST /api/snapshot's body goes where route_snapshot sends it
 * (wire_decode_snapshot); restoring it is fuzz_snapshot's work.
 *
 * Checks, besides ASan/UBSan: an accepted command keeps every promise of
 * commands.h (fuzz_check.h); an error has a 4xx status and a reason. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "rest_route.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
    const char *path; /* "%s": the path parameter goes there */
    int method;
} routes[] = {
    {"/", HM_GET},
    {"/health", HM_GET},
    {"/stats", HM_GET},
    {"/scenes", HM_GET},
    {"/materials", HM_GET},
    {"/particles", HM_GET},
    {"/clients", HM_GET},
    {"/solvers", HM_GET},
    {"/scene", HM_POST},
    {"/pause", HM_POST},
    {"/resume", HM_POST},
    {"/step", HM_POST},
    {"/push", HM_POST},
    {"/emitter", HM_POST},
    {"/solver", HM_POST},
    {"/heat", HM_POST},
    {"/heater", HM_POST},
    {"/bodies", HM_GET},
    {"/bodies", HM_POST},
    {"/bodies/%s", HM_DELETE},
    {"/bodies/%s/impulse", HM_POST},
    {"/materials/%s", HM_PATCH},
    {"/snapshot", HM_GET},
    {"/snapshot", HM_POST},
    {"metrics", HM_GET},
    {"%s", HM_GET},
    {"%s", HM_POST},
    {"/recordings", HM_GET},
    {"/recordings", HM_POST},
    {"/recordings/%s", HM_GET},
};
#define NROUTES (sizeof routes / sizeof routes[0])

/* The query string, split at '&' as lws splits URI arguments into
 * fragments.  Threads: the harness's. */
typedef struct query {
    const char *s;
    size_t n;
} query;

/* lws_get_urlarg_by_name's contract (libwebsockets 4.1.6, lib/core-net/
 * wsi.c): walk the fragments in order; one that does not fit buf (length
 * >= len) ends the walk; the first that starts with name is copied into buf
 * and the value after name returned. */
static const char *query_arg(void *ctx, const char *name, char *buf, int len) {
    const query *q = ctx;
    size_t sl = strlen(name), at = 0;
    while (at <= q->n && q->n) {
        const char *f = q->s + at;
        const char *amp = memchr(f, '&', q->n - at);
        size_t fl = amp ? (size_t)(amp - f) : q->n - at;
        if (len <= 0 || fl >= (size_t)len) return NULL;
        memcpy(buf, f, fl);
        buf[fl] = 0;
        if (!strncmp(buf, name, sl)) return buf + sl;
        if (!amp) break;
        at += fl + 1;
    }
    return NULL;
}

/* The next field of the input, up to '\n' (consumed) or the end. */
static const uint8_t *field(const uint8_t **p, const uint8_t *end, size_t *n) {
    const uint8_t *s = *p, *nl = memchr(s, '\n', (size_t)(end - s));
    *n = nl ? (size_t)(nl - s) : (size_t)(end - s);
    *p = nl ? nl + 1 : end;
    return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    const uint8_t *p = data + 2, *end = data + size;
    unsigned ri = data[0] % NROUTES;
    int method = data[1] & 0x80 ? (data[1] & 7) : routes[ri].method;
    size_t pn, qn;
    const uint8_t *param = field(&p, end, &pn);
    const uint8_t *qs = field(&p, end, &qn);

    /* The path as rest.c's LWS_CALLBACK_HTTP leaves it in http_req.path
     * (char[160], terminated, one trailing '/' removed; lws stops at NUL). */
    char pbuf[160], path[160];
    size_t pl = pn < 100 ? pn : 100;
    memcpy(pbuf, param, pl);
    pbuf[pl] = 0;
    bool metrics = !strcmp(routes[ri].path, "metrics");
    const char *tmpl = metrics ? "" : routes[ri].path;
    const char *pc = strstr(tmpl, "%s");
    if (pc)
        snprintf(path, sizeof path, "%.*s%s%s", (int)(pc - tmpl), tmpl, pbuf, pc + 2);
    else
        snprintf(path, sizeof path, "%s", tmpl);
    if (!path[0]) snprintf(path, sizeof path, "/");
    size_t l = strlen(path);
    if (l > 1 && path[l - 1] == '/') path[l - 1] = 0;

    query q = {(const char *)qs, qn};
    rest_request req = {.method = method,
                        .path = path,
                        .metrics = metrics,
                        .arg = query_arg,
                        .arg_ctx = &q,
                        .body = p < end ? (const char *)p : NULL,
                        .body_len = (size_t)(end - p)};
    rest_action a;
    rest_translate(&req, &a);
    switch (a.outcome) {
    case REST_ERROR:
        fz_check_error(a.error, sizeof a.error);
        FUZZ_REQUIRE(a.code > RC_OK && a.code < RC_COUNT && reply_code_http(a.code) >= 400 &&
                     reply_code_http(a.code) < 500);
        break;
    case REST_COMMAND:
        fz_check_cmd(&a.c);
        break;
    case REST_VIEW:
        FUZZ_REQUIRE(a.view >= RV_INDEX && a.view <= RV_MESHES);
        FUZZ_REQUIRE(method == HM_GET);
        if (a.view == RV_RECORDINGS) /* the listing's page, as checked */
            FUZZ_REQUIRE(a.offset >= 0 && a.limit >= 1 && a.limit <= REST_REC_PAGE_MAX);
        break;
    case REST_RECFILE: { /* a file below the recordings folder: NAME/index.json or NAME/seg-NNNNNN.fsrec */
        FUZZ_REQUIRE(method == HM_GET && fz_terminated(a.file, sizeof a.file));
        const char *sl = strchr(a.file, '/');
        FUZZ_REQUIRE(sl && sl > a.file && a.file[0] != '.' && !strchr(sl + 1, '/')); /* no ".." component */
        FUZZ_REQUIRE(!strcmp(sl + 1, "index.json") || (strlen(sl + 1) == 16 && !strncmp(sl + 1, "seg-", 4)));
        break;
    }
    case REST_MESH:
        FUZZ_REQUIRE(method == HM_POST && !strcmp(path, "/meshes"));
        break;
    case REST_DRAIN: /* POST /api/fleet/nodes/{id}/drain: a node's id in range */
        FUZZ_REQUIRE(method == HM_POST && !strncmp(path, "/fleet/nodes/", 13) && a.id >= 1 && a.id <= 65535);
        break;
    case REST_UNDRAIN: /* DELETE /api/fleet/nodes/{id}/drain: the same id */
        FUZZ_REQUIRE(method == HM_DELETE && !strncmp(path, "/fleet/nodes/", 13) && a.id >= 1 && a.id <= 65535);
        break;
    case REST_OMESH: /* GET /api/obstacles/{id}/mesh: the id as the path spells it */
        FUZZ_REQUIRE(method == HM_GET && !strncmp(path, "/obstacles/", 11) && strlen(path) > 16 &&
                     !strcmp(path + strlen(path) - 5, "/mesh") && strtoull(path + 11, NULL, 10) == a.id);
        break;
    case REST_SNAPSHOT:
        FUZZ_REQUIRE(!strcmp(path, "/snapshot"));
        if (method == HM_POST && req.body_len) { /* as route_snapshot */
            const uint8_t *world;
            size_t wl;
            char err[160];
            if (wire_decode_snapshot((const uint8_t *)req.body, req.body_len, &world, &wl, err, sizeof err))
                fz_check_error(err, sizeof err);
            else
                FUZZ_REQUIRE(world >= (const uint8_t *)req.body && wl <= req.body_len &&
                             (size_t)(world - (const uint8_t *)req.body) <= req.body_len - wl);
        }
        break;
    }
    return 0;
}
