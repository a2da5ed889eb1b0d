/* test_body_mesh.c - rigid bodies of a closed mesh (FS_SHAPE_MESH): mass
 * and principal moments against the analytic solids of the mesh's own
 * volume, the body's frame, refusals, a floating mesh box against the
 * floating box body, contacts with the floor and another body, and no
 * allocation in the step. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "fluid_sim.h"
#include "sim_tests.h"
#include "test_meshes.h"
#include "test_tanks.h"
#include "testlib.h"

static void drop(fs_world *w, fs_pool *pool) {
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}

static void sort3(float v[3]) {
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (v[j] > v[j + 1]) {
                float t = v[j];
                v[j] = v[j + 1], v[j + 1] = t;
            }
}

static fs_quat axis_angle(float x, float y, float z, float a) {
    float l = sqrtf(x * x + y * y + z * z), s = sinf(a / 2) / l;
    return (fs_quat){cosf(a / 2), x * s, y * s, z * s};
}

/* The body of mesh m (placed with pos, rot, scale, density 800): its mass
 * against rho V (V the solid's analytic volume), and its principal moments
 * (sorted) against the analytic ones of the solid of the mesh's own volume,
 * want[] (sorted, per unit mass); returns the worst relative error. */
static double check_body(fs_world *w, const char *name, tmesh *tm, float scale, double V, const double want[3],
                         fs_vec3 centre) {
    fs_mesh m = tm_view(tm);
    fs_body_def d = fs_default_body_def();
    d.shape = FS_SHAPE_MESH;
    d.mesh = &m;
    d.scale = scale;
    d.density = 800;
    d.pos = (fs_vec3){1, 1, 1};
    d.rot = axis_angle(0.3f, 1, 0.2f, 0.9f);
    fs_error err = {{0}};
    int64_t id = fs_world_create_body(w, &d, &err);
    CHECK(id >= 0, "%s: %s", name, err.msg);
    fs_body_state s;
    if (!fs_world_body_get(w, (uint32_t)id, &s)) return 1;
    fs_mass_props mp;
    fs_mesh_mass_properties(&m, &mp, NULL);
    const double mass = 800 * V, mesh_mass = 800 * mp.volume * scale * scale * scale;
    float I[3] = {s.inertia.x, s.inertia.y, s.inertia.z};
    sort3(I);
    double worst = fabs(s.mass - mass) / mass;
    for (int k = 0; k < 3; k++) worst = fmax(worst, fabs(I[k] - want[k] * mesh_mass) / (want[k] * mesh_mass));
    /* the frame's origin: the placed mesh's centre of mass */
    fs_vec3 c = {centre.x * scale, centre.y * scale, centre.z * scale}, u = {d.rot.x, d.rot.y, d.rot.z};
    fs_vec3 t = {2 * (u.y * c.z - u.z * c.y), 2 * (u.z * c.x - u.x * c.z), 2 * (u.x * c.y - u.y * c.x)};
    fs_vec3 rc = {c.x + d.rot.w * t.x + u.y * t.z - u.z * t.y, c.y + d.rot.w * t.y + u.z * t.x - u.x * t.z,
                  c.z + d.rot.w * t.z + u.x * t.y - u.y * t.x};
    float dp = fabsf(s.pos.x - 1 - rc.x) + fabsf(s.pos.y - 1 - rc.y) + fabsf(s.pos.z - 1 - rc.z);
    REPORT("%s (%d triangles, scale %g): mass %.4f kg (rho V %.4f), principal moments %.4g %.4g %.4g kg m^2 "
           "(analytic of the mesh's volume %.4g %.4g %.4g): worst %.3f%%; centre off by %.1e m",
           name, tm->nt, scale, s.mass, mass, I[0], I[1], I[2], want[0] * mesh_mass, want[1] * mesh_mass,
           want[2] * mesh_mass, 100 * worst, dp);
    CHECK(dp < 1e-5f, "%s: the body's centre is off the placed mesh's by %g m", name, dp);
    return worst;
}

void test_body_mesh_mass(void) {
    fs_pool *pool;
    fs_world *w = world(100, 1, &pool);
    fs_domain dom = {{0, 0, 0}, {2, 2, 2}, {0, -9.81f, 0}, 0.168f, 0.08f, 0.04f};
    fs_world_reset(w, &dom, NULL);
    const double pi = TM_PI;
    /* a sphere of radius 0.1, placed at twice its size: I = 2/5 m r^2, r of the mesh's volume */
    tmesh sph = tm_sphere((fs_vec3){0.05f, 0, 0}, 0.1f, 96, 48);
    fs_mesh sm = tm_view(&sph);
    fs_mass_props mp;
    CHECK(fs_mesh_mass_properties(&sm, &mp, NULL) == FS_OK, "sphere mass properties");
    double r = cbrt(3 * mp.volume * 8 / (4 * pi)), is = 0.4 * r * r;
    const double ws[3] = {is, is, is};
    double e1 = check_body(w, "mesh sphere", &sph, 2, 4.0 / 3 * pi * 0.2 * 0.2 * 0.2, ws, mp.centre);
    /* a box of half extents 0.15, 0.1, 0.2: I = m/3 (b^2 + c^2), ... */
    tmesh box = tm_box((fs_vec3){0, 0.1f, 0}, 0.15f, 0.1f, 0.2f);
    const double a = 0.15, b = 0.1, c = 0.2;
    const double wb[3] = {(a * a + b * b) / 3, (b * b + c * c) / 3, (a * a + c * c) / 3};
    double wbs[3] = {wb[0], wb[1], wb[2]};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2 - i; j++)
            if (wbs[j] > wbs[j + 1]) {
                double t = wbs[j];
                wbs[j] = wbs[j + 1], wbs[j + 1] = t;
            }
    double e2 = check_body(w, "mesh box", &box, 1, 8 * a * b * c, wbs, (fs_vec3){0, 0.1f, 0});
    /* a torus R = 0.2, r = 0.06 about z: I_z = m (R^2 + 3/4 r^2), I_x = I_y = m (R^2 / 2 + 5/8 r^2), r of the
     * mesh's volume (V = 2 pi^2 R r^2) */
    tmesh tor = tm_torus((fs_vec3){0, 0, 0}, 0.2f, 0.06f, 128, 48);
    fs_mesh tmv = tm_view(&tor);
    CHECK(fs_mesh_mass_properties(&tmv, &mp, NULL) == FS_OK, "torus mass properties");
    const double R = 0.2, rt = sqrt(mp.volume / (2 * pi * pi * R));
    const double wt[3] = {R * R / 2 + 5.0 / 8 * rt * rt, R * R / 2 + 5.0 / 8 * rt * rt, R * R + 0.75 * rt * rt};
    double e3 = check_body(w, "mesh torus", &tor, 1, 2 * pi * pi * R * 0.06 * 0.06, wt, mp.centre);
    CHECK(e1 < 0.01 && e2 < 0.01 && e3 < 0.01, "mass or inertia off by %.3f%%, %.3f%%, %.3f%%", 100 * e1, 100 * e2,
          100 * e3);
    fs_mesh view;
    CHECK(fs_world_body_mesh(w, 2, &view) && view.triangle_count == tor.nt, "the torus body's mesh");
    /* refusals: an open mesh (named), no mesh, a bad scale; none changes the world */
    fs_body_def d = fs_default_body_def();
    d.shape = FS_SHAPE_MESH;
    fs_mesh open = tm_view(&box);
    open.triangle_count = 10;
    d.mesh = &open;
    d.pos = (fs_vec3){1, 1, 1};
    fs_error err = {{0}};
    uint64_t before = fs_world_hash(w);
    CHECK(fs_world_create_body(w, &d, &err) == -1 && strstr(err.msg, "edge"), "an open mesh: %s", err.msg);
    REPORT("refused: %s", err.msg);
    d.mesh = NULL;
    CHECK(fs_world_create_body(w, &d, &err) == -1 && strstr(err.msg, "mesh"), "no mesh: %s", err.msg);
    d.mesh = &sm;
    d.scale = 0;
    CHECK(fs_world_create_body(w, &d, &err) == -1 && strstr(err.msg, "scale"), "scale 0: %s", err.msg);
    d.scale = 100;
    CHECK(fs_world_create_body(w, &d, &err) == -1 && strstr(err.msg, "half extents"), "scale 100: %s", err.msg);
    CHECK(fs_world_hash(w) == before && fs_world_body_count(w) == 3, "a refusal changed the world");
    d.scale = 1;
    int64_t id = fs_world_create_body(w, &d, &err);
    CHECK(id == 3, "the next id after refusals: %lld (%s)", (long long)id, err.msg);
    /* destroy and make again: slots reused */
    for (int k = 0; k < 100; k++) {
        CHECK(fs_world_destroy_body(w, (uint32_t)id), "destroy");
        id = fs_world_create_body(w, &d, &err);
        if (id < 0) break;
    }
    CHECK(id >= 0, "made again: %s", err.msg);
    tm_free(&sph), tm_free(&box), tm_free(&tor);
    drop(w, pool);
}

/* A pool 1.6 x 0.8 x 1.6 m (as test_bodies.c's float_box), 4 substeps; a
 * 0.6 x 0.4 x 0.6 m box of 500 kg/m^3, a box body or a mesh box, dropped in;
 * the draught (below the mean top of the water away from it) over the last
 * of 5 s. */
static float draught(bool mesh) {
    fs_pool *pool;
    const float L = 1.6f;
    fs_world *w = water_tank(6000, 4, L, 0.8f, &pool);
    tmesh box = tm_box((fs_vec3){0, 0, 0}, 0.3f, 0.2f, 0.3f);
    fs_mesh m = tm_view(&box);
    fs_body_def b = fs_default_body_def();
    b.shape = mesh ? FS_SHAPE_MESH : FS_SHAPE_BOX;
    b.size = (fs_vec3){0.3f, 0.2f, 0.3f};
    b.mesh = &m;
    b.density = 500;
    b.pos = (fs_vec3){L / 2, 1.2f, L / 2};
    fs_error err = {{0}};
    int64_t id = fs_world_create_body(w, &b, &err);
    CHECK(id >= 0, "body: %s", err.msg);
    tm_free(&box);
    double ysum = 0;
    int ny = 0;
    for (int t = 0; t < 300; t++) {
        fs_world_step(w);
        if (t >= 240) {
            fs_body_state st;
            fs_world_body_get(w, (uint32_t)id, &st);
            ysum += st.pos.y, ny++;
        }
    }
    double level = water_level(w, L);
    drop(w, pool);
    return (float)(level - (ysum / ny - 0.2));
}

void test_body_mesh_floats(void) {
    float dm = draught(true), db = draught(false), e = fabsf(dm - db) / db;
    REPORT("a 0.6 x 0.4 x 0.6 m box of 500 kg/m^3 floating, mean over the 5th second: draught of the mesh box %.4f m, "
           "of the box body %.4f m: %.2f%% apart",
           dm, db, 100 * e);
    CHECK(e < 0.03f, "the mesh box floats %.2f%% off the box body", 100 * e);
}

/* No fluid: a mesh box dropped on the floor, a box body dropped on it, and
 * a mesh torus dropped beside them, 3 s: they come to rest on what is
 * under them (contacts by sampled points against the other's distance). */
void test_body_mesh_contacts(void) {
    fs_pool *pool;
    fs_world *w = world(100, 1, &pool);
    fs_domain dom = {{0, 0, 0}, {2, 3, 2}, {0, -9.81f, 0}, 0.168f, 0.08f, 0.04f};
    fs_world_reset(w, &dom, NULL);
    tmesh box = tm_box((fs_vec3){0, 0, 0}, 0.2f, 0.2f, 0.2f), tor = tm_torus((fs_vec3){0, 0, 0}, 0.2f, 0.06f, 48, 24);
    fs_mesh mb = tm_view(&box), mt = tm_view(&tor);
    fs_body_def d = fs_default_body_def();
    d.shape = FS_SHAPE_MESH;
    d.mesh = &mb;
    d.density = 600;
    d.pos = (fs_vec3){0.6f, 0.3f, 1};
    fs_error err = {{0}};
    int64_t a = fs_world_create_body(w, &d, &err);
    d.shape = FS_SHAPE_BOX;
    d.size = (fs_vec3){0.15f, 0.15f, 0.15f};
    d.pos = (fs_vec3){0.6f, 0.8f, 1};
    int64_t b = fs_world_create_body(w, &d, &err);
    d.shape = FS_SHAPE_MESH;
    d.mesh = &mt;
    d.pos = (fs_vec3){1.4f, 0.5f, 1};
    d.rot = axis_angle(1, 0, 0, 1.5707963f); /* the torus's axis along y: it lies flat */
    int64_t c = fs_world_create_body(w, &d, &err);
    CHECK(a >= 0 && b >= 0 && c >= 0, "bodies: %s", err.msg);
    for (int t = 0; t < 180; t++) fs_world_step(w);
    fs_body_state sa, sb, sc;
    fs_world_body_get(w, (uint32_t)a, &sa), fs_world_body_get(w, (uint32_t)b, &sb),
        fs_world_body_get(w, (uint32_t)c, &sc);
    const float speed = fmaxf(fabsf(sa.vel.y), fmaxf(fabsf(sb.vel.y), fabsf(sc.vel.y)));
    REPORT("after 3 s: the mesh cube's centre at %.4f m (resting: 0.2), the box body on it at %.4f m (0.55), the "
           "flat mesh torus at %.4f m (0.06); fastest %.4f m/s",
           sa.pos.y, sb.pos.y, sc.pos.y, speed);
    CHECK(fabsf(sa.pos.y - 0.2f) < 0.01f && fabsf(sb.pos.y - 0.55f) < 0.015f && fabsf(sc.pos.y - 0.06f) < 0.01f,
          "not resting where they should");
    CHECK(speed < 0.05f, "still moving at %.3f m/s", speed);
    tm_free(&box), tm_free(&tor);
    drop(w, pool);
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
void test_body_mesh_no_allocation(void) {
    fs_pool *pool;
    fs_world *w = world(4000, 1, &pool);
    fs_domain dom = {{0, 0, 0}, {1.6f, 1.6f, 0.8f}, {0, -9.81f, 0}, 0.168f, 0.08f, 0.04f};
    fs_world_reset(w, &dom, NULL);
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){0.8f, 1.2f, 0.8f}, FS_MAT_WATER, 0.0f);
    tmesh tor = tm_torus((fs_vec3){0, 0, 0}, 0.2f, 0.08f, 48, 24);
    fs_mesh m = tm_view(&tor);
    fs_body_def d = fs_default_body_def();
    d.shape = FS_SHAPE_MESH;
    d.mesh = &m;
    d.pos = (fs_vec3){1.2f, 0.3f, 0.4f};
    CHECK(fs_world_create_body(w, &d, NULL) >= 0, "the torus");
    tm_free(&tor);
    size_t bytes[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        if (s) fs_world_set_solver(w, FS_SOLVER_UNIFIED, NULL);
        fs_world_step(w);
        struct mallinfo2 x = mallinfo2();
        for (int t = 0; t < 60; t++) fs_world_step(w);
        struct mallinfo2 y = mallinfo2();
        bytes[s] = y.uordblks - x.uordblks;
    }
    REPORT("60 steps with a mesh body in a dam break: clavet allocated %zu bytes, unified %zu", bytes[0], bytes[1]);
    CHECK(bytes[0] == 0 && bytes[1] == 0, "the step allocated");
    drop(w, pool);
}
#endif
