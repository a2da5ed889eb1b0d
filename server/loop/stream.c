/* stream.c - protocol v2's encoding side (see stream.h; the codings and
 * why in protocol/PROTOCOL.md "Frames, baselines, epochs"). */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "frame_tier.h"

/* One tier's coder: its encoder (created when the tier is first wanted),
 * what it answered and its last keyframe. */
typedef struct tier_coder {
    fc_encoder *enc;
    bool started;        /* holds frames of the stream's epoch on its grid */
    uint32_t key_served; /* its wants' key_requests answered */
    uint32_t last_key;   /* seq of its last keyframe, FC_NONE: none */
} tier_coder;

struct stream {
    tier_coder tier[FC_TIERS];
    int cap;
    uint8_t *buf; /* fc_max_payload(cap) */
    size_t buf_cap;
    int32_t *sub; /* cap: a coarser tier's subset (indices into the frame) */
    bool started;
    uint32_t epoch, seq;
    fc_grid grid;
    uint64_t keyframes;
    int bands; /* fc_options.bands: 0 the codec's default split, 1 none, K */
};

int stream_grid(fc_grid *g, const float box_min[3], const float box_max[3], float spacing, int bits, char *err,
                size_t errlen) {
    float longest = 0;
    for (int a = 0; a < 3; a++)
        if (box_max[a] - box_min[a] > longest) longest = box_max[a] - box_min[a];
    float step = bits > 0 ? longest / (float)(1u << bits) : fc_default_step(box_min, box_max, spacing);
    float finest = longest / (float)(FC_MAX_LEVELS - 2);
    if (!(step >= finest)) step = finest;
    return fc_grid_make(g, box_min, box_max, step, err, errlen);
}

stream *stream_create(int bands) {
    stream *st = calloc(1, sizeof *st);
    if (!st) return NULL;
    for (int t = 0; t < FC_TIERS; t++) st->tier[t].last_key = FC_NONE;
    st->bands = bands;
    return st;
}

static void drop_encoders(stream *st) {
    for (int t = 0; t < FC_TIERS; t++) {
        fc_encoder_destroy(st->tier[t].enc);
        st->tier[t].enc = NULL;
        st->tier[t].started = false;
    }
}

void stream_destroy(stream *st) {
    if (!st) return;
    drop_encoders(st);
    free(st->buf);
    free(st->sub);
    free(st);
}

/* Creates tier t's encoder for st->cap particles (at its first use, or
 * after a capacity change; never in the steady state).  0, or -1. */
static int tier_encoder(stream *st, int t) {
    tier_coder *tc = &st->tier[t];
    if (tc->enc) return 0;
    tc->enc = fc_encoder_create(st->cap, st->epoch);
    if (!tc->enc) return -1;
    fc_options o = fc_default_options();
    o.bands = st->bands;
    fc_encoder_set_options(tc->enc, &o);
    tc->started = false;
    return 0;
}

/* Sizes the encoders for capacity particles (at a scene load; never in the
 * steady state). */
static int ensure_capacity(stream *st, int capacity, char *err, size_t errlen) {
    if (st->tier[0].enc && capacity <= st->cap) return 0;
    drop_encoders(st);
    free(st->buf);
    free(st->sub);
    st->cap = capacity > 0 ? capacity : 1;
    st->buf_cap = fc_max_payload(st->cap);
    st->buf = malloc(st->buf_cap);
    st->sub = malloc((size_t)st->cap * sizeof *st->sub);
    st->started = false; /* the new encoders hold nothing: restart with a keyframe */
    if (tier_encoder(st, 0) || !st->buf || !st->sub) {
        drop_encoders(st);
        free(st->buf);
        free(st->sub);
        st->buf = NULL;
        st->sub = NULL;
        st->cap = 0;
        snprintf(err, errlen, "out of memory for the frame encoder (%d particles)", capacity);
        return -1;
    }
    return 0;
}

uint32_t stream_keys_served(const stream *st) {
    return st->tier[0].key_served;
}

static bool grid_same(const fc_grid *a, const fc_grid *b) {
    return !memcmp(a, b, sizeof *a);
}

/* What one tier is coding now: its coder, the frame's head (its count the
 * tier's particles) and its `lod` (NULL for tier 0). */
typedef struct tier_job {
    int tier;
    tier_coder *tc;
    const wire_frame_head *head;
    const wire_lod *lod;
} tier_job;

/* Codes frame seq against base/prev (base FC_NONE: a keyframe) in the job's
 * tier and adds it to fs.  A coding whose frames the tier's encoder no longer
 * holds is skipped. */
static void add_coding(stream *st, frameset *fs, const tier_job *j, uint32_t base, uint32_t prev) {
    if (fs->count >= FRAMESET_MAX) return;
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].tier == j->tier && fs->coding[i].base == base && fs->coding[i].prev == prev) return;
    fc_encoder *enc = j->tc->enc;
    if (base != FC_NONE && !fc_encoder_frame(enc, base)) return;
    if (prev != FC_NONE && !fc_encoder_frame(enc, prev)) return;
    char why[128];
    size_t len = fc_encode(enc, st->seq, base, prev, st->buf, st->buf_cap, why, sizeof why);
    if (!len) return;
    msg_buf *m = wire_encode_frame_lod(j->head, st->seq, base == FC_NONE, j->lod, st->buf, len);
    if (!m) return;
    fs->coding[fs->count++] = (frame_coding){.base = base, .prev = prev, .msg = m, .tier = j->tier};
}

/* The codings of one tier's frame (stored already) that its clients can
 * use; `key` asks for its keyframe.  Returns the delta against the frame
 * before's bytes (0: none coded). */
static size_t code_tier(stream *st, frameset *fs, const tier_job *j, const frame_tier_wants *w, bool key,
                        stream_stats *out) {
    uint32_t seq = st->seq;
    tier_coder *tc = j->tc;
    size_t delta_bytes = 0;
    if (key) {
        int before = fs->count;
        add_coding(st, fs, j, FC_NONE, FC_NONE);
        if (fs->count > before) {
            tc->last_key = seq;
            st->keyframes++;
            if (!j->tier) out->key_bytes = fs->coding[before].msg->len;
            out->tiers_keyed |= 1 << j->tier;
        }
    }
    int before = fs->count;
    add_coding(st, fs, j, seq - 1, seq - 2);
    if (fs->count > before) delta_bytes = fs->coding[fs->count - 1].msg->len;
    /* For a client switching to every frame, or when the frame before
     * has no velocities: against the frame before, without velocities. */
    if (w->bridge || fs->count == before) add_coding(st, fs, j, seq - 1, FC_NONE);
    /* A client that took the last keyframe holds only it: against it,
     * without velocities, 1, 2 and 4 frames on (whichever stride the
     * client takes, the next frame due has a coding it can decode). */
    uint32_t since = tc->last_key == FC_NONE ? 0 : seq - tc->last_key;
    if (since == 1 || since == 2 || since == 4) add_coding(st, fs, j, tc->last_key, FC_NONE);
    if (w->stride2 && seq % 2 == 0) add_coding(st, fs, j, seq - 2, seq - 4);
    if (w->stride4 && seq % 4 == 0) add_coding(st, fs, j, seq - 4, seq - 8);
    /* Clients holding a frame without the one before it (a keyframe whose
     * bytes took several frames' time to send, a frame they jumped to):
     * against it, without velocities, so that they go on from the newest
     * frame instead of waiting for a keyframe. */
    for (int b = 0; b < w->nbases && b < FRAME_BASES_MAX; b++)
        if (w->bases[b] != FC_NONE && w->bases[b] < seq) add_coding(st, fs, j, w->bases[b], FC_NONE);
    return delta_bytes;
}

/* A coarser tier t: its subset of the frame on its grid, stored as frame
 * seq of its encoder (restarted with the stream), then its codings.
 * Nothing when its encoder cannot be made (its clients wait for a
 * keyframe). */
static void publish_tier(stream *st, frameset *fs, int t, const wire_frame_head *head, const fc_input *in,
                         const frame_tier_wants *w, bool restart, stream_stats *out) {
    tier_coder *tc = &st->tier[t];
    if (tier_encoder(st, t)) return;
    bool start = restart || !tc->started;
    if (start) {
        fc_encoder_reset(tc->enc, st->epoch);
        tc->started = true;
        tc->last_key = FC_NONE;
    }
    fc_grid g = fc_tier_grid(&st->grid, t);
    fc_options o = fc_default_options();
    o.bands = st->bands;
    o = fc_tier_options(o, in->count);
    fc_encoder_set_options(tc->enc, &o);
    fc_input sub = *in;
    sub.count = fc_tier_subset(t, in->id, in->order, in->count, st->sub);
    sub.order = st->sub;
    char why[160];
    if (fc_encoder_push(tc->enc, st->seq, &g, &sub, why, sizeof why)) {
        tc->started = false;
        return;
    }
    wire_frame_head th = *head;
    th.count = sub.count;
    wire_lod lod = {.tier = t, .keep = fc_tier_of(t).keep, .step = g.step};
    tier_job j = {.tier = t, .tc = tc, .head = &th, .lod = &lod};
    bool key = start || w->key_requests != tc->key_served;
    tc->key_served = w->key_requests;
    out->tier_delta_bytes[t] = code_tier(st, fs, &j, w, key, out);
}

int stream_publish(stream *st, hub *h, const wire_frame_head *head, const fc_input *in, int capacity, uint32_t epoch,
                   const fc_grid *grid, const stream_reader *rd, stream_stats *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (rd && rd->keep) memset(rd->keep, 0, sizeof *rd->keep);
    if (ensure_capacity(st, capacity < in->count ? in->count : capacity, err, errlen)) return -1;
    bool restart = !st->started || epoch != st->epoch || !grid_same(grid, &st->grid);
    tier_coder *t0 = &st->tier[0];
    if (restart) {
        fc_encoder_reset(t0->enc, epoch);
        st->epoch = epoch;
        st->grid = *grid;
        st->started = true;
        t0->last_key = FC_NONE;
    }
    uint64_t t0_ns = clock_now_ns();
    uint32_t seq = st->seq + 1;
    if (fc_encoder_push(t0->enc, seq, grid, in, err, errlen)) return -1;
    st->seq = seq;
    frame_wants w;
    hub_get_frame_wants(h, &w);
    frameset fs = {.epoch = epoch, .seq = seq, .tick = head->tick, .n = in->count};
    bool reader = rd && rd->active;
    if (w.clients > 0 || reader) {
        bool key = restart || w.key_requests != t0->key_served || (reader && rd->want_key);
        t0->key_served = w.key_requests;
        frame_tier_wants tw = {.stride2 = w.stride2, .stride4 = w.stride4, .bridge = w.bridge, .nbases = w.nbases};
        memcpy(tw.bases, w.bases, sizeof tw.bases);
        tier_job j = {.tier = 0, .tc = t0, .head = head};
        out->delta_bytes = out->tier_delta_bytes[0] = code_tier(st, &fs, &j, &tw, key, out);
    }
    /* the coarser tiers only while some client takes them: a tier left
     * unused stops, and restarts with a keyframe */
    for (int t = 1; t < FC_TIERS; t++) {
        if (w.coarse[t - 1].clients > 0)
            publish_tier(st, &fs, t, head, in, &w.coarse[t - 1], restart, out);
        else
            st->tier[t].started = false;
    }
    out->encode_ms = (double)(clock_now_ns() - t0_ns) / 1e6;
    out->codings = fs.count;
    out->keyframes = st->keyframes;
    if (rd && rd->keep) *rd->keep = frameset_ref(&fs);
    hub_publish_frameset(h, &fs);
    return 0;
}
