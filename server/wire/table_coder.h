/* table_coder.h - the static-table entropy coder of protocol v2's fast
 * payloads (protocol/PROTOCOL.md, "The table coder"): integers split into a
 * symbol (magnitude class and top mantissa bit) coded by three interleaved
 * rANS states against per-context frequency tables sent with the payload,
 * and raw bits (the rest of the mantissa, the sign) in a bit stream apart.
 *
 * A decoder takes one table lookup per symbol, where the adaptive binary
 * coder (range_coder.h) takes one binary decision per magnitude class and
 * mantissa bit: docs/wire-v2.md, "The table coder".
 *
 * Pure functions on caller-owned values; no allocation.  The decoding
 * functions are inline: they run once per coded value.  Every read is
 * bounded by its stream's end (reads past it give zeros and set a flag), and
 * a decoder state out of range is refused before use, so a hostile payload
 * costs at most its own length in work. */
#ifndef SRV_TABLE_CODER_H
#define SRV_TABLE_CODER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TC_SCALE_BITS 12
#define TC_SCALE (1u << TC_SCALE_BITS)
#define TC_NSYM 34       /* magnitude classes 0..17 (|v| < 2^17), each class >= 2 split by its top mantissa bit */
#define TC_JOINT_ESC 125 /* joint symbols: 0..124 a particle's three values in [-2, 2]; 125 the escape */
#define TC_JOINT_NSYM 126
#define TC_SYM_MAX 126 /* the largest alphabet (array sizes) */
#define TC_AXIS_CTX 12 /* contexts 0..11: axis x speed; 12..15: joint symbols by speed */
#define TC_MAX_CTX 16
#define TC_RANS_L (1u << 16) /* the states' lower bound; renormalisation by 16-bit words */
#define TC_STATES 3          /* interleaved rANS states: value i uses state i % 3 (a particle's axis) */

/* Frequency tables of every context, and the decoder's slot-to-symbol
 * lookup.  Part of an encoder's or decoder's scratch (one thread). */
typedef struct tc_tables {
    uint8_t nsym[TC_MAX_CTX]; /* symbols 0..nsym-1 have a frequency; 0: the context is unused */
    uint16_t freq[TC_MAX_CTX][TC_SYM_MAX];
    uint16_t cum[TC_MAX_CTX][TC_SYM_MAX + 1];
    uint8_t slot[TC_MAX_CTX][TC_SCALE];  /* decoder: slot -> symbol */
    uint32_t fc[TC_MAX_CTX][TC_SYM_MAX]; /* decoder: freq | cum << 16, one load */
} tc_tables;

/* The split of a signed value: symbol, and nraw raw bits (sign lowest, then
 * the mantissa below its top bit).  |v| must be below 2^17. */
typedef struct tc_split {
    uint8_t sym, nraw;
    uint32_t raw;
} tc_split;
tc_split tc_split_value(int32_t v);

/* Per symbol: its magnitude class, its raw bit count, and the magnitude
 * without the raw mantissa. */
extern const uint8_t tc_sym_class[TC_NSYM];
extern const uint8_t tc_sym_nraw[TC_NSYM];
extern const uint32_t tc_sym_base[TC_NSYM];

/* The alphabet of context ctx: TC_NSYM for an axis, TC_JOINT_NSYM for
 * joint symbols. */
static inline int tc_ctx_nsym(int ctx) {
    return ctx < TC_AXIS_CTX ? TC_NSYM : TC_JOINT_NSYM;
}

/* The joint symbol of three values: 25 (e0 + 2) + 5 (e1 + 2) + e2 + 2 when
 * all lie in [-2, 2], else the escape. */
static inline int tc_joint_sym(int32_t e0, int32_t e1, int32_t e2) {
    bool in = (uint32_t)(e0 + 2) <= 4 && (uint32_t)(e1 + 2) <= 4 && (uint32_t)(e2 + 2) <= 4;
    return in ? 25 * (e0 + 2) + 5 * (e1 + 2) + e2 + 2 : TC_JOINT_ESC;
}
/* The three values of joint symbol s (< TC_JOINT_ESC). */
extern const int8_t tc_joint_val[TC_JOINT_ESC][3];

/* Frequencies (and cumulative frequencies) of one context from its symbol
 * counts (TC_SYM_MAX of them): every counted symbol gets at least 1, the
 * total is TC_SCALE.  An all-zero count leaves the context unused. */
void tc_normalize(tc_tables *t, int ctx, const uint32_t *count);
/* Checks one context's decoded frequencies (nsym symbols, at most its
 * alphabet) and builds its cumulative table and slot lookup.  False when
 * they do not sum to TC_SCALE or nsym is too large. */
bool tc_build_context(tc_tables *t, int ctx, int nsym, const uint16_t *freq);

/* rANS encoding of n symbols with their contexts (tables from
 * tc_normalize) and states (NULL: symbol i on state i % TC_STATES), written
 * as the decoder reads it (TC_STATES 32-bit states, then the
 * renormalisation words) at the end of buf[0, cap).  Returns the length len
 * (the stream is buf + cap - len), or 0 when cap is too small. */
size_t tc_rans_encode(const tc_tables *t, const uint8_t *sym, const uint8_t *ctx, const uint8_t *state, int n,
                      uint8_t *buf, size_t cap);

/* A raw bit stream, least significant bit first. */
typedef struct tc_bit_writer {
    uint8_t *out;
    size_t len, cap;
    uint64_t acc;
    int nacc;
    bool overflow;
} tc_bit_writer;
void tc_bits_init(tc_bit_writer *w, uint8_t *out, size_t cap);
void tc_bits_put(tc_bit_writer *w, uint32_t v, int n); /* n <= 32 */
void tc_bits_flush(tc_bit_writer *w);

/* ---- Decoding (inline) ---------------------------------------------------- */

typedef struct tc_rans_dec {
    uint32_t x[TC_STATES];
    const uint8_t *p, *end;
    bool overrun;
} tc_rans_dec;

/* False when the stream is shorter than its states or a state is out of
 * range. */
static inline bool tc_rans_dec_init(tc_rans_dec *d, const uint8_t *p, size_t n) {
    d->overrun = false;
    d->end = p + n;
    if (n < 4 * TC_STATES) return false;
    bool ok = true;
    for (int i = 0; i < TC_STATES; i++) {
        d->x[i] = (uint32_t)p[4 * i] | (uint32_t)p[4 * i + 1] << 8 | (uint32_t)p[4 * i + 2] << 16 |
                  (uint32_t)p[4 * i + 3] << 24;
        ok &= d->x[i] >= TC_RANS_L;
    }
    d->p = p + 4 * TC_STATES;
    return ok;
}

/* The next symbol of state s (0..TC_STATES-1) in context ctx, which must be used.
 * A state starts in [L, 2^32) = [2^16, 2^32) and stays there: the update
 * leaves it at least 2^4 (a frequency of at least 1 times x >> 12 >= 16), and
 * one 16-bit word brings it back above L.  Whether the word is taken depends
 * on this state alone, so the stream pointer's chain through the three
 * states is a chain of adds, not of loads (ryg_rans' rans_word variant,
 * Giesen 2014).  With `room` (two bytes left in the stream) the word is taken
 * without a branch; otherwise it is checked against the end. */
static inline int tc_rans_get(tc_rans_dec *d, const tc_tables *t, int s, int ctx, bool room) {
    uint32_t x = d->x[s];
    uint32_t slot = x & (TC_SCALE - 1);
    int sym = t->slot[ctx][slot];
    uint32_t fc = t->fc[ctx][sym];
    x = (fc & 0xffff) * (x >> TC_SCALE_BITS) + slot - (fc >> 16);
    if (room) { /* a mask, not a branch: whether a word is taken is data, unpredictable */
        uint32_t m = 0u - (uint32_t)(x < TC_RANS_L);
        uint32_t w = (uint32_t)d->p[0] | (uint32_t)d->p[1] << 8;
        x = x << (m & 16) | (w & m);
        d->p += m & 2;
    } else if (x < TC_RANS_L) {
        if (d->end - d->p >= 2)
            x = x << 16 | (uint32_t)d->p[0] | (uint32_t)d->p[1] << 8, d->p += 2;
        else
            x <<= 16, d->p = d->end, d->overrun = true;
    }
    d->x[s] = x;
    return sym;
}

typedef struct tc_bit_reader {
    const uint8_t *p, *end;
    uint64_t acc;
    int nacc;
    int64_t pad;
} tc_bit_reader;

static inline void tc_bitr_init(tc_bit_reader *r, const uint8_t *p, size_t n) {
    r->p = p, r->end = p + n, r->acc = 0, r->nacc = 0, r->pad = 0;
}

/* Tops the reader up to at least 56 bits.  Past the end it adds zeros and
 * counts them (pad), so that tc_bitr_left can tell.  The fast path is the
 * branch-free refill of Giesen's "Reading bits in far too many ways" (2018):
 * the bytes past those counted are or-ed in again, identically, next time. */
static inline void tc_bitr_fill(tc_bit_reader *r) {
    if (r->end - r->p >= 8) {
        uint64_t w;
        memcpy(&w, r->p, 8); /* little-endian hosts only: wasm32, x86-64, aarch64 */
        r->acc |= w << r->nacc;
        r->p += (63 - r->nacc) >> 3;
        r->nacc |= 56;
        return;
    }
    while (r->nacc <= 56) {
        if (r->p < r->end)
            r->acc |= (uint64_t)*r->p++ << r->nacc;
        else
            r->pad += 8;
        r->nacc += 8;
    }
}

/* n <= 32 bits; the caller keeps nacc >= n by filling. */
static inline uint32_t tc_bitr_take(tc_bit_reader *r, int n) {
    uint32_t v = (uint32_t)(r->acc & ((1ull << n) - 1));
    r->acc >>= n;
    r->nacc -= n;
    return v;
}

/* The stream's bits not yet taken: negative when the reader took zeros past
 * the end. */
static inline int64_t tc_bitr_left(const tc_bit_reader *r) {
    return (int64_t)(r->end - r->p) * 8 + r->nacc - r->pad;
}

/* The value of a decoded symbol and its raw bits. */
static inline int32_t tc_join(int sym, uint32_t raw) {
    int32_t m = (int32_t)(tc_sym_base[sym] + (raw >> 1)), neg = -(int32_t)(raw & 1);
    return (m ^ neg) - neg;
}

#endif
