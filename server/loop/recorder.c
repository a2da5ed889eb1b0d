/* recorder.c - a recording on disk (see recorder.h). */
#include "recorder.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "clock.h"
#include "frame_held.h"
#include "log.h"
#include "room_name.h"
#include "rec_disk.h"
#include "recfile.h"

#define REC_MAX_SEGMENTS 4096        /* about 5.7 hours at 5 s each; older ones are deleted */
#define REC_SLACK (64u << 10)        /* besides a frame: the broadcasts, a segment's head, the index */
#define REC_START_MIN (256u << 10)   /* the room a start needs: about a keyframe and its index */
#define REC_RESCAN_NS 10000000000ull /* the folder is measured again at most this often, at the budget */

/* Why a recording stopped. */
typedef enum stop_kind { STOP_ASKED, STOP_BUDGET, STOP_DISK, STOP_ERROR } stop_kind;

static void stop(recorder *r, const char *why, bool clean);

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
    reply_code stopped_code; /* of the stop that wrote `stopped` */
    /* the disk (rec_disk.h): the limits as set, the budget they give, what
     * the other recordings of the folder keep (measured at the first limits,
     * then counted, measured again at the budget), the size of index.json */
    rec_limits lim;
    bool measured;
    uint64_t budget, kept_others, index_bytes, free_seen, rescan_ns, generation;
    uint64_t stopped_by[STOP_ERROR + 1];
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

/* s as a JSON string's content (quotes and backslashes escaped, control
 * characters dropped). */
static void json_text(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if ((unsigned char)*s >= 0x20)
            fputc(*s, f);
    }
}

static bool write_all(int fd, const char *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k, n -= (size_t)k;
    }
    return true;
}

/* text to path: to path.tmp, renamed over path (a reader never sees half);
 * when that cannot be written (a full disk), over the file in place, which
 * needs little or no new space. */
static bool write_text(const char *tmp, const char *fin, const char *text, size_t len) {
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd >= 0) {
        bool ok = write_all(fd, text, len);
        if (close(fd)) ok = false;
        if (ok && !rename(tmp, fin)) return true;
        unlink(tmp);
    }
    fd = open(fin, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) return false;
    struct stat st; /* only within the blocks the file holds: a write that fails half way would leave half */
    bool ok = !fstat(fd, &st) && (uint64_t)st.st_blocks * 512 >= len && write_all(fd, text, len) &&
              !ftruncate(fd, (off_t)len);
    if (close(fd)) ok = false;
    return ok;
}

/* index.json: what the browser reads to list, seek and fetch segments.  A
 * failure is logged (the recording's status says the rest). */
static void write_index(recorder *r) {
    char tmp[1200], fin[1200];
    snprintf(tmp, sizeof tmp, "%s/%s/index.json.tmp", r->q.dir, r->q.name);
    snprintf(fin, sizeof fin, "%s/%s/index.json", r->q.dir, r->q.name);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f) {
        log_error("recording %s: out of memory for its index", r->q.name);
        return;
    }
    fprintf(f, "{\"version\": 1, \"name\": \"%s\", \"recording\": %s, \"frame_hz\": %g, \"segment_frames\": %d,\n",
            r->q.name, r->active ? "true" : "false", r->st ? r->st->frame_hz : 0.0, REC_SEGMENT_FRAMES);
    fprintf(f, " \"stopped\": \"");
    json_text(f, r->stopped);
    fprintf(f, "\", \"segments_dropped\": %llu, \"segments\": [", (unsigned long long)r->segments_dropped);
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
    if (fclose(f)) {
        free(text);
        log_error("recording %s: out of memory for its index", r->q.name);
        return;
    }
    r->generation++;
    if (write_text(tmp, fin, text, len))
        r->index_bytes = len;
    else
        log_error("recording %s: cannot write %s: %s", r->q.name, fin, strerror(errno ? errno : EIO));
    free(text);
}

/* The bytes all recordings keep, the running one's included. */
static uint64_t used(const recorder *r) {
    return r->kept_others + (r->active ? r->bytes_kept + r->index_bytes : 0);
}

/* Stops on its own, counted by kind; clean: before a write failed (the
 * open segment gets its end mark). */
static void stop_for(recorder *r, stop_kind kind, bool clean, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void stop_for(recorder *r, stop_kind kind, bool clean, const char *fmt, ...) {
    char why[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof why, fmt, ap);
    va_end(ap);
    r->stopped_by[kind]++;
    if (r->active) r->stopped_code = kind == STOP_ERROR ? RC_INTERNAL : RC_NO_SPACE;
    stop(r, why, clean);
}

/* Measures what the other recordings of the folder keep again (at most
 * every REC_RESCAN_NS): recordings deleted by hand give their room back. */
static void remeasure(recorder *r) {
    uint64_t now = clock_now_ns();
    if (now < r->rescan_ns) return;
    r->rescan_ns = now + REC_RESCAN_NS;
    int folders;
    r->kept_others = rec_disk_kept(r->lim.dir, r->active ? r->q.name : NULL, &folders);
}

/* Whether need more bytes fit the budget and leave the disk's reserve free
 * in folder (the recording's); why says which does not ("" when both do). */
static stop_kind room_for(recorder *r, const char *folder, uint64_t need, char *why, size_t n) {
    why[0] = 0;
    if (r->budget && used(r) + need > r->budget) remeasure(r);
    if (r->budget && used(r) + need > r->budget) {
        snprintf(why, n, "the recordings budget is used up: %.1f MB kept of %.1f MB (--record-total-mb)",
                 (double)used(r) / 1e6, (double)r->budget / 1e6);
        return STOP_BUDGET;
    }
    if (rec_disk_free(folder, &r->free_seen) && r->free_seen < r->lim.reserve + need) {
        snprintf(why, n, "the disk is nearly full: %.1f MB free, and the world's saves need %.1f MB of free space",
                 (double)r->free_seen / 1e6, (double)r->lim.reserve / 1e6);
        return STOP_DISK;
    }
    return STOP_ASKED;
}

void recorder_set_limits(recorder *r, const rec_limits *l) {
    r->lim = *l;
    if (r->measured || !l->dir[0]) {
        if (r->measured) r->budget = l->total_mb > 0 ? rec_disk_budget(l->total_mb, 0, 0) : r->budget;
        return;
    }
    int folders = 0;
    uint64_t free_b = 0;
    r->kept_others = rec_disk_kept(l->dir, NULL, &folders);
    bool have_free = rec_disk_free(l->dir, &free_b);
    r->free_seen = free_b;
    r->budget = have_free || l->total_mb > 0 ? rec_disk_budget(l->total_mb, r->kept_others, free_b) : 0;
    r->measured = true;
    r->rescan_ns = clock_now_ns() + REC_RESCAN_NS;
    log_info("recordings in %s: %d kept (%.1f MB), %.1f MB free; all recordings may keep %.1f MB (%s), leaving %.1f "
             "MB free for the world's saves",
             l->dir, folders, (double)r->kept_others / 1e6, (double)free_b / 1e6, (double)r->budget / 1e6,
             l->total_mb > 0 ? "--record-total-mb" : "the default: what is kept and half the free space",
             (double)l->reserve / 1e6);
}

/* Writes one record; false (and the recording stops) on a write error. */
static bool put(recorder *r, int kind, const uint8_t *p, size_t n) {
    uint8_t head[REC_RECORD_HEAD];
    rec_record_head(head, kind, p, n);
    if (fwrite(head, 1, sizeof head, r->f) != sizeof head || fwrite(p, 1, n, r->f) != n) {
        int e = errno ? errno : EIO;
        stop_for(r, e == ENOSPC || e == EDQUOT ? STOP_DISK : STOP_ERROR, false, "write failed: %s", strerror(e));
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
        int e = errno ? errno : EIO;
        stop_for(r, e == ENOSPC || e == EDQUOT ? STOP_DISK : STOP_ERROR, false, "cannot write %.100s: %s", path,
                 strerror(e));
        return false;
    }
    s->bytes = REC_SIGNATURE_BYTES;
    r->bytes_kept += REC_SIGNATURE_BYTES;
    world_info wi;
    hub_get_info(r->hub, &wi);
    /* only the default room may record (rooms.c: the only one with files) */
    msg_buf *hello = wire_encode_hello(&wi, r->st, 0, ROOM_DEFAULT, "viewer"); /* a replay only watches */
    bool ok = hello && put(r, REC_HEADER, hello->data, hello->len);
    msg_buf_unref(hello);
    fc_held_reset(&r->held);
    return ok;
}

/* Whether q may start (the running recording goes on when not): its
 * folder is writable, its bound within the budget, and the budget and the
 * disk have room; err says why not. */
static reply_code may_start(recorder *r, const rec_request *q, char *err, size_t errlen) {
    char dir[1200];
    snprintf(dir, sizeof dir, "%s/%s", q->dir, q->name);
    if (access(dir, W_OK)) {
        snprintf(err, errlen, "cannot write to %.100s: %s", dir, strerror(errno));
        return RC_INTERNAL;
    }
    if (q->bound_asked && r->budget && q->max_bytes > r->budget) {
        snprintf(err, errlen, "'max_mb' %.1f is more than all recordings may keep: %.1f MB (--record-total-mb)",
                 (double)q->max_bytes / 1e6, (double)r->budget / 1e6);
        return RC_BAD_REQUEST;
    }
    char why[160];
    if (room_for(r, dir, REC_START_MIN, why, sizeof why) != STOP_ASKED) {
        snprintf(err, errlen, "no room for recordings: %s", why);
        return RC_NO_SPACE;
    }
    return RC_OK;
}

reply_code recorder_start(recorder *r, const rec_request *q, char *err, size_t errlen) {
    reply_code code = may_start(r, q, err, errlen);
    if (code != RC_OK) return code;
    recorder_stop(r, NULL);
    memset(r->seg, 0, sizeof r->seg);
    r->first = r->count = 0;
    r->next_number = 1;
    r->bytes_kept = r->segments_dropped = r->frames = r->index_bytes = 0;
    r->q = *q;
    r->stopped[0] = 0;
    r->stopped_code = RC_OK;
    r->active = true;
    r->need_key = true;
    r->bcast_next = hub_bcast_next(r->hub); /* broadcasts from now on */
    write_index(r);
    log_info("recording %s started in %s", q->name, q->dir);
    return RC_OK;
}

/* Stops; clean: the open segment gets its end mark (not after a write
 * error). */
static void stop(recorder *r, const char *why, bool clean) {
    if (!r->active) return;
    if (why) snprintf(r->stopped, sizeof r->stopped, "%s", why);
    r->active = false; /* first: a write error inside close_segment must not recurse */
    if (r->f) {
        FILE *f = r->f;
        uint8_t head[REC_RECORD_HEAD];
        uint8_t none = 0;
        rec_record_head(head, REC_END, &none, 0);
        bool ok = clean && fwrite(head, 1, sizeof head, f) == sizeof head;
        if (ok) cur(r)->bytes += sizeof head, r->bytes_kept += sizeof head;
        if (fclose(f)) ok = false;
        if (ok) cur(r)->complete = true;
        r->f = NULL;
    }
    write_index(r);
    r->kept_others += r->bytes_kept + r->index_bytes; /* now one of the others */
    if (why)
        log_error("recording %s stopped: %s", r->q.name, why);
    else
        log_info("recording %s stopped (%llu frames kept)", r->q.name, (unsigned long long)r->frames);
}

reply_code recorder_stopped_code(const recorder *r) {
    return r->stopped_code;
}

void recorder_stop(recorder *r, const char *why) {
    if (why && r->active) r->stopped_code = RC_INTERNAL;
    stop(r, why, !why);
}

void recorder_discard(recorder *r) {
    if (r->active || !r->q.name[0]) return;
    char path[1200];
    for (int k = 0; k < r->count; k++) {
        seg_path(r, r->seg[(r->first + k) % REC_MAX_SEGMENTS].number, path, sizeof path);
        remove(path);
    }
    snprintf(path, sizeof path, "%s/%s/index.json", r->q.dir, r->q.name);
    remove(path);
    snprintf(path, sizeof path, "%s/%s", r->q.dir, r->q.name);
    if (rmdir(path) && errno != ENOENT)
        log_error("recording %s: cannot remove %s: %s", r->q.name, path, strerror(errno));
    uint64_t mine = r->bytes_kept + r->index_bytes;
    r->kept_others = r->kept_others > mine ? r->kept_others - mine : 0;
    r->bytes_kept = r->index_bytes = 0;
    r->count = 0;
    r->generation++;
}

uint64_t recorder_frames(const recorder *r) {
    return r->frames;
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
 * delta 1 frame back it can decode, else the keyframe, else -1.  Only the
 * full world's (tier 0): a recording keeps every particle. */
static int pick(const recorder *r, const frameset *fs) {
    int best = -1, key = -1;
    for (int i = 0; i < fs->count; i++) {
        const frame_coding *c = &fs->coding[i];
        if (c->tier) continue;
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
    uint64_t need = REC_SLACK; /* checked before anything is written: the largest coding, and the rest */
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].msg && fs->coding[i].msg->len + (uint64_t)REC_SLACK > need)
            need = fs->coding[i].msg->len + (uint64_t)REC_SLACK;
    char why[160], folder[1200];
    snprintf(folder, sizeof folder, "%s/%s", r->q.dir, r->q.name);
    stop_kind full = room_for(r, folder, need, why, sizeof why);
    if (full != STOP_ASKED) {
        stop_for(r, full, true, "%s", why);
        return;
    }
    write_bcasts(r);
    if (!r->active) return;
    int key = -1;
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].base == FC_NONE && !fs->coding[i].tier) key = i;
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
        int e = errno ? errno : EIO;
        stop_for(r, e == ENOSPC || e == EDQUOT ? STOP_DISK : STOP_ERROR, false, "write failed: %s", strerror(e));
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
    out->generation = r->generation;
    out->budget_bytes = r->budget;
    out->used_bytes = r->measured ? used(r) : 0;
    out->reserve_bytes = r->lim.reserve;
    out->free_bytes = r->free_seen;
    out->stopped_budget = r->stopped_by[STOP_BUDGET];
    out->stopped_disk = r->stopped_by[STOP_DISK];
    out->stopped_error = r->stopped_by[STOP_ERROR];
}
