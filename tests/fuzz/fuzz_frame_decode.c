/* fuzz_frame_decode.c - libFuzzer harness for the v2 frame decoder
 * (server/wire/frame_codec.c, fc_decode).
 *
 * Built and run by tests/fuzz/fuzz.mk (`make fuzz FUZZ=fuzz_frame_decode`, and
 * `make test`'s smoke run); seeds: tests/fuzz/corpus/fuzz_frame_decode (the
 * golden frames of protocol/golden).
 *
 * Each input is decoded by a decoder that already holds a keyframe (seq 1)
 * and a delta (seq 2) of a small stream, so inputs that name those frames
 * reach the delta path; the first input bytes after a valid header are what
 * the fuzzer mutates.  The input is also decoded with its header's body
 * length patched to match, and as the body behind the real keyframe's and
 * the real delta's headers, so the body parsers are reached from any input.
 * The decoder must refuse or decode, never read out of bounds, never crash,
 * and a refusal must leave the frames it held decodable. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame_codec.h"

enum { N = 64 };
static fc_decoder *g_dec;
static uint8_t g_key[8192], g_delta[8192];
static size_t g_key_len, g_delta_len;

static void setup(void) {
    static uint32_t id[N];
    static float x[N], y[N], z[N], t[N];
    static uint8_t m[N];
    float lo[3] = {0, 0, 0}, hi[3] = {1, 1, 1};
    char err[160];
    fc_grid g;
    /* 128 levels per axis: 9^3 cells (16 levels each), several particles in
     * a cell; the default step (1/1024 of the box) made 33^3 cells, and each
     * delta decode walks every cell (a prefix sum): 3x slower per input with
     * nothing more to explore.  Inputs still choose any grid in their header. */
    fc_grid_make(&g, lo, hi, 1.0f / 128, err, sizeof err);
    fc_encoder *e = fc_encoder_create(N, 3);
    for (int k = 0; k < N; k++)
        id[k] = (uint32_t)(k * 2), x[k] = 0.1f + 0.01f * (float)k, y[k] = 0.5f, z[k] = 0.3f, t[k] = 20, m[k] = 0;
    fc_input in = {N, id, x, y, z, m, t, NULL};
    fc_encoder_push(e, 1, &g, &in, err, sizeof err);
    g_key_len = fc_encode(e, 1, FC_NONE, FC_NONE, g_key, sizeof g_key, err, sizeof err);
    for (int k = 0; k < N; k++) y[k] -= 0.01f * (float)(k % 5), id[k] += k > 40;
    fc_encoder_push(e, 2, &g, &in, err, sizeof err);
    g_delta_len = fc_encode(e, 2, 1, FC_NONE, g_delta, sizeof g_delta, err, sizeof err);
    fc_encoder_destroy(e);
    g_dec = fc_decoder_create(N);
}

static void prime(void) {
    char err[160];
    if (!fc_decoder_frame(g_dec, 1) || !fc_decoder_frame(g_dec, 2)) {
        fc_decoder_reset(g_dec);
        if (!fc_decode(g_dec, g_key, g_key_len, err, sizeof err) ||
            !fc_decode(g_dec, g_delta, g_delta_len, err, sizeof err))
            abort(); /* the real stream must always decode */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_dec) setup();
    char err[160];
    prime();
    fc_decode(g_dec, data, size, err, sizeof err);
    if (size >= FC_HEADER_BYTES && size < 1 << 16) {
        static uint8_t buf[1 << 16];
        memcpy(buf, data, size);
        uint32_t bl = (uint32_t)(size - FC_HEADER_BYTES);
        for (int i = 0; i < 4; i++) buf[52 + i] = (uint8_t)(bl >> (8 * i));
        prime();
        fc_decode(g_dec, buf, size, err, sizeof err);
    }
    /* the input as the body of the real delta's header and of the real
     * keyframe's header (same epoch, bases held, grid): reaches the body
     * parsers whatever the fuzzer does to the header */
    if (size < (1 << 16) - FC_HEADER_BYTES) {
        static uint8_t buf[1 << 16];
        for (int kind = 0; kind < 2; kind++) {
            memcpy(buf, kind ? g_delta : g_key, FC_HEADER_BYTES);
            memcpy(buf + FC_HEADER_BYTES, data, size);
            for (int i = 0; i < 4; i++) buf[52 + i] = (uint8_t)(size >> (8 * i));
            prime();
            fc_decode(g_dec, buf, size + FC_HEADER_BYTES, err, sizeof err);
        }
    }
    return 0;
}
