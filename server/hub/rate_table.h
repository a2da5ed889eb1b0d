/* rate_table.h - token buckets found by an id (a relay's client, a relay), in
 * a table of bounded size: an entry whose bucket has refilled is the same as
 * no entry, so a full table forgets those before it refuses a new id. */
#ifndef SRV_RATE_TABLE_H
#define SRV_RATE_TABLE_H

#include <stdbool.h>
#include <stdint.h>

#include "rate.h"

typedef struct rate_slot {
    uint32_t key; /* 0: empty */
    rate_bucket b;
} rate_slot;

/* Open addressing (linear probing) over twice as many slots as entries.
 * Threads: its owner's only. */
typedef struct rate_table {
    rate_slot *slot, *spare; /* spare: the same size, for rate_table_forget_idle */
    uint32_t mask;           /* slots - 1 (a power of two) */
    int count, max;
    double per_s, burst; /* every bucket's */
} rate_table;

/* At most max entries (max >= 1), each a bucket of per_s a second up to
 * burst.  0, or -1 out of memory. */
int rate_table_init(rate_table *t, int max, double per_s, double burst);
void rate_table_free(rate_table *t);
/* The bucket of key (non-zero), made full if new; NULL when the table holds
 * max entries none of which is idle (the caller refuses the newcomer). */
rate_bucket *rate_table_get(rate_table *t, uint32_t key, uint64_t now_ns);
/* Forgets key (its client left); nothing if it is not there. */
void rate_table_drop(rate_table *t, uint32_t key);
/* Forgets every entry whose bucket has refilled by now_ns; how many. */
int rate_table_forget_idle(rate_table *t, uint64_t now_ns);

#endif
