/* bus_state.h - the message bus's state as /metrics shows it: a value the
 * bus thread publishes to the hub (bus/). */
#ifndef SRV_BUS_STATE_H
#define SRV_BUS_STATE_H

#include <stdbool.h>
#include <stdint.h>

/* Threads: built by the bus thread, copied by the network thread. */
typedef struct bus_state {
    bool enabled, connected, relay;
    uint64_t published, publish_failed, received, bad, reconnects;
    uint64_t rate_limited; /* a sim node: relays' client messages refused by the rate limits */
    uint64_t unanswered;   /* ... of which refused without a reply (relay_rate_answer) */
    uint64_t shed;         /* a sim node: relays shed for flooding (their subject not read for a while) */
} bus_state;

#endif
