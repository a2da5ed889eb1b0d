/* rec_status.h - the state of the recording (loop/recorder.c) as
 * /api/recordings and /metrics show it: a value the encoder thread publishes. */
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
    /* grows whenever a recording's index.json is written (a start, a segment, a stop): the listing
     * of the recordings folder is read again only when it or the folder changed */
    uint64_t generation;
    /* the recordings' disk: the total budget (--record-total-mb, 0: none), the bytes all
     * recordings keep (the running one's included; 0 until the folder was first measured), the
     * free bytes the recordings leave for the world's saves, and the free bytes last seen */
    uint64_t budget_bytes, used_bytes, reserve_bytes, free_bytes;
    /* recordings stopped on their own, by cause, since the server started */
    uint64_t stopped_budget, stopped_disk, stopped_error;
} rec_status;

#endif
