/* rest.c - the JSON REST API under /api (lws callback mount).  Requests that
 * read or change the world become cmd values on the shared queue; the reply
 * comes back through the hub and is turned into JSON here.  Reads of
 * statistics and materials use the immutable snapshots the sim thread
 * publishes.  Everything here runs on the network thread. */
#include <cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "bus_codec.h"
#include "bus_http.h"
#include "clock.h"
#include "hub.h"
#include "log.h"
#include "metrics.h"
#include "net_internal.h"
#include "net_room.h"
#include "rest.h"
#include "rest_budget.h"
#include "rest_route.h"
#include "rest_export.h"
#include "rest_fleet.h"
#include "obstacle_mesh.h"
#include "rest_meshes.h"
#include "rest_answer.h"
#include "rest_recordings.h"
#include "rest_proxy.h"
#include "rest_relay.h"
#include "rest_rooms.h"
#include "rest_views.h"
#include "roles.h"
#include "room_page.h"
#include "wire.h"

/* ---- Requests that become commands ---------------------------------------- */

/* The party a request counts against (rest_budget.h): its address, and
 * whether it carries the server's token. */
static void party_of(net *n, http_req *r, char *key, size_t cap) {
    char peer[64] = "bus", auth[200]; /* (a request from the bus counts as one party) */
    if (r->wsi && !lws_get_peer_simple(r->wsi, peer, sizeof peer)) peer[0] = 0;
    bool token = r->wsi && n->cfg->token[0] &&
                 lws_hdr_copy(r->wsi, auth, sizeof auth, WSI_TOKEN_HTTP_AUTHORIZATION) > 7 &&
                 !strncmp(auth, "Bearer ", 7) && net_token_ok(n, auth + 7);
    rest_party_key(peer, token, key, cap);
}

/* A refusal for the party's own budget, answered: held REST_HOLD_MS before
 * it is sent once the party has had its refusals answered at once
 * (rest_budget_refusal_held), so that a client that does not wait for
 * Retry-After costs one request a hold per connection. */
static void hold_refusal(net *n, http_req *r, const char *key) {
    if (!r->wsi || !rest_budget_refusal_held(&n->budget, key, clock_now_ns()) || n->held >= REST_HELD_MAX) return;
    r->held = true;
    n->held++;
    n->refusals_held++;
    lws_set_timer_usecs(r->wsi, (lws_usec_t)REST_HOLD_MS * 1000);
}

/* A recording start, or a read of the recordings, is paid for from its
 * party's bucket of that kind (rest_budget.h; cost tokens); beyond it the
 * request is answered rate_limited with Retry-After, and this returns
 * false. */
static bool pay_light(net *n, http_req *r, rest_heavy kind, double cost, const char *what) {
    char key[REST_PARTY_KEY];
    party_of(n, r, key, sizeof key);
    int after = 1;
    if (rest_budget_pay(&n->budget, key, kind, cost, clock_now_ns(), &after)) return true;
    r->retry_after = after;
    rest_respond_error(n, r, RC_RATE_LIMITED, "too many %s: at most %d a minute from one address; try again in %d s",
                       what, rest_budget_per_minute(&n->budget, kind), after);
    hold_refusal(n, r, key);
    return false;
}

/* An export or a snapshot goes through its party's budget (rest_budget.h):
 * beyond it the request is answered rate_limited (the party's bound) or
 * busy (the server's), with Retry-After, and returns false. */
static bool admit_heavy(net *n, http_req *r, const cmd *c) {
    int kind;
    if (c->kind == CMD_GET_SNAPSHOT)
        kind = REST_HEAVY_SNAPSHOT;
    else if (c->kind == CMD_GET_PARTICLES && c->u.particles.format != EXPORT_JSON)
        kind = REST_HEAVY_EXPORT;
    else
        return true;
    char key[REST_PARTY_KEY];
    party_of(n, r, key, sizeof key);
    rest_verdict why;
    int after = 1;
    int place = rest_budget_admit(&n->budget, key, (rest_heavy)kind, clock_now_ns(), &why, &after);
    if (place) {
        r->heavy_place = place;
        r->heavy_kind = kind;
        return true;
    }
    r->retry_after = after;
    bool exp = kind == REST_HEAVY_EXPORT;
    if (why == REST_PARTY_RATE)
        rest_respond_error(n, r, RC_RATE_LIMITED,
                           "too many %s: at most %d a minute from one address; try again in %d s",
                           exp ? "exports" : "snapshots", rest_budget_per_minute(&n->budget, (rest_heavy)kind), after);
    else if (why == REST_PARTY_BUSY)
        rest_respond_error(n, r, RC_RATE_LIMITED,
                           "too many exports and snapshots at once: at most %d under way from one address; try again "
                           "when one has been read",
                           REST_PARTY_HEAVY);
    else
        rest_respond_error(n, r, RC_BUSY, "busy: %d exports and snapshots are under way, try again", REST_HEAVY_MAX);
    if (why != REST_SERVER_BUSY) hold_refusal(n, r, key);
    return false;
}

/* The request admitted by admit_heavy was not sent on: its place and token back. */
static void cancel_heavy(net *n, http_req *r) {
    if (r->heavy_place) rest_budget_cancel(&n->budget, r->heavy_place, (rest_heavy)r->heavy_kind);
    r->heavy_place = 0;
}

/* Returns true when the command was queued (an answer will follow). */
static bool submit(net *n, http_req *r, cmd *c) {
    if (cmd_kind_mutates(c->kind) && rest_refuse_origin(n, r)) return false;
    c->role = r->role; /* checked where it is applied (apply.c) */
    bool payload = c->kind == CMD_GET_PARTICLES || c->kind == CMD_GET_BODIES || c->kind == CMD_GET_SNAPSHOT ||
                   c->kind == CMD_RESTORE || c->kind == CMD_GET_OBSTACLES;
    if (n->relay_id && rest_proxy_refuse_moving(n, r)) return false; /* a fleet's room between holders */
    if (n->relay_id && payload) {
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED,
                           "this is a relay: %s answers with the world's data; ask the sim node",
                           cmd_kind_name(c->kind));
        return false;
    }
    if (n->npending >= NET_MAX_PENDING_REST) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d REST requests already waiting, try again", NET_MAX_PENDING_REST);
        return false;
    }
    if ((c->kind == CMD_GET_PARTICLES || c->kind == CMD_GET_SNAPSHOT) && n->resp_bytes > NET_MAX_RESP_BYTES) {
        /* Slow readers already hold this much of answers: bound the memory. */
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %zu MB of answers are waiting for slow readers, try again",
                           n->resp_bytes >> 20);
        return false;
    }
    if (!admit_heavy(n, r, c)) return false;
    c->client = CMD_REST_BIT | r->id;
    if (n->relay_id) {
        /* a relay: the request as it came, to the sim node (which translates and checks it again) */
        msg_buf *m = bus_pack_rest(r->method, r->path, r->body, r->body_len);
        if (!m || !hub_forward(r->room->hub, c->client, HUB_FWD_MSG, m, r->cred ? msg_buf_ref(r->cred) : NULL)) {
            cancel_heavy(n, r);
            n->queue_busy++;
            rest_respond_error(n, r, RC_BUSY, "busy: the relay's queue is full, try again");
            return false;
        }
    } else if (!net_enqueue(r->room->queue, c, false)) {
        cancel_heavy(n, r);
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: command queue full, try again");
        return false;
    }
    r->pending_kind = c->kind;
    if (c->kind == CMD_SET_PARAM) snprintf(r->pending_name, sizeof r->pending_name, "%s", c->u.set_param.material);
    rest_wait(n, r, NET_REST_TIMEOUT_S);
    return true;
}

/* GET /api/snapshot: the whole world; POST: restore one (the route table
 * answers other methods).  The body is the
 * snapshot document (msgpack); its wrapper is checked here, the world
 * bytes by the core on the sim thread.  The bytes travel to the sim thread
 * as an immutable buffer parked in the hub under an id the command names. */
static void route_snapshot(net *n, http_req *r) {
    cmd c;
    memset(&c, 0, sizeof c);
    if (r->method == HM_GET) {
        c.kind = CMD_GET_SNAPSHOT;
        submit(n, r, &c);
        return;
    }
    const uint8_t *world;
    size_t len;
    char err[160];
    if (!r->body_len) {
        rest_respond_error(n, r, RC_BAD_REQUEST,
                           "POST a snapshot document (application/msgpack, as GET /api/snapshot returns)");
        return;
    }
    if (wire_decode_snapshot((const uint8_t *)r->body, r->body_len, &world, &len, err, sizeof err)) {
        rest_respond_error(n, r, RC_BAD_REQUEST, "%s", err);
        return;
    }
    /* the body becomes the upload as it is (no second copy of up to 256 MiB) */
    wbuf owned = {.data = (uint8_t *)r->body, .len = r->body_len, .cap = r->body_alloc};
    r->body = NULL;
    r->body_alloc = 0;
    msg_buf *up = wbuf_finish(&owned);
    uint32_t id = up ? hub_put_upload(r->room->hub, up) : 0;
    if (!id) {
        msg_buf_unref(up);
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: another snapshot is being restored, try again");
        return;
    }
    c.kind = CMD_RESTORE;
    c.u.restore.upload = id;
    if (!submit(n, r, &c)) hub_drop_upload(r->room->hub, id);
}

/* GET /api/obstacles/{id}/mesh: the obstacle's placed mesh as the sim thread
 * encoded it (obstacle_mesh.h), served from the hub without a command.  A
 * relay serves the copy its bus thread asked the sim node for (bus_relay.c):
 * busy while it is on its way, 501 for one larger than the bus carries. */
static void route_obstacle_mesh(net *n, http_req *r, uint32_t id) {
    bool listed, too_big;
    msg_buf *m = hub_obstacle_mesh(r->room->hub, id, &listed, &too_big);
    if (m) {
        rest_respond_msg(n, r, 200, OBSTACLE_MESH_CTYPE, m);
        return;
    }
    if (!listed)
        rest_respond_error(n, r, RC_NOT_FOUND, "unknown obstacle %u (GET /api/obstacles lists them)", (unsigned)id);
    else if (too_big)
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED,
                           "this is a relay: obstacle %u's mesh is larger than the message bus carries "
                           "(its max_payload); fetch it from the sim node",
                           (unsigned)id);
    else
        rest_respond_error(n, r, RC_BUSY, "busy: the relay is fetching obstacle %u's mesh from the sim node, try again",
                           (unsigned)id);
}

/* ---- Routing ---------------------------------------------------------------- */

/* The role table's row for the route r asks for (roles.c; a room's routes
 * have their own checks, rest_rooms.c): a role below it is refused here,
 * on the headers.  Commands are checked again where they are applied. */
static bool refuse_route_role(net *n, http_req *r) {
    /* a relay: a request it forwards is checked at the sim node, with its credential; what it answers
     * itself needs no more than a viewer; a route only the node serves waits for the node's role */
    if (r->proxy) return false; /* a write for a room held elsewhere: its holder checks it (rest_proxy.c) */
    if (n->relay_id) return rest_relay_check(n, r);
    if (r->rooms_op) return false;
    const char *pattern = rest_route_pattern(r->method == HM_HEAD ? HM_GET : r->method, r->path, r->metrics);
    role need;
    if (!pattern || role_needed_for_route(rest_method_name(r->method == HM_HEAD ? HM_GET : r->method), pattern, &need))
        return false; /* no such route: routing answers 404 or 405 */
    char action[96];
    snprintf(action, sizeof action, "%s %s", rest_method_name(r->method), pattern);
    return rest_refuse_role(n, r, need, action);
}

/* lws_get_urlarg_by_name for rest_translate. */
static const char *query_arg(void *wsi, const char *name, char *buf, int len) {
    return wsi ? lws_get_urlarg_by_name(wsi, name, buf, len) : NULL; /* (a request from the bus has no query) */
}

/* Translates the request (rest_route.c) and carries out the result. */
static void route(net *n, http_req *r) {
    if (r->body_too_large) {
        r->close_after = true;
        rest_respond_error(n, r, RC_TOO_LARGE, "request body too large (limit %zu bytes)", r->body_max);
        return;
    }
    if (r->proxy) {
        rest_proxy_send(n, r);
        return;
    }
    char accept[256] = "";
    if (r->wsi && lws_hdr_copy(r->wsi, accept, sizeof accept, WSI_TOKEN_HTTP_ACCEPT) < 0) accept[0] = 0;
    rest_request q = {.accept = accept[0] ? accept : NULL,
                      .method = r->method,
                      .path = r->path,
                      .metrics = r->metrics,
                      .arg = query_arg,
                      .arg_ctx = r->wsi,
                      .body = r->body,
                      .body_len = r->body_len};
    if (r->rooms_op) {
        rest_rooms_route(n, r);
        return;
    }
    rest_action a;
    rest_translate(&q, &a);
    switch (a.outcome) {
    case REST_ERROR:
        if (n->relay_id && r->method != HM_GET && r->method != HM_HEAD && !a.close_after &&
            rest_route_pattern(r->method, r->path, r->metrics)) {
            /* a relay: a write the sim node answers, its role before its body (as on the node) */
            cmd raw;
            memset(&raw, 0, sizeof raw);
            raw.kind = CMD_NONE;
            submit(n, r, &raw);
            return;
        }
        if (a.close_after) r->close_after = true;
        rest_respond_error(n, r, a.code, "%s", a.error);
        return;
    case REST_COMMAND:
        if (a.c.kind == CMD_RECORD_START && !pay_light(n, r, REST_RECORD_START, 1, "recording starts")) return;
        submit(n, r, &a.c);
        return;
    case REST_SNAPSHOT:
        route_snapshot(n, r);
        return;
    case REST_MESH:
        if (!r->wsi) { /* (its Content-Type and size bound are the connection's) */
            rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "a mesh upload goes to the room's sim node itself");
            return;
        }
        rest_mesh_upload(n, r);
        return;
    case REST_OMESH:
        route_obstacle_mesh(n, r, a.id);
        return;
    case REST_RECFILE: {
        if (!pay_light(n, r, REST_REC_READ, 1, "reads of the recordings")) return;
        size_t len = 0;
        const char *ctype = NULL;
        reply_code code = RC_INTERNAL;
        char err[200];
        char *bytes = rest_recfile_read(n, a.file, &len, &ctype, &code, err, sizeof err);
        if (bytes)
            rest_respond_bytes(n, r, 200, ctype, bytes, len);
        else
            rest_respond_error(n, r, code, "%s", err);
        return;
    }
    case REST_DRAIN:
        rest_fleet_drain(n, r, a.id);
        return;
    case REST_UNDRAIN:
        rest_fleet_undrain(n, r, a.id);
        return;
    case REST_VIEW:
        break;
    }
    switch (a.view) {
    case RV_METRICS: {
        size_t len = 0;
        char *text = rest_metrics_text(n, &len);
        if (!text) {
            rest_respond_error(n, r, RC_INTERNAL, "out of memory");
            return;
        }
        rest_respond_bytes(n, r, 200, "text/plain; version=0.0.4; charset=utf-8", text, len);
        return;
    }
    case RV_INDEX:
        rest_respond_json(n, r, 200, rest_index_json());
        return;
    case RV_HEALTH: {
        cJSON *j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "ok", true);
        rest_respond_json(n, r, 200, j);
        return;
    }
    case RV_STATS:
        rest_respond_json(n, r, 200, rest_stats_json(n, r->room));
        return;
    case RV_SCENES:
        rest_respond_json(n, r, 200, rest_scenes_json(r->room));
        return;
    case RV_MATERIALS:
        rest_respond_json(n, r, 200, rest_materials_json(n, r->room));
        return;
    case RV_CLIENTS:
        if (n->relay_id) { /* an owner's, and a relay cannot tell an owner (it holds no key) */
            rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "this is a relay: GET /api/clients is the sim node's");
            return;
        }
        rest_respond_json(n, r, 200, rest_clients_json(n, r->room));
        return;
    case RV_SOLVERS:
        rest_respond_json(n, r, 200, rest_solvers_json(r->room));
        return;
    case RV_MESHES:
        rest_respond_json(n, r, 200, rest_meshes_json(n, r->room));
        return;
    case RV_FLEET: {
        msg_buf *m = hub_get_fleet_doc(n->home->hub); /* the fleet thread's view (fleet/) */
        if (m) {
            rest_respond_msg(n, r, 200, "application/json", m);
            return;
        }
        cJSON *j = cJSON_CreateObject(); /* no fleet: a sim node of its own */
        cJSON_AddNullToObject(j, "fleet");
        cJSON_AddArrayToObject(j, "nodes");
        cJSON_AddArrayToObject(j, "rooms");
        rest_respond_json(n, r, 200, j);
        return;
    }
    case RV_PROBES:
        rest_respond_json(n, r, 200, rest_probes_json(r->room));
        return;
    case RV_RECORDINGS: {
        /* a page of the listing costs one read per 100 recordings it may hold */
        if (!pay_light(n, r, REST_REC_READ, ceil(a.limit / 100.0), "reads of the recordings")) return;
        size_t len = 0;
        char *text = rest_recordings_text(n, r->room, a.offset, a.limit, &len);
        if (text)
            rest_respond_bytes(n, r, 200, "application/json", text, len);
        else
            rest_respond_error(n, r, RC_INTERNAL, "out of memory");
        return;
    }
    }
}

/* ---- Replies from the sim thread ------------------------------------------- */

void rest_deliver(net *n, cmd_reply *rep) {
    http_req *r = rest_take_pending(n, rep->client & ~CMD_REST_BIT);
    if (!r) return;      /* the request went away */
    if (r->role_check) { /* a relay: the role its credential gives, for a route only the sim node serves */
        rest_relay_answered(n, r, rep);
        return;
    }
    if (!rep->ok) {
        rest_respond_error(n, r, cmd_reply_code(rep), "%s", rep->error);
        return;
    }
    world_info wi;
    hub_get_info(r->room->hub, &wi);
    cJSON *j;
    switch (rep->kind) {
    case CMD_GET_PARTICLES:
        if (rep->value != EXPORT_JSON) { /* a file of the whole world, written as it is sent */
            size_t held = rest_export_start(&r->exp, rep->snap, (int)rep->value, &wi);
            rep->snap = NULL;
            rest_respond_bytes(n, r, 200, r->exp.ctype, NULL, 0); /* the body comes from the job (write_export_slice) */
            r->exp_held = held;
            n->resp_bytes += held;
            return;
        }
        j = rest_particles_json(rep->snap, &wi);
        break;
    case CMD_GET_BODIES:
        j = rest_bodies_json(rep->bodies, rep->tick);
        break;
    case CMD_GET_OBSTACLES:
        j = rest_obstacles_json(rep->obstacles);
        break;
    case CMD_MESH_UPLOAD:
        j = rest_mesh_uploaded_json(r->room, (uint32_t)rep->value);
        break;
    case CMD_GET_SNAPSHOT:
        rest_respond_msg(n, r, 200, "application/msgpack", msg_buf_ref(rep->blob)); /* ok implies a blob */
        return;
    case CMD_SET_PARAM:
        j = rep->value >= 0 && rep->value < wi.material_count ? rest_material_json(n, &wi, (int)rep->value, false)
                                                              : cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "ok", true);
        cJSON_AddNumberToObject(j, "tick", (double)rep->tick);
        break;
    default:
        j = cJSON_CreateObject();
        cJSON_AddBoolToObject(j, "ok", true);
        cJSON_AddNumberToObject(j, "tick", (double)rep->tick);
        if (rep->kind == CMD_PUSH) cJSON_AddNumberToObject(j, "touched", (double)rep->value);
        if (rep->kind == CMD_LOAD_SCENE || rep->kind == CMD_RESTORE) {
            cJSON_AddStringToObject(j, "scene", wi.scene);
            cJSON_AddStringToObject(j, "solver", wi.solver);
            cJSON_AddNumberToObject(j, "particles", (double)rep->value);
        }
        if (rep->kind == CMD_SET_SOLVER) cJSON_AddStringToObject(j, "solver", wi.solver);
        if (rep->kind == CMD_STEP) cJSON_AddNumberToObject(j, "steps", (double)rep->value);
        if (rep->kind == CMD_PAUSE || rep->kind == CMD_RESUME)
            cJSON_AddBoolToObject(j, "paused", rep->kind == CMD_PAUSE);
        if (rep->kind == CMD_EMITTER || rep->kind == CMD_HEATER) cJSON_AddNumberToObject(j, "slot", (double)rep->value);
        if (rep->kind == CMD_RECORD_START) cJSON_AddStringToObject(j, "name", rep->name);
        if (rep->kind == CMD_BODY_CREATE || rep->kind == CMD_BODY_DESTROY || rep->kind == CMD_BODY_IMPULSE ||
            rep->kind == CMD_OBSTACLE_ADD || rep->kind == CMD_OBSTACLE_REMOVE)
            cJSON_AddNumberToObject(j, "id", (double)rep->value);
        if (rep->kind == CMD_PROBE_ADD) cJSON_AddNumberToObject(j, "index", (double)rep->value);
        break;
    }
    if (rep->duplicate) cJSON_AddBoolToObject(j, "duplicate", true);
    rest_respond_json(n, r, 200, j);
}

/* ---- Per-request state ------------------------------------------------------- */

/* A fleet's holder runs at most this many requests from the bus at once, a
 * slot each (rest_bus_pump); they have no connection. */
#define NET_BUS_REQS 16
static http_req bus_req[NET_BUS_REQS]; /* network thread only */

/* A new request's id; a relay's carry its id (as its clients' do). */
static uint32_t next_id(net *n) {
    uint32_t base = n->relay_id << CMD_RELAY_SHIFT, span = 1u << CMD_RELAY_SHIFT;
    n->next_http_id = n->relay_id ? base + (n->next_http_id - base + 1) % span : (n->next_http_id + 1) & ~CMD_REST_BIT;
    if (!n->next_http_id || n->next_http_id == base) n->next_http_id = base + 1;
    return n->next_http_id;
}

static void req_unlink(net *n, http_req *r) {
    if (!r->linked) return;
    for (http_req **pp = &n->pending; *pp; pp = &(*pp)->next)
        if (*pp == r) {
            *pp = r->next;
            n->npending--;
            break;
        }
    r->linked = false;
}

static void req_reset(net *n, http_req *r) {
    req_unlink(n, r);
    net_room_release(n, r->room);
    n->resp_bytes -= r->resp_len + r->exp_held;
    n->body_bytes -= r->body_reserved;
    if (r->heavy_place) rest_budget_release(&n->budget, r->heavy_place);
    if (r->held) n->held--;
    free(r->body);
    free(r->resp);
    msg_buf_unref(r->resp_msg);
    msg_buf_unref(r->cred);
    rest_export_free(&r->exp);
    memset(r, 0, sizeof *r);
}

void rest_abandon_all(net *n) {
    while (n->pending) {
        http_req *r = n->pending;
        n->pending = r->next;
        n->npending--;
        r->linked = false;
        r->waiting = false;
    }
    for (int i = 0; i < NET_BUS_REQS; i++) /* the requests from the bus: no connection will free them */
        if (bus_req[i].active) req_reset(n, &bus_req[i]);
}

static int method_of(struct lws *wsi) {
    static const struct {
        enum lws_token_indexes tok;
        int m;
    } t[] = {
        {WSI_TOKEN_GET_URI, HM_GET},   {WSI_TOKEN_POST_URI, HM_POST},     {WSI_TOKEN_PATCH_URI, HM_PATCH},
        {WSI_TOKEN_PUT_URI, HM_PUT},   {WSI_TOKEN_DELETE_URI, HM_DELETE}, {WSI_TOKEN_OPTIONS_URI, HM_OPTIONS},
        {WSI_TOKEN_HEAD_URI, HM_HEAD},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++)
        if (lws_hdr_total_length(wsi, t[i].tok)) return t[i].m;
    return HM_OTHER;
}

/* An HTTP/2 stream (an h2c upgrade): its frames delimit the body. */
static bool is_h2(struct lws *wsi) {
    return lws_get_network_wsi(wsi) != wsi;
}

static bool is_http11(struct lws *wsi) {
    char v[16];
    return lws_hdr_copy(wsi, v, sizeof v, WSI_TOKEN_HTTP) == 8 && !strcmp(v, "HTTP/1.1");
}

/* The status line and headers.  An export's length is known only at its
 * last byte: to an HTTP/1.1 client it goes chunked (and the connection
 * stays open for the next request), to an HTTP/1.0 one without a length,
 * ended by closing the connection. */
static int write_headers(http_req *r) {
    uint8_t buf[LWS_PRE + 1024], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
    struct lws *wsi = r->wsi;
    const char *ctype = r->ctype ? r->ctype : "application/json";
    bool open = r->exp.snap != NULL, by_close = false;
    if (open && !is_h2(wsi)) {
        r->chunked = is_http11(wsi);
        by_close = !r->chunked;
        if (by_close) r->close_after = true;
    }
    if (r->chunked) {
        /* lws_add_http_common_headers without a length would close the connection after the answer */
        if (lws_add_http_header_status(wsi, (unsigned)r->status, &p, end) ||
            lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CONTENT_TYPE, (const unsigned char *)ctype,
                                         (int)strlen(ctype), &p, end) ||
            lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING, (const unsigned char *)"chunked", 7, &p,
                                         end))
            return -1;
    } else if (lws_add_http_common_headers(wsi, (unsigned)r->status, ctype,
                                           open ? LWS_ILLEGAL_HTTP_CONTENT_LEN : (lws_filepos_t)r->resp_len, &p, end))
        return -1; /* (without a length it says "connection: close" itself) */
    if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL, (const unsigned char *)"no-store", 8, &p, end))
        return -1;
    if (r->close_after && !by_close &&
        lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, (const unsigned char *)"close", 5, &p, end))
        return -1;
    if (r->retry_after > 0) {
        char v[16];
        int l = snprintf(v, sizeof v, "%d", r->retry_after);
        if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_RETRY_AFTER, (const unsigned char *)v, l, &p, end))
            return -1;
    }
    if (open && lws_add_http_header_by_name(
                    wsi, (const unsigned char *)"content-disposition:", (const unsigned char *)r->exp.disposition,
                    (int)strlen(r->exp.disposition), &p, end))
        return -1;
    return lws_finalize_write_http_header(wsi, start, &p, end) ? -1 : 0;
}

/* The next slice of an answer held whole (JSON, a snapshot): copied out, at
 * most NET_REST_SLICE bytes.  Returns 1 after the last, 0 before, -1 on a
 * failed write. */
static int write_held_slice(http_req *r) {
    size_t left = r->resp_len - r->resp_off;
    size_t k = left < NET_REST_SLICE ? left : NET_REST_SLICE;
    uint8_t *buf = malloc(LWS_PRE + k + 1);
    if (!buf) return -1;
    memcpy(buf + LWS_PRE, (r->resp_msg ? (const char *)r->resp_msg->data : r->resp) + r->resp_off, k);
    bool last = k == left;
    int w = lws_write(r->wsi, buf + LWS_PRE, k, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
    free(buf);
    if (w < (int)k) return -1;
    r->resp_off += k;
    return last;
}

/* The next slice of an export, written from its snapshot (at most
 * NET_REST_SLICE bytes of the document); chunked, it is one chunk (its size
 * in hex, CRLF, the bytes, CRLF) and after the last the empty chunk that
 * ends the body.  Returns 1 after the last, 0 before, -1 on a failed write. */
static int write_export_slice(http_req *r) {
    enum { HEAD = 8 }; /* a chunk's size line: at most 6 hex digits and CRLF */
    _Static_assert(NET_REST_SLICE <= 0xffffff, "a slice's size in 6 hex digits");
    uint8_t *buf = malloc(LWS_PRE + HEAD + NET_REST_SLICE + 2 + 5);
    if (!buf) return -1;
    uint8_t *data = buf + LWS_PRE + HEAD, *out = data;
    size_t k = rest_export_chunk(&r->exp, data, NET_REST_SLICE), len = k;
    if (r->chunked) {
        if (k) {
            char head[HEAD + 1];
            int hl = snprintf(head, sizeof head, "%zx\r\n", k);
            out -= hl;
            memcpy(out, head, (size_t)hl);
            memcpy(data + k, "\r\n", 2);
            len += (size_t)hl + 2;
        }
        if (r->exp.done) {
            memcpy(out + len, "0\r\n\r\n", 5);
            len += 5;
        }
    }
    bool last = r->exp.done;
    int w = 0;
    if (len || (last && is_h2(r->wsi))) /* (an HTTP/2 stream ends with a frame, an HTTP/1.0 body by closing) */
        w = lws_write(r->wsi, out, len, last ? LWS_WRITE_HTTP_FINAL : LWS_WRITE_HTTP);
    free(buf);
    if (w < (int)len) return -1;
    r->resp_off += k;
    return last;
}

/* Writes the answer a slice per writable callback: the headers, then the
 * body, until its last byte; the request ends there. */
static int write_response(net *n, http_req *r) {
    if (!r->ready || r->held) return 0; /* (a held refusal: its timer asks for the writable callback) */
    if (!r->headers_sent) {
        if (write_headers(r)) return -1;
        r->headers_sent = true;
        lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, NET_REST_STALL_S);
        lws_callback_on_writable(r->wsi);
        return 0;
    }
    int last = r->exp.snap ? write_export_slice(r) : write_held_slice(r);
    if (last < 0) return -1;
    if (!last) {
        /* The socket took the previous slice (lws calls back only once what
         * it holds is sent): the reader made progress, so the stall timeout
         * starts again.  A total would cut a slow download of a large answer. */
        lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, NET_REST_STALL_S);
        lws_callback_on_writable(r->wsi);
        return 0;
    }
    struct lws *wsi = r->wsi;
    bool close = r->close_after;
    req_reset(n, r);
    lws_set_timeout(wsi, NO_PENDING_TIMEOUT, 0);
    if (close) return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

int rest_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    net *n = lws_context_user(lws_get_context(wsi));
    http_req *r = user;

    switch (reason) {
    case LWS_CALLBACK_HTTP: {
        req_reset(n, r);
        {
            char uri[160];
            if (lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI) > 0 && room_page_is(uri))
                return room_page_serve(n, wsi, uri);
        }
        r->wsi = wsi;
        r->active = true;
        r->id = next_id(n);
        n->http_requests++;
        const char *path = in ? (const char *)in : "";
        snprintf(r->path, sizeof r->path, "%s", *path ? path : "/");
        {
            char uri[32];
            int ul = lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI);
            if (ul <= 0) ul = lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_POST_URI);
            r->metrics = ul >= 8 && !strncmp(uri, "/metrics", 8) && (uri[8] == 0 || uri[8] == '/' || uri[8] == '?');
        }
        size_t pl = strlen(r->path);
        if (pl > 1 && r->path[pl - 1] == '/') r->path[pl - 1] = 0; /* /api/stats/ == /api/stats */
        r->method = method_of(wsi);
        if (!rest_rooms_split(n, r) || !rest_grant(n, r) || refuse_route_role(n, r)) {
            /* answered (no such room, a refused credential, a role too low), or on a relay waiting for the
             * sim node's role: before any body is read */
            r->close_after = r->method == HM_POST || r->method == HM_PATCH || r->method == HM_PUT;
            return 0;
        }
        r->body_max = (!r->metrics && !strncmp(r->path, "/snapshot", 9)) ? NET_MAX_SNAPSHOT_BODY
                      : (!r->metrics && !strcmp(r->path, "/meshes"))     ? (size_t)n->cfg->mesh_max_mb << 20
                                                                         : NET_MAX_BODY;
        if (r->method == HM_POST || r->method == HM_PATCH || r->method == HM_PUT) {
            char cl[32];
            if (lws_hdr_copy(wsi, cl, sizeof cl, WSI_TOKEN_HTTP_CONTENT_LENGTH) <= 0) {
                /* No Content-Length: an empty body unless it is chunked,
                 * which this API does not take.  lws would wait for a body,
                 * so the connection closes after the answer. */
                r->close_after = true;
                if (lws_hdr_total_length(wsi, WSI_TOKEN_HTTP_TRANSFER_ENCODING))
                    rest_respond_error(n, r, RC_LENGTH_REQUIRED, "send the body with a Content-Length header");
                else
                    route(n, r);
                return 0;
            }
            char *end = NULL;
            errno = 0;
            long long want = strtoll(cl, &end, 10);
            if (end == cl || *end || errno || want < 0 || (unsigned long long)want > r->body_max) {
                r->body_too_large = true;
                route(n, r);
                return 0;
            }
            if (want > 0) {
                /* Every body-carrying route changes the world: the origin
                 * is checked on the headers (the role was, above), before
                 * any of the body is read or any memory is set aside for it. */
                if (rest_refuse_origin(n, r)) {
                    r->close_after = true;
                    return 0;
                }
                if ((size_t)want > NET_MAX_BODY_BYTES_IN_FLIGHT - n->body_bytes) {
                    n->queue_busy++;
                    r->close_after = true;
                    rest_respond_error(n, r, RC_BUSY, "busy: %zu MB of request bodies are being received, try again",
                                       n->body_bytes >> 20);
                    return 0;
                }
                /* reserved now, allocated as the bytes arrive (HTTP_BODY) */
                r->body_cap = (size_t)want;
                r->body_reserved = (size_t)want;
                n->body_bytes += r->body_reserved;
            }
            if (want == 0 && r->method != HM_POST) route(n, r); /* lws sends no BODY_COMPLETION for an empty PATCH */
            /* otherwise wait for LWS_CALLBACK_HTTP_BODY_COMPLETION */
            return 0;
        }
        route(n, r);
        return 0;
    }
    case LWS_CALLBACK_HTTP_BODY:
        if (!r->active || r->ready) return 0;
        if (len && !r->body_too_large) {
            if (len > r->body_cap - r->body_len) {
                r->body_too_large = true; /* more than Content-Length said */
            } else {
                size_t need = r->body_len + len + 1;
                if (need > r->body_alloc) { /* doubling, from NET_BODY_CHUNK up to the declared length */
                    size_t a = r->body_alloc ? 2 * r->body_alloc : NET_BODY_CHUNK;
                    if (a < need) a = need;
                    if (a > r->body_cap + 1) a = r->body_cap + 1;
                    char *nb = realloc(r->body, a);
                    if (!nb) return -1;
                    r->body = nb;
                    r->body_alloc = a;
                }
                memcpy(r->body + r->body_len, in, len);
                r->body_len += len;
                r->body[r->body_len] = 0;
            }
        }
        return 0;
    case LWS_CALLBACK_HTTP_BODY_COMPLETION:
        if (r->active && !r->ready && !r->waiting) route(n, r);
        return 0;
    case LWS_CALLBACK_HTTP_WRITEABLE:
        if (r->active) return write_response(n, r);
        break;
    case LWS_CALLBACK_TIMER:
        if (r->active && r->held) {
            r->held = false;
            n->held--;
            lws_callback_on_writable(wsi);
        } else if (r->active && r->proxy_again) {
            rest_proxy_again(n, r);
        } else if (r->active) { /* a wait ran out (rest_wait; a relay's check of a credential has its own) */
            if (r->role_check)
                rest_relay_timer(n, r);
            else
                rest_timed_out(n, r);
        }
        return 0;
    case LWS_CALLBACK_CLOSED_HTTP:
    case LWS_CALLBACK_HTTP_DROP_PROTOCOL:
        if (r->active && r->headers_sent) { /* (an answer sent whole has ended the request) */
            n->http_answers_cut++;
            if (r->exp.snap)
                log_warn("rest: %s closed with %zu bytes of an unfinished export sent (the reader took nothing for %d "
                         "s, or left)",
                         r->path, r->resp_off, NET_REST_STALL_S);
            else
                log_warn("rest: %s closed with %zu of %zu bytes sent (the reader took nothing for %d s, or left)",
                         r->path, r->resp_off, r->resp_len, NET_REST_STALL_S);
        }
        req_reset(n, r);
        break;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- Requests from the fleet's bus -------------------------------------------- */

/* An answer straight to the bus (no slot taken): a refusal. */
static void bus_answer_now(const net *n, const char *reply, reply_code code, const char *why) {
    const reply_code_info *ci = reply_code_get(code);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", why);
    cJSON_AddStringToObject(j, "code", ci->name);
    char *s = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    bus_http_answer a = {
        .status = ci->http, .retry_after = ci->retry ? 1 : 0, .body = s, .body_len = s ? strlen(s) : 0};
    http_mail_msg e = {.msg = s ? bus_encode_http_answer(&a) : NULL};
    free(s);
    snprintf(e.reply, sizeof e.reply, "%s", reply);
    if (!e.msg || !http_mail_put(&n->home->hub->http, HTTP_ANSWER, &e)) msg_buf_unref(e.msg);
}

/* A request a relay or another node sent this holder: run through this
 * edge as a connection's is (its room, its credential, its route's role,
 * its route), in a slot of its own. */
static void bus_take(net *n, const http_mail_msg *e) {
    http_req *r = NULL;
    for (int i = 0; i < NET_BUS_REQS && !r; i++)
        if (!bus_req[i].active) r = &bus_req[i];
    bus_http_req q;
    char err[200];
    if (!r) {
        bus_answer_now(n, e->reply, RC_BUSY, "busy: this sim node runs 16 REST requests from the fleet already");
        return;
    }
    if (!e->msg || bus_decode_http_req(e->msg->data, e->msg->len, &q, err, sizeof err)) {
        bus_answer_now(n, e->reply, RC_BAD_REQUEST, "bad request over the bus");
        return;
    }
    const char *tail = q.room[0] ? q.path + 7 + strlen(q.room) : "";
    if (q.method == HM_GET && !strcmp(tail, "/snapshot")) { /* msgpack, never JSON: not made for nothing */
        bus_answer_now(n, e->reply, RC_MISDIRECTED, "a snapshot is not JSON: ask the room's sim node itself");
        return;
    }
    memset(r, 0, sizeof *r);
    r->active = r->from_bus = true;
    snprintf(r->reply, sizeof r->reply, "%s", e->reply);
    r->id = next_id(n);
    n->http_requests++;
    r->method = q.method;
    snprintf(r->path, sizeof r->path, "%s", q.path);
    r->body_max = NET_MAX_BODY;
    if (q.cred_len) r->cred = msg_buf_from_bytes(q.cred, q.cred_len);
    if (q.body_len) {
        r->body = malloc(q.body_len + 1);
        if (!r->body) {
            rest_respond_error(n, r, RC_INTERNAL, "out of memory");
            return;
        }
        memcpy(r->body, q.body, q.body_len);
        r->body[q.body_len] = 0;
        r->body_len = r->body_cap = q.body_len;
        r->body_alloc = q.body_len + 1;
    }
    if (!rest_rooms_split(n, r) || !rest_grant(n, r) || refuse_route_role(n, r)) return; /* answered */
    route(n, r);
}

/* Each slot whose request is answered: the answer goes to the bus and the
 * slot is freed; a wait that ran out is answered 504 first. */
static void bus_flush(net *n) {
    const uint64_t now = clock_now_ns();
    for (int i = 0; i < NET_BUS_REQS; i++) {
        http_req *r = &bus_req[i];
        if (!r->active) continue;
        if (r->waiting && now > r->deadline_ns) rest_timed_out(n, r);
        if (!r->ready) continue;
        const bool json = !r->ctype || !strcmp(r->ctype, "application/json");
        if (!json || r->resp_len > BUS_HTTP_ANSWER || r->exp.snap) {
            /* a file, a snapshot or a page larger than the bus carries: never a cut body; the asker names this node */
            char why[200];
            snprintf(
                why, sizeof why,
                "the answer (%zu bytes of %s) is not JSON within the bus's %u bytes: ask the room's sim node itself",
                r->resp_len, json ? "application/json" : r->ctype, BUS_HTTP_ANSWER);
            bus_answer_now(n, r->reply, RC_MISDIRECTED, why);
            req_reset(n, r);
            continue;
        }
        bus_http_answer a = {.status = r->status,
                             .retry_after = r->retry_after,
                             .body = r->resp_msg ? (const char *)r->resp_msg->data : r->resp,
                             .body_len = r->resp_len};
        http_mail_msg e = {.msg = bus_encode_http_answer(&a)};
        snprintf(e.reply, sizeof e.reply, "%s", r->reply);
        if (!e.msg || !http_mail_put(&n->home->hub->http, HTTP_ANSWER, &e)) msg_buf_unref(e.msg);
        req_reset(n, r);
    }
}

void rest_bus_pump(net *n) {
    http_mail_msg e[HTTP_MAIL_RING];
    int k = http_mail_take(&n->home->hub->http, HTTP_BACK, e, HTTP_MAIL_RING);
    for (int i = 0; i < k; i++) {
        rest_proxy_answered(n, &e[i]);
        msg_buf_unref(e[i].msg);
    }
    k = http_mail_take(&n->home->hub->http, HTTP_IN, e, HTTP_MAIL_RING);
    for (int i = 0; i < k; i++) {
        bus_take(n, &e[i]);
        msg_buf_unref(e[i].msg);
    }
    bus_flush(n);
}
