/* rooms.c - the directory of rooms: each room's hub, queue and sim thread
 * made and freed together, the list under one mutex, references counted
 * (the rules are in rooms.h). */
#include "rooms.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "alloc_policy.h"
#include "clock.h"
#include "log.h"
#include "room_doc.h"
#include "sim_thread.h"

/* Threads: name, folder, cfg, hub and queue are written before the room is
 * listed and read-only after; public_role and refs are atomic; closed is
 * under the directory's mu; sim is written by the thread that opens the
 * room before it is listed, then only under the directory's reaper lock. */
struct room {
    char name[ROOM_NAME_CAP];
    char folder[sizeof((srv_config *)0)->data_dir + 8 + ROOM_NAME_CAP];
    atomic_int public_role;
    atomic_uint key_gen; /* its invites' key generation (invite_room_key): rotating moves it on */
    atomic_int refs;
    bool closed;
    bool simulated; /* has a sim thread (fixed when opened) */
    bool hub_ok, queue_ok;
    srv_config cfg; /* the room's options (its sim thread reads them) */
    hub hub;
    cmd_queue queue;
    sim_thread *sim;     /* NULL on a relay, and once joined */
    double admitted_ms;  /* the tick its first world was measured at (admit), before its own mean is known */
    bool restored;       /* opened from its folder at start (rooms_restore): not measured again */
    bool discard;        /* deleted: its world is not saved and its folder is set aside when it is freed */
    atomic_bool evicted; /* its sim thread and world are gone, its save in its folder (rooms_tend) */
    uint64_t evicted_ns; /* when (rooms_tend's thread only) */
};

/* Threads: mu guards count, room[], wake and stopped; reaper serialises
 * rooms_reap and rooms_stop (the calls that join sim threads), taken before
 * mu and never held by a lookup.  room[0..count) are listed and closed
 * rooms in the order they were opened. */
struct rooms {
    rooms_def def;
    pthread_mutex_t mu, reaper;
    room **room;
    int count;
    hub_wake_fn *wake;
    void *wake_arg;
    bool stopped;  /* rooms_stop ran: no room opens any more */
    fs_pool *pool; /* every room's sim thread fans its steps out to it; NULL: def.threads is 1 */
};

rooms_def rooms_default_def(void) {
    return (rooms_def){.simulate = true, .max_rooms = 256, .queue_cap = 1024, .queue_reserve = 16, .threads = 1};
}

room_def room_default_def(void) {
    return (room_def){.name = ROOMS_DEFAULT, .public_role = ROLE_PLAYER};
}

rooms *rooms_create(const rooms_def *def, char *err, size_t errlen) {
    if (!def->cfg || (def->simulate && !def->st) || def->max_rooms < 1 || def->queue_cap < 1 ||
        def->queue_reserve < 0 || def->queue_reserve >= def->queue_cap) {
        snprintf(err, errlen,
                 "a directory of rooms needs the options, hello's constants (to simulate), "
                 "max_rooms >= 1 and a queue larger than its reserve");
        return NULL;
    }
    rooms *d = calloc(1, sizeof *d);
    if (d) d->room = calloc((size_t)def->max_rooms, sizeof *d->room);
    if (!d || !d->room) {
        free(d);
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    d->def = *def;
    pthread_mutex_init(&d->mu, NULL);
    pthread_mutex_init(&d->reaper, NULL);
    if (def->simulate && def->threads > 1 && !(d->pool = fs_pool_create(def->threads))) {
        snprintf(err, errlen, "cannot create a pool of %d threads", def->threads);
        rooms_destroy(d);
        return NULL;
    }
    return d;
}

/* Joins the room's sim thread (it saves its world first) and frees it all. */
/* A deleted room's folder, renamed <data-dir>/rooms/.deleted-<name>-<seconds>
 * (its recordings are not thrown away; no room is ever named so). */
static void set_aside(const room *r) {
    char to[sizeof r->folder + 80], parent[sizeof r->folder];
    snprintf(parent, sizeof parent, "%s", r->folder);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0;
    snprintf(to, sizeof to, "%s/.deleted-%s-%lld", parent, r->name, (long long)time(NULL));
    if (rename(r->folder, to) && errno != ENOENT)
        log_warn("rooms: '%s' deleted, but its folder %s stays: %s", r->name, r->folder, strerror(errno));
}

static void free_room(room *r) {
    if (r->discard) sim_thread_discard(r->sim);
    sim_thread_destroy(r->sim);
    if (r->discard && r->folder[0] && strcmp(r->name, ROOMS_DEFAULT)) set_aside(r);
    if (r->hub_ok) hub_destroy(&r->hub);
    if (r->queue_ok) cmd_queue_destroy(&r->queue);
    free(r);
}

void rooms_destroy(rooms *d) {
    if (!d) return;
    for (int i = 0; i < d->count; i++) {
        room *r = d->room[i];
        const int held = atomic_load(&r->refs) - !r->closed;
        if (held > 0) log_warn("rooms: '%s' freed with %d reference%s still held", r->name, held, held == 1 ? "" : "s");
        free_room(r);
    }
    fs_pool_destroy(d->pool); /* after every sim thread that used it is joined */
    pthread_mutex_destroy(&d->mu);
    pthread_mutex_destroy(&d->reaper);
    free(d->room);
    free(d);
}

void rooms_set_wake(rooms *d, hub_wake_fn *wake, void *arg) {
    pthread_mutex_lock(&d->mu);
    d->wake = wake, d->wake_arg = arg;
    for (int i = 0; i < d->count; i++) d->room[i]->hub.wake = wake, d->room[i]->hub.wake_arg = arg;
    pthread_mutex_unlock(&d->mu);
}

void rooms_stop(rooms *d) {
    pthread_mutex_lock(&d->reaper);
    pthread_mutex_lock(&d->mu);
    d->stopped = true;
    const int n = d->count; /* no room joins or leaves the list while reaper is held and stopped is set */
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < n; i++) { /* outside mu: a save does not hold up lookups */
        room *r = d->room[i];
        sim_thread_destroy(r->sim);
        r->sim = NULL;
        r->hub.wake = NULL; /* its threads are joined: nothing reads it now */
    }
    pthread_mutex_unlock(&d->reaper);
}

/* The listed room of that name (under mu), or NULL. */
static room *listed(rooms *d, const char *name) {
    for (int i = 0; i < d->count; i++)
        if (!d->room[i]->closed && !strcmp(d->room[i]->name, name)) return d->room[i];
    return NULL;
}

/* Whether the room can be listed now (under mu); else why, with err filled. */
static room_status can_list(rooms *d, const char *name, char *err, size_t errlen) {
    if (d->stopped) {
        snprintf(err, errlen, "the server is stopping: no room opens");
        return ROOM_FAILED;
    }
    if (listed(d, name)) {
        snprintf(err, errlen, "a room named '%s' exists", name);
        return ROOM_EXISTS;
    }
    if (d->count >= d->def.max_rooms) {
        snprintf(err, errlen, "the server holds its most rooms (%d)", d->def.max_rooms);
        return ROOM_FULL;
    }
    return ROOM_OK;
}

/* Rooms other than the default keep their files in a folder of their own
 * (<data-dir>/rooms/<name>: world.snapshot, room.json, recordings/); an
 * explicit recordings folder (--record-dir, --record) is the default
 * room's alone, and two worlds must not record into one. */
static bool shares_files(const srv_config *cfg, const char *name) {
    return strcmp(name, ROOMS_DEFAULT) && (cfg->record_dir[0] || cfg->record_start[0]);
}

/* Writes the room's settings (room_doc.h) to its folder, through a
 * temporary file and a rename, so a crash leaves the old one or the new one.
 * Nothing without a folder.  0, or -1 (logged). */
static int keep_settings(room *r) {
    if (!r->folder[0] || !strcmp(r->name, ROOMS_DEFAULT)) return 0;
    room_doc doc = {(role)atomic_load(&r->public_role), atomic_load(&r->key_gen)};
    char text[256], path[sizeof r->folder + 16], tmp[sizeof r->folder + 24];
    int len = room_doc_write(&doc, text, sizeof text);
    snprintf(path, sizeof path, "%s/room.json", r->folder);
    snprintf(tmp, sizeof tmp, "%s/room.json.tmp", r->folder);
    FILE *f = len < 0 ? NULL : fopen(tmp, "w");
    bool ok = f && fwrite(text, 1, (size_t)len, f) == (size_t)len;
    if (f && fclose(f)) ok = false;
    if (ok && rename(tmp, path)) ok = false;
    if (!ok) log_warn("rooms: '%s': cannot write %s: %s", r->name, path, strerror(errno));
    return ok ? 0 : -1;
}

/* <data-dir>/rooms/<name>, made when missing.  0, or -1 with err. */
static int make_folder(const room *r, char *err, size_t errlen) {
    char parent[sizeof r->folder];
    snprintf(parent, sizeof parent, "%s", r->folder);
    char *slash = strrchr(parent, '/');
    if (slash) *slash = 0;
    if ((mkdir(parent, 0700) && errno != EEXIST) || (mkdir(r->folder, 0700) && errno != EEXIST)) {
        snprintf(err, errlen, "room '%s': cannot make %s: %s", r->name, r->folder, strerror(errno));
        return -1;
    }
    return 0;
}

/* The room's hub, queue and sim thread (outside the directory's mutex). */
static room_status make_room(rooms *d, const room_def *def, hub_wake_fn *wake, void *wake_arg, room **out, char *err,
                             size_t errlen) {
    const rooms_def *dd = &d->def;
    if (dd->simulate && shares_files(dd->cfg, def->name)) {
        snprintf(err, errlen, "room '%s': only the default room may record into --record-dir or --record's folder",
                 def->name);
        return ROOM_FAILED;
    }
    room *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory");
        return ROOM_FAILED;
    }
    snprintf(r->name, sizeof r->name, "%s", def->name);
    r->restored = def->restore;
    if (dd->cfg->data_dir[0]) snprintf(r->folder, sizeof r->folder, "%s/rooms/%s", dd->cfg->data_dir, def->name);
    atomic_init(&r->public_role, (int)def->public_role);
    atomic_init(&r->key_gen, def->key_gen);
    atomic_init(&r->evicted, false);
    atomic_init(&r->refs, 0);
    r->cfg = *dd->cfg;
    snprintf(r->cfg.room, sizeof r->cfg.room, "%s", def->name);
    if (r->folder[0] && strcmp(def->name, ROOMS_DEFAULT)) { /* its saves and recordings in its own folder */
        if (dd->simulate && make_folder(r, err, errlen)) {
            free(r);
            return ROOM_FAILED;
        }
        if (strlen(r->folder) >= sizeof r->cfg.data_dir) {
            snprintf(err, errlen, "room '%s': its folder's path is too long (--data-dir)", def->name);
            free(r);
            return ROOM_FAILED;
        }
        memcpy(r->cfg.data_dir, r->folder, strlen(r->folder) + 1);
    }
    if (def->scene) snprintf(r->cfg.scene, sizeof r->cfg.scene, "%s", def->scene);
    if (def->particles > 0) r->cfg.particles = def->particles;
    /* the default room is sized at start as before rooms (sim_thread.c); the
     * others when they are admitted, against what the rooms leave (admit) */
    if (strcmp(def->name, ROOMS_DEFAULT)) r->cfg.step_budget = 0;
    /* the default room never sleeps: scripts that only read it keep it running, as before rooms */
    if (!strcmp(def->name, ROOMS_DEFAULT)) r->cfg.room_idle_s = 0;
    r->hub_ok = hub_init(&r->hub) == 0;
    r->queue_ok = r->hub_ok && cmd_queue_init(&r->queue, dd->queue_cap, dd->queue_reserve) == 0;
    if (!r->queue_ok) {
        free_room(r);
        snprintf(err, errlen, "out of memory");
        return ROOM_FAILED;
    }
    r->hub.wake = wake, r->hub.wake_arg = wake_arg;
    r->hub.route_relay_replies = dd->route_relay_replies; /* before any reply */
    char why[256] = "";
    if (dd->simulate && !(r->sim = sim_thread_create(&r->cfg, dd->st, d->pool, &r->hub, &r->queue, why, sizeof why))) {
        free_room(r);
        snprintf(err, errlen, "room '%s': %s", def->name, why);
        return ROOM_FAILED;
    }
    r->simulated = r->sim != NULL;
    *out = r;
    return ROOM_OK;
}

/* Core-milliseconds of each tick the listed awake rooms take: each its sim
 * thread's mean CPU time a step (its work, not the waits of a busy machine)
 * times the threads it steps on (a pooled step holds every pool thread), or
 * what it was admitted with if more (a room admitted a moment ago has no
 * mean yet). */
static double cost_ms(room *o) {
    sim_stats st;
    hub_get_stats(&o->hub, &st);
    if (st.asleep || atomic_load(&o->evicted)) return 0; /* it takes no CPU until it wakes */
    const double core_ms = st.step_cpu_ms_mean * (st.step_threads > 1 ? st.step_threads : 1);
    return core_ms > o->admitted_ms ? core_ms : o->admitted_ms;
}

static double rooms_used_ms(rooms *d) {
    double used = 0;
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->count; i++) {
        room *o = d->room[i];
        if (!o->closed && o->simulated) used += cost_ms(o);
    }
    pthread_mutex_unlock(&d->mu);
    return used;
}

double room_cost_ms(room *r) {
    return r && r->simulated ? cost_ms(r) : 0;
}

/* Admission (docs/rooms.md): a room other than the default is let in only
 * if a tick of its first world, on one thread, fits what the listed rooms
 * leave of --step-budget of the tick period on each of the pool's threads
 * (--threads: the cores the rooms may use), all rooms together; one that does not
 * fit is loaded again with as many particles as fit (about linearly), or,
 * below ROOM_MIN_PARTICLES, refused with how full the server is.  Measured
 * here, before its sim thread starts (the opener's thread). */
static room_status admit(rooms *d, room *r, char *err, size_t errlen) {
    const srv_config *cfg = d->def.cfg;
    if (!r->sim || cfg->step_budget <= 0 || !strcmp(r->name, ROOMS_DEFAULT) || r->restored) return ROOM_OK;
    const int cores = d->pool ? fs_pool_threads(d->pool) : 1;
    const double period = 1e3 / cfg->tick_hz, budget = cfg->step_budget * period * cores,
                 left = budget - rooms_used_ms(d);
    int n;
    double ms = sim_thread_measure(r->sim, &n);
    if (ms > left) {
        int fit = left > 0 ? (int)((double)n * left / ms) : 0;
        if (fit < ROOM_MIN_PARTICLES) {
            snprintf(err, errlen,
                     "the server is full: its rooms take %.1f of the %.1f core-ms of each tick they may (--step-budget "
                     "%.0f%% of %.1f ms on %d thread%s), and a tick of room '%s' with %d particles takes %.1f ms",
                     budget - left, budget, 100 * cfg->step_budget, period, cores, cores == 1 ? "" : "s", r->name, n,
                     ms);
            return ROOM_NO_ROOM;
        }
        if (sim_thread_resize(r->sim, fit, err, errlen)) return ROOM_FAILED;
        log_info("rooms: '%s': a tick of %d particles took %.1f ms, %.1f ms are left: sized to %d", r->name, n, ms,
                 left, fit);
        ms = ms * (double)fit / (double)n;
    }
    r->admitted_ms = ms;
    return ROOM_OK;
}

room_status room_open(rooms *d, const room_def *def, room **out, char *err, size_t errlen) {
    char scratch[8];
    if (!err) err = scratch, errlen = sizeof scratch;
    *out = NULL;
    err[0] = 0;
    if (!def->name || !room_name_ok(def->name, strlen(def->name), err, errlen)) {
        if (!def->name) snprintf(err, errlen, "%s (none given)", ROOM_NAME_RULE);
        return ROOM_BAD_NAME;
    }
    if (def->public_role < ROLE_VIEWER || def->public_role > ROLE_OWNER) {
        snprintf(err, errlen, "a room's public role is viewer, player, editor or owner");
        return ROOM_BAD_NAME;
    }
    pthread_mutex_lock(&d->mu);
    room_status st = can_list(d, def->name, err, errlen); /* refused before its world is made */
    hub_wake_fn *wake = d->wake;
    void *wake_arg = d->wake_arg;
    pthread_mutex_unlock(&d->mu);
    if (st != ROOM_OK) return st;
    room *r;
    if ((st = make_room(d, def, wake, wake_arg, &r, err, errlen)) != ROOM_OK) return st;
    if ((st = admit(d, r, err, errlen)) != ROOM_OK) {
        free_room(r);
        return st;
    }
    if (r->sim && (def->snapshot || def->epoch)) {
        char why[256];
        const msg_buf *snap = def->snapshot;
        if (sim_thread_restore(r->sim, snap ? snap->data : NULL, snap ? snap->len : 0, def->epoch, why, sizeof why))
            log_warn("rooms: '%s': its snapshot does not restore (%s): it starts from its scene", def->name, why);
        else if (snap)
            log_info("rooms: '%s' restored from a snapshot of %zu bytes", def->name, snap->len);
    }
    pthread_mutex_lock(&d->mu);
    st = can_list(d, def->name, err, errlen); /* again: another may have taken the name meanwhile */
    if (st == ROOM_OK) {
        r->hub.wake = d->wake, r->hub.wake_arg = d->wake_arg;
        atomic_store(&r->refs, 2); /* the directory's and the caller's */
        d->room[d->count++] = r;
    }
    pthread_mutex_unlock(&d->mu);
    if (st != ROOM_OK) {
        free_room(r);
        return st;
    }
    if (d->def.simulate) keep_settings(r);
    *out = r;
    return ROOM_OK;
}

room *room_find(rooms *d, const char *name) {
    if (!name) return NULL;
    pthread_mutex_lock(&d->mu);
    room *r = listed(d, name);
    if (r) atomic_fetch_add(&r->refs, 1);
    pthread_mutex_unlock(&d->mu);
    return r;
}

room_status room_close(rooms *d, const char *name) {
    if (!name) return ROOM_NOT_FOUND;
    pthread_mutex_lock(&d->mu);
    room *r = listed(d, name);
    if (r) {
        r->closed = true;
        r->discard = true; /* read by the reaper, which takes mu first */
        atomic_fetch_sub(&r->refs, 1);
    }
    pthread_mutex_unlock(&d->mu);
    return r ? ROOM_OK : ROOM_NOT_FOUND;
}

int rooms_reap(rooms *d) {
    pthread_mutex_lock(&d->reaper);
    room *gone[64];
    int n = 0, total = 0;
    do { /* in batches of 64, each taken off the list under mu and freed outside it */
        n = 0;
        pthread_mutex_lock(&d->mu);
        int kept = 0;
        for (int i = 0; i < d->count; i++) {
            room *r = d->room[i];
            /* a closed room gains no reference (no lookup finds it), so none left is final */
            if (r->closed && n < 64 && atomic_load(&r->refs) == 0)
                gone[n++] = r;
            else
                d->room[kept++] = r;
        }
        d->count = kept;
        pthread_mutex_unlock(&d->mu);
        for (int i = 0; i < n; i++) free_room(gone[i]);
        total += n;
    } while (n == 64);
    pthread_mutex_unlock(&d->reaper);
    if (total) alloc_policy_give_back(); /* deleted rooms' worlds */
    return total;
}

void room_ref(room *r) {
    atomic_fetch_add(&r->refs, 1);
}

void room_unref(room *r) {
    if (r && atomic_fetch_sub(&r->refs, 1) <= 0) log_error("rooms: '%s' released once too often", r->name);
}

int room_start(room *r) {
    return r->sim ? sim_thread_start(r->sim) : 0;
}

const char *room_name(const room *r) {
    return r->name;
}

const char *room_folder(const room *r) {
    return r->folder;
}

hub *room_hub(room *r) {
    return &r->hub;
}

cmd_queue *room_queue(room *r) {
    return &r->queue;
}

role room_public_role(const room *r) {
    return (role)atomic_load(&((room *)r)->public_role);
}

unsigned room_key_generation(const room *r) {
    return atomic_load(&((room *)r)->key_gen);
}

unsigned room_rotate_key(room *r) {
    unsigned g = atomic_fetch_add(&r->key_gen, 1) + 1;
    keep_settings(r);
    return g;
}

void room_set_mirror_role(room *r, role pr) {
    if (pr >= ROLE_VIEWER && pr < ROLE_COUNT) atomic_store(&r->public_role, (int)pr);
}

bool room_listed(rooms *d, const room *r) {
    pthread_mutex_lock(&d->mu);
    bool on = !r->closed;
    pthread_mutex_unlock(&d->mu);
    return on;
}

int room_set_public_role(room *r, role pr) {
    if (pr < ROLE_VIEWER || pr > ROLE_OWNER) return -1;
    atomic_store(&r->public_role, (int)pr);
    keep_settings(r);
    return 0;
}

void rooms_get_load(rooms *d, rooms_load *out) {
    const srv_config *cfg = d->def.cfg;
    const int cores = d->pool ? fs_pool_threads(d->pool) : 1;
    memset(out, 0, sizeof *out);
    out->budget_ms = cfg->step_budget * (1e3 / cfg->tick_hz) * cores;
    out->used_ms = rooms_used_ms(d);
    out->cap_rooms = d->def.max_rooms;
    pthread_mutex_lock(&d->mu);
    for (int i = 0; i < d->count; i++) {
        room *o = d->room[i];
        if (o->closed) continue;
        frame_wants w;
        hub_get_frame_wants(&o->hub, &w);
        out->rooms++;
        out->clients += w.clients;
    }
    pthread_mutex_unlock(&d->mu);
}

int rooms_list(rooms *d, room_entry *out, int cap) {
    pthread_mutex_lock(&d->mu);
    int n = 0;
    for (int i = 0; i < d->count; i++) {
        const room *r = d->room[i];
        if (r->closed) continue;
        if (n < cap) {
            room_entry *e = &out[n];
            memcpy(e->name, r->name, sizeof e->name);
            e->public_role = (role)atomic_load(&((room *)r)->public_role);
            e->simulated = r->simulated;
            e->evicted = atomic_load(&((room *)r)->evicted);
            e->refs = atomic_load(&((room *)r)->refs);
        }
        n++;
    }
    pthread_mutex_unlock(&d->mu);
    return n;
}

int rooms_restore(rooms *d) {
    const srv_config *cfg = d->def.cfg;
    if (!d->def.simulate || !cfg->data_dir[0]) return 0;
    char top[sizeof cfg->data_dir + 8];
    snprintf(top, sizeof top, "%s/rooms", cfg->data_dir);
    DIR *dir = opendir(top);
    if (!dir) return 0;
    int opened = 0;
    struct dirent *e;
    while ((e = readdir(dir))) {
        char why[256];
        size_t nl = strlen(e->d_name);
        if (e->d_name[0] == '.' || !room_name_ok(e->d_name, nl, why, sizeof why) || !strcmp(e->d_name, ROOMS_DEFAULT))
            continue;
        char path[sizeof top + ROOM_NAME_CAP + 16], text[ROOM_DOC_MAX + 1];
        snprintf(path, sizeof path, "%s/%.31s/room.json", top, e->d_name); /* a room name: at most 31 */
        FILE *f = fopen(path, "r");
        size_t len = f ? fread(text, 1, sizeof text, f) : 0;
        if (f) fclose(f);
        room_doc doc;
        if (!f || room_doc_read(text, len, &doc, why, sizeof why)) {
            log_warn("rooms: %s left out: %s", path, f ? why : strerror(errno));
            continue;
        }
        room_def def = room_default_def();
        def.name = e->d_name;
        def.public_role = doc.public_role;
        def.key_gen = doc.key_gen;
        def.restore = true;
        room *r;
        if (room_open(d, &def, &r, why, sizeof why) != ROOM_OK || room_start(r)) {
            log_warn("rooms: '%s' not restored: %s", e->d_name, why);
            if (r) room_close(d, e->d_name), room_unref(r);
            continue;
        }
        room_unref(r);
        opened++;
    }
    closedir(dir);
    if (opened) log_info("rooms: %d room%s restored from %s", opened, opened == 1 ? "" : "s", top);
    return opened;
}

/* An evicted room someone wants again: a viewer, a command queued, a
 * request since it was let go of. */
static bool wanted(room *r) {
    frame_wants w;
    hub_get_frame_wants(&r->hub, &w);
    return w.clients > 0 || cmd_queue_count(&r->queue) > 0 || hub_touched(&r->hub) > r->evicted_ns;
}

int rooms_tend(rooms *d) {
    pthread_mutex_lock(&d->reaper);
    pthread_mutex_lock(&d->mu);
    int n = 0, k = d->stopped ? 0 : d->count, out = 0;
    bool trimmed = false;
    room **list = k ? malloc((size_t)k * sizeof *list) : NULL;
    for (int i = 0; list && i < k; i++)
        if (!d->room[i]->closed && d->room[i]->simulated) list[n++] = d->room[i];
    pthread_mutex_unlock(&d->mu); /* the rooms stay: only the reaper frees, and it waits for reaper */
    for (int i = 0; i < n; i++) {
        room *r = list[i];
        if (r->sim && sim_thread_evicted(r->sim)) { /* it saved and ended: let its world go */
            sim_thread_destroy(r->sim);
            r->sim = NULL;
            r->evicted_ns = clock_now_ns();
            atomic_store(&r->evicted, true);
            log_info("rooms: '%s' evicted: its world is freed until someone opens it", r->name);
            trimmed = true;
        } else if (!r->sim && atomic_load(&r->evicted) && wanted(r)) {
            char why[256] = "";
            r->sim = sim_thread_create(&r->cfg, d->def.st, d->pool, &r->hub, &r->queue, why, sizeof why);
            if (r->sim && !sim_thread_start(r->sim)) {
                atomic_store(&r->evicted, false);
                log_info("rooms: '%s' restored from %s", r->name, r->folder);
            } else {
                log_error("rooms: '%s' cannot be restored: %s", r->name, r->sim ? "its thread did not start" : why);
                sim_thread_destroy(r->sim);
                r->sim = NULL;
                r->evicted_ns = clock_now_ns(); /* tried again when wanted again */
            }
        }
        out += atomic_load(&r->evicted);
    }
    free(list);
    pthread_mutex_unlock(&d->reaper);
    if (trimmed) alloc_policy_give_back(); /* the worlds' memory, freed by threads now ended */
    return out;
}
