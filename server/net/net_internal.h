/* net_internal.h - struct net: the network thread's state that its files
 * share (net.c the context, ws.c and ws_client.c the stream, rest.c the
 * REST API, pump.c what the sim thread published, rest_views.c and
 * metrics.c read the counters).  Only net/ includes it; everything here is
 * touched by the network thread only. */
#ifndef SRV_NET_INTERNAL_H
#define SRV_NET_INTERNAL_H

#include <libwebsockets.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "hub.h" /* HUB_BCAST_RING */
#include "msgbuf.h"
#include "rest_budget.h"
#include "secret.h"
#include "wire.h"

typedef struct net net;             /* defined below */
typedef struct cmd_queue cmd_queue; /* queue.h */

#define NET_TLS_RX_READ 16384 /* over TLS, bytes read at once: one whole TLS record (see net_create) */

typedef struct ws_client ws_client; /* ws_client.h */
typedef struct net_room net_room;   /* net_room.h */

#define NET_ROOMS_MAX 256               /* the most rooms the network thread holds views of at once */
typedef struct http_req http_req;       /* rest.h */
typedef struct rooms rooms;             /* rooms.h */
typedef struct room_keeper room_keeper; /* room_keeper.h */
/* Mesh files read at once (POST /api/meshes), each on a thread of its own
 * (rest_meshes.c); beyond it an upload is answered busy. */
#define NET_MESH_LOADS 2
/* One mesh reader thread: started and joined by the network thread; done is
 * set by the reader as its last act. */
typedef struct net_mesh_load {
    pthread_t thread;
    bool used;
    atomic_bool done;
} net_mesh_load;

#define NET_MADE_LATELY 8 /* rooms made through this server that it remembers (net.made_name) */

/* Threads: network thread only (the sim thread reaches only `ctx`, through
 * lws_cancel_service). */
struct net {
    const srv_config *cfg;
    const wire_static *st;
    rooms *dir;                    /* the directory of rooms (rooms.h) */
    secret_key secret;             /* signs and checks the rooms' invites (net_set_secret) */
    room_keeper *keeper;           /* opens and reaps rooms off this thread (room_keeper.h); NULL on a relay */
    net_room *home;                /* the default room's view: the plain routes and / */
    net_room *room[NET_ROOMS_MAX]; /* every view held, home among them */
    int nrooms;
    struct lws_context *ctx;
    struct lws_vhost *vhost;
    char web_root[PATH_MAX];
    struct lws_http_mount mount_root, mount_api, mount_rooms, mount_metrics;
    bool closing; /* shutting down: every WebSocket gets a close frame */
    struct lws_protocol_vhost_options mime[6], pvo_default, pvo;
    struct lws_protocols protocols[4];
    lws_retry_bo_t retry;
    int nclients; /* over every room */
    uint32_t next_client_id;
    uint32_t relay_id; /* 0: a sim node's network thread; else a relay's (net_set_relay) */
    http_req *pending; /* REST requests waiting for a reply from the sim thread */
    int npending;
    size_t resp_bytes; /* REST answer bytes held (until written or the connection goes) */
    size_t body_bytes; /* request body bytes reserved (NET_MAX_BODY_BYTES_IN_FLIGHT) */
    uint32_t next_http_id;
    rest_budget budget; /* exports, snapshots, recording starts and reads per REST party (rest_budget.h) */
    int held;           /* refusals held before they are sent (http_req.held; at most REST_HELD_MAX) */
    net_mesh_load mesh_load[NET_MESH_LOADS];
    /* a fleet's: the rooms made through this server lately (rest_proxy.c), asked again while their holder's
     * subject is not read yet */
    char made_name[NET_MADE_LATELY][ROOM_NAME_CAP];
    uint64_t made_ns[NET_MADE_LATELY];
    int made_next;
    /* counters */
    uint64_t frames_sent, frames_dropped, keyframes_sent, key_requests, bytes_sent, messages_sent;
    uint64_t key_merged;   /* keyframe requests while the client already waited for one */
    uint64_t key_deferred; /* waits for a keyframe made longer: the client had one less than a second before */
    uint64_t bad_messages, rate_limited, queue_busy, replies_dropped, http_requests, ws_rejected, origin_refused;
    uint64_t http_answers_cut; /* answers whose reader stalled for NET_REST_STALL_S, closed unfinished */
    uint64_t rest_timeouts;    /* requests answered timeout (504): their wait ran out (rest_timed_out) */
    uint64_t refusals_held;    /* refusals for a party's budget held REST_HOLD_MS before they were sent */
};

#endif
