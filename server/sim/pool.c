/* pool.c - a small persistent thread pool that satisfies fs_parallel_for_fn.
 * Optional: the simulation core never creates threads itself; the caller
 * (tests, benchmark, server) creates a pool and injects it in fs_world_def.
 * The range [0, count) is split into PIECES contiguous pieces a thread, and
 * each thread (the caller is thread 0) has a home run of them, the k-th of
 * the pieces in order: it runs its own from the front, then takes the
 * others' from their backs.  A thread whose pieces cost less (no walls near,
 * fewer neighbours) so takes more, where one piece a thread left it waiting
 * on the other (the MPS dam break at 10k ran 6-10% faster in the same run);
 * and a thread keeps the same part of every range from job to job, give or
 * take the pieces at the boundary, so the data of its part stays in its own
 * core's caches.  Claimed from one shared counter, a particle's data moved
 * between the cores from pass to pass: on 2-vCPU VMs (Zen 5) every pass ran
 * 1.17-1.34x the CPU time it takes on one thread, and the MPS dam break at
 * 10k ran up to 1.2x slower (BENCHMARKS.md).  Results do not depend on the
 * split (fs_parallel_for_fn).  Touched by the threads that call
 * parallel_for (each the owner of a world) and by the pool's own workers.
 *
 * Several threads may share one pool (a server's rooms, each world on its own
 * sim thread): a caller holds the caller lock for its whole job, so callers
 * take turns job by job and the pool's threads stay the total.  The lock
 * keeps no queue: a caller may run several jobs in a row while another waits
 * (asleep, its core left to the workers); each world's results are those it
 * would have alone (one job at a time, split as fs_parallel_for_fn allows).
 *
 * A step hands the pool many short jobs in a row (the MPS solver ~10 a
 * sub-step and one a CG iteration, each of a fraction of a millisecond), so
 * the workers, and the caller waiting for them, spin for up to SPIN_NS on
 * the job counter before they sleep on the condition variable: waking a
 * sleeping thread costs tens of microseconds on a VM. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "fluid_sim.h"

struct fs_pool {
    int threads;
    pthread_t *tid;
    pthread_mutex_t mu;
    pthread_cond_t go, done;
    _Atomic uint64_t generation; /* bumped for each job (under mu) */
    _Atomic int remaining;       /* workers still running the current job */
    bool quit;
    int started; /* workers past their start-up (under mu) */
    /* the current job */
    fs_task_fn *fn;
    void *ctx;
    int count, pieces;
    /* each thread's home pieces [lo, hi), packed lo | hi << 32: a thread claims its own from the front and,
     * when they are gone, another's from the back; on cache lines of their own */
    struct {
        _Atomic uint64_t lohi;
        char pad[56];
    } home[FS_MAX_WORKERS];
    /* held by the calling thread for one whole parallel_for; on cache lines of
     * its own, away from the lock word the workers take (a single caller's
     * lock stays in its core's cache) */
    char pad0[64];
    pthread_mutex_t caller;
    char pad1[64];
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

/* Takes a piece of thread o's home range: its first (front) or its last; -1 when none is left. */
static int take_piece(fs_pool *p, int o, bool front) {
    _Atomic uint64_t *h = &p->home[o].lohi;
    uint64_t v = atomic_load_explicit(h, memory_order_relaxed);
    for (;;) {
        const uint32_t lo = (uint32_t)v, hi = (uint32_t)(v >> 32);
        if (lo >= hi) return -1;
        const uint64_t nv = front ? (uint64_t)(lo + 1) | (uint64_t)hi << 32 : (uint64_t)lo | (uint64_t)(hi - 1) << 32;
        if (atomic_compare_exchange_weak_explicit(h, &v, nv, memory_order_relaxed, memory_order_relaxed))
            return front ? (int)lo : (int)(hi - 1);
    }
}

/* Runs pieces of the current job until none is left: the thread's own pieces in order, then the others' from
 * their ends.  So a thread keeps the same part of the range from job to job, give or take what it takes over
 * at the boundary, and the data a part touches stays in that thread's caches. */
static void claim(fs_pool *p, fs_task_fn *fn, void *ctx, int count, int pieces, int index) {
    for (int o = 0; o < p->threads; o++) {
        const int t = (index + o) % p->threads;
        for (int k; (k = take_piece(p, t, o == 0)) >= 0;) {
            int b, e;
            chunk(count, pieces, k, &b, &e);
            if (b < e) fn(b, e, index, ctx);
        }
    }
}

/* a job runs in this many pieces a thread, claimed in turn: a thread that finishes early takes more */
#define PIECES 8
#define SPIN_NS 200000 /* how long a thread spins for the next job or the last worker before it sleeps */

static inline void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static int64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Spins until *gen differs from seen (a worker's next job) or, with gen
 * NULL, until *rem is 0 (the caller's last worker), for at most SPIN_NS;
 * true when it happened. */
static bool spin_for(_Atomic uint64_t *gen, uint64_t seen, _Atomic int *rem) {
    int64_t t0 = 0;
    for (int k = 0;; k++) {
        if (gen ? atomic_load_explicit(gen, memory_order_acquire) != seen
                : atomic_load_explicit(rem, memory_order_acquire) == 0)
            return true;
        cpu_relax();
        if ((k & 63) == 63) {
            int64_t t = mono_ns();
            if (!t0)
                t0 = t;
            else if (t - t0 > SPIN_NS)
                return false;
        }
    }
}

static void *worker_main(void *arg) {
    worker_arg wa = *(worker_arg *)arg;
    free(arg); /* a thread's first free sets up its allocator cache (656 bytes here): before the pool is handed out */
    fs_pool *p = wa.p;
    uint64_t seen = 0;
    pthread_mutex_lock(&p->mu);
    p->started++;
    pthread_cond_signal(&p->done);
    pthread_mutex_unlock(&p->mu);
    for (;;) {
        spin_for(&p->generation, seen, NULL);
        pthread_mutex_lock(&p->mu); /* the job's fields are written under mu */
        while (atomic_load(&p->generation) == seen && !p->quit) pthread_cond_wait(&p->go, &p->mu);
        if (p->quit) {
            pthread_mutex_unlock(&p->mu);
            return NULL;
        }
        seen = atomic_load(&p->generation);
        fs_task_fn *fn = p->fn;
        void *ctx = p->ctx;
        int count = p->count, pieces = p->pieces;
        pthread_mutex_unlock(&p->mu);
        claim(p, fn, ctx, count, pieces, wa.index);
        if (atomic_fetch_sub(&p->remaining, 1) == 1) { /* the last: wake the caller if it sleeps */
            pthread_mutex_lock(&p->mu);
            pthread_cond_signal(&p->done);
            pthread_mutex_unlock(&p->mu);
        }
    }
}

fs_pool *fs_pool_create(int threads) {
    if (threads < 1) threads = 1;
    if (threads > FS_MAX_WORKERS) threads = FS_MAX_WORKERS;
    fs_pool *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->threads = threads;
    pthread_mutex_init(&p->caller, NULL);
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
    /* returns once every worker has started: a caller that counts the heap around its steps (the tests'
     * no-allocation checks) does not see a late worker's start-up */
    pthread_mutex_lock(&p->mu);
    while (p->started < p->threads - 1) pthread_cond_wait(&p->done, &p->mu);
    pthread_mutex_unlock(&p->mu);
    return p;
}

void fs_pool_destroy(fs_pool *p) {
    if (!p) return;
    pthread_mutex_lock(&p->mu);
    p->quit = true;
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k < p->threads && p->tid; k++) pthread_join(p->tid[k], NULL);
    pthread_mutex_destroy(&p->caller);
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
    pthread_mutex_lock(&p->caller); /* another world's job runs to its end first */
    pthread_mutex_lock(&p->mu);
    const int pieces = count < PIECES * p->threads ? count : PIECES * p->threads;
    p->fn = fn, p->ctx = ctx, p->count = count, p->pieces = pieces;
    for (int k = 0; k < p->threads; k++) {
        int b, e;
        chunk(pieces, p->threads, k, &b, &e);
        atomic_store_explicit(&p->home[k].lohi, (uint64_t)(uint32_t)b | (uint64_t)(uint32_t)e << 32,
                              memory_order_relaxed);
    }
    atomic_store(&p->remaining, p->threads - 1);
    atomic_fetch_add(&p->generation, 1);
    pthread_cond_broadcast(&p->go);
    pthread_mutex_unlock(&p->mu);
    claim(p, fn, ctx, count, pieces, 0);
    if (!spin_for(NULL, 0, &p->remaining)) {
        pthread_mutex_lock(&p->mu);
        while (atomic_load(&p->remaining) > 0) pthread_cond_wait(&p->done, &p->mu);
        pthread_mutex_unlock(&p->mu);
    }
    pthread_mutex_unlock(&p->caller);
}
