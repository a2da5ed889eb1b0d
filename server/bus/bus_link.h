/* bus_link.h - struct bus (the NATS connection, its counters, and what the
 * bus thread has read or told), and publishing on the world's subjects;
 * shared by bus.c, bus_node.c and bus_relay.c. */
#ifndef SRV_BUS_LINK_H
#define SRV_BUS_LINK_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "hub.h"
#include "queue.h"
#include "relay_rate.h"

#define BUS_SUBJECT 160

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
} bus_route;

struct bus {
    const srv_config *cfg;
    hub *hub;
    cmd_queue *queue;
    bool relay;
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
    /* a sim node's rate limits on relays' clients: the cmd.* subscription's
     * callbacks (two may overlap while a resubscription replaces one) */
    pthread_mutex_t rate_mtx;
    relay_rate rate;
    bool rate_on;
    char prefix[96];                   /* fluid.<world> */
    char reply_leaf[24];               /* a relay's subjects: reply.<relay id> (its route's leaf), */
    char cmd_leaf[24], wants_leaf[24]; /* cmd.<relay id> and wants.<relay id> (it publishes on) */
    /* the bus thread's own (node: readers of the hub; relay: what it told) */
    uint64_t frames_next, bcast_next, info_version;
    uint64_t last_info_ns, last_stats_ns, last_wants_ns;
    frame_wants told;
    bool told_any, was_connected;
    bool subscribed; /* every subscription made (the bus thread retries while not) */
};

/* Publishes bytes on fluid.<world>.<leaf> (counted; never blocks). */
void bus_publish(bus *b, const char *leaf, const msg_buf *m);
void bus_subject(const bus *b, const char *leaf, char *out, size_t n);
/* Subscribes to each route's subject (at most 6 in all); every message is
 * counted as received, handed to its taker, counted as refused when it says
 * so (the reason logged once per kind), and released.  0, or -1 with the
 * reason. */
int bus_subscribe(bus *b, const bus_route *routes, int k, char *err, size_t errlen);

#endif
