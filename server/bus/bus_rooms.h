/* bus_rooms.h - the rooms the bus thread follows (bus_link.h, b->room): the
 * directory's list mirrored into a table, a counted reference held on each
 * room while it is listed.  Bus thread only. */
#ifndef SRV_BUS_ROOMS_H
#define SRV_BUS_ROOMS_H

#include <stdbool.h>

#include "bus_link.h"

/* What the caller does with a room joining or leaving the table. */
typedef void bus_room_fn(bus *b, bus_room *br);

/* Brings the table in line with the directory: a room newly listed is added
 * (a reference taken, on_add called), one no longer listed is dropped
 * (on_drop called, then its reference dropped).  Returns whether the set of
 * rooms changed.  Either callback may be NULL. */
bool bus_rooms_refresh(bus *b, bus_room_fn *on_add, bus_room_fn *on_drop);
/* Drops every room (on_drop called on each): at the bus's end. */
void bus_rooms_clear(bus *b, bus_room_fn *on_drop);

#endif
