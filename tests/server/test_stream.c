/* test_stream.c - protocol v2 end to end without sockets: the simulation
 * core runs a fountain (an emitter and a drain: particles appear and go),
 * then loads another scene (a new stream); loop/stream.c codes each frame
 * into framesets on a real hub; three clients take them as the network
 * thread would (the coding their mirror, frame_held.c, says they can
 * decode), decode with the real decoder and check, for every particle of
 * every frame: the same ids as the world, positions within half a
 * quantization step, the material; and that the server's mirror of each
 * decoder holds exactly what the decoder holds.  Client A watches from the
 * start, B joins mid-stream and takes every 2nd frame, C every 4th after a
 * keyframe it asks for at frame 400.  D is on a slow link: each keyframe it
 * takes keeps it busy for 12 frames (its bytes take that long to send), and
 * every 50 frames it is held up for 11; it asks the encoder for codings
 * against the newest frame it holds (frame_wants' bases) rather than for
 * keyframes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_sim.h"
#include "frame_codec.h"
#include "frame_held.h"
#include "hub.h"
#include "stream.h"

static int g_pass, g_fail;
#define CHECK(cond, ...)                                                                                               \
    do {                                                                                                               \
        if (cond) {                                                                                                    \
            g_pass++;                                                                                                  \
        } else {                                                                                                       \
            g_fail++;                                                                                                  \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                                \
            printf(__VA_ARGS__);                                                                                       \
            printf("\n");                                                                                              \
        }                                                                                                              \
    } while (0)

typedef struct client {
    const char *name;
    fc_decoder *dec;
    fc_held held;
    int stride, joined_at; /* joins at frame joined_at, then is ready for a frame every stride frames */
    int ready_at;
    uint32_t last_seq;
    bool want_key;
    uint32_t base; /* the frame it asked the next frames to be coded against (0: none) */
    int key_busy;  /* frames a keyframe keeps it busy for (a slow link) */
    int decoded, keys, bad_frames, worst_mirror, older, lag;
    double worst_err; /* in steps */
} client;

/* The smallest delta of fs that c can decode (a keyframe when it wants one
 * or holds nothing), or -1. */
static int pick(const client *c, const frameset *fs, uint32_t max_gap, bool key) {
    int best = -1;
    for (int i = 0; i < fs->count; i++) {
        const frame_coding *fc = &fs->coding[i];
        if (fc->base == FC_NONE) {
            if (key) return i;
            continue;
        }
        if (key || c->want_key || fs->seq - fc->base > max_gap ||
            !fc_held_can_decode(&c->held, fs->epoch, fc->base, fc->prev))
            continue;
        if (best < 0 || fc->msg->len < fs->coding[best].msg->len) best = i;
    }
    return best;
}

/* The `data` bin of a frame message: the payload (found by its header magic
 * after the last "data" key; the message is ours, built by wire.c). */
static const uint8_t *payload_of(const msg_buf *m, size_t *len) {
    for (size_t i = m->len; i-- > 5;) {
        if (memcmp(m->data + i - 5,
                   "\xa4"
                   "data",
                   5))
            continue;
        const uint8_t *p = m->data + i;
        if (p[0] == 0xc4)
            *len = p[1], p += 2;
        else if (p[0] == 0xc5)
            *len = (size_t)p[1] << 8 | p[2], p += 3;
        else
            *len = (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4], p += 5;
        return p;
    }
    *len = 0;
    return NULL;
}

static void check_frame(client *c, const fc_frame *f, const fs_particles_view *v, int frame) {
    bool same = f->n == v->count;
    int bad = 0;
    for (int k = 0; same && k < v->count; k++) {
        int i = v->by_id[k];
        if (f->id[k] != v->id[i] || f->mat[k] != v->material[i]) {
            bad++;
            continue;
        }
        const float p[3] = {v->x[i], v->y[i], v->z[i]};
        for (int a = 0; a < 3; a++) {
            double got = f->grid.origin[a] + (double)f->q[3 * k + a] * f->grid.step;
            double e = fabs(got - p[a]) / f->grid.step;
            if (e > c->worst_err) c->worst_err = e;
        }
    }
    if (!same || bad) c->bad_frames++;
    CHECK(same && !bad, "%s frame %d: %d particles decoded, the world has %d (%d differ)", c->name, frame, f->n,
          v->count, bad);
}

#define RING HUB_FRAME_RING
typedef struct ring {
    frameset fs[RING];
    int next;
} ring;

/* As the network thread does (net/ws_frames.c): a client ready for a frame
 * takes the newest frame of the ring (the framesets the network thread
 * keeps) that it can decode; when there is none it waits, and asks for a
 * keyframe only once a stride's worth of frames went by without one. */
static void take(client *c, const ring *r, const fs_particles_view *v, int frame) {
    if (frame < c->joined_at || frame < c->ready_at) return;
    const frameset *newest = &r->fs[(r->next - 1) % RING];
    int at = -1, i = -1;
    /* first a delta that keeps its stride, then any delta, then a keyframe
     * (ws_frames.c find()) */
    for (int pass = 0; pass < 3 && at < 0; pass++)
        for (int k = r->next - 1; k >= 0 && k >= r->next - RING && at < 0; k--) {
            const frameset *fs = &r->fs[k % RING];
            if (c->held.any && fs->epoch == c->held.epoch && fs->seq <= c->last_seq) break;
            if ((i = pick(c, fs, pass == 0 ? (uint32_t)c->stride : FC_NONE, pass == 2)) >= 0) at = k;
        }
    if (at < 0) {
        if (!c->held.any || newest->epoch != c->held.epoch || newest->seq >= c->last_seq + 2 * (uint32_t)c->stride) {
            /* it holds recent frames of this stream: the next frames are
             * coded against its newest, while the encoder holds it
             * (ws_frames.c go_on_from_newest()) */
            uint32_t h = fc_held_newest(&c->held);
            if (!c->want_key && c->held.any && newest->epoch == c->held.epoch && h != FC_NONE &&
                newest->seq + 1 - h < FC_HISTORY) {
                c->base = h;
                return;
            }
            if (getenv("TEST_STREAM_DEBUG"))
                printf("%s frame %d (seq %u): nothing usable, asks for a keyframe\n", c->name, frame, newest->seq);
            c->want_key = true; /* it asks; the encoder is told through the hub's wants */
        }
        return;
    }
    const frameset *fs = &r->fs[at % RING];
    c->ready_at = frame + c->stride;
    c->last_seq = fs->seq;
    size_t len;
    const uint8_t *p = payload_of(fs->coding[i].msg, &len);
    char err[160] = "";
    const fc_frame *f = p ? fc_decode(c->dec, p, len, err, sizeof err) : NULL;
    CHECK(f != NULL, "%s frame %d decodes (%s)", c->name, frame, err);
    if (!f) return;
    fc_held_note(&c->held, fs->epoch, fs->seq, fs->coding[i].base, fs->coding[i].prev);
    if (fs->coding[i].base == FC_NONE) {
        c->keys++, c->want_key = false;
        c->ready_at = frame + (c->key_busy ? c->key_busy : c->stride);
    }
    if (c->key_busy && frame % 50 == 0) c->ready_at = frame + 11;
    /* without the frame a stride before, the next frames are coded against
     * this one alone too (ws_frames.c, ws_frames_pick()) */
    c->base = fc_held_has(&c->held, fs->epoch, fs->seq - (uint32_t)c->stride) ? 0 : fs->seq;
    c->decoded++;
    if (getenv("TEST_STREAM_DEBUG") && c->stride > 1)
        printf("%s frame %d: seq %u (%u, %u), newest %u\n", c->name, frame, fs->seq, fs->coding[i].base,
               fs->coding[i].prev, newest->seq);
    c->lag += (int)(newest->seq - fs->seq);
    /* the world is at the newest frame: an older one is checked for ids only */
    if (fs == newest)
        check_frame(c, f, v, frame);
    else
        c->older++;
    /* the mirror holds exactly what the decoder holds */
    int wrong = 0;
    for (uint32_t s = fs->seq > 12 ? fs->seq - 12 : 0; s <= fs->seq; s++)
        wrong += fc_held_has(&c->held, fs->epoch, s) != (fc_decoder_frame(c->dec, s) != NULL);
    if (wrong > c->worst_mirror) c->worst_mirror = wrong;
}

int main(void) {
    fs_world_def def = fs_default_world_def();
    def.capacity = 20000;
    fs_world *w = fs_world_create(&def);
    fs_error e = {{0}};
    CHECK(w && fs_world_load_scene(w, "fountain", 3000, &e) == FS_OK, "fountain loads (%s)", e.msg);
    if (!w) return 1;
    hub h;
    hub_init(&h);
    stream *st = stream_create(0);
    enum { NCL = 4 };
    client cl[NCL] = {{.name = "A", .stride = 1, .joined_at = 0},
                      {.name = "B", .stride = 2, .joined_at = 151},
                      {.name = "C", .stride = 4, .joined_at = 403},
                      {.name = "D", .stride = 1, .joined_at = 100, .key_busy = 12}};
    for (int k = 0; k < NCL; k++) {
        cl[k].dec = fc_decoder_create(def.capacity);
        fc_held_reset(&cl[k].held);
    }
    frame_wants wants = {.clients = NCL, .stride2 = true, .stride4 = true};
    static ring r;
    uint32_t epoch = 1;
    int born = 0, gone = 0;
    for (int frame = 0; frame < 600; frame++) {
        if (frame == 300) {
            CHECK(fs_world_load_scene(w, "dam_break", 2500, &e) == FS_OK, "dam_break loads (%s)", e.msg);
            epoch++;
        }
        if (frame) {
            fs_world_step(w);
            fs_world_step(w);
        }
        fs_particles_view v;
        fs_world_view(w, &v);
        if (frame == 299) {
            fs_stats fst;
            fs_world_stats(w, &fst);
            born = (int)fst.emitted;
            gone = (int)fst.drained;
        }
        wants.nbases = 0;
        for (int k = 0; k < NCL; k++) {
            if (cl[k].want_key || (frame == cl[k].joined_at)) {
                wants.key_requests++;
                cl[k].want_key = true;
            }
            if (cl[k].base && !cl[k].want_key && wants.nbases < FRAME_BASES_MAX)
                wants.bases[wants.nbases++] = cl[k].base;
        }
        hub_set_frame_wants(&h, &wants);
        fs_domain d = fs_world_domain(w);
        float lo[3] = {d.box_min.x, d.box_min.y, d.box_min.z}, hi[3] = {d.box_max.x, d.box_max.y, d.box_max.z};
        fc_grid g;
        char err[160];
        CHECK(stream_grid(&g, lo, hi, d.spacing, 0, err, sizeof err) == 0, "grid (%s)", err);
        wire_frame_head head = {.tick = (uint64_t)frame, .box_min = d.box_min, .box_max = d.box_max, .count = v.count};
        fc_input in = {.count = v.count,
                       .id = v.id,
                       .x = v.x,
                       .y = v.y,
                       .z = v.z,
                       .material = v.material,
                       .temp = v.temperature,
                       .order = v.by_id};
        stream_stats ss;
        CHECK(stream_publish(st, &h, &head, &in, def.capacity, epoch, &g, NULL, &ss, err, sizeof err) == 0,
              "frame %d publishes (%s)", frame, err);
        uint64_t next = (uint64_t)frame;
        frameset_unref(&r.fs[r.next % RING]);
        CHECK(hub_take_framesets(&h, &next, &r.fs[r.next % RING], 1) == 1, "frame %d: one frameset", frame);
        r.next++;
        for (int k = 0; k < NCL; k++) take(&cl[k], &r, &v, frame);
    }
    printf("fountain: %d particles born, %d drained in the first 300 frames\n", born, gone);
    CHECK(born > 100 && gone > 100, "the emitter added (%d) and the drain removed (%d) particles", born, gone);
    for (int k = 0; k < NCL; k++) {
        client *c = &cl[k];
        printf("client %s: %d frames decoded (%d keyframes, %d a frame behind or more, mean lag %.2f frames), worst "
               "error %.4f steps, mirror mismatches %d\n",
               c->name, c->decoded, c->keys, c->older, c->decoded ? (double)c->lag / c->decoded : 0, c->worst_err,
               c->worst_mirror);
        /* D: two keyframes' 11 frames more than a stride, 11 every 50 frames */
        int expect = (600 - c->joined_at) / c->stride - (c->key_busy ? 2 * (c->key_busy - 1) + 10 * 10 : 0);
        CHECK(c->lag <= c->decoded * c->stride, "%s: frames at most a stride behind on average (mean lag %.2f)",
              c->name, (double)c->lag / (c->decoded ? c->decoded : 1));
        CHECK(c->decoded >= expect - 3, "%s decoded %d of the %d frames it was due", c->name, c->decoded, expect);
        CHECK(c->worst_err <= 0.5 + 1e-3, "%s: every position within half a step (worst %.4f)", c->name, c->worst_err);
        CHECK(c->worst_mirror == 0, "%s: the server's mirror matches the decoder", c->name);
        CHECK(c->keys <= 3, "%s: keyframes only to join and at the scene load (%d)", c->name, c->keys);
        fc_decoder_destroy(c->dec);
    }
    for (int k = 0; k < RING; k++) frameset_unref(&r.fs[k]);
    stream_destroy(st);
    hub_destroy(&h);
    fs_world_destroy(w);
    printf("test_stream: %d passed, %d failed\n", g_pass, g_fail);
    return g_fail ? 1 : 0;
}
