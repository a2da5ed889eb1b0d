/* stream.c - protocol v2's encoding side (see stream.h; the codings and
 * why in protocol/PROTOCOL.md "Frames, baselines, epochs"). */
#include "stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"

struct stream {
    fc_encoder *enc;
    int cap;
    uint8_t *buf; /* fc_max_payload(cap) */
    size_t buf_cap;
    bool started;
    uint32_t epoch, seq;
    fc_grid grid;
    uint32_t key_served; /* wants.key_requests answered */
    uint32_t last_key;   /* seq of the last keyframe, FC_NONE: none */
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
    if (st) st->last_key = FC_NONE, st->bands = bands;
    return st;
}

void stream_destroy(stream *st) {
    if (!st) return;
    fc_encoder_destroy(st->enc);
    free(st->buf);
    free(st);
}

/* Sizes the encoder for capacity particles (at a scene load; never in the
 * steady state). */
static int ensure_capacity(stream *st, int capacity, char *err, size_t errlen) {
    if (st->enc && capacity <= st->cap) return 0;
    fc_encoder_destroy(st->enc);
    free(st->buf);
    st->cap = capacity > 0 ? capacity : 1;
    st->enc = fc_encoder_create(st->cap, st->epoch);
    if (st->enc) {
        fc_options o = fc_default_options();
        o.bands = st->bands;
        fc_encoder_set_options(st->enc, &o);
    }
    st->buf_cap = fc_max_payload(st->cap);
    st->buf = malloc(st->buf_cap);
    st->started = false; /* the new encoder holds nothing: restart with a keyframe */
    if (!st->enc || !st->buf) {
        fc_encoder_destroy(st->enc);
        free(st->buf);
        st->enc = NULL;
        st->buf = NULL;
        st->cap = 0;
        snprintf(err, errlen, "out of memory for the frame encoder (%d particles)", capacity);
        return -1;
    }
    return 0;
}

uint32_t stream_keys_served(const stream *st) {
    return st->key_served;
}

static bool grid_same(const fc_grid *a, const fc_grid *b) {
    return !memcmp(a, b, sizeof *a);
}

/* Codes frame seq against base/prev (base FC_NONE: a keyframe) and adds it
 * to fs.  A coding whose frames the encoder no longer holds is skipped. */
static void add_coding(stream *st, frameset *fs, const wire_frame_head *head, uint32_t base, uint32_t prev) {
    if (fs->count >= FRAMESET_MAX) return;
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].base == base && fs->coding[i].prev == prev) return;
    if (base != FC_NONE && !fc_encoder_frame(st->enc, base)) return;
    if (prev != FC_NONE && !fc_encoder_frame(st->enc, prev)) return;
    char why[128];
    size_t len = fc_encode(st->enc, st->seq, base, prev, st->buf, st->buf_cap, why, sizeof why);
    if (!len) return;
    msg_buf *m = wire_encode_frame(head, st->seq, base == FC_NONE, st->buf, len);
    if (!m) return;
    fs->coding[fs->count++] = (frame_coding){.base = base, .prev = prev, .msg = m};
}

int stream_publish(stream *st, hub *h, const wire_frame_head *head, const fc_input *in, int capacity, uint32_t epoch,
                   const fc_grid *grid, const stream_reader *rd, stream_stats *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (rd && rd->keep) memset(rd->keep, 0, sizeof *rd->keep);
    if (ensure_capacity(st, capacity < in->count ? in->count : capacity, err, errlen)) return -1;
    bool restart = !st->started || epoch != st->epoch || !grid_same(grid, &st->grid);
    if (restart) {
        fc_encoder_reset(st->enc, epoch);
        st->epoch = epoch;
        st->grid = *grid;
        st->started = true;
        st->last_key = FC_NONE;
    }
    uint64_t t0 = clock_now_ns();
    uint32_t seq = st->seq + 1;
    if (fc_encoder_push(st->enc, seq, grid, in, err, errlen)) return -1;
    st->seq = seq;
    frame_wants w;
    hub_get_frame_wants(h, &w);
    frameset fs = {.epoch = epoch, .seq = seq, .tick = head->tick, .n = in->count};
    bool reader = rd && rd->active;
    if (w.clients > 0 || reader) {
        bool key = restart || w.key_requests != st->key_served || (reader && rd->want_key);
        st->key_served = w.key_requests;
        if (key) {
            add_coding(st, &fs, head, FC_NONE, FC_NONE);
            if (fs.count) {
                st->last_key = seq;
                st->keyframes++;
                out->key_bytes = fs.coding[0].msg->len;
            }
        }
        size_t before = (size_t)fs.count;
        add_coding(st, &fs, head, seq - 1, seq - 2);
        if ((size_t)fs.count > before) out->delta_bytes = fs.coding[fs.count - 1].msg->len;
        /* For a client switching to every frame, or when the frame before
         * has no velocities: against the frame before, without velocities. */
        if (w.bridge || (size_t)fs.count == before) add_coding(st, &fs, head, seq - 1, FC_NONE);
        /* A client that took the last keyframe holds only it: against it,
         * without velocities, 1, 2 and 4 frames on (whichever stride the
         * client takes, the next frame due has a coding it can decode). */
        uint32_t since = st->last_key == FC_NONE ? 0 : seq - st->last_key;
        if (since == 1 || since == 2 || since == 4) add_coding(st, &fs, head, st->last_key, FC_NONE);
        if (w.stride2 && seq % 2 == 0) add_coding(st, &fs, head, seq - 2, seq - 4);
        if (w.stride4 && seq % 4 == 0) add_coding(st, &fs, head, seq - 4, seq - 8);
    }
    out->encode_ms = (double)(clock_now_ns() - t0) / 1e6;
    out->codings = fs.count;
    out->keyframes = st->keyframes;
    if (rd && rd->keep) *rd->keep = frameset_ref(&fs);
    hub_publish_frameset(h, &fs);
    return 0;
}
