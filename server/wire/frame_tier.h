/* frame_tier.h - tiers of detail of the frame stream (protocol/PROTOCOL.md,
 * "Tiers of detail"): tier 0 is every particle on the stream's grid; tier t
 * a deterministic subset, 1 in `keep` particles chosen by a hash of the id
 * (so a particle stays in it from frame to frame and its deltas stay small;
 * each tier's subset lies within the finer tier's), on a grid `step_mult`
 * times coarser with the same origin.  A tier's frames are ordinary v2
 * payloads: the decoder needs nothing new.  Pure functions on values. */
#ifndef SRV_FRAME_TIER_H
#define SRV_FRAME_TIER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_codec.h"

#define FC_TIERS 3 /* tier 0 (the full world) and two coarser ones */

typedef struct fc_tier {
    int keep;      /* 1 in keep particles (a power of two) */
    int step_mult; /* the grid's step is this many times the full one */
} fc_tier;

/* The tiers' parameters, index = tier (tier 0: {1, 1}). */
fc_tier fc_tier_of(int tier);
/* Whether particle id belongs to the subset of tier (every id belongs to tier 0). */
bool fc_tier_has(int tier, uint32_t id);
/* The tier's grid from the full one: the same origin, step * step_mult, as
 * many levels as cover the same span. */
fc_grid fc_tier_grid(const fc_grid *full, int tier);
/* Writes the indices (into id[]) of tier's subset to out, in id order (the
 * k-th particle in id order is id[order[k]], or id[k] when order is NULL, as
 * in fc_input); returns their count (at most n).  out holds n entries (those
 * past the count are scratch). */
int fc_tier_subset(int tier, const uint32_t *id, const int32_t *order, int n, int32_t *out);
/* The options of a tier's encoder for a frame of the full world of
 * full_count particles, from the full world's options o: joint symbols
 * whenever the full world's frame takes them (o.joint FC_JOINT_AUTO and at
 * least FC_JOINT_MIN particles), whatever the tier's own count.  A coarser
 * grid leaves more residuals in [-2, 2], so a tier's payload is smaller
 * with them, and its encoder and decoders faster (docs/wire-v2.md, "Tiers of
 * detail"). */
fc_options fc_tier_options(fc_options o, int full_count);

#endif
