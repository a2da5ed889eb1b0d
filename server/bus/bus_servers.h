/* bus_servers.h - a --nats value (one broker's URL, or a comma-separated list
 * of a cluster's servers) given to the NATS client's options. */
#ifndef BUS_SERVERS_H
#define BUS_SERVERS_H

#include <stddef.h>

#include <nats/nats.h>

#define BUS_MAX_SERVERS 8

/* Sets o's server list from list: 0, or -1 with the reason (an empty entry,
 * more than BUS_MAX_SERVERS, or the client's refusal). */
int bus_set_servers(natsOptions *o, const char *list, char *err, size_t errlen);

#endif
