/* bus_relay.c - a relay's side of the bus: what the sim node publishes goes
 * into the relay's hub (its network thread serves viewers from there, as a
 * sim node's does); its clients' messages and its frame wants go to the
 * sim node. */
#include "bus_relay.h"

#include <stdio.h>
#include <string.h>

#include "bus_codec.h"
#include "command.h"
#include "wire.h"

#define WANTS_EVERY_NS 1000000000ull /* the sim node forgets a relay silent for 3 s */

static int take_frames(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    frameset fs;
    if (bus_decode_frameset(p, n, &fs, err, errlen)) return -1;
    hub_publish_frameset(b->hub, &fs);
    hub_wake(b->hub);
    return 0;
}

static int take_bcast(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    wire_frame_view v;
    /* a broadcast is passed on as it is, once it reads as a message */
    if (n > BUS_MAX_MSG) {
        snprintf(err, errlen, "too large");
        return -1;
    }
    if (wire_read_message(p, n, &v, err, errlen)) return -1;
    hub_publish_bcast(b->hub, msg_buf_from_bytes(p, n));
    hub_wake(b->hub);
    return 0;
}

static int take_info(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    world_info wi, old;
    if (bus_decode_info(p, n, &wi, err, errlen)) return -1;
    hub_get_info(b->hub, &old);
    hub_set_info(b->hub, &wi);
    if (!old.version) hub_wake(b->hub); /* clients waiting for their hello */
    return 0;
}

static int take_stats(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    sim_stats st;
    if (bus_decode_stats(p, n, &st, err, errlen)) return -1;
    hub_set_stats(b->hub, &st);
    return 0;
}

static int take_reply(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    cmd_reply r;
    if (bus_decode_reply(p, n, &r, err, errlen)) return -1;
    if (cmd_client_relay(r.client) != b->relay_id) {
        snprintf(err, errlen, "a reply for another relay's client");
        return -1;
    }
    hub_post_reply(b->hub, &r);
    hub_wake(b->hub);
    return 0;
}

int bus_relay_subscribe(bus *b, char *err, size_t errlen) {
    const bus_route routes[] = {{.leaf = "frames", .what = "frames", .take = take_frames},
                                {.leaf = "bcast", .what = "bcast", .take = take_bcast},
                                {.leaf = "info", .what = "info", .take = take_info},
                                {.leaf = "stats", .what = "stats", .take = take_stats},
                                {.leaf = b->reply_leaf, .what = "reply", .take = take_reply}};
    return bus_subscribe(b, routes, 5, err, errlen);
}

void bus_relay_pass(bus *b, uint64_t now) {
    hub_forward_msg f[64];
    int k;
    while ((k = hub_take_forwards(b->hub, f, 64)) > 0)
        for (int i = 0; i < k; i++) {
            int kind = f[i].left ? BUS_FWD_LEFT : (f[i].client & CMD_REST_BIT) ? BUS_FWD_REST : BUS_FWD_WS;
            msg_buf *m = bus_encode_forward(b->relay_id, f[i].client, kind, f[i].msg ? f[i].msg->data : NULL,
                                            f[i].msg ? f[i].msg->len : 0);
            bus_publish(b, b->cmd_leaf, m);
            msg_buf_unref(m);
            msg_buf_unref(f[i].msg);
        }
    frame_wants w;
    hub_get_frame_wants(b->hub, &w);
    if (!b->told_any || memcmp(&w, &b->told, sizeof w) || now - b->last_wants_ns > WANTS_EVERY_NS) {
        msg_buf *m = bus_encode_wants(b->relay_id, &w);
        bus_publish(b, b->wants_leaf, m);
        msg_buf_unref(m);
        b->told = w;
        b->told_any = true;
        b->last_wants_ns = now;
    }
}
