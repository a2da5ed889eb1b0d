/* fc_wasm.c - the server's v2 frame decoder (server/wire/frame_codec.c)
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
static char err[256];
/* the last frame's grid: origin x y z, step, then levels x y z (as floats) */
static float grid[7];

/* A decoder for at most capacity particles and its input buffer.  Returns
 * the input buffer's address, 0 when out of memory. */
__attribute__((export_name("fc_create"))) uint8_t *w_create(int capacity) {
    if (dec) fc_decoder_destroy(dec), dec = NULL;
    free(in);
    in_cap = fc_max_payload(capacity) + 64;
    in = malloc(in_cap);
    dec = in ? fc_decoder_create(capacity) : NULL;
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
