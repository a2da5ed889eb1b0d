/* bus_relay.c - a relay's side of the bus: what the sim node publishes goes
 * into the relay's hub (its network thread serves viewers from there, as a
 * sim node's does); its clients' messages and its frame wants go to the
 * sim node. */
#include "bus_relay.h"

#include <stdio.h>
#include <string.h>

#include "bus_codec.h"
#include "command.h"
#include "log.h"
#include "wire.h"

#define WANTS_EVERY_NS 1000000000ull /* the sim node forgets a relay silent for 3 s */

static void bad(bus *b, const char *what, const char *err) {
    atomic_fetch_add(&b->bad, 1);
    char key[48];
    snprintf(key, sizeof key, "bus-bad-%s", what);
    log_once(key, "relay: refused a %s message from the bus: %s (logged once)", what, err);
}

static void on_frames(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    bus *b = closure;
    atomic_fetch_add(&b->received, 1);
    size_t n;
    const uint8_t *p = bus_msg_data(m, &n);
    frameset fs;
    char err[160];
    if (bus_decode_frameset(p, n, &fs, err, sizeof err))
        bad(b, "frames", err);
    else {
        hub_publish_frameset(b->hub, &fs);
        hub_wake(b->hub);
    }
    natsMsg_Destroy(m);
}

static void on_bcast(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    bus *b = closure;
    atomic_fetch_add(&b->received, 1);
    size_t n;
    const uint8_t *p = bus_msg_data(m, &n);
    wire_frame_view v;
    char err[160];
    /* a broadcast is passed on as it is, once it reads as a message */
    if (n > BUS_MAX_MSG || wire_read_message(p, n, &v, err, sizeof err))
        bad(b, "bcast", n > BUS_MAX_MSG ? "too large" : err);
    else {
        hub_publish_bcast(b->hub, msg_buf_from_bytes(p, n));
        hub_wake(b->hub);
    }
    natsMsg_Destroy(m);
}

static void on_info(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    bus *b = closure;
    atomic_fetch_add(&b->received, 1);
    size_t n;
    const uint8_t *p = bus_msg_data(m, &n);
    world_info wi;
    char err[160];
    if (bus_decode_info(p, n, &wi, err, sizeof err))
        bad(b, "info", err);
    else {
        world_info old;
        hub_get_info(b->hub, &old);
        hub_set_info(b->hub, &wi);
        if (!old.version) hub_wake(b->hub); /* clients waiting for their hello */
    }
    natsMsg_Destroy(m);
}

static void on_stats(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    bus *b = closure;
    atomic_fetch_add(&b->received, 1);
    size_t n;
    const uint8_t *p = bus_msg_data(m, &n);
    sim_stats st;
    char err[160];
    if (bus_decode_stats(p, n, &st, err, sizeof err))
        bad(b, "stats", err);
    else
        hub_set_stats(b->hub, &st);
    natsMsg_Destroy(m);
}

static void on_reply(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    bus *b = closure;
    atomic_fetch_add(&b->received, 1);
    size_t n;
    const uint8_t *p = bus_msg_data(m, &n);
    cmd_reply r;
    char err[160];
    if (bus_decode_reply(p, n, &r, err, sizeof err) || cmd_client_relay(r.client) != b->relay_id)
        bad(b, "reply", err[0] ? err : "a reply for another relay's client");
    else {
        hub_post_reply(b->hub, &r);
        hub_wake(b->hub);
    }
    natsMsg_Destroy(m);
}

int bus_relay_subscribe(bus *b, char *err, size_t errlen) {
    char reply_leaf[32];
    snprintf(reply_leaf, sizeof reply_leaf, "reply.%u", b->relay_id);
    const char *leaf[] = {"frames", "bcast", "info", "stats", reply_leaf};
    natsMsgHandler cb[] = {on_frames, on_bcast, on_info, on_stats, on_reply};
    for (int i = 0; i < 5; i++) {
        char subj[BUS_SUBJECT];
        bus_subject(b, leaf[i], subj, sizeof subj);
        natsStatus s = natsConnection_Subscribe(&b->sub[b->nsub], b->nc, subj, cb[i], b);
        if (s != NATS_OK) {
            snprintf(err, errlen, "bus: cannot subscribe to %s: %s", subj, natsStatus_GetText(s));
            return -1;
        }
        b->nsub++;
    }
    return 0;
}

void bus_relay_pass(bus *b, uint64_t now) {
    hub_forward_msg f[64];
    int k;
    char cmd_leaf[24], wants_leaf[24]; /* this relay's own subjects (see bus_subject_relay) */
    snprintf(cmd_leaf, sizeof cmd_leaf, "cmd.%u", b->relay_id);
    snprintf(wants_leaf, sizeof wants_leaf, "wants.%u", b->relay_id);
    while ((k = hub_take_forwards(b->hub, f, 64)) > 0)
        for (int i = 0; i < k; i++) {
            int kind = f[i].left ? BUS_FWD_LEFT : (f[i].client & CMD_REST_BIT) ? BUS_FWD_REST : BUS_FWD_WS;
            msg_buf *m = bus_encode_forward(b->relay_id, f[i].client, kind, f[i].msg ? f[i].msg->data : NULL,
                                            f[i].msg ? f[i].msg->len : 0);
            bus_publish(b, cmd_leaf, m);
            msg_buf_unref(m);
            msg_buf_unref(f[i].msg);
        }
    frame_wants w;
    hub_get_frame_wants(b->hub, &w);
    if (!b->told_any || memcmp(&w, &b->told, sizeof w) || now - b->last_wants_ns > WANTS_EVERY_NS) {
        msg_buf *m = bus_encode_wants(b->relay_id, &w);
        bus_publish(b, wants_leaf, m);
        msg_buf_unref(m);
        b->told = w;
        b->told_any = true;
        b->last_wants_ns = now;
    }
}
