/* kernels.c - the neighbour scan (Sec. 7.1), the innermost loop of every
 * pairwise stage: 27 cells, ~9 (h/s)^3 candidates of which ~15% lie within
 * h.  The AVX2 version tests 8 candidates at once and left-packs the hits
 * with one permute (a 256-entry table); the scalar version does the same
 * branch-free.  Both compute |r|^2 as ((dx*dx + dy*dy) + dz*dz) without
 * fused multiply-add, so the result, and hence the neighbour sets, are the
 * same bits on either path and symmetric in (i, j). */
#include <pthread.h>
#include <string.h>

#include "kernels.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define HAVE_AVX2_PATH 1
#endif

/* One index range [b, e) of a scan: appends at n the candidates j != self
 * within h2 of (xi, yi, zi), branch-free; returns the new count. */
static inline int range_scalar(const float *X, const float *Y, const float *Z, int b, int e, float xi, float yi,
                               float zi, float h2, int self, bool d, int32_t *oj, float *or2, float *odx, float *ody,
                               float *odz, int n) {
    for (int j = b; j < e; j++) {
        float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
        float r2 = dx * dx + dy * dy + dz * dz;
        oj[n] = j, or2[n] = r2;
        if (d) odx[n] = dx, ody[n] = dy, odz[n] = dz;
        n += (r2 < h2) & (j != self);
    }
    return n;
}

static int scan_scalar(const float *X, const float *Y, const float *Z, const fs_ranges *r, int i, float h2, bool d,
                       int32_t *oj, float *or2, float *odx, float *ody, float *odz) {
    const float xi = X[i], yi = Y[i], zi = Z[i];
    int n = 0;
    for (int k = 0; k < r->n; k++)
        n = range_scalar(X, Y, Z, r->b[k], r->e[k], xi, yi, zi, h2, i, d, oj, or2, odx, ody, odz, n);
    return n;
}

static int scan_point_scalar(const float *X, const float *Y, const float *Z, const int32_t *b, const int32_t *e, int nr,
                             float xi, float yi, float zi, float h2, int32_t *oj, float *or2) {
    int n = 0;
    for (int k = 0; k < nr; k++)
        n = range_scalar(X, Y, Z, b[k], e[k], xi, yi, zi, h2, -1, false, oj, or2, NULL, NULL, NULL, n);
    return n;
}

static int pack_lt_scalar(const int32_t *J, const float *R2, int n, float lim, int32_t *oj, float *or2) {
    int m = 0;
    for (int k = 0; k < n; k++) oj[m] = J[k], or2[m] = R2[k], m += R2[k] < lim;
    return m;
}

#ifdef HAVE_AVX2_PATH
/* written once, under pthread_once, before any scan */
static int32_t lut[256][8] __attribute__((aligned(32)));

/* One index range [b, e) of a scan, 8 candidates at a time: appends at n
 * those j != self within h2 of (x, y, z) (broadcast in vx, vy, vz), packed
 * with one permute; returns the new count.  Inlined with d constant, so
 * each copy keeps only the stores it needs. */
__attribute__((target("avx2,popcnt"), always_inline)) static inline int
range_avx2(const float *X, const float *Y, const float *Z, int b, int e, __m256 vx, __m256 vy, __m256 vz, __m256 vh2,
           __m256i vself, const bool d, int32_t *oj, float *or2, float *odx, float *ody, float *odz, int n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), ve = _mm256_set1_epi32(e);
    /* whole vectors; lanes past the range's end are masked by index (the
     * position arrays are padded, so reading past the last one is safe) */
    for (int j = b; j < e; j += 8) {
        __m256 dx = _mm256_sub_ps(_mm256_loadu_ps(X + j), vx);
        __m256 dy = _mm256_sub_ps(_mm256_loadu_ps(Y + j), vy);
        __m256 dz = _mm256_sub_ps(_mm256_loadu_ps(Z + j), vz);
        __m256 r2 = _mm256_add_ps(_mm256_add_ps(_mm256_mul_ps(dx, dx), _mm256_mul_ps(dy, dy)), _mm256_mul_ps(dz, dz));
        __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(j), lane);
        __m256 in = _mm256_and_ps(_mm256_cmp_ps(r2, vh2, _CMP_LT_OQ), _mm256_castsi256_ps(_mm256_cmpgt_epi32(ve, idx)));
        __m256 self = _mm256_castsi256_ps(_mm256_cmpeq_epi32(idx, vself));
        int mask = _mm256_movemask_ps(_mm256_andnot_ps(self, in));
        /* no branch on the mask: an empty store is cheaper than a
         * mispredicted jump (about 1 vector in 3 has no hit) */
        __m256i perm = _mm256_load_si256((const __m256i *)lut[mask]);
        _mm256_storeu_si256((__m256i *)(oj + n), _mm256_permutevar8x32_epi32(idx, perm));
        _mm256_storeu_ps(or2 + n, _mm256_permutevar8x32_ps(r2, perm));
        if (d) {
            _mm256_storeu_ps(odx + n, _mm256_permutevar8x32_ps(dx, perm));
            _mm256_storeu_ps(ody + n, _mm256_permutevar8x32_ps(dy, perm));
            _mm256_storeu_ps(odz + n, _mm256_permutevar8x32_ps(dz, perm));
        }
        n += __builtin_popcount((unsigned)mask);
    }
    return n;
}

__attribute__((target("avx2,popcnt"), always_inline)) static inline int
scan_avx2_body(const float *X, const float *Y, const float *Z, const fs_ranges *r, int i, float h2, const bool d,
               int32_t *oj, float *or2, float *odx, float *ody, float *odz) {
    const float xi = X[i], yi = Y[i], zi = Z[i];
    const __m256 vx = _mm256_set1_ps(xi), vy = _mm256_set1_ps(yi), vz = _mm256_set1_ps(zi), vh2 = _mm256_set1_ps(h2);
    const __m256i vi = _mm256_set1_epi32(i);
    int n = 0;
    for (int k = 0; k < r->n; k++)
        n = range_avx2(X, Y, Z, r->b[k], r->e[k], vx, vy, vz, vh2, vi, d, oj, or2, odx, ody, odz, n);
    return n;
}

__attribute__((target("avx2,popcnt"))) static int scan_avx2_d(const float *X, const float *Y, const float *Z,
                                                              const fs_ranges *r, int i, float h2, int32_t *oj,
                                                              float *or2, float *odx, float *ody, float *odz) {
    return scan_avx2_body(X, Y, Z, r, i, h2, true, oj, or2, odx, ody, odz);
}

__attribute__((target("avx2,popcnt"))) static int scan_avx2_nod(const float *X, const float *Y, const float *Z,
                                                                const fs_ranges *r, int i, float h2, int32_t *oj,
                                                                float *or2) {
    return scan_avx2_body(X, Y, Z, r, i, h2, false, oj, or2, NULL, NULL, NULL);
}

__attribute__((target("avx2,popcnt"))) static int scan_point_avx2(const float *X, const float *Y, const float *Z,
                                                                  const int32_t *b, const int32_t *e, int nr, float xi,
                                                                  float yi, float zi, float h2, int32_t *oj,
                                                                  float *or2) {
    const __m256 vx = _mm256_set1_ps(xi), vy = _mm256_set1_ps(yi), vz = _mm256_set1_ps(zi), vh2 = _mm256_set1_ps(h2);
    const __m256i none = _mm256_set1_epi32(-1); /* no index is -1: nothing is excluded */
    int n = 0;
    for (int k = 0; k < nr; k++)
        n = range_avx2(X, Y, Z, b[k], e[k], vx, vy, vz, vh2, none, false, oj, or2, NULL, NULL, NULL, n);
    return n;
}

__attribute__((target("avx2,popcnt"))) static int pack_lt_avx2(const int32_t *J, const float *R2, int n, float lim,
                                                               int32_t *oj, float *or2) {
    const __m256 vl = _mm256_set1_ps(lim);
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    int m = 0, k = 0;
    for (; k < n; k += 8) { /* the last vector's lanes past n are masked by index (never read: see below) */
        const int left = n - k;
        const __m256i live = _mm256_cmpgt_epi32(_mm256_set1_epi32(left), lane);
        /* masked loads: J and R2 need not be readable past n */
        __m256i j = _mm256_maskload_epi32(J + k, live);
        __m256 r2 = _mm256_maskload_ps(R2 + k, live);
        int mask = _mm256_movemask_ps(_mm256_and_ps(_mm256_cmp_ps(r2, vl, _CMP_LT_OQ), _mm256_castsi256_ps(live)));
        __m256i perm = _mm256_load_si256((const __m256i *)lut[mask]);
        _mm256_storeu_si256((__m256i *)(oj + m), _mm256_permutevar8x32_epi32(j, perm));
        _mm256_storeu_ps(or2 + m, _mm256_permutevar8x32_ps(r2, perm));
        m += __builtin_popcount((unsigned)mask);
    }
    return m;
}

static int use_avx2 = -1;

static void init(void) {
    for (int m = 0; m < 256; m++) {
        int c = 0;
        for (int b = 0; b < 8; b++)
            if (m & (1 << b)) lut[m][c++] = b;
        while (c < 8) lut[m][c++] = 0;
    }
    __builtin_cpu_init();
    use_avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("popcnt") ? 1 : 0;
}
#endif

void fs__scan_init(void) {
#ifdef HAVE_AVX2_PATH
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, init);
#endif
}

int fs__scan(const float *X, const float *Y, const float *Z, const fs_ranges *r, int i, float h2, bool d, int32_t *oj,
             float *or2, float *odx, float *ody, float *odz) {
#ifdef HAVE_AVX2_PATH
    if (use_avx2 > 0)
        return d ? scan_avx2_d(X, Y, Z, r, i, h2, oj, or2, odx, ody, odz) : scan_avx2_nod(X, Y, Z, r, i, h2, oj, or2);
#endif
    return scan_scalar(X, Y, Z, r, i, h2, d, oj, or2, odx, ody, odz);
}

int fs__scan_point(const float *X, const float *Y, const float *Z, const int32_t *b, const int32_t *e, int nr, float xi,
                   float yi, float zi, float h2, int32_t *oj, float *or2) {
#ifdef HAVE_AVX2_PATH
    if (use_avx2 > 0) return scan_point_avx2(X, Y, Z, b, e, nr, xi, yi, zi, h2, oj, or2);
#endif
    return scan_point_scalar(X, Y, Z, b, e, nr, xi, yi, zi, h2, oj, or2);
}

int fs__pack_lt(const int32_t *J, const float *R2, int n, float lim, int32_t *oj, float *or2) {
#ifdef HAVE_AVX2_PATH
    if (use_avx2 > 0) return pack_lt_avx2(J, R2, n, lim, oj, or2);
#endif
    return pack_lt_scalar(J, R2, n, lim, oj, or2);
}
