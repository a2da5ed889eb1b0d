/* fuzz_snapshot.h - the world the snapshot harness restores into, shared by
 * the harness (fuzz_snapshot.c) and the seed generator
 * (gen_snapshot_corpus.c): small, so that each input runs fast; seeds must
 * be made for the same capacity, spring slots and step to get past the
 * header checks. */
#ifndef FUZZ_SNAPSHOT_H
#define FUZZ_SNAPSHOT_H

#include "fluid_sim.h"

#define FUZZ_SNAP_CAPACITY 400     /* the world POST /api/snapshot restores into */
#define FUZZ_SNAP_SPRINGS 8        /* spring slots per particle */
#define FUZZ_SNAP_MAX_FILE_CAP 2048 /* save files asking for more are peeked, not built */

static inline fs_world_def fuzz_snapshot_def(int capacity)
{
    fs_world_def d = fs_default_world_def();
    d.capacity = capacity;
    d.springs_per_particle = FUZZ_SNAP_SPRINGS;
    d.dt = 1.0f / 60.0f;
    return d;
}

#endif
