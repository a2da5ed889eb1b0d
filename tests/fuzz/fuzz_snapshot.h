/* fuzz_snapshot.h - the world the snapshot harness restores into, shared by
 * the harness (fuzz_snapshot.c) and the seed generator
 * (gen_snapshot_corpus.c): small, so that each input runs fast; seeds must
 * be made for the same capacity, spring slots and step to get past the
 * header checks.  The worlds hold tens of particles: a scene is loaded at
 * its smallest (100 particles), stepped, then thinned (fuzz_snapshot_thin),
 * so that a document is a few KB and a mutation lands in its structure as
 * often as in its float arrays. */
#ifndef FUZZ_SNAPSHOT_H
#define FUZZ_SNAPSHOT_H

#include "fluid_sim.h"

#define FUZZ_SNAP_CAPACITY 128      /* the world POST /api/snapshot restores into */
#define FUZZ_SNAP_SPRINGS 8         /* spring slots per particle */
#define FUZZ_SNAP_MAX_FILE_CAP 2048 /* save files asking for more are peeked, not built */
#define FUZZ_SNAP_MIN_SCENE 100     /* fs_world_load_scene's smallest count */

static inline fs_world_def fuzz_snapshot_def(int capacity) {
    fs_world_def d = fs_default_world_def();
    d.capacity = capacity;
    d.springs_per_particle = FUZZ_SNAP_SPRINGS;
    d.dt = 1.0f / 60.0f;
    return d;
}

/* Removes particles (in id order, every other one first) until keep remain:
 * springs, bodies, emitters and the solver state stay as the scene made
 * them. */
static inline void fuzz_snapshot_thin(fs_world *w, int keep) {
    for (int pass = 0; pass < 8 && fs_world_particle_count(w) > keep; pass++) {
        fs_particles_view v;
        fs_world_view(w, &v);
        int n = v.count;
        uint32_t ids[FUZZ_SNAP_CAPACITY * 16];
        if (n > (int)(sizeof ids / sizeof ids[0])) n = (int)(sizeof ids / sizeof ids[0]);
        for (int k = 0; k < n; k++) ids[k] = v.id[v.by_id[k]];
        for (int k = pass & 1; k < n && fs_world_particle_count(w) > keep; k += 2) fs_world_remove_particle(w, ids[k]);
    }
}

#endif
