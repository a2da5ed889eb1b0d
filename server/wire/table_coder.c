/* table_coder.c - the static-table entropy coder (see table_coder.h):
 * the value split, frequency normalisation, table checks, the rANS encoder
 * and the raw bit writer.  rANS after Duda, "Asymmetric numeral systems"
 * (2013), in the interleaved form of Giesen's ryg_rans (2014) with
 * 16-bit renormalisation words (its rans_word variant) and three states:
 * 32-bit states in [2^16, 2^32), 12-bit frequencies. */
#include "table_coder.h"

/* Symbol s: class 0 and 1 are symbols 0 and 1; class c >= 2 is 2c - 2 plus
 * its top mantissa bit.  Raw bits: the sign (classes >= 1), then the c - 2
 * mantissa bits below the top one. */
const uint8_t tc_sym_class[TC_NSYM] = {0, 1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,  8,  9,
                                       9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16, 17, 17};
const uint8_t tc_sym_nraw[TC_NSYM] = {0, 1, 1, 1,  2,  2,  3,  3,  4,  4,  5,  5,  6,  6,  7,  7,  8,
                                      8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13, 14, 14, 15, 15, 16, 16};
const uint32_t tc_sym_base[TC_NSYM] = {0,    1,    2,    3,     4,     6,     8,     12,    16,    24,   32,   48,
                                       64,   96,   128,  192,   256,   384,   512,   768,   1024,  1536, 2048, 3072,
                                       4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536, 98304};

const int8_t tc_joint_val[TC_JOINT_ESC][3] = {
#define TC_J(s)                                                                                                        \
    { (int8_t)((s) / 25 - 2), (int8_t)((s) / 5 % 5 - 2), (int8_t)((s) % 5 - 2) }
#define TC_J5(s) TC_J(s), TC_J(s + 1), TC_J(s + 2), TC_J(s + 3), TC_J(s + 4)
#define TC_J25(s) TC_J5(s), TC_J5(s + 5), TC_J5(s + 10), TC_J5(s + 15), TC_J5(s + 20)
    TC_J25(0), TC_J25(25), TC_J25(50), TC_J25(75), TC_J25(100)
#undef TC_J25
#undef TC_J5
#undef TC_J
};

tc_split tc_split_value(int32_t v) {
    uint32_t m = (uint32_t)(v < 0 ? -(int64_t)v : v);
    tc_split s = {0, 0, 0};
    if (!m) return s;
    int c = 0;
    for (uint32_t t = m; t; t >>= 1) c++;
    if (c == 1) {
        s.sym = 1, s.nraw = 1, s.raw = v < 0;
        return s;
    }
    s.sym = (uint8_t)(2 * c - 2 + ((m >> (c - 2)) & 1));
    s.nraw = (uint8_t)(c - 1);
    s.raw = (uint32_t)(v < 0) | (m & ((1u << (c - 2)) - 1)) << 1;
    return s;
}

void tc_normalize(tc_tables *t, int ctx, const uint32_t *count) {
    uint64_t total = 0;
    int nsym = 0;
    for (int s = 0; s < TC_SYM_MAX; s++)
        if (count[s]) total += count[s], nsym = s + 1;
    t->nsym[ctx] = (uint8_t)nsym;
    uint16_t *f = t->freq[ctx];
    memset(f, 0, sizeof t->freq[ctx]);
    if (!total) return;
    int32_t sum = 0;
    for (int s = 0; s < nsym; s++) {
        if (!count[s]) continue;
        uint64_t v = (count[s] * (uint64_t)TC_SCALE + total / 2) / total;
        f[s] = (uint16_t)(v ? v : 1);
        sum += f[s];
    }
    /* Rounding leaves the sum off by at most a few per symbol: the largest
     * frequencies take the difference (none goes below 1). */
    while (sum != (int32_t)TC_SCALE) {
        int big = 0;
        for (int s = 1; s < nsym; s++)
            if (f[s] > f[big]) big = s;
        int32_t d = (int32_t)TC_SCALE - sum;
        if (d < 0 && -d >= f[big]) d = 1 - f[big];
        f[big] = (uint16_t)(f[big] + d);
        sum += d;
    }
    for (int s = 0, c = 0; s <= nsym; c += s < nsym ? f[s] : 0, s++) t->cum[ctx][s] = (uint16_t)c;
}

bool tc_build_context(tc_tables *t, int ctx, int nsym, const uint16_t *freq) {
    if (nsym < 0 || nsym > tc_ctx_nsym(ctx)) return false;
    uint32_t c = 0;
    for (int s = 0; s < nsym; s++) {
        if (freq[s] > TC_SCALE - c) return false;
        t->freq[ctx][s] = freq[s];
        t->cum[ctx][s] = (uint16_t)c;
        t->fc[ctx][s] = freq[s] | c << 16;
        memset(&t->slot[ctx][c], s, freq[s]);
        c += freq[s];
    }
    t->nsym[ctx] = (uint8_t)nsym;
    return nsym == 0 || c == TC_SCALE;
}

size_t tc_rans_encode(const tc_tables *t, const uint8_t *sym, const uint8_t *ctx, const uint8_t *state, int n,
                      uint8_t *buf, size_t cap) {
    uint8_t *tmp = buf, *p = buf + cap;
    uint32_t x[TC_STATES];
    for (int i = 0; i < TC_STATES; i++) x[i] = TC_RANS_L;
    for (int i = n - 1; i >= 0; i--) {
        uint32_t *st = &x[state ? state[i] : i % TC_STATES];
        uint32_t f = t->freq[ctx[i]][sym[i]];
        uint64_t xmax = (uint64_t)((TC_RANS_L >> TC_SCALE_BITS) << 16) * f;
        if (*st >= xmax) { /* once at most: x < 2^32, so x >> 16 < 2^16 <= xmax */
            if (p - tmp < 2) return 0;
            p -= 2;
            p[0] = (uint8_t)*st, p[1] = (uint8_t)(*st >> 8);
            *st >>= 16;
        }
        *st = ((*st / f) << TC_SCALE_BITS) + *st % f + t->cum[ctx[i]][sym[i]];
    }
    if ((size_t)(p - tmp) < 4 * TC_STATES) return 0;
    p -= 4 * TC_STATES;
    for (int i = 0; i < TC_STATES; i++)
        for (int b = 0; b < 4; b++) p[4 * i + b] = (uint8_t)(x[i] >> (8 * b));
    return (size_t)(tmp + cap - p);
}

void tc_bits_init(tc_bit_writer *w, uint8_t *out, size_t cap) {
    w->out = out, w->len = 0, w->cap = cap, w->acc = 0, w->nacc = 0, w->overflow = false;
}

void tc_bits_put(tc_bit_writer *w, uint32_t v, int n) {
    w->acc |= (uint64_t)v << w->nacc;
    w->nacc += n;
    while (w->nacc >= 8) {
        if (w->len < w->cap)
            w->out[w->len++] = (uint8_t)w->acc;
        else
            w->overflow = true;
        w->acc >>= 8;
        w->nacc -= 8;
    }
}

void tc_bits_flush(tc_bit_writer *w) {
    if (w->nacc > 0) tc_bits_put(w, 0, 8 - w->nacc);
}
