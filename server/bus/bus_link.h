/* bus_link.h - struct bus (the NATS connection, its counters, and what the
 * bus thread has read or told), and publishing on the world's subjects;
 * shared by bus.c, bus_node.c and bus_relay.c. */
#ifndef SRV_BUS_LINK_H
#define SRV_BUS_LINK_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "hub.h"
#include "queue.h"

#define BUS_SUBJECT 160

typedef struct bus bus; /* also in bus.h */

struct bus {
    const srv_config *cfg;
    hub *hub;
    cmd_queue *queue;
    bool relay;
    uint32_t relay_id;
    natsOptions *opts;
    natsConnection *nc;
    natsSubscription *sub[6];
    int nsub;
    pthread_t thread;
    bool started;
    atomic_bool stop, connected;
    atomic_ullong published, publish_failed, received, bad, reconnects;
    char prefix[96]; /* fluid.<world> */
    /* the bus thread's own (node: readers of the hub; relay: what it told) */
    uint64_t frames_next, bcast_next, info_version;
    uint64_t last_info_ns, last_stats_ns, last_wants_ns;
    frame_wants told;
    bool told_any, was_connected;
    bool subscribed; /* every subscription made (the bus thread retries while not) */
};

/* Publishes bytes on fluid.<world>.<leaf> (counted; never blocks). */
void bus_publish(bus *b, const char *leaf, const msg_buf *m);
/* A received message's bytes and length (one place for both sides). */
const uint8_t *bus_msg_data(natsMsg *m, size_t *n);
void bus_subject(const bus *b, const char *leaf, char *out, size_t n);

#endif
