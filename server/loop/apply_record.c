/* apply_record.c - the recording commands (see apply_record.h). */
#include "apply_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "encoder.h"
#include "log.h"
#include "publish.h"
#include "rec_disk.h"

#define AUTO_NAME_TRIES 100 /* rec-YYYYMMDD-HHMMSS, then -2, -3, ...: starts in the same second */

/* Makes dir (the recordings folder) if it is missing. */
static int make_dir(const char *dir, char *err, size_t errlen) {
    if (mkdir(dir, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "cannot make the recordings folder %.100s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

/* Makes dir/name: RC_OK, or RC_CONFLICT when a recording of that name
 * exists, RC_INTERNAL when it cannot be made (err says why).  The folder is
 * the name's claim: a start that fails removes it again (encoder.c). */
static reply_code make_folder(const char *dir, const char *name, char *err, size_t errlen) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (!mkdir(path, 0755)) return RC_OK;
    int e = errno;
    if (e == EEXIST) {
        snprintf(err, errlen, "a recording named '%s' exists", name);
        return RC_CONFLICT;
    }
    snprintf(err, errlen, "cannot make %.100s: %s", path, strerror(e));
    return RC_INTERNAL;
}

/* A name from the time, not taken: rec-YYYYMMDD-HHMMSS, else with -2, -3,
 * ... (its folder made); RC_OK or why not (make_folder's codes). */
static reply_code make_auto_folder(const char *dir, char *name, size_t n, char *err, size_t errlen) {
    char base[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(base, sizeof base, "rec-%Y%m%d-%H%M%S", &tm);
    for (int k = 1; k <= AUTO_NAME_TRIES; k++) {
        if (k == 1)
            snprintf(name, n, "%s", base);
        else
            snprintf(name, n, "%.24s-%d", base, k);
        reply_code rc = make_folder(dir, name, err, errlen);
        if (rc != RC_CONFLICT) return rc;
    }
    snprintf(err, errlen, "no free name for a recording this second: give it one ('name')");
    return RC_CONFLICT;
}

/* The disk's limits the recorder works to: the budget and the room the
 * world's saves need (twice the save: it is written beside the one before). */
void sim_record_limits(sim_thread *s) {
    rec_limits l;
    memset(&l, 0, sizeof l);
    if (!config_record_dir(s->cfg, l.dir, sizeof l.dir)) return;
    l.total_mb = s->cfg->record_total_mb;
    uint64_t twice = s->cfg->data_dir[0] ? 2 * s->save_bytes : 0;
    l.reserve = twice > REC_RESERVE_MIN ? twice : REC_RESERVE_MIN;
    encoder_record_limits(s->encoder, &l);
}

/* Queues the start (its folder made); its serial, or 0 with a reason and
 * its code. */
static uint64_t start(sim_thread *s, const char *name, double max_mb, double max_s, char *out_name, char *err,
                      size_t errlen, reply_code *code) {
    rec_request q;
    memset(&q, 0, sizeof q);
    *code = RC_BAD_REQUEST;
    if (!config_record_dir(s->cfg, q.dir, sizeof q.dir)) {
        snprintf(err, errlen, "no recordings folder: start the server with --record-dir DIR (or --data-dir)");
        return 0;
    }
    *code = RC_BUSY;
    if (s->rec_wait_count >= ENCODER_REC_OPS) {
        snprintf(err, errlen, "busy: %d recording starts are waiting for their first frame, try again",
                 s->rec_wait_count);
        return 0;
    }
    *code = RC_INTERNAL;
    if (make_dir(q.dir, err, errlen)) return 0;
    if (name && name[0]) {
        snprintf(q.name, sizeof q.name, "%s", name);
        *code = make_folder(q.dir, q.name, err, errlen);
    } else {
        *code = make_auto_folder(q.dir, q.name, sizeof q.name, err, errlen);
    }
    if (*code != RC_OK) return 0;
    double mb = max_mb > 0 ? max_mb : s->cfg->record_max_mb;
    q.max_bytes = mb > 0 ? (uint64_t)(mb * 1e6) : 0;
    q.bound_asked = max_mb > 0;
    q.max_seconds = max_s > 0 ? max_s : s->cfg->record_max_s;
    uint64_t serial = encoder_record_start(s->encoder, &q);
    if (!serial) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%s", q.dir, q.name);
        rmdir(path);
        snprintf(err, errlen, "busy: %d recording starts and stops are waiting, try again", ENCODER_REC_OPS);
        *code = RC_BUSY;
        return 0;
    }
    s->dirty = true; /* the recording opens with a keyframe at the next frame slot */
    snprintf(out_name, CMD_NAME_LEN, "%s", q.name);
    return serial;
}

void apply_record_start(sim_thread *s, const cmd *c) {
    char err[FS_ERROR_LEN], name[CMD_NAME_LEN];
    reply_code code;
    uint64_t serial =
        start(s, c->u.record.name, c->u.record.max_mb, c->u.record.max_seconds, name, err, sizeof err, &code);
    if (!serial) {
        sim_reply_error(s, c, code, "%s", err);
        return;
    }
    sim_pending_record *p = &s->rec_wait[s->rec_wait_count++];
    *p = (sim_pending_record){.serial = serial, .client = c->client, .rid = c->rid, .reply = true};
    snprintf(p->name, sizeof p->name, "%s", name);
}

void apply_record_stop(sim_thread *s, const cmd *c) {
    if (!encoder_record_stop(s->encoder)) {
        sim_reply_error(s, c, RC_BUSY, "busy: %d recording starts and stops are waiting, try again", ENCODER_REC_OPS);
        return;
    }
    sim_reply_ok(s, c, 0);
}

void sim_record_poll(sim_thread *s) {
    int k = 0;
    for (int i = 0; i < s->rec_wait_count; i++) {
        sim_pending_record *p = &s->rec_wait[i];
        char why[160];
        reply_code code;
        int rc = encoder_record_outcome(s->encoder, p->serial, &code, why, sizeof why);
        if (!rc) {
            s->rec_wait[k++] = *p;
            continue;
        }
        if (!p->reply) {
            if (rc < 0) log_error("the recording at launch did not start (%s); the server runs on without it", why);
            continue;
        }
        cmd c = {.kind = CMD_RECORD_START, .client = p->client, .rid = p->rid};
        if (rc < 0) {
            sim_reply_error(s, &c, code, "%s", why);
            continue;
        }
        cmd_reply r = sim_reply_to(s, &c);
        r.ok = true;
        snprintf(r.name, sizeof r.name, "%s", p->name);
        sim_reply_post(s, &r);
    }
    s->rec_wait_count = k;
}

void sim_record_at_start(sim_thread *s) {
    if (!s->cfg->record_start[0]) return;
    char name[CMD_NAME_LEN], err[FS_ERROR_LEN];
    reply_code code;
    uint64_t serial = start(s, NULL, 0, 0, name, err, sizeof err, &code);
    if (!serial) {
        log_error("cannot record from the start (%s); the server runs on without it", err);
        return;
    }
    s->rec_wait[s->rec_wait_count++] = (sim_pending_record){.serial = serial, .reply = false};
}
