/* frameset.h - one published frame of protocol v2 in every coding the
 * clients need: a keyframe and deltas against different baselines, each an
 * encoded, immutable `frame` message (wire.c) that every client holding
 * that baseline is sent unchanged.  The network thread picks, per client,
 * the coding its decoder can use (frame_held.h). */
#ifndef SRV_FRAMESET_H
#define SRV_FRAMESET_H

#include <stdbool.h>
#include <stdint.h>

#include "msgbuf.h"

#define FRAME_TIERS 3        /* tiers of detail (wire/frame_tier.h: FC_TIERS) */
#define FRAME_BASES_MAX 4    /* frames of one tier that clients asked a delta against, without velocities */
#define FRAMESET_TIER_MAX 10 /* codings of a frame in a tier: a keyframe, up to 5 deltas, the bases asked for */
#define FRAMESET_MAX (FRAMESET_TIER_MAX * FRAME_TIERS)

/* One coding: a keyframe (base == 0xffffffff) or a delta against `base`
 * with velocities from `prev` (0xffffffff: none), of tier `tier` (0: the
 * full world; frame_tier.h). */
typedef struct frame_coding {
    uint32_t base, prev;
    msg_buf *msg; /* one reference */
    int tier;
} frame_coding;

/* A value holding references.  Threads: built by the encoding thread, then
 * read-only; the hub and the network thread each hold their own references. */
typedef struct frameset {
    uint32_t epoch, seq;
    uint64_t tick;
    int n;     /* particles */
    int count; /* codings */
    frame_coding coding[FRAMESET_MAX];
} frameset;

/* What the network thread asks the encoder for, a value it republishes
 * whenever it changes: whether anyone watches, keyframes (a counter: every
 * request is served by the next frame), and the optional codings. */
typedef struct frame_tier_wants {
    int clients;           /* clients taking this tier */
    uint32_t key_requests; /* grows by one per request */
    bool stride2, stride4, bridge;
    /* frames clients hold without the one before (a keyframe, or a frame
     * they jumped to): each next frame is coded against each of them too,
     * without velocities, while the encoder still holds it */
    uint32_t bases[FRAME_BASES_MAX];
    int nbases;
} frame_tier_wants;
typedef struct frame_wants {
    int clients;           /* connected stream clients; 0: frames are stored, not coded */
    uint32_t key_requests; /* grows by one per request */
    bool stride2, stride4; /* deltas against the frame 2 (4) back, for clients taking every 2nd (4th) */
    bool bridge;           /* a delta against the frame before without velocities */
    /* as frame_tier_wants' (this network thread's clients only) */
    uint32_t bases[FRAME_BASES_MAX];
    int nbases;
    /* The same for the coarser tiers (coarse[t - 1]: tier t); clients counts
     * those among `clients` that take tier t (the fields above are tier 0's;
     * a relay's wants name no bases). */
    frame_tier_wants coarse[FRAME_TIERS - 1];
} frame_wants;

/* Adds a reference to every coding (a copy that the caller owns). */
frameset frameset_ref(const frameset *f);
/* Drops the references and empties *f. */
void frameset_unref(frameset *f);

#endif
