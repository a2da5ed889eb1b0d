/* lease.h - the lease rule of a fleet's room claims (docs/fleet.md, "Claims
 * and leases"), pure: no broker, no clock of its own.  Every instant is
 * passed in, in nanoseconds of the caller's monotonic clock; a node never
 * compares an instant of its own with one another node wrote.
 *
 * - A watcher notes, on its own clock, when each key's revision last moved
 *   (lease_seen); a room whose revision has not moved for one lease is
 *   orphaned (lease_orphaned).
 * - The holder steps a room only before its fence: the instant it sent the
 *   last renewal that succeeded, plus the lease, less a margin
 *   (lease_fence).  Any other node sees that renewal's revision after it was
 *   sent, so it calls the room orphaned no earlier than a margin after the
 *   holder stopped stepping it.
 * - Every live node tries to take an orphan over after a delay of its rank
 *   (most free budget first) times a step (lease_takeover_at), so that the
 *   node best placed to hold it usually tries first.
 * - While the bucket takes no write (its stream has no leader: an election
 *   takes 4-9 s), a holder's fence moves on only through its heartbeats
 *   (fleet_alive.h): after a round that every other node live before the
 *   outage acknowledged, to the round's sending plus alive_keep_ns
 *   (lease_alive_fence); a node claims an orphan only once it has heard no
 *   heartbeat listing it for alive_quiet_ns (lease_heard), longer than that,
 *   so that a holder fenced by a round stops before the claim. */
#ifndef SRV_LEASE_H
#define SRV_LEASE_H

#include <stdbool.h>
#include <stdint.h>

typedef struct lease_rule {
    uint64_t lease_ns;       /* how long a claim lasts without a renewal */
    uint64_t margin_ns;      /* how much earlier than that the holder stops stepping */
    uint64_t rank_step_ns;   /* a takeover's delay per rank */
    uint64_t alive_every_ns; /* a holder's heartbeats' period */
    uint64_t alive_keep_ns;  /* how far past a round's sending its acknowledgement moves the fence */
    uint64_t alive_quiet_ns; /* how long without a heartbeat listing a room before it may be claimed */
} lease_rule;

/* 3 s, 0.5 s, 150 ms; heartbeats every 0.5 s, kept 2 s, quiet 2.5 s. */
lease_rule lease_default_rule(void);
/* How often a holder renews its claims: a third of the lease. */
uint64_t lease_renew_every(const lease_rule *r);

/* One key as a node watches it.  Threads: its owner's. */
typedef struct lease_watch {
    uint64_t revision; /* the last revision seen (0: none yet) */
    uint64_t moved_ns; /* when it last changed, on the watcher's clock */
} lease_watch;

/* Notes that the key is at revision (seen at now): the instant moves only
 * when the revision does. */
void lease_seen(lease_watch *w, uint64_t revision, uint64_t now);
/* Whether the key's revision has stood still for a lease (not before it
 * was seen at all). */
bool lease_orphaned(const lease_watch *w, const lease_rule *r, uint64_t now);
/* How long the key's revision has stood still (0 before it was seen). */
uint64_t lease_age(const lease_watch *w, uint64_t now);

/* The holder's fence after a renewal sent at sent_ns succeeded. */
uint64_t lease_fence(const lease_rule *r, uint64_t sent_ns);
/* Whether the holder may step (and renew) at now: before its fence. */
bool lease_may_step(uint64_t fence_ns, uint64_t now);

/* The fence after a round sent at sent_ns that every node acknowledged. */
uint64_t lease_alive_fence(const lease_rule *r, uint64_t sent_ns);
/* Whether a heartbeat heard at heard_ns (0: none) still holds a room's
 * claim off at now. */
bool lease_heard(const lease_rule *r, uint64_t heard_ns, uint64_t now);

/* A node's rank among n others for a takeover: how many of them have more
 * free budget, or as much and a lower id (0: it goes first). */
int lease_rank(double my_free, uint32_t my_id, const double *free, const uint32_t *id, int n);
/* When a node of that rank tries to claim an orphan. */
uint64_t lease_takeover_at(const lease_watch *w, const lease_rule *r, int rank);
/* ... and a room its holder released (a drain, a stop: its key names no
 * node): no lease to wait for, only the rank's delay after the release. */
uint64_t lease_released_take_at(const lease_watch *w, const lease_rule *r, int rank);

#endif
