/* bus_cmdsub.h - a sim node's subscriptions to one command subject
 * (fluid.<world>.cmd.*, or in a fleet a room's r.<room>.cmd.*): the
 * wildcard while no relay is shed, and while one is, one subscription per
 * relay to read (relay_rate_readable), so that the broker drops a shed
 * relay's messages instead of delivering them.  Every one of them is in one
 * queue group of this connection: while the wildcard and a relay's own
 * overlap (one is made before the other is let go of), the broker hands
 * each message to one of them, and one let go of is drained (its messages
 * already here are still taken), so a switch neither loses nor doubles one.
 * Threads: the bus thread only. */
#ifndef SRV_BUS_CMDSUB_H
#define SRV_BUS_CMDSUB_H

#include <nats/nats.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUS_CMD_RELAYS 16                         /* relays read by name while another is shed */
#define BUS_CMD_DRAINING (2 * BUS_CMD_RELAYS + 2) /* subscriptions let go of and still draining */

typedef struct bus_cmdsub {
    char base[160]; /* the subject without its last token: fluid.<world>.cmd, fluid.<fleet>.r.<room>.cmd */
    char queue[32]; /* this connection's queue group */
    natsConnection *nc;
    natsMsgHandler on_message;
    void *closure;
    natsSubscription *wild;
    natsSubscription *one[BUS_CMD_RELAYS];
    uint32_t relay[BUS_CMD_RELAYS];
    int n;
    natsSubscription *draining[BUS_CMD_DRAINING]; /* let go of at a switch: their pending messages still taken */
    int ndraining;
} bus_cmdsub;

/* Subscribes on_message(closure) to base.* on nc: 0, or -1 with the reason
 * (nothing subscribed).  The closure outlives every subscription. */
int bus_cmdsub_open(bus_cmdsub *s, natsConnection *nc, const char *base, natsMsgHandler on_message, void *closure,
                    char *err, size_t errlen);
/* To the relays to read: with shedding false the wildcard (every relay),
 * else relay[0..k) by name (more than BUS_CMD_RELAYS of them: the wildcard,
 * the shed relay's messages then refused as they come).  New subscriptions
 * are made first, then the old ones let go of (drained).  A subscription
 * the client refuses is logged once and tried at the next call. */
void bus_cmdsub_update(bus_cmdsub *s, bool shedding, const uint32_t *relay, int k);
/* Drops every subscription at once (pending messages with them). */
void bus_cmdsub_close(bus_cmdsub *s);

#endif
