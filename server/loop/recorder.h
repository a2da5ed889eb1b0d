/* recorder.h - a recording: the frame stream written to disk as it is sent
 * (protocol/PROTOCOL.md, "Recordings"), on the encoder thread.  A recording
 * is a folder of segment files (recfile.h), each opening with a `hello`
 * (the world's description) and a keyframe, then every frame as a delta
 * against the one before and the broadcasts in between, and an index.json
 * the browser reads to list and seek.  Its disk use is bounded: the oldest
 * segments are deleted past a size or a duration; a write error (a full
 * disk) stops the recording with the reason, never the world.
 * Threads: the encoder thread only. */
#ifndef SRV_RECORDER_H
#define SRV_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frameset.h"
#include "hub.h"
#include "rec_status.h"
#include "wire.h"

#define REC_SEGMENT_FRAMES 150 /* a keyframe every 5 s at 30 frames/s: seeking decodes at most this many */

/* What to record and its bounds.  A value. */
typedef struct rec_request {
    char dir[1024];          /* the recordings folder */
    char name[REC_NAME_MAX]; /* the recording: a folder in dir */
    uint64_t max_bytes;      /* 0: no bound */
    double max_seconds;      /* simulated seconds kept, 0: no bound */
} rec_request;

typedef struct recorder recorder;

recorder *recorder_create(hub *h, const wire_static *st);
void recorder_destroy(recorder *r);
/* Starts (the folder must exist); stops the one before.  Returns 0, or -1
 * with a reason. */
int recorder_start(recorder *r, const rec_request *q, char *err, size_t errlen);
/* Stops (closing the segment and the index); why may be NULL. */
void recorder_stop(recorder *r, const char *why);
bool recorder_active(const recorder *r);
/* Whether the next frame must bring a keyframe (a segment starts). */
bool recorder_wants_key(const recorder *r);
/* Writes the broadcasts published since the last frame, then the frame: the
 * coding of fs that follows what was written (a keyframe at a segment
 * start). */
void recorder_frame(recorder *r, const frameset *fs, double sim_time, uint64_t tick);
void recorder_status(const recorder *r, rec_status *out);

#endif
