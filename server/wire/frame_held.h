/* frame_held.h - which v2 frames a client's decoder holds, mirrored by the
 * server from the payloads it sent that client (protocol/PROTOCOL.md,
 * "Frames, baselines, epochs"): the decoder keeps the last FC_DEC_HISTORY
 * frames it decoded; a keyframe leaves only itself; a delta replaces the
 * least recently decoded frame that is neither its base nor its prev.
 * TCP delivers in order, so the mirror is exact while the client decodes
 * every payload; a client that refuses one asks for a keyframe.
 *
 * A value; threads: whichever thread owns the client (the network thread). */
#ifndef SRV_FRAME_HELD_H
#define SRV_FRAME_HELD_H

#include <stdbool.h>
#include <stdint.h>

#include "frame_codec.h"

typedef struct fc_held {
    bool any; /* holds frames of `epoch` */
    uint32_t epoch;
    uint32_t seq[FC_DEC_HISTORY];
    uint64_t stamp[FC_DEC_HISTORY]; /* 0: empty slot */
    uint64_t clock;
} fc_held;

void fc_held_reset(fc_held *h);
/* Whether the decoder holds frame seq of epoch. */
bool fc_held_has(const fc_held *h, uint32_t epoch, uint32_t seq);
/* Whether a payload (key: base == FC_NONE) would decode: a keyframe always,
 * a delta when its epoch matches and base and prev (unless FC_NONE) are held. */
bool fc_held_can_decode(const fc_held *h, uint32_t epoch, uint32_t base, uint32_t prev);
/* Records that the client decoded this payload (the caller checked it can). */
void fc_held_note(fc_held *h, uint32_t epoch, uint32_t seq, uint32_t base, uint32_t prev);
/* The newest frame held (FC_NONE: none). */
uint32_t fc_held_newest(const fc_held *h);

#endif
