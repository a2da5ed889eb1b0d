/* test_unified.c - the unified solver (Solenthaler, Schläfli, Pajarola
 * 2007): elastic, plastic and rigid solids, melting and solidification,
 * merging and splitting, heat, multiple fluids, determinism. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "fluid_sim.h"
#include "sim_testing.h"
#include "sim_tests.h"
#include "testlib.h"

/* Sanitizer builds run ~10x slower: they run the short versions (TL_SAN). */
#define SAN TL_SAN

static const float S = 0.08f;

typedef struct uenv {
    fs_world *w;
    fs_pool *pool;
} uenv;

static uenv make_world(int cap, int threads, fs_vec3 box, fs_vec3 g) {
    uenv e = {0};
    fs_world_def d = fs_default_world_def();
    d.capacity = cap;
    if (threads > 1) {
        e.pool = fs_pool_create(threads);
        d.worker_count = threads;
        d.parallel_for = fs_pool_parallel_for;
        d.task_user = e.pool;
    }
    e.w = fs_world_create(&d);
    fs_domain dom = {{0, 0, 0}, box, g, 2.1f * S, S, 0.5f * S};
    fs_world_reset(e.w, &dom, NULL);
    return e;
}

static void to_unified(fs_world *w) {
    fs_error err;
    fs_status st = fs_world_set_solver(w, FS_SOLVER_UNIFIED, &err);
    CHECK(st == FS_OK, "set_solver: %s", err.msg);
}

static void drop_world(uenv *e) {
    fs_world_destroy(e->w);
    fs_pool_destroy(e->pool);
}

static void steps(fs_world *w, int n) {
    for (int t = 0; t < n; t++) fs_world_step(w);
}

static float top(fs_world *w, float *xspan) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float hi = 0, x0 = 1e9f, x1 = -1e9f;
    for (int i = 0; i < v.count; i++) hi = fmaxf(hi, v.y[i]), x0 = fminf(x0, v.x[i]), x1 = fmaxf(x1, v.x[i]);
    if (xspan) *xspan = x1 - x0;
    return hi;
}

/* positions in id order */
static void positions(fs_world *w, float *out) {
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int k = 0; k < v.count; k++) {
        int i = v.by_id[k];
        out[3 * k] = v.x[i], out[3 * k + 1] = v.y[i], out[3 * k + 2] = v.z[i];
    }
}

static double rms_diff(const float *a, const float *b, int n) {
    double s = 0;
    for (int k = 0; k < 3 * n; k++) s += (double)(a[k] - b[k]) * (a[k] - b[k]);
    return sqrt(s / n);
}

static bool finite_inside(fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    fs_domain d = fs_world_domain(w);
    for (int i = 0; i < v.count; i++)
        if (!(isfinite(v.x[i]) && isfinite(v.vx[i]) && v.x[i] >= d.box_min.x && v.x[i] <= d.box_max.x &&
              v.y[i] >= d.box_min.y && v.y[i] <= d.box_max.y && v.z[i] >= d.box_min.z && v.z[i] <= d.box_max.z))
            return false;
    return true;
}

/* 1. A jelly block (E = 500 kPa) holds its shape under gravity; on an 80 C
 * plate it melts and flows; on a 0 C plate it sets again and then keeps
 * its new shape. */
void test_unified_phase_block(void) {
    uenv e = make_world(3000, 2, (fs_vec3){2.4f, 1.2f, 2.4f}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    fs_world_set_param(w, FS_MAT_JELLY, FS_P_YOUNG, 5e5f, NULL);
    int n = fs_world_add_block(w, (fs_vec3){0.88f, 0, 0.88f}, (fs_vec3){1.52f, 0.64f, 1.52f}, FS_MAT_JELLY, 0.0f);
    to_unified(w);
    float span0, h_init = top(w, &span0);
    float strain = 0;
    for (int t = 0; t < 90; t++) {
        fs_world_step(w);
        if (t >= 30) strain = fmaxf(strain, fs__unified_max_strain(w));
    }
    float span_cold, h_cold = top(w, &span_cold);
    fs_heater_def plate = {FS_HEAT_FLOOR, {0, 0, 0}, 2.0f, 5.0f, 80.0f, true};
    int slot = fs_world_set_heater(w, -1, &plate, NULL);
    steps(w, SAN ? 120 : 180);
    float span_hot, h_hot = top(w, &span_hot);
    plate.temperature = 0.0f;
    fs_world_set_heater(w, slot, &plate, NULL);
    steps(w, SAN ? 120 : 180);
    int pairs, big, nc = fs__unified_components(w, &pairs, &big);
    float *a = malloc(sizeof(float) * 3 * (size_t)n), *b = malloc(sizeof(float) * 3 * (size_t)n);
    positions(w, a);
    float h_set = top(w, NULL);
    steps(w, 120);
    positions(w, b);
    double moved = rms_diff(a, b, n);
    REPORT("jelly block of %d, E = 500 kPa: height %.3f m, after 1.5 s at 20 C %.3f m, largest Green strain %.4f; "
           "on an 80 C plate: height %.3f m, width %.2f -> %.2f m; on a 0 C plate: height %.3f m, %d body(ies), "
           "%d pairs; 2 s later RMS shape change %.4f m",
           n, h_init, h_cold, strain, h_hot, span0, span_hot, h_set, nc, pairs, moved);
    CHECK(strain < 0.05f, "cold block strained by %.4f", strain);
    CHECK(fabsf(h_cold - h_init) < 0.05f * h_init, "cold block sagged: %.3f -> %.3f", h_init, h_cold);
    CHECK(h_hot < 0.5f * h_cold && span_hot > 1.3f * span0, "hot block did not flow: %.3f m, %.2f m wide", h_hot,
          span_hot);
    CHECK(pairs > n, "cooled melt did not set (%d pairs)", pairs);
    CHECK(moved < 0.01, "set melt did not hold its shape: RMS %.4f m", moved);
    CHECK(finite_inside(w), "particles escaped or are not finite");
    free(a), free(b);
    drop_world(&e);
}

/* 2. Merging: two rigid chocolate blocks touching on a hot plate melt where
 * they touch and, cooled, set into one body.  Splitting: a block melted
 * through its middle by a heater becomes two. */
void test_unified_merge_split(void) {
    uenv e = make_world(3000, 2, (fs_vec3){2.0f, 1.0f, 1.2f}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    /* 1.2 spacings between the facing particle layers' surfaces: more than h
     * between their centres, so the blocks start as two bodies */
    fs_world_add_block(w, (fs_vec3){0.4f, 0, 0.32f}, (fs_vec3){0.96f, 0.48f, 0.88f}, FS_MAT_CHOCOLATE, 0.0f);
    fs_world_add_block(w, (fs_vec3){0.96f + 1.2f * S, 0, 0.32f}, (fs_vec3){1.52f + 1.2f * S, 0.48f, 0.88f},
                       FS_MAT_CHOCOLATE, 0.0f);
    to_unified(w);
    int pairs0, big0, nc0 = fs__unified_components(w, &pairs0, &big0);
    /* a hot column where they touch melts the contact, the rest stays set */
    fs_heater_def hot = {FS_HEAT_SPHERE, {0.96f + 0.6f * S, 0.24f, 0.6f}, 0.35f, 40.0f, 0, true};
    int slot = fs_world_set_heater(w, -1, &hot, NULL);
    steps(w, 60);
    int pairs1, big1, nc1 = fs__unified_components(w, &pairs1, &big1);
    hot.rate = -40.0f; /* cool it */
    fs_world_set_heater(w, slot, &hot, NULL);
    steps(w, 90);
    int pairs2, big2, nc2 = fs__unified_components(w, &pairs2, &big2);
    REPORT("merge: two chocolate blocks 1.2 spacings apart (%d particles): %d bodies (largest %d) before; heated at "
           "the contact %d bodies, %d pairs; cooled: %d body(ies), largest %d",
           fs_world_particle_count(w), nc0, big0, nc1, pairs1, nc2, big2);
    CHECK(nc0 == 2, "two separate blocks expected, got %d", nc0);
    CHECK(pairs1 < pairs0, "heating did not melt anything");
    CHECK(big2 > 0.8 * fs_world_particle_count(w), "blocks did not merge: %d bodies, largest %d", nc2, big2);
    drop_world(&e);

    /* splitting */
    e = make_world(3000, 2, (fs_vec3){2.4f, 1.0f, 1.0f}, (fs_vec3){0, -9.81f, 0});
    w = e.w;
    fs_world_add_block(w, (fs_vec3){0.4f, 0, 0.32f}, (fs_vec3){2.0f, 0.4f, 0.72f}, FS_MAT_CHOCOLATE, 0.0f);
    to_unified(w);
    int p0, b0, n0 = fs__unified_components(w, &p0, &b0);
    fs_heater_def mid = {FS_HEAT_SPHERE, {1.2f, 0.2f, 0.52f}, 0.4f, 60.0f, 0, true};
    fs_world_set_heater(w, -1, &mid, NULL);
    steps(w, 60);
    int p1, b1, n1 = fs__unified_components(w, &p1, &b1);
    REPORT("split: a chocolate bar of %d particles, %d body; heated through its middle: %d bodies (largest %d), "
           "%d of %d pairs left",
           fs_world_particle_count(w), n0, n1, b1, p1, p0);
    CHECK(n0 == 1, "bar not one body (%d)", n0);
    CHECK(n1 == 2, "bar not split in two (%d bodies)", n1);
    CHECK(finite_inside(w), "particles escaped or are not finite");
    drop_world(&e);
}

/* Rigid bodies (Eq. 18-20): a solid chocolate block spinning in zero
 * gravity keeps its shape and its angular momentum; dropped on the floor it
 * comes to rest without deforming. */
static void angular(fs_world *w, double L[3], double c[3]) {
    fs_particles_view v;
    fs_world_view(w, &v);
    c[0] = c[1] = c[2] = L[0] = L[1] = L[2] = 0;
    for (int i = 0; i < v.count; i++) c[0] += v.x[i], c[1] += v.y[i], c[2] += v.z[i];
    for (int a = 0; a < 3; a++) c[a] /= v.count;
    for (int i = 0; i < v.count; i++) {
        double r[3] = {v.x[i] - c[0], v.y[i] - c[1], v.z[i] - c[2]};
        L[0] += r[1] * v.vz[i] - r[2] * v.vy[i];
        L[1] += r[2] * v.vx[i] - r[0] * v.vz[i];
        L[2] += r[0] * v.vy[i] - r[1] * v.vx[i];
    }
}

static double pair_drift(fs_world *w, const float *p0, int n) {
    float *p1 = malloc(sizeof(float) * 3 * (size_t)n);
    positions(w, p1);
    double worst = 0;
    for (int a = 0; a < n; a += 7)
        for (int b = a + 1; b < n; b += 5) {
            double d0 = 0, d1 = 0;
            for (int k = 0; k < 3; k++) {
                d0 += (double)(p0[3 * a + k] - p0[3 * b + k]) * (p0[3 * a + k] - p0[3 * b + k]);
                d1 += (double)(p1[3 * a + k] - p1[3 * b + k]) * (p1[3 * a + k] - p1[3 * b + k]);
            }
            worst = fmax(worst, fabs(sqrt(d1) - sqrt(d0)));
        }
    free(p1);
    return worst;
}

void test_unified_rigid(void) {
    uenv e = make_world(2000, 2, (fs_vec3){2, 2, 2}, (fs_vec3){0, 0, 0});
    fs_world *w = e.w;
    int n =
        fs_world_add_block(w, (fs_vec3){0.68f, 0.84f, 0.76f}, (fs_vec3){1.32f, 1.16f, 1.24f}, FS_MAT_CHOCOLATE, 0.0f);
    to_unified(w);
    float *p0 = malloc(sizeof(float) * 3 * (size_t)n);
    positions(w, p0);
    /* spin: v = omega x (x - c), omega = 3 rad/s about (0, 1, 1)/sqrt 2 */
    fs_particles_view v;
    fs_world_view(w, &v);
    const float om[3] = {0, 2.1213203f, 2.1213203f};
    for (int i = 0; i < v.count; i++) {
        float r[3] = {v.x[i] - 1.0f, v.y[i] - 1.0f, v.z[i] - 1.0f};
        ((float *)v.vx)[i] = om[1] * r[2] - om[2] * r[1];
        ((float *)v.vy)[i] = om[2] * r[0] - om[0] * r[2];
        ((float *)v.vz)[i] = om[0] * r[1] - om[1] * r[0];
    }
    double L0[3], c0[3], L1[3], c1[3];
    angular(w, L0, c0);
    steps(w, SAN ? 30 : 60);
    angular(w, L1, c1);
    double drift = pair_drift(w, p0, n);
    double l0 = sqrt(L0[0] * L0[0] + L0[1] * L0[1] + L0[2] * L0[2]);
    double dl =
        sqrt((L1[0] - L0[0]) * (L1[0] - L0[0]) + (L1[1] - L0[1]) * (L1[1] - L0[1]) + (L1[2] - L0[2]) * (L1[2] - L0[2]));
    int pairs, big, nc = fs__unified_components(w, &pairs, &big);
    double moved =
        sqrt((c1[0] - c0[0]) * (c1[0] - c0[0]) + (c1[1] - c0[1]) * (c1[1] - c0[1]) + (c1[2] - c0[2]) * (c1[2] - c0[2]));
    REPORT("rigid chocolate block of %d spinning at 3 rad/s, no gravity, %.1f s: %d body; angular momentum "
           "changed by %.2e of itself; largest change of a pair distance %.2e m; centre moved %.2e m",
           n, (SAN ? 30 : 60) / 60.0, nc, dl / l0, drift, moved);
    CHECK(nc == 1, "%d bodies", nc);
    CHECK(dl / l0 < 1e-3, "angular momentum not kept: %.2e", dl / l0);
    CHECK(drift < 1e-3, "the rigid block deformed by %.2e m", drift);
    drop_world(&e);

    /* dropped on the floor */
    e = make_world(2000, 2, (fs_vec3){1.2f, 1.2f, 1.2f}, (fs_vec3){0, -9.81f, 0});
    w = e.w;
    n = fs_world_add_block(w, (fs_vec3){0.36f, 0.4f, 0.36f}, (fs_vec3){0.84f, 0.72f, 0.84f}, FS_MAT_CHOCOLATE, 0.0f);
    to_unified(w);
    positions(w, p0);
    steps(w, 120);
    drift = pair_drift(w, p0, n);
    float lo = 1e9f, vm = 0;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) {
        lo = fminf(lo, v.y[i]);
        vm = fmaxf(vm, sqrtf(v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]));
    }
    REPORT("the block dropped 0.36 m onto the floor, %.1f s later: lowest centre %.3f m (rest %.3f), fastest "
           "particle %.3f m/s, largest change of a pair distance %.2e m",
           120 / 60.0, lo, 0.5f * S, vm, drift);
    CHECK(fabsf(lo - 0.5f * S) < 0.25f * S, "not resting on the floor: %.3f", lo);
    CHECK(vm < 0.1f, "still moving at %.3f m/s", vm);
    CHECK(drift < 2e-3, "the rigid block deformed by %.2e m", drift);
    free(p0);
    drop_world(&e);
}

/* 3. A closed, insulated box of sloshing water at random temperatures keeps
 * its total heat to round-off. */
void test_unified_heat_conserved(void) {
    uenv e = make_world(3000, 2, (fs_vec3){1.6f, 1.0f, 0.8f}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){0.64f, 0.8f, 0.8f}, FS_MAT_WATER, 0.1f);
    to_unified(w);
    fs_particles_view v;
    fs_world_view(w, &v);
    uint64_t r = 12345;
    for (int i = 0; i < v.count; i++) {
        ((float *)v.temperature)[i] = 10.0f + 80.0f * tl_rand01(&r);
    }
    double q0 = fs_world_total_heat(w);
    steps(w, SAN ? 60 : 180);
    double q1 = fs_world_total_heat(w);
    REPORT("dam break of %d particles at 10..90 C, %d steps: total heat %.4f -> %.4f (relative %.1e)", v.count,
           SAN ? 60 : 180, q0, q1, fabs(q1 - q0) / q0);
    CHECK(fabs(q1 - q0) / q0 < 1e-5, "heat changed by %.2e", fabs(q1 - q0) / q0);
    drop_world(&e);
}

/* The equation of state's stiffness: a settled pool 0.96 m deep stays
 * within a few % of its rest density. */
void test_unified_density_pool(void) {
    uenv e = make_world(4000, 2, (fs_vec3){1.2f, 1.4f, 1.2f}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    int n = fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){1.2f, 0.96f, 1.2f}, FS_MAT_WATER, 0.1f);
    to_unified(w);
    steps(w, SAN ? 60 : 120);
    float mx, mean = fs__unified_density_ratio(w, &mx);
    float dt;
    int sub = fs__unified_last_substeps(w, &dt);
    REPORT("pool of %d water particles 0.96 m deep after %.0f s: density / rest density %.4f on average, %.4f at "
           "most (g H / c^2 = %.4f at the floor); %d internal steps of %.2f ms",
           n, (SAN ? 60 : 120) / 60.0, mean, mx, 9.81 * 0.96 / (25.0 * 25.0), sub, dt * 1e3);
    CHECK(fabsf(mean - 1.0f) < 0.03f, "mean density error %.4f", mean - 1.0f);
    CHECK(mx < 1.06f, "largest density %.4f of rest", mx);
    drop_world(&e);
}

/* 4. Elasticity returns a bent beam to its rest shape; beyond the elastic
 * limit, clay keeps a permanent deformation. */
static double beam_run(int material, float young, float amp, int settle, double *max_dev) {
    uenv e = make_world(2000, 2, (fs_vec3){1.6f, 1.2f, 0.64f}, (fs_vec3){0, 0, 0});
    fs_world *w = e.w;
    fs_world_set_param(w, material, FS_P_YOUNG, young, NULL);
    fs_world_set_param(w, material, FS_P_SOLID_VISCOSITY, 0.05f, NULL);
    int n = fs_world_add_block(w, (fs_vec3){0.16f, 0.4f, 0.16f}, (fs_vec3){1.44f, 0.64f, 0.48f}, material, 0.0f);
    to_unified(w);
    float *rest = malloc(sizeof(float) * 3 * (size_t)n), *now = malloc(sizeof(float) * 3 * (size_t)n);
    positions(w, rest);
    /* bend it: a velocity field v_y = amp sin(pi x / L), zero mean */
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) {
        float xx = (v.x[i] - 0.16f) / 1.28f;
        ((float *)v.vy)[i] = amp * (sinf(3.14159265f * xx) - 0.6366198f);
    }
    *max_dev = 0;
    for (int t = 0; t < settle; t++) {
        fs_world_step(w);
        positions(w, now);
        /* deviation net of rigid drift: subtract the mean displacement */
        double m[3] = {0, 0, 0};
        for (int k = 0; k < n; k++)
            for (int a = 0; a < 3; a++) m[a] += now[3 * k + a] - rest[3 * k + a];
        double dev = 0;
        for (int k = 0; k < n; k++)
            for (int a = 0; a < 3; a++) {
                double d = now[3 * k + a] - rest[3 * k + a] - m[a] / n;
                dev += d * d;
            }
        dev = sqrt(dev / n);
        if (dev > *max_dev) *max_dev = dev;
        if (t == settle - 1) {
            free(rest), free(now);
            drop_world(&e);
            return dev;
        }
    }
    free(rest), free(now);
    drop_world(&e);
    return 0;
}

void test_unified_beam(void) {
    const int settle = SAN ? 90 : 150;
    double peak_e, peak_p;
    double rms_e = beam_run(FS_MAT_JELLY, 3e5f, 3.0f, settle, &peak_e);
    double rms_p = beam_run(FS_MAT_CLAY, 3e5f, 3.0f, settle, &peak_p);
    REPORT("beam 1.28 x 0.24 x 0.32 m bent by a sine velocity field of 3 m/s, no gravity: jelly (elastic, "
           "E = 300 kPa) peak RMS deviation %.4f m, after %.1f s %.4f m; clay (plastic, elastic limit 0.01) peak "
           "%.4f m, after %.1f s %.4f m",
           peak_e, settle / 60.0, rms_e, peak_p, settle / 60.0, rms_p);
    CHECK(peak_e > 0.02, "the beam hardly bent (%.4f m)", peak_e);
    CHECK(rms_e < 0.25 * peak_e, "the elastic beam did not return: %.4f of %.4f m", rms_e, peak_e);
    CHECK(rms_p > 0.4 * peak_p, "the plastic beam sprang back: %.4f of %.4f m", rms_p, peak_p);

    /* fracture: a jelly bar whose halves fly apart at 4 m/s each breaks in
     * two where the body neighbours stretch beyond fracture_stretch */
    uenv e = make_world(2000, 2, (fs_vec3){3.2f, 1.0f, 1.0f}, (fs_vec3){0, 0, 0});
    fs_world *w = e.w;
    fs_world_set_param(w, FS_MAT_JELLY, FS_P_FRACTURE, 1.2f, NULL); /* brittle: 8 J/kg parts it */
    int n = fs_world_add_block(w, (fs_vec3){1.12f, 0.36f, 0.36f}, (fs_vec3){2.08f, 0.68f, 0.68f}, FS_MAT_JELLY, 0);
    to_unified(w);
    int p0, b0, c0 = fs__unified_components(w, &p0, &b0);
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) ((float *)v.vx)[i] = v.x[i] < 1.6f ? -4.0f : 4.0f;
    steps(w, 20);
    int p1, b1, c1 = fs__unified_components(w, &p1, &b1);
    REPORT("fracture: a jelly bar of %d (E = %.0f kPa, fracture_stretch %.1f) pulled apart at 8 m/s: %d body, %d "
           "pairs -> %d bodies (largest %d), %d pairs",
           n, fs_world_get_param(w, FS_MAT_JELLY, FS_P_YOUNG) / 1e3, fs_world_get_param(w, FS_MAT_JELLY, FS_P_FRACTURE),
           c0, p0, c1, b1, p1);
    CHECK(c0 == 1 && c1 >= 2 && b1 < n, "the bar did not break (%d bodies)", c1);
    drop_world(&e);
}

/* 5. Diffusion against erf under the unified solver: two halves of a still
 * bar at 1 and 2.  The bar floats in a box 0.4 m larger on every side (the
 * walls' boundary particles overlap at the box's edges, which would push
 * a bar that fills the box). */
void test_unified_diffusion_erf(void) {
    float L = 40 * S, W = 10 * S, M = 0.4f, x0 = M + 0.5f * L;
    uenv e = make_world(5000, 1, (fs_vec3){L + 2 * M, W + 2 * M, W + 2 * M}, (fs_vec3){0, 0, 0});
    fs_world *w = e.w;
    int n = fs_world_add_block(w, (fs_vec3){M, M, M}, (fs_vec3){M + L, M + W, M + W}, FS_MAT_WATER, 0.0f);
    to_unified(w);
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) ((float *)v.temperature)[i] = v.x[i] < x0 ? 1.0f : 2.0f;
    double q0 = fs_world_total_heat(w);
    const float D = 0.01f;
    const int nsteps = SAN ? 45 : 90;
    steps(w, nsteps);
    float tt = nsteps / 60.0f;
    fs_world_view(w, &v);
    double worst = 0, sq = 0, moved = 0;
    int cnt = 0;
    for (int i = 0; i < v.count; i++) {
        moved = fmax(moved, fabs(v.vx[i]) + fabs(v.vy[i]) + fabs(v.vz[i]));
        if (fabsf(v.y[i] - M - 0.5f * W) > 0.2f || fabsf(v.z[i] - M - 0.5f * W) > 0.2f) continue;
        double exact = 1.5 + 0.5 * erf((v.x[i] - x0) / (2.0 * sqrt(D * tt)));
        double err = fabs(v.temperature[i] - exact);
        worst = fmax(worst, err), sq += err * err, cnt++;
    }
    double q1 = fs_world_total_heat(w);
    float dt;
    int sub = fs__unified_last_substeps(w, &dt);
    REPORT("unified: %d particles, D = %.3f m^2/s, t = %.2f s (%d internal steps of %.2f ms): %d core particles, "
           "largest error %.4f, RMS %.4f (of a jump of 1); total heat %.6f -> %.6f; |v| <= %.1e",
           n, D, tt, sub, dt * 1e3, cnt, worst, sqrt(sq / cnt), q0, q1, moved);
    CHECK(cnt > 100, "too few core particles");
    CHECK(worst < 0.03, "largest error %.4f against erf", worst);
    CHECK(fabs(q1 - q0) / q0 < 1e-6, "heat not conserved: %.9f -> %.9f", q0, q1);
    drop_world(&e);
}

/* 6. Two liquids of different mass density, the heavy one on top, end with
 * the light one above. */
void test_unified_layers(void) {
    uenv e = make_world(3000, 2, (fs_vec3){0.8f, 1.2f, 0.8f}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    /* water (1000) below, a "heavy water" of 2000 kg/m^3 (honey's slot,
     * made runny) above */
    fs_world_set_param(w, FS_MAT_HONEY, FS_P_MASS_DENSITY, 2000.0f, NULL);
    fs_world_set_param(w, FS_MAT_HONEY, FS_P_KIN_VISCOSITY, 0.002f, NULL);
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){0.8f, 0.4f, 0.8f}, FS_MAT_WATER, 0.1f);
    fs_world_add_block(w, (fs_vec3){0, 0.4f, 0}, (fs_vec3){0.8f, 0.8f, 0.8f}, FS_MAT_HONEY, 0.1f);
    to_unified(w);
    steps(w, 360);
    fs_particles_view v;
    fs_world_view(w, &v);
    double yl = 0, yh = 0;
    int nl = 0, nh = 0;
    for (int i = 0; i < v.count; i++) {
        if (v.material[i] == FS_MAT_WATER)
            yl += v.y[i], nl++;
        else
            yh += v.y[i], nh++;
    }
    yl /= nl, yh /= nh;
    REPORT("%d light (1000 kg/m^3) particles started below %d heavy (2000 kg/m^3); after %.0f s mean heights: "
           "light %.3f m, heavy %.3f m",
           nl, nh, 360 / 60.0, yl, yh);
    CHECK(yl > yh + 0.1, "the light liquid is not above: %.3f vs %.3f", yl, yh);
    CHECK(finite_inside(w), "particles escaped or are not finite");
    drop_world(&e);
}

/* 7. Same hash with 1 and 2 threads on a scene with every state (liquid,
 * elastic, rigid, melting); a snapshot restored continues bit-identically. */
static uint64_t run_bunny(int threads, int nsteps) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 4000;
    fs_pool *pool = NULL;
    if (threads > 1) {
        pool = fs_pool_create(threads);
        d.worker_count = threads;
        d.parallel_for = fs_pool_parallel_for;
        d.task_user = pool;
    }
    fs_world *w = fs_world_create(&d);
    fs_error err;
    to_unified(w);
    CHECK(fs_world_load_scene(w, "chocolate_bunny", 3000, &err) == FS_OK, "%s", err.msg);
    /* an elastic jelly lump too */
    fs_world_add_sphere(w, (fs_vec3){0.3f, 0.9f, 0.3f}, 0.12f, FS_MAT_JELLY, 0.0f);
    steps(w, nsteps);
    uint64_t h = fs_world_hash(w);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
    return h;
}

void test_unified_determinism(void) {
    const int nsteps = SAN ? 20 : 60;
    uint64_t h1 = run_bunny(1, nsteps), h2 = run_bunny(2, nsteps);
    REPORT("chocolate_bunny (3000) + a jelly ball, %d steps: hash %016llx (1 thread), %016llx (2 threads)", nsteps,
           (unsigned long long)h1, (unsigned long long)h2);
    CHECK(h1 == h2, "state differs between thread counts");

    /* snapshot mid-way, continue; restore into a fresh world, continue */
    fs_world_def d = fs_default_world_def();
    d.capacity = 4000;
    fs_world *a = fs_world_create(&d), *b = fs_world_create(&d);
    fs_error err;
    to_unified(a);
    fs_world_load_scene(a, "chocolate_bunny", 3000, &err);
    steps(a, nsteps / 2);
    size_t sz = fs_world_snapshot_size(a);
    void *buf = malloc(sz);
    CHECK(fs_world_snapshot_write(a, buf, sz) == sz, "snapshot write");
    steps(a, nsteps / 2);
    fs_status st = fs_world_restore(b, buf, sz, &err);
    CHECK(st == FS_OK, "restore: %s", err.msg);
    CHECK(fs_world_solver(b) == FS_SOLVER_UNIFIED, "restored world is not on the unified solver");
    steps(b, nsteps / 2);
    uint64_t ha = fs_world_hash(a), hb = fs_world_hash(b);
    int pa, pb, ba, bb;
    int ca = fs__unified_components(a, &pa, &ba), cb = fs__unified_components(b, &pb, &bb);
    REPORT("snapshot of %zu bytes at step %d: continued %016llx, restored and continued %016llx; bodies %d/%d, "
           "pairs %d/%d",
           sz, nsteps / 2, (unsigned long long)ha, (unsigned long long)hb, ca, cb, pa, pb);
    CHECK(ha == hb, "restored world diverged");
    CHECK(pa == pb && ca == cb, "body neighbours differ after restore");
    /* damaged solver state is refused: flip the state's magic (it follows
     * the solver id and length near the end) */
    unsigned char *bytes = buf;
    size_t at = 0;
    for (size_t k = 0; k + 4 <= sz; k++)
        if (memcmp(bytes + k, "UNI1", 4) == 0) at = k;
    CHECK(at > 0, "no unified section found");
    bytes[at] ^= 0xff;
    fs_world *c = fs_world_create(&d);
    st = fs_world_restore(c, buf, sz, &err);
    REPORT("damaged section: %s", st == FS_OK ? "accepted" : err.msg);
    CHECK(st == FS_ERR_ARG, "damaged unified state accepted");
    free(buf);
    fs_world_destroy(a), fs_world_destroy(b), fs_world_destroy(c);
}

/* Every parameter at the violent end of its range, pushes at 50 m/s and a
 * 1000 K/s heater: nothing non-finite, nothing outside the box. */
void test_unified_stress(void) {
    uenv e = make_world(2000, 2, (fs_vec3){1, 1, 1}, (fs_vec3){0, -9.81f, 0});
    fs_world *w = e.w;
    fs_error err;
    to_unified(w);
    CHECK(fs_world_load_scene(w, "gallery", 1000, &err) == FS_OK, "%s", err.msg);
    for (int m = 0; m < fs_world_material_count(w); m++)
        for (int q = 0; q < FS_P_COUNT; q++) {
            const fs_param_info *in = fs_param_get_info((fs_param)q);
            float v = (q == FS_P_MASS_DENSITY || q == FS_P_REST_DENSITY) ? (m % 2 ? in->max : in->min) : in->max;
            CHECK(fs_world_set_param(w, m, (fs_param)q, v, &err) == FS_OK, "%s", err.msg);
        }
    fs_domain d = fs_world_domain(w);
    uint64_t r = 99;
    int bad_steps = 0, nsteps = SAN ? 15 : 60;
    for (int t = 0; t < nsteps; t++) {
        for (int k = 0; k < 3; k++) {
            float f[6];
            for (int q = 0; q < 6; q++) {
                f[q] = tl_rand01(&r);
            }
            fs_vec3 c = {d.box_max.x * f[0], d.box_max.y * f[1], d.box_max.z * f[2]};
            fs_world_push(w, c, 0.2f + f[3], (fs_vec3){f[4] - 0.5f, f[5] - 0.5f, 0.3f}, 50.0f, NULL, NULL);
        }
        if (t == nsteps / 3) {
            fs_heater_def h = {FS_HEAT_SPHERE, {0.5f * d.box_max.x, 0.3f, 0.5f * d.box_max.z}, 1.0f, 1000, 0, true};
            fs_world_set_heater(w, -1, &h, NULL);
        }
        fs_world_step(w);
        bad_steps += !finite_inside(w);
    }
    fs_stats st;
    fs_world_stats(w, &st);
    float dt;
    int sub = fs__unified_last_substeps(w, &dt);
    REPORT("gallery (%d particles) at extreme parameters (E = 1e9 Pa capped to what %d internal steps of %.3f ms "
           "carry), %d steps of 50 m/s pushes: %d bad steps, %llu repaired, %llu clamped into the box",
           fs_world_particle_count(w), sub, dt * 1e3, nsteps, bad_steps, (unsigned long long)st.nonfinite_repaired,
           (unsigned long long)st.escapes_clamped);
    CHECK(bad_steps == 0, "%d steps left bad particles", bad_steps);
    CHECK(st.nonfinite_repaired == 0, "%llu non-finite particles repaired", (unsigned long long)st.nonfinite_repaired);
    drop_world(&e);
}

/* The unified scenes load and run without losing particles. */
void test_unified_scenes(void) {
    const char *names[] = {"chocolate_bunny", "shell", "merge"};
    for (int k = 0; k < 3; k++) {
        uenv e = make_world(6000, 2, (fs_vec3){1, 1, 1}, (fs_vec3){0, -9.81f, 0});
        fs_error err;
        to_unified(e.w);
        CHECK(fs_world_load_scene(e.w, names[k], 4000, &err) == FS_OK, "%s: %s", names[k], err.msg);
        int n0 = fs_world_particle_count(e.w);
        /* nothing placed outside the box (it would be clamped onto the wall
         * and explode at 20 m/s and more): after 3 steps (0.05 s) of
         * falling and settling nothing is fast */
        steps(e.w, 3);
        fs_particles_view v;
        fs_world_view(e.w, &v);
        float vmax = 0;
        for (int i = 0; i < v.count; i++)
            vmax = fmaxf(vmax, sqrtf(v.vx[i] * v.vx[i] + v.vy[i] * v.vy[i] + v.vz[i] * v.vz[i]));
        steps(e.w, SAN ? 7 : 27);
        float dt;
        int sub = fs__unified_last_substeps(e.w, &dt);
        fs_stats st;
        fs_world_stats(e.w, &st);
        int pairs, big, nc = fs__unified_components(e.w, &pairs, &big);
        REPORT("%-16s %d particles (fastest %.2f m/s after 0.05 s); after %.2f s: %d bodies (%d pairs), %d internal "
               "steps of %.2f ms, %.1f ms per step, %llu repaired",
               names[k], n0, vmax, (SAN ? 10 : 30) / 60.0, nc, pairs, sub, dt * 1e3, st.step_ms,
               (unsigned long long)st.nonfinite_repaired);
        CHECK(vmax < 2.0f, "%s: a particle at %.2f m/s", names[k], vmax);
        CHECK(finite_inside(e.w) && fs_world_particle_count(e.w) == n0, "%s: particles lost or escaped", names[k]);
        CHECK(st.nonfinite_repaired == 0, "%s: non-finite particles", names[k]);
        drop_world(&e);
    }
    /* a reset forgets the body neighbours (ids restart at 0 in the same
     * slots): a block built after it is one fresh body */
    {
        uenv e = make_world(3000, 1, (fs_vec3){1, 1, 1}, (fs_vec3){0, -9.81f, 0});
        fs_error err;
        to_unified(e.w);
        fs_world_load_scene(e.w, "merge", 1000, &err);
        int pa, ba, ca = fs__unified_components(e.w, &pa, &ba);
        fs_domain dom = fs_world_domain(e.w);
        fs_world_reset(e.w, &dom, NULL);
        int n = fs_world_add_block(e.w, (fs_vec3){0.2f, 0, 0.2f}, (fs_vec3){0.52f, 0.32f, 0.52f}, FS_MAT_JELLY, 0);
        fs_world_step(e.w);
        int pb, bb, cb = fs__unified_components(e.w, &pb, &bb);
        REPORT("merge scene: %d bodies, %d pairs; reset, a jelly block of %d: %d body of %d, %d pairs", ca, pa, n, cb,
               bb, pb);
        CHECK(cb == 1 && bb == n, "the block after a reset is not one fresh body");
        drop_world(&e);
    }
    /* the shape bodies (bodies.c) under the unified solver: the Clavet scene
     * "floating" (a pool and six bodies) */
    uenv e = make_world(4000, 2, (fs_vec3){1, 1, 1}, (fs_vec3){0, -9.81f, 0});
    fs_error err;
    to_unified(e.w);
    CHECK(fs_world_load_scene(e.w, "floating", 3000, &err) == FS_OK, "floating: %s", err.msg);
    steps(e.w, SAN ? 30 : 120);
    fs_domain d = fs_world_domain(e.w);
    int inside = 0, nb = fs_world_body_count(e.w);
    float lowest = 1e9f, highest = -1e9f;
    for (int k = 0; k < nb; k++) {
        fs_body_state b;
        fs_world_body_at(e.w, k, &b);
        inside += b.pos.y > d.box_min.y && b.pos.y < d.box_max.y && isfinite(b.pos.x);
        lowest = fminf(lowest, b.pos.y), highest = fmaxf(highest, b.pos.y);
    }
    float pen = fs_world_body_penetration(e.w);
    REPORT("floating under the unified solver, %.1f s: %d of %d bodies inside, heights %.2f .. %.2f m, deepest "
           "particle in a body %.3f m",
           (SAN ? 30 : 120) / 60.0, inside, nb, lowest, highest, pen);
    CHECK(inside == nb && finite_inside(e.w), "bodies or particles left the box");
    /* settled (2 s): no particle inside a body; while the bodies still fall
     * in (the sanitizer build's 0.5 s) a few may be pressed between a body
     * and the floor for a step */
    if (!SAN) CHECK(pen < 0.5f * S, "particles deep inside bodies: %.3f m", pen);
#if defined(__GLIBC__) && !SAN
    /* no allocation in the step */
    fs_world_load_scene(e.w, "chocolate_bunny", 3000, &err);
    fs_emitter_def em = {{0.5f, 0.8f, 0.5f}, {0, -1, 0}, 1.0f, 0.1f, 200.0f, 0, FS_MAT_CHOCOLATE, true};
    fs_world_set_emitter(e.w, -1, &em, NULL);
    fs_drain_def dr = {{0, 0, 0}, 0.3f, true};
    fs_world_set_drain(e.w, -1, &dr, NULL);
    fs_world_step(e.w);
    struct mallinfo2 a = mallinfo2();
    steps(e.w, 60);
    struct mallinfo2 b = mallinfo2();
    fs_stats st;
    fs_world_stats(e.w, &st);
    REPORT("chocolate_bunny with an emitter and a drain, 60 steps (%llu emitted, %llu drained): heap %zu -> %zu bytes",
           (unsigned long long)st.emitted, (unsigned long long)st.drained, a.uordblks, b.uordblks);
    CHECK(a.uordblks == b.uordblks, "the step allocated %zd bytes", (ssize_t)(b.uordblks - a.uordblks));
#endif
    drop_world(&e);
}
