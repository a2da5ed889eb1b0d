/* rooms.h - the directory of rooms: a room is one named world, the one handle
 * that owns its hub, its command queue and (on a sim node) its sim thread,
 * with its public role and its folder; the directory finds rooms by name.
 *
 * Threads: the directory is under one mutex.  The main thread creates and
 * destroys it, opens the first rooms and starts and stops their sim threads;
 * the network thread and the bus thread may look rooms up by name
 * (room_find) and open and close them, holding a counted reference while
 * they use one.
 *
 * Lifetime: the directory holds one reference to each room it lists; every
 * room_open and room_find gives its caller one more, dropped with
 * room_unref.  room_close takes a room off the list (its name is free at
 * once) and drops the directory's reference; the room stays whole (its hub,
 * its queue, its sim thread still stepping) while anyone holds a reference.
 * Dropping a reference never waits and never frees: a closed room whose
 * last reference is gone is freed by rooms_reap (which joins its sim thread,
 * and the sim thread saves first, so the caller may wait for a save) or at
 * rooms_destroy.  Closed rooms waiting for the reaper count against
 * max_rooms, so the directory stays bounded.
 *
 * What a room holds that other threads read (its name, folder, hub and
 * queue) is fixed when it is opened and stays valid while a reference is
 * held; its public role may change (atomic). */
#ifndef SRV_ROOMS_H
#define SRV_ROOMS_H

#include <stdbool.h>
#include <stddef.h>

#include "config.h"
#include "fluid_sim.h"
#include "hub.h"
#include "queue.h"
#include "roles.h"
#include "room_name.h"
#include "wire.h"

/* The fewest particles a room is admitted with (rooms.c, admit). */
#define ROOM_MIN_PARTICLES 1000

/* The room that the plain routes (/api/..., /) address (room_name.h). */
#define ROOMS_DEFAULT ROOM_DEFAULT

typedef struct rooms rooms;
typedef struct room room;

/* What every room of a directory shares.  cfg and st outlive the directory. */
typedef struct rooms_def {
    const srv_config *cfg;
    const wire_static *st;
    /* false: a relay's rooms, a hub and a queue each and no sim thread (the
     * bus thread feeds the hub from what it hears) */
    bool simulate;
    /* a sim node with relays: replies to relays' clients go to the bus thread
     * (hub.route_relay_replies), set before any reply */
    bool route_relay_replies;
    int max_rooms;     /* rooms listed, and closed ones not yet reaped */
    int queue_cap;     /* each room's command queue (cmd_queue_init) */
    int queue_reserve; /* of which reserved for client_left (cmd_queue_init) */
    /* the one worker pool every room's sim thread shares: this many threads in
     * all, each calling sim thread counted as one (--threads); 1: each room
     * steps on its sim thread alone */
    int threads;
} rooms_def;

rooms_def rooms_default_def(void);

/* What one room starts with. */
typedef struct room_def {
    const char *name;  /* NUL-terminated; checked with room_name_ok */
    role public_role;  /* what a connection without an invite may do: viewer to owner */
    const char *scene; /* its first scene; NULL: the server's (--scene) */
    int particles;     /* its first scene's size; 0: the server's (--particles) */
    unsigned key_gen;  /* its invites' key generation (a room restored keeps its own) */
    bool restore;      /* opened again from its folder (its saved world), not admitted anew */
    /* a fleet's room: the snapshot its world is restored from (checked as an
     * upload is; one that does not restore leaves the room at its scene,
     * logged), or NULL; and the epoch its frame stream starts at (0: the
     * first).  The caller keeps its reference. */
    const msg_buf *snapshot;
    uint32_t epoch;
} room_def;

room_def room_default_def(void);

typedef enum room_status {
    ROOM_OK = 0,
    ROOM_BAD_NAME,  /* the name breaks ROOM_NAME_RULE, or the role is not one of a room's */
    ROOM_EXISTS,    /* a room of that name is listed */
    ROOM_FULL,      /* max_rooms rooms are listed or wait for the reaper */
    ROOM_NOT_FOUND, /* room_close: no room of that name is listed */
    ROOM_FAILED,    /* out of memory, or its world could not be made (err says why) */
    ROOM_NO_ROOM,   /* its world does not fit what the rooms leave of --step-budget (err says how full) */
} room_status;

/* A directory with no room, and the worker pool its rooms share (main
 * thread).  NULL
 * with a reason in err. */
rooms *rooms_create(const rooms_def *def, char *err, size_t errlen);
/* Frees every room, listed or closed (main thread, after rooms_stop and
 * after every other thread that could hold a reference has ended).  NULL is
 * allowed. */
void rooms_destroy(rooms *d);
/* How each room's hub wakes the network thread: set on the rooms listed and
 * on every room opened after.  Main thread, before any room is started. */
void rooms_set_wake(rooms *d, hub_wake_fn *wake, void *arg);
/* Joins the sim thread of every room, listed or closed (each saves its
 * world first), then clears their hubs' wake: after it no thread of a room
 * calls into the network thread.  Main thread, at shutdown. */
void rooms_stop(rooms *d);

/* Makes a room and lists it: its hub and queue and, when the directory
 * simulates, its sim thread (created with its first world, not started).
 * On ROOM_OK *out holds a reference for the caller; otherwise *out is NULL
 * and err (when not NULL) says why in a sentence.  Its world is made
 * outside the directory's mutex: lookups do not wait for it. */
room_status room_open(rooms *d, const room_def *def, room **out, char *err, size_t errlen);
/* The listed room of that name with a reference for the caller, or NULL. */
room *room_find(rooms *d, const char *name);
/* Takes the room of that name off the list and drops the directory's
 * reference.  ROOM_OK or ROOM_NOT_FOUND. */
room_status room_close(rooms *d, const char *name);
/* Frees the closed rooms that no one holds any more (joining their sim
 * threads); returns how many.  Any thread that may wait for a save. */
int rooms_reap(rooms *d);

/* With --data-dir, opens and starts every room kept in <data-dir>/rooms/
 * (each its room.json and its saved world; a folder whose room.json is
 * missing or bad is left out, with a warning).  Returns how many (main
 * thread, at start, after the default room). */
int rooms_restore(rooms *d);

/* Lets go of the worlds of rooms asleep for --room-evict-s (their sim
 * threads saved and ended: joined here, worlds freed), and makes them again
 * from their saves when someone wants them (a viewer, a queued command, a
 * request).  Returns how many rooms are evicted.  The keeper's thread. */
int rooms_tend(rooms *d);

/* A reference more, for a caller that already holds one. */
void room_ref(room *r);
/* Drops the caller's reference; never waits, never frees.  NULL is allowed. */
void room_unref(room *r);

/* Starts the room's sim thread (a relay's room has none: nothing to do).
 * 0, or -1 when the thread cannot be created.  The thread that opened it. */
int room_start(room *r);

/* A room's parts, valid while the caller holds a reference. */
const char *room_name(const room *r);
/* <data-dir>/rooms/<name>: where the room's saves belong; "" without --data-dir. */
const char *room_folder(const room *r);
hub *room_hub(room *r);
/* The core-ms of each tick the room takes (as the step budget counts it:
 * its measured mean, or what it was admitted with if more; 0 asleep).  Any
 * thread holding a reference. */
double room_cost_ms(room *r);
cmd_queue *room_queue(room *r);
role room_public_role(const room *r);
/* viewer to owner; 0, or -1 for another value. */
int room_set_public_role(room *r, role pr);
/* A relay's room: the role its sim node gives a connection without a
 * credential (admin when the node has no --token); not kept anywhere. */
void room_set_mirror_role(room *r, role pr);
/* Whether r is still listed (room_close takes it off).  Any thread. */
bool room_listed(rooms *d, const room *r);
/* The generation of the key its invites are signed with (invite.h,
 * invite_room_key); rotating moves it on, so every earlier invite of the
 * room stops verifying.  Returns the new generation.  Any thread. */
unsigned room_key_generation(const room *r);
unsigned room_rotate_key(room *r);

/* What the directory's awake rooms take of the machine, as a value. */
typedef struct rooms_load {
    double budget_ms; /* core-milliseconds of each tick its rooms may take: --step-budget of the tick, on each thread */
    double used_ms;   /* ... that the listed awake rooms take (admission's count) */
    int rooms;        /* rooms listed */
    int clients;      /* their viewers, relays' included */
    int cap_rooms;    /* most rooms it lists */
} rooms_load;

/* Any thread. */
void rooms_get_load(rooms *d, rooms_load *out);

/* One listed room, as a value. */
typedef struct room_entry {
    char name[ROOM_NAME_CAP];
    role public_role;
    bool simulated; /* has a sim thread (or had, and was evicted) */
    bool evicted;   /* asleep long enough that its world was freed (rooms_tend) */
    int refs;       /* references held when listed, the directory's included */
} room_entry;

/* The listed rooms in the order they were opened: writes up to cap entries
 * and returns how many rooms are listed. */
int rooms_list(rooms *d, room_entry *out, int cap);

#endif
