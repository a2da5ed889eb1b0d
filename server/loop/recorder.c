/* recorder.c - a recording on disk (see recorder.h). */
#include "recorder.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "frame_held.h"
#include "log.h"
#include "recfile.h"

#define REC_MAX_SEGMENTS 4096 /* about 5.7 hours at 5 s each; older ones are deleted */

typedef struct seg_info {
    unsigned number;
    uint32_t first_seq, last_seq;
    uint64_t first_tick;
    double first_time, last_time;
    uint64_t frames, bytes;
    bool complete;
} seg_info;

struct recorder {
    hub *hub;
    const wire_static *st;
    bool active, need_key;
    rec_request q;
    FILE *f;                        /* the open segment */
    seg_info seg[REC_MAX_SEGMENTS]; /* ring: seg[(first + k) % MAX] for k < count */
    int first, count;
    unsigned next_number;
    fc_held held;
    uint64_t bcast_next;
    uint64_t bytes_kept, segments_dropped, frames;
    char stopped[160];
};

recorder *recorder_create(hub *h, const wire_static *st) {
    recorder *r = calloc(1, sizeof *r);
    if (r) {
        r->hub = h;
        r->st = st;
    }
    return r;
}

void recorder_destroy(recorder *r) {
    if (!r) return;
    recorder_stop(r, NULL);
    free(r);
}

static seg_info *cur(recorder *r) {
    return r->count ? &r->seg[(r->first + r->count - 1) % REC_MAX_SEGMENTS] : NULL;
}

static void seg_path(const recorder *r, unsigned number, char *out, size_t n) {
    snprintf(out, n, "%s/%s/seg-%06u.fsrec", r->q.dir, r->q.name, number);
}

/* index.json: what the browser reads to list, seek and fetch segments;
 * written to a temporary file and renamed, so a reader never sees half. */
static void write_index(recorder *r) {
    char tmp[1200], fin[1200];
    snprintf(tmp, sizeof tmp, "%s/%s/index.json.tmp", r->q.dir, r->q.name);
    snprintf(fin, sizeof fin, "%s/%s/index.json", r->q.dir, r->q.name);
    FILE *f = fopen(tmp, "w");
    if (!f) return;
    fprintf(f, "{\"version\": 1, \"name\": \"%s\", \"recording\": %s, \"frame_hz\": %g, \"segment_frames\": %d,\n",
            r->q.name, r->active ? "true" : "false", r->st ? r->st->frame_hz : 0.0, REC_SEGMENT_FRAMES);
    fprintf(f, " \"stopped\": \"%s\", \"segments_dropped\": %llu, \"segments\": [", r->stopped,
            (unsigned long long)r->segments_dropped);
    for (int k = 0; k < r->count; k++) {
        const seg_info *s = &r->seg[(r->first + k) % REC_MAX_SEGMENTS];
        fprintf(f,
                "%s\n  {\"file\": \"seg-%06u.fsrec\", \"first_seq\": %u, \"last_seq\": %u, \"first_tick\": %llu, "
                "\"first_time\": %.6f, \"last_time\": %.6f, \"frames\": %llu, \"bytes\": %llu, \"complete\": %s}",
                k ? "," : "", s->number, s->first_seq, s->last_seq, (unsigned long long)s->first_tick, s->first_time,
                s->last_time, (unsigned long long)s->frames, (unsigned long long)s->bytes,
                s->complete ? "true" : "false");
    }
    fprintf(f, "\n]}\n");
    bool ok = !ferror(f);
    if (fclose(f) || !ok || rename(tmp, fin)) remove(tmp);
}

/* Writes one record; false (and the recording stops) on a write error. */
static bool put(recorder *r, int kind, const uint8_t *p, size_t n) {
    uint8_t head[REC_RECORD_HEAD];
    rec_record_head(head, kind, p, n);
    if (fwrite(head, 1, sizeof head, r->f) != sizeof head || fwrite(p, 1, n, r->f) != n) {
        char why[160];
        snprintf(why, sizeof why, "write failed: %s", strerror(errno ? errno : EIO));
        recorder_stop(r, why);
        return false;
    }
    seg_info *s = cur(r);
    s->bytes += sizeof head + n;
    r->bytes_kept += sizeof head + n;
    return true;
}

static void close_segment(recorder *r) {
    if (!r->f) return;
    uint8_t none = 0;
    put(r, REC_END, &none, 0);
    if (r->f) {
        if (fclose(r->f)) log_error("recording %s: closing a segment failed: %s", r->q.name, strerror(errno));
        r->f = NULL;
        cur(r)->complete = true;
    }
}

/* Deletes the oldest segments beyond the bounds (never the open one). */
static void enforce_bounds(recorder *r) {
    for (;;) {
        if (r->count <= 1) return;
        seg_info *old = &r->seg[r->first], *now = cur(r);
        bool too_big = r->q.max_bytes && r->bytes_kept > r->q.max_bytes;
        bool too_long = r->q.max_seconds > 0 && now->last_time - old->first_time > r->q.max_seconds;
        bool too_many = r->count >= REC_MAX_SEGMENTS;
        if (!too_big && !too_long && !too_many) return;
        char path[1200];
        seg_path(r, old->number, path, sizeof path);
        remove(path);
        r->bytes_kept -= old->bytes;
        r->first = (r->first + 1) % REC_MAX_SEGMENTS;
        r->count--;
        r->segments_dropped++;
    }
}

static bool open_segment(recorder *r, const frameset *fs, double t, uint64_t tick) {
    close_segment(r);
    if (!r->active) return false;
    if (r->count == REC_MAX_SEGMENTS) enforce_bounds(r);
    seg_info *s = &r->seg[(r->first + r->count) % REC_MAX_SEGMENTS];
    memset(s, 0, sizeof *s);
    s->number = r->next_number++;
    s->first_seq = fs->seq;
    s->first_tick = tick;
    s->first_time = s->last_time = t;
    r->count++;
    char path[1200];
    seg_path(r, s->number, path, sizeof path);
    r->f = fopen(path, "wb");
    if (!r->f || fwrite(REC_SIGNATURE, 1, REC_SIGNATURE_BYTES, r->f) != REC_SIGNATURE_BYTES) {
        char why[160];
        snprintf(why, sizeof why, "cannot write %.100s: %s", path, strerror(errno ? errno : EIO));
        recorder_stop(r, why);
        return false;
    }
    s->bytes = REC_SIGNATURE_BYTES;
    r->bytes_kept += REC_SIGNATURE_BYTES;
    world_info wi;
    hub_get_info(r->hub, &wi);
    msg_buf *hello = wire_encode_hello(&wi, r->st, 0);
    bool ok = hello && put(r, REC_HEADER, hello->data, hello->len);
    msg_buf_unref(hello);
    fc_held_reset(&r->held);
    return ok;
}

int recorder_start(recorder *r, const rec_request *q, char *err, size_t errlen) {
    recorder_stop(r, NULL);
    memset(r->seg, 0, sizeof r->seg);
    r->first = r->count = 0;
    r->next_number = 1;
    r->bytes_kept = r->segments_dropped = r->frames = 0;
    r->q = *q;
    r->stopped[0] = 0;
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", q->dir, q->name);
    if (access(dir, W_OK)) {
        snprintf(err, errlen, "cannot write to %s: %s", dir, strerror(errno));
        return -1;
    }
    r->active = true;
    r->need_key = true;
    r->bcast_next = hub_bcast_next(r->hub); /* broadcasts from now on */
    write_index(r);
    log_info("recording %s started in %s", q->name, q->dir);
    return 0;
}

void recorder_stop(recorder *r, const char *why) {
    if (!r->active) return;
    if (why) snprintf(r->stopped, sizeof r->stopped, "%s", why);
    r->active = false; /* first: a write error inside close_segment must not recurse */
    if (r->f) {
        FILE *f = r->f;
        uint8_t head[REC_RECORD_HEAD];
        uint8_t none = 0;
        rec_record_head(head, REC_END, &none, 0);
        bool ok = !why && fwrite(head, 1, sizeof head, f) == sizeof head;
        if (ok) cur(r)->bytes += sizeof head, cur(r)->complete = true;
        fclose(f);
        r->f = NULL;
    }
    write_index(r);
    if (why)
        log_error("recording %s stopped: %s", r->q.name, why);
    else
        log_info("recording %s stopped (%llu frames kept)", r->q.name, (unsigned long long)r->frames);
}

bool recorder_active(const recorder *r) {
    return r->active;
}

bool recorder_wants_key(const recorder *r) {
    if (!r->active) return false;
    const seg_info *s = r->count ? &r->seg[(r->first + r->count - 1) % REC_MAX_SEGMENTS] : NULL;
    return r->need_key || !r->f || !s || s->frames >= REC_SEGMENT_FRAMES;
}

/* The coding of fs that continues what the recording holds: the smallest
 * delta 1 frame back it can decode, else the keyframe, else -1. */
static int pick(const recorder *r, const frameset *fs) {
    int best = -1, key = -1;
    for (int i = 0; i < fs->count; i++) {
        const frame_coding *c = &fs->coding[i];
        if (c->base == FC_NONE) {
            key = i;
            continue;
        }
        if (fs->seq - c->base != 1 || !fc_held_can_decode(&r->held, fs->epoch, c->base, c->prev)) continue;
        if (best < 0 || c->msg->len < fs->coding[best].msg->len) best = i;
    }
    return best >= 0 ? best : key;
}

static void write_bcasts(recorder *r) {
    msg_buf *b[16];
    bool lost;
    int k;
    while ((k = hub_take_bcast(r->hub, &r->bcast_next, b, 16, &lost)) > 0) {
        for (int i = 0; i < k; i++) {
            if (r->f && r->active) put(r, REC_BCAST, b[i]->data, b[i]->len);
            msg_buf_unref(b[i]);
        }
    }
}

void recorder_frame(recorder *r, const frameset *fs, double sim_time, uint64_t tick) {
    if (!r->active || !fs->count) return;
    write_bcasts(r);
    if (!r->active) return;
    int key = -1;
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].base == FC_NONE) key = i;
    if (recorder_wants_key(r) && key >= 0 && (!r->f || cur(r)->frames >= REC_SEGMENT_FRAMES || !r->held.any)) {
        if (r->f) write_index(r);
        if (!open_segment(r, fs, sim_time, tick)) return;
        write_index(r);
    }
    if (!r->f) return;
    int i = pick(r, fs);
    if (i < 0) {
        r->need_key = true; /* a frame the recording cannot follow: the next keyframe resumes it */
        return;
    }
    const frame_coding *c = &fs->coding[i];
    if (!put(r, REC_FRAME, c->msg->data, c->msg->len)) return;
    if (fflush(r->f)) {
        char why[160];
        snprintf(why, sizeof why, "write failed: %s", strerror(errno));
        recorder_stop(r, why);
        return;
    }
    fc_held_note(&r->held, fs->epoch, fs->seq, c->base, c->prev);
    if (c->base == FC_NONE) r->need_key = false;
    seg_info *s = cur(r);
    s->last_seq = fs->seq;
    s->last_time = sim_time;
    s->frames++;
    r->frames++;
    enforce_bounds(r);
}

void recorder_status(const recorder *r, rec_status *out) {
    memset(out, 0, sizeof *out);
    out->active = r->active;
    snprintf(out->name, sizeof out->name, "%s", r->q.name);
    out->bytes = r->bytes_kept;
    out->frames = r->frames;
    out->segments = (uint64_t)r->count;
    out->segments_dropped = r->segments_dropped;
    if (r->count)
        out->seconds = r->seg[(r->first + r->count - 1) % REC_MAX_SEGMENTS].last_time - r->seg[r->first].first_time;
    snprintf(out->stopped, sizeof out->stopped, "%s", r->stopped);
}
