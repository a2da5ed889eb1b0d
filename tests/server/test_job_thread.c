/* test_job_thread.c - unit tests of the job thread (server/base/
 * job_thread.c) that the fleet's maker and saver run on: jobs run in the
 * order asked and their answers come back in it; at most cap are asked and
 * not taken back; destroying it drops the jobs not run and the answers not
 * taken, and leaks nothing (AddressSanitizer); under ThreadSanitizer, no
 * race between the asker and the thread.  Nothing here times anything: a
 * job blocks until the test lets it go. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "job_thread.h"
#include "testlib.h"

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;    /* jobs that may finish */
    int closing; /* every job may finish */
    int started; /* jobs begun */
    int dropped_jobs, dropped_answers;
} gate;

typedef struct job {
    int n;
    char tag[8];
} job;

typedef struct answer {
    int n, square;
} answer;

static void run(void *ctx, const void *j, void *a) {
    gate *g = ctx;
    const job *in = j;
    answer *out = a;
    pthread_mutex_lock(&g->mu);
    g->started++;
    pthread_cond_broadcast(&g->cv);
    while (g->open <= 0 && !g->closing) pthread_cond_wait(&g->cv, &g->mu);
    g->open--;
    pthread_mutex_unlock(&g->mu);
    out->n = in->n;
    out->square = in->n * in->n;
}

static void drop_job(void *ctx, void *j) {
    (void)j;
    ((gate *)ctx)->dropped_jobs++;
}

static void drop_answer(void *ctx, void *a) {
    (void)a;
    ((gate *)ctx)->dropped_answers++;
}

static void let_go(gate *g, int n) {
    pthread_mutex_lock(&g->mu);
    g->open += n;
    pthread_cond_broadcast(&g->cv);
    pthread_mutex_unlock(&g->mu);
}

static void wait_started(gate *g, int n) {
    pthread_mutex_lock(&g->mu);
    while (g->started < n) pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
}

/* Takes answers until n are in (the thread runs them meanwhile). */
static int take_all(job_thread *t, answer *out, int n) {
    int got = 0;
    while (got < n) got += job_thread_take(t, out + got, n - got);
    return got;
}

static job_thread *make(gate *g, int cap) {
    memset(g, 0, sizeof *g);
    pthread_mutex_init(&g->mu, NULL);
    pthread_cond_init(&g->cv, NULL);
    const job_thread_def def = {.name = "test-jobs",
                                .job_size = sizeof(job),
                                .answer_size = sizeof(answer),
                                .cap = cap,
                                .ctx = g,
                                .run = run,
                                .drop_job = drop_job,
                                .drop_answer = drop_answer};
    char err[120] = "";
    job_thread *t = job_thread_create(&def, err, sizeof err);
    CHECK(t != NULL, "created: %s", err);
    return t;
}

static void done(gate *g) {
    pthread_cond_destroy(&g->cv);
    pthread_mutex_destroy(&g->mu);
}

static void test_order_and_bound(void) {
    gate g;
    job_thread *t = make(&g, 4);
    if (!t) return;
    for (int i = 1; i <= 4; i++) CHECK(job_thread_ask(t, &(job){.n = i}), "job %d asked", i);
    CHECK(job_thread_full(t) && !job_thread_ask(t, &(job){.n = 5}), "a fifth refused: 4 asked, none taken back");
    let_go(&g, 4);
    answer a[4];
    CHECK(take_all(t, a, 4) == 4, "four answers");
    for (int i = 0; i < 4; i++) CHECK(a[i].n == i + 1 && a[i].square == (i + 1) * (i + 1), "answer %d in order", i);
    CHECK(!job_thread_full(t) && job_thread_ask(t, &(job){.n = 6}), "room again once taken back");
    let_go(&g, 1);
    CHECK(take_all(t, a, 1) == 1 && a[0].square == 36, "and it runs");
    job_thread_destroy(t);
    CHECK(g.dropped_jobs == 0 && g.dropped_answers == 0, "nothing left to drop");
    done(&g);
}

static void test_destroy_drops(void) {
    gate g;
    job_thread *t = make(&g, 8);
    if (!t) return;
    for (int i = 1; i <= 5; i++) job_thread_ask(t, &(job){.n = i});
    let_go(&g, 2);
    wait_started(&g, 3); /* two answered, the third under way (held at the gate) */
    pthread_mutex_lock(&g.mu);
    g.closing = 1; /* it finishes (and maybe the next starts before the thread sees the stop) */
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    job_thread_destroy(t);
    CHECK(g.dropped_answers >= 3 && g.dropped_answers + g.dropped_jobs == 5,
          "the job under way finished; every job dropped once, run or not: %d answers, %d jobs", g.dropped_answers,
          g.dropped_jobs);
    done(&g);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        {"order_and_bound", test_order_and_bound},
        {"destroy_drops", test_destroy_drops},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
