/* test_obstacles.c - static mesh obstacles (a sampled signed distance field
 * met as a static body, Clavet 2005 Eq. 9-12): the world's calls and their
 * refusals, the field's distances, and no particle inside a closed obstacle
 * through a dam break against it, in the Clavet and unified solvers. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "fluid_sim.h"
#include "sim_tests.h"
#include "test_meshes.h"
#include "testlib.h"

/* Sanitizer builds run ~10x slower: they run the short versions (TL_SAN). */
#define SAN TL_SAN

static const float S = 0.08f;

typedef struct oenv {
    fs_world *w;
    fs_pool *pool;
} oenv;

/* A world of spacing S in a box from the origin; the mps solver's worlds
 * take h = 3.1 S (its Laplacian's radius, as its scenes), the others 2.1 S. */
static oenv make_solver_world(int cap, fs_vec3 box, fs_solver solver) {
    oenv e = {0};
    fs_world_def d = fs_default_world_def();
    d.capacity = cap;
    e.pool = fs_pool_create(2);
    d.worker_count = 2;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = e.pool;
    e.w = fs_world_create(&d);
    fs_error err = {{0}};
    CHECK(fs_world_set_solver(e.w, solver, &err) == FS_OK, "solver: %s", err.msg);
    fs_domain dom = {{0, 0, 0}, box, {0, -9.81f, 0}, (solver == FS_SOLVER_MPS ? 3.1f : 2.1f) * S, S, 0.5f * S};
    fs_world_reset(e.w, &dom, NULL);
    return e;
}

static oenv make_world(int cap, fs_vec3 box) {
    return make_solver_world(cap, box, FS_SOLVER_CLAVET);
}

static void drop_world(oenv *e) {
    fs_world_destroy(e->w);
    fs_pool_destroy(e->pool);
}

static const fs_quat ID = {1, 0, 0, 0};

void test_obstacle_api(void) {
    oenv e = make_world(2000, (fs_vec3){2, 1, 1});
    fs_error err = {{0}};
    tmesh box = tm_box((fs_vec3){0, 0, 0}, 0.2f, 0.2f, 0.2f);
    fs_mesh m = tm_view(&box);
    int64_t a = fs_world_add_obstacle(e.w, &m, (fs_vec3){1, 0.5f, 0.5f}, ID, 1, &err);
    CHECK(a >= 0, "add: %s", err.msg);
    fs_obstacle_state s;
    CHECK(fs_world_obstacle_at(e.w, 0, &s) && s.id == (uint32_t)a && s.closed && s.triangles == 12,
          "the first obstacle's state");
    REPORT("0.4 m cube obstacle: grid %d x %d x %d of %.3f m, box (%.2f %.2f %.2f)-(%.2f %.2f %.2f)", s.nodes[0],
           s.nodes[1], s.nodes[2], s.cell, s.lo.x, s.lo.y, s.lo.z, s.hi.x, s.hi.y, s.hi.z);
    CHECK(fabsf(s.lo.x - 0.8f) < 1e-6f && fabsf(s.hi.y - 0.7f) < 1e-6f, "placed bounds");

    /* the field: inside negative, outside the distance to the faces; exact
     * at the samples, and trilinear between them, which cuts the peak of
     * the distance on the medial axis (the centre) by up to a cell */
    const float probes[][4] = {{1.3f, 0.5f, 0.5f, 0.1f},    {1, 0.85f, 0.5f, 0.15f},     {1.05f, 0.5f, 0.62f, -0.08f},
                               {1.3f, 0.8f, 0.5f, 0.1414f}, {1.1f, 0.42f, 0.55f, -0.1f}, {1, 0.5f, 0.5f, -0.2f}};
    const int np = (int)(sizeof probes / sizeof probes[0]);
    float worst = 0, centre = 0;
    for (int k = 0; k < np; k++) {
        float d = fs_world_obstacle_distance(e.w, (fs_vec3){probes[k][0], probes[k][1], probes[k][2]});
        REPORT("field at (%.2f %.2f %.2f): %.4f m (exact %.4f)", probes[k][0], probes[k][1], probes[k][2], d,
               probes[k][3]);
        if (k < np - 1)
            worst = fmaxf(worst, fabsf(d - probes[k][3]));
        else
            centre = fabsf(d - probes[k][3]);
    }
    CHECK(worst < 0.25f * s.cell, "the field is off by %.4f m", worst);
    CHECK(centre < s.cell, "the field at the centre is off by %.4f m", centre);
    CHECK(fs_world_obstacle_distance(e.w, (fs_vec3){0.1f, 0.1f, 0.1f}) > 1e29f, "far from it: no distance");

    /* an open mesh is a shell */
    fs_mesh open = m;
    open.triangle_count = 10;
    int64_t b = fs_world_add_obstacle(e.w, &open, (fs_vec3){0.4f, 0.5f, 0.5f}, (fs_quat){2, 0, 0, 0}, 0.5f, &err);
    CHECK(b == a + 1, "add the shell: %s", err.msg);
    CHECK(fs_world_obstacle_at(e.w, 1, &s) && !s.closed && fabsf(s.rot.w - 1) < 1e-6f, "the shell's state");
    float ds = fs_world_obstacle_distance(e.w, (fs_vec3){0.4f, 0.5f, 0.5f});
    REPORT("the shell's field at its centre: %.3f m (0.1 m from its faces, less half a spacing)", ds);
    CHECK(fabsf(ds - (0.1f - 0.5f * S)) < 0.02f, "the shell's centre: %.3f", ds);

    /* refusals leave the world as it was */
    struct {
        fs_vec3 pos;
        fs_quat rot;
        float scale;
        const char *what;
    } bad[] = {{{1, 0.5f, 0.5f}, ID, 0, "scale"},         {{NAN, 0.5f, 0.5f}, ID, 1, "pos"},
               {{1, 0.5f, 0.5f}, {0, 0, 0, 0}, 1, "rot"}, {{1, 0.5f, 0.5f}, {INFINITY, 0, 0, 0}, 1, "rot"},
               {{50, 0.5f, 0.5f}, ID, 1, "outside"},      {{1, 0.5f, 0.5f}, ID, 1e5f, "scale"}};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        int64_t id = fs_world_add_obstacle(e.w, &m, bad[k].pos, bad[k].rot, bad[k].scale, &err);
        CHECK(id == -1 && strstr(err.msg, bad[k].what), "bad placement %zu: %lld %s", k, (long long)id, err.msg);
    }
    REPORT("refused: %s", err.msg);
    box.v[0].x = NAN;
    CHECK(fs_world_add_obstacle(e.w, &m, (fs_vec3){1, 0.5f, 0.5f}, ID, 1, &err) == -1 && strstr(err.msg, "vertex 0"),
          "a NaN vertex: %s", err.msg);
    box.v[0].x = -0.2f;
    CHECK(fs_world_obstacle_count(e.w) == 2, "refusals changed the world");

    /* the mps solver makes wall particles of them: both layers under the cube's faces, one in the shell */
    fs_mps_info mi;
    CHECK(fs_world_set_solver(e.w, FS_SOLVER_MPS, &err) == FS_OK && fs_world_mps_info(e.w, &mi),
          "to mps with obstacles: %s", err.msg);
    const int with_both = mi.walls;
    CHECK(fs_world_remove_obstacle(e.w, (uint32_t)b) && fs_world_mps_info(e.w, &mi), "remove the shell");
    const int with_cube = mi.walls;
    /* the cube of 5 spacings: 5^3 - 1 lattice points within two spacings of a face */
    fs_domain dom = fs_world_domain(e.w);
    fs_world_reset(e.w, &dom, NULL);
    fs_world_step(e.w);
    CHECK(fs_world_mps_info(e.w, &mi), "mps info");
    REPORT("mps wall particles: the box alone %d, with the 0.4 m cube %d, and the shell too %d", mi.walls, with_cube,
           with_both);
    CHECK(with_cube - mi.walls == 5 * 5 * 5 - 1, "the cube's wall particles: %d", with_cube - mi.walls);
    CHECK(with_both > with_cube, "the shell has no wall particles");
    CHECK(fs_world_set_solver(e.w, FS_SOLVER_CLAVET, &err) == FS_OK, "back to clavet: %s", err.msg);
    a = fs_world_add_obstacle(e.w, &m, (fs_vec3){1, 0.5f, 0.5f}, ID, 1, &err);
    b = fs_world_add_obstacle(e.w, &open, (fs_vec3){0.4f, 0.5f, 0.5f}, ID, 0.5f, &err);
    CHECK(a >= 0 && b == a + 1, "add them again: %s", err.msg);
    CHECK(fs_world_remove_obstacle(e.w, (uint32_t)a) && !fs_world_remove_obstacle(e.w, (uint32_t)a), "remove");
    CHECK(fs_world_obstacle_count(e.w) == 1 && fs_world_obstacle_at(e.w, 0, &s) && s.id == (uint32_t)b,
          "the other stays");
    fs_world_reset(e.w, &dom, NULL);
    CHECK(fs_world_obstacle_count(e.w) == 0, "reset clears the obstacles");
    /* in an mps world: the particles inside it leave, as a box obstacle's do */
    CHECK(fs_world_set_solver(e.w, FS_SOLVER_MPS, &err) == FS_OK, "mps: %s", err.msg);
    int n0 = fs_world_add_block(e.w, (fs_vec3){0.62f, 0, 0.2f}, (fs_vec3){1.42f, 0.8f, 0.8f}, FS_MAT_WATER, 0);
    CHECK(fs_world_add_obstacle(e.w, &m, (fs_vec3){1, 0.5f, 0.5f}, ID, 1, &err) >= 0, "in an mps world: %s", err.msg);
    REPORT("an mps world: %d particles, %d after the cube was added in their midst", n0, fs_world_particle_count(e.w));
    CHECK(fs_world_particle_count(e.w) == n0 - 5 * 5 * 5, "the particles inside the cube: %d of %d left",
          fs_world_particle_count(e.w), n0);
    tm_free(&box);
    drop_world(&e);
}

/* The obstacles of the dam break: a sphere sunk into the floor and a cube
 * turned about a skew axis, in world coordinates (what the check reads). */
typedef struct placed {
    fs_mesh m;
    fs_vec3 lo, hi;
} placed;

static int count_inside(const fs_world *w, const placed *P, int np) {
    fs_particles_view v;
    fs_world_view(w, &v);
    int inside = 0;
    for (int i = 0; i < v.count; i++) {
        fs_vec3 x = {v.x[i], v.y[i], v.z[i]};
        for (int k = 0; k < np; k++) {
            if (x.x < P[k].lo.x || x.y < P[k].lo.y || x.z < P[k].lo.z || x.x > P[k].hi.x || x.y > P[k].hi.y ||
                x.z > P[k].hi.z)
                continue;
            if (tm_inside(&P[k].m, x)) inside++;
        }
    }
    return inside;
}

/* Particles whose centre lies within 2 spacings of an obstacle's surface:
 * the fluid reached them. */
static int count_near(const fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    int near = 0;
    for (int i = 0; i < v.count; i++) near += fs_world_obstacle_distance(w, (fs_vec3){v.x[i], v.y[i], v.z[i]}) < 2 * S;
    return near;
}

/* A column of 10 x 15 x 10 particles released against the two obstacles;
 * every 10 ticks every particle is tested against the placed meshes.
 * with_obstacles = false: the same flow with the meshes only as regions
 * (the check must see particles there, or it could not fail). */
static void dam_break(fs_solver solver, bool with_obstacles, int ticks, int *worst_inside, int *most_near,
                      float *closest) {
    oenv e = make_solver_world(4000, (fs_vec3){3.2f, 1.6f, 0.8f}, solver);
    fs_error err = {{0}};
    fs_world_add_block(e.w, (fs_vec3){0, 0, 0}, (fs_vec3){0.8f, 1.2f, 0.8f}, FS_MAT_WATER, 0.0f);
    tmesh sph = tm_sphere((fs_vec3){0, 0, 0}, 1, 32, 16), cube = tm_box((fs_vec3){0, 0, 0}, 1, 1, 1);
    const fs_vec3 pos[2] = {{1.7f, 0.15f, 0.4f}, {2.5f, 0.3f, 0.4f}};
    const float scale[2] = {0.3f, 0.2f};
    const float ang = 0.61f, ax[3] = {0.28f, 0.93f, 0.24f}, al = sqrtf(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
    const fs_quat rot[2] = {
        ID, {cosf(ang / 2), sinf(ang / 2) * ax[0] / al, sinf(ang / 2) * ax[1] / al, sinf(ang / 2) * ax[2] / al}};
    tmesh *src[2] = {&sph, &cube};
    placed P[2];
    for (int k = 0; k < 2; k++) {
        fs_mesh m = tm_view(src[k]);
        if (with_obstacles) {
            int64_t id = fs_world_add_obstacle(e.w, &m, pos[k], rot[k], scale[k], &err);
            CHECK(id >= 0, "obstacle %d: %s", k, err.msg);
            fs_world_obstacle_mesh(e.w, k, &P[k].m);
        } else { /* placed here as the world would place it */
            for (int i = 0; i < src[k]->nv; i++) {
                fs_vec3 v = src[k]->v[i], u = {rot[k].x, rot[k].y, rot[k].z};
                v = (fs_vec3){v.x * scale[k], v.y * scale[k], v.z * scale[k]};
                fs_vec3 t = {2 * (u.y * v.z - u.z * v.y), 2 * (u.z * v.x - u.x * v.z), 2 * (u.x * v.y - u.y * v.x)};
                fs_vec3 c = {u.y * t.z - u.z * t.y, u.z * t.x - u.x * t.z, u.x * t.y - u.y * t.x};
                src[k]->v[i] = (fs_vec3){pos[k].x + v.x + rot[k].w * t.x + c.x, pos[k].y + v.y + rot[k].w * t.y + c.y,
                                         pos[k].z + v.z + rot[k].w * t.z + c.z};
            }
            P[k].m = tm_view(src[k]);
        }
        P[k].lo = fs_mesh_bounds_min(&P[k].m), P[k].hi = fs_mesh_bounds_max(&P[k].m);
    }
    *worst_inside = 0, *most_near = 0, *closest = 1e30f;
    for (int t = 1; t <= ticks; t++) {
        fs_world_step(e.w);
        if (t % 10) continue;
        int in = count_inside(e.w, P, 2);
        *worst_inside = in > *worst_inside ? in : *worst_inside;
        if (!with_obstacles) continue;
        int near = count_near(e.w);
        *most_near = near > *most_near ? near : *most_near;
        fs_particles_view v;
        fs_world_view(e.w, &v);
        for (int i = 0; i < v.count; i++)
            *closest = fminf(*closest, fs_world_obstacle_distance(e.w, (fs_vec3){v.x[i], v.y[i], v.z[i]}));
    }
    fs_stats st;
    fs_world_stats(e.w, &st);
    CHECK(st.nonfinite_repaired == 0, "%llu particles repaired", (unsigned long long)st.nonfinite_repaired);
    tm_free(&sph), tm_free(&cube);
    drop_world(&e);
}

static void obstacle_dam_break(fs_solver solver) {
    const int ticks = SAN ? 120 : 600;
    int inside, near, control_inside, unused_near;
    float closest, unused_closest;
    dam_break(solver, false, 120, &control_inside, &unused_near, &unused_closest);
    dam_break(solver, true, ticks, &inside, &near, &closest);
    REPORT("%s: without the obstacles up to %d particles lie in their meshes; with them, over %d ticks checked every "
           "10: at most %d inside, up to %d within 2 spacings of a surface, the closest centre %.4f m from one (the "
           "particle radius: %.2f m)",
           fs_solver_name(solver), control_inside, ticks, inside, near, closest, 0.5f * S);
    CHECK(control_inside > 50, "the flow never reaches the obstacles' region (%d): the check could not fail",
          control_inside);
    CHECK(near > 50, "the fluid never reached the obstacles (%d near)", near);
    CHECK(inside == 0, "%d particles inside an obstacle", inside);
    CHECK(closest > 0, "a particle's centre %.4f m inside the field", -closest);
}

void test_obstacle_dam_break_clavet(void) {
    obstacle_dam_break(FS_SOLVER_CLAVET);
}

void test_obstacle_dam_break_unified(void) {
    obstacle_dam_break(FS_SOLVER_UNIFIED);
}

void test_obstacle_dam_break_mps(void) {
    obstacle_dam_break(FS_SOLVER_MPS);
}

#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
void test_obstacle_no_allocation(void) {
    oenv e = make_world(4000, (fs_vec3){3.2f, 1.6f, 0.8f});
    fs_world_add_block(e.w, (fs_vec3){0, 0, 0}, (fs_vec3){0.8f, 1.2f, 0.8f}, FS_MAT_WATER, 0.0f);
    tmesh sph = tm_sphere((fs_vec3){1.2f, 0.3f, 0.4f}, 0.3f, 32, 16);
    fs_mesh m = tm_view(&sph);
    fs_error err = {{0}};
    CHECK(fs_world_add_obstacle(e.w, &m, (fs_vec3){0, 0, 0}, ID, 1, &err) >= 0, "%s", err.msg);
    tm_free(&sph);
    size_t bytes[2] = {0, 0};
    for (int s = 0; s < 2; s++) {
        if (s) fs_world_set_solver(e.w, FS_SOLVER_UNIFIED, NULL);
        fs_world_step(e.w);
        struct mallinfo2 a = mallinfo2();
        for (int t = 0; t < 60; t++) fs_world_step(e.w);
        struct mallinfo2 b = mallinfo2();
        bytes[s] = b.uordblks - a.uordblks;
    }
    REPORT("60 steps against a mesh obstacle: clavet allocated %zu bytes, unified %zu", bytes[0], bytes[1]);
    CHECK(bytes[0] == 0 && bytes[1] == 0, "the step allocated");
    drop_world(&e);
}
#endif

/* x below which 98% of the particles lie: the surge's front, robust to a
 * few splashed particles. */
static float front_x(const fs_world *w) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float *x = malloc(sizeof(float) * (size_t)v.count);
    for (int i = 0; i < v.count; i++) x[i] = v.x[i];
    int k = (int)(0.98f * (float)(v.count - 1));
    /* quickselect of the k-th smallest */
    int lo = 0, hi = v.count - 1;
    while (lo < hi) {
        float p = x[(lo + hi) / 2];
        int i = lo, j = hi;
        while (i <= j) {
            while (x[i] < p) i++;
            while (x[j] > p) j--;
            if (i <= j) {
                float t = x[i];
                x[i] = x[j], x[j] = t;
                i++, j--;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            break;
    }
    float f = x[k];
    free(x);
    return f;
}

/* The dam break against a 0.4 m cube on the floor across the middle of the
 * tank: a cube mesh obstacle, or a static box body of the same size; the
 * front at 0.3, 0.45 and 0.6 s (the surge meets the cube at 0.15 s and the
 * far wall after 0.6 s). */
static void cube_front(fs_solver solver, bool mesh, float front[3]) {
    oenv e = make_solver_world(4000, (fs_vec3){3.2f, 1.6f, 0.8f}, solver);
    fs_error err = {{0}};
    fs_world_add_block(e.w, (fs_vec3){0, 0, 0}, (fs_vec3){0.8f, 1.2f, 0.8f}, FS_MAT_WATER, 0.0f);
    const fs_vec3 at = {1.6f, 0.2f, 0.4f};
    if (mesh) {
        tmesh cube = tm_box((fs_vec3){0, 0, 0}, 0.2f, 0.2f, 0.2f);
        fs_mesh m = tm_view(&cube);
        CHECK(fs_world_add_obstacle(e.w, &m, at, ID, 1, &err) >= 0, "cube obstacle: %s", err.msg);
        tm_free(&cube);
    } else if (solver == FS_SOLVER_MPS) { /* its box obstacle of wall particles */
        CHECK(fs_world_mps_add_obstacle(e.w, (fs_vec3){at.x - 0.2f, at.y - 0.2f, at.z - 0.2f},
                                        (fs_vec3){at.x + 0.2f, at.y + 0.2f, at.z + 0.2f}, &err) == FS_OK,
              "box obstacle: %s", err.msg);
    } else {
        fs_body_def b = fs_default_body_def();
        b.shape = FS_SHAPE_BOX;
        b.size = (fs_vec3){0.2f, 0.2f, 0.2f};
        b.pos = at;
        b.is_static = true;
        CHECK(fs_world_create_body(e.w, &b, &err) >= 0, "box body: %s", err.msg);
    }
    const int at_tick[3] = {18, 27, 36};
    for (int t = 1, k = 0; k < 3; t++) {
        fs_world_step(e.w);
        if (t == at_tick[k]) front[k++] = front_x(e.w);
    }
    drop_world(&e);
}

/* tol: 2% in each solver.  Measured: Clavet 0.44%, where a body and an
 * obstacle are met at the same point of the step; unified 1.10% (cube
 * mesh 1.316, 1.913, 2.700 m; box body 1.316, 1.923, 2.670 m), which meets
 * both at the end of each of its internal steps, liquids slipping at both
 * (with water's friction of 0.05 at the body: 1.48%; with the body met
 * once a step, after the internal steps: 3.55%); mps 0.63% (the box obstacle's rail leaving by a face off the floor).
 */
static void cube_vs_box(fs_solver solver, float tol) {
    float fm[3], fb[3], worst = 0;
    cube_front(solver, true, fm);
    cube_front(solver, false, fb);
    for (int k = 0; k < 3; k++) worst = fmaxf(worst, fabsf(fm[k] - fb[k]) / fb[k]);
    REPORT("%s: front (98th percentile of x) at 0.3, 0.45, 0.6 s: cube mesh %.3f %.3f %.3f m, %s %.3f %.3f %.3f m: "
           "largest difference %.2f%%",
           fs_solver_name(solver), fm[0], fm[1], fm[2],
           solver == FS_SOLVER_MPS ? "box obstacle (fs_world_mps_add_obstacle)" : "static box body", fb[0], fb[1],
           fb[2], 100 * worst);
    CHECK(worst < tol, "the cube mesh and the box differ by %.2f%%", 100 * worst);
}

void test_obstacle_cube_vs_box_clavet(void) {
    cube_vs_box(FS_SOLVER_CLAVET, 0.02f);
}

void test_obstacle_cube_vs_box_unified(void) {
    cube_vs_box(FS_SOLVER_UNIFIED, 0.02f);
}

/* mps: the cube mesh's wall particles are the box obstacle's (the same
 * lattice, the same layers); the rails differ (the field's gradient, the
 * box's nearest face) only at its edges. */
void test_obstacle_cube_vs_box_mps(void) {
    cube_vs_box(FS_SOLVER_MPS, 0.02f);
}
