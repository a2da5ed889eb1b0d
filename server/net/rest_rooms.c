/* rest_rooms.c - the rooms over REST (rest_rooms.h): the /api/rooms/{name}/
 * prefix, and listing, creating, changing and deleting rooms.  Network
 * thread only. */
#include "rest_rooms.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "hub.h"
#include "invite.h"
#include "log.h"
#include "net_room.h"
#include "rest_answer.h"
#include "rest_route.h" /* HM_* */
#include "roles.h"
#include "room_name.h"
#include "rooms.h"
#include "ws_client.h"

#define ROOMS_PREFIX "/rooms"
#define ROOMS_PREFIX_LEN 6

const char *const rest_rooms_routes[REST_ROOMS_ROUTES] = {
    "GET /api/rooms",
    "POST /api/rooms",
    "GET /api/rooms/{name}",
    "PATCH /api/rooms/{name}",
    "DELETE /api/rooms/{name}",
    "POST /api/rooms/{name}/invites",
    "POST /api/rooms/{name}/rotate-key",
    "POST /api/rooms/{name}/clients/{id}/kick",
};

/* ---- The prefix ---------------------------------------------------------------- */

/* What a room's path past its name asks for: one of the room's own actions,
 * or (ACT_NONE) a plain route of the room. */
enum { ACT_NONE, ACT_INVITES, ACT_ROTATE, ACT_KICK };

static int action_of(const char *rest, uint32_t *client) {
    if (!strcmp(rest, "/invites")) return ACT_INVITES;
    if (!strcmp(rest, "/rotate-key")) return ACT_ROTATE;
    const char *p = rest;
    if (strncmp(p, "/clients/", 9)) return ACT_NONE;
    p += 9;
    uint64_t id = 0;
    const char *d = p;
    while (*p >= '0' && *p <= '9' && id <= UINT32_MAX) id = id * 10 + (uint64_t)(*p++ - '0');
    if (p == d || p - d > 10 || id == 0 || id > UINT32_MAX || strcmp(p, "/kick")) return ACT_NONE;
    *client = (uint32_t)id;
    return ACT_KICK;
}

/* A path past a room's name that a relay answers from its own copy: an
 * obstacle's mesh (/obstacles/{id}/mesh); and, while it has viewers of the
 * room (its mirror of the room's stream is live), the room's own view and
 * its stats, which each viewer's page polls: they stay off the bus. */
static bool kept_at_relay(const net_room *v, const char *rest) {
    size_t l = strlen(rest);
    if (v && v->clients && (!*rest || !strcmp(rest, "/stats"))) return true;
    return !strncmp(rest, "/obstacles/", 11) && l > 16 && !strcmp(rest + l - 5, "/mesh");
}

bool rest_rooms_split(net *n, http_req *r) {
    const char *p = r->path;
    if (r->metrics || strncmp(p, ROOMS_PREFIX, ROOMS_PREFIX_LEN) ||
        (p[ROOMS_PREFIX_LEN] && p[ROOMS_PREFIX_LEN] != '/')) {
        n->home->users++;
        r->room = n->home;
        return true;
    }
    n->home->users++;
    r->room = n->home; /* until a room is named: the answers below need a view */
    const char *name = p + ROOMS_PREFIX_LEN;
    /* a fleet's server sends a read or a write for a room held elsewhere to its holder (rest_proxy.c); a
     * request that came over the bus is never sent on */
    const bool fleet = n->cfg->fleet[0] && !r->from_bus,
               write = r->method == HM_POST || r->method == HM_PATCH || r->method == HM_DELETE,
               read = r->method == HM_GET;
    if (!*name) { /* /rooms */
        r->rooms_op = true;
        r->proxy = fleet && n->relay_id && r->method == HM_POST; /* a relay's: any node places it */
        return true;
    }
    name++;
    const char *end = strchr(name, '/');
    size_t nl = end ? (size_t)(end - name) : strlen(name);
    char why[160];
    if (!room_name_ok(name, nl, why, sizeof why)) {
        rest_respond_error(n, r, RC_BAD_REQUEST, "%s", why);
        return false;
    }
    memcpy(r->rooms_name, name, nl);
    r->rooms_name[nl] = 0;
    if (!end) { /* /rooms/{name}: the room's own role decides (an owner's invite is for it) */
        r->rooms_op = true;
        net_room *v = net_room_find(n, r->rooms_name);
        if (v) {
            net_room_release(n, r->room);
            r->room = v;
        }
        r->proxy = fleet && (write || (read && !(n->relay_id && kept_at_relay(v, "")))) && (!v || n->relay_id);
        return true;
    }
    net_room *v = net_room_find(n, r->rooms_name);
    uint32_t kicked = 0;
    const int act = action_of(end, &kicked);
    /* a relay of a fleet reads each of a room's routes at its holder, but what it keeps (kept_at_relay): an
     * obstacle's mesh (the bus's answer carries JSON only), and the views its viewers' pages poll */
    const bool relay_reads = n->relay_id && !kept_at_relay(v, end);
    if (fleet && ((write && (!v || (n->relay_id && act != ACT_NONE))) || (read && (!v || relay_reads)))) {
        r->proxy = true; /* the path stays whole: the holder reads it as its own */
        r->rooms_op = act != ACT_NONE;
        net_room_release(n, v);
        return true;
    }
    if (!v) {
        rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s' (GET /api/rooms lists them)", r->rooms_name);
        return false;
    }
    net_room_release(n, r->room);
    r->room = v;
    hub_touch(v->hub, clock_now_ns()); /* a request keeps its room awake */
    if ((r->rooms_action = action_of(end, &r->rooms_client)) != ACT_NONE) {
        r->rooms_op = true;
        return true;
    }
    memmove(r->path, end, strlen(end) + 1); /* /rooms/{name}/stats -> /stats */
    return true;
}

const char *rest_rooms_pattern(const http_req *r) {
    switch (r->rooms_action) {
    case ACT_INVITES:
        return "/api/rooms/{room}/invites";
    case ACT_ROTATE:
        return "/api/rooms/{room}/rotate-key";
    case ACT_KICK:
        return "/api/rooms/{room}/clients/{id}/kick";
    default:
        return r->rooms_name[0] ? "/api/rooms/{room}" : "/api/rooms";
    }
}

/* ---- One room as JSON ------------------------------------------------------------ */

static int clients_of(const net *n, const char *name) {
    for (int i = 0; i < n->nrooms; i++)
        if (!n->room[i]->closed && !strcmp(n->room[i]->name, name)) return n->room[i]->nclients;
    return 0;
}

static cJSON *room_json(net *n, const room_entry *e) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", e->name);
    char url[ROOM_NAME_CAP + 8];
    snprintf(url, sizeof url, "/r/%s/", e->name);
    cJSON_AddStringToObject(j, "url", url);
    cJSON_AddStringToObject(j, "public_role", role_name(e->public_role));
    room *rm = room_find(n->dir, e->name);
    bool asleep = false;
    if (rm) {
        world_info wi;
        sim_stats s;
        hub_get_info(room_hub(rm), &wi);
        hub_get_stats(room_hub(rm), &s);
        cJSON_AddStringToObject(j, "scene", wi.scene);
        cJSON_AddStringToObject(j, "solver", wi.solver);
        cJSON_AddNumberToObject(j, "particles", s.particles);
        cJSON_AddNumberToObject(j, "tick", (double)s.tick);
        cJSON_AddNumberToObject(j, "realtime_ratio", s.realtime_ratio);
        cJSON_AddBoolToObject(j, "paused", s.paused);
        asleep = s.asleep;
        room_unref(rm);
    }
    int viewers = clients_of(n, e->name);
    cJSON_AddNumberToObject(j, "clients", viewers);
    cJSON_AddStringToObject(j, "state", e->evicted ? "evicted" : asleep ? "asleep" : viewers ? "running" : "idle");
    return j;
}

/* The listed rooms, read afresh for each request (network thread only). */
static room_entry listed[NET_ROOMS_MAX];

static void list_rooms(net *n, http_req *r) {
    room_entry *e = listed;
    int k = rooms_list(n->dir, e, NET_ROOMS_MAX);
    if (k > NET_ROOMS_MAX) k = NET_ROOMS_MAX;
    cJSON *j = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(j, "rooms");
    for (int i = 0; i < k; i++) cJSON_AddItemToArray(a, room_json(n, &e[i]));
    cJSON_AddNumberToObject(j, "count", k);
    rest_respond_json(n, r, 200, j);
}

/* The listed room of that name as an entry; false when none is listed. */
static bool entry_of(net *n, const char *name, room_entry *out) {
    room_entry *e = listed;
    int k = rooms_list(n->dir, e, NET_ROOMS_MAX);
    for (int i = 0; i < k && i < NET_ROOMS_MAX; i++)
        if (!strcmp(e[i].name, name)) {
            *out = e[i];
            return true;
        }
    return false;
}

/* ---- Create -------------------------------------------------------------------------- */

static bool scene_known(const net *n, const char *scene) {
    for (int i = 0; i < n->st->scene_count; i++)
        if (!strcmp(n->st->scene[i], scene)) return true;
    return false;
}

/* The body of POST /api/rooms as a room_def (strings point into j); false
 * with the reason. */
static bool parse_create(const net *n, const cJSON *j, room_def *d, char *why, size_t cap) {
    *d = room_default_def();
    d->name = NULL;
    if (!cJSON_IsObject(j)) {
        snprintf(why, cap, "send a JSON object: {\"name\", \"scene\"?, \"particles\"?, \"public_role\"?}");
        return false;
    }
    for (const cJSON *f = j->child; f; f = f->next) {
        if (!strcmp(f->string, "name") && cJSON_IsString(f)) {
            if (!room_name_ok(f->valuestring, strlen(f->valuestring), why, cap)) return false;
            d->name = f->valuestring;
        } else if (!strcmp(f->string, "scene") && cJSON_IsString(f)) {
            if (!scene_known(n, f->valuestring)) {
                snprintf(why, cap, "unknown scene '%.40s' (GET /api/scenes lists them)", f->valuestring);
                return false;
            }
            d->scene = f->valuestring;
        } else if (!strcmp(f->string, "particles") && cJSON_IsNumber(f)) {
            if (f->valuedouble < 1 || f->valuedouble > CMD_MAX_PARTICLES || f->valuedouble != (int)f->valuedouble) {
                snprintf(why, cap, "particles must be a whole number from 1 to %d", CMD_MAX_PARTICLES);
                return false;
            }
            d->particles = (int)f->valuedouble;
        } else if (!strcmp(f->string, "public_role") && cJSON_IsString(f)) {
            role pr;
            if (role_parse(f->valuestring, strlen(f->valuestring), &pr) || pr > ROLE_OWNER) {
                snprintf(why, cap, "public_role is viewer, player, editor or owner");
                return false;
            }
            d->public_role = pr;
        } else {
            snprintf(why, cap,
                     "unknown field '%.40s' (or not of its type): a room takes name, scene, particles and "
                     "public_role",
                     f->string);
            return false;
        }
    }
    if (!d->name) {
        snprintf(why, cap, "name is required (%s)", ROOM_NAME_RULE);
        return false;
    }
    return true;
}

static void create_room(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_ADMIN, "POST /api/rooms")) return;
    if (!n->keeper) {
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "this is a relay: rooms are made on the sim node");
        return;
    }
    const srv_config *cfg = n->cfg;
    if (cfg->record_dir[0] || cfg->record_start[0]) {
        rest_respond_error(n, r, RC_CONFLICT,
                           "this server records into one folder (--record-dir or --record) for its default room, "
                           "and other rooms cannot share it: start it without those (--data-dir gives each room a "
                           "folder of its own) to hold rooms");
        return;
    }
    cJSON *j = r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    room_def d;
    char why[200];
    if (!parse_create(n, j, &d, why, sizeof why)) {
        cJSON_Delete(j);
        rest_respond_error(n, r, RC_BAD_REQUEST, "%s", why);
        return;
    }
    room_entry e;
    if (entry_of(n, d.name, &e)) {
        cJSON_Delete(j);
        rest_respond_error(n, r, RC_CONFLICT, "a room named '%s' exists", e.name);
        return;
    }
    bool asked = room_keeper_open(n->keeper, &d, r->id); /* copies d's strings */
    cJSON_Delete(j);
    if (!asked) {
        rest_respond_error(n, r, RC_BUSY, "busy: %d rooms are being made, try again", ROOM_KEEPER_JOBS);
        return;
    }
    rest_wait(n, r, NET_ROOM_OPEN_TIMEOUT_S); /* its world is made and measured meanwhile */
}

void rest_rooms_opened(net *n, const room_opened *res) {
    http_req *r = rest_take_pending(n, (uint32_t)res->tag);
    if (!r) {
        room_unref(res->room); /* the request went away; the room stays listed */
        return;
    }
    switch (res->status) {
    case ROOM_OK: {
        room_entry e;
        cJSON *j = res->room && entry_of(n, room_name(res->room), &e) ? room_json(n, &e) : cJSON_CreateObject();
        if (!res->room) { /* a fleet placed it on another node: its REST API serves it */
            char url[ROOM_NAME_CAP + 8];
            snprintf(url, sizeof url, "/r/%s/", res->name);
            cJSON_AddStringToObject(j, "name", res->name);
            cJSON_AddStringToObject(j, "url", url);
        }
        if (res->node) cJSON_AddNumberToObject(j, "node", res->node);
        room_unref(res->room);
        rest_respond_json(n, r, 201, j);
        return;
    }
    case ROOM_BAD_NAME:
        rest_respond_error(n, r, RC_BAD_REQUEST, "%s", res->err);
        return;
    case ROOM_EXISTS:
        rest_respond_error(n, r, RC_CONFLICT, "%s", res->err);
        return;
    case ROOM_FULL:
    case ROOM_NO_ROOM:
        rest_respond_error(n, r, RC_BUSY, "%s", res->err);
        return;
    default:
        rest_respond_error(n, r, RC_INTERNAL, "%s", res->err);
        return;
    }
}

/* ---- Change, delete ------------------------------------------------------------------ */

static void patch_room(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_OWNER, "PATCH /api/rooms/{room}")) return;
    cJSON *j = r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const cJSON *pr = cJSON_GetObjectItemCaseSensitive(j, "public_role");
    role want;
    bool ok = cJSON_IsObject(j) && cJSON_GetArraySize(j) == 1 && cJSON_IsString(pr) &&
              !role_parse(pr->valuestring, strlen(pr->valuestring), &want) && want <= ROLE_OWNER;
    cJSON_Delete(j);
    if (!ok) {
        rest_respond_error(n, r, RC_BAD_REQUEST,
                           "send {\"public_role\": \"viewer\" | \"player\" | \"editor\" | \"owner\"}");
        return;
    }
    room *rm = room_find(n->dir, r->rooms_name);
    if (!rm) {
        rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s'", r->rooms_name);
        return;
    }
    room_set_public_role(rm, want);
    room_unref(rm);
    room_entry e;
    if (entry_of(n, r->rooms_name, &e))
        rest_respond_json(n, r, 200, room_json(n, &e));
    else
        rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s'", r->rooms_name);
}

static void delete_room(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_OWNER, "DELETE /api/rooms/{room}")) return;
    if (!strcmp(r->rooms_name, ROOM_DEFAULT)) {
        rest_respond_error(n, r, RC_CONFLICT, "the default room cannot be deleted (the plain routes address it)");
        return;
    }
    if (room_close(n->dir, r->rooms_name) != ROOM_OK) {
        rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s'", r->rooms_name);
        return;
    }
    char why[96];
    snprintf(why, sizeof why, "room '%s' was deleted", r->rooms_name);
    for (int i = 0; i < n->nrooms; i++)
        if (!n->room[i]->closed && !strcmp(n->room[i]->name, r->rooms_name)) ws_close_room(n->room[i], why);
    room_keeper_poke(n->keeper); /* freed once its last client and request are gone */
    log_info("rooms: '%s' deleted", r->rooms_name);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "ok", true);
    cJSON_AddStringToObject(j, "name", r->rooms_name);
    rest_respond_json(n, r, 200, j);
}

/* ---- Invites, keys, kicks ---------------------------------------------------------- */

#define INVITE_TTL_DEFAULT_S 86400

/* POST /api/rooms/{name}/invites {"role", "ttl_s"?}: a signed invite and its link. */
static void make_invite(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_OWNER, "POST /api/rooms/{room}/invites")) return;
    cJSON *j = r->body_len ? cJSON_ParseWithLength(r->body, r->body_len) : NULL;
    const cJSON *jr = cJSON_GetObjectItemCaseSensitive(j, "role"), *jt = cJSON_GetObjectItemCaseSensitive(j, "ttl_s");
    role want;
    int fields = cJSON_GetArraySize(j);
    bool ok = cJSON_IsObject(j) && cJSON_IsString(jr) && !role_parse(jr->valuestring, strlen(jr->valuestring), &want) &&
              want <= ROLE_OWNER &&
              (!jt || (cJSON_IsNumber(jt) && jt->valuedouble >= 1 && jt->valuedouble <= (double)INVITE_MAX_TTL_S)) &&
              fields == 1 + (jt != NULL);
    int64_t ttl = jt && cJSON_IsNumber(jt) ? (int64_t)jt->valuedouble : INVITE_TTL_DEFAULT_S;
    cJSON_Delete(j);
    if (!ok) {
        rest_respond_error(n, r, RC_BAD_REQUEST,
                           "send {\"role\": \"viewer\" | \"player\" | \"editor\" | \"owner\", \"ttl_s\": 1 to %ld "
                           "(default %d)}",
                           (long)INVITE_MAX_TTL_S, INVITE_TTL_DEFAULT_S);
        return;
    }
    secret_key key;
    invite_room_key(&n->secret, r->room->name, room_key_generation(r->room->room), &key);
    char token[1024], err[160];
    int64_t now = (int64_t)time(NULL);
    int rc = invite_sign(&key, r->room->name, want, ttl, now, token, sizeof token, err, sizeof err);
    memset(&key, 0, sizeof key);
    if (rc) {
        rest_respond_error(n, r, RC_INTERNAL, "%s", err);
        return;
    }
    char url[1100];
    snprintf(url, sizeof url, "/r/%s/?invite=%s", r->room->name, token);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "token", token);
    cJSON_AddStringToObject(o, "url", url);
    cJSON_AddStringToObject(o, "room", r->room->name);
    cJSON_AddStringToObject(o, "role", role_name(want));
    cJSON_AddNumberToObject(o, "exp", (double)(now + ttl));
    rest_respond_json(n, r, 201, o);
}

/* POST /api/rooms/{name}/rotate-key: every earlier invite of the room stops
 * verifying (connections already admitted keep their role). */
static void rotate_key(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_OWNER, "POST /api/rooms/{room}/rotate-key")) return;
    unsigned gen = room_rotate_key(r->room->room);
    log_info("rooms: '%s': invite key rotated (generation %u)", r->room->name, gen);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", true);
    cJSON_AddNumberToObject(o, "generation", gen);
    rest_respond_json(n, r, 200, o);
}

/* POST /api/rooms/{name}/clients/{id}/kick: that connection is closed with
 * NET_CLOSE_KICKED and a reason its page shows. */
static void kick(net *n, http_req *r) {
    if (rest_refuse_origin(n, r) || rest_refuse_role(n, r, ROLE_OWNER, "POST /api/rooms/{room}/clients/{id}/kick"))
        return;
    ws_client *c = ws_find_client(r->room, r->rooms_client);
    if (!c || c->close_reason[0]) {
        rest_respond_error(n, r, RC_NOT_FOUND, "no client %u in room '%s' (GET /api/rooms/%s/clients lists them)",
                           (unsigned)r->rooms_client, r->room->name, r->room->name);
        return;
    }
    snprintf(c->close_reason, sizeof c->close_reason, "kicked by the owner of room '%s'", r->room->name);
    c->close_code = NET_CLOSE_KICKED;
    lws_callback_on_writable(c->wsi);
    log_info("rooms: '%s': client %u kicked", r->room->name, (unsigned)c->id);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "ok", true);
    cJSON_AddNumberToObject(o, "client", c->id);
    rest_respond_json(n, r, 200, o);
}

static void room_action(net *n, http_req *r) {
    if (r->method != HM_POST) {
        rest_respond_error(n, r, RC_METHOD_NOT_ALLOWED, "this takes POST");
        return;
    }
    if (r->rooms_action == ACT_INVITES)
        make_invite(n, r);
    else if (r->rooms_action == ACT_ROTATE)
        rotate_key(n, r);
    else
        kick(n, r);
}

void rest_rooms_route(net *n, http_req *r) {
    /* a relay lists the rooms it mirrors; what makes or changes a room is its owner's (or the
     * administrator's), on the sim node: a relay holds no key and cannot tell them */
    bool reads = r->method == HM_GET || r->method == HM_HEAD;
    if (n->relay_id && (r->rooms_action != ACT_NONE || !reads)) {
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "this is a relay: %s %s is the sim node's",
                           rest_method_name(r->method),
                           r->rooms_action != ACT_NONE ? "a room's action"
                           : r->rooms_name[0]          ? "/api/rooms/{room}"
                                                       : "/api/rooms");
        return;
    }
    if (r->rooms_action != ACT_NONE) {
        room_action(n, r);
        return;
    }
    if (!r->rooms_name[0]) {
        if (r->method == HM_GET || r->method == HM_HEAD)
            list_rooms(n, r);
        else if (r->method == HM_POST)
            create_room(n, r);
        else
            rest_respond_error(n, r, RC_METHOD_NOT_ALLOWED, "/api/rooms takes GET and POST");
        return;
    }
    room_entry e;
    switch (r->method) {
    case HM_GET:
    case HM_HEAD:
        if (entry_of(n, r->rooms_name, &e))
            rest_respond_json(n, r, 200, room_json(n, &e));
        else
            rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s' (GET /api/rooms lists them)", r->rooms_name);
        return;
    case HM_PATCH:
        patch_room(n, r);
        return;
    case HM_DELETE:
        delete_room(n, r);
        return;
    default:
        rest_respond_error(n, r, RC_METHOD_NOT_ALLOWED, "/api/rooms/{name} takes GET, PATCH and DELETE");
        return;
    }
}
