/* bus_node.h - a sim node's side of the bus (bus_node.c). */
#ifndef SRV_BUS_NODE_H
#define SRV_BUS_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "bus_link.h"

/* Subscribes to its relays' client messages and frame wants (every room's). */
int bus_node_subscribe(bus *b, char *err, size_t errlen);
/* Publishes what the rooms' hubs hold: framesets, broadcasts, replies to
 * relays' clients, each room's description and statistics, and the list of
 * rooms. */
void bus_node_pass(bus *b, uint64_t now);
/* Drops the rooms it follows (the bus thread has ended). */
void bus_node_end(bus *b);

#endif
