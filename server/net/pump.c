/* pump.c - what the sim threads and the rooms' keeper published, handed to
 * the connections: each room's replies, frames and broadcasts (its view,
 * net_room.c), and the rooms opened for POST /api/rooms.  Network thread
 * only. */
#include "pump.h"

#include <stdio.h>

#include "hub.h"
#include "net_internal.h"
#include "net_room.h"
#include "rest.h"
#include "rest_rooms.h"
#include "room_keeper.h"
#include "rooms.h"
#include "wire.h"
#include "ws_client.h"
#include "ws_frames.h"

/* One room: its replies, framesets and broadcasts; its clients woken when
 * there was news. */
static void pump_room(net *n, net_room *v) {
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_replies(v->hub, rs, 64)) > 0) {
        for (int i = 0; i < k; i++) {
            cmd_reply *r = &rs[i];
            if (r->client & CMD_REST_BIT) {
                rest_deliver(n, r);
            } else {
                ws_client *c = ws_find_client(v, r->client);
                if (c && n->relay_id && r->kind == CMD_AUTH) {
                    if (ws_auth_answered(n, c, r)) ws_ctl_push(n, c, wire_encode_reply(r));
                } else if (c) {
                    if (c->inflight > 0) c->inflight--;
                    ws_ctl_push(n, c, wire_encode_reply(r));
                }
            }
            cmd_reply_free_payload(r);
        }
    }
    bool news = false;
    if (ws_frames_take(v)) news = true;
    ws_frames_release_keys(v);
    msg_buf *b[HUB_BCAST_RING];
    bool lost;
    uint64_t first = v->bcast_next;
    k = hub_take_bcast(v->hub, &v->bcast_next, b, HUB_BCAST_RING, &lost);
    if (lost) first = v->bcast_next - (uint64_t)k;
    for (int i = 0; i < k; i++) {
        uint64_t seq = first + (uint64_t)i;
        msg_buf_unref(v->bcast[seq % HUB_BCAST_RING]);
        v->bcast[seq % HUB_BCAST_RING] = b[i];
        news = true;
    }
    if (news)
        for (ws_client *c = v->clients; c; c = c->next) lws_callback_on_writable(c->wsi);
}

void net_pump(net *n) {
    for (int i = 0; i < n->nrooms; i++) {
        net_room *v = n->room[i];
        /* a room closed by another thread: a relay's by its bus thread (the sim node deleted it), a
         * fleet's by its fleet thread (this node no longer holds it) */
        if (!v->closed && !v->home && !room_listed(n->dir, v->room)) {
            char why[96];
            snprintf(why, sizeof why, n->relay_id ? "room '%s' was deleted" : "room '%s' is no longer held here",
                     v->name);
            ws_close_room(v, why);
        }
        pump_room(n, v);
    }
    if (n->keeper) {
        room_opened got[ROOM_KEEPER_JOBS];
        int k = room_keeper_take(n->keeper, got, ROOM_KEEPER_JOBS);
        for (int i = 0; i < k; i++) rest_rooms_opened(n, &got[i]);
    }
    if (n->cfg->fleet[0]) rest_bus_pump(n); /* (after the rooms opened: a request from the bus answered there) */
}
