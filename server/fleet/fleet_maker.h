/* fleet_maker.h - the thread that makes a fleet's rooms on this node: a room
 * placed here is opened and measured against the step budget, which takes
 * far longer than the fleet thread may wait between renewals; a room taken
 * over is opened from its snapshot (not measured: it is the world to
 * resume, not a scene to size; the taker weighed its cost, its key's ms,
 * against its own budget before claiming it).  Each room is
 * made fenced (hub_fence in the past): its sim thread starts but steps
 * nothing until its claim succeeds.  Its frame stream's epoch is its claim
 * times 65536, so that a room's viewers, whichever node holds it, see a new
 * epoch (a keyframe) at each change of holder.
 *
 * Threads: its own; ask, take, create and destroy from the fleet thread
 * (create and destroy: the main thread). */
#ifndef SRV_FLEET_MAKER_H
#define SRV_FLEET_MAKER_H

#include <stdbool.h>
#include <stddef.h>

#include "fleet_doc.h"
#include "job_thread.h"
#include "rooms.h"

#define FLEET_MAKER_JOBS 8 /* asked and not yet taken back */

typedef job_thread fleet_maker; /* its jobs and answers are the types below */

/* One room to make: its name and its claim's settings; a room taken over
 * also its claim and its snapshot. */
typedef struct fleet_make {
    char name[ROOM_NAME_CAP];
    fleet_room_rec rec;
    uint64_t claim; /* 0: placed here (claimed once made); else the claim this node took it over with */
    msg_buf *snap;  /* its snapshot (one reference, which the maker drops), or NULL: from its scene */
} fleet_make;

/* What became of it. */
typedef struct fleet_made {
    char name[ROOM_NAME_CAP];
    uint64_t claim; /* the job's */
    room_status status;
    room *room; /* ROOM_OK: a reference, its sim thread started, fenced */
    char err[256];
} fleet_made;

/* Starts the thread at nice value nice.  NULL with a reason. */
fleet_maker *fleet_maker_create(rooms *d, int nice, char *err, size_t errlen);
/* Joins it, closing the rooms made and not taken back.  NULL is allowed. */
static inline void fleet_maker_destroy(fleet_maker *m) {
    job_thread_destroy(m);
}
/* false when FLEET_MAKER_JOBS are asked and not taken. */
static inline bool fleet_maker_ask(fleet_maker *m, const fleet_make *job) {
    return job_thread_ask(m, job);
}
/* Whether an ask would be refused now. */
static inline bool fleet_maker_full(fleet_maker *m) {
    return job_thread_full(m);
}
/* Takes up to cap answers; returns how many. */
static inline int fleet_maker_take(fleet_maker *m, fleet_made *out, int cap) {
    return job_thread_take(m, out, cap);
}

#endif
