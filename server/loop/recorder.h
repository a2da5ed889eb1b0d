/* recorder.h - a recording: the frame stream written to disk as it is sent
 * (protocol/PROTOCOL.md, "Recordings"), on the encoder thread.  A recording
 * is a folder of segment files (recfile.h), each opening with a `hello`
 * (the world's description) and a keyframe, then every frame as a delta
 * against the one before and the broadcasts in between, and an index.json
 * the browser reads to list and seek.  Its disk use is bounded: the oldest
 * segments are deleted past a size or a duration; all recordings together
 * keep at most the server's budget (--record-total-mb), and they leave the
 * world's saves their room on the disk (a reserve of free space, checked
 * before every frame is written).  Reaching the budget or the reserve, or
 * a write error, stops the recording with the reason (in its index.json,
 * the log and its status), never the world.
 * Threads: the encoder thread only. */
#ifndef SRV_RECORDER_H
#define SRV_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frameset.h"
#include "hub.h"
#include "rec_status.h"
#include "reply_code.h"
#include "wire.h"

#define REC_SEGMENT_FRAMES 150 /* a keyframe every 5 s at 30 frames/s: seeking decodes at most this many */

/* What to record and its bounds.  A value. */
typedef struct rec_request {
    char dir[1024];          /* the recordings folder */
    char name[REC_NAME_MAX]; /* the recording: a folder in dir */
    uint64_t max_bytes;      /* 0: no bound */
    double max_seconds;      /* simulated seconds kept, 0: no bound */
    bool bound_asked;        /* max_bytes is the request's own (not the server's default) */
} rec_request;

/* The recordings' disk: a value the sim thread sets and renews. */
typedef struct rec_limits {
    char dir[1024];   /* the recordings folder */
    double total_mb;  /* --record-total-mb: 0 for the default (rec_disk.h) */
    uint64_t reserve; /* free bytes to leave on the disk: the world's saves need them */
} rec_limits;

typedef struct recorder recorder;

recorder *recorder_create(hub *h, const wire_static *st);
void recorder_destroy(recorder *r);
/* Sets the disk's limits; the first call with a folder measures what its
 * recordings keep and the free space (and so the default budget). */
void recorder_set_limits(recorder *r, const rec_limits *l);
/* Starts (the folder must exist); stops the one before.  Returns RC_OK, or
 * why not with a reason in err: RC_NO_SPACE (the budget or the disk's
 * reserve), RC_BAD_REQUEST (a bound past the budget), RC_INTERNAL (the
 * folder cannot be written). */
reply_code recorder_start(recorder *r, const rec_request *q, char *err, size_t errlen);
/* Stops (closing the segment and the index); why may be NULL. */
void recorder_stop(recorder *r, const char *why);
/* The code of the last recording's own stop: RC_NO_SPACE (the budget or
 * the disk), RC_INTERNAL (a write error), RC_OK (none, or asked for). */
reply_code recorder_stopped_code(const recorder *r);
/* Deletes the files and the folder of the recording last started, once
 * stopped (a start that never wrote a frame). */
void recorder_discard(recorder *r);
bool recorder_active(const recorder *r);
/* Frames the recording last started has written. */
uint64_t recorder_frames(const recorder *r);
/* Whether the next frame must bring a keyframe (a segment starts). */
bool recorder_wants_key(const recorder *r);
/* Writes the broadcasts published since the last frame, then the frame: the
 * coding of fs that follows what was written (a keyframe at a segment
 * start). */
void recorder_frame(recorder *r, const frameset *fs, double sim_time, uint64_t tick);
void recorder_status(const recorder *r, rec_status *out);

#endif
