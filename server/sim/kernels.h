/* kernels.h - the neighbour scan every pair pass starts from (kernels.c),
 * and the SIMD clone attribute of the hot pair passes. */
#ifndef SIM_KERNELS_H
#define SIM_KERNELS_H

#include "grid.h"

/* Clones of the hot pair passes for AVX2 and for any x86-64 (dispatched at
 * load time); the loops marked omp simd vectorise in the AVX2 clone.  Not
 * under ThreadSanitizer: gcc instruments the clones' ifunc resolver, which the
 * dynamic loader runs before the TSan runtime exists (SIGSEGV at start). */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_THREAD__)
#define FS_SIMD_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FS_SIMD_CLONES
#endif

/* The scan of the 27 cells around (xi, yi, zi), keeping j != i with
 * |r_ij|^2 < h2.  Writes j and r2 (and r_ij when d is true) packed, returns
 * how many.  Uses AVX2 when the CPU has it. */
void fs__scan_init(void); /* once, before any scan (fs_world_create calls it) */
int fs__scan(const float *X, const float *Y, const float *Z, const fs_ranges *r, int i, float h2, bool d, int32_t *oj,
             float *or2, float *odx, float *ody, float *odz);

/* The candidates of the index ranges [b[k], e[k]) (k < nr, in order) within
 * sqrt(h2) of the point (xi, yi, zi), packed as fs__scan packs them; oj and
 * or2 need room for sum(e - b) + FS_SCAN_PAD entries, and the position
 * arrays FS_SCAN_PAD readable entries past the last range's end. */
#define FS_SCAN_PAD 8
int fs__scan_point(const float *X, const float *Y, const float *Z, const int32_t *b, const int32_t *e, int nr, float xi,
                   float yi, float zi, float h2, int32_t *oj, float *or2);
/* The entries k < n of (J, R2) with R2[k] < lim, packed in order into (oj,
 * or2), which need room for n + FS_SCAN_PAD entries; returns how many. */
int fs__pack_lt(const int32_t *J, const float *R2, int n, float lim, int32_t *oj, float *or2);

/* The neighbours of i within sqrt(h2): the list this step's density pass
 * stored in w->nb, or, when it overflowed (nb_n[i] < 0), a fresh scan into
 * sc (same positions, same set).  *list points at them; returns how many. */
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

#endif
