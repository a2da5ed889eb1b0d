/* fleet.h - a sim node of a fleet (--fleet NAME --node-id ID --nats URL):
 * the fleet's directory in the broker's JetStream key-value bucket
 * fluid_<fleet> (docs/fleet.md).  The fleet thread owns its own NATS
 * connection, its JetStream context, the bucket and a watch on every key of
 * it: it puts this node's record (node.<id>: its load) every second, places
 * the rooms POST /api/rooms asks for on the node with the most free budget
 * (room.<name>, created by compare-and-set), makes and claims the rooms
 * placed on this node, renews their claims every lease/3 and fences their
 * sim threads (hub_fence) at the lease's end less a margin, so that a node
 * frozen or cut off stops stepping before any other may claim the room; a
 * renewal that fails closes the room here without saving.  Each held room's
 * snapshot goes to the stream FLUID_<fleet>_SNAP every --fleet-save-s and at
 * stop, named in its key; a room whose claim is not renewed for a lease is
 * claimed by another node and made there from its snapshot.  A node
 * drained (POST /api/fleet/nodes/{id}/drain: the key drain.<id>), and a
 * node that stops, parks each room it holds at a tick boundary with a last
 * save and releases it for another node to step on from that tick
 * (fleet_drain.c).  The directory
 * as it sees it goes to the default room's hub (GET /api/fleet, /metrics).
 * Every value read from the bucket is checked (fleet_doc.h).  On a relay
 * (--relay --fleet) the fleet thread only reads the bucket: it keeps the
 * relay's mirrors of the fleet's rooms and tells their viewers when a room
 * moves (fleet_mirror.c); it makes no room, writes no key.
 *
 * Threads: the fleet thread, the maker's (fleet_maker.h), the NATS client's
 * own; fleet_place from the rooms' keeper thread; create and destroy from
 * the main thread. */
#ifndef SRV_FLEET_H
#define SRV_FLEET_H

#include <stddef.h>

#include "config.h"
#include "room_keeper.h"
#include "rooms.h"

typedef struct fleet fleet;

/* Connects (or keeps trying) and starts the fleet thread.  home: the
 * default room's hub (the directory's view goes there); url: where this
 * node's REST API is (its record says it).  NULL with a reason. */
fleet *fleet_create(const srv_config *cfg, rooms *dir, hub *home, const char *url, char *err, size_t errlen);
/* Stops and joins its threads (main thread, before rooms_stop); the rooms it
 * holds stay listed (their claims lapse).  NULL is allowed. */
void fleet_destroy(fleet *f);
/* room_place_fn (room_keeper_set_placer, ctx: the fleet): places the room
 * on the node with the most free budget and waits (at most about 5 s) for
 * that node's claim. */
void fleet_place(void *ctx, const room_def *def, room_opened *out);

#endif
