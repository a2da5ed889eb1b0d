/* frame_codec.c - protocol v2's particle payload: see frame_codec.h and
 * protocol/PROTOCOL.md ("Frame payload, version 2").
 *
 * One function per frame kind walks the particles in the same order on
 * both ends; a flag says whether it encodes (values in, bits out) or decodes
 * (bits in, values out), so the two cannot disagree.  The entropy coder is
 * a binary range coder with adaptive probabilities (11-bit, the shape LZMA
 * uses); integers are coded as a magnitude class in unary, a sign and the
 * mantissa (top bit modelled, the rest raw), with contexts chosen by the
 * particle's speed and its neighbours' residuals.  A delta's residuals may
 * instead go through the table coder (table_coder.h: rANS on per-frame
 * tables, the default), which decodes a value per table lookup. */
#include "frame_codec.h"

#include "frame_bands.h"
#include "table_coder.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROB_BITS 11
#define PROB_ONE (1u << PROB_BITS)
#define PROB_SHIFT 5
#define NCLS 33 /* magnitude classes 0..32: class c holds 2^(c-1) <= m < 2^c */
#define CELLS_MAX (1u << 18)
#define CELL_SHIFT_MIN 4
#define SPEED_CTX 4
#define NB_CTX 4

/* ---- Range coder ---------------------------------------------------------- */

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

static void rc_out(rc *r, uint8_t b) {
    if (r->len < r->cap)
        r->out[r->len] = b;
    else
        r->overflow = true;
    r->len++;
}

static void rc_shift_low(rc *r) {
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

static uint8_t rc_in(rc *r) {
    if (r->pos < r->n) return r->in[r->pos++];
    r->overrun = true;
    return 0;
}

static void rc_enc_init(rc *r, uint8_t *out, size_t cap) {
    memset(r, 0, sizeof *r);
    r->range = 0xffffffffu;
    r->cache_size = 1;
    r->out = out;
    r->cap = cap;
}

static void rc_enc_flush(rc *r) {
    for (int i = 0; i < 5; i++) rc_shift_low(r);
}

static void rc_dec_init(rc *r, const uint8_t *in, size_t n) {
    memset(r, 0, sizeof *r);
    r->dec = true;
    r->in = in;
    r->n = n;
    r->range = 0xffffffffu;
    for (int i = 0; i < 5; i++) r->code = (r->code << 8) | rc_in(r);
}

static inline int rc_bit(rc *r, uint16_t *p, int bit) {
    uint32_t bound = (r->range >> PROB_BITS) * *p;
    if (r->dec) {
        if (r->code < bound) {
            r->range = bound;
            *p += (uint16_t)((PROB_ONE - *p) >> PROB_SHIFT);
            bit = 0;
        } else {
            r->code -= bound;
            r->range -= bound;
            *p -= (uint16_t)(*p >> PROB_SHIFT);
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
        *p += (uint16_t)((PROB_ONE - *p) >> PROB_SHIFT);
    } else {
        r->low += bound;
        r->range -= bound;
        *p -= (uint16_t)(*p >> PROB_SHIFT);
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

/* One adaptive integer model.  Part of a model table (below). */
typedef struct int_model {
    uint16_t cls[NCLS];
    uint16_t mant[NCLS];
    uint16_t sign;
} int_model;

static int mag_class(uint32_t m) {
    int c = 0;
    while (m) {
        c++;
        m >>= 1;
    }
    return c;
}

/* Codes m (encoder) or returns the decoded magnitude; *cls gets its class. */
static uint32_t code_mag(rc *r, int_model *md, uint32_t m, int *cls) {
    int c = r->dec ? 0 : mag_class(m);
    if (r->dec) {
        while (c < NCLS - 1 && rc_bit(r, &md->cls[c], 1)) c++;
    } else {
        for (int i = 0; i < c; i++) rc_bit(r, &md->cls[i], 1);
        if (c < NCLS - 1) rc_bit(r, &md->cls[c], 0);
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
static int64_t code_int(rc *r, int_model *md, int64_t v, int *cls) {
    uint32_t m = (uint32_t)(v < 0 ? -v : v);
    m = code_mag(r, md, m, cls);
    if (!m) return 0;
    int neg = rc_bit(r, &md->sign, v < 0);
    return neg ? -(int64_t)m : (int64_t)m;
}

/* ---- Models and contexts ----------------------------------------------------- */

/* Every adaptive probability of one payload; reset at the start of each.
 * Part of an encoder or decoder context. */
typedef struct models {
    int_model tres[3][SPEED_CTX][NB_CTX]; /* temporal residuals: axis, speed, neighbour activity */
    int_model spat[3][NB_CTX];            /* spatial residuals (keyframes, new particles) */
    int_model count, gap, idfirst, runlen;
    int_model mat, temp, matchg, tempchg;
    int_model tabn, tabf; /* the table coder's tables */
} models;

static void models_reset(models *m) {
    uint16_t *p = (uint16_t *)m;
    size_t k = sizeof *m / sizeof *p;
    for (size_t i = 0; i < k; i++) p[i] = PROB_ONE / 2;
}

/* The speed context of a particle whose largest velocity component has
 * magnitude m (levels per frame). */
static inline int speed_of(int32_t m) {
    return (m > 1) + (m > 4) + (m > 12);
}

static int speed_ctx(int32_t vx, int32_t vy, int32_t vz) {
    int32_t s = abs(vx);
    if (abs(vy) > s) s = abs(vy);
    if (abs(vz) > s) s = abs(vz);
    return speed_of(s);
}

static int nb_ctx(int prev_cls, int this_prev_axis_cls) {
    int a = prev_cls + this_prev_axis_cls;
    return a == 0 ? 0 : a <= 2 ? 1 : a <= 4 ? 2 : 3;
}

/* Rounded quotient, symmetric about zero. */
static int32_t rdiv(int64_t s, int64_t c) {
    return (int32_t)(s >= 0 ? (s + c / 2) / c : -((-s + c / 2) / c));
}

/* ---- Grid and checksum ---------------------------------------------------------- */

float fc_default_step(const float lo[3], const float hi[3], float spacing) {
    float L = 0;
    for (int a = 0; a < 3; a++)
        if (hi[a] - lo[a] > L) L = hi[a] - lo[a];
    float s = L / 1024.0f;
    if (spacing > 0 && spacing / 10.0f < s) s = spacing / 10.0f;
    return s;
}

int fc_grid_make(fc_grid *g, const float lo[3], const float hi[3], float step, char *err, size_t errlen) {
    memset(g, 0, sizeof *g);
    if (!(step > 0) || !isfinite(step)) {
        snprintf(err, errlen, "quantization step must be positive (got %g)", (double)step);
        return -1;
    }
    g->step = step;
    for (int a = 0; a < 3; a++) {
        double span = (double)hi[a] - (double)lo[a];
        if (!(span >= 0) || !isfinite(span) || !isfinite(lo[a])) {
            snprintf(err, errlen, "box axis %d is empty or not finite", a);
            return -1;
        }
        double lv = ceil(span / step) + 1;
        if (lv > FC_MAX_LEVELS) {
            snprintf(err, errlen, "quantization step %g m gives %.0f levels on axis %d (at most %d)", (double)step, lv,
                     a, FC_MAX_LEVELS);
            return -1;
        }
        g->origin[a] = lo[a];
        g->levels[a] = (uint16_t)lv;
    }
    return 0;
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

static uint32_t frame_checksum(const fc_frame *f) {
    /* a = 1 + sum x_i and b = n + sum_i a_i over the m = 5 n words x_1..x_m
     * (per particle: id, q[3], material | temperature << 8), as PROTOCOL.md
     * defines them, in closed form: b = n + m + (m + 1) sum x_i - sum i x_i,
     * modulo 2^32.  Each array is then summed on its own, without a chain
     * from one add to the next, and the loops vectorise.  Particle k's words
     * are x_{5k+1} (id), x_{5k+2..5k+4} (q), x_{5k+5}. */
    const int n = f->n;
    uint32_t sx = 0, sw = 0;
    for (int k = 0; k < n; k++) {
        uint32_t id = f->id[k], mt = (uint32_t)f->mat[k] | (uint32_t)f->temp[k] << 8;
        sx += id + mt;
        sw += (5u * (uint32_t)k + 1u) * id + (5u * (uint32_t)k + 5u) * mt;
    }
    /* q in groups of 8 particles: lane j of group g holds x_i with
     * i = 40 g + off[j], off[j] = 5 (j / 3) + j % 3 + 2 */
    uint32_t lq[24] = {0}, lg[24] = {0}, off[24];
    for (int j = 0; j < 24; j++) off[j] = 5u * (uint32_t)(j / 3) + (uint32_t)(j % 3) + 2u;
    const uint16_t *q = f->q;
    int k = 0;
    for (; k + 8 <= n; k += 8) {
        const uint32_t g = (uint32_t)k / 8u;
        for (int j = 0; j < 24; j++) lq[j] += q[3 * k + j], lg[j] += g * q[3 * k + j];
    }
    for (int j = 0; j < 24; j++) sx += lq[j], sw += 40u * lg[j] + off[j] * lq[j];
    for (; k < n; k++)
        for (int a = 0; a < 3; a++) {
            uint32_t x = q[3 * k + a];
            sx += x, sw += (5u * (uint32_t)k + 2u + (uint32_t)a) * x;
        }
    uint32_t m = 5u * (uint32_t)n;
    uint32_t a = 1u + sx, b = (uint32_t)n + m + (m + 1u) * sx - sw;
    return a ^ (b << 16 | b >> 16);
}

static bool grid_equal(const fc_grid *a, const fc_grid *b) {
    return !memcmp(a->origin, b->origin, sizeof a->origin) && a->step == b->step &&
           !memcmp(a->levels, b->levels, sizeof a->levels);
}

static int cell_shift(const fc_grid *g, uint32_t *nx, uint32_t *ny, uint32_t *nz) {
    int s = CELL_SHIFT_MIN;
    for (;; s++) {
        *nx = (uint32_t)(g->levels[0] >> s) + 1;
        *ny = (uint32_t)(g->levels[1] >> s) + 1;
        *nz = (uint32_t)(g->levels[2] >> s) + 1;
        if ((uint64_t)*nx * *ny * *nz <= CELLS_MAX) return s;
    }
}

/* ---- Contexts ------------------------------------------------------------------ */

/* Scratch of one coding walk, sized by capacity at create.  Part of an
 * encoder or decoder. */
typedef struct scratch {
    int cap;
    models m;
    uint32_t *removed, *added;
    int32_t *bidx, *pidx, *ord, *res;
    int32_t *kin;  /* per particle (frame index): base q[3], velocity[3], has velocity, cell */
    int32_t *pred; /* per coding position: prediction[3], speed context */
    uint32_t *cell, *count;
    int nres;
    bool ident;  /* this delta keeps the base's particles as they are: bidx[k] = k */
    bool pident; /* ... and the base keeps the previous frame's: pidx[k] = k */
    /* the table coder: its tables; the encoder's symbols, contexts, counts
     * and raw bits (tn values), the decoder's streams */
    tc_tables *tab;
    uint8_t *tsym, *tctx, *tst, *tbuf, *rbuf; /* tst: each symbol's rANS state */
    size_t tbuf_cap;
    uint32_t tcount[TC_MAX_CTX][TC_SYM_MAX];
    int tn;
    tc_bit_writer bw;
    tc_rans_dec rd;
    tc_bit_reader br;
} scratch;

static void scratch_free(scratch *s) {
    free(s->removed), free(s->added), free(s->bidx), free(s->pidx), free(s->ord);
    free(s->pred), free(s->kin), free(s->res), free(s->cell), free(s->count);
    free(s->tab), free(s->tsym), free(s->tctx), free(s->tst), free(s->tbuf), free(s->rbuf);
}

static bool scratch_alloc(scratch *s, int cap) {
    memset(s, 0, sizeof *s);
    size_t c = (size_t)(cap > 0 ? cap : 1);
    s->cap = cap;
    s->removed = malloc(c * 4), s->added = malloc(c * 4), s->bidx = malloc(c * 4), s->pidx = malloc(c * 4);
    s->ord = malloc(c * 4), s->pred = malloc(c * 16), s->kin = malloc(c * 32), s->res = malloc(c * 12);
    s->cell = malloc(c * 4), s->count = malloc((CELLS_MAX + 1) * 4);
    /* at most 4 symbols a particle (a joint one, then 3), each at most 12
     * bits of the rANS stream; at most 3 x 17 raw bits.  The tables are
     * zeroed: a decoder may read a context without a table before it
     * refuses the payload (table_triple). */
    s->tab = calloc(1, sizeof *s->tab), s->tsym = malloc(c * 4), s->tctx = malloc(c * 4), s->tst = malloc(c * 4);
    s->tbuf_cap = c * 7 + 64, s->tbuf = malloc(s->tbuf_cap), s->rbuf = malloc(s->tbuf_cap);
    if (!s->removed || !s->added || !s->bidx || !s->pidx || !s->ord || !s->pred || !s->kin || !s->res || !s->cell ||
        !s->count || !s->tab || !s->tsym || !s->tctx || !s->tst || !s->tbuf || !s->rbuf) {
        scratch_free(s);
        return false;
    }
    return true;
}

static bool frame_alloc(fc_frame *f, int cap) {
    size_t c = (size_t)(cap > 0 ? cap : 1);
    memset(f, 0, sizeof *f);
    f->id = malloc(c * 4), f->q = malloc(c * 6), f->mat = malloc(c), f->temp = malloc(c);
    return f->id && f->q && f->mat && f->temp;
}

static void frame_free(fc_frame *f) {
    free(f->id), free(f->q), free(f->mat), free(f->temp);
}

/* A zeroed encoder or decoder (size bytes) for capacity particles; NULL when
 * capacity is out of range or memory is short. */
static void *codec_alloc(int capacity, size_t size) {
    if (capacity < 0 || capacity > FC_MAX_PARTICLES) return NULL;
    return calloc(1, size);
}

/* The working buffers an encoder and a decoder both hold: scratch space and
 * n history frames, each for cap particles.  False when any is missing
 * (what was allocated stays for buffers_free). */
static bool buffers_alloc(scratch *s, fc_frame *hist, int n, int cap) {
    bool ok = scratch_alloc(s, cap);
    for (int i = 0; i < n; i++) ok = frame_alloc(&hist[i], cap) && ok;
    return ok;
}

static void buffers_free(scratch *s, fc_frame *hist, int n) {
    for (int i = 0; i < n; i++) frame_free(&hist[i]);
    scratch_free(s);
}

/* The history frame with this seq, NULL when none (or seq is FC_NONE). */
static const fc_frame *history_find(const fc_frame *hist, int n, uint32_t seq) {
    if (seq == FC_NONE) return NULL;
    for (int i = 0; i < n; i++)
        if (hist[i].valid && hist[i].seq == seq) return &hist[i];
    return NULL;
}

static void history_clear(fc_frame *hist, int n) {
    for (int i = 0; i < n; i++) hist[i].valid = false;
}

struct fc_encoder {
    int cap;
    uint32_t epoch;
    fc_options opt;
    fc_frame hist[FC_HISTORY];
    bool any;
    uint32_t last_seq;
    int nbands; /* the epoch's split (frame_bands.h): 1, or bands from band_lo */
    uint32_t band_lo[FC_MAX_BANDS];
    scratch s;
};

struct fc_decoder {
    int cap;
    uint32_t epoch;
    bool has_epoch;
    fc_frame hist[FC_DEC_HISTORY];
    uint64_t stamp[FC_DEC_HISTORY], clock;
    scratch s;
};

fc_options fc_default_options(void) {
    /* the table coder in id order decodes 3.5 times as fast as the adaptive
     * coder in cell order, for 1-3% more bits; joint symbols from FC_JOINT_MIN
     * particles on (docs/wire-v2.md, "The table coder", "Joint symbols") */
    fc_options o = {FC_PRED_CV, FC_NB_NONE, FC_ORDER_ID, FC_CODER_TABLE, FC_JOINT_AUTO, 0};
    return o;
}

/* ---- Header -------------------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void putf(uint8_t *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    put32(p, u);
}

static float getf(const uint8_t *p) {
    uint32_t u = get32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void write_header(uint8_t *p, const fc_header *h) {
    memset(p, 0, FC_HEADER_BYTES);
    p[0] = 'F';
    p[1] = FC_VERSION;
    p[2] = (uint8_t)h->kind;
    p[3] = (uint8_t)(h->options.predictor | h->options.neighbour << 2 | h->options.order << 4 | h->options.coder << 5 |
                     h->options.joint << 6);
    put32(p + 4, h->epoch);
    put32(p + 8, h->seq);
    put32(p + 12, h->base);
    put32(p + 16, h->prev);
    put32(p + 20, h->n);
    for (int a = 0; a < 3; a++) putf(p + 24 + 4 * a, h->grid.origin[a]);
    putf(p + 36, h->grid.step);
    for (int a = 0; a < 3; a++)
        p[40 + 2 * a] = (uint8_t)h->grid.levels[a], p[41 + 2 * a] = (uint8_t)(h->grid.levels[a] >> 8);
    put32(p + 48, h->checksum);
    put32(p + 52, h->body_len);
}

int fc_read_header(const uint8_t *p, size_t n, fc_header *h, char *err, size_t errlen) {
    memset(h, 0, sizeof *h);
    if (n < FC_HEADER_BYTES) {
        snprintf(err, errlen, "frame payload truncated: %zu bytes, the header alone is %d", n, FC_HEADER_BYTES);
        return -1;
    }
    if (p[0] != 'F' || p[1] != FC_VERSION) {
        snprintf(err, errlen, "not a version %d frame payload", FC_VERSION);
        return -1;
    }
    h->kind = p[2];
    h->options.predictor = p[3] & 3;
    h->options.neighbour = (p[3] >> 2) & 3;
    h->options.order = (p[3] >> 4) & 1;
    h->options.coder = (p[3] >> 5) & 1;
    h->options.joint = (p[3] >> 6) & 1;
    if (h->kind > 2 || (h->kind == 2 && p[3]) || (p[3] >> 7) || h->options.neighbour > FC_NB_CELL || p[46] || p[47] ||
        (h->options.coder == FC_CODER_TABLE && h->options.neighbour == FC_NB_CELL) ||
        (h->options.joint && h->options.coder != FC_CODER_TABLE)) {
        snprintf(err, errlen, "frame payload: unknown kind %u or options 0x%02x", p[2], p[3]);
        return -1;
    }
    h->epoch = get32(p + 4);
    h->seq = get32(p + 8);
    h->base = get32(p + 12);
    h->prev = get32(p + 16);
    h->n = get32(p + 20);
    for (int a = 0; a < 3; a++) h->grid.origin[a] = getf(p + 24 + 4 * a);
    h->grid.step = getf(p + 36);
    for (int a = 0; a < 3; a++) h->grid.levels[a] = (uint16_t)(p[40 + 2 * a] | p[41 + 2 * a] << 8);
    h->checksum = get32(p + 48);
    h->body_len = get32(p + 52);
    if (h->body_len != n - FC_HEADER_BYTES) {
        snprintf(err, errlen, "frame payload: body declares %u bytes, %zu present", h->body_len, n - FC_HEADER_BYTES);
        return -1;
    }
    for (int a = 0; a < 3; a++)
        if (!h->grid.levels[a] || !isfinite(h->grid.origin[a])) {
            snprintf(err, errlen, "frame payload: bad quantization grid");
            return -1;
        }
    if (!(h->grid.step > 0) || !isfinite(h->grid.step)) {
        snprintf(err, errlen, "frame payload: bad quantization step");
        return -1;
    }
    if ((h->kind == 1 || (h->kind == 2 && h->base != FC_NONE)) &&
        (h->base == FC_NONE || (h->prev != FC_NONE && h->prev == h->base))) {
        snprintf(err, errlen, "frame payload: delta with a bad base (%u) or prev (%u)", h->base, h->prev);
        return -1;
    }
    return 0;
}

/* ---- The walks ----------------------------------------------------------------- */

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        snprintf(err, errlen, __VA_ARGS__);                                                                            \
        return -1;                                                                                                     \
    } while (0)

/* Positions, materials and temperatures of one particle from a spatial
 * prediction (keyframes, new particles).  *last is the previous particle so
 * coded (its q, mat, temp; classes). */
typedef struct spatial_state {
    int32_t q[3];
    int32_t mat, temp;
    int cls[3];
} spatial_state;

static int code_spatial(rc *r, models *m, fc_frame *f, int k, spatial_state *st, char *err, size_t errlen) {
    for (int a = 0; a < 3; a++) {
        int ctx = nb_ctx(st->cls[a], a ? st->cls[a - 1] : st->cls[a]);
        int64_t e = r->dec ? 0 : (int64_t)f->q[3 * k + a] - st->q[a];
        int c;
        e = code_int(r, &m->spat[a][ctx], e, &c);
        int64_t q = st->q[a] + e;
        if (q < 0 || q >= f->grid.levels[a]) FAIL("frame payload: particle %d lies outside the grid on axis %d", k, a);
        f->q[3 * k + a] = (uint16_t)q;
        st->q[a] = (int32_t)q;
        st->cls[a] = c;
    }
    int c;
    int64_t v = code_int(r, &m->mat, r->dec ? 0 : (int64_t)f->mat[k] - st->mat, &c) + st->mat;
    if (v < 0 || v > 255) FAIL("frame payload: material out of range");
    f->mat[k] = (uint8_t)v;
    st->mat = (int32_t)v;
    v = code_int(r, &m->temp, r->dec ? 0 : (int64_t)f->temp[k] - st->temp, &c) + st->temp;
    if (v < 0 || v > 255) FAIL("frame payload: temperature out of range");
    f->temp[k] = (uint8_t)v;
    st->temp = (int32_t)v;
    return 0;
}

static uint32_t code_u(rc *r, int_model *m, uint32_t v) {
    int c;
    return code_mag(r, m, v, &c);
}

static int walk_key(rc *r, scratch *s, fc_frame *f, char *err, size_t errlen) {
    models *m = &s->m;
    int n = f->n;
    /* ids as runs: (gap from the previous run's end, length - 1) */
    uint32_t runs = 0;
    if (!r->dec)
        for (int k = 0; k < n; k++) runs += k == 0 || f->id[k] != f->id[k - 1] + 1;
    runs = code_u(r, &m->count, runs);
    if (runs > (uint32_t)n || (n && !runs)) FAIL("frame payload: %u id runs for %d particles", runs, n);
    uint64_t next = 0;
    int k = 0;
    for (uint32_t i = 0; i < runs; i++) {
        uint32_t gap = 0, len = 0;
        if (!r->dec) {
            int e = k + 1;
            while (e < n && f->id[e] == f->id[e - 1] + 1) e++;
            gap = (uint32_t)(f->id[k] - next);
            len = (uint32_t)(e - k - 1);
        }
        gap = code_u(r, &m->gap, gap);
        len = code_u(r, &m->runlen, len) + 1;
        uint64_t start = next + gap;
        if (len > (uint32_t)(n - k) || start + len - 1 > 0xffffffffu)
            FAIL("frame payload: id runs exceed the declared count or the id range");
        for (uint32_t j = 0; j < len; j++) f->id[k++] = (uint32_t)(start + j);
        next = start + len;
    }
    if (k != n) FAIL("frame payload: id runs hold %d ids, %d declared", k, n);
    spatial_state st;
    memset(&st, 0, sizeof st);
    for (int a = 0; a < 3; a++) st.q[a] = f->grid.levels[a] / 2;
    for (k = 0; k < n; k++)
        if (code_spatial(r, m, f, k, &st, err, errlen)) return -1;
    return 0;
}

/* Whether two frames hold the same ids: a loop without an exit, which
 * vectorises (the WebAssembly build's C library compares byte by byte). */
static bool same_ids(const fc_frame *a, const fc_frame *b) {
    if (a->n != b->n) return false;
    uint32_t d = 0;
    for (int i = 0; i < a->n; i++) d |= a->id[i] ^ b->id[i];
    return !d;
}

/* For each particle of a (ids increasing) its index in b, or -1.  True
 * when the two hold the same ids (idx is then the identity). */
static bool match_ids(const fc_frame *a, const fc_frame *b, int32_t *idx) {
    if (same_ids(a, b)) {
        for (int i = 0; i < a->n; i++) idx[i] = i;
        return true;
    }
    int j = 0;
    for (int i = 0; i < a->n; i++) {
        while (j < b->n && b->id[j] < a->id[i]) j++;
        idx[i] = j < b->n && b->id[j] == a->id[i] ? j : -1;
    }
    return false;
}

/* Step 1 of a delta: the ids removed from the base (indices into it) and
 * added, then the frame's ids and each particle's base index (s->bidx). */
static int delta_ids(rc *r, scratch *s, fc_frame *f, const fc_frame *base, char *err, size_t errlen) {
    models *m = &s->m;
    int n = f->n;
    uint32_t nrem = 0, nadd = 0;
    if (!r->dec) {
        int i = 0, j = 0;
        while (i < base->n || j < n) {
            if (j >= n || (i < base->n && base->id[i] < f->id[j]))
                s->removed[nrem++] = (uint32_t)i++;
            else if (i >= base->n || f->id[j] < base->id[i])
                s->added[nadd++] = f->id[j++];
            else
                i++, j++;
        }
    }
    nrem = code_u(r, &m->count, nrem);
    if (nrem > (uint32_t)base->n) FAIL("frame payload: removes %u of the base's %d particles", nrem, base->n);
    uint32_t last = FC_NONE;
    for (uint32_t i = 0; i < nrem; i++) {
        uint32_t g = code_u(r, &m->gap, r->dec ? 0 : s->removed[i] - last - 1);
        uint64_t at = (uint64_t)last + 1 + g;
        if (last == FC_NONE) at = g;
        if (at >= (uint64_t)base->n)
            FAIL("frame payload: removes particle %llu of a base of %d", (unsigned long long)at, base->n);
        s->removed[i] = last = (uint32_t)at;
        if (r->overrun) FAIL("frame payload truncated");
    }
    nadd = code_u(r, &m->count, nadd);
    if ((uint64_t)base->n - nrem + nadd != (uint64_t)n)
        FAIL("frame payload: %d - %u + %u particles, %d declared", base->n, nrem, nadd, n);
    int64_t ref = base->n ? (int64_t)base->id[base->n - 1] + 1 : 0;
    for (uint32_t i = 0; i < nadd; i++) {
        int64_t id;
        if (i == 0) {
            int c;
            id = ref + code_int(r, &m->idfirst, r->dec ? 0 : (int64_t)s->added[0] - ref, &c);
        } else {
            id = (int64_t)s->added[i - 1] + 1 + code_u(r, &m->gap, r->dec ? 0 : s->added[i] - s->added[i - 1] - 1);
        }
        if (id < 0 || id > 0xffffffffLL) FAIL("frame payload: added id out of range");
        s->added[i] = (uint32_t)id;
        if (r->overrun) FAIL("frame payload truncated");
    }
    /* Merge: the frame's ids and each particle's base index (nothing to
     * merge when no particle came or went). */
    s->ident = !nrem && !nadd;
    if (s->ident) {
        memcpy(f->id, base->id, (size_t)n * sizeof *f->id);
        for (int k = 0; k < n; k++) s->bidx[k] = k;
        return 0;
    }
    {
        uint32_t ri = 0, ai = 0;
        int k = 0;
        for (int i = 0; i <= base->n; i++) {
            bool keep = i < base->n;
            if (keep && ri < nrem && s->removed[ri] == (uint32_t)i) {
                keep = false;
                ri++;
            }
            while (ai < nadd && (i == base->n || s->added[ai] < base->id[i]) && (keep || i == base->n)) {
                if (k && s->added[ai] <= f->id[k - 1]) FAIL("frame payload: added ids not increasing");
                f->id[k] = s->added[ai++];
                s->bidx[k++] = -1;
            }
            if (keep) {
                if (k && base->id[i] <= f->id[k - 1]) FAIL("frame payload: added id %u already present", f->id[k - 1]);
                f->id[k] = base->id[i];
                s->bidx[k++] = i;
            }
        }
        if (ai != nadd || k != n) FAIL("frame payload: ids do not merge");
    }
    return 0;
}

/* Steps 2-4 in id order with no cells (zero motion or constant velocity):
 * what delta_predict computes, in one pass in memory order. */
static int predict_by_id(scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev) {
    int n = f->n, nm = 0;
    bool cv = o->predictor == FC_PRED_CV;
    for (int k = 0; k < n; k++) {
        int b = s->bidx[k];
        if (b < 0) continue;
        const uint16_t *bq = &base->q[3 * b];
        int pi = prev ? s->pidx[b] : -1;
        int32_t v[3] = {0, 0, 0};
        if (pi >= 0)
            for (int a = 0; a < 3; a++) v[a] = (int32_t)bq[a] - (int32_t)prev->q[3 * pi + a];
        int32_t *pr = &s->pred[4 * nm];
        for (int a = 0; a < 3; a++) {
            int32_t p = bq[a] + (cv ? v[a] : 0);
            p = p < 0 ? 0 : p;
            pr[a] = p >= f->grid.levels[a] ? f->grid.levels[a] - 1 : p;
        }
        pr[3] = speed_ctx(v[0], v[1], v[2]);
        s->ord[nm++] = k;
    }
    return nm;
}

/* Steps 2-4: each kept particle's base position and velocity (from prev,
 * same id) and cell; the coding order (by cell or by id); the predicted
 * position in coding order.  Returns how many particles were kept (nm). */
static int delta_predict(scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev) {
    int n = f->n;
    /* 2. Velocities from prev (same id: s->pidx, by the caller), cells of
     * the base positions. */
    if (o->order == FC_ORDER_ID && o->predictor <= FC_PRED_CV && o->neighbour != FC_NB_CELL)
        return predict_by_id(s, o, f, base, prev);
    uint32_t nx, ny, nz;
    int sh = cell_shift(&f->grid, &nx, &ny, &nz);
    uint32_t ncell = nx * ny * nz;
    int nm = 0;
    for (int k = 0; k < n; k++) {
        int b = s->bidx[k];
        if (b < 0) continue;
        const uint16_t *bq = &base->q[3 * b];
        int pi = prev ? s->pidx[b] : -1;
        int32_t *kn = &s->kin[8 * k];
        for (int a = 0; a < 3; a++) {
            kn[a] = bq[a];
            kn[3 + a] = pi >= 0 ? (int32_t)bq[a] - (int32_t)prev->q[3 * pi + a] : 0;
        }
        kn[6] = pi >= 0;
        s->cell[k] = ((uint32_t)(bq[2] >> sh) * ny + (uint32_t)(bq[1] >> sh)) * nx + (uint32_t)(bq[0] >> sh);
        kn[7] = (int32_t)s->cell[k];
        nm++;
    }
    /* 3. Order: matched particles by cell (stable: id order within a cell). */
    bool by_cell = o->order == FC_ORDER_CELL || o->predictor >= FC_PRED_CELLMEAN;
    if (by_cell) {
        memset(s->count, 0, (ncell + 1) * sizeof *s->count);
        for (int k = 0; k < n; k++)
            if (s->bidx[k] >= 0) s->count[s->cell[k] + 1]++;
        for (uint32_t c = 0; c < ncell; c++) s->count[c + 1] += s->count[c];
        for (int k = 0; k < n; k++)
            if (s->bidx[k] >= 0) s->ord[s->count[s->cell[k]]++] = k;
    } else {
        int j = 0;
        for (int k = 0; k < n; k++)
            if (s->bidx[k] >= 0) s->ord[j++] = k;
    }
    /* 4. Prediction, stored by coding position (so the residual loop reads
     * it in sequence; s->cell is rewritten by position too). */
    for (int j = 0; j < nm;) {
        int e = j + 1;
        int64_t sum[3] = {0, 0, 0};
        int cnt = 0;
        if (o->predictor >= FC_PRED_CELLMEAN) {
            while (e < nm && s->kin[8 * s->ord[e] + 7] == s->kin[8 * s->ord[j] + 7]) e++;
            for (int i = j; i < e; i++) {
                const int32_t *kn = &s->kin[8 * s->ord[i]];
                if (kn[6]) {
                    for (int a = 0; a < 3; a++) sum[a] += kn[3 + a];
                    cnt++;
                }
            }
        }
        for (int i = j; i < e; i++) {
            const int32_t *kn = &s->kin[8 * s->ord[i]];
            s->cell[i] = (uint32_t)kn[7];
            s->pred[4 * i + 3] = speed_ctx(kn[3], kn[4], kn[5]);
            for (int a = 0; a < 3; a++) {
                int32_t v = kn[3 + a], mean = cnt ? rdiv(sum[a], cnt) : 0, p = kn[a];
                if (o->predictor == FC_PRED_CV)
                    p += v;
                else if (o->predictor == FC_PRED_CELLMEAN)
                    p += mean;
                else if (o->predictor == FC_PRED_MIX)
                    p += rdiv((int64_t)v + mean, 2);
                if (p < 0) p = 0;
                if (p >= f->grid.levels[a]) p = f->grid.levels[a] - 1;
                s->pred[4 * i + a] = p;
            }
        }
        j = e;
    }
    return nm;
}

/* Step 5: the residuals of the nm kept particles, in coding order. */
static int delta_residuals(rc *r, scratch *s, const fc_options *o, fc_frame *f, int nm, char *err, size_t errlen) {
    models *m = &s->m;
    /* 5. Residuals of the matched particles in coding order. */
    int prevcls[3] = {0, 0, 0};
    int32_t lastres[3] = {0, 0, 0}, cellmean[3] = {0, 0, 0};
    int64_t csum[3] = {0, 0, 0};
    int ccnt = 0;
    uint32_t curcell = FC_NONE;
    s->nres = 0;
    for (int j = 0; j < nm; j++) {
        int k = s->ord[j];
        if (o->neighbour == FC_NB_CELL && s->cell[j] != curcell) {
            curcell = s->cell[j];
            if (ccnt)
                for (int a = 0; a < 3; a++) cellmean[a] = rdiv(csum[a], ccnt);
            csum[0] = csum[1] = csum[2] = 0;
            ccnt = 0;
        }
        const int32_t *pr = &s->pred[4 * j];
        int sc = pr[3];
        int cls[3];
        for (int a = 0; a < 3; a++) {
            int32_t nbp = o->neighbour == FC_NB_PREV   ? lastres[a]
                          : o->neighbour == FC_NB_CELL ? (ccnt ? rdiv(csum[a], ccnt) : cellmean[a])
                                                       : 0;
            int32_t p = pr[a] + nbp;
            int ctx = nb_ctx(prevcls[a], a ? cls[a - 1] : prevcls[a]);
            int64_t e = r->dec ? 0 : (int64_t)f->q[3 * k + a] - p;
            e = code_int(r, &m->tres[a][sc][ctx], e, &cls[a]);
            int64_t q = p + e;
            if (q < 0 || q >= f->grid.levels[a])
                FAIL("frame payload: particle %d lies outside the grid on axis %d", k, a);
            f->q[3 * k + a] = (uint16_t)q;
            lastres[a] = (int32_t)(q - pr[a]);
            csum[a] += lastres[a];
            s->res[s->nres++] = (int32_t)e;
        }
        ccnt++;
        for (int a = 0; a < 3; a++) prevcls[a] = cls[a];
        if (r->overrun) FAIL("frame payload truncated");
    }
    return 0;
}

/* Step 7: materials and temperatures of kept particles: only the changes. */
static int delta_changes(rc *r, scratch *s, fc_frame *f, const fc_frame *base, char *err, size_t errlen) {
    models *m = &s->m;
    int n = f->n;
    /* 7. Materials and temperatures of matched particles: only changes. */
    for (int which = 0; which < 2; which++) {
        uint8_t *dst = which ? f->temp : f->mat;
        const uint8_t *src = which ? base->temp : base->mat;
        uint32_t nch = 0;
        if (!r->dec)
            for (int k = 0; k < n; k++) nch += s->bidx[k] >= 0 && dst[k] != src[s->bidx[k]];
        nch = code_u(r, &m->count, nch);
        if (nch > (uint32_t)n) FAIL("frame payload: %u changes for %d particles", nch, n);
        int k = 0;
        for (uint32_t i = 0; i < nch; i++) {
            uint32_t g = 0;
            if (!r->dec) {
                int e = k;
                while (s->bidx[e] < 0 || dst[e] == src[s->bidx[e]]) e++;
                g = (uint32_t)(e - k);
            }
            g = code_u(r, &m->gap, g);
            if ((uint64_t)k + g >= (uint64_t)n) FAIL("frame payload: a change past the last particle");
            int kk = k + (int)g;
            if (s->bidx[kk] < 0) FAIL("frame payload: a change on a new particle");
            if (r->dec) /* the unchanged ones up to here */
                for (int t = k; t < kk; t++)
                    if (s->bidx[t] >= 0) dst[t] = src[s->bidx[t]];
            int c;
            int64_t old = src[s->bidx[kk]];
            int64_t v = old + code_int(r, which ? &m->tempchg : &m->matchg, r->dec ? 0 : (int64_t)dst[kk] - old, &c);
            if (v < 0 || v > 255 || v == old) FAIL("frame payload: bad %s change", which ? "temperature" : "material");
            dst[kk] = (uint8_t)v;
            k = kk + 1;
            if (r->overrun) FAIL("frame payload truncated");
        }
        if (r->dec && s->ident)
            memcpy(dst + k, src + k, (size_t)(n - k));
        else if (r->dec)
            for (int t = k; t < n; t++)
                if (s->bidx[t] >= 0) dst[t] = src[s->bidx[t]];
    }
    return 0;
}

/* One particle's three residuals with the table coder, in speed context sc
 * (the encoder codes e, the decoder fills it).  With joint symbols (options
 * bit 6) the particle's first symbol is joint: its three values when all lie
 * in [-2, 2], else the escape, on state js (the particle's coding position
 * modulo 2, so that consecutive particles decode on different states), in
 * context TC_AXIS_CTX + sc; an escape is followed by the three values as
 * without: one symbol per axis on the axis's state, in context
 * axis * SPEED_CTX + sc, and its raw bits.  *used collects the contexts
 * decoded from (each must have a table; checked by the caller, after the
 * loop: the tables are zeroed at creation, so a context without one reads
 * in bounds).  The encoder records symbols, contexts and states (coded once
 * the tables are known) and writes the raw bits. */
static inline __attribute__((always_inline)) void table_triple(rc *r, scratch *s, tc_rans_dec *rd, tc_bit_reader *br,
                                                               int32_t e[3], int sc, bool joint, int js, bool room,
                                                               uint32_t *used) {
    if (r->dec) {
        if (joint) {
            *used |= 1u << (TC_AXIS_CTX + sc);
            int j = tc_rans_get(rd, s->tab, js, TC_AXIS_CTX + sc, room);
            if (j < TC_JOINT_ESC) {
                e[0] = tc_joint_val[j][0], e[1] = tc_joint_val[j][1], e[2] = tc_joint_val[j][2];
                return;
            }
        }
        *used |= 0x111u << sc;
        tc_bitr_fill(br);
        for (int a = 0; a < 3; a++) {
            int sym = tc_rans_get(rd, s->tab, a, a * SPEED_CTX + sc, room);
            e[a] = tc_join(sym, tc_bitr_take(br, tc_sym_nraw[sym]));
        }
        return;
    }
    for (int a = 0; a < 3; a++) s->res[s->nres++] = e[a];
    if (joint) {
        int j = tc_joint_sym(e[0], e[1], e[2]), ctx = TC_AXIS_CTX + sc;
        s->tsym[s->tn] = (uint8_t)j, s->tctx[s->tn] = (uint8_t)ctx, s->tst[s->tn++] = (uint8_t)js;
        s->tcount[ctx][j]++;
        if (j < TC_JOINT_ESC) return;
    }
    for (int a = 0; a < 3; a++) {
        tc_split sp = tc_split_value(e[a]);
        int ctx = a * SPEED_CTX + sc;
        s->tsym[s->tn] = sp.sym, s->tctx[s->tn] = (uint8_t)ctx, s->tst[s->tn++] = (uint8_t)a;
        s->tcount[ctx][sp.sym]++;
        tc_bits_put(&s->bw, sp.raw, sp.nraw);
    }
}

/* The decoder's check after a table-coded walk: every context decoded from
 * has a table, and the streams did not run out. */
static int table_end(scratch *s, uint32_t used, char *err, size_t errlen) {
    for (int c = 0; c < TC_MAX_CTX; c++)
        if ((used >> c & 1) && !s->tab->nsym[c]) FAIL("frame payload: a value in context %d, which has no table", c);
    if (s->rd.overrun || tc_bitr_left(&s->br) < 0) FAIL("frame payload truncated");
    return 0;
}

/* At most 4 rANS words (8 bytes) and 48 raw bits a particle. */
#define TABLE_ROOM 8

/* Step 5 with the table coder: the same residuals as delta_residuals (no
 * cell neighbour), coded by table_triple (contexts: speed and axis only, so
 * that consecutive values decode independently).  The decoder reads both
 * streams (s->rd, s->br), set up by fc_decode. */
static int table_residuals(rc *r, scratch *s, const fc_options *o, fc_frame *f, int nm, char *err, size_t errlen) {
    int32_t lastres[3] = {0, 0, 0};
    bool nbprev = o->neighbour == FC_NB_PREV, joint = o->joint;
    uint32_t used = 0;
    s->nres = 0, s->tn = 0;
    for (int j = 0; j < nm; j++) {
        int k = s->ord[j];
        const int32_t *pr = &s->pred[4 * j];
        int32_t p[3], e[3];
        uint16_t *q = &f->q[3 * k];
        for (int a = 0; a < 3; a++) p[a] = pr[a] + (nbprev ? lastres[a] : 0), e[a] = r->dec ? 0 : (int32_t)q[a] - p[a];
        bool room = r->dec && s->rd.end - s->rd.p >= TABLE_ROOM;
        table_triple(r, s, &s->rd, &s->br, e, pr[3], joint, j & 1, room, &used);
        for (int a = 0; a < 3; a++) {
            int32_t v = p[a] + e[a];
            if (v < 0 || v >= f->grid.levels[a])
                FAIL("frame payload: particle %d lies outside the grid on axis %d", k, a);
            q[a] = (uint16_t)v;
            lastres[a] = v - pr[a];
        }
    }
    return r->dec ? table_end(s, used, err, errlen) : 0;
}

static inline int32_t clamp_level(int32_t p, int32_t levels) {
    return p < 0 ? 0 : p >= levels ? levels - 1 : p;
}

/* Steps 2-5 fused for the table coder in id order with zero motion or
 * constant velocity (the server's choice): the same prediction and values
 * as delta_predict + table_residuals, in one pass in memory order, with no
 * array between the passes.  A decoder then walks its frames in sequence. */
static int table_by_id(rc *r, scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                       char *err, size_t errlen) {
    const int32_t *bidx = s->bidx, *pidx = s->pidx;
    const int32_t lv[3] = {f->grid.levels[0], f->grid.levels[1], f->grid.levels[2]};
    const int32_t cv = o->predictor == FC_PRED_CV;
    const bool joint = o->joint;
    int n = f->n, j = 0;
    uint32_t used = 0;
    tc_rans_dec rd = s->rd; /* locals, so that the states live in registers */
    tc_bit_reader br = s->br;
    s->nres = 0, s->tn = 0;
    for (int k = 0; k < n; k++) {
        int b = bidx[k];
        if (b < 0) continue;
        const uint16_t *bq = &base->q[3 * b];
        int pi = prev ? pidx[b] : -1;
        int32_t v[3] = {0, 0, 0}, p[3], e[3];
        if (pi >= 0) {
            const uint16_t *pq = &prev->q[3 * pi];
            v[0] = bq[0] - pq[0], v[1] = bq[1] - pq[1], v[2] = bq[2] - pq[2];
        }
        int sc = speed_ctx(v[0], v[1], v[2]);
        uint16_t *q = &f->q[3 * k];
        for (int a = 0; a < 3; a++)
            p[a] = clamp_level(bq[a] + cv * v[a], lv[a]), e[a] = r->dec ? 0 : (int32_t)q[a] - p[a];
        bool room = r->dec && rd.end - rd.p >= TABLE_ROOM;
        table_triple(r, s, &rd, &br, e, sc, joint, j++ & 1, room, &used);
        if (r->dec) {
            int32_t x = p[0] + e[0], y = p[1] + e[1], z = p[2] + e[2];
            if (x < 0 || x >= lv[0] || y < 0 || y >= lv[1] || z < 0 || z >= lv[2])
                FAIL("frame payload: particle %d lies outside the grid", k);
            q[0] = (uint16_t)x, q[1] = (uint16_t)y, q[2] = (uint16_t)z;
        }
    }
    s->rd = rd, s->br = br;
    return r->dec ? table_end(s, used, err, errlen) : 0;
}

/* The decoder's path for a delta whose particles are those of its base and
 * of the previous frame, in the same order (no particle added or removed
 * over the two frames: most frames).  The same values as table_by_id's, in
 * three loops instead of one, over blocks of KEPT_BLOCK particles: the
 * contexts, the residuals (the only serial loop: the rANS states and the
 * raw bits), then the predictions and sums.  The first and last run over
 * the frames' flat arrays of levels and vectorise; the serial loop holds
 * only the entropy decoder's state in its registers; and a block's base,
 * prev and residuals are still in the first-level cache when the last loop
 * reads them again (docs/wire-v2.md, "Decoding speed"). */
#define KEPT_BLOCK 256
static int table_kept(rc *r, scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                      char *err, size_t errlen) {
    const int n = f->n;
    const int32_t cv = o->predictor == FC_PRED_CV;
    const bool joint = o->joint;
    tc_rans_dec rd = s->rd; /* locals, so that the states live in registers */
    tc_bit_reader br = s->br;
    int32_t e[3 * KEPT_BLOCK];
    uint16_t av[3 * KEPT_BLOCK], pr[3 * KEPT_BLOCK];
    uint8_t cx[KEPT_BLOCK];
    int32_t top[24]; /* the top level of each lane of a group of 8 particles */
    for (int j = 0; j < 24; j++) top[j] = (int32_t)f->grid.levels[j % 3] - 1;
    uint32_t used = 0, bad = 0;
    for (int k0 = 0; k0 < n; k0 += KEPT_BLOCK) {
        const int m = n - k0 < KEPT_BLOCK ? n - k0 : KEPT_BLOCK, mv = 3 * m;
        const uint16_t *restrict bq = base->q + 3 * k0, *restrict pq = prev->q + 3 * k0;
        uint16_t *restrict q = f->q + 3 * k0;
        int i = 0;
        for (; i + 24 <= mv; i += 24) /* |v| and the clamped prediction */
            for (int j = 0; j < 24; j++) {
                int32_t b = bq[i + j], d = b - (int32_t)pq[i + j], p = b + cv * d;
                av[i + j] = (uint16_t)(d < 0 ? -d : d);
                p = p < 0 ? 0 : p;
                pr[i + j] = (uint16_t)(p < top[j] ? p : top[j]);
            }
        for (int j = 0; i < mv; i++, j++) {
            int32_t b = bq[i], d = b - (int32_t)pq[i], p = b + cv * d;
            av[i] = (uint16_t)(d < 0 ? -d : d);
            p = p < 0 ? 0 : p;
            pr[i] = (uint16_t)(p < top[j] ? p : top[j]);
        }
        for (int k = 0; k < m; k++) {
            uint16_t v = av[3 * k] > av[3 * k + 1] ? av[3 * k] : av[3 * k + 1];
            v = v > av[3 * k + 2] ? v : av[3 * k + 2];
            cx[k] = (uint8_t)speed_of(v);
        }
        int k = 0;
        if (rd.end - rd.p >= (ptrdiff_t)m * TABLE_ROOM) /* two particles a turn: the joint states are constants */
            for (; k + 1 < m; k += 2) {
                table_triple(r, s, &rd, &br, &e[3 * k], cx[k], joint, 0, true, &used);
                table_triple(r, s, &rd, &br, &e[3 * k + 3], cx[k + 1], joint, 1, true, &used);
            }
        for (; k < m; k++) table_triple(r, s, &rd, &br, &e[3 * k], cx[k], joint, (k0 + k) & 1, false, &used);
        /* q = the prediction + e, in groups of 8 particles (24 values, so
         * that each lane keeps its axis's top level) */
        for (i = 0; i + 24 <= mv; i += 24)
            for (int j = 0; j < 24; j++) {
                uint32_t v = (uint32_t)((int32_t)pr[i + j] + e[i + j]);
                bad |= v > (uint32_t)top[j]; /* below 0 or past the top */
                q[i + j] = (uint16_t)v;
            }
        for (int j = 0; i < mv; i++, j++) {
            uint32_t v = (uint32_t)((int32_t)pr[i] + e[i]);
            bad |= v > (uint32_t)top[j];
            q[i] = (uint16_t)v;
        }
    }
    s->rd = rd, s->br = br;
    if (table_end(s, used, err, errlen)) return -1;
    if (bad) FAIL("frame payload: a particle lies outside the grid");
    return 0;
}

/* The table coder's frequency tables, range coded: per context its symbol
 * count, then each symbol's frequency (0: unused).  The decoder checks
 * them and builds its lookups. */
static int code_tables(rc *r, scratch *s, char *err, size_t errlen) {
    models *m = &s->m;
    tc_tables *t = s->tab;
    for (int c = 0; c < TC_MAX_CTX; c++) {
        uint32_t nsym = code_u(r, &m->tabn, t->nsym[c]);
        if (nsym > (uint32_t)tc_ctx_nsym(c))
            FAIL("frame payload: a table of %u symbols in context %d (at most %d)", nsym, c, tc_ctx_nsym(c));
        uint16_t fr[TC_SYM_MAX];
        for (uint32_t k = 0; k < nsym; k++) {
            uint32_t v = code_u(r, &m->tabf, r->dec ? 0 : t->freq[c][k]);
            if (v > TC_SCALE) FAIL("frame payload: a table frequency of %u", v);
            fr[k] = (uint16_t)v;
        }
        if (r->overrun) FAIL("frame payload truncated");
        if (r->dec && !tc_build_context(t, c, (int)nsym, fr))
            FAIL("frame payload: table %d does not sum to %u", c, TC_SCALE);
    }
    return 0;
}

static inline int bit_length(uint32_t m) {
#if defined(__GNUC__)
    return m ? 32 - __builtin_clz(m) : 0;
#else
    return mag_class(m);
#endif
}

/* Constant velocity, or zero motion where that codes smaller: a pool at
 * rest jitters by a step or so a frame, and extrapolating the jitter doubles
 * it (docs/wire-v2.md, "Prediction").  The estimate of each is the sum of
 * the residuals' bit lengths over the particles kept from the base (twice
 * the length, plus one, is about what a value costs), over every 4th
 * particle in id order, through the walk's own id matches (s->bidx: f to
 * base, s->pidx: base to prev).  The encoder's only. */
static int pick_predictor(const scratch *s, const fc_frame *f, const fc_frame *base, const fc_frame *prev) {
    const int32_t *bi = s->bidx, *pi = s->pidx;
    uint64_t cost[2] = {0, 0};
    for (int k = 0; k < f->n; k += 4) { /* every 4th particle: an estimate */
        int b = bi[k];
        if (b < 0 || pi[b] < 0) continue;
        for (int a = 0; a < 3; a++) {
            int32_t q = f->q[3 * k + a], bq = base->q[3 * b + a], v = bq - (int32_t)prev->q[3 * pi[b] + a];
            int32_t p = clamp_level(bq + v, f->grid.levels[a]);
            cost[0] += (uint64_t)bit_length((uint32_t)abs(q - bq));
            cost[1] += (uint64_t)bit_length((uint32_t)abs(q - p));
        }
    }
    return cost[0] < cost[1] ? FC_PRED_ZERO : FC_PRED_CV;
}

/* Step 5 by the options' coder; with the table coder the tables go first
 * in the range-coded stream.  The encoder may switch o's constant velocity
 * to zero motion for this payload (pick_predictor; the header records it). */
static int code_residuals(rc *r, scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                          char *err, size_t errlen) {
    int nm = 0;
    s->pident = prev && match_ids(base, prev, s->pidx);
    if (!r->dec && prev && o->predictor == FC_PRED_CV) o->predictor = pick_predictor(s, f, base, prev);
    bool fused = o->coder == FC_CODER_TABLE && o->order == FC_ORDER_ID && o->predictor <= FC_PRED_CV &&
                 o->neighbour == FC_NB_NONE;
    if (!fused) nm = delta_predict(s, o, f, base, prev);
    if (o->coder != FC_CODER_TABLE) return delta_residuals(r, s, o, f, nm, err, errlen);
    if (r->dec && code_tables(r, s, err, errlen)) return -1;
    if (!r->dec) memset(s->tcount, 0, sizeof s->tcount);
    if (fused && r->dec && s->ident && s->pident) { /* pident: prev is held, with the base's ids */
        if (table_kept(r, s, o, f, base, prev, err, errlen)) return -1;
    } else if (fused ? table_by_id(r, s, o, f, base, prev, err, errlen) : table_residuals(r, s, o, f, nm, err, errlen))
        return -1;
    if (r->dec) return 0;
    for (int c = 0; c < TC_MAX_CTX; c++) tc_normalize(s->tab, c, s->tcount[c]);
    return code_tables(r, s, err, errlen);
}

static int walk_delta(rc *r, scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                      char *err, size_t errlen) {
    models *m = &s->m;
    int n = f->n;
    if (delta_ids(r, s, f, base, err, errlen)) return -1;
    if (code_residuals(r, s, o, f, base, prev, err, errlen)) return -1;
    /* 6. New particles, in id order, from the previous new one. */
    spatial_state st;
    memset(&st, 0, sizeof st);
    for (int a = 0; a < 3; a++) st.q[a] = f->grid.levels[a] / 2;
    for (int k = 0; k < n && !s->ident; k++)
        if (s->bidx[k] < 0) {
            if (code_spatial(r, m, f, k, &st, err, errlen)) return -1;
            if (r->overrun) FAIL("frame payload truncated");
        }
    return delta_changes(r, s, f, base, err, errlen);
}

#undef FAIL

/* ---- Encoder ------------------------------------------------------------------- */

fc_encoder *fc_encoder_create(int capacity, uint32_t epoch) {
    fc_encoder *e = codec_alloc(capacity, sizeof *e);
    if (!e) return NULL;
    e->cap = capacity;
    e->epoch = epoch;
    e->nbands = 1;
    e->opt = fc_default_options();
    if (!buffers_alloc(&e->s, e->hist, FC_HISTORY, capacity)) {
        fc_encoder_destroy(e);
        return NULL;
    }
    return e;
}

void fc_encoder_destroy(fc_encoder *e) {
    if (!e) return;
    buffers_free(&e->s, e->hist, FC_HISTORY);
    free(e);
}

void fc_encoder_reset(fc_encoder *e, uint32_t epoch) {
    e->epoch = epoch;
    e->any = false;
    e->nbands = 1;
    history_clear(e->hist, FC_HISTORY);
}

void fc_encoder_set_options(fc_encoder *e, const fc_options *o) {
    e->opt = *o;
}

const fc_frame *fc_encoder_frame(const fc_encoder *e, uint32_t seq) {
    return history_find(e->hist, FC_HISTORY, seq);
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

size_t fc_max_payload(int n) {
    /* one payload's bound, or bands': the table and each band's header and tables */
    return FC_HEADER_BYTES + fc_bands_table_bytes(FC_MAX_BANDS) + FC_MAX_BANDS * (FC_HEADER_BYTES + 4096) +
           (size_t)(n > 0 ? n : 0) * 256;
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
    /* A delta with the table coder: two stream lengths, the range-coded
     * stream, the rANS stream, the raw bits. */
    bool table = b && e->opt.coder == FC_CODER_TABLE;
    if (table && e->opt.neighbour == FC_NB_CELL) {
        snprintf(err, errlen, "the table coder does not take the cell neighbour");
        return 0;
    }
    size_t pre = table ? 8 : 0;
    if (cap < FC_HEADER_BYTES + pre) {
        snprintf(err, errlen, "output buffer too small");
        return 0;
    }
    rc r;
    rc_enc_init(&r, out + FC_HEADER_BYTES + pre, cap - FC_HEADER_BYTES - pre);
    if (table) tc_bits_init(&e->s.bw, e->s.rbuf, e->s.tbuf_cap);
    models_reset(&e->s.m);
    e->s.nres = 0;
    fc_options o = e->opt;
    o.bands = 0;
    /* joint symbols are the table coder's; the header records 0 or 1 */
    o.joint =
        o.coder == FC_CODER_TABLE && (o.joint == FC_JOINT_ON || (o.joint == FC_JOINT_AUTO && f->n >= FC_JOINT_MIN));
    int rcode = b ? walk_delta(&r, &e->s, &o, f, b, pv, err, errlen) : walk_key(&r, &e->s, f, err, errlen);
    if (rcode) return 0;
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
        put32(q, (uint32_t)r.len), put32(q + 4, (uint32_t)rl);
        memcpy(q + pre + r.len, e->s.tbuf + e->s.tbuf_cap - rl, rl);
        memcpy(q + pre + r.len + rl, e->s.rbuf, e->s.bw.len);
    }
    fc_header h = frame_header(b ? 1 : 0, e->epoch, f, b, pv);
    h.options = o;
    h.checksum = frame_checksum(f);
    h.body_len = (uint32_t)body;
    write_header(out, &h);
    return FC_HEADER_BYTES + body;
}

/* The particles of frame f with ids in band i of the split lo[0..k): a view
 * into f's arrays. */
static fc_frame band_view(const fc_frame *f, const uint32_t *lo, int k, int i) {
    fc_frame v = *f;
    int count;
    int at = fc_bands_range(f->id, f->n, lo[i], i + 1 < k ? lo[i + 1] : 0, i + 1 == k, &count);
    v.n = count;
    v.id = f->id + at;
    v.q = f->q + 3 * at;
    v.mat = f->mat + at;
    v.temp = f->temp + at;
    return v;
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
        fc_frame fv = band_view(f, e->band_lo, t.k, i), bv, pvv;
        if (b) bv = band_view(b, e->band_lo, t.k, i);
        if (pv) pvv = band_view(pv, e->band_lo, t.k, i);
        size_t len = encode_one(e, &fv, b ? &bv : NULL, pv ? &pvv : NULL, out + at, cap - at, err, errlen);
        if (!len) return 0;
        t.len[i] = (uint32_t)len;
        at += len;
    }
    fc_bands_write(out + FC_HEADER_BYTES, &t);
    fc_header h = frame_header(2, e->epoch, f, b, pv);
    h.body_len = (uint32_t)(at - FC_HEADER_BYTES);
    write_header(out, &h);
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
    if ((b && (base >= seq || !grid_equal(&b->grid, &f->grid))) ||
        (pv && (!b || prev >= base || !grid_equal(&pv->grid, &f->grid)))) {
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

/* ---- Decoder ------------------------------------------------------------------- */

fc_decoder *fc_decoder_create(int capacity) {
    fc_decoder *d = codec_alloc(capacity, sizeof *d);
    if (!d) return NULL;
    d->cap = capacity;
    if (!buffers_alloc(&d->s, d->hist, FC_DEC_HISTORY, capacity)) {
        fc_decoder_destroy(d);
        return NULL;
    }
    return d;
}

void fc_decoder_destroy(fc_decoder *d) {
    if (!d) return;
    buffers_free(&d->s, d->hist, FC_DEC_HISTORY);
    free(d);
}

void fc_decoder_reset(fc_decoder *d) {
    d->has_epoch = false;
    history_clear(d->hist, FC_DEC_HISTORY);
}

const fc_frame *fc_decoder_frame(const fc_decoder *d, uint32_t seq) {
    return history_find(d->hist, FC_DEC_HISTORY, seq);
}

/* Decodes payload p (header h, ordinary: kind 0 or 1) into f (a slot of
 * the history, or a band's view of one) against b and pv (band views for a
 * band).  Returns 0, or -1 with a reason. */
static int decode_one(fc_decoder *d, const fc_header *h, const uint8_t *p, fc_frame *f, const fc_frame *b,
                      const fc_frame *pv, char *err, size_t errlen) {
    rc r;
    const uint8_t *body = p + FC_HEADER_BYTES;
    bool table = b && h->options.coder == FC_CODER_TABLE;
    if (table) {
        uint32_t rl = h->body_len >= 8 ? get32(body) : 0, tl = h->body_len >= 8 ? get32(body + 4) : 0;
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
    models_reset(&d->s.m);
    fc_options o = h->options;
    int rcode = b ? walk_delta(&r, &d->s, &o, f, b, pv, err, errlen) : walk_key(&r, &d->s, f, err, errlen);
    if (rcode) return -1;
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
    if (frame_checksum(f) != h->checksum) {
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
            bh.prev != h->prev || !grid_equal(&bh.grid, &h->grid) || bh.n > h->n - (uint32_t)at) {
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
        if (b) bv = band_view(b, t.lo, t.k, i);
        if (pv) pvv = band_view(pv, t.lo, t.k, i);
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
        if (!grid_equal(&b->grid, &h.grid) || (pv && !grid_equal(&pv->grid, &h.grid))) {
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
