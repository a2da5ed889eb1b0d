/* bus_node.c - a sim node's side of the bus: publishes what its rooms' hubs
 * hold (each room's framesets, broadcasts, description and statistics, the
 * replies to relays' clients, the list of rooms) and takes relays' client
 * messages and frame wants, each naming its room.  A relay never asserts a
 * role: the node computes each forwarded message's role from the credential
 * it carries, as its own edge does (room_grant.h). */
#include "bus_node.h"

#include <stdio.h>
#include <string.h>

#include "bus_codec.h"
#include "bus_rest.h"
#include "bus_rooms.h"
#include "clock.h"
#include "command.h"
#include "log.h"
#include "rest_route.h"
#include "roles.h"
#include "room_grant.h"
#include "wire.h"

#define INFO_EVERY_NS 1000000000ull  /* a relay that joins late learns a room within a second */
#define REFRESH_EVERY_NS 50000000ull /* the rooms' list read again */

/* A reply to a relay's client in room (published at once: the room may be
 * one the node does not have). */
static void publish_reply(bus *b, const char *rname, const cmd_reply *r) {
    char leaf[32];
    snprintf(leaf, sizeof leaf, "reply.%u", cmd_client_relay(r->client));
    msg_buf *m = bus_encode_reply(r, rname);
    bus_publish(b, leaf, m);
    msg_buf_unref(m);
}

/* An error reply to a relay's client. */
static void answer_error(bus *b, const char *rname, uint32_t client, uint32_t rid, cmd_kind kind, reply_code code,
                         const char *why) {
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.client = client;
    r.rid = rid;
    r.kind = kind;
    cmd_reply_refuse(&r, code, "%s", why);
    publish_reply(b, rname, &r);
}

/* A refused client message: the reply goes back to the relay's client. */
static void refuse(bus *b, const char *rname, uint32_t client, uint32_t rid, reply_code code, const char *why) {
    atomic_fetch_add(&b->bad, 1);
    answer_error(b, rname, client, rid, CMD_NONE, code, why);
}

/* A relay refused for the rate more often than it may send (over twice its
 * share) is shed for len ns: the bus thread stops reading its subject
 * (bus_cmdsub.h), so that the broker drops its messages; its client is
 * told why, and the log. */
static void shed_relay(bus *b, const bus_forward *f, uint64_t len) {
    atomic_fetch_add(&b->shed, 1);
    char why[200];
    snprintf(why, sizeof why,
             "rate limited: the clients of relay %u together are refused more than they may send; its messages are "
             "not read for %.0f s",
             (unsigned)f->relay, (double)len / 1e9);
    log_warn("bus: %s", why);
    answer_error(b, f->room, f->client, 0, CMD_NONE, RC_RATE_LIMITED, why);
}

/* Charges a relay client's message to the rate limits (relay_rate.h): true,
 * or false with the refusal answered to the client (and counted). */
static bool within_rate(bus *b, const bus_forward *f, cmd_kind kind, uint32_t rid) {
    char why[sizeof((cmd_reply *)0)->error];
    pthread_mutex_lock(&b->rate_mtx);
    const uint64_t now = clock_now_ns();
    reply_code rc =
        relay_rate_take(&b->rate, f->relay, f->client, (f->client & CMD_REST_BIT) != 0, kind, now, why, sizeof why);
    uint64_t shed = 0;
    const bool answer = rc != RC_OK && relay_rate_refused(&b->rate, f->relay, now, &shed);
    pthread_mutex_unlock(&b->rate_mtx);
    if (rc == RC_OK) return true;
    atomic_fetch_add(&b->rate_limited, 1);
    log_once("relay-rate", "bus: a relay's client exceeded the rate limits: %s (logged once)", why);
    if (shed)
        shed_relay(b, f, shed);
    else if (answer)
        answer_error(b, f->room, f->client, rid, CMD_NONE, rc, why);
    else
        atomic_fetch_add(&b->unanswered, 1);
    return false;
}

/* A relay whose clients together have sent their share: the message is
 * refused before it is read (no room looked up, no credential checked),
 * and answered only within the relay's share of answers (relay_rate_answer).
 * What a flooding relay costs the node is then the broker's delivery and
 * this check. */
static bool relay_spent(bus *b, const bus_forward *f) {
    const uint64_t now = clock_now_ns();
    pthread_mutex_lock(&b->rate_mtx);
    relay_rate_heard(&b->rate, f->relay, now);
    bool spent = relay_rate_spent(&b->rate, f->relay, now);
    uint64_t shed = 0;
    const bool answer = spent && relay_rate_refused(&b->rate, f->relay, now, &shed);
    pthread_mutex_unlock(&b->rate_mtx);
    if (!spent) return false;
    atomic_fetch_add(&b->rate_limited, 1);
    if (shed) {
        shed_relay(b, f, shed);
    } else if (answer) {
        char why[160];
        snprintf(why, sizeof why, "rate limited: the clients of relay %u together send more than their share",
                 (unsigned)f->relay);
        answer_error(b, f->room, f->client, 0, CMD_NONE, RC_RATE_LIMITED, why);
    } else {
        atomic_fetch_add(&b->unanswered, 1);
    }
    return true;
}

/* Commands whose replies carry data (snapshots), or that only the edge
 * handles: a relay does not forward them. */
static bool forwardable(cmd_kind k) {
    return k != CMD_KEYFRAME && k != CMD_PACE && k != CMD_DETAIL && k != CMD_GET_PARTICLES && k != CMD_GET_BODIES &&
           k != CMD_GET_SNAPSHOT && k != CMD_RESTORE && k != CMD_CLIENT_LEFT && k != CMD_GET_OBSTACLES &&
           k != CMD_MESH_UPLOAD;
}

/* The role the forward's credential gives in room r (room_grant.h): 0, or
 * -1 with why when the credential is refused. */
static int grant(bus *b, room *r, const char *cred, size_t len, role *out, char *why, size_t cap) {
    return room_grant(r, b->cfg->token, &b->secret, cred, len, out, why, cap);
}

/* A forwarded REST request, checked as the sim node's own REST edge does:
 * its credential (401), its route's role (403, the route's sentence), its
 * translation (rest_translate).  0 and the command with its role, or -1
 * with the reason and its code. */
static int rest_command(bus *b, room *r, const bus_forward *f, cmd *c, reply_code *code, char *err, size_t errlen) {
    int method;
    char path[256];
    const char *body;
    size_t body_len;
    *code = RC_BAD_REQUEST;
    if (bus_unpack_rest(f->bytes, f->len, &method, path, sizeof path, &body, &body_len, err, errlen)) return -1;
    role got;
    if (grant(b, r, (const char *)f->cred, f->cred_len, &got, err, errlen)) {
        *code = RC_UNAUTHORIZED;
        return -1;
    }
    const char *pattern = rest_route_pattern(method, path, false);
    role need;
    if (pattern && !role_needed_for_route(rest_method_name(method), pattern, &need) && !role_allows(got, need)) {
        char action[96];
        snprintf(action, sizeof action, "%s %s", rest_method_name(method), pattern);
        role_refusal(err, errlen, action, need, got);
        *code = RC_FORBIDDEN;
        return -1;
    }
    rest_request q = {.method = method, .path = path, .body = body_len ? body : NULL, .body_len = body_len};
    rest_action a;
    rest_translate(&q, &a);
    if (a.outcome != REST_COMMAND) {
        if (a.outcome == REST_ERROR)
            *code = a.code;
        else
            *code = RC_NOT_IMPLEMENTED;
        snprintf(err, errlen, "%.150s", a.outcome == REST_ERROR ? a.error : "not a request a relay forwards");
        return -1;
    }
    *c = a.c;
    c->role = (uint8_t)got;
    return 0;
}

/* An auth command, or a credential sent alone to be checked: answered here
 * (nothing is queued), ok with the role it grants in its value, or 401. */
static void answer_auth(bus *b, room *r, const bus_forward *f, const cmd *c) {
    const char *cred = f->kind == BUS_FWD_AUTH ? (const char *)f->cred : c->u.auth.token;
    size_t len = f->kind == BUS_FWD_AUTH ? f->cred_len : strlen(c->u.auth.token);
    role got;
    char why[200];
    if (grant(b, r, cred, len, &got, why, sizeof why)) {
        atomic_fetch_add(&b->bad, 1);
        answer_error(b, f->room, f->client, c->rid, CMD_AUTH, RC_UNAUTHORIZED, why);
        return;
    }
    cmd_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.client = f->client;
    rep.rid = c->rid;
    rep.kind = CMD_AUTH;
    rep.ok = true;
    rep.value = (int64_t)got;
    publish_reply(b, f->room, &rep);
}

/* Whether a relay message came on its sender's own subject (fluid.<world>.
 * <leaf>.<relay>): the relay it names, and so the clients it speaks for, are
 * only those the broker lets its user publish for.  A message naming another
 * relay is refused (its sender is not told: the client it names is not its). */
static bool from_subject(const bus *b, natsMsg *m, const char *leaf, uint32_t relay, char *err, size_t errlen) {
    char base[BUS_SUBJECT];
    uint32_t said;
    bus_subject(b, leaf, base, sizeof base);
    if (bus_subject_relay(natsMsg_GetSubject(m), base, &said, err, errlen)) return false;
    if (said != relay) {
        snprintf(err, errlen, "a message on relay %u's subject names relay %u", said, relay);
        return false;
    }
    return true;
}

/* A client that left: its rate limit forgotten, its room told. */
static void client_left(bus *b, const bus_forward *f) {
    pthread_mutex_lock(&b->rate_mtx);
    relay_rate_left(&b->rate, f->client);
    pthread_mutex_unlock(&b->rate_mtx);
    room *r = room_find(b->dir, f->room);
    if (!r) return;
    cmd c;
    memset(&c, 0, sizeof c);
    c.kind = CMD_CLIENT_LEFT;
    c.client = f->client;
    c.arrival_ns = clock_now_ns();
    cmd_queue_push(room_queue(r), &c, true);
    room_unref(r);
}

/* Decodes a forward's message: 0 and the command (its role not yet set), or
 * -1 with the reason and its code. */
static int decode_forward(bus *b, room *r, const bus_forward *f, cmd *c, reply_code *code, char *err, size_t errlen) {
    *code = RC_BAD_REQUEST;
    if (f->kind == BUS_FWD_AUTH) {
        c->kind = CMD_AUTH;
        return 0;
    }
    if (f->kind == BUS_FWD_REST) return rest_command(b, r, f, c, code, err, errlen);
    if (wire_decode_command(f->bytes, f->len, c, err, errlen)) return -1;
    if (!forwardable(c->kind)) {
        *code = RC_NOT_IMPLEMENTED;
        snprintf(err, errlen, "%s: not a command a relay forwards", cmd_kind_name(c->kind));
        return -1;
    }
    return 0;
}

/* fluid.<world>.cmd.<relay> (in a fleet, fluid.<fleet>.r.<room>.cmd.<relay>,
 * naming the message's room): a relay's client message, held to a browser's
 * rate limit and its relay to its own (relay_rate.h), checked as a browser's
 * (or a REST client's) is, given the role its credential gives in its room,
 * then queued on that room under the client's id.  A message that does not
 * read, or names another relay, is refused here; a command the node's edge
 * refuses is answered to its client (and counted by refuse). */
static int take_cmd(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    bus_forward f;
    char leaf[BUS_SUBJECT];
    if (bus_decode_forward(p, n, &f, err, errlen)) return -1;
    if (b->fleet) bus_room_leaf(f.room, "cmd", leaf, sizeof leaf); /* in a fleet, r.<room>.cmd.<relay>: its room's */
    if (!from_subject(b, m, b->fleet ? leaf : "cmd", f.relay, err, errlen)) return -1;
    if (f.kind == BUS_FWD_LEFT) {
        client_left(b, &f);
        return 0;
    }
    if (relay_spent(b, &f)) return 0;
    room *r = room_find(b->dir, f.room);
    cmd c;
    memset(&c, 0, sizeof c);
    reply_code code = RC_BAD_REQUEST;
    /* (a REST request is read with its room, whose role table checks it: without one, costed as unread) */
    int rc = r ? decode_forward(b, r, &f, &c, &code, err, errlen) : -1;
    if (!r && f.kind == BUS_FWD_WS) wire_decode_command(f.bytes, f.len, &c, err, errlen); /* its rid */
    if (!within_rate(b, &f, rc ? CMD_NONE : c.kind, c.rid)) {
        room_unref(r);
        return 0; /* every message, read or not, costs its client and its relay (one that does not read: 1) */
    }
    if (!r) {
        char why[96];
        snprintf(why, sizeof why, "no room named '%s'", f.room);
        refuse(b, f.room, f.client, c.rid, RC_NOT_FOUND, why);
        return 0;
    }
    if (rc) {
        refuse(b, f.room, f.client, c.rid, code, err);
    } else if (c.kind == CMD_AUTH) {
        answer_auth(b, r, &f, &c);
    } else {
        if (f.kind == BUS_FWD_WS) {
            /* a WebSocket client's credential was checked when the relay sent it (answer_auth); one
             * refused since (an invite expired, its room's key rotated) gives the public role */
            role got;
            char why[200];
            if (grant(b, r, (const char *)f.cred, f.cred_len, &got, why, sizeof why))
                grant(b, r, NULL, 0, &got, why, sizeof why);
            c.role = (uint8_t)got;
        }
        c.client = f.client;
        c.arrival_ns = clock_now_ns();
        if (!cmd_queue_push(room_queue(r), &c, false))
            refuse(b, f.room, f.client, c.rid, RC_BUSY, "busy: command queue full, try again");
    }
    room_unref(r);
    return 0;
}

/* fluid.<world>.wants.<relay>: what a relay's viewers of each room need coded. */
static int take_wants(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    uint32_t relay;
    static _Thread_local bus_room_wants rw[BUS_MAX_ROOMS];
    int k;
    if (bus_decode_wants(p, n, &relay, rw, BUS_MAX_ROOMS, &k, err, errlen) ||
        !from_subject(b, m, "wants", relay, err, errlen))
        return -1;
    uint64_t now = clock_now_ns();
    pthread_mutex_lock(&b->rate_mtx);
    relay_rate_heard(&b->rate, relay, now); /* read by name while another relay is shed */
    pthread_mutex_unlock(&b->rate_mtx);
    for (int i = 0; i < k; i++) {
        room *r = room_find(b->dir, rw[i].room);
        if (!r) continue; /* deleted meanwhile: the relay learns it from the rooms' list */
        hub_set_remote_wants(room_hub(r), relay, &rw[i].w, now);
        room_unref(r);
    }
    return 0;
}

/* Whether obstacle id of room may go out now: each at most once a second
 * (a relay asks again while it lacks one; a second relay asking at once is
 * served by the same message).  Under rate_mtx (the callbacks may overlap). */
static bool mesh_due(bus *b, const char *rname, uint32_t id, uint64_t now) {
    pthread_mutex_lock(&b->rate_mtx);
    int slot = 0;
    bool due = true;
    for (int i = 0; i < BUS_MESH_SENT; i++) {
        if (b->mesh_sent[i].id == id && !strcmp(b->mesh_sent[i].room, rname)) {
            slot = i, due = now - b->mesh_sent[i].at >= 1000000000ull;
            break;
        }
        if (b->mesh_sent[i].at < b->mesh_sent[slot].at) slot = i; /* else the oldest is replaced */
    }
    if (due) {
        snprintf(b->mesh_sent[slot].room, sizeof b->mesh_sent[slot].room, "%s", rname);
        b->mesh_sent[slot].id = id, b->mesh_sent[slot].at = now;
    }
    pthread_mutex_unlock(&b->rate_mtx);
    return due;
}

/* omesh.<relay>: a relay lacks obstacles' meshes; each that the room has
 * goes out on r.<room>.omesh for every relay that follows the room. */
static int take_mesh_wants(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    uint32_t relay, ids[FS_MAX_OBSTACLES];
    char rname[ROOM_NAME_CAP];
    int k;
    if (bus_decode_mesh_wants(p, n, &relay, rname, ids, &k, err, errlen) ||
        !from_subject(b, m, "omesh", relay, err, errlen))
        return -1;
    room *r = room_find(b->dir, rname);
    if (!r) return 0; /* deleted meanwhile */
    char leaf[BUS_SUBJECT];
    bus_room_leaf(rname, "omesh", leaf, sizeof leaf);
    const uint64_t now = clock_now_ns();
    for (int i = 0; i < k; i++) {
        msg_buf *mesh = hub_obstacle_mesh(room_hub(r), ids[i], NULL, NULL);
        if (mesh && mesh_due(b, rname, ids[i], now)) {
            msg_buf *out = bus_encode_obstacle_mesh(ids[i], mesh);
            bus_publish(b, leaf, out);
            msg_buf_unref(out);
        }
        msg_buf_unref(mesh);
    }
    room_unref(r);
    return 0;
}

/* In a fleet, each room's commands come on its own subject, r.<room>.cmd.*,
 * which only its holder reads: a node subscribes when a room of the fleet
 * is listed here (it claimed it) and unsubscribes when it is not (lost,
 * deleted), so a move re-routes a room's relays' messages without them. */
int bus_node_subscribe(bus *b, char *err, size_t errlen) {
    static const bus_route routes[] = {{.leaf = "wants.*", .what = "wants", .take = take_wants},
                                       {.leaf = "omesh.*", .what = "mesh wants", .take = take_mesh_wants}};
    if (b->fleet) {
        b->room_route[0] = (bus_route){.b = b, .leaf = "cmd", .what = "relay client", .take = take_cmd};
        if (bus_subscribe(b, routes, 2, err, errlen)) return -1;
        return bus_rest_subscribe(b, err, errlen); /* REST writes for the rooms held here (bus_rest.c) */
    }
    if (bus_subscribe(b, routes, 2, err, errlen)) return -1;
    /* cmd.*: the wildcard, or while a relay is shed the others by name (bus_cmdsub.h) */
    if (!b->cmd_route.take) b->cmd_route = (bus_route){.b = b, .leaf = "cmd", .what = "relay client", .take = take_cmd};
    if (b->cmd_open) bus_cmdsub_close(&b->cmd);
    char base[BUS_SUBJECT];
    bus_subject(b, "cmd", base, sizeof base);
    b->cmd_open = !bus_cmdsub_open(&b->cmd, b->nc, base, bus_on_message, &b->cmd_route, err, errlen);
    return b->cmd_open ? 0 : -1;
}

/* Each command subject to the relays to read now: every one (the
 * wildcard), or while one is shed the others heard lately, by name. */
static void read_relays(bus *b, uint64_t now) {
    uint32_t relay[BUS_CMD_RELAYS];
    bool shedding;
    pthread_mutex_lock(&b->rate_mtx);
    const int k = relay_rate_readable(&b->rate, now, relay, BUS_CMD_RELAYS, &shedding);
    pthread_mutex_unlock(&b->rate_mtx);
    if (b->cmd_open) bus_cmdsub_update(&b->cmd, shedding, relay, k);
    for (int i = 0; i < b->nroom; i++)
        if (b->room[i].subscribed) bus_cmdsub_update(&b->room[i].cmd, shedding, relay, k);
}

/* A room's obstacles (their list for a hello, ids, hashes and sizes), when
 * they change and once a second, so that a relay joining late learns them. */
static void publish_obstacles(bus *b, bus_room *br, uint64_t now) {
    hub *h = room_hub(br->r);
    msg_buf *list = hub_obstacles_msg(h);
    if (list && (list != br->obst_seen || now - br->last_obst_ns > INFO_EVERY_NS) && list->len <= BUS_MAX_OBST_LIST) {
        hub_obstacle ho[FS_MAX_OBSTACLES];
        int k = hub_get_obstacles(h, ho, FS_MAX_OBSTACLES);
        bus_obstacles o = {.count = 0, .list = list->data, .list_len = list->len};
        for (int i = 0; i < k; i++) {
            if (ho[i].mesh) {
                o.id[o.count] = ho[i].id, o.hash[o.count] = ho[i].hash;
                o.bytes[o.count++] = (uint32_t)ho[i].mesh->len;
            }
            msg_buf_unref(ho[i].mesh);
        }
        char leaf[BUS_SUBJECT];
        bus_room_leaf(br->name, "obst", leaf, sizeof leaf);
        msg_buf *m = bus_encode_obstacles(&o);
        bus_publish(b, leaf, m);
        msg_buf_unref(m);
        br->obst_seen = list, br->last_obst_ns = now;
    }
    msg_buf_unref(list);
}

/* A room joins the table: its broadcasts from now on; in a fleet, its
 * command subject (not the node's own default room's). */
static void room_added(bus *b, bus_room *br) {
    br->bcast_next = hub_bcast_next(room_hub(br->r));
    if (!b->fleet || br->r == b->home) return;
    char leaf[BUS_SUBJECT], base[BUS_SUBJECT], err[200];
    bus_room_leaf(br->name, "cmd", leaf, sizeof leaf);
    bus_subject(b, leaf, base, sizeof base);
    b->room_route[0].b = b;
    br->subscribed = !bus_cmdsub_open(&br->cmd, b->nc, base, bus_on_message, &b->room_route[0], err, sizeof err);
    if (!br->subscribed) log_warn("bus: room '%s': %s", br->name, err);
    bus_rest_room_added(b, br);
}

static void room_dropped(bus *b, bus_room *br) {
    bus_rest_room_dropped(b, br);
    if (!br->subscribed) return;
    bus_cmdsub_close(&br->cmd);
    br->subscribed = false;
}

/* The rooms and their public roles (admin for all without --token). */
static void publish_rooms(bus *b) {
    bus_room_entry *e = b->entries;
    for (int i = 0; i < b->nroom; i++) {
        snprintf(e[i].name, sizeof e[i].name, "%s", b->room[i].name);
        e[i].public_role = b->cfg->token[0] ? room_public_role(b->room[i].r) : ROLE_ADMIN;
    }
    msg_buf *m = bus_encode_rooms(e, b->nroom);
    bus_publish(b, "rooms", m);
    msg_buf_unref(m);
}

/* Whether a relay heard from in the last 3 s has viewers of the room. */
static bool watched_by_relays(hub *h) {
    uint32_t relay[HUB_RELAYS];
    int viewers[HUB_RELAYS];
    int k = hub_get_relays(h, relay, viewers, HUB_RELAYS);
    for (int i = 0; i < k; i++)
        if (viewers[i] > 0) return true;
    return false;
}

static void publish_replies(bus *b, bus_room *br) {
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_relay_replies(room_hub(br->r), rs, 64)) > 0)
        for (int i = 0; i < k; i++) {
            publish_reply(b, br->name, &rs[i]);
            cmd_reply_free_payload(&rs[i]);
        }
}

/* One room's stream: published while a relay watches it (the default room's
 * always), read either way so that a relay joining gets what is new. */
static void publish_room(bus *b, bus_room *br, uint64_t now) {
    hub *h = room_hub(br->r);
    bool was = br->watched, home = br->r == b->home;
    br->watched = watched_by_relays(h);
    /* (in a fleet, the node's own default room stays off the bus: every node has one) */
    bool out = b->fleet ? !home && br->watched : home || br->watched;
    char leaf[BUS_SUBJECT];
    frameset fs[HUB_FRAME_RING];
    int k = hub_take_framesets(h, &br->frames_next, fs, HUB_FRAME_RING);
    bus_room_leaf(br->name, "frames", leaf, sizeof leaf);
    unsigned tiers = out && k ? hub_relay_tiers(h) : 1;
    for (int i = 0; i < k; i++) {
        msg_buf *m = out ? bus_encode_frameset(&fs[i], tiers) : NULL;
        bus_publish(b, leaf, m);
        msg_buf_unref(m);
        frameset_unref(&fs[i]);
    }
    msg_buf *bc[16];
    bool lost;
    bus_room_leaf(br->name, "bcast", leaf, sizeof leaf);
    while ((k = hub_take_bcast(h, &br->bcast_next, bc, 16, &lost)) > 0)
        for (int i = 0; i < k; i++) {
            if (out) bus_publish(b, leaf, bc[i]);
            msg_buf_unref(bc[i]);
        }
    publish_replies(b, br);
    if (!out) return;
    world_info wi;
    hub_get_info(h, &wi);
    if (wi.version && (wi.version != br->info_version || !was || now - br->last_info_ns > INFO_EVERY_NS)) {
        msg_buf *m = bus_encode_info(&wi);
        bus_room_leaf(br->name, "info", leaf, sizeof leaf);
        bus_publish(b, leaf, m);
        msg_buf_unref(m);
        br->info_version = wi.version;
        br->last_info_ns = now;
    }
    if (!was) br->obst_seen = NULL; /* a relay that starts watching hears them at once */
    publish_obstacles(b, br, now);
    if (!was || now - br->last_stats_ns > INFO_EVERY_NS) {
        sim_stats st;
        hub_get_stats(h, &st);
        msg_buf *m = bus_encode_stats(&st);
        bus_room_leaf(br->name, "stats", leaf, sizeof leaf);
        bus_publish(b, leaf, m);
        msg_buf_unref(m);
        br->last_stats_ns = now;
    }
}

void bus_node_pass(bus *b, uint64_t now) {
    /* A REST answer waiting to go (a room made here: 201) goes after the
     * rooms' subscriptions are current, so that its asker's next request for
     * that room finds its subject read: the broker passes this connection's
     * subscriptions on before the messages it publishes after them.  Only
     * the answers counted before the refresh go in this pass: one put after
     * it may be for a room the refresh did not see yet. */
    const int answers = b->fleet ? http_mail_count(&b->hub->http, HTTP_ANSWER) : 0;
    const bool answering = answers > 0;
    if (!b->nroom || answering || now - b->last_refresh_ns > REFRESH_EVERY_NS) {
        bool changed = bus_rooms_refresh(b, room_added, room_dropped);
        b->last_refresh_ns = now;
        if (!b->fleet && (changed || now - b->last_rooms_ns > INFO_EVERY_NS)) { /* a fleet's are in its bucket */
            publish_rooms(b);
            b->last_rooms_ns = now;
        }
    }
    for (int i = 0; i < b->nroom; i++) publish_room(b, &b->room[i], now);
    if (b->fleet) bus_rest_pass(b, answers);
    read_relays(b, now);
}

void bus_node_end(bus *b) {
    bus_rooms_clear(b, room_dropped);
    if (b->cmd_open) bus_cmdsub_close(&b->cmd);
    b->cmd_open = false;
}
