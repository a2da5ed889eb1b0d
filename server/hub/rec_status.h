/* rec_status.h - the state of the recording (loop/recorder.c) as
 * /api/recordings shows it: a value the encoder thread publishes. */
#ifndef SRV_REC_STATUS_H
#define SRV_REC_STATUS_H

#include <stdbool.h>
#include <stdint.h>

#define REC_NAME_MAX 32

/* Threads: built by the encoder thread, copied by the network thread. */
typedef struct rec_status {
    bool active;
    char name[REC_NAME_MAX];
    uint64_t bytes, frames, segments, segments_dropped;
    double seconds;    /* simulated seconds kept */
    char stopped[160]; /* why it stopped, "" while it runs or after a requested stop */
} rec_status;

#endif
