/* bus.h - the message bus (NATS) between a sim node and its relays: the only
 * code that includes the NATS client.  A sim node (--nats) publishes every
 * frameset, broadcast, the world's description and statistics, and the
 * replies to relays' clients; it takes relays' client messages (checked
 * again here, as a browser's would be) and their frame wants.  A relay
 * (--relay --nats) feeds what it hears into its hub, so its network thread
 * serves viewers exactly as a sim node's does, and forwards its clients'
 * messages.  Every room of the node crosses: subjects
 * fluid.<world>.r.<room>.{frames,bcast,info,stats,obst,omesh},
 * fluid.<world>.rooms and reply.<relay> from the node; cmd.<relay>,
 * wants.<relay> and omesh.<relay> (obstacles' meshes it lacks) from each
 * relay (the node trusts a relay's claims only as far as the subject the
 * broker let it publish on, and never takes a role from it: a forwarded
 * message carries its client's credential).  A lost broker is retried for
 * ever; the world never waits for it.  Threads: one bus thread per node,
 * plus the NATS client's own. */
#ifndef SRV_BUS_H
#define SRV_BUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "rooms.h"
#include "secret.h"

typedef struct bus bus;

/* Counters for /metrics (a value). */
typedef struct bus_stats {
    bool connected;
    uint64_t published, publish_failed, received, bad, reconnects, rate_limited, unanswered, shed;
} bus_stats;

/* Connects (or keeps trying) and starts the bus thread.  dir: the node's
 * rooms, or a relay's (simulate false: the bus makes and closes them as the
 * node's list says), its default room listed; secret: a sim node's, that
 * its rooms' invite keys are made from (copied; NULL on a relay);
 * relay_id: this relay's id (relays only).  NULL with a reason on a bad
 * option. */
bus *bus_create(const srv_config *cfg, rooms *dir, const secret_key *secret, uint32_t relay_id, char *err,
                size_t errlen);
void bus_destroy(bus *b);
void bus_get_stats(bus *b, bus_stats *out);

#endif
