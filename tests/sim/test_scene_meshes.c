/* test_scene_meshes.c - the built-in scenes made of meshes (funnel: an open
 * funnel over an open glass; harbour: a dam break against a closed
 * breakwater; their meshes are scripts/make_scene_meshes.py's): each loads
 * with its obstacles, and over 120 ticks, checked every 10, no particle lies
 * inside a closed obstacle (an independent point-in-mesh test), none is
 * non-finite or outside the box, none was repaired, and the water reaches
 * the meshes (or the check could not fail). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "sim_tests.h"
#include "test_meshes.h"
#include "testlib.h"

#define TICKS 120

typedef struct counts {
    int inside, near, bad, in_glass, in_funnel, outside_cone;
} counts;

/* The particles inside a closed obstacle (its placed mesh, bounding box
 * first), within 2 spacings of any obstacle's surface, and non-finite or
 * outside the box. */
static void count(const fs_world *w, counts *c) {
    fs_particles_view v;
    fs_world_view(w, &v);
    const fs_domain d = fs_world_domain(w);
    memset(c, 0, sizeof *c);
    for (int i = 0; i < v.count; i++) {
        const fs_vec3 x = {v.x[i], v.y[i], v.z[i]};
        const bool ok = isfinite(x.x) && isfinite(x.y) && isfinite(x.z) && x.x >= d.box_min.x && x.x <= d.box_max.x &&
                        x.y >= d.box_min.y && x.y <= d.box_max.y && x.z >= d.box_min.z && x.z <= d.box_max.z;
        c->bad += !ok;
        c->near += fs_world_obstacle_distance(w, x) < 2 * d.spacing;
        for (int k = 0; k < fs_world_obstacle_count(w); k++) {
            fs_obstacle_state o;
            fs_mesh m;
            fs_world_obstacle_at(w, k, &o);
            if (!o.closed || x.x < o.lo.x || x.y < o.lo.y || x.z < o.lo.z || x.x > o.hi.x || x.y > o.hi.y ||
                x.z > o.hi.z)
                continue;
            fs_world_obstacle_mesh(w, k, &m);
            c->inside += tm_inside(&m, x);
        }
    }
}

/* The funnel scene's regions (tank width L, the meshes' layout in
 * scenes.c): in the glass, in the funnel (inside its cone or spout), and
 * beside the cone's outer face (within 0.05 L of it, under its rim: water
 * there went through the shell, or around its rim). */
static void funnel_regions(const fs_world *w, counts *c) {
    fs_particles_view v;
    fs_world_view(w, &v);
    const fs_domain d = fs_world_domain(w);
    const float L = d.box_max.x, s = d.spacing;
    for (int i = 0; i < v.count; i++) {
        const float dx = v.x[i] - 0.5f * L, dz = v.z[i] - 0.5f * L, r = sqrtf(dx * dx + dz * dz) / L, y = v.y[i] / L;
        c->in_glass += r < 0.2f && y < 0.32f;
        const float fy = y - 0.38f; /* funnel coordinates: spout 0..0.1, cone 0.1..0.3 */
        const float rf = fy < 0.1f ? 0.08f : 0.08f + 0.22f * (fy - 0.1f) / 0.2f;
        if (fy >= 0 && fy <= 0.3f) {
            c->in_funnel += r < rf;
            c->outside_cone += r > rf + s / L && r < rf + 0.05f;
        }
    }
}

static void scene(const char *name, int want_obstacles, bool closed) {
    fs_world_def def = fs_default_world_def();
    def.capacity = 25000;
    fs_world *w = fs_world_create(&def);
    fs_error err = {{0}};
    CHECK(fs_world_load_scene(w, name, 0, &err) == FS_OK, "%s: %s", name, err.msg);
    CHECK(fs_world_obstacle_count(w) == want_obstacles, "%s: %d obstacles", name, fs_world_obstacle_count(w));
    int nclosed = 0, tris = 0;
    for (int k = 0; k < fs_world_obstacle_count(w); k++) {
        fs_obstacle_state o;
        fs_world_obstacle_at(w, k, &o);
        nclosed += o.closed, tris += o.triangles;
    }
    CHECK(nclosed == (closed ? want_obstacles : 0), "%s: %d closed obstacles", name, nclosed);
    const bool funnel = !strcmp(name, "funnel");
    counts worst = {0}, c;
    for (int t = 1; t <= TICKS; t++) {
        fs_world_step(w);
        if (t % 10) continue;
        count(w, &c);
        if (funnel) funnel_regions(w, &c);
        worst.inside = c.inside > worst.inside ? c.inside : worst.inside;
        worst.near = c.near > worst.near ? c.near : worst.near;
        worst.bad = c.bad > worst.bad ? c.bad : worst.bad;
        worst.in_funnel = c.in_funnel > worst.in_funnel ? c.in_funnel : worst.in_funnel;
        worst.outside_cone = c.outside_cone > worst.outside_cone ? c.outside_cone : worst.outside_cone;
    }
    fs_stats st;
    fs_world_stats(w, &st);
    REPORT("%s: %d obstacles (%d triangles, %d closed), %d particles after %d ticks; every 10 ticks at most %d inside "
           "a closed obstacle, up to %d within 2 spacings of one, %d bad; repaired %llu, clamped %llu",
           name, want_obstacles, tris, nclosed, st.particles, TICKS, worst.inside, worst.near, worst.bad,
           (unsigned long long)st.nonfinite_repaired, (unsigned long long)st.escapes_clamped);
    if (funnel)
        REPORT("funnel: up to %d particles in the funnel, %d beside its cone's outer face; %d in the glass at the end",
               worst.in_funnel, worst.outside_cone, c.in_glass);
    CHECK(worst.near > 50, "%s: the water never reached the meshes (%d near): the check could not fail", name,
          worst.near);
    CHECK(worst.inside == 0, "%s: %d particles inside a closed obstacle", name, worst.inside);
    CHECK(worst.bad == 0, "%s: %d particles non-finite or outside the box", name, worst.bad);
    CHECK(st.nonfinite_repaired == 0, "%s: %llu particles repaired", name, (unsigned long long)st.nonfinite_repaired);
    CHECK(st.escapes_clamped == 0, "%s: %llu escapes clamped", name, (unsigned long long)st.escapes_clamped);
    if (funnel) {
        CHECK(worst.in_funnel > 50, "funnel: the jet never filled the funnel (%d)", worst.in_funnel);
        CHECK(worst.outside_cone == 0, "funnel: %d particles went through the cone's shell", worst.outside_cone);
    }
    fs_world_destroy(w);
}

void test_scene_meshes(void) {
    scene("funnel", 2, false);
    scene("harbour", 1, true);
}
