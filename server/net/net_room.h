/* net_room.h - the network thread's view of one room: what it keeps of the
 * room's stream (the newest framesets, the broadcasts, the frame wants told
 * to the encoder), the WebSocket clients watching it, the REST requests
 * addressed to it, and the counted reference (rooms.h) that keeps the room
 * whole while any of them is there.  A client or request of room A is only
 * ever on room A's view, so nothing of room B reaches it.
 *
 * The default room's view lives as long as the network thread; another
 * room's is made when a client or a request first names the room and freed
 * when the last of them has gone.  Network thread only. */
#ifndef SRV_NET_ROOM_H
#define SRV_NET_ROOM_H

#include <stdbool.h>
#include <stdint.h>

#include "hub.h"
#include "msgbuf.h"
#include "room_name.h"

typedef struct net net;             /* net_internal.h */
typedef struct ws_client ws_client; /* ws_client.h */
typedef struct rec_list rec_list;   /* rest_recordings.c */
typedef struct room room;           /* rooms.h */
typedef struct cmd_queue cmd_queue; /* queue.h */

/* Threads: network thread only. */
typedef struct net_room {
    net *net;
    room *room; /* one reference, dropped when the view is freed */
    char name[ROOM_NAME_CAP];
    hub *hub;
    cmd_queue *queue;
    ws_client *clients;
    int nclients;
    int users;                       /* clients and REST requests holding the view */
    bool home;                       /* the default room's: never freed before the network thread ends */
    bool closed;                     /* the room was deleted: its clients are closed with the reason */
    frameset frames[HUB_FRAME_RING]; /* the newest framesets (ws_frames.c) */
    uint64_t frames_next;
    frame_wants wants;              /* what the clients need coded, as last told to the hub */
    size_t tier_bytes[FRAME_TIERS]; /* each tier's last delta against the frame before, bytes (0: none seen) */
    double frame_s;                 /* the time between the stream's frames, a running mean (0: not yet known) */
    uint64_t frames_at_ns;          /* ... since when frames_counted framesets were taken */
    uint64_t frames_counted;
    msg_buf *bcast[HUB_BCAST_RING];
    uint64_t bcast_next; /* seq after the newest broadcast held */
    /* the recordings listing's cache (rest_recordings.c), made when first
     * asked, and how it is freed (set with it) */
    rec_list *recordings;
    void (*recordings_free)(rec_list *);
} net_room;

/* The view of room r (the caller's reference passes to the view when one is
 * made, and is dropped otherwise), with one more user; NULL when NET_ROOMS_MAX
 * views are held (net_internal.h) or memory runs out (r's reference is dropped then too). */
net_room *net_room_hold(net *n, room *r);
/* The view of the listed room of that name, with one more user; NULL when no
 * room of that name is listed (or as net_room_hold). */
net_room *net_room_find(net *n, const char *name);
/* A user less; a view that is not home with no user left is freed. */
void net_room_release(net *n, net_room *v);
/* Frees a view whatever its users (shutdown). */
void net_room_free(net_room *v);

#endif
