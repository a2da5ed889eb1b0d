/* frame_header.c - the frame codec's 56-byte header (protocol/PROTOCOL.md,
 * "Header"): written by the encoder, read and checked at the edge by the
 * decoder and by whoever needs a payload's numbers without its body; the
 * quantization grid it carries, and the checksum of the decoded frame it
 * carries.  Pure functions on values and caller buffers. */
#include "frame_header.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "frame_bands.h"

/* ---- Grid ------------------------------------------------------------------ */

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

bool fc__grid_equal(const fc_grid *a, const fc_grid *b) {
    return !memcmp(a->origin, b->origin, sizeof a->origin) && a->step == b->step &&
           !memcmp(a->levels, b->levels, sizeof a->levels);
}

/* ---- Checksum -------------------------------------------------------------- */

uint32_t fc__checksum(const fc_frame *f) {
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

/* ---- Header ---------------------------------------------------------------- */

static void putf(uint8_t *p, float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    fc__put32(p, u);
}

static float getf(const uint8_t *p) {
    uint32_t u = fc__get32(p);
    float f;
    memcpy(&f, &u, 4);
    return f;
}

void fc__write_header(uint8_t *p, const fc_header *h) {
    memset(p, 0, FC_HEADER_BYTES);
    p[0] = 'F';
    p[1] = FC_VERSION;
    p[2] = (uint8_t)h->kind;
    if (h->kind != 2)
        p[3] = (uint8_t)(((unsigned)h->options.predictor & FC_OPT_PREDICTOR) | FC_OPT_TABLE |
                         (h->options.joint ? FC_OPT_JOINT : 0));
    fc__put32(p + 4, h->epoch);
    fc__put32(p + 8, h->seq);
    fc__put32(p + 12, h->base);
    fc__put32(p + 16, h->prev);
    fc__put32(p + 20, h->n);
    for (int a = 0; a < 3; a++) putf(p + 24 + 4 * a, h->grid.origin[a]);
    putf(p + 36, h->grid.step);
    for (int a = 0; a < 3; a++)
        p[40 + 2 * a] = (uint8_t)h->grid.levels[a], p[41 + 2 * a] = (uint8_t)(h->grid.levels[a] >> 8);
    fc__put32(p + 48, h->checksum);
    fc__put32(p + 52, h->body_len);
}

size_t fc_max_payload(int n) {
    /* one payload's bound, or bands': the table and each band's header and tables */
    return FC_HEADER_BYTES + fc_bands_table_bytes(FC_MAX_BANDS) + FC_MAX_BANDS * (FC_HEADER_BYTES + 4096) +
           (size_t)(n > 0 ? n : 0) * 256;
}

/* The options byte o of a payload of kind 0 or 1: 0 when this decoder
 * reads it, else -1 with the reason. */
static int check_options(unsigned o, char *err, size_t errlen) {
    if ((o & FC_OPT_RETIRED) || !(o & FC_OPT_TABLE) || (o & FC_OPT_PREDICTOR) > FC_PRED_CV) {
        snprintf(err, errlen,
                 "frame payload: options 0x%02x name an earlier encoder's coding (adaptive residual coder, cell order, "
                 "neighbour residual or cell-mean predictor), no longer decoded: a recording made before the table "
                 "coder was the only coding",
                 o);
        return -1;
    }
    return 0;
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
    if (h->kind > 2 || (h->kind == 2 && p[3]) || (p[3] >> 7) || p[46] || p[47]) {
        snprintf(err, errlen, "frame payload: unknown kind %u or options 0x%02x", p[2], p[3]);
        return -1;
    }
    if (h->kind != 2 && check_options(p[3], err, errlen)) return -1;
    h->options.predictor = p[3] & FC_OPT_PREDICTOR;
    h->options.joint = (p[3] & FC_OPT_JOINT) != 0;
    h->epoch = fc__get32(p + 4);
    h->seq = fc__get32(p + 8);
    h->base = fc__get32(p + 12);
    h->prev = fc__get32(p + 16);
    h->n = fc__get32(p + 20);
    for (int a = 0; a < 3; a++) h->grid.origin[a] = getf(p + 24 + 4 * a);
    h->grid.step = getf(p + 36);
    for (int a = 0; a < 3; a++) h->grid.levels[a] = (uint16_t)(p[40 + 2 * a] | p[41 + 2 * a] << 8);
    h->checksum = fc__get32(p + 48);
    h->body_len = fc__get32(p + 52);
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
