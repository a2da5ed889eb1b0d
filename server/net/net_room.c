/* net_room.c - the network thread's views of rooms (net_room.h): made when
 * a room is first named, pumped from the room's hub, freed with their last
 * user.  Network thread only. */
#include "net_room.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net_internal.h"
#include "rooms.h"

static net_room *held(net *n, const room *r) {
    for (int i = 0; i < n->nrooms; i++)
        if (n->room[i]->room == r) return n->room[i];
    return NULL;
}

net_room *net_room_hold(net *n, room *r) {
    if (!r) return NULL;
    net_room *v = held(n, r);
    if (v) {
        room_unref(r); /* the view holds one already */
        v->users++;
        return v;
    }
    if (n->nrooms >= NET_ROOMS_MAX || !(v = calloc(1, sizeof *v))) {
        log_once("views", "net: cannot hold a view of room '%s' (%d held)", room_name(r), n->nrooms);
        room_unref(r);
        return NULL;
    }
    v->net = n;
    v->room = r;
    snprintf(v->name, sizeof v->name, "%s", room_name(r));
    v->hub = room_hub(r);
    v->queue = room_queue(r);
    v->users = 1;
    n->room[n->nrooms++] = v;
    return v;
}

net_room *net_room_find(net *n, const char *name) {
    for (int i = 0; i < n->nrooms; i++)
        if (!n->room[i]->closed && !strcmp(n->room[i]->name, name)) {
            n->room[i]->users++;
            return n->room[i];
        }
    return n->dir ? net_room_hold(n, room_find(n->dir, name)) : NULL;
}

void net_room_free(net_room *v) {
    if (!v) return;
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_replies(v->hub, rs, 64)) > 0) /* replies nobody will read */
        for (int i = 0; i < k; i++) cmd_reply_free_payload(&rs[i]);
    for (int i = 0; i < HUB_FRAME_RING; i++) frameset_unref(&v->frames[i]);
    for (int i = 0; i < HUB_BCAST_RING; i++) msg_buf_unref(v->bcast[i]);
    if (v->recordings) v->recordings_free(v->recordings);
    room_unref(v->room);
    free(v);
}

void net_room_release(net *n, net_room *v) {
    if (!v || --v->users > 0 || v->home) return;
    for (int i = 0; i < n->nrooms; i++)
        if (n->room[i] == v) {
            n->room[i] = n->room[--n->nrooms];
            break;
        }
    /* Replies still on their way go with the hub; a client's frame wants
     * drop to none, so the room's encoder stops coding for nobody. */
    frame_wants none = v->wants;
    none.clients = 0;
    for (int t = 0; t < FRAME_TIERS - 1; t++) none.coarse[t].clients = 0;
    hub_set_frame_wants(v->hub, &none);
    net_room_free(v);
}
