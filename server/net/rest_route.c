/* rest_route.c - REST request -> command (see rest_route.h).  Every body is
 * parsed with cJSON, copied into a cmd_fields with the same names, types and
 * bounds as the WebSocket decoder, and checked by cmd_from_fields; nothing
 * read from the parsed document is used after it is freed. */
#include "rest_route.h"

#include <cJSON.h>
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fail(rest_action *a, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void fail(rest_action *a, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(a->error, sizeof a->error, fmt, ap);
    va_end(ap);
    a->outcome = REST_ERROR;
    a->status = status;
}

/* 405: the connection closes after the answer (lws may still be waiting for
 * a body the route does not take). */
static void wrong_method(rest_action *a, const char *msg)
{
    fail(a, 405, "%s", msg);
    a->close_after = true;
}

static void command(rest_action *a, const cmd *c)
{
    a->outcome = REST_COMMAND;
    a->c = *c;
}

/* The checked command built from f, or a 400 naming what is wrong. */
static void command_from(rest_action *a, const cmd_fields *f)
{
    cmd c;
    char err[FS_ERROR_LEN];
    if (cmd_from_fields(f, &c, err, sizeof err))
        fail(a, 400, "%s", err);
    else
        command(a, &c);
}

static void view(rest_action *a, rest_view v)
{
    a->outcome = REST_VIEW;
    a->view = v;
}

/* JSON object -> cmd_fields, with the same field names and types as msgpack.
 * Every copy is bounded by the field's storage; a field given twice is
 * refused before its value is stored. */
static int fields_from_json(const cJSON *j, cmd_fields *f, char *err, size_t errlen)
{
    if (!cJSON_IsObject(j)) {
        snprintf(err, errlen, "the body must be a JSON object");
        return -1;
    }
    for (const cJSON *e = j->child; e; e = e->next) {
        const char *k = e->string ? e->string : "";
        int fi = cmd_field_find(k, strlen(k));
        if (fi < 0 || fi == CF_TYPE || fi == CF_RID || fi == CF_TOKEN) {
            snprintf(err, errlen, "unknown field '%.32s'", k);
            return -1;
        }
        if (f->present & CF_BIT(fi)) {
            snprintf(err, errlen, "field '%s' given twice", cmd_field_names[fi]);
            return -1;
        }
        bool ok = true;
        switch (cmd_field_types[fi]) {
        case CFT_STR: {
            size_t cap;
            char *dst = cmd_field_str(f, fi, &cap);
            ok = cJSON_IsString(e) && e->valuestring && strlen(e->valuestring) < cap;
            if (ok)
                memcpy(dst, e->valuestring, strlen(e->valuestring) + 1);
            break;
        }
        case CFT_UINT: case CFT_INT: case CFT_NUM:
            ok = cJSON_IsNumber(e);
            if (ok)
                *cmd_field_num(f, fi) = e->valuedouble;
            break;
        case CFT_BOOL:
            ok = cJSON_IsBool(e);
            *cmd_field_bool(f, fi) = cJSON_IsTrue(e);
            break;
        case CFT_VEC3: case CFT_VEC4: {
            int want = cmd_field_types[fi] == CFT_VEC4 ? 4 : 3;
            double *dst = cmd_field_vec(f, fi);
            ok = cJSON_IsArray(e) && cJSON_GetArraySize(e) == want;
            const cJSON *x = ok ? e->child : NULL;
            for (int i = 0; ok && i < want; i++, x = x->next) {
                ok = cJSON_IsNumber(x);
                if (ok)
                    dst[i] = x->valuedouble;
            }
            break;
        }
        case CFT_PARAMS:
            ok = false;
            break;
        }
        if (!ok) {
            static const char *const tn[] = {"a string (under 32 bytes)", "a non-negative integer", "an integer",
                                             "a number", "an array of 3 numbers", "a boolean", "an object",
                                             "an array of 4 numbers"};
            snprintf(err, errlen, "'%s' must be %s", cmd_field_names[fi], tn[cmd_field_types[fi]]);
            return -1;
        }
        f->present |= CF_BIT(fi);
    }
    return 0;
}

/* The body as JSON, or NULL with the error set.  optional: no body is {}. */
static cJSON *parse_body(const rest_request *q, rest_action *a, bool optional)
{
    if (!q->body_len) {
        if (optional)
            return cJSON_CreateObject();
        fail(a, 400, "a JSON body is required");
        return NULL;
    }
    cJSON *j = cJSON_ParseWithLength(q->body, q->body_len);
    if (!j)
        fail(a, 400, "the body is not valid JSON");
    return j;
}

/* A command whose fields are the body's (and the path's id when id >= 0). */
static void post_command_id(const rest_request *q, rest_action *a, const char *type, bool body_optional,
                            long long id)
{
    cJSON *j = parse_body(q, a, body_optional);
    if (!j)
        return;
    cmd_fields f;
    memset(&f, 0, sizeof f);
    if (id >= 0) {
        f.id = (double)id;
        f.present |= CF_BIT(CF_ID);
    }
    char err[FS_ERROR_LEN];
    int rc = fields_from_json(j, &f, err, sizeof err);
    cJSON_Delete(j); /* nothing below reads the document */
    if (rc) {
        fail(a, 400, "%s: %s", type, err);
        return;
    }
    snprintf(f.type, sizeof f.type, "%s", type);
    f.present |= CF_BIT(CF_TYPE) | CF_BIT(CF_RID); /* REST requests are matched by connection */
    command_from(a, &f);
}

/* "/bodies/123" or "/bodies/123/impulse": the id, and the rest of the path. */
static long long body_path_id(const char *p, const char **rest)
{
    const char *q = p + strlen("/bodies/");
    long long id = 0;
    int digits = 0;
    while (isdigit((unsigned char)*q) && digits < 11) {
        id = id * 10 + (*q++ - '0');
        digits++;
    }
    *rest = q;
    return digits && id <= 4294967295ll ? id : -1;
}

static void route_bodies(const rest_request *q, rest_action *a)
{
    const char *rest;
    long long id = body_path_id(q->path, &rest);
    if (id < 0) {
        fail(a, 404, "no such endpoint: /api%.100s", q->path);
        return;
    }
    if (!*rest) {
        if (q->method != HM_DELETE) {
            wrong_method(a, "use DELETE on /api/bodies/{id}");
            return;
        }
        post_command_id(q, a, "body_destroy", true, id);
        return;
    }
    if (!strcmp(rest, "/impulse")) {
        if (q->method != HM_POST) {
            wrong_method(a, "use POST on /api/bodies/{id}/impulse");
            return;
        }
        post_command_id(q, a, "body_impulse", false, id);
        return;
    }
    fail(a, 404, "no such endpoint: /api%.100s", q->path);
}

/* PATCH /api/materials/{name} {"<param>": value, ...}: set_param with
 * 'params'.  Every error text is written before the document is freed (it
 * quotes the document's keys). */
static void patch_material(const rest_request *q, rest_action *a, const char *name)
{
    if (!*name || strlen(name) >= CMD_NAME_LEN) {
        fail(a, 404, "unknown material '%.40s'", name);
        return;
    }
    cJSON *j = parse_body(q, a, false);
    if (!j)
        return;
    cmd_fields f;
    memset(&f, 0, sizeof f);
    snprintf(f.type, sizeof f.type, "set_param");
    snprintf(f.material, sizeof f.material, "%s", name);
    f.present = CF_BIT(CF_TYPE) | CF_BIT(CF_RID) | CF_BIT(CF_MATERIAL) | CF_BIT(CF_PARAMS);
    bool bad = false;
    if (!cJSON_IsObject(j) || !j->child) {
        fail(a, 400, "the body must be a non-empty JSON object {\"<param>\": value, ...}");
        bad = true;
    }
    for (const cJSON *e = bad ? NULL : j->child; e; e = e->next) {
        const char *k = e->string ? e->string : "";
        if (f.n_params >= FS_P_COUNT) {
            fail(a, 400, "too many parameters (at most %d)", FS_P_COUNT);
            bad = true;
            break;
        }
        if (!cJSON_IsNumber(e) || strlen(k) >= CMD_NAME_LEN) {
            fail(a, 400, "'%.32s' must be a number", k);
            bad = true;
            break;
        }
        if (fs_param_find(k) < 0) { /* static table, not the world */
            fail(a, 400, "unknown parameter '%.32s'", k);
            bad = true;
            break;
        }
        snprintf(f.pname[f.n_params], CMD_NAME_LEN, "%s", k);
        f.pvalue[f.n_params++] = e->valuedouble;
    }
    cJSON_Delete(j);
    if (bad)
        return;
    command_from(a, &f);
}

/* A query argument that must be a non-negative integer of at most 9 digits.
 * Returns true when the argument is present (*bad when it is not such an
 * integer). */
static bool parse_uint_arg(const rest_request *q, const char *name, int *out, bool *bad)
{
    char buf[64];
    const char *v = q->arg ? q->arg(q->arg_ctx, name, buf, sizeof buf) : NULL;
    if (!v)
        return false;
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

static void get_particles(const rest_request *q, rest_action *a)
{
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
        fail(a, 400, "offset and limit must be non-negative integers");
        return;
    }
    command_from(a, &f);
}

void rest_translate(const rest_request *q, rest_action *a)
{
    memset(a, 0, sizeof *a);
    const char *p = q->path;
    int m = q->method;
    if (q->metrics) {
        if (m != HM_GET)
            wrong_method(a, "use GET on /metrics");
        else
            view(a, RV_METRICS);
        return;
    }
    if (!strcmp(p, "/snapshot")) {
        a->outcome = REST_SNAPSHOT;
        return;
    }
    enum { V_COMMAND = -1 };
    static const struct {
        const char *path;
        int method;
        int view;      /* what answers: a view, or V_COMMAND (a command for the sim thread) */
        cmd_kind kind; /* V_COMMAND: which */
        bool body_optional;
    } routes[] = {
        {"/health", HM_GET, RV_HEALTH, CMD_NONE, 0},         {"/stats", HM_GET, RV_STATS, CMD_NONE, 0},
        {"/scenes", HM_GET, RV_SCENES, CMD_NONE, 0},         {"/materials", HM_GET, RV_MATERIALS, CMD_NONE, 0},
        {"/particles", HM_GET, V_COMMAND, CMD_GET_PARTICLES, 0}, {"/clients", HM_GET, RV_CLIENTS, CMD_NONE, 0},
        {"/scene", HM_POST, V_COMMAND, CMD_LOAD_SCENE, 0},   {"/pause", HM_POST, V_COMMAND, CMD_PAUSE, 1},
        {"/resume", HM_POST, V_COMMAND, CMD_RESUME, 1},      {"/step", HM_POST, V_COMMAND, CMD_STEP, 1},
        {"/push", HM_POST, V_COMMAND, CMD_PUSH, 0},          {"/emitter", HM_POST, V_COMMAND, CMD_EMITTER, 0},
        {"/solvers", HM_GET, RV_SOLVERS, CMD_NONE, 0},       {"/solver", HM_POST, V_COMMAND, CMD_SET_SOLVER, 0},
        {"/heat", HM_POST, V_COMMAND, CMD_HEAT, 0},          {"/heater", HM_POST, V_COMMAND, CMD_HEATER, 0},
    };
    if (!strcmp(p, "/") && m == HM_GET) {
        view(a, RV_INDEX);
        return;
    }
    if (!strcmp(p, "/bodies")) {
        if (m == HM_GET) {
            cmd c;
            memset(&c, 0, sizeof c);
            c.kind = CMD_GET_BODIES;
            command(a, &c);
        } else if (m == HM_POST) {
            post_command_id(q, a, "body_create", false, -1);
        } else {
            wrong_method(a, "use GET or POST on /api/bodies");
        }
        return;
    }
    if (!strncmp(p, "/bodies/", 8)) {
        route_bodies(q, a);
        return;
    }
    if (!strncmp(p, "/materials/", 11)) {
        if (m != HM_PATCH) {
            wrong_method(a, "use PATCH on /api/materials/{name}");
            return;
        }
        patch_material(q, a, p + 11);
        return;
    }
    for (size_t i = 0; i < sizeof routes / sizeof routes[0]; i++) {
        if (strcmp(routes[i].path, p))
            continue;
        if (routes[i].method != m) {
            a->close_after = true;
            fail(a, 405, "use %s on /api%s", routes[i].method == HM_GET ? "GET" : "POST", p);
            return;
        }
        if (routes[i].kind == CMD_GET_PARTICLES)
            get_particles(q, a);
        else if (routes[i].view != V_COMMAND)
            view(a, (rest_view)routes[i].view);
        else
            post_command_id(q, a, cmd_kind_name(routes[i].kind), routes[i].body_optional, -1);
        return;
    }
    fail(a, 404, "no such endpoint: /api%.100s", p);
}
