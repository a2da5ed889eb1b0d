/* frame_decoder.c - the frame codec's decoder (frame_codec.h): a payload
 * checked at the edge (its header, its streams' lengths, its base and prev
 * held, on the same grid), its body walked by frame_walk.c (shared with the
 * encoder), the streams checked to end where declared and the frame against
 * its checksum; bands (kind 2) each checked against their container and
 * decoded into the frame after the bands before them.  Never reads outside
 * the payload; never allocates after create. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_bands.h"
#include "frame_codec.h"
#include "frame_header.h"
#include "frame_history.h"
#include "frame_walk.h"

/* A decoder: its frames held, its walk's scratch.  Threads: the decoding thread's alone (frame_codec.h). */
struct fc_decoder {
    int cap;
    uint32_t epoch;
    bool has_epoch;
    fc_frame hist[FC_DEC_HISTORY];
    uint64_t stamp[FC_DEC_HISTORY], clock;
    fc_scratch s;
};

fc_decoder *fc_decoder_create(int capacity) {
    fc_decoder *d = fc__codec_alloc(capacity, sizeof *d);
    if (!d) return NULL;
    d->cap = capacity;
    if (!fc__buffers_alloc(&d->s, d->hist, FC_DEC_HISTORY, capacity)) {
        fc_decoder_destroy(d);
        return NULL;
    }
    return d;
}

void fc_decoder_destroy(fc_decoder *d) {
    if (!d) return;
    fc__buffers_free(&d->s, d->hist, FC_DEC_HISTORY);
    free(d);
}

void fc_decoder_reset(fc_decoder *d) {
    d->has_epoch = false;
    fc__history_clear(d->hist, FC_DEC_HISTORY);
}

const fc_frame *fc_decoder_frame(const fc_decoder *d, uint32_t seq) {
    return fc__history_find(d->hist, FC_DEC_HISTORY, seq);
}

/* Decodes payload p (header h, ordinary: kind 0 or 1) into f (a slot of
 * the history, or a band's view of one) against b and pv (band views for a
 * band).  Returns 0, or -1 with a reason. */
static int decode_one(fc_decoder *d, const fc_header *h, const uint8_t *p, fc_frame *f, const fc_frame *b,
                      const fc_frame *pv, char *err, size_t errlen) {
    rc r;
    const uint8_t *body = p + FC_HEADER_BYTES;
    bool table = b != NULL; /* a delta: its streams' lengths, then the streams */
    if (table) {
        uint32_t rl = h->body_len >= 8 ? fc__get32(body) : 0, tl = h->body_len >= 8 ? fc__get32(body + 4) : 0;
        if (h->body_len < 8 || (uint64_t)rl + tl > h->body_len - 8) {
            snprintf(err, errlen, "frame payload: its streams do not fit its body of %u bytes", h->body_len);
            return -1;
        }
        rc_dec_init(&r, body + 8, rl);
        if (!tc_rans_dec_init(&d->s.rd, body + 8 + rl, tl)) {
            snprintf(err, errlen, "frame payload: bad rANS state");
            return -1;
        }
        tc_bitr_init(&d->s.br, body + 8 + rl + tl, h->body_len - 8 - rl - tl);
    } else {
        rc_dec_init(&r, body, h->body_len);
    }
    fc_options o = h->options;
    if (fc__walk(&r, &d->s, &o, f, b, pv, err, errlen)) return -1;
    if (r.overrun) {
        snprintf(err, errlen, "frame payload truncated");
        return -1;
    }
    bool ended = !table || (d->s.rd.p == d->s.rd.end && tc_bitr_left(&d->s.br) < 8);
    for (int i = 0; table && i < TC_STATES; i++) ended &= d->s.rd.x[i] == TC_RANS_L;
    if (!ended) {
        snprintf(err, errlen, "frame payload: the table-coded streams do not end where declared");
        return -1;
    }
    if (fc__checksum(f) != h->checksum) {
        snprintf(err, errlen, "frame payload checksum mismatch (corrupt, or coded against another base)");
        return -1;
    }
    return 0;
}

/* Bands (kind 2, header h) into slot f: each band's payload checked against
 * the container, decoded into f's arrays after the bands before it, against
 * the same id range of b and pv, and its ids checked against its range. */
static int decode_bands(fc_decoder *d, const fc_header *h, const uint8_t *p, fc_frame *f, const fc_frame *b,
                        const fc_frame *pv, char *err, size_t errlen) {
    fc_band_table t;
    if (fc_bands_read(p + FC_HEADER_BYTES, h->body_len, &t, err, errlen)) return -1;
    int at = 0;
    for (int i = 0; i < t.k; i++) {
        const uint8_t *bp = p + FC_HEADER_BYTES + t.off[i];
        fc_header bh;
        if (fc_read_header(bp, t.len[i], &bh, err, errlen)) return -1;
        if (bh.kind != (b ? 1 : 0) || bh.epoch != h->epoch || bh.seq != h->seq || bh.base != h->base ||
            bh.prev != h->prev || !fc__grid_equal(&bh.grid, &h->grid) || bh.n > h->n - (uint32_t)at) {
            snprintf(err, errlen, "frame payload: band %d does not belong to its frame (kind, numbers, grid or count)",
                     i);
            return -1;
        }
        fc_frame v = *f, bv, pvv;
        v.n = (int)bh.n;
        v.id = f->id + at;
        v.q = f->q + 3 * at;
        v.mat = f->mat + at;
        v.temp = f->temp + at;
        if (b) bv = fc__band_view(b, t.lo, t.k, i);
        if (pv) pvv = fc__band_view(pv, t.lo, t.k, i);
        if (decode_one(d, &bh, bp, &v, b ? &bv : NULL, pv ? &pvv : NULL, err, errlen)) return -1;
        if (v.n && (v.id[0] < t.lo[i] || (i + 1 < t.k && v.id[v.n - 1] >= t.lo[i + 1]))) {
            snprintf(err, errlen, "frame payload: band %d holds ids outside [%u, %u)", i, t.lo[i],
                     i + 1 < t.k ? t.lo[i + 1] : 0u);
            return -1;
        }
        at += v.n;
    }
    if ((uint32_t)at != h->n) {
        snprintf(err, errlen, "frame payload: bands of %d particles, %u declared", at, h->n);
        return -1;
    }
    return 0;
}

const fc_frame *fc_decode(fc_decoder *d, const uint8_t *p, size_t n, char *err, size_t errlen) {
    fc_header h;
    if (fc_read_header(p, n, &h, err, errlen)) return NULL;
    if (h.n > (uint32_t)d->cap) {
        snprintf(err, errlen, "frame of %u particles, this decoder holds at most %d", h.n, d->cap);
        return NULL;
    }
    bool delta = h.kind == 1 || (h.kind == 2 && h.base != FC_NONE);
    const fc_frame *b = NULL, *pv = NULL;
    if (delta) {
        if (!d->has_epoch || h.epoch != d->epoch) {
            snprintf(err, errlen, "delta of stream %u, this decoder follows %s", h.epoch,
                     d->has_epoch ? "another" : "none yet");
            return NULL;
        }
        b = fc_decoder_frame(d, h.base);
        pv = fc_decoder_frame(d, h.prev);
        if (!b || (h.prev != FC_NONE && !pv)) {
            snprintf(err, errlen, "delta against frame %u (prev %u), which this decoder does not hold", h.base, h.prev);
            return NULL;
        }
        if (!fc__grid_equal(&b->grid, &h.grid) || (pv && !fc__grid_equal(&pv->grid, &h.grid))) {
            snprintf(err, errlen, "delta on another quantization grid than its base");
            return NULL;
        }
    }
    /* The oldest slot that is neither base nor prev. */
    int slot = -1; /* an empty slot, else the least recently decoded; never base or prev */
    for (int i = 0; i < FC_DEC_HISTORY; i++) {
        const fc_frame *c = &d->hist[i];
        if (c == b || c == pv) continue;
        if (slot < 0 || (d->hist[slot].valid && (!c->valid || d->stamp[i] < d->stamp[slot]))) slot = i;
    }
    fc_frame *f = &d->hist[slot];
    f->valid = false;
    f->n = (int)h.n;
    f->grid = h.grid;
    f->seq = h.seq;
    int rcode =
        h.kind == 2 ? decode_bands(d, &h, p, f, b, pv, err, errlen) : decode_one(d, &h, p, f, b, pv, err, errlen);
    if (rcode) return NULL;
    f->valid = true;
    d->stamp[slot] = ++d->clock;
    if (!delta) {
        /* A keyframe starts (or restarts) a stream: older frames of another
         * epoch can no longer serve as bases. */
        if (!d->has_epoch || d->epoch != h.epoch)
            for (int i = 0; i < FC_DEC_HISTORY; i++)
                if (i != slot) d->hist[i].valid = false;
        d->epoch = h.epoch;
        d->has_epoch = true;
    }
    return f;
}
