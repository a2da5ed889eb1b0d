/* bus_relay.h - a relay's side of the bus (bus_relay.c). */
#ifndef SRV_BUS_RELAY_H
#define SRV_BUS_RELAY_H

#include <stddef.h>
#include <stdint.h>

#include "bus_link.h"

/* Subscribes to what the sim node publishes. */
int bus_relay_subscribe(bus *b, char *err, size_t errlen);
/* Forwards its clients' messages and its frame wants. */
void bus_relay_pass(bus *b, uint64_t now);

#endif
