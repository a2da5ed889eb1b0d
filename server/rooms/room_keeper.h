/* room_keeper.h - the thread that opens and reaps rooms for the network
 * thread: making a room's world (a scene loaded, perhaps measured against
 * the step budget) and joining a closed room's sim thread (which saves
 * first) take far longer than a frame, and the network thread never waits.
 *
 * The network thread asks for a room (room_keeper_open, a value: the room's
 * definition and a tag of its own) and takes the answers back
 * (room_keeper_take: the tag, the status, the reason, and on success a
 * reference to the room, started).  Between asks it reaps the closed rooms
 * that no one holds any more, at least once a second.
 *
 * Threads: the keeper's own thread; the calls below from the network
 * thread (create and destroy: the main thread). */
#ifndef SRV_ROOM_KEEPER_H
#define SRV_ROOM_KEEPER_H

#include <stdbool.h>
#include <stdint.h>

#include "rooms.h"

#define ROOM_KEEPER_JOBS 4 /* rooms asked for and not yet taken back */

typedef struct room_keeper room_keeper;

/* What became of one room_keeper_open. */
typedef struct room_opened {
    uint64_t tag;
    room_status status;
    char name[ROOM_NAME_CAP]; /* the room asked for */
    room *room;    /* ROOM_OK: a reference for the taker, the sim thread started (NULL: another node holds it) */
    uint32_t node; /* a fleet's room: the node that holds it (0: no fleet) */
    char err[256];
} room_opened;

/* Places a room elsewhere than this directory (a fleet: fleet/), on the
 * keeper's thread, waiting for it to be made: fills out as room_open would
 * (the tag aside), with out->node the node that holds it, and out->room a
 * reference when that is this node. */
typedef void room_place_fn(void *ctx, const room_def *def, room_opened *out);

/* Starts the thread at nice value nice (Linux: per thread; the running
 * rooms' ticks come first); wake(arg) is called after each answer
 * (net_wake).  NULL with a reason in err. */
room_keeper *room_keeper_create(rooms *d, void (*wake)(void *), void *arg, int nice, char *err, size_t errlen);
/* Stops and joins the thread, dropping answers not taken (main thread, at
 * shutdown, before rooms_stop).  NULL is allowed. */
void room_keeper_destroy(room_keeper *k);
/* Every ask from now on goes to place(ctx, ...) instead of room_open (main
 * thread, before any ask). */
void room_keeper_set_placer(room_keeper *k, room_place_fn *place, void *ctx);
/* Asks for a room; false when ROOM_KEEPER_JOBS are asked and not taken. */
bool room_keeper_open(room_keeper *k, const room_def *def, uint64_t tag);
/* Takes up to cap answers; returns how many. */
int room_keeper_take(room_keeper *k, room_opened *out, int cap);
/* Asks for a reap soon (a room was closed). */
void room_keeper_poke(room_keeper *k);

#endif
