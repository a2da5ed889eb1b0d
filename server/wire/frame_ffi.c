/* frame_ffi.c - the v2 frame decoder's stable C entry point for foreign
 * callers (frame_ffi.h): a handle over one fc_decoder, its last refusal and
 * its last decoded frame, copied out on request (memcpy of the decoder's
 * arrays), and metres made from quantized positions when a caller asks.
 * The decoding is fc_decode's alone, the code the server's tests and
 * fuzzers check. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_codec.h"
#include "frame_ffi.h"

/* One foreign caller's decoder.  Threads: the caller's decoding thread. */
struct fc_ffi {
    fc_decoder *dec;
    const fc_frame *last; /* held by dec until FC_DEC_HISTORY - 2 further decodes; NULL after reset */
    char err[256];
};

int fc_ffi_abi(void) {
    return FC_FFI_ABI;
}

int fc_ffi_payload_version(void) {
    return FC_VERSION;
}

fc_ffi *fc_ffi_create(int capacity) {
    if (capacity < 1 || capacity > FC_MAX_PARTICLES) return NULL;
    fc_ffi *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->dec = fc_decoder_create(capacity);
    if (!h->dec) {
        free(h);
        return NULL;
    }
    return h;
}

void fc_ffi_destroy(fc_ffi *h) {
    if (!h) return;
    fc_decoder_destroy(h->dec);
    free(h);
}

void fc_ffi_reset(fc_ffi *h) {
    if (!h) return;
    fc_decoder_reset(h->dec);
    h->last = NULL;
}

int fc_ffi_decode(fc_ffi *h, const uint8_t *p, size_t n) {
    if (!h) return -1;
    if (!p && n) {
        snprintf(h->err, sizeof h->err, "frame payload: no bytes at a length of %zu", n);
        return -1;
    }
    const fc_frame *f = fc_decode(h->dec, p, n, h->err, sizeof h->err);
    if (!f) return -1;
    h->last = f;
    return f->n;
}

const char *fc_ffi_error(const fc_ffi *h) {
    return h ? h->err : "no decoder";
}

int fc_ffi_info(const fc_ffi *h, uint32_t *seq, float origin_step[4], uint16_t levels[3]) {
    if (!h || !h->last) return -1;
    const fc_frame *f = h->last;
    if (seq) *seq = f->seq;
    if (origin_step) {
        for (int a = 0; a < 3; a++) origin_step[a] = f->grid.origin[a];
        origin_step[3] = f->grid.step;
    }
    if (levels)
        for (int a = 0; a < 3; a++) levels[a] = f->grid.levels[a];
    return f->n;
}

int fc_ffi_copy(const fc_ffi *h, uint32_t *ids, float *pos, uint16_t *q, uint8_t *mat, uint8_t *temp) {
    if (!h || !h->last) return -1;
    const fc_frame *f = h->last;
    const size_t n = (size_t)f->n;
    if (ids) memcpy(ids, f->id, n * sizeof *ids);
    if (q) memcpy(q, f->q, 3 * n * sizeof *q);
    if (mat) memcpy(mat, f->mat, n);
    if (temp) memcpy(temp, f->temp, n);
    if (pos) {
        const float g[4] = {f->grid.origin[0], f->grid.origin[1], f->grid.origin[2], f->grid.step};
        fc_ffi_positions(f->q, f->n, g, pos);
    }
    return f->n;
}

int fc_ffi_positions(const uint16_t *q, int n, const float origin_step[4], float *pos) {
    if (n < 0 || (n > 0 && (!q || !origin_step || !pos))) return -1;
    const double st = origin_step[3];
    const double o[3] = {origin_step[0], origin_step[1], origin_step[2]};
    for (size_t k = 0; k < (size_t)n; k++)
        for (int a = 0; a < 3; a++) pos[3 * k + a] = (float)(o[a] + (double)q[3 * k + a] * st);
    return n;
}
