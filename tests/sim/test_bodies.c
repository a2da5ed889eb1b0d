/* test_bodies.c - rigid bodies coupled with the fluid (Algorithm 6). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "test_tanks.h"
#include "testlib.h"

static float angle_deg(fs_quat q) {
    return 2.0f * acosf(fminf(1.0f, fabsf(q.w))) * 57.29578f;
}

void test_bodies_stack(void) {
    fs_pool *pool;
    fs_world *w = world(1000, 1, &pool);
    fs_domain dom = {{0, 0, 0}, {2, 3, 2}, {0, -9.81f, 0}, 0.168f, 0.08f, 0.04f};
    fs_world_reset(w, &dom, NULL);
    int64_t id[3];
    fs_body_state s0[3];
    for (int k = 0; k < 3; k++) {
        fs_body_def b = fs_default_body_def();
        b.size = (fs_vec3){0.2f, 0.2f, 0.2f};
        b.density = 600;
        b.pos = (fs_vec3){1, 0.2f + 0.4f * (float)k, 1};
        id[k] = fs_world_create_body(w, &b, NULL);
        fs_world_body_get(w, (uint32_t)id[k], &s0[k]);
    }
    float worst_move = 0, worst_angle = 0;
    for (int t = 0; t < 600; t++) {
        fs_world_step(w);
        for (int k = 0; k < 3; k++) {
            fs_body_state s;
            fs_world_body_get(w, (uint32_t)id[k], &s);
            float dx = s.pos.x - s0[k].pos.x, dy = s.pos.y - s0[k].pos.y, dz = s.pos.z - s0[k].pos.z;
            worst_move = fmaxf(worst_move, sqrtf(dx * dx + dy * dy + dz * dz));
            worst_angle = fmaxf(worst_angle, angle_deg(s.rot));
        }
    }
    REPORT("three 0.4 m boxes stacked on the floor, 10 s: largest displacement %.2f mm, largest rotation %.3f deg",
           1000 * worst_move, worst_angle);
    CHECK(worst_move < 0.005f, "the stack moved %.4f m", worst_move);
    CHECK(worst_angle < 1.0f, "the stack turned %.2f deg", worst_angle);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* A pool 1.6 x 0.8 x 1.6 m, 4 substeps per 1/60 s; a 0.6 x 0.4 x 0.6 m box
 * of the given density dropped in; 4 s.  The water level is the mean
 * height of the top particle centres in each 0.2 m column away from the box
 * (where the relaxation's pressure vanishes: the top layer carries no
 * weight); *draft is the box's depth below it. */
static void float_box(float density, float *draft, float *bottom, float *penetration) {
    fs_pool *pool;
    const float L = 1.6f;
    fs_world *w = water_tank(6000, 4, L, 0.8f, &pool);
    fs_body_def b = fs_default_body_def();
    b.size = (fs_vec3){0.3f, 0.2f, 0.3f};
    b.density = density;
    b.pos = (fs_vec3){L / 2, 1.2f, L / 2};
    int64_t id = fs_world_create_body(w, &b, NULL);
    float pen = 0;
    double ysum = 0;
    int ny = 0;
    for (int t = 0; t < 300; t++) {
        fs_world_step(w);
        if (t > 120) pen = fmaxf(pen, fs_world_body_penetration(w));
        if (t >= 180) { /* the mean over the last second: the box still bobs a little */
            fs_body_state st;
            fs_world_body_get(w, (uint32_t)id, &st);
            ysum += st.pos.y, ny++;
        }
    }
    double level = water_level(w, L);
    *bottom = (float)(ysum / ny) - 0.2f;
    *draft = (float)level - *bottom;
    *penetration = pen;
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

void test_bodies_buoyancy(void) {
    float d, bottom, pen;
    float_box(500, &d, &bottom, &pen);
    REPORT("box of 500 kg/m^3 in water of 1000, 0.4 m tall: draft %.3f m, %.1f%% of its height (Archimedes: "
           "50%%; %.1f%% if the surface is taken half a spacing above the top particle centres); deepest particle "
           "penetration %.1f mm",
           d, 100 * d / 0.4f, 100 * (d + 0.04f) / 0.4f, 1000 * pen);
    CHECK(fabsf(d / 0.4f - 0.5f) / 0.5f < 0.1f, "draft %.3f m is not half the height within 10%%", d);
    float d2, bottom2, pen2;
    float_box(2000, &d2, &bottom2, &pen2);
    REPORT("box of 2000 kg/m^3: bottom %.3f m above the floor; deepest penetration %.1f mm", bottom2, 1000 * pen2);
    CHECK(bottom2 < 0.1f, "the heavy box does not rest on the floor: bottom at %.3f m", bottom2);
    CHECK(pen < 0.02f && pen2 < 0.04f, "particles inside bodies: %.3f, %.3f m", pen, pen2);
}

/* An impulse changes the velocity a body reports by exactly J/m, also while
 * the fluid is pushing on it (the reported velocity is the one it last moved
 * with, which the fluid's reaction has since changed): read, kick, read, with
 * no step between, as a paused world is. */
void test_bodies_impulse_report(void) {
    fs_pool *pool;
    const float L = 1.2f;
    fs_world *w = water_tank(4000, 2, L, 0.6f, &pool);
    fs_body_def b = fs_default_body_def();
    b.shape = FS_SHAPE_CAPSULE;
    b.size = (fs_vec3){0.06f, 0.12f, 0};
    b.pos = (fs_vec3){L / 2, 0.9f, L / 2};
    b.vel = (fs_vec3){0.5f, 0, 0.5f};
    int64_t id = fs_world_create_body(w, &b, NULL);
    double worst = 0;
    for (int t = 0; t < 60; t++) {
        fs_world_step(w);
        if (t % 6 != 5) continue;
        fs_body_state s0, s1;
        fs_world_body_get(w, (uint32_t)id, &s0);
        fs_vec3 J = {0, 0, 0.05f};
        CHECK(fs_world_body_impulse(w, (uint32_t)id, s0.pos, J, NULL) == FS_OK, "impulse refused");
        fs_world_body_get(w, (uint32_t)id, &s1);
        double want = J.z / s0.mass;
        double e = fabs((double)(s1.vel.z - s0.vel.z) - want) + fabs((double)(s1.vel.x - s0.vel.x)) +
                   fabs((double)(s1.vel.y - s0.vel.y));
        worst = fmax(worst, e / want);
    }
    REPORT("capsule falling into water, kicked every 6 steps: reported velocity change off J/m by at most %.1e "
           "relative",
           worst);
    CHECK(worst < 1e-4, "the reported velocity changed by %.1e relative off J/m", worst);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* No gravity, no walls within reach: a sphere thrown into a ball of water,
 * over ticks steps.  The unified solver meets the bodies at each of its
 * internal steps: fluid plus body must conserve momentum there too (its
 * spray reaches the walls 6 m away after about 1.8 s, so it runs 1 s: the
 * body has left the ball by 0.85 s). */
static void momentum_exchange(fs_solver solver, int ticks) {
    fs_pool *pool;
    fs_world *w = world(2000, 1, &pool);
    float s = 0.08f, mp = 1000.0f * s * s * s;
    fs_error err = {{0}};
    CHECK(fs_world_set_solver(w, solver, &err) == FS_OK, "solver: %s", err.msg);
    fs_domain dom = {{-6, -6, -6}, {6, 6, 6}, {0, 0, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    int nw = fs_world_add_sphere(w, (fs_vec3){0.5f, 0, 0}, 0.5f, FS_MAT_WATER, 0.1f);
    fs_body_def b = fs_default_body_def();
    b.shape = FS_SHAPE_SPHERE;
    b.size = (fs_vec3){0.25f, 0, 0};
    b.density = 1000;
    b.pos = (fs_vec3){-1.0f, 0.05f, 0.02f};
    b.vel = (fs_vec3){4, 0, 0};
    int64_t id = fs_world_create_body(w, &b, NULL);
    double P0[3], P1[3];
    for (int pass = 0; pass < 2; pass++) {
        double *P = pass ? P1 : P0;
        fs_particles_view v;
        fs_world_view(w, &v);
        P[0] = P[1] = P[2] = 0;
        for (int i = 0; i < v.count; i++) P[0] += mp * v.vx[i], P[1] += mp * v.vy[i], P[2] += mp * v.vz[i];
        fs_body_state st;
        fs_world_body_get(w, (uint32_t)id, &st);
        P[0] += st.mass * st.vel.x, P[1] += st.mass * st.vel.y, P[2] += st.mass * st.vel.z;
        if (!pass)
            for (int t = 0; t < ticks; t++) fs_world_step(w);
    }
    fs_body_state st;
    fs_world_body_get(w, (uint32_t)id, &st);
    double d =
        sqrt((P1[0] - P0[0]) * (P1[0] - P0[0]) + (P1[1] - P0[1]) * (P1[1] - P0[1]) + (P1[2] - P0[2]) * (P1[2] - P0[2]));
    double p0 = sqrt(P0[0] * P0[0] + P0[1] * P0[1] + P0[2] * P0[2]);
    REPORT("%s: sphere of %.1f kg at 4 m/s through %.0f kg of water, %d steps: body leaves at %.2f m/s; total "
           "momentum %.4f -> %.4f kg m/s (relative change %.1e)",
           fs_solver_name(solver), st.mass, nw * mp, ticks, st.vel.x, P0[0], P1[0], d / p0);
    CHECK(st.vel.x < 3.0f, "the body went through untouched (%.2f m/s)", st.vel.x);
    CHECK(d / p0 < 1e-4, "momentum changed by %.2e relative", d / p0);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

void test_bodies_momentum(void) {
    momentum_exchange(FS_SOLVER_CLAVET, 120);
}

void test_bodies_momentum_unified(void) {
    momentum_exchange(FS_SOLVER_UNIFIED, 60);
}

void test_bodies_validation(void) {
    fs_pool *pool;
    fs_world *w = world(1000, 1, &pool);
    fs_error err;
    fs_body_def b = fs_default_body_def();
    b.density = 1;
    CHECK(fs_world_create_body(w, &b, &err) < 0, "density 1 accepted");
    REPORT("refusal: %s", err.msg);
    b = fs_default_body_def();
    b.size.y = NAN;
    CHECK(fs_world_create_body(w, &b, &err) < 0, "NaN size accepted");
    b = fs_default_body_def();
    b.shape = (fs_shape)7;
    CHECK(fs_world_create_body(w, &b, &err) < 0, "unknown shape accepted");
    CHECK(fs_world_body_count(w) == 0, "a refused body was created");
    b = fs_default_body_def();
    int64_t id = fs_world_create_body(w, &b, &err);
    CHECK(id >= 0, "valid body refused: %s", err.msg);
    CHECK(fs_world_body_impulse(w, (uint32_t)id, b.pos, (fs_vec3){1e6f, 0, 0}, &err) == FS_ERR_RANGE,
          "huge impulse accepted");
    CHECK(fs_world_body_impulse(w, 999, b.pos, (fs_vec3){1, 0, 0}, &err) == FS_ERR_UNKNOWN, "unknown body");
    CHECK(fs_world_destroy_body(w, (uint32_t)id) && fs_world_body_count(w) == 0, "destroy");
    for (int k = 0; k < FS_MAX_BODIES; k++) fs_world_create_body(w, &b, NULL);
    CHECK(fs_world_create_body(w, &b, &err) < 0, "more than %d bodies", FS_MAX_BODIES);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* A grabbed body follows its target and still collides with the floor. */
void test_bodies_grab(void) {
    fs_pool *pool;
    fs_world *w = world(1000, 1, &pool);
    fs_domain dom = {{0, 0, 0}, {3, 3, 3}, {0, -9.81f, 0}, 0.168f, 0.08f, 0.04f};
    fs_world_reset(w, &dom, NULL);
    fs_body_def b = fs_default_body_def();
    b.pos = (fs_vec3){1, 0.2f, 1};
    int64_t id = fs_world_create_body(w, &b, NULL);
    fs_error err;
    CHECK(fs_world_body_grab(w, (uint32_t)id, (fs_vec3){1, 0.4f, 1}, (fs_vec3){2, 1.5f, 2}, &err) == FS_OK, "%s",
          err.msg);
    for (int t = 0; t < 120; t++) fs_world_step(w);
    fs_body_state s;
    fs_world_body_get(w, (uint32_t)id, &s);
    float dx = s.pos.x - 2, dy = s.pos.y + 0.2f - 1.5f, dz = s.pos.z - 2;
    float miss = sqrtf(dx * dx + dy * dy + dz * dz);
    /* drag it into the floor: it stops on the floor */
    fs_world_body_drag(w, (uint32_t)id, (fs_vec3){2, -1.0f, 2}, NULL);
    float lowest = 10;
    for (int t = 0; t < 120; t++) {
        fs_world_step(w);
        fs_world_body_get(w, (uint32_t)id, &s);
        lowest = fminf(lowest, s.pos.y);
    }
    fs_world_body_release(w, (uint32_t)id, NULL);
    REPORT("grabbed box: %.1f cm from its target after 2 s; dragged into the floor its centre stays at >= %.3f m "
           "(half height 0.2 m)",
           100 * miss, lowest);
    CHECK(miss < 0.05f, "grab missed its target by %.3f m", miss);
    CHECK(lowest > 0.18f, "the grabbed body went through the floor (%.3f)", lowest);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* ---- snapshots (kept here with the other newer tests) ---- */
static fs_world *plain(int capacity, int threads, fs_pool **pool) {
    fs_world_def d = fs_default_world_def();
    d.capacity = capacity;
    *pool = fs_pool_create(threads);
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = *pool;
    return fs_world_create(&d);
}

void test_snapshot_roundtrip(void) {
    const char *scenes[] = {"gallery", "fountain", "floating"};
    for (int k = 0; k < 3; k++) {
        fs_pool *pa, *pb;
        fs_world *a = plain(8000, 2, &pa), *b = plain(8000, 1, &pb);
        fs_error err;
        fs_world_load_scene(a, scenes[k], 3000, NULL);
        fs_world_push(a, (fs_vec3){1, 0.5f, 0.5f}, 1, (fs_vec3){1, 1, 0}, 2, NULL, NULL);
        for (int t = 0; t < 60; t++) fs_world_step(a);
        size_t n = fs_world_snapshot_size(a);
        unsigned char *buf = malloc(n);
        CHECK(fs_world_snapshot_write(a, buf, n) == n, "write");
        for (int t = 0; t < 60; t++) fs_world_step(a);
        fs_world_load_scene(b, "drop", 1000, NULL); /* something else first */
        fs_status st = fs_world_restore(b, buf, n, &err);
        CHECK(st == FS_OK, "%s: restore: %s", scenes[k], err.msg);
        for (int t = 0; t < 60; t++) fs_world_step(b);
        uint64_t ha = fs_world_hash(a), hb = fs_world_hash(b);
        REPORT("%-8s snapshot of %zu bytes (%d particles, %d springs, %d bodies); 60 steps later: %016llx saved, "
               "%016llx restored",
               scenes[k], n, fs_world_particle_count(a), fs_world_spring_count(a), fs_world_body_count(a),
               (unsigned long long)ha, (unsigned long long)hb);
        CHECK(ha == hb, "%s: the restored world diverged", scenes[k]);
        /* damaged snapshots are refused and change nothing */
        uint64_t before = fs_world_hash(b);
        int refused = 0, tries = 0;
        CHECK(fs_world_restore(b, buf, n - 1, &err) != FS_OK, "truncated snapshot accepted");
        for (size_t at = 0; at < n; at += n / 97 + 1, tries++) {
            unsigned char keep = buf[at];
            buf[at] ^= 0x5a;
            fs_status s2 = fs_world_restore(b, buf, n, &err);
            if (s2 != FS_OK) {
                refused++;
                CHECK(fs_world_hash(b) == before, "a refused snapshot changed the world");
            } else {
                for (int t = 0; t < 3; t++) fs_world_step(b);
                int bad = 0;
                fs_particles_view v;
                fs_world_view(b, &v);
                for (int i = 0; i < v.count; i++) bad += !isfinite(v.x[i]);
                CHECK(bad == 0, "a damaged snapshot produced NaN");
                /* back to the saved state for the next try */
                buf[at] = keep;
                fs_world_restore(b, buf, n, NULL);
                before = fs_world_hash(b);
                continue;
            }
            buf[at] = keep;
        }
        REPORT("         %d of %d single-byte corruptions refused (the rest hit float data that stays valid)", refused,
               tries);
        free(buf);
        fs_world_destroy(a), fs_world_destroy(b);
        fs_pool_destroy(pa), fs_pool_destroy(pb);
    }
}

/* Many small bodies thrown at the walls (step 1 tests poses outside the
 * box), and a body created in the middle of a pool: no out-of-bounds access
 * (the sanitizer build runs this too), no particle or body fired out. */
void test_bodies_rough_handling(void) {
    fs_pool *pool;
    fs_world *w = world(6000, 1, &pool);
    float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {2.0f, 1.2f, 0.6f}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    fs_world_add_block(w, dom.box_min, (fs_vec3){2.0f, 0.48f, 0.6f}, FS_MAT_WATER, 0.1f);
    for (int t = 0; t < 30; t++) fs_world_step(w);
    /* a box created deep in the water */
    fs_body_def b = fs_default_body_def();
    b.size = (fs_vec3){0.2f, 0.15f, 0.2f};
    b.density = 1000;
    b.pos = (fs_vec3){1.0f, 0.25f, 0.3f};
    int64_t id = fs_world_create_body(w, &b, NULL);
    float vmax = 0, bmax = 0;
    for (int t = 0; t < 30; t++) {
        fs_world_step(w);
        fs_particles_view v;
        fs_world_view(w, &v);
        for (int i = 0; i < v.count; i++)
            vmax = fmaxf(vmax, sqrtf(v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]));
        fs_body_state st;
        fs_world_body_get(w, (uint32_t)id, &st);
        bmax = fmaxf(bmax, sqrtf(st.vel.x * st.vel.x + st.vel.y * st.vel.y + st.vel.z * st.vel.z));
    }
    /* and 60 small spheres flung at the walls */
    uint64_t r = 99;
    int made = 0;
    for (int k = 0; k < 60; k++) {
        r = r * 6364136223846793005ull + 1442695040888963407ull;
        float u1 = (float)(r >> 40) / 16777216.0f, u2 = (float)((r >> 16) & 0xffffff) / 16777216.0f;
        fs_body_def sb = fs_default_body_def();
        sb.shape = FS_SHAPE_SPHERE;
        sb.size = (fs_vec3){0.04f, 0, 0};
        sb.pos = (fs_vec3){2.0f * u1, 0.6f + 0.5f * u2, 0.3f};
        sb.vel = (fs_vec3){u1 < 0.5f ? -40.0f : 40.0f, 30.0f * (u2 - 0.5f), u2 < 0.5f ? -20.0f : 20.0f};
        made += fs_world_create_body(w, &sb, NULL) >= 0;
    }
    for (int t = 0; t < 120; t++) fs_world_step(w);
    int inside = 0;
    for (int k = 0; k < fs_world_body_count(w); k++) {
        fs_body_state st;
        fs_world_body_at(w, k, &st);
        inside += st.pos.x >= 0 && st.pos.x <= 2 && st.pos.y >= 0 && st.pos.y <= 1.2f && st.pos.z >= 0 &&
                  st.pos.z <= 0.6f && isfinite(st.pos.x + st.pos.y + st.pos.z);
    }
    REPORT("a box created deep in a pool: fastest particle %.2f m/s, the box %.2f m/s in the next 0.5 s; %d of %d "
           "flung spheres (and the box) inside the tank after 2 s",
           vmax, bmax, inside - 1, made);
    CHECK(vmax < 4.0f && bmax < 2.0f, "a body created in water fired things out (%.1f, %.1f m/s)", vmax, bmax);
    CHECK(inside == made + 1, "bodies left the box");
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

/* Eq. 12: water on the underside of a static sphere stays with stickiness
 * on and drips off with it off. */
static int sticky_run(float strength, int *start) {
    fs_pool *pool;
    fs_world *w = world(4000, 1, &pool);
    float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {2, 2, 2}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    fs_world_set_param(w, FS_MAT_WATER, FS_P_STICK_STRENGTH, strength, NULL);
    fs_world_set_param(w, FS_MAT_WATER, FS_P_STICK_DISTANCE, 0.4f, NULL);
    fs_body_def b = fs_default_body_def();
    b.shape = FS_SHAPE_SPHERE;
    b.size = (fs_vec3){0.4f, 0, 0};
    b.is_static = true;
    b.pos = (fs_vec3){1, 1.2f, 1};
    fs_world_create_body(w, &b, NULL);
    /* a film of water, one layer thick, on the lower half of the sphere */
    int n = 0;
    for (float z = 0.4f; z < 1.6f; z += s)
        for (float y = 0.6f; y < 1.2f; y += s)
            for (float x = 0.4f; x < 1.6f; x += s) {
                float dx = x - 1, dy = y - 1.2f, dz = z - 1, r = sqrtf(dx * dx + dy * dy + dz * dz);
                if (r > 0.4f + 0.5f * s && r < 0.4f + 1.5f * s && dy < -0.15f)
                    n += fs_world_add_particle(w, (fs_vec3){x, y, z}, (fs_vec3){0, 0, 0}, FS_MAT_WATER) >= 0;
            }
    for (int t = 0; t < 120; t++) fs_world_step(w);
    fs_particles_view v;
    fs_world_view(w, &v);
    int near = 0;
    for (int i = 0; i < v.count; i++) {
        float dx = v.x[i] - 1, dy = v.y[i] - 1.2f, dz = v.z[i] - 1;
        near += sqrtf(dx * dx + dy * dy + dz * dz) < 0.4f + 3 * s;
    }
    *start = n;
    fs_world_destroy(w);
    fs_pool_destroy(pool);
    return near;
}

void test_bodies_stickiness(void) {
    int n_on, n_off;
    int on = sticky_run(5000.0f, &n_on), off = sticky_run(0.0f, &n_off);
    REPORT("%d particles under a 0.4 m sphere, after 2 s: %d still on it with stickiness (k 5000 /s^2, d 0.4 h), "
           "%d without",
           n_on, on, off);
    CHECK(on > 0.8 * n_on, "stickiness did not hold the water (%d of %d)", on, n_on);
    CHECK(off < 0.3 * n_off, "without stickiness the water stayed (%d of %d)", off, n_off);
}
