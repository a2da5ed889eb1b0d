/* rest_route.c - REST request -> command (see rest_route.h).  Every body is
 * parsed with cJSON, copied into a cmd_fields with the same names, types and
 * bounds as the WebSocket decoder, and checked by cmd_from_fields; nothing
 * read from the parsed document is used after it is freed. */
#include "rest_route.h"
#include "export.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(rest_action *a, reply_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(rest_action *a, reply_code code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
    a->outcome = REST_ERROR;
    a->code = code;
}

/* RC_METHOD_NOT_ALLOWED: the connection closes after the answer (lws may still be waiting for
 * a body the route does not take). */
static void wrong_method(rest_action *a, const char *msg) {
    fail(a, RC_METHOD_NOT_ALLOWED, "%s", msg);
    a->close_after = true;
}

static void command(rest_action *a, const cmd *c) {
    a->outcome = REST_COMMAND;
    a->c = *c;
}

/* The checked command built from f, or a bad request naming what is wrong. */
static void command_from(rest_action *a, const cmd_fields *f) {
    cmd c;
    char err[FS_ERROR_LEN];
    if (cmd_from_fields(f, &c, err, sizeof err))
        fail(a, RC_BAD_REQUEST, "%s", err);
    else
        command(a, &c);
}

static void view(rest_action *a, rest_view v) {
    a->outcome = REST_VIEW;
    a->view = v;
}

/* JSON object -> cmd_fields, with the same field names and types as msgpack.
 * Every copy is bounded by the field's storage; a field given twice is
 * refused before its value is stored. */
static int fields_from_json(const cJSON *j, cmd_fields *f, char *err, size_t errlen) {
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "the body must be a JSON object");
        return -1;
    }
    for (const cJSON *e = j->child; e; e = e->next) {
        const char *k = e->string ? e->string : "";
        int fi = cmd_field_find(k, strlen(k));
        if (fi < 0 || fi == CF_TYPE || fi == CF_RID || fi == CF_SID || fi == CF_TOKEN) {
            snprintf(err, errlen, "unknown field '%.32s'", k);
            return -1;
        }
        if (f->present & CF_BIT(fi)) {
            snprintf(err, errlen, "field '%s' given twice", cmd_field_defs[fi].name);
            return -1;
        }
        bool ok = true;
        switch (cmd_field_defs[fi].type) {
        case CFT_STR: {
            size_t cap;
            char *dst = cmd_field_str(f, fi, &cap);
            ok = cJSON_IsString(e) && e->valuestring && strlen(e->valuestring) < cap;
            if (ok) memcpy(dst, e->valuestring, strlen(e->valuestring) + 1);
            break;
        }
        case CFT_UINT:
        case CFT_INT:
        case CFT_NUM:
            ok = cJSON_IsNumber(e);
            if (ok) *cmd_field_num(f, fi) = e->valuedouble;
            break;
        case CFT_BOOL:
            ok = cJSON_IsBool(e);
            *cmd_field_bool(f, fi) = cJSON_IsTrue(e);
            break;
        case CFT_VEC3:
        case CFT_VEC4: {
            int want = cmd_field_defs[fi].type == CFT_VEC4 ? 4 : 3;
            double *dst = cmd_field_vec(f, fi);
            ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == want;
            const cJSON *x = ok ? e->child : NULL;
            for (int i = 0; ok && i < want; i++, x = x->next) {
                ok = cJSON_IsNumber(x);
                if (ok) dst[i] = x->valuedouble;
            }
            break;
        }
        case CFT_PARAMS:
            ok = false;
            break;
        }
        if (!ok) {
            snprintf(err, errlen, "'%s' must be %s", cmd_field_defs[fi].name,
                     cmd_ftype_text(cmd_field_defs[fi].type, true));
            return -1;
        }
        f->present |= CF_BIT(fi);
    }
    return 0;
}

/* Whether the body holds a NUL: a zero byte, or the escape \u0000 in a
 * string.  cJSON would end the string there and a check of its text would
 * see only what comes before ("a\u0000b" as "a"), so strings are checked
 * on the bytes received.  A backslash occurs in valid JSON only inside a
 * string, where it starts an escape of which the next character is a part. */
static bool has_nul(const char *p, size_t n) {
    if (memchr(p, 0, n)) return true;
    for (size_t i = 0; i + 1 < n; i++) {
        if (p[i] != '\\') continue;
        if (p[i + 1] == 'u' && i + 5 < n && !memcmp(p + i + 2, "0000", 4)) return true;
        i++; /* the escaped character: "\\u0000" is a backslash, then text */
    }
    return false;
}

/* The body as JSON, or NULL with the error set.  optional: no body is {}. */
static cJSON *parse_body(const rest_request *q, rest_action *a, bool optional) {
    if (!q->body_len) {
        if (optional) return cJSON_CreateObject();
        fail(a, RC_BAD_REQUEST, "a JSON body is required");
        return NULL;
    }
    if (has_nul(q->body, q->body_len)) {
        fail(a, RC_BAD_REQUEST, "the body must not hold a NUL character (a zero byte or \\u0000 in a string)");
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(q->body, q->body_len);
    if (!j) fail(a, RC_BAD_REQUEST, "the body is not valid JSON");
    return j;
}

/* A command whose fields are the body's (and the path's id when id >= 0). */
static void post_command_id(const rest_request *q, rest_action *a, const char *type, bool body_optional, long long id,
                            const char *name) {
    if (name && (!*name || strlen(name) >= CMD_NAME_LEN)) {
        fail(a, RC_NOT_FOUND, "%s: no such name '%.40s'", type, name);
        return;
    }
    cJSON *j = parse_body(q, a, body_optional);
    if (!j) return;
    cmd_fields f;
    memset(&f, 0, sizeof f);
    if (id >= 0) {
        f.id = (double)id;
        f.present |= CF_BIT(CF_ID);
    }
    if (name) {
        snprintf(f.name, sizeof f.name, "%s", name);
        f.present |= CF_BIT(CF_NAME);
    }
    char err[FS_ERROR_LEN];
    int rc = fields_from_json(j, &f, err, sizeof err);
    cJSON_Delete(j); /* nothing below reads the document */
    if (rc) {
        fail(a, RC_BAD_REQUEST, "%s: %s", type, err);
        return;
    }
    snprintf(f.type, sizeof f.type, "%s", type);
    f.present |= CF_BIT(CF_TYPE) | CF_BIT(CF_RID); /* REST requests are matched by connection */
    command_from(a, &f);
}

/* PATCH /api/materials/{name} {"<param>": value, ...}: set_param with
 * 'params'.  Every error text is written before the document is freed (it
 * quotes the document's keys). */
static void patch_material(const rest_request *q, rest_action *a, const char *name) {
    if (!*name || strlen(name) >= CMD_NAME_LEN) {
        fail(a, RC_NOT_FOUND, "unknown material '%.40s'", name);
        return;
    }
    cJSON *j = parse_body(q, a, false);
    if (!j) return;
    cmd_fields f;
    memset(&f, 0, sizeof f);
    snprintf(f.type, sizeof f.type, "set_param");
    snprintf(f.material, sizeof f.material, "%s", name);
    f.present = CF_BIT(CF_TYPE) | CF_BIT(CF_RID) | CF_BIT(CF_MATERIAL) | CF_BIT(CF_PARAMS);
    bool bad = false;
    if (!cJSON_IsObject(j) || !j->child) {
        fail(a, RC_BAD_REQUEST, "the body must be a non-empty JSON object {\"<param>\": value, ...}");
        bad = true;
    }
    for (const cJSON *e = bad ? NULL : j->child; e; e = e->next) {
        const char *k = e->string ? e->string : "";
        if (f.n_params >= FS_P_COUNT) {
            fail(a, RC_BAD_REQUEST, "too many parameters (at most %d)", FS_P_COUNT);
            bad = true;
            break;
        }
        if (!cJSON_IsNumber(e) || strlen(k) >= CMD_NAME_LEN) {
            fail(a, RC_BAD_REQUEST, "'%.32s' must be a number", k);
            bad = true;
            break;
        }
        if (fs_param_find(k) < 0) { /* static table, not the world */
            fail(a, RC_BAD_REQUEST, "unknown parameter '%.32s'", k);
            bad = true;
            break;
        }
        snprintf(f.pname[f.n_params], CMD_NAME_LEN, "%s", k);
        f.pvalue[f.n_params++] = e->valuedouble;
    }
    cJSON_Delete(j);
    if (bad) return;
    command_from(a, &f);
}

/* A query argument that must be a non-negative integer of at most 9 digits.
 * Returns true when the argument is present (*bad when it is not such an
 * integer). */
static bool parse_uint_arg(const rest_request *q, const char *name, int *out, bool *bad) {
    char buf[64];
    const char *v = q->arg ? q->arg(q->arg_ctx, name, buf, sizeof buf) : NULL;
    if (!v) return false;
    if (!*v || strlen(v) > 9) {
        *bad = true;
        return true;
    }
    for (const char *p = v; *p; p++)
        if (!isdigit((unsigned char)*p)) {
            *bad = true;
            return true;
        }
    *out = atoi(v);
    return true;
}

static void get_particles(const rest_request *q, rest_action *a) {
    cmd_fields f;
    memset(&f, 0, sizeof f);
    snprintf(f.type, sizeof f.type, "get_particles");
    f.present = CF_BIT(CF_TYPE) | CF_BIT(CF_RID);
    int v = 0;
    bool bad = false;
    if (parse_uint_arg(q, "offset=", &v, &bad)) {
        f.offset = v;
        f.present |= CF_BIT(CF_OFFSET);
    }
    if (parse_uint_arg(q, "limit=", &v, &bad)) {
        f.limit = v;
        f.present |= CF_BIT(CF_LIMIT);
    }
    if (bad) {
        fail(a, RC_BAD_REQUEST, "offset and limit must be non-negative integers");
        return;
    }
    /* the format: ?format= first, else the Accept header */
    char fb[32];
    const char *fv = q->arg ? q->arg(q->arg_ctx, "format=", fb, sizeof fb) : NULL;
    int format = fv ? export_find(fv) : export_from_accept(q->accept);
    if (format < 0) {
        fail(a, RC_NOT_ACCEPTABLE,
             "no such format%s%.20s%s: this server writes %s (?format= or Accept: application/json, "
             "application/x-ply, application/x-vtk-vtp+xml, application/x-vtk-vtu+xml, text/csv)",
             fv ? " '" : "", fv ? fv : "", fv ? "'" : "", export_list());
        return;
    }
    if (format != EXPORT_JSON && (f.present & (CF_BIT(CF_OFFSET) | CF_BIT(CF_LIMIT)))) {
        fail(a, RC_BAD_REQUEST, "offset and limit page the JSON view; format=%s is the whole world",
             export_name(format));
        return;
    }
    command_from(a, &f);
    if (a->outcome == REST_COMMAND) a->c.u.particles.format = format;
}

/* GET /api/recordings?offset=&limit=: a page of the listing. */
static void recordings_page(const rest_request *q, rest_action *a) {
    int offset = 0, limit = REST_REC_PAGE_DEFAULT;
    bool bad = false;
    parse_uint_arg(q, "offset=", &offset, &bad);
    parse_uint_arg(q, "limit=", &limit, &bad);
    if (bad || limit < 1 || limit > REST_REC_PAGE_MAX) {
        fail(a, RC_BAD_REQUEST, "offset must be an integer >= 0 and limit an integer in [1, %d]", REST_REC_PAGE_MAX);
        return;
    }
    view(a, RV_RECORDINGS);
    a->offset = offset;
    a->limit = limit;
}

/* ---- The route table --------------------------------------------------------- */

/* Every route of the REST API, in the order GET /api lists them.  A path's
 * {id} is a body id (digits, at most 4294967295), its {name} the rest of the
 * path.  Which requests need the token is the command's (cmd_kind_mutates).
 * Constant data (any thread). */
#define VIEW(path, v)                                                                                                  \
    { HM_GET, path, NULL, RH_VIEW, v, CMD_NONE, false }
#define POST(path, kind, body)                                                                                         \
    { HM_POST, path, NULL, RH_COMMAND, RV_INDEX, kind, body }
#define BODY_REQUIRED false
#define BODY_OPTIONAL true /* no body is {} */
const rest_route_def rest_routes[] = {
    VIEW("/api", RV_INDEX),
    VIEW("/api/health", RV_HEALTH),
    VIEW("/api/stats", RV_STATS),
    VIEW("/api/scenes", RV_SCENES),
    POST("/api/scene", CMD_LOAD_SCENE, BODY_REQUIRED),
    VIEW("/api/materials", RV_MATERIALS),
    {HM_PATCH, "/api/materials/{name}", NULL, RH_MATERIAL, RV_INDEX, CMD_SET_PARAM, false},
    POST("/api/pause", CMD_PAUSE, BODY_OPTIONAL),
    POST("/api/resume", CMD_RESUME, BODY_OPTIONAL),
    POST("/api/step", CMD_STEP, BODY_OPTIONAL),
    {HM_GET, "/api/particles", "?offset=&limit=", RH_QUERY, RV_INDEX, CMD_GET_PARTICLES, false},
    POST("/api/push", CMD_PUSH, BODY_REQUIRED),
    POST("/api/emitter", CMD_EMITTER, BODY_REQUIRED),
    {HM_GET, "/api/bodies", NULL, RH_BARE, RV_INDEX, CMD_GET_BODIES, false},
    POST("/api/bodies", CMD_BODY_CREATE, BODY_REQUIRED),
    {HM_DELETE, "/api/bodies/{id}", NULL, RH_COMMAND, RV_INDEX, CMD_BODY_DESTROY, BODY_OPTIONAL},
    POST("/api/bodies/{id}/impulse", CMD_BODY_IMPULSE, BODY_REQUIRED),
    VIEW("/api/clients", RV_CLIENTS),
    VIEW("/api/solvers", RV_SOLVERS),
    POST("/api/solver", CMD_SET_SOLVER, BODY_REQUIRED),
    POST("/api/heat", CMD_HEAT, BODY_REQUIRED),
    POST("/api/heater", CMD_HEATER, BODY_REQUIRED),
    {HM_GET, "/api/snapshot", NULL, RH_SNAPSHOT, RV_INDEX, CMD_GET_SNAPSHOT, false},
    {HM_POST, "/api/snapshot", NULL, RH_SNAPSHOT, RV_INDEX, CMD_RESTORE, false},
    {HM_GET, "/api/recordings", "?offset=&limit=", RH_VIEW, RV_RECORDINGS, CMD_NONE, false},
    POST("/api/recordings", CMD_RECORD_START, BODY_OPTIONAL),
    POST("/api/recordings/stop", CMD_RECORD_STOP, BODY_OPTIONAL),
    {HM_GET, "/api/recordings/{name}", NULL, RH_RECFILE, RV_INDEX, CMD_NONE, false},
    VIEW("/api/meshes", RV_MESHES),
    {HM_POST, "/api/meshes", NULL, RH_MESH, RV_INDEX, CMD_MESH_UPLOAD, false},
    {HM_GET, "/api/obstacles", NULL, RH_BARE, RV_INDEX, CMD_GET_OBSTACLES, false},
    POST("/api/obstacles", CMD_OBSTACLE_ADD, BODY_REQUIRED),
    {HM_DELETE, "/api/obstacles/{id}", NULL, RH_COMMAND, RV_INDEX, CMD_OBSTACLE_REMOVE, BODY_OPTIONAL},
    {HM_GET, "/api/obstacles/{id}/mesh", NULL, RH_OMESH, RV_INDEX, CMD_NONE, false},
    VIEW("/api/probes", RV_PROBES),
    VIEW("/api/fleet", RV_FLEET),
    {HM_POST, "/api/fleet/nodes/{id}/drain", NULL, RH_DRAIN, RV_INDEX, CMD_NONE, BODY_OPTIONAL},
    {HM_DELETE, "/api/fleet/nodes/{id}/drain", NULL, RH_DRAIN, RV_INDEX, CMD_NONE, BODY_OPTIONAL},
    POST("/api/probes", CMD_PROBE_ADD, BODY_REQUIRED),
    {HM_DELETE, "/api/probes/{name}", NULL, RH_COMMAND, RV_INDEX, CMD_PROBE_REMOVE, BODY_OPTIONAL},
    VIEW("/metrics", RV_METRICS),
};
#undef VIEW
#undef POST
const int rest_route_count = (int)(sizeof rest_routes / sizeof rest_routes[0]);

const char *rest_method_name(int method) {
    static const char *const names[] = {
        [HM_OTHER] = "?", [HM_GET] = "GET",       [HM_POST] = "POST",       [HM_PATCH] = "PATCH",
        [HM_PUT] = "PUT", [HM_DELETE] = "DELETE", [HM_OPTIONS] = "OPTIONS", [HM_HEAD] = "HEAD"};
    return method >= 0 && method <= HM_HEAD ? names[method] : "?";
}

/* A path's values for the pattern's {id} and {name}. */
typedef struct route_args {
    long long id; /* -1: none */
    const char *name;
} route_args;

/* Does path match pattern?  Fills args. */
static bool route_match(const char *pattern, const char *path, route_args *args) {
    args->id = -1;
    args->name = NULL;
    while (*pattern) {
        if (!strncmp(pattern, "{name}", 6)) { /* the rest of the path, '/' and empty included */
            args->name = path;
            return true;
        }
        if (!strncmp(pattern, "{id}", 4)) {
            long long id = 0;
            int digits = 0;
            while (isdigit((unsigned char)*path) && digits < 12) id = id * 10 + (*path++ - '0'), digits++;
            if (!digits || digits > 11 || id > 4294967295ll) return false;
            args->id = id;
            pattern += 4;
            continue;
        }
        if (*pattern++ != *path++) return false;
    }
    return !*path;
}

/* 405 for a path some route serves with other methods ("use GET or POST on
 * /api/bodies"); false when no route serves it.  /api itself answers only
 * GET and other methods get 404, as they always have. */
static bool wrong_method_for(const char *full, rest_action *a) {
    char msg[160] = "use";
    size_t l = 3;
    const char *pattern = NULL;
    for (int i = 0; i < rest_route_count; i++) {
        const rest_route_def *r = &rest_routes[i];
        route_args args;
        if (r->handler == RH_VIEW && r->view == RV_INDEX) continue;
        if (!route_match(r->path, full, &args)) continue;
        l += (size_t)snprintf(msg + l, sizeof msg - l, "%s %s", pattern ? " or" : "", rest_method_name(r->method));
        pattern = r->path;
    }
    if (!pattern) return false;
    snprintf(msg + l, sizeof msg - l, " on %s", pattern);
    wrong_method(a, msg);
    return true;
}

/* A recording's file by its path below the recordings folder: NAME/FILE with
 * NAME a recording's name (validate.c's rule) and FILE index.json or
 * seg-NNNNNN.fsrec: nothing else, so no request reads outside the folder. */
static void recfile(const char *name, rest_action *a) {
    const char *slash = name ? strchr(name, '/') : NULL;
    size_t nl = slash ? (size_t)(slash - name) : 0;
    bool ok = slash && nl > 0 && nl < CMD_NAME_LEN && name[0] != '.';
    for (size_t i = 0; ok && i < nl; i++)
        ok = isalnum((unsigned char)name[i]) || name[i] == '-' || name[i] == '_' || name[i] == '.';
    const char *f = ok ? slash + 1 : "";
    bool seg = strlen(f) == 16 && !strncmp(f, "seg-", 4) && !strcmp(f + 10, ".fsrec");
    for (int i = 4; seg && i < 10; i++) seg = isdigit((unsigned char)f[i]);
    if (!ok || (!seg && strcmp(f, "index.json"))) {
        fail(a, RC_NOT_FOUND,
             "no such recording file (GET /api/recordings lists them; files are NAME/index.json and "
             "NAME/seg-NNNNNN.fsrec)");
        return;
    }
    a->outcome = REST_RECFILE;
    snprintf(a->file, sizeof a->file, "%.*s/%s", (int)nl, name, f);
}

/* POST (a drain) or DELETE (its cancel) /api/fleet/nodes/{id}/drain: a
 * node's id (1..65535), no body but {} (a DELETE's body is never read). */
static void drain(const rest_request *q, long long id, rest_action *a) {
    if (id < 1 || id > 65535) {
        fail(a, RC_BAD_REQUEST, "a node's id is 1 to 65535 (GET /api/fleet lists the nodes)");
        return;
    }
    cJSON *j = q->body_len ? cJSON_ParseWithLength(q->body, q->body_len) : NULL;
    const bool ok = !q->body_len || (cJSON_IsObject(j) && cJSON_GetArraySize(j) == 0);
    cJSON_Delete(j);
    if (!ok) {
        fail(a, RC_BAD_REQUEST, "a drain or its cancel takes no body (or {})");
        return;
    }
    a->outcome = q->method == HM_DELETE ? REST_UNDRAIN : REST_DRAIN;
    a->id = (uint32_t)id;
}

/* Carries out a matched route. */
static void route_run(const rest_route_def *r, const route_args *args, const rest_request *q, rest_action *a) {
    cmd c;
    switch (r->handler) {
    case RH_VIEW:
        if (r->view == RV_RECORDINGS)
            recordings_page(q, a);
        else
            view(a, r->view);
        return;
    case RH_COMMAND:
        post_command_id(q, a, cmd_kind_name(r->kind), r->body_optional, args->id, args->name);
        return;
    case RH_QUERY:
        get_particles(q, a);
        return;
    case RH_BARE:
        memset(&c, 0, sizeof c);
        c.kind = r->kind;
        command(a, &c);
        return;
    case RH_MATERIAL:
        patch_material(q, a, args->name);
        return;
    case RH_SNAPSHOT:
        a->outcome = REST_SNAPSHOT;
        return;
    case RH_RECFILE:
        recfile(args->name, a);
        return;
    case RH_MESH:
        a->outcome = REST_MESH;
        return;
    case RH_OMESH:
        a->outcome = REST_OMESH;
        a->id = (uint32_t)args->id;
        return;
    case RH_DRAIN:
        drain(q, args->id, a);
        return;
    }
}

/* The whole path of a request: "/metrics", "/api", "/api/stats". */
static void full_path(const char *path, bool metrics, char *full, size_t cap) {
    if (metrics)
        snprintf(full, cap, "/metrics");
    else /* path is "/" for /api itself */
        snprintf(full, cap, "/api%.230s", !strcmp(path, "/") ? "" : *path ? path : "/");
}

const char *rest_route_pattern(int method, const char *path, bool metrics) {
    char full[240];
    full_path(path, metrics, full, sizeof full);
    for (int i = 0; i < rest_route_count; i++) {
        route_args args;
        if (rest_routes[i].method == method && route_match(rest_routes[i].path, full, &args))
            return rest_routes[i].path;
    }
    return NULL;
}

void rest_translate(const rest_request *q, rest_action *a) {
    memset(a, 0, sizeof *a);
    char full[240];
    full_path(q->path, q->metrics, full, sizeof full);
    for (int i = 0; i < rest_route_count; i++) {
        route_args args;
        if (rest_routes[i].method == q->method && route_match(rest_routes[i].path, full, &args)) {
            route_run(&rest_routes[i], &args, q, a);
            return;
        }
    }
    if (!wrong_method_for(full, a)) fail(a, RC_NOT_FOUND, "no such endpoint: /api%.100s", q->path);
}
