/* fc_wasm.c - the server's v2 frame decoder (server/wire/frame_codec.h)
 * exported to the browser as WebAssembly: one decoder per instance, its
 * input buffer and the last frame's fields.  Built by web-client/client.mk
 * into web-client/vendor/fc/frame_codec.wasm; web-client/src/
 * frame_codec_wasm.js drives it.  The decoder is the one the server's tests
 * and fuzzers check (tests/fuzz/fuzz_frame_decode.c), so a payload the
 * browser takes is bounded in the same way: it refuses, never reads or
 * writes outside what it allocated at creation. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "frame_codec.h"

static fc_decoder *dec;
static uint8_t *in;
static size_t in_cap;
static const fc_frame *last;
static uint16_t *box16; /* 3 capacity: the last frame's positions as fractions of the box */
static uint32_t *runs;  /* 2 capacity: its ids as runs (first, count) */
static char err[256];
/* the last frame's grid: origin x y z, step, then levels x y z (as floats) */
static float grid[7];

/* A decoder for at most capacity particles and its input buffer.  Returns
 * the input buffer's address, 0 when out of memory. */
__attribute__((export_name("fc_create"))) uint8_t *w_create(int capacity) {
    if (dec) fc_decoder_destroy(dec), dec = NULL;
    free(in), free(box16), free(runs);
    in_cap = fc_max_payload(capacity) + 64;
    in = malloc(in_cap);
    box16 = malloc(6 * (size_t)(capacity > 0 ? capacity : 1));
    runs = malloc(8 * (size_t)(capacity > 0 ? capacity : 1));
    dec = in && box16 && runs ? fc_decoder_create(capacity) : NULL;
    last = NULL;
    return dec ? in : NULL;
}

__attribute__((export_name("fc_input_cap"))) int w_input_cap(void) {
    return (int)in_cap;
}

__attribute__((export_name("fc_reset"))) void w_reset(void) {
    if (dec) fc_decoder_reset(dec);
    last = NULL;
}

/* Decodes the n bytes written at the input buffer: the frame's particle
 * count, or -1 with the reason at fc_error(). */
__attribute__((export_name("fc_decode"))) int w_decode(int n) {
    if (!dec || n < 0 || (size_t)n > in_cap) {
        snprintf(err, sizeof err, "frame payload of %d bytes: no decoder, or larger than its input", n);
        return -1;
    }
    last = fc_decode(dec, in, (size_t)n, err, sizeof err);
    if (!last) return -1;
    for (int a = 0; a < 3; a++) grid[a] = last->grid.origin[a], grid[4 + a] = (float)last->grid.levels[a];
    grid[3] = last->grid.step;
    return last->n;
}

__attribute__((export_name("fc_error"))) const char *w_error(void) {
    return err;
}
__attribute__((export_name("fc_seq"))) uint32_t w_seq(void) {
    return last ? last->seq : 0;
}
__attribute__((export_name("fc_grid"))) const float *w_grid(void) {
    return grid;
}
__attribute__((export_name("fc_ids"))) const uint32_t *w_ids(void) {
    return last ? last->id : NULL;
}
__attribute__((export_name("fc_q"))) const uint16_t *w_q(void) {
    return last ? last->q : NULL;
}
__attribute__((export_name("fc_mat"))) const uint8_t *w_mat(void) {
    return last ? last->mat : NULL;
}
__attribute__((export_name("fc_temp"))) const uint8_t *w_temp(void) {
    return last ? last->temp : NULL;
}

/* The last frame's positions as 16-bit fractions of the box, as the page
 * draws them: per axis a, round((off_a + q step) scale_a), ties up (as
 * JavaScript's Math.round), clamped to 0..65535, in doubles as the page
 * computes them (stream_v2.js boxPositions gives the same values): one
 * table per axis over the grid's levels, then a lookup per coordinate (the
 * decoder has checked every q against its axis's levels).  Returns their
 * address (3n uint16), NULL without a frame. */
static uint16_t lut[3][FC_MAX_LEVELS];
__attribute__((export_name("fc_box16"))) const uint16_t *w_box16(double o0, double o1, double o2, double s0, double s1,
                                                                 double s2) {
    if (!last) return NULL;
    const double off[3] = {o0, o1, o2}, scale[3] = {s0, s1, s2}, st = last->grid.step;
    for (int a = 0; a < 3; a++)
        for (int l = 0; l < last->grid.levels[a]; l++) {
            double x = (off[a] + (double)l * st) * scale[a];
            uint16_t v = 0;
            if (x >= 65535.0) {
                v = 65535;
            } else if (x > 0) {
                int t = (int)x;
                v = (uint16_t)(x - t >= 0.5 ? t + 1 : t);
            }
            lut[a][l] = v;
        }
    const uint16_t *q = last->q;
    for (int k = 0; k < last->n; k++) {
        box16[3 * k] = lut[0][q[3 * k]];
        box16[3 * k + 1] = lut[1][q[3 * k + 1]];
        box16[3 * k + 2] = lut[2][q[3 * k + 2]];
    }
    return box16;
}

/* The last frame's ids as runs of consecutive ids: (first, count) pairs.
 * Returns the number of runs; their address at fc_runs_at(). */
__attribute__((export_name("fc_runs"))) int w_runs(void) {
    if (!last) return 0;
    int r = -1;
    for (int k = 0; k < last->n; k++) {
        if (k && last->id[k] == last->id[k - 1] + 1) {
            runs[2 * r + 1]++;
        } else {
            r++;
            runs[2 * r] = last->id[k], runs[2 * r + 1] = 1;
        }
    }
    return r + 1;
}
__attribute__((export_name("fc_runs_at"))) const uint32_t *w_runs_at(void) {
    return runs;
}
