/* rest_recordings.c - the recordings over REST (see rest_recordings.h).
 *
 * The listing is a cache on the network thread: a summary of every
 * recording's index.json, sorted by name.  It is built again only when the
 * encoder thread has written an index since (rec_status.generation) or the
 * recordings folder itself changed (its mtime: a folder made, copied in or
 * removed), and then an index.json is read again only when its file changed
 * (device, inode, size, mtime).  The page last asked is kept as text.  No
 * symbolic link is followed, in the listing or when a file is served: a
 * linked folder or file is neither listed nor served. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "rest_recordings.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hub.h"

#define REC_INDEX_MAX (4u << 20)  /* an index.json larger than this is not read */
#define REC_FILE_MAX (256u << 20) /* nor a segment larger than this */
#define REC_LIST_MAX 100000       /* recordings the listing holds (about 300 bytes each) */
#define REC_SETTLE_NS 1000000000ull

/* One recording as its index.json says.  A value. */
typedef struct rec_entry {
    char name[REC_NAME_MAX];
    dev_t dev; /* the index.json read: one that changed is read again */
    ino_t ino;
    off_t size;
    struct timespec mtime;
    bool recording;
    char stopped[160];
    double frame_hz, first_time, last_time;
    uint64_t frames, bytes, segments, segments_dropped;
} rec_entry;

/* The listing's cache.  Network thread only. */
struct rec_list {
    rec_entry *e; /* sorted by name */
    int n;
    bool built, complete;
    uint64_t generation;       /* rec_status.generation when built */
    struct timespec dir_mtime; /* the folder's when built */
    uint64_t recheck_ns;       /* when not 0: build again from then (the folder had just changed) */
    uint64_t builds;
    char *page; /* the page last asked, as text */
    size_t page_len;
    int page_offset, page_limit;
    uint64_t page_build;
};

/* A recording's name: what validate.c allows (no path leaves the folder). */
static bool valid_name(const char *s) {
    size_t n = strlen(s);
    if (!n || n >= REC_NAME_MAX || s[0] == '.') return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
              c == '.'))
            return false;
    }
    return true;
}

/* The bytes of the open file fd (a regular file of at most max bytes), or
 * NULL with *err_no set. */
static char *read_fd(int fd, size_t max, size_t *len, int *err_no) {
    struct stat st;
    if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
        *err_no = ENOENT;
        return NULL;
    }
    if ((uint64_t)st.st_size > max) {
        *err_no = EFBIG;
        return NULL;
    }
    size_t n = (size_t)st.st_size, got = 0;
    char *buf = malloc(n + 1);
    if (!buf) {
        *err_no = ENOMEM;
        return NULL;
    }
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    if (got != n) {
        free(buf);
        *err_no = EIO;
        return NULL;
    }
    buf[n] = 0;
    *len = n;
    return buf;
}

static double num_of(const cJSON *o, const char *k) {
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Reads folder/index.json (no link followed) into e's summary. */
static bool read_index(int folder, rec_entry *e) {
    int fd = openat(folder, "index.json", O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return false;
    size_t len = 0;
    int err = 0;
    char *text = read_fd(fd, REC_INDEX_MAX, &len, &err);
    close(fd);
    cJSON *j = text ? cJSON_ParseWithLength(text, len) : NULL;
    free(text);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        return false;
    }
    e->recording = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "recording"));
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(j, "stopped");
    snprintf(e->stopped, sizeof e->stopped, "%s", cJSON_IsString(st) && st->valuestring ? st->valuestring : "");
    e->frame_hz = num_of(j, "frame_hz");
    e->segments_dropped = (uint64_t)num_of(j, "segments_dropped");
    e->frames = e->bytes = e->segments = 0;
    e->first_time = e->last_time = 0;
    const cJSON *segs = cJSON_GetObjectItemCaseSensitive(j, "segments"), *s;
    if (!cJSON_IsArray(segs)) segs = NULL;
    cJSON_ArrayForEach(s, segs) {
        if (!e->segments) e->first_time = num_of(s, "first_time");
        e->last_time = num_of(s, "last_time");
        e->frames += (uint64_t)num_of(s, "frames");
        e->bytes += (uint64_t)num_of(s, "bytes");
        e->segments++;
    }
    cJSON_Delete(j);
    return true;
}

static int by_name(const void *a, const void *b) {
    return strcmp(((const rec_entry *)a)->name, ((const rec_entry *)b)->name);
}

static bool same_time(struct timespec a, struct timespec b) {
    return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

/* The real folders of dfd with a recording's name, sorted (at most
 * REC_LIST_MAX; *complete false when some were left out). */
static rec_entry *list_folders(int dfd, int *count, bool *complete) {
    *count = 0;
    *complete = true;
    int fd = dup(dfd);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        if (fd >= 0) close(fd);
        return NULL;
    }
    rec_entry *e = NULL;
    int cap = 0;
    for (struct dirent *de; (de = readdir(d));) {
        struct stat st;
        if (!valid_name(de->d_name)) continue;
        if (fstatat(dfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) continue;
        if (*count == REC_LIST_MAX) {
            *complete = false;
            break;
        }
        if (*count == cap) {
            int nc = cap ? cap * 2 : 256;
            if (nc > REC_LIST_MAX) nc = REC_LIST_MAX;
            rec_entry *ne = realloc(e, (size_t)nc * sizeof *e);
            if (!ne) {
                *complete = false;
                break;
            }
            e = ne, cap = nc;
        }
        memset(&e[*count], 0, sizeof *e);
        snprintf(e[*count].name, sizeof e->name, "%.31s", de->d_name); /* valid_name: shorter */
        (*count)++;
    }
    closedir(d);
    if (*count) qsort(e, (size_t)*count, sizeof *e, by_name);
    return e;
}

/* Builds the listing again: the folders as they are, each index.json read
 * only when it changed since the last build. */
static void build(rec_list *L, const char *dir, bool have_dir) {
    int dfd = have_dir ? open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    struct stat dst;
    memset(&dst, 0, sizeof dst);
    int count = 0;
    bool complete = true;
    rec_entry *e = NULL;
    if (dfd >= 0 && !fstat(dfd, &dst)) e = list_folders(dfd, &count, &complete);
    int kept = 0;
    for (int i = 0; i < count; i++) {
        rec_entry x = e[i];
        int sub = openat(dfd, x.name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        struct stat st;
        bool ok = sub >= 0 && !fstatat(sub, "index.json", &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode);
        if (ok) {
            const rec_entry *old = L->n ? bsearch(&x, L->e, (size_t)L->n, sizeof *L->e, by_name) : NULL;
            if (old && old->dev == st.st_dev && old->ino == st.st_ino && old->size == st.st_size &&
                same_time(old->mtime, st.st_mtim)) {
                x = *old;
            } else {
                x.dev = st.st_dev, x.ino = st.st_ino, x.size = st.st_size, x.mtime = st.st_mtim;
                ok = read_index(sub, &x);
            }
        }
        if (sub >= 0) close(sub);
        if (ok) e[kept++] = x; /* a folder without a readable index.json is not a recording */
    }
    if (dfd >= 0) close(dfd);
    free(L->e);
    L->e = e;
    L->n = kept;
    L->complete = complete;
    L->dir_mtime = dst.st_mtim;
    L->built = true;
    L->builds++;
    /* a change within the file system clock's granularity after this build
     * would leave the mtime as it is: look once more a moment later */
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    bool fresh = have_dir && now.tv_sec - dst.st_mtim.tv_sec < 2;
    L->recheck_ns = fresh ? clock_now_ns() + REC_SETTLE_NS : 0;
}

static cJSON *entry_json(const rec_entry *x) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", x->name);
    cJSON_AddBoolToObject(o, "recording", x->recording);
    cJSON_AddStringToObject(o, "stopped", x->stopped);
    cJSON_AddNumberToObject(o, "frame_hz", x->frame_hz);
    cJSON_AddNumberToObject(o, "segment_count", (double)x->segments);
    cJSON_AddNumberToObject(o, "segments_dropped", (double)x->segments_dropped);
    cJSON_AddNumberToObject(o, "frames", (double)x->frames);
    cJSON_AddNumberToObject(o, "bytes", (double)x->bytes);
    cJSON_AddNumberToObject(o, "first_time", x->first_time);
    cJSON_AddNumberToObject(o, "last_time", x->last_time);
    cJSON_AddNumberToObject(o, "seconds", x->last_time - x->first_time);
    return o;
}

/* The page's text: the cached one when the listing and the page are the same. */
static const char *page_text(rec_list *L, int offset, int limit) {
    if (L->page && L->page_build == L->builds && L->page_offset == offset && L->page_limit == limit) return L->page;
    free(L->page);
    L->page = NULL;
    cJSON *a = cJSON_CreateArray();
    for (int i = offset; a && i < L->n && i - offset < limit; i++) cJSON_AddItemToArray(a, entry_json(&L->e[i]));
    L->page = a ? cJSON_PrintUnformatted(a) : NULL;
    cJSON_Delete(a);
    if (!L->page) return NULL;
    L->page_len = strlen(L->page);
    L->page_build = L->builds;
    L->page_offset = offset;
    L->page_limit = limit;
    return L->page;
}

static void status_json(cJSON *j, const rec_status *rs) {
    cJSON *a = cJSON_AddObjectToObject(j, "recording");
    cJSON_AddBoolToObject(a, "active", rs->active);
    cJSON_AddStringToObject(a, "name", rs->name);
    cJSON_AddNumberToObject(a, "bytes", (double)rs->bytes);
    cJSON_AddNumberToObject(a, "frames", (double)rs->frames);
    cJSON_AddNumberToObject(a, "segments", (double)rs->segments);
    cJSON_AddNumberToObject(a, "segments_dropped", (double)rs->segments_dropped);
    cJSON_AddNumberToObject(a, "seconds", rs->seconds);
    cJSON_AddStringToObject(a, "stopped", rs->stopped);
    cJSON *d = cJSON_AddObjectToObject(j, "disk");
    cJSON_AddNumberToObject(d, "budget_bytes", (double)rs->budget_bytes);
    cJSON_AddNumberToObject(d, "used_bytes", (double)rs->used_bytes);
    cJSON_AddNumberToObject(d, "reserve_bytes", (double)rs->reserve_bytes);
    cJSON_AddNumberToObject(d, "free_bytes", (double)rs->free_bytes);
    cJSON *s = cJSON_AddObjectToObject(d, "stopped");
    cJSON_AddNumberToObject(s, "budget", (double)rs->stopped_budget);
    cJSON_AddNumberToObject(s, "disk", (double)rs->stopped_disk);
    cJSON_AddNumberToObject(s, "write_error", (double)rs->stopped_error);
}

/* Frees a listing's cache (the view's recordings_free). */
static void list_free(rec_list *L) {
    free(L->e);
    free(L->page);
    free(L);
}

char *rest_recordings_text(net *n, net_room *v, int offset, int limit, size_t *len) {
    if (!v->recordings) {
        v->recordings = calloc(1, sizeof *v->recordings);
        v->recordings_free = list_free;
    }
    rec_list *L = v->recordings;
    if (!L) return NULL;
    char dir[1100];
    bool have = config_record_dir(n->cfg, dir, sizeof dir);
    rec_status rs;
    hub_get_rec_status(v->hub, &rs);
    struct stat st;
    bool have_dir = have && !stat(dir, &st) && S_ISDIR(st.st_mode);
    if (!L->built || rs.generation != L->generation || (have_dir && !same_time(st.st_mtim, L->dir_mtime)) ||
        (!have_dir && L->n) || (L->recheck_ns && clock_now_ns() >= L->recheck_ns)) {
        build(L, dir, have_dir);
        L->generation = rs.generation;
    }
    const char *page = page_text(L, offset, limit);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddBoolToObject(j, "enabled", have);
    status_json(j, &rs);
    cJSON_AddNumberToObject(j, "total", L->n);
    cJSON_AddNumberToObject(j, "offset", offset);
    cJSON_AddNumberToObject(j, "limit", limit);
    cJSON_AddBoolToObject(j, "complete", L->complete);
    char *head = page ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!head) return NULL;
    /* {...head...} -> {...head...,"recordings":[page]} */
    size_t hl = strlen(head);
    static const char key[] = ",\"recordings\":";
    char *out = malloc(hl + sizeof key + L->page_len + 1);
    if (out) {
        memcpy(out, head, hl - 1);
        memcpy(out + hl - 1, key, sizeof key - 1);
        memcpy(out + hl - 1 + sizeof key - 1, page, L->page_len);
        size_t at = hl - 1 + sizeof key - 1 + L->page_len;
        out[at++] = '}';
        out[at] = 0;
        *len = at;
    }
    free(head);
    return out;
}

/* Whether path (an open file's) lies inside dir, both resolved. */
static bool inside(const char *dir, const char *path) {
    char rd[PATH_MAX], rp[PATH_MAX];
    if (!realpath(dir, rd) || !realpath(path, rp)) return false;
    size_t n = strlen(rd);
    return !strncmp(rp, rd, n) && (rp[n] == '/' || (n == 1 && rd[0] == '/'));
}

char *rest_recfile_read(const net *n, const char *file, size_t *len, const char **ctype, reply_code *code, char *err,
                        size_t errlen) {
    char dir[1100], path[1300], name[REC_NAME_MAX];
    if (!config_record_dir(n->cfg, dir, sizeof dir)) {
        *code = RC_NOT_FOUND;
        snprintf(err, errlen, "this server keeps no recordings (--record-dir)");
        return NULL;
    }
    const char *slash = strchr(file, '/');
    size_t nl = slash ? (size_t)(slash - file) : 0;
    int e = ENOENT;
    char *buf = NULL;
    if (slash && nl < sizeof name) {
        memcpy(name, file, nl);
        name[nl] = 0;
        /* no link followed: neither the recording's folder nor its file */
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        int sub = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) : -1;
        int fd = sub >= 0 ? openat(sub, slash + 1, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) : -1;
        snprintf(path, sizeof path, "%s/%s", dir, file);
        if (fd >= 0 && inside(dir, path)) buf = read_fd(fd, REC_FILE_MAX, len, &e);
        if (fd >= 0) close(fd);
        if (sub >= 0) close(sub);
        if (dfd >= 0) close(dfd);
    }
    if (!buf) {
        *code = e == EFBIG ? RC_TOO_LARGE : e == ENOMEM || e == EIO ? RC_INTERNAL : RC_NOT_FOUND;
        snprintf(err, errlen, "%s: %s", file, *code == RC_NOT_FOUND ? "no such recording file" : strerror(e));
        return NULL;
    }
    *ctype = strstr(file, ".json") ? "application/json" : "application/octet-stream";
    return buf;
}
