/* fleet_state.h - a fleet's directory as /metrics and GET /api/fleet show
 * it: a value the fleet thread publishes to the default room's hub
 * (fleet/), with the directory as a JSON document beside it. */
#ifndef SRV_FLEET_STATE_H
#define SRV_FLEET_STATE_H

#include <stdbool.h>
#include <stdint.h>

/* Threads: built by the fleet thread, copied by the network thread. */
typedef struct fleet_state {
    bool enabled;
    int nodes;                          /* node records heard within the last 3 s, this node's included */
    int rooms;                          /* room keys in the directory */
    int rooms_held;                     /* ... of which this node holds */
    int orphaned;                       /* ... whose revision has not moved for a lease */
    uint64_t claims, claims_failed;     /* this node's claims (a room made, or taken over) */
    uint64_t renewals, renewals_failed; /* this node's lease renewals */
    uint64_t lost;                      /* rooms this node stopped holding (a failed renewal, or its lease ran out) */
    uint64_t refused;                   /* directory values refused as malformed */
    uint64_t saves, saves_failed;       /* snapshots of the rooms it holds written to JetStream */
    uint64_t takeovers;                 /* orphaned rooms this node claimed */
    uint64_t snaps_refused;             /* snapshots read back that did not check (the room started from its scene) */
    bool draining;                      /* this node is asked to move its rooms elsewhere (drain.<id>) */
    uint64_t handed;                    /* rooms this node released at a save for the next holder (a drain, a stop) */
    uint64_t over_budget;               /* rooms it took over past its step budget (no live node had room for them) */
    uint64_t rewatches;                 /* times its watch of the directory fell behind and was made anew */
    uint64_t fences_kept;               /* heartbeat rounds that moved its fences on while the bucket took no write */
} fleet_state;

#endif
