/* sim_util.h - small inline helpers every sim file may use: the error
 * sentence, finite checks, clamped floor, sorted-list search, hash noise. */
#ifndef SIM_UTIL_H
#define SIM_UTIL_H

#include <math.h>
#include <stdio.h>

#include "fluid_sim.h"

/* Writes the reason of a refusal into err (when given). */
#define FS_SETERR(err, ...)                                             \
    do {                                                                \
        if (err) snprintf((err)->msg, sizeof (err)->msg, __VA_ARGS__); \
    } while (0)

static inline bool fs__vec_finite(fs_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }

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

/* Sorts J[lo..n) into the sorted J[0..lo) (insertion, short tails), moving
 * each L along with its J. */
static inline void fs__sort_tail(int32_t *J, float *L, int lo, int n) {
    for (int a = lo; a < n; a++) {
        int32_t tj = J[a];
        float tl = L[a];
        int q = a;
        while (q > 0 && J[q - 1] > tj) J[q] = J[q - 1], L[q] = L[q - 1], q--;
        J[q] = tj, L[q] = tl;
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

/* Direction r_ij of a coincident pair (r = 0) of the particles with ids
 * id[i] and id[j]: a pseudo-random unit vector drawn from the two ids (noise
 * streams salt and salt + 1), negated when i and j swap, so the pair still
 * acts along one line with equal and opposite shares. */
static inline void fs__coincident_dir(const uint32_t *id, int i, int j, uint64_t salt, float *dx, float *dy,
                                      float *dz) {
    uint32_t a = id[i], b = id[j];
    float sg = b > a ? 1.0f : -1.0f;
    uint64_t key = b > a ? ((uint64_t)a << 32 | b) : ((uint64_t)b << 32 | a);
    float z = 2.0f * fs__rand01(key, salt) - 1.0f, t = 6.2831853f * fs__rand01(key, salt + 1);
    float r = sqrtf(fmaxf(0.0f, 1.0f - z * z));
    *dx = sg * r * cosf(t), *dy = sg * r * sinf(t), *dz = sg * z;
}

#endif
