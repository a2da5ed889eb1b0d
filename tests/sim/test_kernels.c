/* test_kernels.c - the packing scans of kernels.c (fs__scan_point, fs__pack_lt) against plain loops (white box). */
#include <stdlib.h>
#include <string.h>

#include "sim_testing.h"
#include "sim_tests.h"
#include "testlib.h"

static float rnd(unsigned *s) {
    *s = *s * 1664525u + 1013904223u;
    return (float)(*s >> 8) / 16777216.0f;
}

/* Random points in a unit cube, random index ranges (empty, of 1 to 40 entries, ending at the last point),
 * and random thresholds: the packed output must be exactly the plain loop's, in order, with the same r^2 bits. */
void test_kernels_pack(void) {
    fs__scan_init();
    enum { N = 300 };
    float *X = calloc(N + FS_SCAN_PAD, sizeof(float)), *Y = calloc(N + FS_SCAN_PAD, sizeof(float)),
          *Z = calloc(N + FS_SCAN_PAD, sizeof(float));
    int32_t *oj = malloc(sizeof(int32_t) * (N * 4 + FS_SCAN_PAD)), *rj = malloc(sizeof(int32_t) * N * 4);
    float *or2 = malloc(sizeof(float) * (N * 4 + FS_SCAN_PAD)), *rr2 = malloc(sizeof(float) * N * 4);
    unsigned seed = 12345;
    for (int i = 0; i < N; i++) X[i] = rnd(&seed), Y[i] = rnd(&seed), Z[i] = rnd(&seed);
    int bad = 0, trials = 0, hits = 0;
    for (int t = 0; t < 400; t++) {
        int32_t b[6], e[6];
        const int nr = t % 7 == 0 ? 0 : 1 + (int)(rnd(&seed) * 6) % 6;
        for (int k = 0; k < nr; k++) {
            int len = (int)(rnd(&seed) * 41);
            b[k] = (int)(rnd(&seed) * (N - len)), e[k] = b[k] + len;
        }
        if (nr && t % 5 == 0) b[nr - 1] = N - 13, e[nr - 1] = N; /* up to the last point */
        const float xi = rnd(&seed), yi = rnd(&seed), zi = rnd(&seed), h = 0.1f + 0.5f * rnd(&seed);
        int want = 0;
        for (int k = 0; k < nr; k++)
            for (int j = b[k]; j < e[k]; j++) {
                float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi, r2 = dx * dx + dy * dy + dz * dz;
                if (r2 < h * h) rj[want] = j, rr2[want] = r2, want++;
            }
        int got = fs__scan_point(X, Y, Z, b, e, nr, xi, yi, zi, h * h, oj, or2);
        bad += got != want || memcmp(oj, rj, sizeof(int32_t) * (size_t)want) != 0 ||
               memcmp(or2, rr2, sizeof(float) * (size_t)want) != 0;
        hits += want, trials++;
        /* pack the scan's output again below a smaller radius, from arrays of exactly that length */
        const float lim = 0.5f * h * h;
        int32_t *J = malloc(sizeof(int32_t) * (size_t)(want ? want : 1));
        float *R2 = malloc(sizeof(float) * (size_t)(want ? want : 1));
        memcpy(J, rj, sizeof(int32_t) * (size_t)want), memcpy(R2, rr2, sizeof(float) * (size_t)want);
        int w2 = 0;
        for (int k = 0; k < want; k++)
            if (R2[k] < lim) rj[w2] = J[k], rr2[w2] = R2[k], w2++;
        int g2 = fs__pack_lt(J, R2, want, lim, oj, or2);
        bad += g2 != w2 || memcmp(oj, rj, sizeof(int32_t) * (size_t)w2) != 0 ||
               memcmp(or2, rr2, sizeof(float) * (size_t)w2) != 0;
        free(J), free(R2);
    }
    REPORT("%d scans (%d hits in all) and as many packs: %d differ from the plain loops", trials, hits, bad);
    CHECK(bad == 0 && hits > 1000, "%d of %d differ", bad, trials);
    free(X), free(Y), free(Z), free(oj), free(rj), free(or2), free(rr2);
}
