/* encoder.c - the encoder thread (see encoder.h). */
#include "thread_name.h"
#include "encoder.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fluid_sim.h"
#include "log.h"

/* A recording start or stop on its way to the encoder thread, and a
 * start's outcome on its way back (under the encoder's mutex). */
enum { OP_FREE, OP_QUEUED, OP_RUNNING, OP_DONE };
typedef struct rec_op {
    int state;
    bool stop;
    uint64_t serial;
    rec_request q;
    reply_code code; /* a start's: RC_OK, or why it did not start */
    char why[160];
} rec_op;

/* The frame handed over: copies, owned by whichever thread holds it (the
 * sim thread while `full` is false, the encoder thread while it is true). */
typedef struct slot {
    int cap;
    uint32_t *id;
    float *x, *y, *z, *temp;
    uint8_t *mat;
    wire_cursor *cursor;
    wire_body body[FS_MAX_BODIES];
    wire_probe probe[FS_MAX_PROBES];
    wire_frame_head head;
    int count, capacity;
    uint32_t epoch;
    fc_grid grid;
} slot;

struct encoder {
    hub *hub;
    char room[32]; /* its thread's name */
    stream *stream;
    pthread_t thread;
    bool started;
    pthread_mutex_t mtx;
    pthread_cond_t cv;
    /* under mtx */
    bool stop, full;
    stream_stats last;
    uint64_t skipped;
    uint32_t key_served; /* the hub's key_requests the encoder has answered */
    rec_op ops[ENCODER_REC_OPS];
    int ops_queued;      /* ops in state OP_QUEUED */
    uint64_t ops_serial; /* the last serial given */
    bool rec_waiting;    /* a start waits for its first frame: the next op waits too */
    bool limits_changed; /* `limits` is new for the recorder */
    rec_limits limits;
    bool rec_wants_key; /* the recorder's, for encoder_key_wanted */
    /* the slot: see above */
    slot s;
    int max_cursors;
    recorder *rec;    /* the encoder thread's */
    uint64_t running; /* the encoder thread's: the serial of the start waiting for its first frame */
};

static void publish_status(encoder *e) {
    rec_status rs;
    recorder_status(e->rec, &rs);
    hub_set_rec_status(e->hub, &rs);
}

/* Ends the op of serial with its outcome (a stop's slot is freed: its
 * answer did not wait).  Under mtx. */
static void op_done(encoder *e, uint64_t serial, reply_code code, const char *why) {
    for (int i = 0; i < ENCODER_REC_OPS; i++) {
        rec_op *o = &e->ops[i];
        if (o->state == OP_FREE || o->serial != serial) continue;
        o->state = o->stop ? OP_FREE : OP_DONE;
        o->code = code;
        snprintf(o->why, sizeof o->why, "%s", why ? why : "");
    }
}

/* The starts and stops the sim thread asked for, in their order; a start
 * holds the ones after it until it has written its first frame, so that
 * every start answered ok has recorded (encoder thread). */
static void apply_record(encoder *e) {
    for (;;) {
        pthread_mutex_lock(&e->mtx);
        bool limits = e->limits_changed;
        rec_limits lim = e->limits;
        e->limits_changed = false;
        rec_op *next = NULL;
        for (int i = 0; i < ENCODER_REC_OPS && !e->rec_waiting; i++)
            if (e->ops[i].state == OP_QUEUED && (!next || e->ops[i].serial < next->serial)) next = &e->ops[i];
        rec_op op = next ? *next : (rec_op){0};
        if (next) next->state = OP_RUNNING, e->ops_queued--;
        pthread_mutex_unlock(&e->mtx);
        if (limits) {
            recorder_set_limits(e->rec, &lim);
            publish_status(e);
        }
        if (!next) return;
        char why[160] = "";
        reply_code code = RC_OK;
        if (op.stop) {
            recorder_stop(e->rec, NULL);
        } else if ((code = recorder_start(e->rec, &op.q, why, sizeof why)) != RC_OK) {
            log_error("recording %s not started: %s", op.q.name, why);
            char dir[1200];
            snprintf(dir, sizeof dir, "%s/%s", op.q.dir, op.q.name);
            rmdir(dir); /* the sim thread made it empty: the name is free again */
        }
        publish_status(e);
        pthread_mutex_lock(&e->mtx);
        if (code == RC_OK && !op.stop) {
            e->rec_waiting = true;
            e->running = op.serial;
        } else {
            op_done(e, op.serial, code, why);
        }
        pthread_mutex_unlock(&e->mtx);
    }
}

/* After a frame: the start waiting for its first frame has it, or has
 * stopped without one (its files are deleted: it is answered with why). */
static void settle_start(encoder *e) {
    bool waiting;
    pthread_mutex_lock(&e->mtx);
    waiting = e->rec_waiting;
    pthread_mutex_unlock(&e->mtx);
    if (!waiting) return;
    bool wrote = recorder_frames(e->rec) > 0, active = recorder_active(e->rec);
    if (!wrote && active) return;
    rec_status rs;
    recorder_status(e->rec, &rs);
    if (!wrote) recorder_discard(e->rec);
    pthread_mutex_lock(&e->mtx);
    reply_code code = RC_OK;
    if (!wrote) {
        code = recorder_stopped_code(e->rec);
        if (code == RC_OK) code = RC_INTERNAL; /* stopped without a reason of its own */
    }
    op_done(e, e->running, code, wrote ? NULL : rs.stopped);
    e->rec_waiting = false;
    pthread_mutex_unlock(&e->mtx);
}

static void slot_free(slot *s) {
    free(s->id);
    free(s->x);
    free(s->y);
    free(s->z);
    free(s->temp);
    free(s->mat);
    s->id = NULL, s->x = s->y = s->z = s->temp = NULL, s->mat = NULL;
    s->cap = 0;
}

static int slot_reserve(slot *s, int n) {
    if (n <= s->cap) return 0;
    slot_free(s);
    size_t c = (size_t)(n > 0 ? n : 1);
    s->id = malloc(c * sizeof *s->id);
    s->x = malloc(c * sizeof *s->x);
    s->y = malloc(c * sizeof *s->y);
    s->z = malloc(c * sizeof *s->z);
    s->temp = malloc(c * sizeof *s->temp);
    s->mat = malloc(c);
    if (!s->id || !s->x || !s->y || !s->z || !s->temp || !s->mat) {
        slot_free(s);
        return -1;
    }
    s->cap = n;
    return 0;
}

static void *encoder_main(void *arg) {
    encoder *e = arg;
    thread_name_set("enc", e->room);
    pthread_mutex_lock(&e->mtx);
    for (;;) {
        while (!e->stop && !e->full && !e->limits_changed && !(e->ops_queued && !e->rec_waiting))
            pthread_cond_wait(&e->cv, &e->mtx);
        if (e->stop) break;
        bool full = e->full;
        pthread_mutex_unlock(&e->mtx);
        apply_record(e);
        if (!full) {
            pthread_mutex_lock(&e->mtx);
            continue;
        }
        slot *s = &e->s;
        fc_input in = {
            .count = s->count, .id = s->id, .x = s->x, .y = s->y, .z = s->z, .material = s->mat, .temp = s->temp};
        stream_stats ss;
        char why[160];
        frameset kept;
        stream_reader rd = {.active = recorder_active(e->rec), .want_key = recorder_wants_key(e->rec), .keep = &kept};
        if (stream_publish(e->stream, e->hub, &s->head, &in, s->capacity, s->epoch, &s->grid, &rd, &ss, why,
                           sizeof why))
            log_once("frame-encode", "encoder: cannot code a frame: %s (logged once)", why);
        if (rd.active) {
            recorder_frame(e->rec, &kept, s->head.sim_time, s->head.tick);
            publish_status(e);
        }
        frameset_unref(&kept);
        settle_start(e);
        uint32_t served = stream_keys_served(e->stream);
        bool rec_key = recorder_wants_key(e->rec);
        pthread_mutex_lock(&e->mtx);
        e->last = ss;
        e->key_served = served;
        e->rec_wants_key = rec_key;
        e->full = false;
        pthread_mutex_unlock(&e->mtx);
        hub_wake(e->hub);
        pthread_mutex_lock(&e->mtx);
    }
    pthread_mutex_unlock(&e->mtx);
    return NULL;
}

encoder *encoder_create(hub *h, const wire_static *st, int max_cursors, int frame_bands, const char *room, char *err,
                        size_t errlen) {
    encoder *e = calloc(1, sizeof *e);
    if (!e) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    e->hub = h;
    snprintf(e->room, sizeof e->room, "%s", room ? room : "");
    e->max_cursors = max_cursors > 0 ? max_cursors : 1;
    e->stream = stream_create(frame_bands);
    e->rec = recorder_create(h, st);
    e->s.cursor = calloc((size_t)e->max_cursors, sizeof *e->s.cursor);
    pthread_mutex_init(&e->mtx, NULL);
    pthread_cond_init(&e->cv, NULL);
    if (!e->stream || !e->rec || !e->s.cursor) {
        snprintf(err, errlen, "out of memory");
        encoder_destroy(e);
        return NULL;
    }
    if (pthread_create(&e->thread, NULL, encoder_main, e)) {
        snprintf(err, errlen, "cannot start the encoder thread");
        encoder_destroy(e);
        return NULL;
    }
    e->started = true;
    return e;
}

void encoder_destroy(encoder *e) {
    if (!e) return;
    if (e->started) {
        pthread_mutex_lock(&e->mtx);
        e->stop = true;
        pthread_cond_signal(&e->cv);
        pthread_mutex_unlock(&e->mtx);
        pthread_join(e->thread, NULL);
    }
    pthread_cond_destroy(&e->cv);
    pthread_mutex_destroy(&e->mtx);
    slot_free(&e->s);
    free(e->s.cursor);
    if (e->rec) recorder_destroy(e->rec); /* closes the recording's segment and index */
    stream_destroy(e->stream);
    free(e);
}

int encoder_submit(encoder *e, const wire_frame_head *head, const fc_input *in, int capacity, uint32_t epoch,
                   const fc_grid *grid, char *err, size_t errlen) {
    pthread_mutex_lock(&e->mtx);
    bool busy = e->full;
    if (busy) e->skipped++;
    pthread_mutex_unlock(&e->mtx);
    if (busy) return 0;
    /* The slot is the sim thread's until `full` is set. */
    slot *s = &e->s;
    if (slot_reserve(s, capacity > in->count ? capacity : in->count)) {
        snprintf(err, errlen, "out of memory for a frame of %d particles", in->count);
        return -1;
    }
    for (int k = 0; k < in->count; k++) {
        int i = in->order ? in->order[k] : k;
        s->id[k] = in->id[i];
        s->x[k] = in->x[i];
        s->y[k] = in->y[i];
        s->z[k] = in->z[i];
        s->mat[k] = in->material[i];
        s->temp[k] = in->temp ? in->temp[i] : -40.0f;
    }
    s->head = *head;
    int nc = head->cursor_count < e->max_cursors ? head->cursor_count : e->max_cursors;
    int nb = head->body_count < FS_MAX_BODIES ? head->body_count : FS_MAX_BODIES;
    if (nc > 0) memcpy(s->cursor, head->cursors, (size_t)nc * sizeof *s->cursor);
    int np = head->probe_count < FS_MAX_PROBES ? head->probe_count : FS_MAX_PROBES;
    if (nb > 0) memcpy(s->body, head->bodies, (size_t)nb * sizeof *s->body);
    if (np > 0) memcpy(s->probe, head->probes, (size_t)np * sizeof *s->probe);
    s->head.cursors = s->cursor;
    s->head.cursor_count = nc;
    s->head.bodies = s->body;
    s->head.body_count = nb;
    s->head.probes = s->probe;
    s->head.probe_count = np > 0 ? np : 0;
    s->count = in->count;
    s->capacity = capacity;
    s->epoch = epoch;
    s->grid = *grid;
    pthread_mutex_lock(&e->mtx);
    e->full = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mtx);
    return 1;
}

void encoder_stats(encoder *e, stream_stats *out, uint64_t *skipped) {
    pthread_mutex_lock(&e->mtx);
    *out = e->last;
    *skipped = e->skipped;
    pthread_mutex_unlock(&e->mtx);
}

bool encoder_key_wanted(encoder *e) {
    frame_wants w;
    hub_get_frame_wants(e->hub, &w);
    pthread_mutex_lock(&e->mtx);
    bool wanted = (w.clients > 0 && w.key_requests != e->key_served) || e->rec_wants_key;
    pthread_mutex_unlock(&e->mtx);
    return wanted;
}

/* Queues an op; its serial, or 0 when every slot is taken. */
static uint64_t queue_op(encoder *e, const rec_request *q) {
    uint64_t serial = 0;
    pthread_mutex_lock(&e->mtx);
    for (int i = 0; i < ENCODER_REC_OPS; i++) {
        rec_op *o = &e->ops[i];
        if (o->state != OP_FREE) continue;
        memset(o, 0, sizeof *o);
        o->state = OP_QUEUED;
        o->stop = q == NULL;
        if (q) o->q = *q;
        o->serial = serial = ++e->ops_serial;
        e->ops_queued++;
        pthread_cond_signal(&e->cv);
        break;
    }
    pthread_mutex_unlock(&e->mtx);
    return serial;
}

uint64_t encoder_record_start(encoder *e, const rec_request *q) {
    return queue_op(e, q);
}

bool encoder_record_stop(encoder *e) {
    return queue_op(e, NULL) != 0;
}

int encoder_record_outcome(encoder *e, uint64_t serial, reply_code *code, char *why, size_t n) {
    int rc = -1;
    *code = RC_INTERNAL;
    snprintf(why, n, "the recording start was lost");
    pthread_mutex_lock(&e->mtx);
    for (int i = 0; i < ENCODER_REC_OPS; i++) {
        rec_op *o = &e->ops[i];
        if (o->state == OP_FREE || o->serial != serial) continue;
        rc = 0;
        if (o->state == OP_DONE) {
            rc = o->code == RC_OK ? 1 : -1;
            *code = o->code;
            snprintf(why, n, "%s", o->why);
            o->state = OP_FREE;
        }
    }
    pthread_mutex_unlock(&e->mtx);
    return rc;
}

void encoder_record_limits(encoder *e, const rec_limits *l) {
    pthread_mutex_lock(&e->mtx);
    e->limits = *l;
    e->limits_changed = true;
    pthread_cond_signal(&e->cv);
    pthread_mutex_unlock(&e->mtx);
}
