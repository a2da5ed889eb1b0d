/* test_frame_codec.c - C unit tests of the v2 frame codec (server/wire/frame_codec.h):
 * round trips within half a quantization step for every particle over many
 * frames of a running simulation (an emitter, a drain, a scene load, a
 * decoder joining mid-stream with a keyframe, a client on every 2nd frame),
 * synthetic frames with particles added and removed and materials and
 * temperatures changed, refusal of bad input (truncated, corrupted, wrong
 * baseline, other epoch, too many particles, random bytes), and the golden
 * vectors in protocol/golden shared with the page's decoder and its JavaScript oracle; bands
 * (kind 2) decoded whole and by one decoder per band, and refused when
 * malformed.
 *
 *   test_frame_codec DIR                 run (DIR: protocol/golden)
 *   test_frame_codec --write-golden DIR  (re)write frame_v2_*.bin and frame_v2.json
 * Prints "N passed, N failed"; exits non-zero on any failure. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_sim.h"
#include "frame_bands.h"
#include "frame_codec.h"
#include "frame_tier.h"
#include "table_coder.h"
#include "testlib.h"

static const char *g_dir = "protocol/golden";
static bool g_write;
/* The options the round-trip and bad-input tests encode with: the default,
 * then variants (zero motion throughout, joint symbols always). */
static fc_options g_opts;

static fc_encoder *make_encoder(int cap, uint32_t epoch) {
    fc_encoder *e = fc_encoder_create(cap, epoch);
    if (e) fc_encoder_set_options(e, &g_opts);
    return e;
}

/* ---- Synthetic frames ----------------------------------------------------- */

/* A frame the tests build by hand: float positions, ids, materials,
 * temperatures.  A local of each test. */
typedef struct syn {
    int n;
    uint32_t id[512];
    float x[512], y[512], z[512], temp[512];
    uint8_t mat[512];
} syn;

static fc_input syn_input(const syn *s) {
    fc_input in = {s->n, s->id, s->x, s->y, s->z, s->mat, s->temp, NULL};
    return in;
}

static const float BOX_LO[3] = {0, 0, 0}, BOX_HI[3] = {2.0f, 1.0f, 0.5f};

static void syn_block(syn *s, int n, uint64_t *rng) {
    s->n = n;
    for (int k = 0; k < n; k++) {
        s->id[k] = (uint32_t)k;
        s->x[k] = 0.1f + 0.05f * (float)(k % 10) + 0.01f * tl_rand01(rng);
        s->y[k] = 0.1f + 0.05f * (float)((k / 10) % 10) + 0.01f * tl_rand01(rng);
        s->z[k] = 0.1f + 0.05f * (float)(k / 100) + 0.01f * tl_rand01(rng);
        s->mat[k] = (uint8_t)(k < n / 2 ? 0 : 2);
        s->temp[k] = 20.0f;
    }
}

/* Moves every particle: a common drift plus a little noise, clamped. */
static void syn_move(syn *s, uint64_t *rng, float dx) {
    for (int k = 0; k < s->n; k++) {
        s->x[k] += dx + 0.004f * (tl_rand01(rng) - 0.5f);
        s->y[k] -= 0.5f * dx + 0.004f * (tl_rand01(rng) - 0.5f);
        s->z[k] += 0.002f * (tl_rand01(rng) - 0.5f);
        if (s->y[k] < 0) s->y[k] = 0;
    }
}

/* Removes particles at the given indices (increasing) and appends m new
 * ones with ids from next_id. */
static void syn_edit(syn *s, const int *rm, int nrm, int m, uint32_t *next_id, uint64_t *rng) {
    int w = 0, r = 0;
    for (int k = 0; k < s->n; k++) {
        if (r < nrm && rm[r] == k) {
            r++;
            continue;
        }
        s->id[w] = s->id[k], s->x[w] = s->x[k], s->y[w] = s->y[k], s->z[w] = s->z[k];
        s->mat[w] = s->mat[k], s->temp[w] = s->temp[k];
        w++;
    }
    for (int j = 0; j < m; j++, w++) {
        s->id[w] = (*next_id)++;
        s->x[w] = 1.5f + 0.02f * (float)j;
        s->y[w] = 0.8f + 0.01f * tl_rand01(rng);
        s->z[w] = 0.25f;
        s->mat[w] = 1;
        s->temp[w] = 60.0f;
    }
    s->n = w;
}

/* Checks the decoded frame against the source: the same ids, materials,
 * temperature bytes, and positions within half a step. */
static double check_frame(const fc_frame *f, const fc_grid *g, const syn *s, const char *what) {
    double worst = 0;
    CHECK(f && f->n == s->n, "%s: %d particles decoded, %d sent", what, f ? f->n : -1, s->n);
    if (!f || f->n != s->n) return 1e9;
    int bad = 0;
    for (int k = 0; k < s->n; k++) {
        const float *src[3] = {s->x, s->y, s->z};
        bad += f->id[k] != s->id[k] || f->mat[k] != s->mat[k] || f->temp[k] != (uint8_t)lrintf(s->temp[k] + 40);
        for (int a = 0; a < 3; a++) {
            double p = g->origin[a] + f->q[3 * k + a] * (double)g->step;
            double d = fabs(p - fmin(fmax(src[a][k], BOX_LO[a]), BOX_HI[a])) / g->step;
            worst = d > worst ? d : worst;
        }
    }
    CHECK(!bad, "%s: %d particles with another id, material or temperature", what, bad);
    CHECK(worst <= 0.5 + 1e-3, "%s: a position is %.4f steps off (bound 0.5)", what, worst);
    return worst;
}

static fc_grid syn_grid(void) {
    fc_grid g;
    char err[160];
    int rc = fc_grid_make(&g, BOX_LO, BOX_HI, fc_default_step(BOX_LO, BOX_HI, 0.05f), err, sizeof err);
    CHECK(rc == 0, "grid: %s", err);
    return g;
}

/* Frame 1 of s as a keyframe into key, then s moved as frame 2, a delta
 * against it, into del (each buffer 1 << 16 bytes); their lengths. */
static void key_and_delta(fc_encoder *e, syn *s, uint64_t *rng, const fc_grid *g, uint8_t *key, size_t *nk,
                          uint8_t *del, size_t *nd) {
    char err[200];
    fc_input in = syn_input(s);
    fc_encoder_push(e, 1, g, &in, err, sizeof err);
    *nk = fc_encode(e, 1, FC_NONE, FC_NONE, key, 1 << 16, err, sizeof err);
    syn_move(s, rng, 0.01f);
    in = syn_input(s);
    fc_encoder_push(e, 2, g, &in, err, sizeof err);
    *nd = fc_encode(e, 2, 1, FC_NONE, del, 1 << 16, err, sizeof err);
}

/* ---- Tests ------------------------------------------------------------------ */

static void grid_and_step(void) {
    float lo[3] = {0, 0, 0}, hi[3] = {6.894f, 4.137f, 1.724f};
    float s = fc_default_step(lo, hi, 0.08f);
    CHECK(fabsf(s - 6.894f / 1024) < 1e-6f, "dam break step %g, want longest side / 1024", (double)s);
    float hi2[3] = {11.789f, 7.073f, 2.947f};
    s = fc_default_step(lo, hi2, 0.08f);
    CHECK(fabsf(s - 0.008f) < 1e-7f, "100k dam break step %g, want spacing / 10", (double)s);
    fc_grid g;
    char err[160];
    CHECK(fc_grid_make(&g, lo, hi, 6.894f / 1024, err, sizeof err) == 0 && g.levels[0] == 1025, "levels %u",
          g.levels[0]);
    CHECK(fc_grid_make(&g, lo, hi, 1e-5f, err, sizeof err) == -1 && strstr(err, "levels"), "too fine: %s", err);
    CHECK(fc_grid_make(&g, lo, hi, 0, err, sizeof err) == -1, "zero step accepted");
    REPORT("default step: dam break 20k %.2f mm (1/1024 of 6.89 m), 100k %.2f mm (spacing/10)", 6.894 / 1024 * 1e3,
           8.0);
}

/* Synthetic: 300 particles, 60 frames, removals, additions, material and
 * temperature changes; a second decoder on every 2nd frame; a keyframe
 * for a decoder that joins at frame 30. */
static void synthetic_round_trip(void) {
    uint64_t rng = 11;
    syn s;
    syn_block(&s, 300, &rng);
    uint32_t next_id = 300;
    fc_grid g = syn_grid();
    fc_encoder *e = make_encoder(512, 1);
    fc_decoder *d = fc_decoder_create(512), *half = fc_decoder_create(512), *late = fc_decoder_create(512);
    static uint8_t buf[1 << 18];
    char err[200];
    double worst = 0;
    int frames = 0, refused = 0;
    for (uint32_t seq = 1; seq <= 60; seq++) {
        syn_move(&s, &rng, 0.003f);
        if (seq % 7 == 0) {
            int rm[3] = {(int)seq % 50, 100 + (int)seq, 250};
            syn_edit(&s, rm, s.n > 260 ? 3 : 0, (int)(seq % 5), &next_id, &rng);
        }
        if (seq == 20) s.mat[5] = 3, s.temp[6] = 80.0f, s.temp[7] = -10.0f;
        fc_input in = syn_input(&s);
        CHECK(fc_encoder_push(e, seq, &g, &in, err, sizeof err) == 0, "push: %s", err);
        size_t n = seq == 1 ? fc_encode(e, seq, FC_NONE, FC_NONE, buf, sizeof buf, err, sizeof err)
                            : fc_encode(e, seq, seq - 1, seq > 2 ? seq - 2 : FC_NONE, buf, sizeof buf, err, sizeof err);
        CHECK(n > 0, "encode %u: %s", seq, err);
        const fc_frame *f = fc_decode(d, buf, n, err, sizeof err);
        CHECK(f != NULL, "decode %u: %s", seq, err);
        double w = check_frame(f, &g, &s, "every frame");
        worst = w > worst ? w : worst;
        frames++;
        /* every 2nd frame: against the last two that client got */
        if (seq % 2 == 1) {
            size_t m = seq == 1
                           ? fc_encode(e, seq, FC_NONE, FC_NONE, buf, sizeof buf, err, sizeof err)
                           : fc_encode(e, seq, seq - 2, seq > 4 ? seq - 4 : FC_NONE, buf, sizeof buf, err, sizeof err);
            check_frame(fc_decode(half, buf, m, err, sizeof err), &g, &s, "every 2nd frame");
        }
        /* a decoder that joins at 30: a delta first is refused, then a keyframe */
        if (seq == 30) {
            refused += fc_decode(late, buf, n, err, sizeof err) == NULL;
            CHECK(strstr(err, "none yet") != NULL, "join: %s", err);
            size_t k = fc_encode(e, seq, FC_NONE, FC_NONE, buf, sizeof buf, err, sizeof err);
            check_frame(fc_decode(late, buf, k, err, sizeof err), &g, &s, "keyframe on join");
        } else if (seq == 31) { /* the joiner holds 30 only: no velocity yet */
            size_t k = fc_encode(e, seq, 30, FC_NONE, buf, sizeof buf, err, sizeof err);
            check_frame(fc_decode(late, buf, k, err, sizeof err), &g, &s, "first delta after join");
        } else if (seq > 31) {
            /* re-encode the shared delta (the buffer was reused above) */
            size_t k = fc_encode(e, seq, seq - 1, seq - 2, buf, sizeof buf, err, sizeof err);
            check_frame(fc_decode(late, buf, k, err, sizeof err), &g, &s, "after join");
        }
    }
    CHECK(refused == 1, "the late decoder accepted a delta before its keyframe");
    REPORT("%d frames, %d particles at the end (%u ids issued), worst error %.3f steps", frames, s.n, next_id, worst);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d), fc_decoder_destroy(half), fc_decoder_destroy(late);
}

/* Steps world w and pushes its frame into e as frame seq on the grid over
 * its box (g). */
static void push_world(fs_world *w, fc_encoder *e, uint32_t seq, fc_grid *g, fs_particles_view *v) {
    char err[200];
    fs_world_step(w);
    fs_world_view(w, v);
    fs_domain dom = fs_world_domain(w);
    float lo[3] = {dom.box_min.x, dom.box_min.y, dom.box_min.z}, hi[3] = {dom.box_max.x, dom.box_max.y, dom.box_max.z};
    CHECK(fc_grid_make(g, lo, hi, fc_default_step(lo, hi, dom.spacing), err, sizeof err) == 0, "grid: %s", err);
    fc_input in = {v->count, v->id, v->x, v->y, v->z, v->material, v->temperature, v->by_id};
    CHECK(fc_encoder_push(e, seq, g, &in, err, sizeof err) == 0, "push: %s", err);
}

/* A running world: the fountain (an emitter and a drain) for 600 frames,
 * a scene load (dam break) at frame 400 (new epoch, keyframe), a decoder
 * joining at 250.  Every particle within half a step, every frame. */
static void world_round_trip(void) {
    fs_world_def def = fs_default_world_def();
    def.capacity = 4000;
    fs_world *w = fs_world_create(&def);
    fs_error ferr;
    CHECK(fs_world_load_scene(w, "fountain", 1500, &ferr) == FS_OK, "load: %s", ferr.msg);
    fc_encoder *e = make_encoder(4000, 100);
    fc_decoder *d = fc_decoder_create(4000), *late = fc_decoder_create(4000);
    size_t cap = fc_max_payload(4000);
    uint8_t *buf = malloc(cap);
    char err[200];
    double worst = 0;
    int mismatched = 0, added = 0, removed = 0, frames = 0;
    size_t bytes = 0, particles = 0;
    uint32_t key_seq = 1;
    int prev_n = 0;
    fc_grid g;
    for (uint32_t seq = 1; seq <= 600; seq++) {
        if (seq == 400) {
            CHECK(fs_world_load_scene(w, "dam_break", 1500, &ferr) == FS_OK, "load: %s", ferr.msg);
            fc_encoder_reset(e, 101);
            key_seq = seq;
        }
        fs_particles_view v;
        push_world(w, e, seq, &g, &v);
        uint32_t base = seq == key_seq ? FC_NONE : seq - 1;
        uint32_t prev = seq >= key_seq + 2 ? seq - 2 : FC_NONE;
        size_t n = fc_encode(e, seq, base, prev, buf, cap, err, sizeof err);
        CHECK(n > 0, "encode %u: %s", seq, err);
        const fc_frame *f = fc_decode(d, buf, n, err, sizeof err);
        CHECK(f != NULL, "decode %u: %s", seq, err);
        if (seq == 250) {
            size_t k = fc_encode(e, seq, FC_NONE, FC_NONE, buf, cap, err, sizeof err);
            CHECK(fc_decode(late, buf, k, err, sizeof err) != NULL, "join keyframe: %s", err);
        } else if (seq == 251) { /* the joiner holds 250 only: no velocity yet */
            size_t k = fc_encode(e, seq, 250, FC_NONE, buf, cap, err, sizeof err);
            CHECK(fc_decode(late, buf, k, err, sizeof err) != NULL, "late decoder at %u: %s", seq, err);
            n = fc_encode(e, seq, base, prev, buf, cap, err, sizeof err);
        } else if (seq > 251 && seq != key_seq) {
            CHECK(fc_decode(late, buf, n, err, sizeof err) != NULL, "late decoder at %u: %s", seq, err);
        } else if (seq == key_seq && seq > 1) {
            /* a scene load: everyone gets the keyframe */
            CHECK(fc_decode(late, buf, n, err, sizeof err) != NULL, "late decoder at the scene load: %s", err);
        }
        if (!f) continue;
        if (seq > 1 && seq != key_seq) {
            bytes += n;
            particles += (size_t)v.count;
        }
        if (v.count > prev_n)
            added += v.count - prev_n;
        else
            removed += prev_n - v.count;
        prev_n = v.count;
        frames++;
        for (int k = 0; k < v.count; k++) {
            int i = v.by_id[k];
            const float *src[3] = {v.x, v.y, v.z};
            mismatched += f->id[k] != v.id[i] || f->mat[k] != v.material[i];
            for (int a = 0; a < 3; a++) {
                double p = g.origin[a] + f->q[3 * k + a] * (double)g.step;
                double dd = fabs(p - src[a][i]) / g.step;
                worst = dd > worst ? dd : worst;
            }
        }
    }
    const fc_frame *lf = fc_decoder_frame(late, 600), *df = fc_decoder_frame(d, 600);
    CHECK(lf && df && lf->n == df->n && !memcmp(lf->q, df->q, (size_t)df->n * 6), "the late decoder disagrees");
    CHECK(worst <= 0.5 + 1e-4, "worst position error %.4f steps", worst);
    CHECK(!mismatched, "%d particles with another id or material", mismatched);
    CHECK(added > 0 && removed > 0, "the fountain neither added nor removed particles (%d, %d)", added, removed);
    REPORT("%d frames, worst error %.4f steps, count changes +%d -%d, deltas %.2f bits/particle (1 step per frame)",
           frames, worst, added, removed, 8.0 * (double)bytes / (double)(particles ? particles : 1));
    free(buf);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d), fc_decoder_destroy(late);
    fs_world_destroy(w);
}

/* Bad input: every refusal has a reason, nothing crashes, a refused delta
 * leaves the frames held intact. */
static void bad_input(void) {
    uint64_t rng = 5;
    syn s;
    syn_block(&s, 200, &rng);
    fc_grid g = syn_grid();
    fc_encoder *e = make_encoder(512, 9);
    fc_decoder *d = fc_decoder_create(512), *small = fc_decoder_create(100);
    static uint8_t key[1 << 16], del[1 << 16], bad[1 << 16];
    char err[200];
    fc_input in = syn_input(&s);
    fc_encoder_push(e, 1, &g, &in, err, sizeof err);
    size_t nk = fc_encode(e, 1, FC_NONE, FC_NONE, key, sizeof key, err, sizeof err);
    syn_move(&s, &rng, 0.01f);
    uint32_t nid = 200;
    int rm[2] = {3, 150};
    syn_edit(&s, rm, 2, 4, &nid, &rng);
    in = syn_input(&s);
    fc_encoder_push(e, 2, &g, &in, err, sizeof err);
    size_t nd = fc_encode(e, 2, 1, FC_NONE, del, sizeof del, err, sizeof err);
    CHECK(nk > FC_HEADER_BYTES && nd > FC_HEADER_BYTES, "encode: %s", err);
    fc_header dh;
    CHECK(!fc_read_header(del, nd, &dh, err, sizeof err) && (del[3] & 0x20) &&
              dh.options.joint == (g_opts.joint == FC_JOINT_ON),
          "the delta's header: options 0x%02x, joint %d", del[3], dh.options.joint);

    /* too many particles for the decoder */
    CHECK(!fc_decode(small, key, nk, err, sizeof err) && strstr(err, "at most"), "capacity: %s", err);
    /* a delta before any keyframe, then against a frame not held */
    CHECK(!fc_decode(d, del, nd, err, sizeof err), "delta without its base accepted");
    CHECK(fc_decode(d, key, nk, err, sizeof err) != NULL, "keyframe: %s", err);
    memcpy(bad, del, nd);
    bad[12] = 7; /* base 7 */
    CHECK(!fc_decode(d, bad, nd, err, sizeof err) && strstr(err, "does not hold"), "wrong base: %s", err);
    memcpy(bad, del, nd);
    bad[4] ^= 1; /* another epoch */
    CHECK(!fc_decode(d, bad, nd, err, sizeof err) && strstr(err, "stream"), "epoch: %s", err);
    /* every truncation: cut, and cut with the length field patched */
    int accepted = 0;
    for (size_t cut = 0; cut < nd; cut++) {
        accepted += fc_decode(d, del, cut, err, sizeof err) != NULL;
        if (cut >= FC_HEADER_BYTES) {
            memcpy(bad, del, cut);
            uint32_t bl = (uint32_t)(cut - FC_HEADER_BYTES);
            for (int i = 0; i < 4; i++) bad[52 + i] = (uint8_t)(bl >> (8 * i));
            accepted += fc_decode(d, bad, cut, err, sizeof err) != NULL;
        }
    }
    CHECK(!accepted, "%d truncated payloads accepted", accepted);
    /* a payload longer than it declares */
    memcpy(bad, del, nd);
    bad[nd] = 0;
    CHECK(!fc_decode(d, bad, nd + 1, err, sizeof err) && strstr(err, "declares"), "trailing: %s", err);
    /* a declared count the body cannot hold */
    memcpy(bad, del, nd);
    bad[20] = 0xff, bad[21] = 0xff, bad[22] = 0, bad[23] = 0;
    CHECK(!fc_decode(d, bad, nd, err, sizeof err), "n = 65535 accepted");
    /* single bit flips in the body: refused (checksum) or, rarely, a body
     * that decodes to the same frame; never a crash */
    int flipped_ok = 0, flips = 0, slack = 0;
    for (size_t i = FC_HEADER_BYTES; i < nd; i++)
        for (int bit = 0; bit < 8; bit += 3) {
            memcpy(bad, del, nd);
            bad[i] ^= (uint8_t)(1u << bit);
            const fc_frame *bf = fc_decode(d, bad, nd, err, sizeof err);
            flips++;
            if (!bf) continue;
            /* the coder's last bytes carry slack: a flip there decodes to the same frame */
            bool same = bf->n == s.n;
            for (int k = 0; same && k < s.n; k++)
                same = bf->id[k] == s.id[k] && bf->mat[k] == s.mat[k] &&
                       fabs(g.origin[0] + bf->q[3 * k] * (double)g.step - s.x[k]) <= 0.5001 * g.step;
            slack += same;
            flipped_ok += !same;
        }
    CHECK(flipped_ok == 0, "%d of %d corrupted payloads decoded to another frame", flipped_ok, flips);
    /* random bytes behind a valid header */
    int rnd_ok = 0;
    for (int t = 0; t < 2000; t++) {
        memcpy(bad, del, FC_HEADER_BYTES);
        size_t len = FC_HEADER_BYTES + (size_t)(tl_rand01(&rng) * 400);
        for (size_t i = FC_HEADER_BYTES; i < len; i++) bad[i] = (uint8_t)(tl_rand01(&rng) * 256);
        uint32_t bl = (uint32_t)(len - FC_HEADER_BYTES);
        for (int i = 0; i < 4; i++) bad[52 + i] = (uint8_t)(bl >> (8 * i));
        rnd_ok += fc_decode(d, bad, len, err, sizeof err) != NULL;
    }
    CHECK(rnd_ok == 0, "%d random bodies accepted", rnd_ok);
    /* after all that the real delta still decodes: the base was kept */
    const fc_frame *f = fc_decode(d, del, nd, err, sizeof err);
    CHECK(f != NULL, "the real delta after bad ones: %s", err);
    check_frame(f, &g, &s, "after bad input");
    /* encoder refusals */
    CHECK(fc_encode(e, 2, 1, FC_NONE, bad, 10, err, sizeof err) == 0, "tiny buffer accepted");
    CHECK(fc_encode(e, 2, 77, FC_NONE, bad, sizeof bad, err, sizeof err) == 0, "unknown base accepted");
    CHECK(fc_encoder_push(e, 2, &g, &in, err, sizeof err) == -1, "seq not growing accepted");
    syn t = s;
    t.id[5] = t.id[4];
    in = syn_input(&t);
    CHECK(fc_encoder_push(e, 3, &g, &in, err, sizeof err) == -1 && strstr(err, "increasing"), "ids: %s", err);
    REPORT("%zu truncations, 2000 random bodies: all refused; %d bit flips: refused but %d in the coder's final slack "
           "(decoded to the same frame)",
           2 * nd - FC_HEADER_BYTES, flips, slack);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d), fc_decoder_destroy(small);
}

/* The table coder alone (table_coder.h): the value split, the frequency
 * normalisation, rANS and raw bits round trips; then the payload-level
 * refusals only a table-coded delta has. */
static void table_coder(void) {
    /* every value up to 2^17 splits and joins back */
    int bad = 0;
    for (int32_t v = -131071; v <= 131071; v++) {
        tc_split sp = tc_split_value(v);
        bad += sp.sym >= TC_NSYM || sp.nraw != tc_sym_nraw[sp.sym] || (sp.nraw < 32 && sp.raw >> sp.nraw) ||
               tc_join(sp.sym, sp.raw) != v;
    }
    CHECK(!bad, "%d values do not split and join back", bad);
    /* joint symbols: every triple in [-2, 2]^3 has its own, and nothing else */
    bool seen[TC_JOINT_ESC] = {false};
    for (int x = -3; x <= 3; x++)
        for (int y = -3; y <= 3; y++)
            for (int z = -3; z <= 3; z++) {
                int j = tc_joint_sym(x, y, z);
                bool in = abs(x) <= 2 && abs(y) <= 2 && abs(z) <= 2;
                if (!in) {
                    bad += j != TC_JOINT_ESC;
                    continue;
                }
                bad += j < 0 || j >= TC_JOINT_ESC || seen[j] || tc_joint_val[j][0] != x || tc_joint_val[j][1] != y ||
                       tc_joint_val[j][2] != z;
                if (j >= 0 && j < TC_JOINT_ESC) seen[j] = true;
            }
    bad += tc_joint_sym(100000, 0, 0) != TC_JOINT_ESC || tc_joint_sym(0, -131071, 0) != TC_JOINT_ESC;
    CHECK(!bad, "%d joint symbols wrong", bad);
    /* normalisation: totals of TC_SCALE, every counted symbol at least 1 */
    static tc_tables t;
    memset(&t, 0, sizeof t);
    uint64_t rng = 77;
    uint32_t count[TC_SYM_MAX] = {0};
    for (int trial = 0; trial < 200; trial++) {
        for (int k = 0; k < TC_NSYM; k++)
            count[k] = tl_rand01(&rng) < 0.3 ? 0 : (uint32_t)(tl_rand01(&rng) * (trial % 2 ? 1e6 : 20));
        if (trial == 7) /* one symbol holds nearly everything */
            for (int k = 0; k < TC_NSYM; k++) count[k] = k == 3 ? 1000000u : 1u;
        tc_normalize(&t, 0, count);
        uint32_t sum = 0;
        int wrong = 0;
        for (int k = 0; k < TC_NSYM; k++) {
            sum += t.freq[0][k];
            wrong += (count[k] > 0) != (t.freq[0][k] > 0) || (k >= t.nsym[0] && count[k]);
        }
        bool any = false;
        for (int k = 0; k < TC_NSYM; k++) any |= count[k] > 0;
        bad += wrong || (any ? sum != TC_SCALE : t.nsym[0] != 0);
    }
    CHECK(!bad, "%d normalisations off", bad);
    /* rANS and raw bits: 30000 values in 12 contexts, skewed as residuals are */
    enum { NV = 30000 };
    static uint8_t sym[NV], ctx[NV], buf[NV * 3 + 64], raw[NV * 3 + 64];
    static int32_t val[NV];
    static uint32_t cnt[TC_MAX_CTX][TC_SYM_MAX];
    memset(cnt, 0, sizeof cnt);
    tc_bit_writer w;
    tc_bits_init(&w, raw, sizeof raw);
    for (int i = 0; i < NV; i++) {
        double u = tl_rand01(&rng);
        int32_t v = (int32_t)((u * u * u) * (i % 100 == 0 ? 100000 : 40)) * (tl_rand01(&rng) < 0.5 ? -1 : 1);
        tc_split sp = tc_split_value(v);
        val[i] = v, sym[i] = sp.sym, ctx[i] = (uint8_t)((i % 3) * 4 + (i / 3) % 4);
        cnt[ctx[i]][sp.sym]++;
        tc_bits_put(&w, sp.raw, sp.nraw);
    }
    tc_bits_flush(&w);
    for (int c = 0; c < TC_MAX_CTX; c++) {
        tc_normalize(&t, c, cnt[c]);
        uint16_t fr[TC_SYM_MAX];
        memcpy(fr, t.freq[c], sizeof fr);
        CHECK(tc_build_context(&t, c, t.nsym[c], fr), "context %d does not build", c);
    }
    size_t len = tc_rans_encode(&t, sym, ctx, NULL, NV, buf, sizeof buf);
    CHECK(len > 0 && !w.overflow, "encode");
    tc_rans_dec rd;
    tc_bit_reader br;
    CHECK(tc_rans_dec_init(&rd, buf + sizeof buf - len, len), "states");
    tc_bitr_init(&br, raw, w.len);
    int wrong = 0;
    for (int i = 0; i < NV; i++) {
        if (i % 3 == 0) tc_bitr_fill(&br);
        int sy = tc_rans_get(&rd, &t, i % 3, ctx[i], rd.end - rd.p >= 6);
        wrong += sy != sym[i] || tc_join(sy, tc_bitr_take(&br, tc_sym_nraw[sy])) != val[i];
    }
    bool ended = rd.p == rd.end && !rd.overrun && tc_bitr_left(&br) >= 0 && tc_bitr_left(&br) < 8;
    for (int i = 0; i < TC_STATES; i++) ended &= rd.x[i] == TC_RANS_L;
    CHECK(!wrong && ended, "%d values decoded wrong; streams %s", wrong, ended ? "ended" : "did not end");
    /* frequencies that do not sum to the scale, a state out of range */
    uint16_t fr[TC_NSYM] = {4000, 95};
    CHECK(!tc_build_context(&t, 0, 2, fr), "a table summing to 4095 accepted");
    fr[1] = 97;
    CHECK(!tc_build_context(&t, 0, 2, fr), "a table summing to 4097 accepted");
    uint8_t st[12] = {0};
    CHECK(!tc_rans_dec_init(&rd, st, sizeof st), "a zero state accepted");
    for (int i = 0; i < TC_STATES; i++) st[4 * i + 2] = 1; /* every state at L = 2^16 */
    CHECK(tc_rans_dec_init(&rd, st, sizeof st), "states at the lower bound refused");
    st[2] = 0, st[0] = st[1] = 0xff; /* the first at L - 1 */
    CHECK(!tc_rans_dec_init(&rd, st, sizeof st), "a state below the lower bound accepted");
    REPORT("%d values: %zu rANS bytes + %zu raw bytes, %.2f bits a value", NV, len, w.len,
           8.0 * (double)(len + w.len) / NV);

    /* payload level: a table-coded delta with its stream lengths or first
     * state broken, or options of a coding this decoder does not read (an
     * earlier encoder's: the adaptive residual coder, cell order, a
     * neighbour residual, predictors 2 and 3) in its header, is refused and
     * the decoder keeps its frames */
    g_opts = fc_default_options();
    syn s;
    syn_block(&s, 200, &rng);
    fc_grid g = syn_grid();
    fc_encoder *e = make_encoder(512, 4);
    fc_decoder *d = fc_decoder_create(512);
    static uint8_t key[1 << 16], del[1 << 16], b2[1 << 16];
    char err[400];
    size_t nk, nd;
    key_and_delta(e, &s, &rng, &g, key, &nk, del, &nd);
    CHECK(del[3] == 0x21 && key[3] == 0x21,
          "the default payloads' options 0x%02x, 0x%02x (want 0x21: constant velocity, the table coder)", key[3],
          del[3]);
    CHECK(fc_decode(d, key, nk, err, sizeof err) != NULL, "key: %s", err);
    memcpy(b2, del, nd);
    b2[FC_HEADER_BYTES + 3] = 0x7f; /* the range coder's stream length */
    CHECK(!fc_decode(d, b2, nd, err, sizeof err) && strstr(err, "do not fit"), "stream length: %s", err);
    memcpy(b2, del, nd);
    uint32_t rl = (uint32_t)b2[FC_HEADER_BYTES] | (uint32_t)b2[FC_HEADER_BYTES + 1] << 8;
    memset(b2 + FC_HEADER_BYTES + 8 + rl, 0, 4);
    CHECK(!fc_decode(d, b2, nd, err, sizeof err) && strstr(err, "rANS state"), "state: %s", err);
    static const uint8_t retired[] = {0x25, 0x29, 0x31, 0x01, 0x11, 0x22, 0x23, 0x08};
    int took = 0;
    for (size_t i = 0; i < sizeof retired; i++) {
        memcpy(b2, del, nd);
        b2[3] = retired[i];
        took += fc_decode(d, b2, nd, err, sizeof err) != NULL || !strstr(err, "earlier encoder");
        memcpy(b2, key, nk);
        b2[3] = retired[i];
        took += fc_decode(d, b2, nk, err, sizeof err) != NULL || !strstr(err, "earlier encoder");
    }
    CHECK(!took, "%d payloads with retired options accepted or refused for another reason (%s)", took, err);
    REPORT("options of earlier encoders refused: %s", err);
    CHECK(fc_decode(d, key, nk, err, sizeof err) != NULL, "key again: %s", err);
    const fc_frame *f = fc_decode(d, del, nd, err, sizeof err);
    CHECK(f != NULL, "the real delta after bad ones: %s", err);
    check_frame(f, &g, &s, "table delta after bad input");
    fc_encoder_destroy(e);
    fc_decoder_destroy(d);
}

/* The encoder codes against zero motion where constant velocity would
 * extrapolate jitter (a pool at rest), and against constant velocity where
 * the particles move on; the header says which, and both decode. */
static void predictor_choice(void) {
    uint64_t rng = 31;
    syn s;
    syn_block(&s, 300, &rng);
    fc_grid g = syn_grid();
    g_opts = fc_default_options();
    fc_encoder *e = make_encoder(512, 6);
    fc_decoder *d = fc_decoder_create(512);
    static uint8_t buf[1 << 16];
    char err[200];
    int picked[2] = {-1, -1};
    for (int phase = 0; phase < 2; phase++)
        for (int t = 0; t < 4; t++) {
            uint32_t seq = (uint32_t)(phase * 4 + t + 1);
            if (phase == 0) /* jitter of about a step about fixed places */
                for (int k = 0; k < s.n; k++) s.x[k] += g.step * (tl_rand01(&rng) - 0.5f) * 2.0f;
            else
                syn_move(&s, &rng, 0.02f); /* a steady drift of 2 cm a frame */
            fc_input in = syn_input(&s);
            CHECK(fc_encoder_push(e, seq, &g, &in, err, sizeof err) == 0, "push: %s", err);
            size_t n = seq == 1
                           ? fc_encode(e, seq, FC_NONE, FC_NONE, buf, sizeof buf, err, sizeof err)
                           : fc_encode(e, seq, seq - 1, seq > 2 ? seq - 2 : FC_NONE, buf, sizeof buf, err, sizeof err);
            CHECK(n > 0, "encode %u: %s", seq, err);
            check_frame(fc_decode(d, buf, n, err, sizeof err), &g, &s, "predictor choice");
            fc_header h;
            fc_read_header(buf, n, &h, err, sizeof err);
            if (t == 3) picked[phase] = h.options.predictor;
        }
    CHECK(picked[0] == FC_PRED_ZERO, "jitter at rest: predictor %d, want zero motion", picked[0]);
    CHECK(picked[1] == FC_PRED_CV, "steady drift: predictor %d, want constant velocity", picked[1]);
    REPORT("jitter at rest coded with predictor %d (zero motion), a steady drift with %d (constant velocity)",
           picked[0], picked[1]);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d);
}

/* ---- Golden vectors ------------------------------------------------------- */

/* ---- Bands (kind 2) ---------------------------------------------------------- */

/* An encoder with the default options but k bands. */
static fc_encoder *bands_encoder(int cap, uint32_t epoch, int k) {
    fc_options o = fc_default_options();
    o.bands = k;
    fc_encoder *e = fc_encoder_create(cap, epoch);
    if (e) fc_encoder_set_options(e, &o);
    return e;
}

/* Band i's payload of a container (NULL when p is not one). */
static const uint8_t *band_part(const uint8_t *p, size_t n, int i, size_t *len, int *k) {
    fc_header h;
    fc_band_table t;
    char err[160];
    if (fc_read_header(p, n, &h, err, sizeof err) || h.kind != 2 ||
        fc_bands_read(p + FC_HEADER_BYTES, h.body_len, &t, err, sizeof err) || i >= t.k)
        return NULL;
    *len = t.len[i];
    *k = t.k;
    return p + FC_HEADER_BYTES + t.off[i];
}

/* The fountain (an emitter and a drain) split into 3 bands for 300 frames,
 * a scene load at 200 (a new epoch: the split chosen again): every frame
 * a container of 3 bands; a decoder holding whole frames and 3 decoders each
 * given only its band's payload decode it to the same frame, every particle
 * within half a step of the simulation's. */
static void bands_round_trip(void) {
    enum { K = 3, CAP = 4000 };
    fs_world_def def = fs_default_world_def();
    def.capacity = CAP;
    fs_world *w = fs_world_create(&def);
    fs_error ferr;
    CHECK(fs_world_load_scene(w, "fountain", 1500, &ferr) == FS_OK, "load: %s", ferr.msg);
    fc_encoder *e = bands_encoder(CAP, 200, K);
    fc_decoder *d = fc_decoder_create(CAP), *part[K];
    for (int i = 0; i < K; i++) part[i] = fc_decoder_create(CAP);
    size_t cap = fc_max_payload(CAP);
    uint8_t *buf = malloc(cap);
    char err[200];
    double worst = 0;
    int differ = 0, not_bands = 0, last_grew = 0, first_last = -1, frames = 0;
    uint32_t key_seq = 1;
    for (uint32_t seq = 1; seq <= 300; seq++) {
        if (seq == 200) {
            CHECK(fs_world_load_scene(w, "dam_break", 1200, &ferr) == FS_OK, "load: %s", ferr.msg);
            fc_encoder_reset(e, 201);
            key_seq = seq;
        }
        fs_particles_view v;
        fc_grid g;
        push_world(w, e, seq, &g, &v);
        uint32_t base = seq == key_seq ? FC_NONE : seq - 1, prev = seq >= key_seq + 2 ? seq - 2 : FC_NONE;
        size_t n = fc_encode(e, seq, base, prev, buf, cap, err, sizeof err);
        CHECK(n > 0, "encode %u: %s", seq, err);
        const fc_frame *f = fc_decode(d, buf, n, err, sizeof err);
        CHECK(f != NULL, "decode %u: %s", seq, err);
        if (!f) break;
        int at = 0, k = 0;
        for (int i = 0; i < K; i++) {
            size_t len = 0;
            const uint8_t *bp = band_part(buf, n, i, &len, &k);
            not_bands += !bp || k != K;
            if (!bp) break;
            const fc_frame *bf = fc_decode(part[i], bp, len, err, sizeof err);
            CHECK(bf != NULL, "band %d of frame %u alone: %s", i, seq, err);
            if (!bf || at + bf->n > f->n) break;
            differ += memcmp(bf->id, f->id + at, 4 * (size_t)bf->n) ||
                      memcmp(bf->q, f->q + 3 * at, 6 * (size_t)bf->n) || memcmp(bf->mat, f->mat + at, (size_t)bf->n) ||
                      memcmp(bf->temp, f->temp + at, (size_t)bf->n);
            if (i == K - 1 && seq < 200) {
                if (first_last < 0) first_last = bf->n;
                last_grew = bf->n > first_last;
            }
            at += bf->n;
        }
        differ += at != f->n;
        for (int j = 0; j < v.count; j++) {
            int i = v.by_id[j];
            const float *src[3] = {v.x, v.y, v.z};
            differ += f->id[j] != v.id[i];
            for (int a = 0; a < 3; a++) {
                double dd = fabs(g.origin[a] + f->q[3 * j + a] * (double)g.step - src[a][i]) / g.step;
                worst = dd > worst ? dd : worst;
            }
        }
        frames++;
    }
    CHECK(!not_bands, "%d frames were not 3 bands", not_bands);
    CHECK(!differ, "%d frames where the band decoders and the whole decoder (or the ids) disagree", differ);
    CHECK(worst <= 0.5 + 1e-4, "worst position error %.4f steps", worst);
    CHECK(last_grew, "the emitter's particles did not join the last band (%d at first)", first_last);
    REPORT("%d frames in %d bands, whole and per band alike, worst error %.4f steps", frames, K, worst);
    free(buf);
    fc_encoder_destroy(e);
    fc_decoder_destroy(d);
    for (int i = 0; i < K; i++) fc_decoder_destroy(part[i]);
    fs_world_destroy(w);
}

static void synthetic_round_trip_bands(void) {
    g_opts = fc_default_options();
    g_opts.bands = 3;
    synthetic_round_trip();
    g_opts = fc_default_options();
}

/* Patches the uint32 at p. */
static void put_u32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

/* Malformed bands are refused with a reason, and a refused delta leaves the
 * frames held intact. */
static void bad_bands(void) {
    uint64_t rng = 23;
    syn s;
    syn_block(&s, 300, &rng);
    fc_grid g = syn_grid();
    fc_encoder *e = bands_encoder(512, 31, 3);
    fc_decoder *d = fc_decoder_create(512);
    static uint8_t key[1 << 16], del[1 << 16], bad[1 << 16];
    char err[200] = "";
    size_t nk, nd;
    key_and_delta(e, &s, &rng, &g, key, &nk, del, &nd);
    CHECK(nk > 200 && nd > 200 && key[2] == 2 && del[2] == 2, "encode bands: %s", err);
    const uint8_t *B = key + FC_HEADER_BYTES; /* the table: K, lo[3], len[3] */
    struct {
        const char *what, *why;
        size_t at;
        uint32_t v;
    } cases[] = {
        {"one band", "bands", 0, 1},
        {"17 bands", "bands", 0, 17},
        {"lo_0 not 0", "first id", 4, 5},
        {"lo not increasing", "first id", 8, 0},
        {"lengths that do not add up", "body of", 16, 0},
        {"a band shorter than a header", "shorter", 16, 20},
        {"band 0's ids past band 1's first id", "outside", 8, 1},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        memcpy(bad, key, nk);
        uint32_t v = cases[c].v;
        if (cases[c].at == 16 && v == 0) v = (uint32_t)(B[16] | B[17] << 8) + 1; /* len_0 + 1 */
        if (cases[c].at == 8 && v == 0) v = 0;                                   /* lo_1 = lo_0 */
        put_u32(bad + FC_HEADER_BYTES + cases[c].at, v);
        fc_decoder_reset(d);
        CHECK(!fc_decode(d, bad, nk, err, sizeof err) && strstr(err, cases[c].why), "%s: accepted or '%s'",
              cases[c].what, err);
    }
    /* a band of another frame: band 1's seq */
    fc_decoder_reset(d);
    CHECK(fc_decode(d, key, nk, err, sizeof err) != NULL, "keyframe: %s", err);
    memcpy(bad, del, nd);
    size_t len0 = (size_t)(bad[FC_HEADER_BYTES + 16] | bad[FC_HEADER_BYTES + 17] << 8);
    size_t b1 = FC_HEADER_BYTES + 28 + len0;
    put_u32(bad + b1 + 8, 3);
    CHECK(!fc_decode(d, bad, nd, err, sizeof err) && strstr(err, "does not belong"), "band of another frame: %s", err);
    /* options on the container */
    memcpy(bad, del, nd);
    bad[3] = 1;
    CHECK(!fc_decode(d, bad, nd, err, sizeof err) && strstr(err, "options"), "container options: %s", err);
    /* every truncation, and random bytes over the bands, are refused or decode
     * (never a crash); then the good delta still decodes */
    int accepted = 0;
    for (size_t cut = 0; cut < nd; cut += 7) accepted += fc_decode(d, del, cut, err, sizeof err) != NULL;
    CHECK(!accepted, "%d truncated containers accepted", accepted);
    for (int t = 0; t < 2000; t++) {
        memcpy(bad, del, nd);
        for (int j = 0; j < 3; j++) {
            size_t at = FC_HEADER_BYTES + (size_t)(tl_rand01(&rng) * (float)(nd - FC_HEADER_BYTES));
            bad[at < nd ? at : nd - 1] ^= (uint8_t)(1 + (int)(tl_rand01(&rng) * 254));
        }
        fc_decode(d, bad, nd, err, sizeof err);
    }
    fc_decoder_reset(d);
    CHECK(fc_decode(d, key, nk, err, sizeof err) != NULL, "keyframe again: %s", err);
    memcpy(bad, del, nd);
    bad[nd - 1] ^= 0x55;
    CHECK(!fc_decode(d, bad, nd, err, sizeof err), "a corrupt last band accepted");
    const fc_frame *f = fc_decode(d, del, nd, err, sizeof err);
    CHECK(f != NULL, "the good delta after a refused one: %s", err);
    if (f) check_frame(f, &g, &s, "bands after refusals");
    fc_decoder_destroy(d);
    fc_encoder_destroy(e);
}

static bool read_file(const char *path, uint8_t *buf, size_t cap, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    *n = fread(buf, 1, cap, f);
    fclose(f);
    return true;
}

static void json_frame(FILE *j, const char *name, uint32_t seq, const fc_grid *g, const syn *s, bool last) {
    fprintf(j,
            "  \"%s\": {\"seq\": %u, \"n\": %d, \"origin\": [%.9g, %.9g, %.9g], \"step\": %.9g, "
            "\"levels\": [%u, %u, %u],\n",
            name, seq, s->n, (double)g->origin[0], (double)g->origin[1], (double)g->origin[2], (double)g->step,
            g->levels[0], g->levels[1], g->levels[2]);
    fprintf(j, "    \"ids\": [");
    for (int k = 0; k < s->n; k++) fprintf(j, "%s%u", k ? ", " : "", s->id[k]);
    fprintf(j, "],\n    \"q\": [");
    for (int k = 0; k < s->n; k++) {
        const float *src[3] = {s->x, s->y, s->z};
        for (int a = 0; a < 3; a++) {
            /* the quantization the spec defines, computed here, not by the codec */
            double t = ((double)src[a][k] - g->origin[a]) / g->step;
            long q = t <= 0 ? 0 : t >= g->levels[a] - 1 ? (long)g->levels[a] - 1 : lround(t);
            fprintf(j, "%s%ld", k || a ? ", " : "", q);
        }
    }
    fprintf(j, "],\n    \"mat\": [");
    for (int k = 0; k < s->n; k++) fprintf(j, "%s%u", k ? ", " : "", s->mat[k]);
    fprintf(j, "],\n    \"temp\": [");
    for (int k = 0; k < s->n; k++) fprintf(j, "%s%ld", k ? ", " : "", lrintf(s->temp[k] + 40));
    fprintf(j, "]}%s\n", last ? "" : ",");
}

/* The bands' golden pair: 40 particles in 2 bands, a keyframe (seq 20) and
 * a delta against it (21) that removes 2 particles and adds 2 (in the last
 * band), with a material and a temperature changed. */
static void golden_bands(uint8_t *key, uint8_t *del, size_t cap, size_t *len, syn *fk, syn *fd) {
    uint64_t rng = 4048;
    syn s;
    syn_block(&s, 40, &rng);
    fc_grid g = syn_grid();
    fc_encoder *e = bands_encoder(64, 0x5eed, 2);
    char err[200];
    fc_input in = syn_input(&s);
    fc_encoder_push(e, 20, &g, &in, err, sizeof err);
    len[0] = fc_encode(e, 20, FC_NONE, FC_NONE, key, cap, err, sizeof err);
    *fk = s;
    syn_move(&s, &rng, 0.02f);
    uint32_t nid = 40;
    int rm[2] = {3, 30};
    syn_edit(&s, rm, 2, 2, &nid, &rng);
    s.temp[5] = 90.0f;
    s.mat[25] = 4;
    in = syn_input(&s);
    fc_encoder_push(e, 21, &g, &in, err, sizeof err);
    len[1] = fc_encode(e, 21, 20, FC_NONE, del, cap, err, sizeof err);
    *fd = s;
    CHECK(len[0] > 0 && len[1] > 0 && key[2] == 2 && del[2] == 2, "golden bands: %s", err);
    fc_encoder_destroy(e);
}

/* The particles of s in tier's subset (frame_tier.h). */
static syn syn_tier(const syn *s, int tier) {
    syn t = {0};
    for (int k = 0; k < s->n; k++) {
        if (!fc_tier_has(tier, s->id[k])) continue;
        t.id[t.n] = s->id[k], t.x[t.n] = s->x[k], t.y[t.n] = s->y[k], t.z[t.n] = s->z[k];
        t.temp[t.n] = s->temp[k], t.mat[t.n] = s->mat[k];
        t.n++;
    }
    return t;
}

/* The tier golden pair: frames 10 and 11 of the golden stream in tier 1 (1
 * in 2 particles, twice the step), a keyframe and a delta against it, coded
 * by an encoder of their own as the server's tier coder does. */
static void golden_tier(uint8_t *key, uint8_t *del, size_t cap, size_t *len, const syn *f10, const syn *f11, syn *tk,
                        syn *td, fc_grid *tg) {
    fc_grid g = syn_grid();
    *tg = fc_tier_grid(&g, 1);
    *tk = syn_tier(f10, 1);
    *td = syn_tier(f11, 1);
    fc_encoder *e = fc_encoder_create(64, 0x5eed);
    char err[200];
    fc_input in = syn_input(tk);
    fc_encoder_push(e, 10, tg, &in, err, sizeof err);
    len[0] = fc_encode(e, 10, FC_NONE, FC_NONE, key, cap, err, sizeof err);
    in = syn_input(td);
    fc_encoder_push(e, 11, tg, &in, err, sizeof err);
    len[1] = fc_encode(e, 11, 10, FC_NONE, del, cap, err, sizeof err);
    CHECK(len[0] > 0 && len[1] > 0 && tk->n < f10->n && tk->n > 0, "golden tier: %s (%d of %d particles)", err, tk->n,
          f10->n);
    fc_encoder_destroy(e);
}

static void golden(void) {
    uint64_t rng = 2024;
    syn s;
    syn_block(&s, 24, &rng);
    fc_grid g = syn_grid();
    fc_encoder *e = fc_encoder_create(64, 0x5eed);
    uint32_t nid = 24;
    /* the default options, then frame 11 again with the table coder's joint
     * symbols (the default takes them from FC_JOINT_MIN particles on;
     * decoders take both).  frame_v2_delta_adaptive.bin is frame 11 as an
     * earlier encoder coded it (the adaptive residual coder in cell order,
     * options 0x11): kept as it was written, and refused. */
    enum { NG = 9 };
    static const char *names[NG] = {
        "frame_v2_key",         "frame_v2_delta",     "frame_v2_add_remove",  "frame_v2_delta_adaptive",
        "frame_v2_delta_joint", "frame_v2_bands_key", "frame_v2_bands_delta", "frame_v2_tier_key",
        "frame_v2_tier_delta"};
    static const uint32_t seqs[NG] = {10, 11, 12, 11, 11, 20, 21, 10, 11};
    fc_grid grids[NG];
    static uint8_t out[NG][8192], want[8192];
    size_t len[NG];
    syn frames[NG];
    char err[200];
    for (int i = 0; i < 3; i++) {
        if (i > 0) syn_move(&s, &rng, 0.02f);
        if (i == 2) {
            int rm[3] = {0, 7, 8};
            syn_edit(&s, rm, 3, 2, &nid, &rng);
            s.temp[3] = 90.0f;
            s.mat[4] = 4;
        }
        frames[i] = s;
        fc_input in = syn_input(&s);
        fc_encoder_push(e, (uint32_t)(10 + i), &g, &in, err, sizeof err);
        len[i] = fc_encode(e, (uint32_t)(10 + i), i ? (uint32_t)(9 + i) : FC_NONE, i == 2 ? 10 : FC_NONE, out[i],
                           sizeof out[i], err, sizeof err);
        CHECK(len[i] > 0, "golden encode %d: %s", i, err);
    }
    frames[3] = frames[1];
    len[3] = 0; /* not written: read back and refused below */
    fc_options joint = fc_default_options();
    joint.joint = FC_JOINT_ON;
    fc_encoder_set_options(e, &joint);
    frames[4] = frames[1];
    len[4] = fc_encode(e, 11, 10, FC_NONE, out[4], sizeof out[4], err, sizeof err);
    CHECK(len[4] > 0, "golden encode 4: %s", err);
    golden_bands(out[5], out[6], sizeof out[5], &len[5], &frames[5], &frames[6]);
    for (int i = 0; i < NG; i++) grids[i] = g;
    golden_tier(out[7], out[8], sizeof out[7], &len[7], &frames[0], &frames[1], &frames[7], &frames[8], &grids[7]);
    grids[8] = grids[7];
    char path[512];
    if (g_write) {
        for (int i = 0; i < NG; i++) {
            if (i == 3) continue;
            snprintf(path, sizeof path, "%s/%s.bin", g_dir, names[i]);
            FILE *f = fopen(path, "wb");
            CHECK(f && fwrite(out[i], 1, len[i], f) == len[i], "write %s", path);
            if (f) fclose(f);
        }
        snprintf(path, sizeof path, "%s/frame_v2.json", g_dir);
        FILE *j = fopen(path, "w");
        CHECK(j != NULL, "write %s", path);
        if (j) {
            fprintf(j,
                    "{\n  \"_doc\": \"protocol v2 frame payloads (PROTOCOL.md): each .bin decodes, in order, to "
                    "this state; written by test_frame_codec --write-golden\",\n  \"epoch\": %u,\n",
                    0x5eed);
            for (int i = 0; i < NG; i++) json_frame(j, names[i], seqs[i], &grids[i], &frames[i], i == NG - 1);
            fprintf(j, "}\n");
            fclose(j);
        }
    }
    /* the files hold exactly what the encoder produces, and decode to the
     * frames (the joint delta by a decoder holding the keyframe again); the
     * adaptive delta is refused, naming its options */
    fc_decoder *d = fc_decoder_create(64);
    for (int i = 0; i < NG; i++) {
        if (i == 3 || i == 4 || i == 5 || i == 7) {
            fc_decoder_reset(d);
            CHECK(i == 5 || i == 7 || fc_decode(d, out[0], len[0], err, sizeof err) != NULL, "keyframe again: %s", err);
        }
        size_t n = 0;
        snprintf(path, sizeof path, "%s/%s.bin", g_dir, names[i]);
        CHECK(read_file(path, want, sizeof want, &n), "read %s", path);
        if (i == 3) {
            CHECK(n == 102 && want[3] == 0x11, "%s: %zu bytes, options 0x%02x (want 102, 0x11)", path, n, want[3]);
            CHECK(!fc_decode(d, want, n, err, sizeof err) && strstr(err, "options 0x11") &&
                      strstr(err, "earlier encoder"),
                  "%s accepted or refused for another reason: %s", path, err);
            CHECK(fc_decode(d, out[1], len[1], err, sizeof err) != NULL, "the delta after the refusal: %s", err);
            REPORT("%s: %zu bytes, refused", names[i], n);
            continue;
        }
        CHECK(n == len[i] && !memcmp(want, out[i], n), "%s differs from the encoder's output (%zu vs %zu bytes)", path,
              n, len[i]);
        const fc_frame *f = fc_decode(d, want, n, err, sizeof err);
        CHECK(f != NULL, "decode %s: %s", path, err);
        check_frame(f, &grids[i], &frames[i], names[i]);
        REPORT("%s: %zu bytes, %d particles", names[i], n, frames[i].n);
    }
    fc_decoder_destroy(d);
    fc_encoder_destroy(e);
}

/* Zero motion for every delta (the encoder's other predictor, which it
 * otherwise picks per payload). */
static void synthetic_round_trip_zero(void) {
    g_opts = fc_default_options();
    g_opts.predictor = FC_PRED_ZERO;
    synthetic_round_trip();
    g_opts = fc_default_options();
}

/* Joint symbols in every delta, with particles added and removed
 * (table_by_id's decoding path). */
static void synthetic_round_trip_joint(void) {
    g_opts = fc_default_options();
    g_opts.joint = FC_JOINT_ON;
    synthetic_round_trip();
    g_opts = fc_default_options();
}

static void bad_input_joint(void) {
    g_opts = fc_default_options();
    g_opts.joint = FC_JOINT_ON;
    bad_input();
    g_opts = fc_default_options();
}

/* The table coder with joint symbols (table_by_id and table_kept; the
 * default uses them from FC_JOINT_MIN particles on, more than this world
 * holds). */
static void world_round_trip_joint(void) {
    g_opts = fc_default_options();
    g_opts.joint = FC_JOINT_ON;
    world_round_trip();
    g_opts = fc_default_options();
}

int main(int argc, char **argv) {
    g_opts = fc_default_options();
    if (argc > 2 && !strcmp(argv[1], "--write-golden"))
        g_write = true, g_dir = argv[2];
    else if (argc > 1 && argv[1][0] != '-')
        g_dir = argv[1], argc = 1;
    static const tl_test tests[] = {
        {"grid_and_step", grid_and_step},
        {"synthetic_round_trip", synthetic_round_trip},
        {"synthetic_round_trip_zero", synthetic_round_trip_zero},
        {"synthetic_round_trip_joint", synthetic_round_trip_joint},
        {"bad_input", bad_input},
        {"bad_input_joint", bad_input_joint},
        {"table_coder", table_coder},
        {"predictor_choice", predictor_choice},
        {"golden", golden},
        {"world_round_trip", world_round_trip},
        {"world_round_trip_joint", world_round_trip_joint},
        {"bands_round_trip", bands_round_trip},
        {"synthetic_round_trip_bands", synthetic_round_trip_bands},
        {"bad_bands", bad_bands},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), g_write ? 1 : argc, argv);
}
