/* bus_rest.h - REST writes through a fleet (docs/fleet.md, "REST through
 * the fleet"), the bus thread's side: a relay or a node that does not hold a
 * room sends the request its network thread put in the default room's hub
 * (http_mail.h) on the room's subject r.<room>.rest (a relay's POST
 * /api/rooms on rooms.new, which one node of the fleet takes), with a reply
 * subject of its own, inbox.<token>.<request id>; the holder hands each such
 * request to its network thread, which runs it through its REST edge, and
 * publishes the answer on the reply subject.  A request that no node reads
 * (a room between holders) comes back as the broker's "no responders". */
#ifndef SRV_BUS_REST_H
#define SRV_BUS_REST_H

#include "bus_link.h"

/* A fleet's subscriptions: the inbox (relays and nodes), rooms.new (nodes,
 * in the queue group "nodes").  0, or -1 with the reason. */
int bus_rest_subscribe(bus *b, char *err, size_t errlen);
/* A node: the room's r.<room>.rest, while it holds the room (br->sub[1]). */
void bus_rest_room_added(bus *b, bus_room *br);
void bus_rest_room_dropped(bus *b, bus_room *br);
/* Each pass: the requests the network thread put out sent, and at most
 * answers of its answers published, the oldest first (a node passes the
 * count it saw before its rooms' subscriptions were brought up to date). */
void bus_rest_pass(bus *b, int answers);

#endif
