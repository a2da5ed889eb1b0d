/* apply_record.c - the recording commands (see apply_record.h). */
#include "apply_record.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "encoder.h"
#include "publish.h"

/* Makes dir/name (dir too); a recording of that name must not exist. */
static int make_folder(const char *dir, const char *name, char *err, size_t errlen) {
    if (mkdir(dir, 0755) && errno != EEXIST) {
        snprintf(err, errlen, "cannot make the recordings folder %s: %s", dir, strerror(errno));
        return -1;
    }
    char path[1200];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    if (mkdir(path, 0755)) {
        snprintf(err, errlen, errno == EEXIST ? "a recording named '%s' exists" : "cannot make %s: %s",
                 errno == EEXIST ? name : path, strerror(errno));
        return -1;
    }
    return 0;
}

static int start(sim_thread *s, const char *name, double max_mb, double max_s, char *out_name, char *err,
                 size_t errlen) {
    rec_request q;
    memset(&q, 0, sizeof q);
    if (!config_record_dir(s->cfg, q.dir, sizeof q.dir)) {
        snprintf(err, errlen, "no recordings folder: start the server with --record-dir DIR (or --data-dir)");
        return -1;
    }
    if (name && name[0]) {
        snprintf(q.name, sizeof q.name, "%s", name);
    } else {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(q.name, sizeof q.name, "rec-%Y%m%d-%H%M%S", &tm);
    }
    if (make_folder(q.dir, q.name, err, errlen)) return -1;
    double mb = max_mb > 0 ? max_mb : s->cfg->record_max_mb;
    q.max_bytes = mb > 0 ? (uint64_t)(mb * 1e6) : 0;
    q.max_seconds = max_s > 0 ? max_s : s->cfg->record_max_s;
    encoder_record(s->encoder, &q);
    s->dirty = true; /* the recording opens with a keyframe at the next frame slot */
    snprintf(out_name, CMD_NAME_LEN, "%s", q.name);
    return 0;
}

void apply_record_start(sim_thread *s, const cmd *c) {
    char err[FS_ERROR_LEN], name[CMD_NAME_LEN];
    if (start(s, c->u.record.name, c->u.record.max_mb, c->u.record.max_seconds, name, err, sizeof err)) {
        sim_reply_error(s, c, "%s", err);
        return;
    }
    cmd_reply r = sim_reply_to(s, c);
    r.ok = true;
    snprintf(r.name, sizeof r.name, "%s", name);
    sim_reply_post(s, &r);
}

void apply_record_stop(sim_thread *s, const cmd *c) {
    encoder_record(s->encoder, NULL);
    sim_reply_ok(s, c, 0);
}

int sim_record_at_start(sim_thread *s, char *err, size_t errlen) {
    if (!s->cfg->record_start[0]) return 0;
    char name[CMD_NAME_LEN];
    return start(s, NULL, 0, 0, name, err, errlen);
}
