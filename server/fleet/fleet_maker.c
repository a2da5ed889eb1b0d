/* fleet_maker.c - the thread that makes a fleet's rooms (see fleet_maker.h):
 * a ring of asks, a ring of answers, one mutex and one condition variable. */
#include "fleet_maker.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "thread_name.h"

/* Threads: everything below mu is under it; d is fixed. */
struct fleet_maker {
    rooms *d;
    int nice;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    fleet_make job[FLEET_MAKER_JOBS];
    int njobs;
    int pending; /* asked and not yet taken back (bounds both rings) */
    fleet_made done[FLEET_MAKER_JOBS];
    int ndone;
};

static void make_one(fleet_maker *m, const fleet_make *j, fleet_made *out) {
    memset(out, 0, sizeof *out);
    memcpy(out->name, j->name, sizeof out->name);
    out->claim = j->claim;
    room_def def = room_default_def();
    def.name = j->name;
    def.scene = j->rec.scene[0] ? j->rec.scene : NULL;
    def.particles = j->rec.particles;
    def.public_role = j->rec.public_role;
    def.key_gen = j->rec.key_gen;
    def.restore = j->claim > 0;
    def.snapshot = j->snap;
    def.epoch = (uint32_t)(((j->claim ? j->claim : 1) & 0xffffu) << 16);
    out->status = room_open(m->d, &def, &out->room, out->err, sizeof out->err);
    if (out->status != ROOM_OK) return;
    hub_set_fence(room_hub(out->room), 1); /* nothing is stepped before the claim */
    if (room_start(out->room)) {
        snprintf(out->err, sizeof out->err, "room '%s': cannot start its sim thread", j->name);
        room_close(m->d, j->name);
        room_unref(out->room);
        out->room = NULL;
        out->status = ROOM_FAILED;
    }
}

static void *maker_main(void *arg) {
    fleet_maker *m = arg;
    thread_name_set("fleet-make", NULL);
    if (m->nice && setpriority(PRIO_PROCESS, 0, m->nice)) log_info("fleet: cannot lower the maker's priority");
    pthread_mutex_lock(&m->mu);
    while (!m->stop) {
        if (!m->njobs) {
            pthread_cond_wait(&m->cv, &m->mu);
            continue;
        }
        fleet_make j = m->job[0];
        memmove(&m->job[0], &m->job[1], (size_t)(m->njobs - 1) * sizeof j);
        m->njobs--;
        pthread_mutex_unlock(&m->mu);
        fleet_made res;
        make_one(m, &j, &res);
        msg_buf_unref(j.snap);
        pthread_mutex_lock(&m->mu);
        m->done[m->ndone++] = res; /* room: pending bounds it */
    }
    pthread_mutex_unlock(&m->mu);
    return NULL;
}

fleet_maker *fleet_maker_create(rooms *d, int nice, char *err, size_t errlen) {
    fleet_maker *m = calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    m->d = d, m->nice = nice;
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->cv, NULL);
    int e = pthread_create(&m->thread, NULL, maker_main, m);
    if (e) {
        snprintf(err, errlen, "cannot start the fleet's maker thread: %s", strerror(e));
        pthread_cond_destroy(&m->cv);
        pthread_mutex_destroy(&m->mu);
        free(m);
        return NULL;
    }
    return m;
}

void fleet_maker_destroy(fleet_maker *m) {
    if (!m) return;
    pthread_mutex_lock(&m->mu);
    m->stop = true;
    pthread_cond_signal(&m->cv);
    pthread_mutex_unlock(&m->mu);
    pthread_join(m->thread, NULL);
    for (int i = 0; i < m->njobs; i++) msg_buf_unref(m->job[i].snap);
    for (int i = 0; i < m->ndone; i++)
        if (m->done[i].room) {
            room_close(m->d, m->done[i].name);
            room_unref(m->done[i].room);
        }
    pthread_cond_destroy(&m->cv);
    pthread_mutex_destroy(&m->mu);
    free(m);
}

bool fleet_maker_ask(fleet_maker *m, const fleet_make *job) {
    pthread_mutex_lock(&m->mu);
    bool ok = m->pending < FLEET_MAKER_JOBS;
    if (ok) {
        m->job[m->njobs++] = *job;
        m->pending++;
        pthread_cond_signal(&m->cv);
    }
    pthread_mutex_unlock(&m->mu);
    return ok;
}

bool fleet_maker_full(fleet_maker *m) {
    pthread_mutex_lock(&m->mu);
    bool full = m->pending >= FLEET_MAKER_JOBS;
    pthread_mutex_unlock(&m->mu);
    return full;
}

int fleet_maker_take(fleet_maker *m, fleet_made *out, int cap) {
    pthread_mutex_lock(&m->mu);
    int n = m->ndone < cap ? m->ndone : cap;
    memcpy(out, m->done, (size_t)n * sizeof *out);
    memmove(&m->done[0], &m->done[n], (size_t)(m->ndone - n) * sizeof *out);
    m->ndone -= n;
    m->pending -= n;
    pthread_mutex_unlock(&m->mu);
    return n;
}
