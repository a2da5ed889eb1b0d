/* test_probes.c - the world's probes: their checks, and in a still tank of
 * each solver a height probe reading the depth and a floor sensor reading
 * rho g h. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "testlib.h"

static fs_probe_def probe(const char *name, fs_probe_kind kind, fs_vec3 pos, fs_vec3 normal) {
    fs_probe_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.kind = kind, d.pos = pos, d.normal = normal;
    return d;
}

void test_probes_api(void) {
    fs_world *w = fs_world_create(NULL);
    fs_error err;
    fs_probe_def h = probe("H1", FS_PROBE_HEIGHT, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 0, 0});
    CHECK(fs_world_add_probe(w, &h, &err) == 0, "add: %s", err.msg);
    CHECK(fs_world_add_probe(w, &h, &err) == -1, "a taken name is refused");
    fs_probe_def bad = probe("P1", FS_PROBE_PRESSURE, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 0, 0});
    CHECK(fs_world_add_probe(w, &bad, &err) == -1, "a zero normal is refused");
    bad = probe("P1", FS_PROBE_PRESSURE, (fs_vec3){2.0f, 0, 0.5f}, (fs_vec3){0, 1, 0});
    CHECK(fs_world_add_probe(w, &bad, &err) == -1, "a point outside the box is refused");
    bad = probe("a b", FS_PROBE_HEIGHT, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 1, 0});
    CHECK(fs_world_add_probe(w, &bad, &err) == -1, "a bad name is refused");
    bad = probe("P1", (fs_probe_kind)7, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 1, 0});
    CHECK(fs_world_add_probe(w, &bad, &err) == -1, "an unknown kind is refused");
    bad = probe("P1", FS_PROBE_PRESSURE, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 2, 0});
    bad.size = NAN;
    CHECK(fs_world_add_probe(w, &bad, &err) == -1, "a NaN size is refused");
    bad.size = 0;
    CHECK(fs_world_add_probe(w, &bad, &err) == 1, "add: %s", err.msg);
    fs_probe_def got;
    CHECK(fs_world_probe_get(w, 1, &got, NULL, NULL) && fabsf(got.normal.y - 1) < 1e-6f, "the normal is normalised");
    CHECK(fs_world_probe_count(w) == 2, "two probes");
    int added = 0;
    for (int i = 0; i < FS_MAX_PROBES + 2; i++) {
        char nm[16];
        snprintf(nm, sizeof nm, "x%d", i);
        fs_probe_def d = probe(nm, FS_PROBE_HEIGHT, (fs_vec3){0.5f, 0, 0.5f}, (fs_vec3){0, 0, 0});
        added += fs_world_add_probe(w, &d, &err) >= 0;
    }
    CHECK(added == FS_MAX_PROBES - 2 && fs_world_probe_count(w) == FS_MAX_PROBES, "bounded: %d added", added);
    CHECK(fs_world_remove_probe(w, "H1") && !fs_world_remove_probe(w, "H1"), "remove once");
    CHECK(fs_world_probe_find(w, "P1") == 0, "the others move up");
    fs_domain dom = fs_world_domain(w);
    CHECK(fs_world_reset(w, &dom, &err) == FS_OK && fs_world_probe_count(w) == 0, "a reset clears them");
    fs_world_destroy(w);
}

/* A still tank of 0.4 x D x 0.4 m in solver s: after 1 s the height probe
 * at its centre reads D within a spacing, the floor sensor rho g D within
 * 10% (means over the next 0.5 s). */
static void still_tank(fs_solver s) {
    const float l0 = 0.02f, D = 0.3f, L = 0.4f;
    fs_pool *pool = fs_pool_create(2);
    fs_world_def def = fs_default_world_def();
    def.capacity = 20000, def.worker_count = 2, def.parallel_for = fs_pool_parallel_for, def.task_user = pool;
    fs_world *w = fs_world_create(&def);
    fs_error err;
    CHECK(fs_world_set_solver(w, s, &err) == FS_OK, "set_solver: %s", err.msg);
    float h = s == FS_SOLVER_MPS ? 3.1f * l0 : 2.1f * l0;
    fs_domain d = {{0, 0, 0}, {L, D + 0.2f, L}, {0, -9.81f, 0}, h, l0, 0.5f * l0};
    CHECK(fs_world_reset(w, &d, &err) == FS_OK, "reset: %s", err.msg);
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, D, L}, FS_MAT_WATER, 0.0f);
    fs_probe_def hp = probe("h", FS_PROBE_HEIGHT, (fs_vec3){L / 2, 0, L / 2}, (fs_vec3){0, 0, 0});
    fs_probe_def pp = probe("p", FS_PROBE_PRESSURE, (fs_vec3){L / 2, 0, L / 2}, (fs_vec3){0, 1, 0});
    CHECK(fs_world_add_probe(w, &hp, &err) == 0 && fs_world_add_probe(w, &pp, &err) == 1, "add: %s", err.msg);
    for (int t = 0; t < 60; t++) fs_world_step(w);
    double hs = 0, ps = 0;
    const int avg = 30;
    uint64_t tick = 0;
    for (int t = 0; t < avg; t++) {
        fs_world_step(w);
        float hv, pv;
        fs_world_probe_get(w, 0, NULL, &hv, NULL);
        fs_world_probe_get(w, 1, NULL, &pv, &tick);
        hs += hv, ps += pv;
    }
    double hm = hs / avg, pm = ps / avg, ref = 1000.0 * 9.81 * D;
    REPORT("%s: %d particles, height %.4f m (depth %.3f), floor pressure %.0f Pa (rho g D = %.0f, %+.1f%%)",
           fs_solver_name(s), n, hm, D, pm, ref, 100 * (pm - ref) / ref);
    CHECK(tick == 90, "measured each step: tick %llu", (unsigned long long)tick);
    CHECK(fabs(hm - D) < l0, "%s: height %.4f m, depth %.3f", fs_solver_name(s), hm, D);
    CHECK(fabs(pm - ref) < 0.1 * ref, "%s: floor pressure %.0f Pa, rho g D %.0f", fs_solver_name(s), pm, ref);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

void test_probes_still_tank(void) {
    for (int s = 0; s < FS_SOLVER_COUNT; s++) still_tank((fs_solver)s);
}
