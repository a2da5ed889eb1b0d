/* bus_node.h - a sim node's side of the bus (bus_node.c). */
#ifndef SRV_BUS_NODE_H
#define SRV_BUS_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "bus_link.h"

/* Subscribes to its relays' client messages and frame wants. */
int bus_node_subscribe(bus *b, char *err, size_t errlen);
/* Publishes what the hub holds: framesets, broadcasts, replies to relays'
 * clients, the world's description and statistics. */
void bus_node_pass(bus *b, uint64_t now);

#endif
