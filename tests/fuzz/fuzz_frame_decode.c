/* fuzz_frame_decode.c - libFuzzer harness for the v2 frame decoder
 * (server/wire/frame_decoder.c, fc_decode).
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
 * A second decoder follows the same stream in 2 bands (kind 2,
 * PROTOCOL.md "Bands") and takes each input the same three ways, so the
 * band table and each band's checks are reached too.
 * The decoder must refuse or decode, never read out of bounds, never crash,
 * and a refusal must leave the frames it held decodable. */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame_codec.h"

enum { N = 64 };
/* a stream of a keyframe and a delta, and its decoder: whole (0) and in 2 bands (1) */
typedef struct stream_fx {
    fc_decoder *dec;
    uint8_t key[8192], delta[8192];
    size_t key_len, delta_len;
} stream_fx;
static stream_fx g_fx[2];
static bool g_ready;

static void setup(stream_fx *fx, int bands) {
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
    fc_options o = fc_default_options();
    o.bands = bands;
    fc_encoder_set_options(e, &o);
    for (int k = 0; k < N; k++)
        id[k] = (uint32_t)(k * 2), x[k] = 0.1f + 0.01f * (float)k, y[k] = 0.5f, z[k] = 0.3f, t[k] = 20, m[k] = 0;
    fc_input in = {N, id, x, y, z, m, t, NULL};
    fc_encoder_push(e, 1, &g, &in, err, sizeof err);
    fx->key_len = fc_encode(e, 1, FC_NONE, FC_NONE, fx->key, sizeof fx->key, err, sizeof err);
    for (int k = 0; k < N; k++) y[k] -= 0.01f * (float)(k % 5), id[k] += k > 40;
    fc_encoder_push(e, 2, &g, &in, err, sizeof err);
    fx->delta_len = fc_encode(e, 2, 1, FC_NONE, fx->delta, sizeof fx->delta, err, sizeof err);
    fc_encoder_destroy(e);
    fx->dec = fc_decoder_create(N);
}

static void prime(stream_fx *fx) {
    char err[160];
    if (!fc_decoder_frame(fx->dec, 1) || !fc_decoder_frame(fx->dec, 2)) {
        fc_decoder_reset(fx->dec);
        if (!fc_decode(fx->dec, fx->key, fx->key_len, err, sizeof err) ||
            !fc_decode(fx->dec, fx->delta, fx->delta_len, err, sizeof err))
            abort(); /* the real stream must always decode */
    }
}

/* The input three ways: as it is, with its body length patched to match,
 * and as the body behind the stream's real delta and keyframe headers. */
static void decode_ways(stream_fx *fx, const uint8_t *data, size_t size) {
    char err[160];
    prime(fx);
    fc_decode(fx->dec, data, size, err, sizeof err);
    if (size >= FC_HEADER_BYTES && size < 1 << 16) {
        static uint8_t buf[1 << 16];
        memcpy(buf, data, size);
        uint32_t bl = (uint32_t)(size - FC_HEADER_BYTES);
        for (int i = 0; i < 4; i++) buf[52 + i] = (uint8_t)(bl >> (8 * i));
        prime(fx);
        fc_decode(fx->dec, buf, size, err, sizeof err);
    }
    /* the input as the body of the real delta's header and of the real
     * keyframe's header (same epoch, bases held, grid): reaches the body
     * parsers whatever the fuzzer does to the header */
    if (size < (1 << 16) - FC_HEADER_BYTES) {
        static uint8_t buf[1 << 16];
        for (int kind = 0; kind < 2; kind++) {
            memcpy(buf, kind ? fx->delta : fx->key, FC_HEADER_BYTES);
            memcpy(buf + FC_HEADER_BYTES, data, size);
            for (int i = 0; i < 4; i++) buf[52 + i] = (uint8_t)(size >> (8 * i));
            prime(fx);
            fc_decode(fx->dec, buf, size + FC_HEADER_BYTES, err, sizeof err);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!g_ready) setup(&g_fx[0], 1), setup(&g_fx[1], 2), g_ready = true;
    decode_ways(&g_fx[0], data, size);
    decode_ways(&g_fx[1], data, size);
    return 0;
}
