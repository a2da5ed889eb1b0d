/* fleet.c - a fleet's connection, its bucket and the fleet thread (see
 * fleet.h). */
#include "fleet.h"
#include "fleet_link.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "bus_options.h"
#include "clock.h"
#include "log.h"
#include "nice_call.h"
#include "thread_name.h"

#define SETUP_RETRY_NS 1000000000ull
#define RECORD_EVERY_NS 1000000000ull
#define DOC_EVERY_NS 250000000ull
#define KV_WAIT_MS 1000                 /* a bucket operation waits at most this long for the broker */
#define STOP_SAVE_WAIT_NS 3000000000ull /* at stop, the rooms' last saves are waited for this long */

static void on_disconnected(natsConnection *nc, void *closure) {
    (void)nc;
    fleet *f = closure;
    atomic_store(&f->connected, false);
}

static void on_connected(natsConnection *nc, void *closure) {
    (void)nc;
    fleet *f = closure;
    atomic_store(&f->connected, true);
}

/* The last callback of the connection (the client's callbacks run in order
 * on its own thread, after natsConnection_Close returns): f may be freed
 * once it has run. */
static void on_closed(natsConnection *nc, void *closure) {
    (void)nc;
    fleet *f = closure;
    atomic_store(&f->closed, true);
}

static int make_options(fleet *f, char *err, size_t errlen) {
    if (bus_options_make(&f->opts, f->cfg, on_connected, on_disconnected, f, err, errlen)) return -1;
    natsStatus s = natsOptions_SetName(f->opts, "fluid-fleet");
    if (s == NATS_OK) s = natsOptions_SetClosedCB(f->opts, on_closed, f);
    if (s != NATS_OK) {
        snprintf(err, errlen, "--nats %s: %s", f->cfg->nats, natsStatus_GetText(s));
        return -1;
    }
    return 0;
}

/* A watch begun at now: stale no sooner than a silence from now on
 * (fleet_dir_stale). */
static void watch_begun(fleet *f, uint64_t now) {
    f->watch_begun_ns = f->heard_ns = now;
    f->unseen_ns = 0;
}

/* The JetStream context, the bucket (made when missing: history 1, a value at
 * most FLEET_DOC_MAX bytes) and the watch on every key.  0, or -1 (logged;
 * tried again a second later). */
static int setup(fleet *f) {
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = KV_WAIT_MS;
    natsStatus s = f->js ? NATS_OK : natsConnection_JetStream(&f->js, f->nc, &jo);
    if (s == NATS_OK && !f->kv) {
        s = js_KeyValue(&f->kv, f->js, f->bucket);
        if (s == NATS_NOT_FOUND && !f->relay) { /* a relay waits for a node to make it */
            kvConfig kc;
            kvConfig_Init(&kc);
            kc.Bucket = f->bucket;
            kc.History = 1;
            kc.MaxValueSize = FLEET_DOC_MAX;
            kc.Replicas = f->cfg->fleet_replicas;
            s = js_CreateKeyValue(&f->kv, f->js, &kc);
        }
    }
    if (s == NATS_OK && !f->snap_ok && !f->relay) {
        if (fleet_snap_setup(f)) return -1;
        f->snap_ok = true;
    }
    /* a node that starts is not draining: it was drained to be updated */
    if (s == NATS_OK && !f->drain_cleared && !f->relay) {
        char key[32];
        snprintf(key, sizeof key, "drain.%u", (unsigned)f->id);
        if (kvStore_Delete(f->kv, key) == NATS_OK) f->drain_cleared = true;
    }
    if (s == NATS_OK && !f->relay && fleet_beat_setup(f)) return -1;
    if (s == NATS_OK && !f->watch) s = kvStore_WatchAll(&f->watch, f->kv, NULL);
    if (s == NATS_OK) watch_begun(f, clock_now_ns());
    if (s != NATS_OK) {
        const char *last = nats_GetLastError(NULL);
        log_once("fleet-setup",
                 "fleet: cannot open the bucket %s on %s: %s%s%s (is JetStream on? nats-server -js; "
                 "retrying every second; logged once)",
                 f->bucket, f->cfg->nats, natsStatus_GetText(s), last ? ": " : "", last ? last : "");
        return -1;
    }
    if (f->relay)
        log_info("fleet: relay of fleet '%s': bucket %s watched", f->cfg->fleet, f->bucket);
    else
        log_info("fleet: node %u of fleet '%s': bucket %s watched", (unsigned)f->id, f->cfg->fleet, f->bucket);
    return 0;
}

/* ---- A new watch when the one in use fell behind -------------------------------- */

/* A new watch of the bucket, made on the rewatcher's thread: making it asks
 * the cluster for a consumer, which may wait seconds while the cluster
 * recovers from a dead server, and the fleet thread goes on renewing and
 * beating meanwhile. */
typedef struct rewatch_job {
    kvStore *kv;
} rewatch_job;
typedef struct rewatch_made {
    kvWatcher *w; /* NULL: not made (status says why) */
    natsStatus status;
} rewatch_made;

static void make_watch(void *ctx, const void *job, void *answer) {
    (void)ctx;
    rewatch_made *m = answer;
    m->status = kvStore_WatchAll(&m->w, ((const rewatch_job *)job)->kv, NULL);
    if (m->status != NATS_OK) m->w = NULL;
}

static void drop_watch(void *ctx, void *answer) {
    (void)ctx;
    kvWatcher *w = ((rewatch_made *)answer)->w;
    if (!w) return;
    kvWatcher_Stop(w);
    kvWatcher_Destroy(w);
}

/* The watch in use stale (fleet_dir_stale): a new one asked for, the old
 * one read meanwhile (it may catch up); once made, it takes the old one's
 * place and gives every value again (the view takes them as they come:
 * a revision seen already moves nothing). */
static void rewatch_pass(fleet *f, uint64_t now) {
    rewatch_made m;
    if (f->rewatching && job_thread_take(f->rewatcher, &m, 1) == 1) {
        f->rewatching = false;
        if (!m.w) {
            log_warn("fleet: the directory's new watch was not made: %s; tried again", natsStatus_GetText(m.status));
            return;
        }
        kvWatcher_Stop(f->watch);
        kvWatcher_Destroy(f->watch);
        f->watch = m.w;
        watch_begun(f, now);
        log_info("fleet: the directory is watched anew");
        return;
    }
    if (f->rewatching || !fleet_dir_stale(f, now)) return;
    const rewatch_job job = {.kv = f->kv};
    if (!job_thread_ask(f->rewatcher, &job)) return;
    f->rewatching = true;
    f->st.rewatches++;
    f->stale_ns = f->stale_ns < 30000000000ull ? 2 * f->stale_ns : 60000000000ull;
    f->watch_begun_ns = now; /* not asked again before a new silence */
    log_warn("fleet: the directory's watch fell behind (%s): watching it anew",
             f->relay ? "no value for a while" : "this node's record not shown back after its write");
}

static void *fleet_main(void *arg) {
    fleet *f = arg;
    thread_name_set("fleet", NULL);
    while (!atomic_load(&f->stop)) {
        uint64_t now = clock_now_ns();
        if (!f->watch) {
            if (atomic_load(&f->connected) && now >= f->next_setup_ns && setup(f))
                f->next_setup_ns = now + SETUP_RETRY_NS;
            if (!f->watch) {
                struct timespec ts = {0, 50 * 1000000L};
                nanosleep(&ts, NULL);
                if (!f->relay) fleet_claims_pass(f, now); /* asks are answered (refused) while the bucket is not open */
                continue;
            }
        }
        fleet_dir_drain(f, 20); /* also the thread's pace: a pass at least every 20 ms */
        now = clock_now_ns();
        rewatch_pass(f, now);
        if (f->relay) { /* it reads the directory only */
            fleet_mirror_pass(f);
            if (now - f->last_doc_ns >= DOC_EVERY_NS) {
                fleet_dir_publish(f, now);
                f->last_doc_ns = now;
            }
            continue;
        }
        f->kv_probed = false;
        fleet_beat_pass(f, now);
        fleet_claims_pass(f, now);
        fleet_beat_pass(f, clock_now_ns()); /* also between the bucket's writes: each may wait a second */
        fleet_drain_asks(f);
        fleet_drain_pass(f, clock_now_ns());
        fleet_save_pass(f, clock_now_ns());
        fleet_takeover_pass(f, clock_now_ns());
        if (now - f->last_record_ns >= RECORD_EVERY_NS) {
            fleet_put_record(f);
            f->last_record_ns = now;
        }
        if (now - f->last_doc_ns >= DOC_EVERY_NS) {
            fleet_dir_publish(f, now);
            f->last_doc_ns = now;
        }
    }
    return NULL;
}

/* The fleet's connection; a sim node's made on a thread at the edge's
 * priority (nice_call.h): the threads the NATS client starts for it inherit
 * it, and leave the simulation's tick first. */
typedef struct fleet_connect {
    fleet *f;
    natsStatus s;
} fleet_connect;

static void connect_lowered(void *arg) {
    fleet_connect *c = arg;
    c->s = natsConnection_Connect(&c->f->nc, c->f->opts);
}

fleet *fleet_create(const srv_config *cfg, rooms *dir, hub *home, const char *url, char *err, size_t errlen) {
    fleet *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    f->cfg = cfg, f->dir = dir, f->home = home;
    f->id = (uint32_t)cfg->node_id;
    f->relay = cfg->relay != 0;
    snprintf(f->url, sizeof f->url, "%s", url);
    snprintf(f->bucket, sizeof f->bucket, "fluid_%s", cfg->fleet);
    f->rule = lease_default_rule();
    f->stale_ns = FLEET_WATCH_STALE_NS;
    f->st.enabled = true;
    pthread_mutex_init(&f->mu, NULL);
    pthread_cond_init(&f->cv, NULL);
    const job_thread_def rw = {.name = "fleet-watch",
                               .nice = f->relay ? 0 : cfg->net_nice,
                               .job_size = sizeof(rewatch_job),
                               .answer_size = sizeof(rewatch_made),
                               .cap = 1,
                               .run = make_watch,
                               .drop_answer = drop_watch};
    if (!(f->rewatcher = job_thread_create(&rw, err, errlen)) ||
        (!f->relay && !(f->maker = fleet_maker_create(dir, cfg->net_nice, err, errlen))) ||
        (!f->relay && !(f->saver = fleet_saver_create(f, cfg->net_nice, err, errlen))) ||
        make_options(f, err, errlen)) {
        fleet_destroy(f);
        return NULL;
    }
    fleet_connect c = {.f = f, .s = NATS_OK};
    nice_call(f->relay ? 0 : cfg->net_nice, connect_lowered, &c);
    natsStatus s = c.s;
    if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
        snprintf(err, errlen, "--nats %s: %s", cfg->nats, natsStatus_GetText(s));
        fleet_destroy(f);
        return NULL;
    }
    if (s == NATS_OK) atomic_store(&f->connected, true);
    if (pthread_create(&f->thread, NULL, fleet_main, f)) {
        snprintf(err, errlen, "cannot start the fleet thread");
        fleet_destroy(f);
        return NULL;
    }
    f->started = true;
    if (f->relay)
        log_info("fleet: a relay of fleet '%s' on %s: it serves the fleet's rooms", cfg->fleet, cfg->nats);
    else
        log_info("fleet: node %u joins fleet '%s' on %s (lease %.1f s)", (unsigned)f->id, cfg->fleet, cfg->nats,
                 (double)f->rule.lease_ns / 1e9);
    return f;
}

void fleet_destroy(fleet *f) {
    if (!f) return;
    if (f->started) {
        atomic_store(&f->stop, true);
        pthread_join(f->thread, NULL);
        fleet_saver_destroy(f->saver); /* its save under way written; its answers not named: the last save is */
        f->saver = NULL;
        for (int i = 0; i < f->nroom; i++) f->room[i].saving = 0;
        if (!f->relay) fleet_move_all(f, STOP_SAVE_WAIT_NS); /* the fleet thread's data: its thread is joined */
    }
    pthread_mutex_lock(&f->mu); /* an asker still waiting is told */
    for (int i = 0; i < FLEET_ASKS; i++)
        if (f->ask[i].state == ASK_ASKED || f->ask[i].state == ASK_SENT) {
            f->ask[i].out.status = ROOM_FAILED;
            snprintf(f->ask[i].out.err, sizeof f->ask[i].out.err, "the server is stopping");
            f->ask[i].state = ASK_ANSWERED;
        }
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
    fleet_saver_destroy(f->saver);
    fleet_maker_destroy(f->maker);
    job_thread_destroy(f->rewatcher);    /* a new watch made and not taken: dropped */
    for (int i = 0; i < f->nroom; i++) { /* they stay listed: rooms_stop stops them */
        fleet_move_drop(&f->room[i]);
        room_unref(f->room[i].r);
    }
    fleet_beat_close(f);
    if (f->watch) {
        kvWatcher_Stop(f->watch);
        kvWatcher_Destroy(f->watch);
    }
    kvStore_Destroy(f->kv);
    jsCtx_Destroy(f->js);
    if (f->nc) {
        natsConnection_Close(f->nc);
        /* its disconnected and closed callbacks come after, on the client's
         * thread, and write into f: it is freed once they have run (at most
         * 2 s waited) */
        for (int i = 0; i < 400 && !atomic_load(&f->closed); i++) {
            struct timespec ts = {0, 5 * 1000000L};
            nanosleep(&ts, NULL);
        }
        natsConnection_Destroy(f->nc);
    }
    natsOptions_Destroy(f->opts);
    hub_set_fleet(f->home, &f->st, NULL);
    pthread_cond_destroy(&f->cv);
    pthread_mutex_destroy(&f->mu);
    free(f);
}

void fleet_place(void *ctx, const room_def *def, room_opened *out) {
    fleet *f = ctx;
    memset(out, 0, sizeof *out);
    pthread_mutex_lock(&f->mu);
    fleet_ask *a = NULL;
    for (int i = 0; i < FLEET_ASKS && !a; i++)
        if (f->ask[i].state == ASK_FREE) a = &f->ask[i];
    if (!a || atomic_load(&f->stop)) {
        pthread_mutex_unlock(&f->mu);
        out->status = ROOM_FULL;
        snprintf(out->err, sizeof out->err, "busy: %d rooms are being placed, try again", FLEET_ASKS);
        return;
    }
    memset(a, 0, sizeof *a);
    snprintf(a->name, sizeof a->name, "%s", def->name ? def->name : "");
    a->rec.public_role = def->public_role;
    a->rec.key_gen = def->key_gen;
    if (def->scene) snprintf(a->rec.scene, sizeof a->rec.scene, "%s", def->scene);
    a->rec.particles = def->particles;
    a->state = ASK_ASKED;
    while (a->state != ASK_ANSWERED) pthread_cond_wait(&f->cv, &f->mu); /* the fleet thread answers within 5 s */
    *out = a->out;
    a->state = ASK_FREE;
    pthread_mutex_unlock(&f->mu);
}
