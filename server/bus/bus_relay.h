/* bus_relay.h - a relay's side of the bus (bus_relay.c). */
#ifndef SRV_BUS_RELAY_H
#define SRV_BUS_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "bus_link.h"

/* Subscribes to the sim node's list of rooms and to its replies (a room's
 * stream is subscribed to by bus_relay_pass, while the room has viewers). */
int bus_relay_subscribe(bus *b, char *err, size_t errlen);
/* Forwards its clients' messages and each room's frame wants, and follows
 * the streams of the rooms its viewers watch. */
void bus_relay_pass(bus *b, uint64_t now);
/* Unsubscribes and drops the rooms it follows (the bus thread has ended). */
void bus_relay_end(bus *b);

#endif
