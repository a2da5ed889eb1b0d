/* encoder.h - the encoder thread: the sim thread hands it a copy of each
 * frame (a value: the particles in id order, cursors, bodies) and goes on
 * stepping; the encoder thread codes it (stream.c) and publishes the
 * frameset to the hub.  The sim thread's cost per frame is the copy.
 * While the encoder still codes the frame before, a new one is skipped
 * (counted), never queued.  The encoder thread also keeps the recording
 * (recorder.c): starts, stops and the disk's limits reach it as values. */
#ifndef SRV_ENCODER_H
#define SRV_ENCODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_codec.h"
#include "hub.h"
#include "recorder.h"
#include "stream.h"
#include "wire.h"

typedef struct encoder encoder;

/* Threads: created and destroyed by the thread that owns the sim thread
 * (before it starts, after it is joined); every other call from the sim
 * thread.  max_cursors: the most cursors a frame carries; frame_bands: how
 * frames split into bands (stream_create). */
encoder *encoder_create(hub *h, const wire_static *st, int max_cursors, int frame_bands, const char *room, char *err,
                        size_t errlen);
void encoder_destroy(encoder *e);
/* Copies the frame for the encoder thread (in->order gives id order).
 * Returns 1 when handed over, 0 when skipped (the encoder is busy), -1
 * with a reason (out of memory; the copy buffers grow only when the world's
 * capacity does, at a scene load). */
int encoder_submit(encoder *e, const wire_frame_head *head, const fc_input *in, int capacity, uint32_t epoch,
                   const fc_grid *grid, char *err, size_t errlen);
/* What the last coded frame cost, and the frames skipped so far. */
void encoder_stats(encoder *e, stream_stats *out, uint64_t *skipped);
/* Whether a client (or the recording) waits for a keyframe the encoder has
 * not coded yet. */
bool encoder_key_wanted(encoder *e);
/* Recording starts and stops reach the encoder thread in their order, at
 * most ENCODER_REC_OPS waiting at once.  A start is done when it has written
 * its first frame (or failed): the ones after it wait until then. */
#define ENCODER_REC_OPS 16
/* Queues a start of q (the folder exists, empty: a start that fails
 * removes it); its serial for encoder_record_outcome, or 0 when
 * ENCODER_REC_OPS are already waiting. */
uint64_t encoder_record_start(encoder *e, const rec_request *q);
/* Queues a stop; false when ENCODER_REC_OPS are already waiting. */
bool encoder_record_stop(encoder *e);
/* The outcome of the start of serial: 0 while under way; 1 when it has
 * written its first frame; -1 when it did not start (*code and why say
 * why; a start stopped before its first frame has deleted what it wrote).
 * An outcome is given once. */
int encoder_record_outcome(encoder *e, uint64_t serial, reply_code *code, char *why, size_t n);
/* Sets the recordings' disk limits (recorder_set_limits), on the encoder
 * thread's next turn. */
void encoder_record_limits(encoder *e, const rec_limits *l);

#endif
