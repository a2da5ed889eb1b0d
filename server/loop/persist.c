/* persist.c - the snapshot document (GET/POST /api/snapshot) and the save
 * file in --data-dir.  Sim thread only (and sim_thread_init on the main
 * thread before the sim thread starts).
 *
 * A save is atomic: the document goes to world.snapshot.tmp, is fsync'd,
 * renamed over world.snapshot and the directory fsync'd, so a crash at any
 * point leaves either the previous save or the new one.  A save that cannot
 * be read or restored is reported and renamed aside
 * (world.snapshot.rejected-<UTC time>), and the server starts with its
 * default scene. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "persist_doc.h"
#include "sim_thread.h"
#include "clock.h"

#define SAVE_NAME "world.snapshot"
#define SAVE_MAX_BYTES ((size_t)1 << 31)

static bool fill_world(void *dst, size_t n, void *ctx)
{
    return fs_world_snapshot_write(ctx, dst, n) == n;
}

msg_buf *sim_snapshot_doc(sim_thread *s)
{
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    wire_snapshot_meta m = {
        .tick = fst.tick,
        .sim_time = fst.sim_time,
        .scene = fs_world_scene_name(s->world),
        .solver = fs_solver_name(fs_world_solver(s->world)),
        .particles = fst.particles,
        .springs = fst.springs,
        .bodies = fst.bodies,
        .paused = fs_world_paused(s->world),
    };
    return wire_encode_snapshot(&m, fs_world_snapshot_size(s->world), fill_world, s->world);
}

int sim_restore_doc(sim_thread *s, const uint8_t *p, size_t n, char *err, size_t errlen)
{
    if (persist_doc_restore(s->world, p, n, err, errlen))
        return -1;
    sim_world_replaced(s, 0);
    return 0;
}

static int path_of(const sim_thread *s, char *out, size_t cap, const char *suffix)
{
    int k = snprintf(out, cap, "%s/%s%s", s->cfg->data_dir, SAVE_NAME, suffix);
    return (k < 0 || (size_t)k >= cap) ? -1 : 0;
}

static bool write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

bool sim_save(sim_thread *s)
{
    if (!s->cfg->data_dir[0])
        return true;
    uint64_t t0 = clock_now_ns();
    char tmp[1200], fin[1200];
    if (path_of(s, tmp, sizeof tmp, ".tmp") || path_of(s, fin, sizeof fin, "")) {
        log_error("save: the data directory path is too long");
        s->stats.save_failures++;
        return false;
    }
    mkdir(s->cfg->data_dir, 0755); /* may exist */
    msg_buf *doc = sim_snapshot_doc(s);
    if (!doc) {
        log_error("save: out of memory encoding the world");
        s->stats.save_failures++;
        return false;
    }
    bool ok = false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_error("save: cannot create %s: %s", tmp, strerror(errno));
    } else {
        ok = write_all(fd, doc->data, doc->len) && fsync(fd) == 0;
        if (!ok)
            log_error("save: cannot write %s: %s", tmp, strerror(errno));
        if (close(fd) != 0)
            ok = false;
        if (ok && rename(tmp, fin) != 0) {
            log_error("save: cannot rename %s to %s: %s", tmp, fin, strerror(errno));
            ok = false;
        }
        if (!ok)
            unlink(tmp);
    }
    if (ok) { /* make the rename itself durable */
        int dfd = open(s->cfg->data_dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        s->stats.saves++;
        s->stats.save_bytes_last = doc->len;
        s->stats.save_ms_last = (double)(clock_now_ns() - t0) / 1e6;
        log_info("saved the world (%zu bytes, tick %llu) to %s in %.1f ms", doc->len,
                 (unsigned long long)sim_world_tick(s), fin, s->stats.save_ms_last);
    } else {
        s->stats.save_failures++;
    }
    msg_buf_unref(doc);
    return ok;
}

static void set_aside(const sim_thread *s, const char *fin, const char *why)
{
    char stamp[32], aside[1280];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(aside, sizeof aside, "%s/%s.rejected-%s", s->cfg->data_dir, SAVE_NAME, stamp);
    if (rename(fin, aside) == 0)
        log_error("the saved world %s cannot be restored (%s); moved it to %s and starting with the default scene",
                  fin, why, aside);
    else
        log_error("the saved world %s cannot be restored (%s), nor moved aside (%s); starting with the default "
                  "scene",
                  fin, why, strerror(errno));
}

/* Reads the save (if any) into s->save and sizes the world to it: a world
 * restores only into one of the capacity it was saved from. */
void sim_open_saved(sim_thread *s, fs_world_def *def)
{
    char fin[1200];
    s->save = NULL;
    s->save_len = 0;
    s->save_why = NULL;
    if (!s->cfg->data_dir[0] || path_of(s, fin, sizeof fin, ""))
        return;
    int fd = open(fin, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            log_error("cannot open the saved world %s: %s", fin, strerror(errno));
        else
            log_info("no saved world in %s yet", s->cfg->data_dir);
        return;
    }
    struct stat st;
    uint8_t *buf = NULL;
    size_t n = 0;
    if (fstat(fd, &st) != 0 || st.st_size <= 0 || (size_t)st.st_size > SAVE_MAX_BYTES) {
        s->save_why = "empty, unreadable or too large";
    } else {
        n = (size_t)st.st_size;
        buf = malloc(n);
        size_t got = 0;
        while (buf && got < n) {
            ssize_t k = read(fd, buf + got, n - got);
            if (k < 0 && errno == EINTR)
                continue;
            if (k <= 0)
                break;
            got += (size_t)k;
        }
        if (!buf || got != n)
            s->save_why = "cannot read it";
    }
    close(fd);
    s->save = buf;
    s->save_len = n;
    char err[128];
    fs_snapshot_info info;
    /* a document that does not peek is refused (and set aside) by the restore */
    if (!s->save_why && !persist_doc_peek(buf, n, &info, err, sizeof err) && info.capacity != def->capacity) {
        log_info("the saved world was made with --capacity %d: using it (instead of %d)", info.capacity,
                 def->capacity);
        def->capacity = info.capacity;
    }
}

int sim_load_saved(sim_thread *s)
{
    char fin[1200];
    if (!s->cfg->data_dir[0] || path_of(s, fin, sizeof fin, ""))
        return 0;
    if (!s->save && !s->save_why)
        return 0;
    const char *why = s->save_why;
    char err[FS_ERROR_LEN + 64];
    if (!why && sim_restore_doc(s, s->save, s->save_len, err, sizeof err))
        why = err;
    free(s->save);
    s->save = NULL;
    if (why) {
        set_aside(s, fin, why);
        return -1;
    }
    log_info("restored the saved world from %s (scene %s, tick %llu, %d particles)", fin,
             fs_world_scene_name(s->world), (unsigned long long)sim_world_tick(s),
             fs_world_particle_count(s->world));
    return 1;
}
