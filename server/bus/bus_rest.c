/* bus_rest.c - REST writes through a fleet, the bus thread's side (see
 * bus_rest.h).  Every message read here is checked (bus_http.h) before it
 * reaches the network thread; a reply subject is taken only when it is
 * short and printable. */
#include "bus_rest.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus_http.h"
#include "bus_options.h"
#include "log.h"
#include "rest_route.h"

/* A holder's answer straight from here (the network thread not asked): a
 * refusal's status, code and reason. */
static void answer_now(bus *b, const char *reply, int status, const char *code, const char *why) {
    char body[320];
    snprintf(body, sizeof body, "{\"error\":\"%s\",\"code\":\"%s\"}", why, code);
    bus_http_answer a = {
        .status = status, .retry_after = status == 503 ? 1 : 0, .body = body, .body_len = strlen(body)};
    msg_buf *m = bus_encode_http_answer(&a);
    if (m && natsConnection_Publish(b->nc, reply, m->data, (int)m->len) == NATS_OK)
        atomic_fetch_add(&b->published, 1);
    else
        atomic_fetch_add(&b->publish_failed, 1);
    msg_buf_unref(m);
}

/* The message's reply subject into out: false when it has none, or one
 * too long or with a byte outside printable ASCII. */
static bool reply_of(natsMsg *m, char out[HTTP_MAIL_REPLY]) {
    const char *r = natsMsg_GetReply(m);
    size_t l = r ? strnlen(r, HTTP_MAIL_REPLY) : 0;
    if (!l || l >= HTTP_MAIL_REPLY) return false;
    for (size_t i = 0; i < l; i++)
        if (r[i] < 0x21 || r[i] > 0x7e) return false;
    memcpy(out, r, l + 1);
    return true;
}

/* A request for this node's network thread: checked, then queued with its
 * reply subject (or refused busy at once when 16 already wait). */
static int take_request(bus *b, natsMsg *m, const uint8_t *p, size_t n, const char *rname, char *err, size_t errlen) {
    http_mail_msg e = {0};
    if (!reply_of(m, e.reply)) {
        snprintf(err, errlen, "REST over the bus: no reply subject, or one that is not short printable ASCII");
        return -1;
    }
    bus_http_req q;
    if (bus_decode_http_req(p, n, &q, err, errlen)) {
        char why[220];
        snprintf(why, sizeof why, "bad request over the bus: %.180s", err);
        for (char *c = why; *c; c++)
            if (*c == '"' || *c == '\\' || (unsigned char)*c < 0x20) *c = '\'';
        answer_now(b, e.reply, 400, "bad_request", why);
        return -1;
    }
    if (strcmp(q.room, rname)) {
        snprintf(err, errlen, "REST over the bus: room '%s' on the subject of room '%s'", q.room, rname);
        answer_now(b, e.reply, 400, "bad_request", "bad request over the bus: the path names another room");
        return -1;
    }
    snprintf(e.room, sizeof e.room, "%s", rname);
    e.msg = msg_buf_from_bytes(p, n);
    if (!e.msg || !http_mail_put(&b->hub->http, HTTP_IN, &e)) {
        msg_buf_unref(e.msg);
        answer_now(b, e.reply, 503, "busy",
                   "busy: this sim node has 16 REST requests from the fleet waiting, try again");
        return 0;
    }
    hub_wake(b->hub);
    return 0;
}

/* r.<room>.rest: a write to a room this node holds. */
static int take_rest(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    char base[BUS_SUBJECT], rname[ROOM_NAME_CAP];
    bus_subject(b, "r", base, sizeof base);
    if (bus_subject_room(natsMsg_GetSubject(m), base, "rest", rname, err, errlen)) return -1;
    return take_request(b, m, p, n, rname, err, errlen);
}

/* rooms.new: POST /api/rooms from a relay (this node places it as its own). */
static int take_new(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    return take_request(b, m, p, n, "", err, errlen);
}

/* inbox.<token>.<id>: the holder's answer to request id, or the broker's
 * "no responders" (no node reads the room's subject now). */
static int take_back(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    const char *subj = natsMsg_GetSubject(m), *dot = strrchr(subj, '.');
    char *end = NULL;
    unsigned long id = dot ? strtoul(dot + 1, &end, 10) : 0;
    if (!dot || !end || *end || !id || id > UINT32_MAX) {
        snprintf(err, errlen, "an answer on '%.60s', which names no request", subj);
        return -1;
    }
    http_mail_msg e = {.id = (uint32_t)id};
    int rc = 0;
    if (natsMsg_IsNoResponders(m)) {
        e.status = 0;
    } else {
        bus_http_answer a;
        rc = bus_decode_http_answer(p, n, &a, err, errlen);
        e.status = rc ? -1 : a.status;
        if (!rc) e.msg = msg_buf_from_bytes(p, n);
    }
    if (!http_mail_put(&b->hub->http, HTTP_BACK, &e)) msg_buf_unref(e.msg); /* (its request then times out) */
    hub_wake(b->hub);
    return rc;
}

int bus_rest_subscribe(bus *b, char *err, size_t errlen) {
    if (!b->inbox_leaf[0]) {
        natsInbox *in = NULL;
        if (natsInbox_Create(&in) != NATS_OK) {
            snprintf(err, errlen, "bus: cannot make an inbox");
            return -1;
        }
        const char *tok = strrchr(in, '.');
        /* under the broker user's name when it has one: the broker lets
         * each user read only its own answers (bus_user_scope) */
        char scope[BUS_SCOPE_MAX + 1];
        if (bus_user_scope(b->cfg, scope))
            snprintf(b->inbox_leaf, sizeof b->inbox_leaf, "inbox.%s.%.40s.*", scope, tok ? tok + 1 : in);
        else
            snprintf(b->inbox_leaf, sizeof b->inbox_leaf, "inbox.%.40s.*", tok ? tok + 1 : in);
        natsInbox_Destroy(in);
    }
    bus_route routes[] = {{.leaf = b->inbox_leaf, .what = "REST answer", .take = take_back},
                          {.leaf = "rooms.new", .what = "REST request", .take = take_new, .queue = "nodes"}};
    if (!b->rest_route.take)
        b->rest_route = (bus_route){.b = b, .leaf = "rest", .what = "REST request", .take = take_rest};
    return bus_subscribe(b, routes, b->relay ? 1 : 2, err, errlen);
}

void bus_rest_room_added(bus *b, bus_room *br) {
    char leaf[BUS_SUBJECT], err[200];
    bus_room_leaf(br->name, "rest", leaf, sizeof leaf);
    if (bus_subscribe_one(b, &b->rest_route, leaf, &br->sub[1], err, sizeof err))
        log_warn("bus: room '%s': %s", br->name, err);
}

/* How long the bus thread waits for a dropped room's requests already
 * delivered to this node to reach the network thread. */
#define BUS_REST_DRAIN_MS 250

void bus_rest_room_dropped(bus *b, bus_room *br) {
    (void)b;
    if (!br->sub[1]) return;
    /* drained, not cut: a request the broker delivered before the room went
     * (another server's delete of it, a moment after this node's own) is
     * still answered (404 here), not left to time out at its asker */
    if (natsSubscription_Drain(br->sub[1]) == NATS_OK)
        natsSubscription_WaitForDrainCompletion(br->sub[1], BUS_REST_DRAIN_MS);
    natsSubscription_Destroy(br->sub[1]);
    br->sub[1] = NULL;
}

void bus_rest_pass(bus *b, int answers) {
    http_mail_msg e[HTTP_MAIL_RING];
    int k = http_mail_take(&b->hub->http, HTTP_OUT, e, HTTP_MAIL_RING);
    for (int i = 0; i < k; i++) {
        char subj[BUS_SUBJECT], leaf[BUS_SUBJECT], reply[BUS_SUBJECT];
        if (e[i].create)
            snprintf(leaf, sizeof leaf, "rooms.new");
        else
            bus_room_leaf(e[i].room, "rest", leaf, sizeof leaf);
        bus_subject(b, leaf, subj, sizeof subj);
        bus_subject(b, b->inbox_leaf, reply, sizeof reply);
        size_t rl = strlen(reply) - 1; /* ... .* -> ... .id */
        snprintf(reply + rl, sizeof reply - rl, "%u", (unsigned)e[i].id);
        natsStatus s = natsConnection_PublishRequest(b->nc, subj, reply, e[i].msg->data, (int)e[i].msg->len);
        msg_buf_unref(e[i].msg);
        if (s == NATS_OK) {
            atomic_fetch_add(&b->published, 1);
            continue;
        }
        atomic_fetch_add(&b->publish_failed, 1);
        http_mail_msg back = {.id = e[i].id, .status = -2}; /* not sent: the broker is not reachable */
        if (http_mail_put(&b->hub->http, HTTP_BACK, &back)) hub_wake(b->hub);
    }
    k = answers > 0 ? http_mail_take(&b->hub->http, HTTP_ANSWER, e, answers < HTTP_MAIL_RING ? answers : HTTP_MAIL_RING)
                    : 0;
    for (int i = 0; i < k; i++) {
        if (natsConnection_Publish(b->nc, e[i].reply, e[i].msg->data, (int)e[i].msg->len) == NATS_OK)
            atomic_fetch_add(&b->published, 1);
        else
            atomic_fetch_add(&b->publish_failed, 1);
        msg_buf_unref(e[i].msg);
    }
}
