/* bus_node.c - a sim node's side of the bus: publishes what its hub holds
 * (framesets, broadcasts, the world's description, statistics, replies to
 * relays' clients) and takes relays' client messages and frame wants. */
#include "bus_node.h"

#include <stdio.h>
#include <string.h>

#include "bus_codec.h"
#include "clock.h"
#include "command.h"
#include "log.h"
#include "rest_route.h"
#include "roles.h"
#include "wire.h"

#define INFO_EVERY_NS 1000000000ull /* a relay that joins late learns the world within a second */

/* An error reply to a relay's client. */
static void answer_error(bus *b, uint32_t client, uint32_t rid, reply_code code, const char *why) {
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.client = client;
    r.rid = rid;
    r.kind = CMD_NONE;
    cmd_reply_refuse(&r, code, "%s", why);
    hub_post_reply(b->hub, &r);
}

/* A refused client message: the reply goes back to the relay's client. */
static void refuse(bus *b, uint32_t client, uint32_t rid, reply_code code, const char *why) {
    atomic_fetch_add(&b->bad, 1);
    answer_error(b, client, rid, code, why);
}

/* Charges a relay client's message to the rate limits (relay_rate.h): true,
 * or false with the refusal answered to the client (and counted). */
static bool within_rate(bus *b, uint32_t relay, uint32_t client, bool rest, cmd_kind kind, uint32_t rid) {
    char why[sizeof((cmd_reply *)0)->error];
    pthread_mutex_lock(&b->rate_mtx);
    reply_code rc = relay_rate_take(&b->rate, relay, client, rest, kind, clock_now_ns(), why, sizeof why);
    pthread_mutex_unlock(&b->rate_mtx);
    if (rc == RC_OK) return true;
    atomic_fetch_add(&b->rate_limited, 1);
    log_once("relay-rate", "bus: a relay's client exceeded the rate limits: %s (logged once)", why);
    answer_error(b, client, rid, rc, why);
    return false;
}

/* Commands whose replies carry data (snapshots), or that only the edge
 * handles: a relay does not forward them. */
static bool forwardable(cmd_kind k) {
    return k != CMD_AUTH && k != CMD_KEYFRAME && k != CMD_PACE && k != CMD_GET_PARTICLES && k != CMD_GET_BODIES &&
           k != CMD_GET_SNAPSHOT && k != CMD_RESTORE && k != CMD_CLIENT_LEFT && k != CMD_GET_OBSTACLES &&
           k != CMD_MESH_UPLOAD;
}

/* A forwarded REST request, translated as the sim node's own REST edge
 * does (rest_translate): 0 and the command, or -1 with the reason and its
 * code (the translation's own, as the relay's REST client is answered). */
static int rest_command(const uint8_t *bytes, size_t len, cmd *c, reply_code *code, char *err, size_t errlen) {
    int method;
    char path[256];
    const char *body;
    size_t body_len;
    *code = RC_BAD_REQUEST;
    if (bus_unpack_rest(bytes, len, &method, path, sizeof path, &body, &body_len, err, errlen)) return -1;
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
    return 0;
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

/* fluid.<world>.cmd.<relay>: a relay's client message, held to a browser's
 * rate limit and its relay to its own (relay_rate.h), checked as a browser's
 * (or a REST client's) is, then queued under the client's id.  A message that does
 * not read, or names another relay, is refused here; a command the node's
 * edge refuses is answered to its client (and counted by refuse). */
static int take_cmd(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    uint32_t relay, client;
    int kind;
    const uint8_t *bytes;
    size_t len;
    if (bus_decode_forward(p, n, &relay, &client, &kind, &bytes, &len, err, errlen) ||
        !from_subject(b, m, "cmd", relay, err, errlen))
        return -1;
    cmd c;
    memset(&c, 0, sizeof c);
    bool left = kind == BUS_FWD_LEFT;
    reply_code code = RC_BAD_REQUEST; /* a message that does not decode */
    int rc = left                   ? 0
             : kind == BUS_FWD_REST ? rest_command(bytes, len, &c, &code, err, errlen)
                                    : wire_decode_command(bytes, len, &c, err, errlen);
    if (left) {
        c.kind = CMD_CLIENT_LEFT;
        pthread_mutex_lock(&b->rate_mtx);
        relay_rate_left(&b->rate, client);
        pthread_mutex_unlock(&b->rate_mtx);
    } else if (!within_rate(b, relay, client, kind == BUS_FWD_REST, rc ? CMD_NONE : c.kind, c.rid)) {
        return 0; /* every message, read or not, costs its client and its relay (one that does not read: 1) */
    }
    if (!rc && !left && !forwardable(c.kind)) {
        rc = -1;
        code = RC_NOT_IMPLEMENTED;
        snprintf(err, errlen, "%s: not a command a relay forwards", cmd_kind_name(c.kind));
    }
    if (rc) {
        refuse(b, client, c.rid, code, err);
    } else {
        c.client = client;
        c.arrival_ns = clock_now_ns();
        /* A relay serves the default room only, and keeps the token rule at
         * its own edge (a client without the token there only watches): the
         * broker's permissions are what admits a relay, so what it forwards
         * is applied as the administrator's. */
        c.role = ROLE_ADMIN;
        if (!cmd_queue_push(b->queue, &c, left) && !left)
            refuse(b, client, c.rid, RC_BUSY, "busy: command queue full, try again");
    }
    return 0;
}

/* fluid.<world>.wants.<relay>: what a relay's viewers need coded. */
static int take_wants(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    uint32_t relay;
    frame_wants w;
    if (bus_decode_wants(p, n, &relay, &w, err, errlen) || !from_subject(b, m, "wants", relay, err, errlen)) return -1;
    hub_set_remote_wants(b->hub, relay, &w, clock_now_ns());
    return 0;
}

int bus_node_subscribe(bus *b, char *err, size_t errlen) {
    static const bus_route routes[] = {{.leaf = "cmd.*", .what = "relay client", .take = take_cmd},
                                       {.leaf = "wants.*", .what = "wants", .take = take_wants}};
    if (bus_subscribe(b, routes, 2, err, errlen)) return -1;
    b->bcast_next = hub_bcast_next(b->hub);
    return 0;
}

static void publish_replies(bus *b) {
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_relay_replies(b->hub, rs, 64)) > 0)
        for (int i = 0; i < k; i++) {
            char leaf[32];
            snprintf(leaf, sizeof leaf, "reply.%u", cmd_client_relay(rs[i].client));
            msg_buf *m = bus_encode_reply(&rs[i]);
            bus_publish(b, leaf, m);
            msg_buf_unref(m);
            cmd_reply_free_payload(&rs[i]);
        }
}

void bus_node_pass(bus *b, uint64_t now) {
    frameset fs[HUB_FRAME_RING];
    int k = hub_take_framesets(b->hub, &b->frames_next, fs, HUB_FRAME_RING);
    for (int i = 0; i < k; i++) {
        msg_buf *m = bus_encode_frameset(&fs[i]);
        bus_publish(b, "frames", m);
        msg_buf_unref(m);
        frameset_unref(&fs[i]);
    }
    msg_buf *bc[16];
    bool lost;
    while ((k = hub_take_bcast(b->hub, &b->bcast_next, bc, 16, &lost)) > 0)
        for (int i = 0; i < k; i++) {
            bus_publish(b, "bcast", bc[i]);
            msg_buf_unref(bc[i]);
        }
    publish_replies(b);
    world_info wi;
    hub_get_info(b->hub, &wi);
    if (wi.version != b->info_version || now - b->last_info_ns > INFO_EVERY_NS) {
        msg_buf *m = bus_encode_info(&wi);
        bus_publish(b, "info", m);
        msg_buf_unref(m);
        b->info_version = wi.version;
        b->last_info_ns = now;
    }
    if (now - b->last_stats_ns > INFO_EVERY_NS) {
        sim_stats st;
        hub_get_stats(b->hub, &st);
        msg_buf *m = bus_encode_stats(&st);
        bus_publish(b, "stats", m);
        msg_buf_unref(m);
        b->last_stats_ns = now;
    }
}
