/* frame_bands.c - protocol v2's bands: the band table and the split (see
 * frame_bands.h). */
#include "frame_bands.h"

#include <stdio.h>

#define HEADER_BYTES 56 /* a payload's header (FC_HEADER_BYTES, frame_codec.h) */

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

size_t fc_bands_table_bytes(int k) {
    return 4 + 8 * (size_t)k;
}

int fc_bands_read(const uint8_t *body, size_t body_len, fc_band_table *t, char *err, size_t errlen) {
    if (body_len < 4) {
        snprintf(err, errlen, "frame payload: bands without a band count");
        return -1;
    }
    uint32_t k = get32(body);
    if (k < 2 || k > FC_MAX_BANDS) {
        snprintf(err, errlen, "frame payload: %u bands (2 to %d)", k, FC_MAX_BANDS);
        return -1;
    }
    size_t table = fc_bands_table_bytes((int)k);
    if (body_len < table) {
        snprintf(err, errlen, "frame payload: band table truncated");
        return -1;
    }
    t->k = (int)k;
    uint64_t at = table;
    for (uint32_t i = 0; i < k; i++) {
        t->lo[i] = get32(body + 4 + 4 * i);
        t->len[i] = get32(body + 4 + 4 * k + 4 * i);
        if (i == 0 && t->lo[0] != 0) {
            snprintf(err, errlen, "frame payload: band 0's first id is %u, not 0", t->lo[0]);
            return -1;
        }
        if (i > 0 && t->lo[i] <= t->lo[i - 1]) {
            snprintf(err, errlen, "frame payload: band %u's first id %u does not follow band %u's %u", i, t->lo[i],
                     i - 1, t->lo[i - 1]);
            return -1;
        }
        if (t->len[i] < HEADER_BYTES) {
            snprintf(err, errlen, "frame payload: band %u of %u bytes, shorter than a header", i, t->len[i]);
            return -1;
        }
        t->off[i] = (uint32_t)at;
        at += t->len[i];
    }
    if (at != body_len) {
        snprintf(err, errlen, "frame payload: bands of %llu bytes in a body of %zu", (unsigned long long)at, body_len);
        return -1;
    }
    return 0;
}

void fc_bands_write(uint8_t *body, const fc_band_table *t) {
    put32(body, (uint32_t)t->k);
    for (int i = 0; i < t->k; i++) {
        put32(body + 4 + 4 * i, t->lo[i]);
        put32(body + 4 + 4 * t->k + 4 * i, t->len[i]);
    }
}

int fc_bands_choose(int n, const uint32_t *id, int forced, uint32_t *lo) {
    int k = forced > 0 ? forced : (n > FC_BAND_SIZE ? (n + FC_BAND_SIZE - 1) / FC_BAND_SIZE : 1);
    if (k > FC_MAX_BANDS) k = FC_MAX_BANDS;
    if (k > n) k = n;
    if (k < 2) {
        lo[0] = 0;
        return 1;
    }
    lo[0] = 0;
    for (int i = 1; i < k; i++) lo[i] = id[(int)((int64_t)i * n / k)];
    return k;
}

/* The first index in id[from..n) with id >= v (n when none). */
static int lower_bound(const uint32_t *id, int from, int n, uint32_t v) {
    int a = from, b = n;
    while (a < b) {
        int m = a + (b - a) / 2;
        if (id[m] < v)
            a = m + 1;
        else
            b = m;
    }
    return a;
}

int fc_bands_range(const uint32_t *id, int n, uint32_t lo, uint32_t hi, int hi_open, int *count) {
    int first = lower_bound(id, 0, n, lo);
    *count = (hi_open ? n : lower_bound(id, first, n, hi)) - first;
    return first;
}
