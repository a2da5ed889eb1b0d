/* test_spheric2.c - the SPHERIC Test 2 scene at a coarse resolution in each
 * solver: it loads with its probes, the front reaches probe H2 near the
 * measured time, no particle enters the box, and the steps with twelve
 * probes allocate nothing (glibc's count of the heap in use, after the
 * first step); and at 4.6 cm, through the impact, the box holds the
 * water out. */
#include <math.h>
#include <stdio.h>
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#include <malloc.h>
#define HEAP_COUNTED 1
#else
#define HEAP_COUNTED 0
#endif

#include "fluid_sim.h"
#include "scene_spheric2.h"
#include "sim_tests.h"
#include "testlib.h"

#define SPHERIC2_N 4000
#define WET 0.02f /* m: H2 counts as reached above this (the data pass it at 0.368 s) */
/* At 4000 particles (5.5 cm spacing) the front is late by 2-4 steps of
 * 1/60 s (0.40-0.45 s in the three solvers): the bound this resolution
 * meets is 0.1 s either side of the measured arrival. */
#define ARRIVAL 0.368f
#define ARRIVAL_TOL 0.1f

/* The deepest a particle centre lies inside the box, m (0: none inside). */
static float inside_box(const fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float worst = 0;
    for (int i = 0; i < v.count; i++) {
        float dx = fminf(v.x[i] - SPHERIC2_BOX_X0, SPHERIC2_BOX_X1 - v.x[i]);
        float dy = SPHERIC2_BOX_Y - v.y[i];
        float dz = fminf(v.z[i] - SPHERIC2_BOX_Z0, SPHERIC2_BOX_Z1 - v.z[i]);
        float depth = fminf(fminf(dx, dy), dz);
        if (depth > worst) worst = depth;
    }
    return worst;
}

static void spheric2(fs_solver s) {
    fs_pool *pool = fs_pool_create(2);
    fs_world_def def = fs_default_world_def();
    def.capacity = 2 * SPHERIC2_N, def.worker_count = 2, def.parallel_for = fs_pool_parallel_for;
    def.task_user = pool;
    fs_world *w = fs_world_create(&def);
    fs_error err;
    CHECK(fs_world_set_solver(w, s, &err) == FS_OK, "set_solver: %s", err.msg);
    CHECK(fs_world_load_scene(w, "spheric2", SPHERIC2_N, &err) == FS_OK, "load: %s", err.msg);
    const char *name = fs_solver_name(s);
    CHECK(fs_world_probe_count(w) == 12, "%s: 12 probes, %d", name, fs_world_probe_count(w));
    CHECK(fs_world_obstacle_count(w) == 1, "%s: the box", name);
    int h2 = fs_world_probe_find(w, "H2"), h4 = fs_world_probe_find(w, "H4"), p1 = fs_world_probe_find(w, "P1");
    float h4v0;
    fs_world_probe_get(w, h4, NULL, &h4v0, NULL);
    int n = fs_world_particle_count(w);
    float dt = fs_world_dt(w), arrival = -1, deepest = 0, p1max = 0;
    int steps = (int)ceilf(0.5f / dt);
    size_t heap0 = 0;
    for (int t = 1; t <= steps; t++) {
        fs_world_step(w);
#if HEAP_COUNTED
        if (t == 1) heap0 = mallinfo2().uordblks;
#endif
        float v, p;
        fs_world_probe_get(w, h2, NULL, &v, NULL);
        fs_world_probe_get(w, p1, NULL, &p, NULL);
        fs_stats st;
        fs_world_stats(w, &st);
        if (arrival < 0 && v > WET) arrival = (float)st.sim_time; /* the particles' time (an mps world's trails) */
        deepest = fmaxf(deepest, inside_box(w));
        p1max = fmaxf(p1max, p);
    }
    float h2v;
    fs_world_probe_get(w, h2, NULL, &h2v, NULL);
    REPORT("%s: %d particles (spacing %.1f mm); H4 at t = 0 %.3f m (0.547 measured); H2 passes %.2f m at %.3f s "
           "(0.368 measured), %.3f m at 0.5 s; P1 peak %.0f Pa to 0.5 s; deepest particle in the box %.1f mm",
           name, n, 1e3 * fs_world_domain(w).spacing, h4v0, WET, arrival, h2v, p1max, 1e3 * deepest);
    CHECK(fabsf(h4v0 - SPHERIC2_COLUMN_Y) < fs_world_domain(w).spacing, "%s: H4 reads the column", name);
    CHECK(arrival > 0 && fabsf(arrival - ARRIVAL) < ARRIVAL_TOL, "%s: H2 wet at %.3f s", name, arrival);
    CHECK(deepest == 0, "%s: a particle %.1f mm inside the box", name, 1e3 * deepest);
#if HEAP_COUNTED
    size_t heap1 = mallinfo2().uordblks;
    CHECK(heap1 == heap0, "%s: the steps allocated %zd bytes", name, (ssize_t)(heap1 - heap0));
#else
    (void)heap0;
#endif
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

void test_spheric2_scene(void) {
    for (int s = 0; s < FS_SOLVER_COUNT; s++) spheric2((fs_solver)s);
}

/* The surge hits the box at 4-5 m/s: a Clavet step of 1/60 s carries a
 * particle 7-8 cm, half the box's length, and at 7,128 particles (4.6 cm)
 * the field at a step's end pointed out of the box's far faces: water went
 * through the box (2 centres inside at 0.50 s, the deepest 8 cm in at
 * 0.52 s), and water sliding along the floor was pushed out of the box's
 * bottom face into the floor and back in.  Each solver, 0.8 s from the
 * release (the impact and the run-up), at every step: no centre inside.
 * Under the sanitizers, Clavet only. */
void test_spheric2_box_holds(void) {
    for (int s = 0; s < FS_SOLVER_COUNT; s++) {
        if (TL_SAN && s != FS_SOLVER_CLAVET) continue;
        fs_pool *pool = fs_pool_create(2);
        fs_world_def def = fs_default_world_def();
        def.capacity = 9000, def.worker_count = 2, def.parallel_for = fs_pool_parallel_for, def.task_user = pool;
        fs_world *w = fs_world_create(&def);
        fs_error err;
        CHECK(fs_world_set_solver(w, (fs_solver)s, &err) == FS_OK, "set_solver: %s", err.msg);
        CHECK(fs_world_load_scene(w, "spheric2", 7128, &err) == FS_OK, "load: %s", err.msg);
        float deepest = 0, when = -1;
        int steps = (int)ceilf(0.8f / fs_world_dt(w));
        for (int t = 1; t <= steps; t++) {
            fs_world_step(w);
            float d = inside_box(w);
            if (d > deepest) deepest = d, when = (float)t * fs_world_dt(w);
        }
        REPORT("%s: %d particles, 0.8 s: the deepest centre in the box %.1f mm (at %.3f s)",
               fs_solver_name((fs_solver)s), fs_world_particle_count(w), 1e3 * deepest, when);
        CHECK(deepest == 0, "%s: a centre %.1f mm inside the box at %.3f s", fs_solver_name((fs_solver)s),
              1e3 * deepest, when);
        fs_world_destroy(w);
        fs_pool_destroy(pool);
    }
}
