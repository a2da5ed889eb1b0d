/* bench_codec.c - measures the v2 frame codec (server/wire/frame_codec.h) on
 * recordings made by record_frames: bits per particle per frame for each
 * predictor and with or without joint symbols, against zstd on byte planes
 * of the same residuals and their order-0 entropy; encode and decode times.
 * Every frame is also decoded and checked: each particle within half a
 * step of the simulation's position, identical quantized state.
 *
 * Usage: bench_codec REC [REC ...]   (BENCH_CODEC_ALL=0: default options only,
 * BENCH_CODEC_OPTS=P[,J] with it: predictor P (0 zero motion, 1 constant
 * velocity), joint symbols J; BENCH_CODEC_BANDS=K with it: K bands;
 * BENCH_CODEC_FRAMES, BENCH_CODEC_DUMP, BENCH_CODEC_ZSTD19;
 * BENCH_CODEC_TIERS=1: instead, the encoder's time per frame with the three
 * tiers of detail in use against the full world alone, frame_tier.h, over
 * BENCH_CODEC_PASSES passes, 5 unless set)
 * Prints one line per (recording, options). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zstd.h>

#include "frame_codec.h"
#include "frame_tier.h"

typedef struct rec_frame {
    uint64_t tick;
    uint32_t n;
    uint32_t *id;
    float *x, *y, *z, *temp;
    uint8_t *mat;
} rec_frame;

typedef struct rec {
    uint32_t frames;
    float lo[3], hi[3], spacing;
    rec_frame *f;
} rec;

/* CPU time of this thread: the machine is shared, wall time would count
 * other processes' turns. */
static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static void get(FILE *f, void *p, size_t n) {
    if (n && fread(p, 1, n, f) != n) {
        fprintf(stderr, "short recording\n");
        exit(1);
    }
}

static rec load(const char *path) {
    rec r;
    memset(&r, 0, sizeof r);
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    char magic[8];
    get(f, magic, 8);
    if (memcmp(magic, "FSRECv1", 8)) {
        fprintf(stderr, "%s: not a recording\n", path);
        exit(1);
    }
    get(f, &r.frames, 4);
    float hdr[7];
    get(f, hdr, sizeof hdr);
    memcpy(r.lo, hdr, 12), memcpy(r.hi, hdr + 3, 12), r.spacing = hdr[6];
    r.f = calloc(r.frames, sizeof *r.f);
    for (uint32_t i = 0; i < r.frames; i++) {
        rec_frame *fr = &r.f[i];
        get(f, &fr->tick, 8);
        get(f, &fr->n, 4);
        size_t n = fr->n;
        fr->id = malloc(n * 4 + 4), fr->x = malloc(n * 4 + 4), fr->y = malloc(n * 4 + 4), fr->z = malloc(n * 4 + 4);
        fr->temp = malloc(n * 4 + 4), fr->mat = malloc(n + 1);
        get(f, fr->id, n * 4), get(f, fr->x, n * 4), get(f, fr->y, n * 4), get(f, fr->z, n * 4);
        get(f, fr->mat, n), get(f, fr->temp, n * 4);
    }
    fclose(f);
    return r;
}

static int cmp_d(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n) {
    if (n <= 0) return 0;
    qsort(v, (size_t)n, sizeof *v, cmp_d);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Order-0 entropy (bits per value) of n integers. */
static double entropy0(const int32_t *v, int n, int stride, int off) {
    enum { R = 1 << 16 };
    static uint32_t h[R];
    memset(h, 0, sizeof h);
    int c = 0;
    for (int i = off; i < n; i += stride) {
        int32_t x = v[i] + R / 2;
        h[x < 0 ? 0 : x >= R ? R - 1 : x]++;
        c++;
    }
    double e = 0;
    for (int i = 0; i < R; i++)
        if (h[i]) e -= h[i] * log2((double)h[i] / c);
    return c ? e / c : 0;
}

/* zstd of the residuals as byte planes: zigzag, then per axis the low
 * bytes, then the high bytes. */
static size_t zstd_planes(const int32_t *res, int count, int level, uint8_t *buf, uint8_t *dst, size_t dcap) {
    int m = count / 3;
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < m; i++) {
            int32_t e = res[3 * i + a];
            uint32_t z = (uint32_t)(e << 1) ^ (uint32_t)(e >> 31);
            if (z > 0xffff) z = 0xffff;
            buf[(size_t)a * m + i] = (uint8_t)z;
            buf[(size_t)(3 + a) * m + i] = (uint8_t)(z >> 8);
        }
    size_t r = ZSTD_compress(dst, dcap, buf, (size_t)m * 6, level);
    return ZSTD_isError(r) ? 0 : r;
}

static void run(const char *name, const rec *r, fc_options o, bool extras) {
    /* BENCH_CODEC_DUMP=DIR writes the payloads as DIR/NNNN.bin (for the JS decoder's bench) */
    const char *dump = getenv("BENCH_CODEC_DUMP");
    uint32_t cap = 0;
    for (uint32_t i = 0; i < r->frames; i++)
        if (r->f[i].n > cap) cap = r->f[i].n;
    fc_encoder *e = fc_encoder_create((int)cap, 7);
    fc_decoder *d = fc_decoder_create((int)cap);
    fc_encoder_set_options(e, &o);
    size_t outcap = fc_max_payload((int)cap);
    uint8_t *out = malloc(outcap), *zb = malloc((size_t)cap * 6 + 16),
            *zd = malloc(ZSTD_compressBound((size_t)cap * 6));
    char err[200];
    fc_grid g;
    float step = fc_default_step(r->lo, r->hi, r->spacing);
    if (fc_grid_make(&g, r->lo, r->hi, step, err, sizeof err)) {
        printf("%s\n", err);
        exit(1);
    }
    double *bits = calloc(r->frames, sizeof *bits), *enc_ms = calloc(r->frames, sizeof *enc_ms);
    double *dec_ms = calloc(r->frames, sizeof *dec_ms), *zbits = calloc(r->frames, sizeof *zbits);
    double *zbits3 = calloc(r->frames, sizeof *zbits3), *h0 = calloc(r->frames, sizeof *h0);
    double *z19_ms = calloc(r->frames, sizeof *z19_ms), *z3_ms = calloc(r->frames, sizeof *z3_ms);
    double key_bits = 0, max_err = 0;
    int nd = 0, bad = 0;
    for (uint32_t i = 0; i < r->frames; i++) {
        const rec_frame *fr = &r->f[i];
        fc_input in = {(int)fr->n, fr->id, fr->x, fr->y, fr->z, fr->mat, fr->temp, NULL};
        uint32_t seq = i + 1;
        if (fc_encoder_push(e, seq, &g, &in, err, sizeof err)) {
            printf("push: %s\n", err);
            exit(1);
        }
        double t0 = now_ms();
        size_t len = i == 0 ? fc_encode(e, seq, FC_NONE, FC_NONE, out, outcap, err, sizeof err)
                            : fc_encode(e, seq, seq - 1, i >= 2 ? seq - 2 : FC_NONE, out, outcap, err, sizeof err);
        double t1 = now_ms();
        if (!len) {
            printf("encode: %s\n", err);
            exit(1);
        }
        if (dump) {
            char path[600];
            snprintf(path, sizeof path, "%s/%04u.bin", dump, i);
            FILE *df = fopen(path, "wb");
            if (!df || fwrite(out, 1, len, df) != len) {
                perror(path);
                exit(1);
            }
            fclose(df);
        }
        const fc_frame *df = fc_decode(d, out, len, err, sizeof err);
        double t2 = now_ms();
        if (!df) {
            printf("decode frame %u: %s\n", i, err);
            exit(1);
        }
        /* every particle within half a step of the simulation's position */
        for (uint32_t k = 0; k < fr->n; k++) {
            const float *src[3] = {fr->x, fr->y, fr->z};
            if (df->id[k] != fr->id[k]) bad++;
            for (int a = 0; a < 3; a++) {
                double p = g.origin[a] + (double)df->q[3 * k + a] * g.step;
                double dv = fabs(p - src[a][k]) / g.step;
                if (dv > max_err) max_err = dv;
            }
        }
        double b = 8.0 * (double)len / (fr->n ? fr->n : 1);
        if (i == 0) {
            key_bits = b;
            continue;
        }
        bits[nd] = b, enc_ms[nd] = t1 - t0, dec_ms[nd] = t2 - t1;
        if (extras) {
            int cnt;
            const int32_t *res = fc_encoder_residuals(e, &cnt);
            /* BENCH_CODEC_ZSTD19=0 skips level 19 (slow at 100k) */
            bool z19on = !getenv("BENCH_CODEC_ZSTD19") || atoi(getenv("BENCH_CODEC_ZSTD19"));
            double t3 = now_ms();
            size_t z19 = z19on ? zstd_planes(res, cnt, 19, zb, zd, ZSTD_compressBound((size_t)cap * 6)) : 0;
            double t4 = now_ms();
            size_t z3 = zstd_planes(res, cnt, 3, zb, zd, ZSTD_compressBound((size_t)cap * 6));
            z19_ms[nd] = t4 - t3, z3_ms[nd] = now_ms() - t4;
            zbits[nd] = 8.0 * (double)z19 / (cnt / 3 ? cnt / 3 : 1);
            if (dump && z19) { /* the level-19 planes too, for timing a JS zstd decoder */
                char path[600];
                zstd_planes(res, cnt, 19, zb, zd, ZSTD_compressBound((size_t)cap * 6));
                snprintf(path, sizeof path, "%s/%04u.zst", dump, i);
                FILE *zf = fopen(path, "wb");
                if (!zf || fwrite(zd, 1, z19, zf) != z19) {
                    perror(path);
                    exit(1);
                }
                fclose(zf);
            }
            zbits3[nd] = 8.0 * (double)z3 / (cnt / 3 ? cnt / 3 : 1);
            h0[nd] = entropy0(res, cnt, 3, 0) + entropy0(res, cnt, 3, 1) + entropy0(res, cnt, 3, 2);
        }
        nd++;
    }
    double mean = 0;
    for (int i = 0; i < nd; i++) mean += bits[i];
    mean /= nd ? nd : 1;
    double p90;
    double med = median(bits, nd);
    p90 = nd ? bits[(int)(0.9 * (nd - 1))] : 0;
    printf("%-22s pred %d joint %d bands %d | bits/particle median %5.2f mean %5.2f p90 %5.2f key %5.2f", name,
           o.predictor, o.joint, o.bands, med, mean, p90, key_bits);
    if (extras)
        printf(" | H0 %5.2f zstd19 %5.2f zstd3 %5.2f (%.1f, %.1f ms)", median(h0, nd), median(zbits, nd),
               median(zbits3, nd), median(z19_ms, nd), median(z3_ms, nd));
    printf(" | enc %.2f ms dec %.2f ms (CPU) | max err %.3f step, %d id mismatches (step %.2f mm)\n",
           median(enc_ms, nd), median(dec_ms, nd), max_err, bad, 1e3 * g.step);
    if (max_err > 0.5 + 1e-4 || bad) {
        printf("FAILED: error bound\n");
        exit(1);
    }
    free(z19_ms), free(z3_ms);
    free(bits), free(enc_ms), free(dec_ms), free(zbits), free(zbits3), free(h0), free(out), free(zb), free(zd);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d);
}

/* Codes frame i (stored as seq i + 1) of tier t in e: its subset on its
 * grid with the tier's options, then a delta against the frame before (a
 * keyframe first), as the server's stream does (server/loop/stream.c); CPU
 * ms. */
static double code_tier(fc_encoder *e, const rec *r, uint32_t i, int t, const fc_grid *full, int32_t *sub, uint8_t *out,
                        size_t outcap) {
    const rec_frame *fr = &r->f[i];
    char err[200];
    fc_options o = fc_tier_options(fc_default_options(), (int)fr->n);
    if (t) fc_encoder_set_options(e, &o);
    double t0 = now_ms();
    fc_grid g = fc_tier_grid(full, t);
    fc_input in = {(int)fr->n, fr->id, fr->x, fr->y, fr->z, fr->mat, fr->temp, NULL};
    if (t) in.count = fc_tier_subset(t, fr->id, NULL, (int)fr->n, sub), in.order = sub;
    uint32_t seq = i + 1;
    size_t len = 0;
    if (!fc_encoder_push(e, seq, &g, &in, err, sizeof err))
        len = fc_encode(e, seq, i ? seq - 1 : FC_NONE, i >= 2 ? seq - 2 : FC_NONE, out, outcap, err, sizeof err);
    double t1 = now_ms();
    if (!len) {
        printf("tier %d: %s\n", t, err);
        exit(1);
    }
    return t1 - t0;
}

/* The encoder's time per frame with the three tiers in use (each frame
 * coded once per tier, as when clients take every tier) against one tier
 * (the full world only), interleaved frame by frame in the same run, over
 * `passes` passes through the recording (the encoders restarted each time;
 * on a shared machine a pass's ratio varies); the bar, on the median pass's
 * ratio: at most twice. */
static void tiers_cost(const char *name, const rec *r, int passes) {
    char err[200];
    fc_grid g;
    if (fc_grid_make(&g, r->lo, r->hi, fc_default_step(r->lo, r->hi, r->spacing), err, sizeof err)) {
        printf("%s\n", err);
        exit(1);
    }
    int cap = 0;
    for (uint32_t i = 0; i < r->frames; i++) cap = (int)r->f[i].n > cap ? (int)r->f[i].n : cap;
    fc_encoder *one = fc_encoder_create(cap, 1), *three[FC_TIERS];
    for (int t = 0; t < FC_TIERS; t++) three[t] = fc_encoder_create(cap, 1);
    size_t outcap = fc_max_payload(cap);
    uint8_t *out = malloc(outcap);
    int32_t *sub = malloc(sizeof *sub * (size_t)cap);
    double *ms1 = calloc(r->frames, sizeof *ms1), *ms3 = calloc(r->frames, sizeof *ms3);
    double *m1 = calloc((size_t)passes, sizeof *m1), *m3 = calloc((size_t)passes, sizeof *m3);
    double *ratio = calloc((size_t)passes, sizeof *ratio);
    char each[400] = "";
    for (int p = 0; p < passes; p++) {
        fc_encoder_reset(one, 1);
        for (int t = 0; t < FC_TIERS; t++) fc_encoder_reset(three[t], 1);
        for (uint32_t i = 0; i < r->frames; i++) {
            /* alternate which goes first, so neither always finds the caches warm */
            double a = 0, b = 0;
            if (i % 2) a = code_tier(one, r, i, 0, &g, sub, out, outcap);
            for (int t = 0; t < FC_TIERS; t++) b += code_tier(three[t], r, i, t, &g, sub, out, outcap);
            if (!(i % 2)) a = code_tier(one, r, i, 0, &g, sub, out, outcap);
            ms1[i] = a, ms3[i] = b;
        }
        /* the first frame is a keyframe in both: deltas only */
        int nd = (int)r->frames - 1;
        m1[p] = median(ms1 + 1, nd), m3[p] = median(ms3 + 1, nd);
        ratio[p] = m1[p] > 0 ? m3[p] / m1[p] : 0;
        size_t at = strlen(each);
        if (at + 16 < sizeof each) snprintf(each + at, sizeof each - at, "%s%.2f", p ? " " : "", ratio[p]);
    }
    double rm = median(ratio, passes), t1 = median(m1, passes), t3 = median(m3, passes);
    printf("%-22s tiers: %u frames of %d particles, encoder time a frame (CPU, median of %d passes): one tier %.2f ms, "
           "three tiers %.2f ms; ratio %.2fx, median of the passes' (%s) (bar <= 2x)%s\n",
           name, r->frames, cap, passes, t1, t3, rm, each, rm <= 2 ? "" : "  MISSED");
    free(ms1), free(ms3), free(m1), free(m3), free(ratio), free(out), free(sub);
    fc_encoder_destroy(one);
    for (int t = 0; t < FC_TIERS; t++) fc_encoder_destroy(three[t]);
}

int main(int argc, char **argv) {
    bool all = !getenv("BENCH_CODEC_ALL") || atoi(getenv("BENCH_CODEC_ALL"));
    for (int i = 1; i < argc; i++) {
        rec r = load(argv[i]);
        if (getenv("BENCH_CODEC_FRAMES") && (uint32_t)atoi(getenv("BENCH_CODEC_FRAMES")) < r.frames)
            r.frames = (uint32_t)atoi(getenv("BENCH_CODEC_FRAMES")); /* the rest stay loaded, unused */
        const char *name = strrchr(argv[i], '/') ? strrchr(argv[i], '/') + 1 : argv[i];
        if (getenv("BENCH_CODEC_TIERS") && atoi(getenv("BENCH_CODEC_TIERS"))) {
            int passes = getenv("BENCH_CODEC_PASSES") ? atoi(getenv("BENCH_CODEC_PASSES")) : 5;
            tiers_cost(name, &r, passes > 0 ? passes : 1);
        } else if (all) {
            /* the codec's choices, without bands (the research options the
             * codec once had are measured in docs/history/) */
            static const fc_options opts[] = {
                {FC_PRED_ZERO, FC_JOINT_OFF, 1},
                {FC_PRED_CV, FC_JOINT_OFF, 1},
                {FC_PRED_CV, FC_JOINT_ON, 1},
            };
            for (size_t k = 0; k < sizeof opts / sizeof opts[0]; k++) run(name, &r, opts[k], true);
        } else {
            /* BENCH_CODEC_OPTS=P[,J]: one predictor (and joint symbols choice)
             * instead of the default */
            fc_options o = fc_default_options();
            if (getenv("BENCH_CODEC_OPTS")) sscanf(getenv("BENCH_CODEC_OPTS"), "%d,%d", &o.predictor, &o.joint);
            /* BENCH_CODEC_BANDS=K: K bands (1: none; default: the codec's, bands past 65536 particles) */
            if (getenv("BENCH_CODEC_BANDS")) o.bands = atoi(getenv("BENCH_CODEC_BANDS"));
            run(name, &r, o, true);
        }
        for (uint32_t k = 0; k < r.frames; k++) {
            rec_frame *f = &r.f[k];
            free(f->id), free(f->x), free(f->y), free(f->z), free(f->temp), free(f->mat);
        }
        free(r.f);
    }
    return 0;
}
