/* frame_encoder.c - the frame codec's encoder (frame_codec.h): frames
 * quantized onto the grid and held as the decoder will hold them, and each
 * coded as a keyframe or as a delta against two held frames, whole or in
 * bands (kind 2).  The body's walk is frame_walk.c's, shared with the
 * decoder; a delta's body is then the range-coded stream, the rANS stream
 * and the raw bits (PROTOCOL.md, "The table coder"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame_bands.h"
#include "frame_codec.h"
#include "frame_header.h"
#include "frame_history.h"
#include "frame_walk.h"

/* An encoder: its frames held, its walk's scratch.  Threads: the encoding thread's alone (frame_codec.h). */
struct fc_encoder {
    int cap;
    uint32_t epoch;
    fc_options opt;
    fc_frame hist[FC_HISTORY];
    bool any;
    uint32_t last_seq;
    int nbands; /* the epoch's split (frame_bands.h): 1, or bands from band_lo */
    uint32_t band_lo[FC_MAX_BANDS];
    fc_scratch s;
};

fc_options fc_default_options(void) {
    /* joint symbols from FC_JOINT_MIN particles on (docs/wire-v2.md, "Joint
     * symbols"); bands past FC_BAND_SIZE particles (frame_bands.h) */
    fc_options o = {FC_PRED_CV, FC_JOINT_AUTO, 0};
    return o;
}

static uint16_t quantize(float p, float origin, float step, uint16_t levels) {
    double t = ((double)p - origin) / step;
    if (!(t > 0)) /* also NaN */
        return 0;
    if (t >= levels - 1) return (uint16_t)(levels - 1);
    return (uint16_t)lround(t);
}

static uint8_t temp_byte(float c) {
    if (!(c > -40.0f)) return 0;
    if (c >= 215.0f) return 255;
    return (uint8_t)lrintf(c + 40.0f);
}

fc_encoder *fc_encoder_create(int capacity, uint32_t epoch) {
    fc_encoder *e = fc__codec_alloc(capacity, sizeof *e);
    if (!e) return NULL;
    e->cap = capacity;
    e->epoch = epoch;
    e->nbands = 1;
    e->opt = fc_default_options();
    if (!fc__buffers_alloc(&e->s, e->hist, FC_HISTORY, capacity)) {
        fc_encoder_destroy(e);
        return NULL;
    }
    return e;
}

void fc_encoder_destroy(fc_encoder *e) {
    if (!e) return;
    fc__buffers_free(&e->s, e->hist, FC_HISTORY);
    free(e);
}

void fc_encoder_reset(fc_encoder *e, uint32_t epoch) {
    e->epoch = epoch;
    e->any = false;
    e->nbands = 1;
    fc__history_clear(e->hist, FC_HISTORY);
}

void fc_encoder_set_options(fc_encoder *e, const fc_options *o) {
    e->opt = *o;
}

const fc_frame *fc_encoder_frame(const fc_encoder *e, uint32_t seq) {
    return fc__history_find(e->hist, FC_HISTORY, seq);
}

int fc_encoder_push(fc_encoder *e, uint32_t seq, const fc_grid *g, const fc_input *in, char *err, size_t errlen) {
    if (in->count < 0 || in->count > e->cap) {
        snprintf(err, errlen, "frame of %d particles, the encoder holds at most %d", in->count, e->cap);
        return -1;
    }
    if (seq == FC_NONE || (e->any && seq <= e->last_seq)) {
        snprintf(err, errlen, "frame number %u does not follow %u", seq, e->last_seq);
        return -1;
    }
    for (int a = 0; a < 3; a++)
        if (!g->levels[a] || !(g->step > 0)) {
            snprintf(err, errlen, "bad quantization grid");
            return -1;
        }
    int slot = -1; /* an empty slot, else the oldest frame */
    for (int i = 0; i < FC_HISTORY && slot < 0; i++)
        if (!e->hist[i].valid) slot = i;
    if (slot < 0) {
        slot = 0;
        for (int i = 1; i < FC_HISTORY; i++)
            if (e->hist[i].seq < e->hist[slot].seq) slot = i;
    }
    fc_frame *f = &e->hist[slot];
    f->valid = false;
    for (int k = 0; k < in->count; k++) {
        int i = in->order ? in->order[k] : k;
        if (k && in->id[i] <= f->id[k - 1]) {
            snprintf(err, errlen, "particle ids are not increasing at %d", k);
            return -1;
        }
        f->id[k] = in->id[i];
        f->q[3 * k] = quantize(in->x[i], g->origin[0], g->step, g->levels[0]);
        f->q[3 * k + 1] = quantize(in->y[i], g->origin[1], g->step, g->levels[1]);
        f->q[3 * k + 2] = quantize(in->z[i], g->origin[2], g->step, g->levels[2]);
        f->mat[k] = in->material[i];
        f->temp[k] = in->temp ? temp_byte(in->temp[i]) : 0;
    }
    f->n = in->count;
    f->grid = *g;
    f->seq = seq;
    f->valid = true;
    if (!e->any) e->nbands = fc_bands_choose(f->n, f->id, e->opt.bands, e->band_lo);
    e->any = true;
    e->last_seq = seq;
    return 0;
}

/* The header of frame f of stream `epoch` coded against b and pv (NULL:
 * none) as `kind`; options, checksum and body length zero. */
static fc_header frame_header(int kind, uint32_t epoch, const fc_frame *f, const fc_frame *b, const fc_frame *pv) {
    fc_header h;
    memset(&h, 0, sizeof h);
    h.kind = kind;
    h.epoch = epoch;
    h.seq = f->seq;
    h.base = b ? b->seq : FC_NONE;
    h.prev = pv ? pv->seq : FC_NONE;
    h.n = (uint32_t)f->n;
    h.grid = f->grid;
    return h;
}

/* Frame f coded against b (NULL: a keyframe) with velocities from pv into
 * out: one ordinary payload (kind 0 or 1).  f, b and pv may be band views. */
static size_t encode_one(fc_encoder *e, fc_frame *f, const fc_frame *b, const fc_frame *pv, uint8_t *out, size_t cap,
                         char *err, size_t errlen) {
    /* A delta: two stream lengths, the range-coded stream, the rANS stream,
     * the raw bits.  A keyframe: the range-coded stream alone. */
    bool table = b != NULL;
    size_t pre = table ? 8 : 0;
    if (cap < FC_HEADER_BYTES + pre) {
        snprintf(err, errlen, "output buffer too small");
        return 0;
    }
    rc r;
    rc_enc_init(&r, out + FC_HEADER_BYTES + pre, cap - FC_HEADER_BYTES - pre);
    if (table) tc_bits_init(&e->s.bw, e->s.rbuf, e->s.tbuf_cap);
    fc_options o = e->opt;
    o.bands = 0;
    o.predictor = o.predictor == FC_PRED_ZERO ? FC_PRED_ZERO : FC_PRED_CV;
    /* the header records joint symbols as 0 or 1 */
    o.joint = o.joint == FC_JOINT_ON || (o.joint == FC_JOINT_AUTO && f->n >= FC_JOINT_MIN);
    if (fc__walk(&r, &e->s, &o, f, b, pv, err, errlen)) return 0;
    rc_enc_flush(&r);
    size_t body = r.len, rl = 0;
    if (table) {
        rl = tc_rans_encode(e->s.tab, e->s.tsym, e->s.tctx, e->s.tst, e->s.tn, e->s.tbuf, e->s.tbuf_cap);
        tc_bits_flush(&e->s.bw);
        if (!rl || e->s.bw.overflow) {
            snprintf(err, errlen, "the table coder's buffers are too small");
            return 0;
        }
        body = pre + r.len + rl + e->s.bw.len;
    }
    if (r.overflow || FC_HEADER_BYTES + body > cap) {
        snprintf(err, errlen, "output buffer too small (%zu bytes needed)", FC_HEADER_BYTES + body);
        return 0;
    }
    if (table) {
        uint8_t *q = out + FC_HEADER_BYTES;
        fc__put32(q, (uint32_t)r.len), fc__put32(q + 4, (uint32_t)rl);
        memcpy(q + pre + r.len, e->s.tbuf + e->s.tbuf_cap - rl, rl);
        memcpy(q + pre + r.len + rl, e->s.rbuf, e->s.bw.len);
    }
    fc_header h = frame_header(b ? 1 : 0, e->epoch, f, b, pv);
    h.options = o;
    h.checksum = fc__checksum(f);
    h.body_len = (uint32_t)body;
    fc__write_header(out, &h);
    return FC_HEADER_BYTES + body;
}

/* Frame f as bands (kind 2): the table, then each band coded against the
 * same id range of b and pv. */
static size_t encode_bands(fc_encoder *e, fc_frame *f, const fc_frame *b, const fc_frame *pv, uint8_t *out, size_t cap,
                           char *err, size_t errlen) {
    fc_band_table t;
    t.k = e->nbands;
    size_t table = fc_bands_table_bytes(t.k), at = FC_HEADER_BYTES + table;
    if (cap < at) {
        snprintf(err, errlen, "output buffer too small");
        return 0;
    }
    for (int i = 0; i < t.k; i++) {
        t.lo[i] = e->band_lo[i];
        fc_frame fv = fc__band_view(f, e->band_lo, t.k, i), bv, pvv;
        if (b) bv = fc__band_view(b, e->band_lo, t.k, i);
        if (pv) pvv = fc__band_view(pv, e->band_lo, t.k, i);
        size_t len = encode_one(e, &fv, b ? &bv : NULL, pv ? &pvv : NULL, out + at, cap - at, err, errlen);
        if (!len) return 0;
        t.len[i] = (uint32_t)len;
        at += len;
    }
    fc_bands_write(out + FC_HEADER_BYTES, &t);
    fc_header h = frame_header(2, e->epoch, f, b, pv);
    h.body_len = (uint32_t)(at - FC_HEADER_BYTES);
    fc__write_header(out, &h);
    return at;
}

size_t fc_encode(fc_encoder *e, uint32_t seq, uint32_t base, uint32_t prev, uint8_t *out, size_t cap, char *err,
                 size_t errlen) {
    fc_frame *f = (fc_frame *)fc_encoder_frame(e, seq);
    const fc_frame *b = base == FC_NONE ? NULL : fc_encoder_frame(e, base);
    const fc_frame *pv = prev == FC_NONE ? NULL : fc_encoder_frame(e, prev);
    if (!f || (base != FC_NONE && !b) || (prev != FC_NONE && !pv)) {
        snprintf(err, errlen, "frame %u, base %u or prev %u is not held", seq, base, prev);
        return 0;
    }
    if ((b && (base >= seq || !fc__grid_equal(&b->grid, &f->grid))) ||
        (pv && (!b || prev >= base || !fc__grid_equal(&pv->grid, &f->grid)))) {
        snprintf(err, errlen, "base %u / prev %u cannot serve frame %u (order or grid)", base, prev, seq);
        return 0;
    }
    if (e->nbands > 1) return encode_bands(e, f, b, pv, out, cap, err, errlen);
    return encode_one(e, f, b, pv, out, cap, err, errlen);
}

const int32_t *fc_encoder_residuals(const fc_encoder *e, int *count) {
    *count = e->s.nres;
    return e->s.res;
}
