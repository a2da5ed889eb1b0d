/* test_heat.c - temperature and heat diffusion (Solenthaler 2007, Eq. 21). */
#include <math.h>
#include <stdlib.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "testlib.h"

/* A still bar (no pressure, no viscosity, no gravity) of 40 x 10 x 10
 * particles on a lattice: x < x0 at 1, x > x0 at 2.  After t seconds the
 * core must follow 1.5 + 0.5 erf((x - x0) / (2 sqrt(D t))). */
void test_heat_diffusion_erf(void) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 5000;
    fs_world *w = fs_world_create(&d);
    float s = 0.08f, L = 40 * s, W = 10 * s, x0 = 0.5f * L;
    fs_domain dom = {{0, 0, 0}, {L, W, W}, {0, 0, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    for (int p = 0; p < FS_P_COUNT; p++)
        if (p == FS_P_STIFFNESS || p == FS_P_NEAR_STIFFNESS || p == FS_P_VISC_SIGMA || p == FS_P_VISC_BETA)
            fs_world_set_param(w, FS_MAT_WATER, (fs_param)p, 0, NULL);
    int n = fs_world_add_block(w, dom.box_min, dom.box_max, FS_MAT_WATER, 0.0f);
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) ((float *)v.temperature)[i] = v.x[i] < x0 ? 1.0f : 2.0f;
    double q0 = fs_world_total_heat(w);
    const float D = 0.01f; /* the presets' diffusivity, m^2/s */
    const int steps = 90;  /* 1.5 s */
    for (int t = 0; t < steps; t++) fs_world_step(w);
    float tt = steps / 60.0f;
    fs_world_view(w, &v);
    double worst = 0, sq = 0, moved = 0;
    int cnt = 0;
    for (int i = 0; i < v.count; i++) {
        moved = fmax(moved, fabs(v.vx[i]) + fabs(v.vy[i]) + fabs(v.vz[i]));
        if (fabsf(v.y[i] - 0.5f * W) > 0.2f || fabsf(v.z[i] - 0.5f * W) > 0.2f) continue;
        double exact = 1.5 + 0.5 * erf((v.x[i] - x0) / (2.0 * sqrt(D * tt)));
        double e = fabs(v.temperature[i] - exact);
        worst = fmax(worst, e), sq += e * e, cnt++;
    }
    double q1 = fs_world_total_heat(w);
    REPORT("%d particles, D = %.3f m^2/s, t = %.1f s (2 sqrt(Dt) = %.2f m = %.1f spacings): %d core particles, "
           "largest error %.4f, RMS %.4f (of a jump of 1); total heat %.6f -> %.6f; particles still (|v| <= %.1e)",
           n, D, tt, 2 * sqrt(D * tt), 2 * sqrt(D * tt) / s, cnt, worst, sqrt(sq / cnt), q0, q1, moved);
    CHECK(cnt > 100, "too few core particles");
    CHECK(worst < 0.03, "largest error %.4f against erf", worst);
    CHECK(fabs(q1 - q0) / q0 < 1e-6, "heat not conserved: %.9f -> %.9f", q0, q1);
    fs_world_destroy(w);
}

/* A closed, insulated box of sloshing water at random temperatures keeps its
 * total heat to round-off. */
void test_heat_conserved(void) {
    fs_pool *pool = fs_pool_create(2);
    fs_world_def d = fs_default_world_def();
    d.capacity = 5000;
    d.worker_count = 2;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_world_load_scene(w, "dam_break", 3000, NULL);
    fs_particles_view v;
    fs_world_view(w, &v);
    uint64_t r = 12345;
    for (int i = 0; i < v.count; i++) {
        ((float *)v.temperature)[i] = 10.0f + 80.0f * tl_rand01(&r);
    }
    double q0 = fs_world_total_heat(w), spread0 = 0, spread1 = 0, mean = q0 / v.count;
    for (int i = 0; i < v.count; i++) spread0 += fabs(v.temperature[i] - mean);
    for (int t = 0; t < 300; t++) fs_world_step(w);
    double q1 = fs_world_total_heat(w);
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) spread1 += fabs(v.temperature[i] - mean);
    REPORT("dam break, %d particles at 10..90 C, 300 steps: total heat %.4f -> %.4f (relative %.1e); mean "
           "deviation from the mean %.2f -> %.2f C",
           v.count, q0, q1, fabs(q1 - q0) / q0, spread0 / v.count, spread1 / v.count);
    CHECK(fabs(q1 - q0) / q0 < 1e-5, "heat changed by %.2e", fabs(q1 - q0) / q0);
    CHECK(spread1 < 0.5 * spread0, "no diffusion happened");
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

void test_heaters(void) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 5000;
    fs_world *w = fs_world_create(&d);
    float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {1.6f, 1.0f, 0.8f}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    fs_world_add_block(w, dom.box_min, (fs_vec3){1.6f, 0.48f, 0.8f}, FS_MAT_WATER, 0.1f);
    fs_error err;
    fs_heater_def bad = {FS_HEAT_SPHERE, {0, 0, 0}, -1, 10, 0, true};
    CHECK(fs_world_set_heater(w, -1, &bad, &err) < 0, "negative radius accepted");
    fs_heater_def hot = {FS_HEAT_FLOOR, {0, 0, 0}, 0.1f, 5.0f, 80.0f, true};
    CHECK(fs_world_set_heater(w, -1, &hot, &err) >= 0, "%s", err.msg);
    fs_heater_def cold = {FS_HEAT_SPHERE, {1.2f, 0.3f, 0.4f}, 0.3f, -50.0f, 0, true};
    CHECK(fs_world_set_heater(w, -1, &cold, &err) >= 0, "%s", err.msg);
    for (int t = 0; t < 120; t++) fs_world_step(w);
    fs_particles_view v;
    fs_world_view(w, &v);
    double bottom = 0, top = 0;
    int nb = 0, nt = 0;
    for (int i = 0; i < v.count; i++) {
        if (v.y[i] < 0.1f) bottom += v.temperature[i], nb++;
        float dx = v.x[i] - 1.2f, dy = v.y[i] - 0.3f, dz = v.z[i] - 0.4f;
        if (dx * dx + dy * dy + dz * dz < 0.01f) top += v.temperature[i], nt++;
    }
    REPORT("after 2 s: the %d particles on an 80 C plate average %.1f C; %d near a -50 C/s cooler average %.1f C", nb,
           nb ? bottom / nb : 0, nt, nt ? top / nt : 0);
    CHECK(nb > 0 && bottom / nb > 50, "hot plate did not heat");
    CHECK(nt > 5 && top / nt < 5, "cooler did not cool (%d particles)", nt);
    fs_world_destroy(w);
}

static float height(fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float hi = 0;
    for (int i = 0; i < v.count; i++) hi = fmaxf(hi, v.y[i]);
    return hi;
}

static float run_mean_height(fs_world *w, int steps) {
    double acc = 0;
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        if (t >= steps - 60) acc += height(w);
    }
    return (float)(acc / 60);
}

/* A jelly block holds its shape under gravity; heated above its melting
 * point it flows; cooled below its solidification point it holds its new
 * shape.  At the default tick (one 1/60 s step): the coloured sweeps
 * project a solid jelly's springs (clavet_colour.c), so the block holds; warming
 * makes its springs plastic (Algorithm 3 and Eq. 8), and it flows. */
void test_phase_jelly(void) {
    fs_pool *pool = fs_pool_create(2);
    fs_world_def d = fs_default_world_def();
    d.capacity = 4000;
    d.worker_count = 2;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {2.4f, 1.5f, 2.4f}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    fs_world_add_block(w, (fs_vec3){0.88f, 0, 0.88f}, (fs_vec3){1.52f, 0.64f, 1.52f}, FS_MAT_JELLY, 0.0f);
    fs_world_make_springs(w);
    /* each phase's height is the mean over its last second (jelly wobbles) */
    float h0 = run_mean_height(w, 60);
    int springs0 = fs_world_spring_count(w);
    float h_cold = run_mean_height(w, 120);
    /* heat it: a hot plate under all of it */
    fs_heater_def plate = {FS_HEAT_FLOOR, {0, 0, 0}, 2.0f, 5.0f, 80.0f, true};
    int slot = fs_world_set_heater(w, -1, &plate, NULL);
    float h_hot = run_mean_height(w, 180);
    int springs_hot = fs_world_spring_count(w);
    /* cool it below its solidification point */
    plate.temperature = 0.0f;
    fs_world_set_heater(w, slot, &plate, NULL);
    float h_set = run_mean_height(w, 180);
    int springs_set = fs_world_spring_count(w);
    plate.enabled = false;
    fs_world_set_heater(w, slot, &plate, NULL);
    float h_after = run_mean_height(w, 120);
    REPORT("jelly block 0.64 m high settled to %.2f m, %d springs; 2 s more at 20 C: %.2f m; 3 s on an 80 C plate: "
           "%.2f m, %d springs; "
           "3 s on a 0 C plate: %.2f m, %d springs; 2 s later: %.2f m",
           h0, springs0, h_cold, h_hot, springs_hot, h_set, springs_set, h_after);
    CHECK(fabsf(h_cold - h0) / h0 < 0.05f, "cold jelly sagged: %.3f -> %.3f", h0, h_cold);
    CHECK(h_hot < 0.6f * h0 && springs_hot < springs0 / 10, "hot jelly did not flow");
    CHECK(springs_set > springs0 / 4, "cooled jelly did not set (%d springs)", springs_set);
    CHECK(fabsf(h_after - h_set) < 0.05f * h0, "set jelly did not hold its shape: %.3f -> %.3f", h_set, h_after);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* Water below 0 C freezes: springs at the distances it froze in. */
void test_phase_water_freezes(void) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 3000;
    fs_world *w = fs_world_create(&d);
    float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {1.2f, 1.0f, 1.2f}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    int n = fs_world_add_block(w, dom.box_min, (fs_vec3){1.2f, 0.32f, 1.2f}, FS_MAT_WATER, 0.1f);
    for (int t = 0; t < 60; t++) fs_world_step(w);
    int s_warm = fs_world_spring_count(w);
    fs_heater_def cold = {FS_HEAT_FLOOR, {0, 0, 0}, 1.0f, 5.0f, -20.0f, true};
    fs_world_set_heater(w, -1, &cold, NULL);
    for (int t = 0; t < 180; t++) fs_world_step(w);
    int s_cold = fs_world_spring_count(w);
    REPORT("pool of %d water particles: %d springs at 20 C, %d after 3 s on a -20 C plate", n, s_warm, s_cold);
    CHECK(s_warm == 0, "warm water has springs");
    CHECK(s_cold > 5 * n, "water did not freeze (%d springs)", s_cold);
    fs_world_destroy(w);
}
