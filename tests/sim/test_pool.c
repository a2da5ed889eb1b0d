/* test_pool.c - the worker pool: every item of a job runs once, on a thread
 * of the pool, however the threads share it out; and one pool shared by
 * several calling threads (a server's rooms, each world on its own sim
 * thread): two worlds of different solvers stepped at once on one pool end
 * bit-identical to each stepped alone, and the two callers did meet at the
 * pool.  The ThreadSanitizer build (test_sim_tsan shared_pool
 * pool_every_item_once) checks the pool's locking and its claims. */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "testlib.h"

#define POOL_STEPS 12
#define POOL_PARTICLES 1500

/* Callers inside fs_pool_parallel_for at once, and the most seen. */
static atomic_int g_inside, g_most;

static void counted_parallel_for(fs_task_fn *fn, void *ctx, int count, void *user) {
    int now = atomic_fetch_add(&g_inside, 1) + 1;
    for (int m = atomic_load(&g_most); now > m && !atomic_compare_exchange_weak(&g_most, &m, now);)
        ;
    fs_pool_parallel_for(fn, ctx, count, user);
    atomic_fetch_sub(&g_inside, 1);
}

typedef struct stepper {
    fs_world *w;
    pthread_barrier_t *start; /* NULL: alone */
    uint64_t hash;
} stepper;

static fs_world *make_world(fs_pool *pool, int scene) {
    const fs_scene_info *sc = fs_scene_get(scene);
    fs_world_def d = fs_default_world_def();
    d.capacity = POOL_PARTICLES + 2000;
    d.worker_count = fs_pool_threads(pool);
    d.parallel_for = counted_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    CHECK(w && fs_world_set_solver(w, sc->solver, &err) == FS_OK, "%s: %s", sc->name, err.msg);
    CHECK(fs_world_load_scene(w, sc->name, POOL_PARTICLES, &err) == FS_OK, "%s: %s", sc->name, err.msg);
    return w;
}

static void *step_world(void *arg) {
    stepper *s = arg;
    if (s->start) pthread_barrier_wait(s->start);
    fs_domain d = fs_world_domain(s->w);
    fs_vec3 c = {0.5f * (d.box_min.x + d.box_max.x), 0.3f * d.box_max.y, 0.5f * d.box_max.z};
    for (int t = 0; t < POOL_STEPS; t++) {
        if (t == POOL_STEPS / 2) fs_world_push(s->w, c, 0.3f * d.box_max.x, (fs_vec3){1, 1, 0}, 3.0f, NULL, NULL);
        fs_world_step(s->w);
    }
    s->hash = fs_world_hash(s->w);
    return NULL;
}

/* A job whose items cost unevenly (the last quarter 40x the rest), so that
 * threads run out of their own pieces at different times and take others'. */
#define ITEMS_MAX 3000
typedef struct uneven_job {
    int count, threads;
    atomic_int hits[ITEMS_MAX];
    atomic_int bad_worker, calls;
    atomic_int by_worker[FS_MAX_WORKERS];
} uneven_job;

static void uneven_task(int b, int e, int worker, void *vctx) {
    uneven_job *j = vctx;
    atomic_fetch_add(&j->calls, 1);
    if (worker < 0 || worker >= j->threads)
        atomic_fetch_add(&j->bad_worker, 1);
    else
        atomic_fetch_add(&j->by_worker[worker], e - b);
    for (int i = b; i < e; i++) {
        volatile double x = 1;
        for (int k = 0; k < (4 * i >= 3 * j->count ? 4000 : 100); k++) x = x * 1.0000001 + 1e-9;
        atomic_fetch_add(&j->hits[i], 1);
    }
}

void test_pool_every_item_once(void) {
    static const int threads[] = {1, 2, 3, 4}, counts[] = {1, 2, 3, 7, 16, 17, 33, 100, 1000, ITEMS_MAX};
    static uneven_job j;
    int jobs = 0, shared = 0;
    for (size_t t = 0; t < sizeof threads / sizeof *threads; t++) {
        fs_pool *pool = fs_pool_create(threads[t]);
        CHECK(fs_pool_threads(pool) == threads[t], "a pool of %d threads: %d", threads[t], fs_pool_threads(pool));
        for (int round = 0; round < 3; round++)
            for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
                memset(&j, 0, sizeof j);
                j.count = counts[c], j.threads = threads[t];
                fs_pool_parallel_for(uneven_task, &j, j.count, pool);
                int wrong = 0, first = -1, workers = 0;
                for (int i = 0; i < j.count; i++)
                    if (atomic_load(&j.hits[i]) != 1) wrong++, first = first < 0 ? i : first;
                for (int k = 0; k < threads[t]; k++) workers += atomic_load(&j.by_worker[k]) > 0;
                CHECK(wrong == 0, "%d threads, %d items: %d items ran other than once (the first: item %d, %d times)",
                      threads[t], j.count, wrong, first, first < 0 ? 1 : atomic_load(&j.hits[first]));
                CHECK(atomic_load(&j.bad_worker) == 0, "%d threads: a task got a worker index outside [0, %d)",
                      threads[t], threads[t]);
                CHECK(atomic_load(&j.calls) <= (j.count < 8 * threads[t] ? j.count : 8 * threads[t]),
                      "%d threads, %d items: %d calls, more than the job's pieces", threads[t], j.count,
                      atomic_load(&j.calls));
                jobs++, shared += workers > 1;
            }
        fs_pool_destroy(pool);
    }
    REPORT("%d jobs, every item run once; %d of them shared by more than one thread", jobs, shared);
}

/* The first scene, and the first of the MPS solver (the one that hands the
 * pool the most short jobs a step: a caller's turn comes round most often). */
static void two_scenes(int *a, int *b) {
    *a = 0, *b = fs_scene_count() - 1;
    for (int k = 1; k < fs_scene_count(); k++)
        if (fs_scene_get(k)->solver == FS_SOLVER_MPS) {
            *b = k;
            break;
        }
}

void test_shared_pool_two_worlds(void) {
    fs_pool *pool = fs_pool_create(2);
    CHECK(fs_pool_threads(pool) == 2, "a pool of 2 threads: %d", fs_pool_threads(pool));
    int scene[2];
    two_scenes(&scene[0], &scene[1]);
    uint64_t alone[2];
    for (int i = 0; i < 2; i++) {
        stepper s = {.w = make_world(pool, scene[i])};
        step_world(&s);
        alone[i] = s.hash;
        fs_world_destroy(s.w);
    }
    /* both at once, again until their threads met at the pool (a loaded
     * machine may run one to its end before the other starts) */
    atomic_store(&g_most, 0);
    int runs = 0;
    for (; runs < 5 && atomic_load(&g_most) < 2; runs++) {
        atomic_store(&g_most, 0);
        pthread_barrier_t start;
        pthread_barrier_init(&start, NULL, 2);
        stepper s[2];
        pthread_t t[2];
        for (int i = 0; i < 2; i++) s[i] = (stepper){.w = make_world(pool, scene[i]), .start = &start};
        for (int i = 0; i < 2; i++) CHECK(pthread_create(&t[i], NULL, step_world, &s[i]) == 0, "thread %d", i);
        for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
        pthread_barrier_destroy(&start);
        for (int i = 0; i < 2; i++) {
            REPORT("%-14s %-8s %d steps: hash %016llx alone, %016llx beside the other world",
                   fs_scene_get(scene[i])->name, fs_solver_name(fs_scene_get(scene[i])->solver), POOL_STEPS,
                   (unsigned long long)alone[i], (unsigned long long)s[i].hash);
            CHECK(s[i].hash == alone[i], "%s: stepped beside another world on one pool, its state differs",
                  fs_scene_get(scene[i])->name);
            fs_world_destroy(s[i].w);
        }
    }
    REPORT("callers at the pool at once: at most %d (%d run%s)", atomic_load(&g_most), runs, runs == 1 ? "" : "s");
    CHECK(atomic_load(&g_most) == 2, "the two worlds' threads met at the pool (one waited for the other's job)");
    fs_pool_destroy(pool);
}
