/* frame_history.h - the frames the frame codec's encoder or decoder holds
 * (fc_frame arrays sized by capacity at create): their allocation with the
 * walk's scratch, lookup by number, and a band's view of one (the particles
 * of an id range, PROTOCOL.md "Bands (kind 2)").  Part of an encoder or a
 * decoder: one thread. */
#ifndef SRV_FRAME_HISTORY_H
#define SRV_FRAME_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_codec.h"
#include "frame_walk.h"

/* A zeroed encoder or decoder (size bytes) for capacity particles; NULL when
 * capacity is out of range or memory is short. */
void *fc__codec_alloc(int capacity, size_t size);
/* The working buffers an encoder and a decoder both hold: scratch space and
 * n history frames, each for cap particles.  False when any is missing
 * (what was allocated stays for fc__buffers_free). */
bool fc__buffers_alloc(fc_scratch *s, fc_frame *hist, int n, int cap);
void fc__buffers_free(fc_scratch *s, fc_frame *hist, int n);
/* The history frame with this seq, NULL when none (or seq is FC_NONE). */
const fc_frame *fc__history_find(const fc_frame *hist, int n, uint32_t seq);
void fc__history_clear(fc_frame *hist, int n);
/* The particles of frame f with ids in band i of the split lo[0..k): a view
 * into f's arrays. */
fc_frame fc__band_view(const fc_frame *f, const uint32_t *lo, int k, int i);

#endif
