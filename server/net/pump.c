/* pump.c - what the sim thread published, handed to the connections: replies
 * (to a WebSocket client's queue or to the waiting REST request), the
 * newest frame and broadcasts (kept here for every client to send).
 * Network thread only. */
#include "pump.h"

#include "hub.h"
#include "net_internal.h"
#include "rest.h"
#include "ws_client.h"
#include "ws_frames.h"
#include "wire.h"

void net_pump(net *n) {
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_replies(n->hub, rs, 64)) > 0) {
        for (int i = 0; i < k; i++) {
            cmd_reply *r = &rs[i];
            if (r->client & CMD_REST_BIT) {
                rest_deliver(n, r);
            } else {
                ws_client *c = ws_find_client(n, r->client);
                if (c) {
                    if (c->inflight > 0) c->inflight--;
                    ws_ctl_push(n, c, wire_encode_reply(r));
                }
            }
            cmd_reply_free_payload(r);
        }
    }
    bool news = false;
    if (ws_frames_take(n)) news = true;
    ws_frames_release_keys(n);
    msg_buf *b[HUB_BCAST_RING];
    bool lost;
    uint64_t first = n->bcast_next;
    k = hub_take_bcast(n->hub, &n->bcast_next, b, HUB_BCAST_RING, &lost);
    if (lost) first = n->bcast_next - (uint64_t)k;
    for (int i = 0; i < k; i++) {
        uint64_t seq = first + (uint64_t)i;
        msg_buf_unref(n->bcast[seq % HUB_BCAST_RING]);
        n->bcast[seq % HUB_BCAST_RING] = b[i];
        news = true;
    }
    if (news)
        for (ws_client *c = n->clients; c; c = c->next) lws_callback_on_writable(c->wsi);
}
