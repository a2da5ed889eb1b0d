/* persist.c - saving and restoring the world (see persist.h): the snapshot
 * document (GET/POST /api/snapshot) and the save file in --data-dir.
 *
 * A save is atomic: the document goes to world.snapshot.tmp, is fsync'd,
 * renamed over world.snapshot and the directory fsync'd, so a crash at any
 * point leaves either the previous save or the new one.  A save that cannot
 * be read or restored is reported and renamed aside
 * (world.snapshot.rejected-<UTC time>), and the server starts with its
 * default scene. */
#include "persist.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "log.h"
#include "persist_doc.h"
#include "wire.h"

#define SAVE_NAME "world.snapshot"
#define SAVE_MAX_BYTES ((size_t)1 << 31)

static bool fill_world(void *dst, size_t n, void *ctx) {
    return fs_world_snapshot_write(ctx, dst, n) == n;
}

static uint64_t tick_of(const fs_world *w) {
    fs_stats fst;
    fs_world_stats(w, &fst);
    return fst.tick;
}

msg_buf *persist_encode(fs_world *w) {
    fs_stats fst;
    fs_world_stats(w, &fst);
    wire_snapshot_meta m = {
        .tick = fst.tick,
        .sim_time = fst.sim_time,
        .scene = fs_world_scene_name(w),
        .solver = fs_solver_name(fs_world_solver(w)),
        .particles = fst.particles,
        .springs = fst.springs,
        .bodies = fst.bodies,
        .paused = fs_world_paused(w),
    };
    return wire_encode_snapshot(&m, fs_world_snapshot_size(w), fill_world, w);
}

int persist_restore(fs_world *w, const uint8_t *p, size_t n, char *err, size_t errlen) {
    return persist_doc_restore(w, p, n, err, errlen) ? -1 : 0;
}

static int path_of(const char *dir, char *out, size_t cap, const char *suffix) {
    int k = snprintf(out, cap, "%s/%s%s", dir, SAVE_NAME, suffix);
    return (k < 0 || (size_t)k >= cap) ? -1 : 0;
}

static bool write_all(int fd, const uint8_t *p, size_t n) {
    while (n) {
        ssize_t k = write(fd, p, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        p += k;
        n -= (size_t)k;
    }
    return true;
}

/* Writes doc to tmp, flushes it and renames it over fin. */
static bool write_renamed(const msg_buf *doc, const char *tmp, const char *fin) {
    bool ok = false;
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        log_error("save: cannot create %s: %s", tmp, strerror(errno));
        return false;
    }
    ok = write_all(fd, doc->data, doc->len) && fsync(fd) == 0;
    if (!ok) log_error("save: cannot write %s: %s", tmp, strerror(errno));
    if (close(fd) != 0) ok = false;
    if (ok && rename(tmp, fin) != 0) {
        log_error("save: cannot rename %s to %s: %s", tmp, fin, strerror(errno));
        ok = false;
    }
    if (!ok) unlink(tmp);
    return ok;
}

bool persist_save(const char *dir, fs_world *w, persist_saved *out) {
    uint64_t t0 = clock_now_ns();
    char tmp[1200], fin[1200];
    if (path_of(dir, tmp, sizeof tmp, ".tmp") || path_of(dir, fin, sizeof fin, "")) {
        log_error("save: the data directory path is too long");
        return false;
    }
    mkdir(dir, 0755); /* may exist */
    msg_buf *doc = persist_encode(w);
    if (!doc) {
        log_error("save: out of memory encoding the world");
        return false;
    }
    bool ok = write_renamed(doc, tmp, fin);
    if (ok) { /* make the rename itself durable */
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd >= 0) {
            fsync(dfd);
            close(dfd);
        }
        out->bytes = doc->len;
        out->ms = (double)(clock_now_ns() - t0) / 1e6;
        log_info("saved the world (%zu bytes, tick %llu) to %s in %.1f ms", doc->len, (unsigned long long)tick_of(w),
                 fin, out->ms);
    }
    msg_buf_unref(doc);
    return ok;
}

static void set_aside(const char *dir, const char *fin, const char *why) {
    char stamp[32], aside[1280];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
    snprintf(aside, sizeof aside, "%s/%s.rejected-%s", dir, SAVE_NAME, stamp);
    if (rename(fin, aside) == 0)
        log_error("the saved world %s cannot be restored (%s); moved it to %s and starting with the default scene", fin,
                  why, aside);
    else
        log_error("the saved world %s cannot be restored (%s), nor moved aside (%s); starting with the default "
                  "scene",
                  fin, why, strerror(errno));
}

/* Reads the whole file fd (of size `size`) into f. */
static void read_file(int fd, off_t size, persist_file *f) {
    uint8_t *buf = NULL;
    size_t n = 0;
    if (size <= 0 || (size_t)size > SAVE_MAX_BYTES) {
        f->why = "empty, unreadable or too large";
    } else {
        n = (size_t)size;
        buf = malloc(n);
        size_t got = 0;
        while (buf && got < n) {
            ssize_t k = read(fd, buf + got, n - got);
            if (k < 0 && errno == EINTR) continue;
            if (k <= 0) break;
            got += (size_t)k;
        }
        if (!buf || got != n) f->why = "cannot read it";
    }
    f->data = buf;
    f->len = n;
}

void persist_open(const char *dir, persist_file *f, fs_world_def *def) {
    char fin[1200];
    f->data = NULL;
    f->len = 0;
    f->why = NULL;
    if (!dir[0] || path_of(dir, fin, sizeof fin, "")) return;
    int fd = open(fin, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        if (errno != ENOENT)
            log_error("cannot open the saved world %s: %s", fin, strerror(errno));
        else
            log_info("no saved world in %s yet", dir);
        return;
    }
    struct stat st;
    if (fstat(fd, &st) != 0)
        f->why = "empty, unreadable or too large";
    else
        read_file(fd, st.st_size, f);
    close(fd);
    char err[128];
    fs_snapshot_info info;
    /* a document that does not peek is refused (and set aside) by the restore */
    if (!f->why && !persist_doc_peek(f->data, f->len, &info, err, sizeof err) && info.capacity != def->capacity) {
        log_info("the saved world was made with --capacity %d: using it (instead of %d)", info.capacity, def->capacity);
        def->capacity = info.capacity;
    }
}

persist_status persist_load(const char *dir, persist_file *f, fs_world *w) {
    char fin[1200];
    if (!dir[0] || path_of(dir, fin, sizeof fin, "")) return PERSIST_NONE;
    if (!f->data && !f->why) return PERSIST_NONE;
    const char *why = f->why;
    char err[FS_ERROR_LEN + 64];
    if (!why && persist_restore(w, f->data, f->len, err, sizeof err)) why = err;
    persist_close(f);
    if (why) {
        set_aside(dir, fin, why);
        return PERSIST_REJECTED;
    }
    log_info("restored the saved world from %s (scene %s, tick %llu, %d particles)", fin, fs_world_scene_name(w),
             (unsigned long long)tick_of(w), fs_world_particle_count(w));
    return PERSIST_RESTORED;
}

void persist_close(persist_file *f) {
    free(f->data);
    f->data = NULL;
    f->len = 0;
}
