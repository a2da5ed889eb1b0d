/* room_keeper.c - the thread that opens and reaps rooms (room_keeper.h):
 * a small ring of asks, a small ring of answers, one mutex and one
 * condition variable. */
#include "thread_name.h"
#include "room_keeper.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "log.h"

/* An ask, held by value: the definition's strings are copied. */
typedef struct keeper_job {
    uint64_t tag;
    char name[ROOM_NAME_CAP];
    char scene[64];
    int particles;
    role public_role;
} keeper_job;

/* Threads: everything below mu is under it; d and the wake are fixed. */
struct room_keeper {
    rooms *d;
    void (*wake)(void *);
    void *arg;
    int nice; /* its nice value: a new room is measured beside the running ones, which come first */
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop, poked;
    keeper_job job[ROOM_KEEPER_JOBS];
    int njobs;   /* asked, not yet worked on */
    int pending; /* asked and not yet taken back (bounds both rings) */
    room_opened done[ROOM_KEEPER_JOBS];
    int ndone;
    room_place_fn *place; /* set before any ask: a fleet places rooms */
    void *place_ctx;
};

static void open_one(room_keeper *k, const keeper_job *j, room_opened *out) {
    memset(out, 0, sizeof *out);
    out->tag = j->tag;
    memcpy(out->name, j->name, sizeof out->name);
    room_def def = room_default_def();
    def.name = j->name;
    def.scene = j->scene[0] ? j->scene : NULL;
    def.particles = j->particles;
    def.public_role = j->public_role;
    if (k->place) {
        k->place(k->place_ctx, &def, out);
        out->tag = j->tag;
        memcpy(out->name, j->name, sizeof out->name);
        return;
    }
    out->status = room_open(k->d, &def, &out->room, out->err, sizeof out->err);
    if (out->status != ROOM_OK) return;
    if (room_start(out->room)) {
        snprintf(out->err, sizeof out->err, "room '%s': cannot start its sim thread", j->name);
        room_close(k->d, j->name);
        room_unref(out->room);
        out->room = NULL;
        out->status = ROOM_FAILED;
        return;
    }
    log_info("rooms: opened '%s'", j->name);
}

static void *keeper_main(void *arg) {
    room_keeper *k = arg;
    thread_name_set("keeper", NULL);
    if (k->nice && setpriority(PRIO_PROCESS, 0, k->nice)) log_info("rooms: cannot lower the keeper's priority");
    pthread_mutex_lock(&k->mu);
    while (!k->stop) {
        if (k->njobs) {
            keeper_job j = k->job[0];
            memmove(&k->job[0], &k->job[1], (size_t)(k->njobs - 1) * sizeof j);
            k->njobs--;
            pthread_mutex_unlock(&k->mu);
            room_opened res;
            open_one(k, &j, &res);
            pthread_mutex_lock(&k->mu);
            k->done[k->ndone++] = res; /* room: pending bounds it */
            pthread_mutex_unlock(&k->mu);
            k->wake(k->arg);
            pthread_mutex_lock(&k->mu);
            continue;
        }
        pthread_mutex_unlock(&k->mu);
        int freed = rooms_reap(k->d);
        if (freed) log_info("rooms: %d closed room%s freed", freed, freed == 1 ? "" : "s");
        int evicted = rooms_tend(k->d);
        pthread_mutex_lock(&k->mu);
        if (k->stop || k->njobs || k->poked) {
            k->poked = false;
            continue;
        }
        /* evicted rooms are watched for someone who wants them a tenth of a second at a time */
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        long step_ns = evicted ? 100000000L : 1000000000L;
        until.tv_nsec += step_ns;
        if (until.tv_nsec >= 1000000000L) until.tv_sec += 1, until.tv_nsec -= 1000000000L;
        pthread_cond_timedwait(&k->cv, &k->mu, &until);
    }
    pthread_mutex_unlock(&k->mu);
    return NULL;
}

room_keeper *room_keeper_create(rooms *d, void (*wake)(void *), void *arg, int nice, char *err, size_t errlen) {
    room_keeper *k = calloc(1, sizeof *k);
    if (!k) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    k->d = d, k->wake = wake, k->arg = arg, k->nice = nice;
    pthread_mutex_init(&k->mu, NULL);
    pthread_cond_init(&k->cv, NULL);
    int e = pthread_create(&k->thread, NULL, keeper_main, k);
    if (e) {
        snprintf(err, errlen, "cannot start the rooms' keeper thread: %s", strerror(e));
        pthread_cond_destroy(&k->cv);
        pthread_mutex_destroy(&k->mu);
        free(k);
        return NULL;
    }
    return k;
}

void room_keeper_destroy(room_keeper *k) {
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->stop = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
    pthread_join(k->thread, NULL);
    for (int i = 0; i < k->ndone; i++) room_unref(k->done[i].room);
    pthread_cond_destroy(&k->cv);
    pthread_mutex_destroy(&k->mu);
    free(k);
}

void room_keeper_set_placer(room_keeper *k, room_place_fn *place, void *ctx) {
    k->place = place;
    k->place_ctx = ctx;
}

bool room_keeper_open(room_keeper *k, const room_def *def, uint64_t tag) {
    keeper_job j;
    memset(&j, 0, sizeof j);
    j.tag = tag;
    snprintf(j.name, sizeof j.name, "%s", def->name ? def->name : "");
    if (def->name && strlen(def->name) >= sizeof j.name) j.name[0] = 0; /* refused by room_open's name rule */
    if (def->scene) snprintf(j.scene, sizeof j.scene, "%s", def->scene);
    j.particles = def->particles;
    j.public_role = def->public_role;
    pthread_mutex_lock(&k->mu);
    bool ok = k->pending < ROOM_KEEPER_JOBS;
    if (ok) {
        k->job[k->njobs++] = j;
        k->pending++;
        pthread_cond_signal(&k->cv);
    }
    pthread_mutex_unlock(&k->mu);
    return ok;
}

int room_keeper_take(room_keeper *k, room_opened *out, int cap) {
    pthread_mutex_lock(&k->mu);
    int n = k->ndone < cap ? k->ndone : cap;
    memcpy(out, k->done, (size_t)n * sizeof *out);
    memmove(&k->done[0], &k->done[n], (size_t)(k->ndone - n) * sizeof *out);
    k->ndone -= n;
    k->pending -= n;
    pthread_mutex_unlock(&k->mu);
    return n;
}

void room_keeper_poke(room_keeper *k) {
    if (!k) return;
    pthread_mutex_lock(&k->mu);
    k->poked = true;
    pthread_cond_signal(&k->cv);
    pthread_mutex_unlock(&k->mu);
}
