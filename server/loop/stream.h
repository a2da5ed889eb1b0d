/* stream.h - protocol v2's encoding side: each published frame quantized
 * into the v2 encoder's history and coded once per coding some client can
 * use (a keyframe on request, deltas against the frame 1, 2 or 4 back, a
 * bridge without velocities), in each tier of detail some client takes
 * (frame_tier.h: tier 0 always, the coarser ones on demand), each wrapped as an immutable `frame` message
 * and published to the hub as one frameset.  The network thread picks each
 * client's coding (net/ws.c).  Owned by the thread that encodes. */
#ifndef SRV_STREAM_H
#define SRV_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_codec.h"
#include "frame_tier.h"
#include "hub.h"
#include "wire.h"

typedef struct stream stream;

/* What the last frame cost.  A value. */
typedef struct stream_stats {
    double encode_ms;   /* all its codings */
    size_t delta_bytes; /* its delta against the frame before (0: none coded) */
    size_t key_bytes;   /* its keyframe (0: none coded) */
    int codings;
    uint64_t keyframes;                /* since start */
    size_t tier_delta_bytes[FC_TIERS]; /* each tier's delta against the frame before (0: none coded) */
    int tiers_keyed;                   /* bit t: tier t's keyframe was coded */
} stream_stats;

/* The quantization grid of frames over the box: step = longest side / 2^bits,
 * or with bits 0 the codec's default (fc_default_step); never finer than
 * the uint16 positions allow.  Returns 0, or -1 with a reason. */
int stream_grid(fc_grid *g, const float box_min[3], const float box_max[3], float spacing, int bits, char *err,
                size_t errlen);

/* bands: how the encoder splits each epoch's frames into bands (fc_options.bands: 0 the codec's default,
 * bands past 65536 particles; 1 none; K: K bands). */
stream *stream_create(int bands);
void stream_destroy(stream *st);
/* The hub's key_requests count the stream has answered. */
uint32_t stream_keys_served(const stream *st);
/* Stores frame `in` (in id order through in->order) on `grid` as the next
 * frame of stream `epoch` (a new epoch, or another grid, restarts the
 * stream with a keyframe), codes what the hub's wants ask for, and
 * publishes the frameset.  capacity: the most particles the world holds
 * (the encoder is sized to it; it reallocates only when that grows).
 * Returns 0, or -1 with a reason (out of memory, a frame the codec
 * refuses); nothing is published then. */
/* A reader besides the network thread's clients (the recorder): it counts
 * as a client, may ask for a keyframe, and gets its own references to the
 * frameset (keep: emptied when nothing was published). */
typedef struct stream_reader {
    bool active, want_key;
    frameset *keep;
} stream_reader;
int stream_publish(stream *st, hub *h, const wire_frame_head *head, const fc_input *in, int capacity, uint32_t epoch,
                   const fc_grid *grid, const stream_reader *rd, stream_stats *out, char *err, size_t errlen);

#endif
