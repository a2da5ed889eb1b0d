/* pool.c - a small persistent thread pool that satisfies fs_parallel_for_fn.
 * Optional: the simulation core never creates threads itself; the caller
 * (tests, benchmark, server) creates a pool and injects it in fs_world_def.
 * The range [0, count) is split into one contiguous chunk per thread; the
 * calling thread runs chunk 0.  Touched by the thread that owns the world
 * (parallel_for) and by the pool's own workers. */
#include <pthread.h>
#include <stdlib.h>

#include "fluid_sim.h"

struct fs_pool {
    int threads;
    pthread_t *tid;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    uint64_t generation; /* bumped for each job */
    int remaining;       /* workers still running the current job */
    bool quit;
    /* the current job */
    fs_task_fn *fn;
    void *ctx;
    int count;
};

typedef struct worker_arg {
    fs_pool *p;
    int index;
} worker_arg;

static void chunk(int count, int threads, int k, int *b, int *e) {
    long long c = count;
    *b = (int)(c * k / threads);
    *e = (int)(c * (k + 1) / threads);
}

static void *worker_main(void *arg) {
    worker_arg wa = *(worker_arg *)arg;
    free(arg);
    fs_pool *p = wa.p;
    uint64_t seen = 0;
    for (;;) {
        pthread_mutex_lock(&p->mu);
        while (p->generation == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = p->generation;
        fs_task_fn *fn = p->fn;
        void *ctx = p->ctx;
        int count = p->count;
        pthread_mutex_unlock(&p->mu);
        int b, e;
        chunk(count, p->threads, wa.index, &b, &e);
        if (b < e) fn(b, e, wa.index, ctx);
        pthread_mutex_lock(&p->mu);
        if (--p->remaining == 0) pthread_cond_signal(&p->done);
        pthread_mutex_unlock(&p->mu);
    }
}

fs_pool *fs_pool_create(int threads) {
    if (threads < 1) threads = 1;
    if (threads > FS_MAX_WORKERS) threads = FS_MAX_WORKERS;
    fs_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->threads = threads;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->go, NULL);
    pthread_cond_init(&p->done, NULL);
    p->tid = calloc((size_t)threads, sizeof *p->tid);
    if (!p->tid) {
        fs_pool_destroy(p);
        return NULL;
    }
    for (int k = 1; k < threads; k++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa) {
            p->threads = k;
            break;
        }
        wa->p = p, wa->index = k;
        if (pthread_create(&p->tid[k], NULL, worker_main, wa) != 0) {
            free(wa);
            p->threads = k;
            break;
        }
    }
    return p;
}

void fs_pool_destroy(fs_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k < p->threads && p->tid; k++) pthread_join(p->tid[k], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->go);
    pthread_cond_destroy(&p->done);
    free(p->tid);
    free(p);
}

int fs_pool_threads(const fs_pool *p) {
    return p ? p->threads : 1;
}

void fs_pool_parallel_for(fs_task_fn *fn, void *ctx, int count, void *user) {
    fs_pool *p = user;
    if (!p || p->threads == 1) {
        fn(0, count, 0, ctx);
        return;
    }
    pthread_mutex_lock(&p->mu);
    p->fn = fn, p->ctx = ctx, p->count = count;
    p->remaining = p->threads - 1;
    p->generation++;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    int b, e;
    chunk(count, p->threads, 0, &b, &e);
    if (b < e) fn(b, e, 0, ctx);
    pthread_mutex_lock(&p->mu);
    while (p->remaining > 0) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
}
