/* bus_options.h - the NATS client's options every connection of this server
 * shares (the bus's and the fleet's): --nats (one broker's URL, or a
 * comma-separated list of a cluster's servers), its credentials, its
 * inboxes' prefix in a fleet, and reconnection for ever, every 250 ms, from
 * the start. */
#ifndef BUS_OPTIONS_H
#define BUS_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>

#include <nats/nats.h>

#include "config.h"

#define BUS_MAX_SERVERS 8

/* Sets o's server list from list: 0, or -1 with the reason (an empty entry,
 * more than BUS_MAX_SERVERS, or the client's refusal). */
int bus_set_servers(natsOptions *o, const char *list, char *err, size_t errlen);

#define BUS_SCOPE_MAX 32

/* In a fleet with a broker user: the user's name, when it is 1 to
 * BUS_SCOPE_MAX of [A-Za-z0-9_-], into out (true).  The server's inboxes
 * are then under it (_INBOX.<user>, and the REST answers' inbox.<user>),
 * so that the broker can let each user read only its own answers
 * (docker/fleet/nats.conf). */
bool bus_user_scope(const srv_config *cfg, char out[BUS_SCOPE_MAX + 1]);

/* Makes *out with cfg's servers and credentials, reconnecting for ever;
 * on_up runs at each connection (the first one too, made in the
 * background if the broker is not up yet), on_down at each loss, both with
 * closure.  0, or -1 with the reason (*out then destroyed and NULL). */
int bus_options_make(natsOptions **out, const srv_config *cfg, natsConnectionHandler on_up,
                     natsConnectionHandler on_down, void *closure, char *err, size_t errlen);

#endif
