/* fuzz_recording.c - libFuzzer harness for reading a recording segment, the
 * way build/fluid-rec and a replaying browser do: the record reader
 * (server/wire/recfile.c), the bounded message reader (wire_read_message in
 * server/wire/wire.c) on every header and frame record, and the v2 frame
 * decoder (frame_decoder.c) on every frame's payload, in order.
 *
 * Built and run by tests/fuzz/fuzz.mk (`make fuzz FUZZ=fuzz_recording`, and
 * `make test`'s smoke run); seeds: tests/fuzz/corpus/fuzz_recording (a short
 * recording of a small dam break).  Inputs must be refused or read, never
 * read out of bounds, never crash, never allocate past the decoder's
 * capacity (clamped here to keep each input fast). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "frame_codec.h"
#include "recfile.h"
#include "wire.h"

enum { MAX_CAP = 4096 };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    rec_reader r;
    if (!rec_reader_init(&r, data, size)) return 0;
    fc_decoder *dec = NULL;
    int kind;
    const uint8_t *p;
    size_t n;
    char err[200];
    while (rec_reader_next(&r, &kind, &p, &n)) {
        wire_frame_view v;
        if (kind != REC_HEADER && kind != REC_FRAME) continue;
        if (wire_read_message(p, n, &v, err, sizeof err)) continue;
        if (kind == REC_HEADER) {
            int cap = v.capacity > MAX_CAP ? MAX_CAP : (int)v.capacity;
            fc_decoder_destroy(dec);
            dec = fc_decoder_create(cap);
            continue;
        }
        if (dec && v.data) fc_decode(dec, v.data, v.len, err, sizeof err);
    }
    fc_decoder_destroy(dec);
    return 0;
}
