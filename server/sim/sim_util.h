/* sim_util.h - small inline helpers every sim file may use: the error
 * sentence (SETERR), finite checks, clamped floor, sorted-list search and
 * insertion, the first free slot, hash noise.  Knows only fluid_sim.h;
 * helpers that need the world's layout live with their concept
 * (fs__coincident_dir: world_internal.h, fs__neighbours_of: kernels.h,
 * fs__solver_state_new/free and FS_SOLVER_OPS: solver_table.h). */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fluid_sim.h"

/* Fills *err (when given) with a printf-formatted sentence: the reason of a refusal. */
#define SETERR(err, ...)                                                                                               \
    do {                                                                                                               \
        if (err) snprintf((err)->msg, sizeof(err)->msg, __VA_ARGS__);                                                  \
    } while (0)

static inline bool fs__vec_finite(fs_vec3 v) {
    return isfinite(v.x) && isfinite(v.y) && isfinite(v.z);
}

/* floor(v) clamped to [lo, hi], NaN giving lo: a float outside int's range
 * never reaches the conversion (which would be undefined behaviour). */
static inline int fs__floor_clamp(float v, int lo, int hi) {
    if (!(v >= (float)lo)) return lo;
    if (v >= (float)hi) return hi;
    return (int)floorf(v);
}

/* Whether the sorted list J[0..n) holds t (springs, body neighbours). */
static inline bool fs__sorted_has(const int32_t *J, int n, int32_t t) {
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) >> 1;
        if (J[mid] == t) return true;
        if (J[mid] < t)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return false;
}

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

/* slot when it is >= 0, else the first of max records (the first's `used`
 * flag at used0, the next stride bytes on) whose flag is false; max when
 * every one is used. */
static inline int fs__first_free(int slot, const bool *used0, size_t stride, int max) {
    if (slot >= 0) return slot;
    const char *u = (const char *)used0;
    for (slot = 0; slot < max && *(const bool *)(u + (size_t)slot * stride); slot++) {
    }
    return slot;
}

/* deterministic hash-based noise in [0, 1) */
static inline float fs__rand01(uint64_t a, uint64_t b) {
    uint64_t z = a * 0x9E3779B97F4A7C15ull + b + 0x632BE59BD9B4E019ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (float)(z >> 40) * (1.0f / 16777216.0f);
}

#endif
