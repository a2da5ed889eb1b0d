/* test_pool.c - one worker pool shared by several calling threads (a
 * server's rooms, each world on its own sim thread): two worlds of different
 * solvers stepped at once on one pool end bit-identical to each stepped
 * alone, and the two callers did meet at the pool.  The ThreadSanitizer build
 * (test_sim_tsan shared_pool) checks the pool's locking. */
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
