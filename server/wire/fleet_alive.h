/* fleet_alive.h - a fleet's heartbeats and their acknowledgements on core
 * NATS (docs/fleet.md, "A broker that is a cluster"): a holder publishes on
 * fluid.<fleet>.alive.<id> the rooms it steps, each round numbered; every
 * other node answers on fluid.<fleet>.ack.<holder>.<id> with the round's
 * number, unless it holds one of those rooms itself.  The sender's id is
 * the subject's (the broker's permissions bind it), never the body's.
 *
 * Heartbeat: the round in decimal (1 to 2^63-1), then one room name a line
 * ('\n' after each), at most FLEET_ALIVE_ROOMS names, each by the room-name
 * rule, none twice.  Acknowledgement: the round alone.  Anything else is
 * refused with a reason.
 *
 * Pure; any thread. */
#ifndef SRV_FLEET_ALIVE_H
#define SRV_FLEET_ALIVE_H

#include <stddef.h>
#include <stdint.h>

#include "room_name.h"

#define FLEET_ALIVE_ROOMS 256                                      /* names a heartbeat lists */
#define FLEET_ALIVE_MAX (21 + FLEET_ALIVE_ROOMS * (ROOM_NAME_CAP)) /* bytes of a heartbeat */

typedef struct fleet_alive_msg {
    uint64_t round;
    int nrooms;
    char rooms[FLEET_ALIVE_ROOMS][ROOM_NAME_CAP];
} fleet_alive_msg;

/* The heartbeat's text into out (cap bytes): its length, or -1 when it does
 * not fit (or a name breaks the rule). */
int fleet_alive_write(const fleet_alive_msg *m, char *out, size_t cap);
/* Reads n bytes: 0 and *m, or -1 with err. */
int fleet_alive_read(const void *p, size_t n, fleet_alive_msg *m, char *err, size_t errlen);
/* An acknowledgement's text (cap >= 21): its length. */
int fleet_ack_write(uint64_t round, char *out, size_t cap);
/* Reads one: 0 and *round, or -1 with err. */
int fleet_ack_read(const void *p, size_t n, uint64_t *round, char *err, size_t errlen);

#endif
