/* sim_util.h - small helpers the core's files share: SETERR, a solver's
 * state and operations table, the neighbours of a particle from the kept
 * lists, the keyed insertion sort of a list's appended tail and the
 * direction of a coincident pair.  Internal to server/sim. */
#ifndef FS_SIM_UTIL_H
#define FS_SIM_UTIL_H

#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

/* Fills *err (when given) with a printf-formatted sentence. */
#define SETERR(err, ...)                                                \
    do {                                                                \
        if (err) snprintf((err)->msg, sizeof (err)->msg, __VA_ARGS__); \
    } while (0)

/* Insertion sort of key[from .. n) into the ascending key[0 .. from),
 * carrying val along (elements of `size` bytes, at most 8): short lists
 * whose head is already sorted. */
static inline void fs__sort_keyed(int32_t *key, void *val, size_t size, int from, int n) {
    unsigned char *v = val, tv[8];
    for (int a = from; a < n; a++) {
        const int32_t tk = key[a];
        memcpy(tv, v + (size_t)a * size, size);
        int q = a;
        for (; q > 0 && key[q - 1] > tk; q--) {
            key[q] = key[q - 1];
            memcpy(v + (size_t)q * size, v + (size_t)(q - 1) * size, size);
        }
        key[q] = tk;
        memcpy(v + (size_t)q * size, tv, size);
    }
}

/* Direction r_ij of a coincident pair (r = 0): a pseudo-random unit vector
 * drawn from the pair's ids (random streams `stream` and `stream` + 1),
 * negated when i and j swap, so the pair still acts along one line with
 * equal and opposite shares. */
static inline void fs__coincident_dir(const fs_particles *p, int i, int j, uint64_t stream, float *dx, float *dy,
                                      float *dz) {
    uint32_t a = p->id[i], b = p->id[j];
    float sg = b > a ? 1.0f : -1.0f;
    uint64_t key = b > a ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    float z = 2.0f * fs__rand01(key, stream) - 1.0f, t = 6.2831853f * fs__rand01(key, stream + 1);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    *dx = sg * r * cosf(t), *dy = sg * r * sinf(t), *dz = sg * z;
}

/* A solver's zeroed state of `size` bytes, set behind w->solver_state
 * (NULL there and returned when out of memory). */
static inline void *fs__solver_state_new(fs_world *w, size_t size) {
    w->solver_state = calloc(1, size);
    return w->solver_state;
}

/* Frees the state behind w->solver_state (its arrays freed already). */
static inline void fs__solver_state_free(fs_world *w) {
    free(w->solver_state);
    w->solver_state = NULL;
}

/* The neighbours of particle i within sqrt(h2) at the positions now: the
 * list the density pass kept (w->nb), or, where it overflowed (nb_n < 0),
 * a fresh scan into the worker's scratch.  Returns their count, the list
 * in *list. */
static inline int fs__neighbours_of(const fs_world *w, int i, float h2, fs_ranges *r, const fs_scratch *sc,
                                    const int32_t **list) {
    int n = w->nb_n[i];
    *list = w->nb + (size_t)i * FS_NB_MAX;
    if (n < 0) {
        fs__ranges_of(w, w->cell[i], r);
        n = fs__scan(w->p.x, w->p.y, w->p.z, r, i, h2, false, sc->j, sc->r2, NULL, NULL, NULL);
        *list = sc->j;
    }
    return n;
}

/* A solver's operations table (sim_internal.h) from its functions
 * PREFIX_attach, PREFIX_detach, PREFIX_prepare, PREFIX_step,
 * PREFIX_removed, PREFIX_state_write and PREFIX_state_read. */
#define FS_SOLVER_OPS(prefix, name_, doc_)                                                                   \
    {                                                                                                        \
        .name = name_, .doc = doc_, .attach = prefix##_attach, .detach = prefix##_detach,                   \
        .prepare = prefix##_prepare, .step = prefix##_step, .removed = prefix##_removed,                     \
        .state_write = prefix##_state_write, .state_read = prefix##_state_read,                              \
    }

#endif
