/* range_coder.h - the adaptive binary range coder of protocol v2's frame
 * payloads (protocol/PROTOCOL.md, "Body: the range coder") and its integer
 * code: 11-bit probabilities adapted by a shift of 5 (the shape LZMA uses);
 * an integer as its magnitude class in unary, a modelled top mantissa bit,
 * the rest of the mantissa raw, then its sign.
 *
 * One state serves both directions: a flag says whether it encodes (values
 * in, bytes out) or decodes (bytes in, values out), so that a walk written
 * once (frame_walk.c) codes both ends alike.  Inline: the coder runs once
 * per coded bit.  Pure functions on a caller-owned state; no allocation.
 * A decoder reading past its input gets zeros and sets `overrun`; an
 * encoder writing past its buffer counts the bytes and sets `overflow`. */
#ifndef SRV_RANGE_CODER_H
#define SRV_RANGE_CODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define RC_PROB_BITS 11
#define RC_PROB_ONE (1u << RC_PROB_BITS)
#define RC_PROB_SHIFT 5
#define RC_NCLS 33 /* magnitude classes 0..32: class c holds 2^(c-1) <= m < 2^c */

/* Coder state: a local of one encode or decode call. */
typedef struct rc {
    bool dec;
    /* encoder */
    uint64_t low;
    uint32_t range;
    uint8_t cache;
    uint64_t cache_size;
    uint8_t *out;
    size_t len, cap;
    bool overflow;
    /* decoder */
    uint32_t code;
    const uint8_t *in;
    size_t pos, n;
    bool overrun;
} rc;

static inline void rc_out(rc *r, uint8_t b) {
    if (r->len < r->cap)
        r->out[r->len] = b;
    else
        r->overflow = true;
    r->len++;
}

static inline void rc_shift_low(rc *r) {
    if ((uint32_t)r->low < 0xff000000u || (r->low >> 32) != 0) {
        uint8_t carry = (uint8_t)(r->low >> 32), t = r->cache;
        do {
            rc_out(r, (uint8_t)(t + carry));
            t = 0xff;
        } while (--r->cache_size != 0);
        r->cache = (uint8_t)(r->low >> 24);
    }
    r->cache_size++;
    r->low = (r->low & 0x00ffffffu) << 8;
}

static inline uint8_t rc_in(rc *r) {
    if (r->pos < r->n) return r->in[r->pos++];
    r->overrun = true;
    return 0;
}

static inline void rc_enc_init(rc *r, uint8_t *out, size_t cap) {
    memset(r, 0, sizeof *r);
    r->range = 0xffffffffu;
    r->cache_size = 1;
    r->out = out;
    r->cap = cap;
}

static inline void rc_enc_flush(rc *r) {
    for (int i = 0; i < 5; i++) rc_shift_low(r);
}

static inline void rc_dec_init(rc *r, const uint8_t *in, size_t n) {
    memset(r, 0, sizeof *r);
    r->dec = true;
    r->in = in;
    r->n = n;
    r->range = 0xffffffffu;
    for (int i = 0; i < 5; i++) r->code = (r->code << 8) | rc_in(r);
}

/* A bit on adaptive probability *p (of a 0): encodes `bit`, or decodes and
 * returns one. */
static inline int rc_bit(rc *r, uint16_t *p, int bit) {
    uint32_t bound = (r->range >> RC_PROB_BITS) * *p;
    if (r->dec) {
        if (r->code < bound) {
            r->range = bound;
            *p += (uint16_t)((RC_PROB_ONE - *p) >> RC_PROB_SHIFT);
            bit = 0;
        } else {
            r->code -= bound;
            r->range -= bound;
            *p -= (uint16_t)(*p >> RC_PROB_SHIFT);
            bit = 1;
        }
        while (r->range < (1u << 24)) {
            r->range <<= 8;
            r->code = (r->code << 8) | rc_in(r);
        }
        return bit;
    }
    if (!bit) {
        r->range = bound;
        *p += (uint16_t)((RC_PROB_ONE - *p) >> RC_PROB_SHIFT);
    } else {
        r->low += bound;
        r->range -= bound;
        *p -= (uint16_t)(*p >> RC_PROB_SHIFT);
    }
    while (r->range < (1u << 24)) {
        r->range <<= 8;
        rc_shift_low(r);
    }
    return bit;
}

/* A bit at probability one half. */
static inline int rc_direct(rc *r, int bit) {
    r->range >>= 1;
    if (r->dec) {
        bit = r->code >= r->range;
        if (bit) r->code -= r->range;
        while (r->range < (1u << 24)) {
            r->range <<= 8;
            r->code = (r->code << 8) | rc_in(r);
        }
        return bit;
    }
    if (bit) r->low += r->range;
    while (r->range < (1u << 24)) {
        r->range <<= 8;
        rc_shift_low(r);
    }
    return bit;
}

/* ---- Integers --------------------------------------------------------------- */

/* One adaptive integer model.  Part of a model table (frame_walk.h). */
typedef struct int_model {
    uint16_t cls[RC_NCLS];
    uint16_t mant[RC_NCLS];
    uint16_t sign;
} int_model;

/* The magnitude class of m: its bit length (0 for 0). */
static inline int rc_mag_class(uint32_t m) {
#if defined(__GNUC__)
    return m ? 32 - __builtin_clz(m) : 0;
#else
    int c = 0;
    while (m) {
        c++;
        m >>= 1;
    }
    return c;
#endif
}

/* Codes m (encoder) or returns the decoded magnitude; *cls gets its class. */
static inline uint32_t rc_code_mag(rc *r, int_model *md, uint32_t m, int *cls) {
    int c = r->dec ? 0 : rc_mag_class(m);
    if (r->dec) {
        while (c < RC_NCLS - 1 && rc_bit(r, &md->cls[c], 1)) c++;
    } else {
        for (int i = 0; i < c; i++) rc_bit(r, &md->cls[i], 1);
        if (c < RC_NCLS - 1) rc_bit(r, &md->cls[c], 0);
    }
    *cls = c;
    if (c <= 1) return (uint32_t)c;
    /* m = 2^(c-1) + mantissa of c-1 bits; the top one modelled */
    int nb = c - 1;
    uint32_t v = 1;
    v = (v << 1) | (uint32_t)rc_bit(r, &md->mant[c], (int)((m >> (nb - 1)) & 1));
    for (int b = nb - 2; b >= 0; b--) v = (v << 1) | (uint32_t)rc_direct(r, (int)((m >> b) & 1));
    return v;
}

/* Codes a signed value of magnitude below 2^32. */
static inline int64_t rc_code_int(rc *r, int_model *md, int64_t v, int *cls) {
    uint32_t m = (uint32_t)(v < 0 ? -v : v);
    m = rc_code_mag(r, md, m, cls);
    if (!m) return 0;
    int neg = rc_bit(r, &md->sign, v < 0);
    return neg ? -(int64_t)m : (int64_t)m;
}

/* Codes an unsigned value (the encoder's v, or the decoder's result). */
static inline uint32_t rc_code_u(rc *r, int_model *m, uint32_t v) {
    int c;
    return rc_code_mag(r, m, v, &c);
}

#endif
