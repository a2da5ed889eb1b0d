/* job_thread.c - a thread that runs jobs one at a time (see job_thread.h). */
#include "job_thread.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "log.h"
#include "thread_name.h"

/* Threads: everything below mu is under it; def is fixed. */
struct job_thread {
    job_thread_def def;
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    bool stop;
    unsigned char *jobs;         /* njobs of them, oldest first */
    unsigned char *answers;      /* nanswers of them, oldest first */
    unsigned char *job, *answer; /* the thread's own: the job it runs, its answer */
    int njobs, nanswers;
    int pending; /* asked and not yet taken back (bounds both rings) */
};

static void free_all(job_thread *t) {
    if (!t) return;
    free(t->jobs);
    free(t->answers);
    free(t->job);
    free(t->answer);
    free(t);
}

static void *job_main(void *arg) {
    job_thread *t = arg;
    const size_t js = t->def.job_size, as = t->def.answer_size;
    thread_name_set(t->def.name, NULL);
    if (t->def.nice && setpriority(PRIO_PROCESS, 0, t->def.nice))
        log_info("%s: cannot lower its thread's priority", t->def.name);
    unsigned char *job = t->job, *answer = t->answer;
    pthread_mutex_lock(&t->mu);
    while (!t->stop) {
        if (!t->njobs) {
            pthread_cond_wait(&t->cv, &t->mu);
            continue;
        }
        memcpy(job, t->jobs, js);
        memmove(t->jobs, t->jobs + js, (size_t)(t->njobs - 1) * js);
        t->njobs--;
        pthread_mutex_unlock(&t->mu);
        memset(answer, 0, as);
        t->def.run(t->def.ctx, job, answer);
        pthread_mutex_lock(&t->mu);
        memcpy(t->answers + (size_t)t->nanswers++ * as, answer, as); /* room: pending bounds it */
    }
    pthread_mutex_unlock(&t->mu);
    return NULL;
}

job_thread *job_thread_create(const job_thread_def *def, char *err, size_t errlen) {
    job_thread *t = calloc(1, sizeof *t);
    if (t) {
        t->def = *def;
        t->jobs = calloc((size_t)def->cap, def->job_size);
        t->answers = calloc((size_t)def->cap, def->answer_size);
        t->job = malloc(def->job_size);
        t->answer = malloc(def->answer_size);
    }
    if (!t || !t->jobs || !t->answers || !t->job || !t->answer) {
        snprintf(err, errlen, "out of memory");
        free_all(t);
        return NULL;
    }
    pthread_mutex_init(&t->mu, NULL);
    pthread_cond_init(&t->cv, NULL);
    int e = pthread_create(&t->thread, NULL, job_main, t);
    if (e) {
        snprintf(err, errlen, "cannot start the %s thread: %s", def->name, strerror(e));
        pthread_cond_destroy(&t->cv);
        pthread_mutex_destroy(&t->mu);
        free_all(t);
        return NULL;
    }
    return t;
}

void job_thread_destroy(job_thread *t) {
    if (!t) return;
    pthread_mutex_lock(&t->mu);
    t->stop = true;
    pthread_cond_signal(&t->cv);
    pthread_mutex_unlock(&t->mu);
    pthread_join(t->thread, NULL);
    for (int i = 0; i < t->njobs && t->def.drop_job; i++)
        t->def.drop_job(t->def.ctx, t->jobs + (size_t)i * t->def.job_size);
    for (int i = 0; i < t->nanswers && t->def.drop_answer; i++)
        t->def.drop_answer(t->def.ctx, t->answers + (size_t)i * t->def.answer_size);
    pthread_cond_destroy(&t->cv);
    pthread_mutex_destroy(&t->mu);
    free_all(t);
}

bool job_thread_ask(job_thread *t, const void *job) {
    pthread_mutex_lock(&t->mu);
    const bool ok = t->pending < t->def.cap;
    if (ok) {
        memcpy(t->jobs + (size_t)t->njobs++ * t->def.job_size, job, t->def.job_size);
        t->pending++;
        pthread_cond_signal(&t->cv);
    }
    pthread_mutex_unlock(&t->mu);
    return ok;
}

bool job_thread_full(job_thread *t) {
    pthread_mutex_lock(&t->mu);
    const bool full = t->pending >= t->def.cap;
    pthread_mutex_unlock(&t->mu);
    return full;
}

int job_thread_take(job_thread *t, void *out, int max) {
    const size_t as = t->def.answer_size;
    pthread_mutex_lock(&t->mu);
    const int n = t->nanswers < max ? t->nanswers : max;
    memcpy(out, t->answers, (size_t)n * as);
    memmove(t->answers, t->answers + (size_t)n * as, (size_t)(t->nanswers - n) * as);
    t->nanswers -= n;
    t->pending -= n;
    pthread_mutex_unlock(&t->mu);
    return n;
}
