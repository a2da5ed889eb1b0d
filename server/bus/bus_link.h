/* bus_link.h - struct bus (the NATS connection, its counters, the rooms the
 * bus thread follows and what it has read or told of each), and publishing
 * on the world's subjects; shared by bus.c, bus_rooms.c, bus_node.c and
 * bus_relay.c. */
#ifndef SRV_BUS_LINK_H
#define SRV_BUS_LINK_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bus_cmdsub.h"
#include "bus_codec.h"
#include "config.h"
#include "hub.h"
#include "relay_rate.h"
#include "rooms.h"
#include "secret.h"

#define BUS_SUBJECT 160
#define BUS_ROOM_SUBS 6                   /* a room's stream: frames, bcast, info, stats, obst, omesh */
#define BUS_MESH_SENT 64                  /* a sim node's memory of the meshes it sent relays (once a second each) */
#define BUS_RELAY_MESH_BYTES (256u << 20) /* a relay holds at most this much of obstacles' meshes */

typedef struct bus bus; /* also in bus.h */

/* What a subscription does with a message's bytes: 0, or -1 with the reason
 * it was refused (counted and logged once by the caller).  m: for its
 * subject. */
typedef int bus_take_fn(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen);

/* One subscription: the subject's leaf below fluid.<world>, and its taker. */
typedef struct bus_route {
    bus *b;
    const char *leaf, *what;
    bus_take_fn *take;
    const char *queue; /* a queue group: one subscriber of the group gets each message (NULL: every one) */
} bus_route;

/* One room as the bus thread follows it.  Threads: the bus thread only. */
typedef struct bus_room {
    room *r; /* a reference while the directory lists it */
    char name[ROOM_NAME_CAP];
    bool seen; /* listed at the last refresh */
    /* a sim node's: what it published of the room */
    uint64_t frames_next, bcast_next, info_version, last_info_ns, last_stats_ns;
    bool watched;          /* a relay had viewers of it at the last pass */
    const void *obst_seen; /* the `obstacles` message last published (compared, never read) */
    uint64_t last_obst_ns;
    /* a relay's: its subscriptions to the room's stream, and the wants it told */
    natsSubscription *sub[BUS_ROOM_SUBS];
    bool subscribed;
    bus_cmdsub cmd;        /* a fleet's sim node's: the room's r.<room>.cmd.* (subscribed: made) */
    uint64_t unwatched_ns; /* when it was last seen without a viewer (0: it has some) */
    frame_wants told;
    bool told_any;
    uint64_t mesh_asked_ns; /* when it last asked the node for obstacles' meshes */
} bus_room;

struct bus {
    const srv_config *cfg;
    rooms *dir;        /* the node's rooms, or a relay's mirrors of them */
    room *home;        /* the default room (a reference for the bus's life): its hub carries the link's state */
    hub *hub;          /* home's */
    secret_key secret; /* a sim node's: checks the invites its relays' clients send */
    bool relay;
    bool fleet; /* of a fleet (--fleet): subjects fluid.<fleet>.*, each room's commands on its own subject */
    uint32_t relay_id;
    natsOptions *opts;
    natsConnection *nc;
    natsSubscription *sub[6];
    bus_route route[6];
    int nsub;
    pthread_t thread;
    bool started;
    atomic_bool stop, connected;
    atomic_ullong published, publish_failed, received, bad, reconnects;
    atomic_ullong rate_limited; /* relays' client messages refused by relay_rate */
    atomic_ullong unanswered;   /* ... of which refused without a reply */
    atomic_ullong shed;         /* relays shed for flooding (relay_rate_flooding) */
    /* a sim node's subscriptions to cmd.* (not in a fleet: there each room's
     * r.<room>.cmd.*, in its bus_room), and their route; the bus thread's */
    bus_cmdsub cmd;
    bus_route cmd_route;
    bool cmd_open;
    /* a sim node's rate limits on relays' clients: the cmd.* subscription's
     * callbacks (two may overlap while a resubscription replaces one) */
    pthread_mutex_t rate_mtx;
    relay_rate rate;
    bool rate_on;
    /* a sim node's: the obstacle meshes it sent relays lately (the omesh.*
     * callbacks, under rate_mtx): each goes out at most once a second */
    struct {
        char room[ROOM_NAME_CAP];
        uint32_t id;
        uint64_t at;
    } mesh_sent[BUS_MESH_SENT];
    /* a relay's: the bytes of obstacles' meshes its rooms hold (the bus thread sums them each pass) */
    atomic_ullong mesh_bytes;
    char prefix[96];                   /* fluid.<world> (a fleet's node: fluid.<fleet>) */
    char reply_leaf[24];               /* a relay's subjects: reply.<relay id> (its route's leaf), */
    char cmd_leaf[24], wants_leaf[24]; /* cmd.<relay id> and wants.<relay id> (it publishes on) */
    char omesh_leaf[24];               /* omesh.<relay id>: its requests for obstacles' meshes */
    /* the bus thread's own: the rooms it follows (bus_rooms.c) */
    bus_room room[BUS_MAX_ROOMS];
    int nroom;
    room_entry listed[BUS_MAX_ROOMS]; /* the directory's list, read at each refresh */
    uint64_t last_refresh_ns, last_rooms_ns, last_wants_ns, last_reap_ns;
    bus_room_entry entries[BUS_MAX_ROOMS]; /* a node's list of rooms, as it publishes it */
    bus_room_wants wants[BUS_MAX_ROOMS];   /* a relay's wants, as it publishes them */
    bool was_connected;
    bool subscribed;                     /* every subscription made (the bus thread retries while not) */
    bus_route room_route[BUS_ROOM_SUBS]; /* a relay's subscriptions to rooms' streams share these */
    atomic_bool heard_rooms;             /* a relay: the node's rooms (and their public roles) heard (a
                                          * fleet's: from the start, its fleet thread makes the mirrors) */
    /* a fleet's: REST writes sent to rooms' holders come back on inbox.<token>.<request id> (bus_rest.c) */
    char inbox_leaf[96];
    bus_route rest_route; /* a node's subscriptions to its rooms' r.<room>.rest share it */
};

/* Publishes bytes on fluid.<world>.<leaf> (counted; never blocks). */
void bus_publish(bus *b, const char *leaf, const msg_buf *m);
/* A room's stream's leaf: r.<room>.<what> (what: frames, bcast, info, stats). */
void bus_room_leaf(const char *rname, const char *what, char *out, size_t n);
void bus_subject(const bus *b, const char *leaf, char *out, size_t n);
/* Subscribes to each route's subject (at most 6 in all); every message is
 * counted as received, handed to its taker, counted as refused when it says
 * so (the reason logged once per kind), and released.  0, or -1 with the
 * reason. */
int bus_subscribe(bus *b, const bus_route *routes, int k, char *err, size_t errlen);
/* The NATS client's callback of every subscription: the message counted,
 * handed to its route's taker (the closure), refused or not, released. */
void bus_on_message(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure);
/* Subscribes route r (one of b->room_route, set once) to the subject of
 * leaf, into *out.  0, or -1 with the reason. */
int bus_subscribe_one(bus *b, bus_route *r, const char *leaf, natsSubscription **out, char *err, size_t errlen);

#endif
