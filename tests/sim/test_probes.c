/* test_probes.c - the world's probes: their checks; in a still tank of
 * each solver a height probe reading the depth and a floor sensor reading
 * rho g h; in the dam break, the grid cells they read giving what a scan
 * over every particle gives, and a pressure sensor's value being the mean
 * over the step's sub-steps. */
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

/* A pressure sensor facing up (the top of a step in the water, say) sees
 * only the water in front of it: a particle 1 cm below its plane, moving
 * down at 2 m/s, adds nothing (before the rule it read its stagnation
 * pressure, 1/2 rho v^2 = 2 kPa, as SPHERIC's P5 on the box's top read the
 * front face's impact); the same particle 1 cm above it, 2 kPa and the
 * column's weight. */
void test_probes_face_side(void) {
    fs_world *w = fs_world_create(NULL);
    fs_error err;
    fs_probe_def d = probe("top", FS_PROBE_PRESSURE, (fs_vec3){0.5f, 0.3f, 0.5f}, (fs_vec3){0, 1, 0});
    CHECK(fs_world_add_probe(w, &d, &err) == 0, "add: %s", err.msg);
    float v[2];
    for (int k = 0; k < 2; k++) {
        fs_particles_view pv;
        fs_world_view(w, &pv);
        while (pv.count > 0) {
            CHECK(fs_world_remove_particle(w, pv.id[0]), "a particle removed");
            fs_world_view(w, &pv);
        }
        CHECK(fs_world_add_particle(w, (fs_vec3){0.5f, k ? 0.31f : 0.29f, 0.5f}, (fs_vec3){0, -2, 0}, FS_MAT_WATER) >=
                  0,
              "a particle added");
        fs_world_probes_measure(w);
        CHECK(fs_world_probe_get(w, 0, NULL, &v[k], NULL), "read");
    }
    REPORT("1 cm below the face: %.1f Pa; 1 cm above: %.1f Pa", (double)v[0], (double)v[1]);
    CHECK(v[0] == 0.0f, "water behind the face reads nothing (%g Pa)", (double)v[0]);
    CHECK(v[1] >= 2000.0f * 0.999f, "water in front of it does (%g Pa)", (double)v[1]);
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

/* The probes as fluid_sim.h defines them, over every particle in index
 * order (the order the world's sums take): a height probe's volume per unit
 * area, and Clavet's and unified's pressure model (column weight plus the
 * stagnation pressure).  The same float expressions as the world's, so the
 * values agree to the bit. */
static double column_ref(const fs_world *w, const double *rho, float cx, float y0, float cz, float R, double *vol) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float s = fs_world_domain(w).spacing, vp = s * s * s, R2 = R * R, norm = 6.0f / (3.14159265f * R2);
    double m = 0, V = 0;
    for (int i = 0; i < v.count; i++) {
        if (v.y[i] < y0) continue;
        float dx = v.x[i] - cx, dz = v.z[i] - cz, r2 = dx * dx + dz * dz;
        if (r2 >= R2) continue;
        float q = 1.0f - sqrtf(r2) / R, k = norm * q * q * vp;
        V += k, m += (double)k * (float)rho[v.material[i]];
    }
    *vol = V;
    return m;
}

static float probe_ref(const fs_world *w, const fs_probe_def *d) {
    fs_domain dom = fs_world_domain(w);
    double rho[256] = {0}, vol;
    for (int m = 0; m < fs_world_material_count(w); m++) rho[m] = fs_world_get_param(w, m, FS_P_MASS_DENSITY);
    float R = d->size > 0 ? d->size : fmaxf(dom.h, 2.0f * dom.spacing);
    if (d->kind == FS_PROBE_HEIGHT) {
        column_ref(w, rho, d->pos.x, d->pos.y, d->pos.z, R, &vol);
        return (float)vol;
    }
    R = fmaxf(R, dom.h);
    fs_vec3 n = d->normal, g = dom.gravity;
    float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z), hl = sqrtf(n.x * n.x + n.z * n.z);
    float cx = d->pos.x, cz = d->pos.z;
    if (hl > 1e-3f) cx += R * n.x / hl, cz += R * n.z / hl;
    double stat = gm * column_ref(w, rho, cx, d->pos.y, cz, R, &vol), num = 0, den = 0;
    fs_particles_view v;
    fs_world_view(w, &v);
    for (int i = 0; i < v.count; i++) {
        float dx = v.x[i] - d->pos.x, dy = v.y[i] - d->pos.y, dz = v.z[i] - d->pos.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= R * R || dx * n.x + dy * n.y + dz * n.z < 0) continue;
        float q = 1.0f - sqrtf(r2) / R, k = q * q;
        float un = v.vx[i] * n.x + v.vy[i] * n.y + v.vz[i] * n.z;
        if (un < 0) num += (double)k * 0.5 * (float)rho[v.material[i]] * un * un;
        den += k;
    }
    return (float)(stat + (den > 0 ? num / den : 0.0));
}

/* How many of the probes read other than the reference (MPS: the heights
 * only, its pressure being the solver's own field). */
static int probes_off(const fs_world *w, fs_solver s, int *compared) {
    int off = 0;
    for (int k = 0; k < fs_world_probe_count(w); k++) {
        fs_probe_def d;
        float v;
        fs_world_probe_get(w, k, &d, &v, NULL);
        if (s == FS_SOLVER_MPS && d.kind != FS_PROBE_HEIGHT) continue;
        float ref = probe_ref(w, &d);
        (*compared)++;
        if (v != ref) {
            off++;
            REPORT("%s: probe %s reads %.9g, every particle gives %.9g", fs_solver_name(s), d.name, v, ref);
        }
    }
    return off;
}

/* The probes look only at the neighbour grid's cells around them, though
 * the particles moved after the grid's last build: over the dam break's
 * first 0.7 s in each solver (the front hits the box from 0.45 s: without
 * the region widened by the particles' drift, Clavet's P1 and P2 miss
 * particles there), with a sphere of water added between steps (particles
 * after the sorted ones) and a particle removed (no cell order at all), they
 * read what a scan over every particle reads, to the bit.  The readings
 * compared are of the world as it stands (fs_world_probes_measure after the
 * step: a pressure sensor's step value is a mean over the sub-steps, each
 * read by the same walk).  Under the sanitizers (ten times slower), the
 * first 0.2 s. */
void test_probes_grid_walk(void) {
    for (int s = 0; s < FS_SOLVER_COUNT; s++) {
        fs_pool *pool = fs_pool_create(2);
        fs_world_def def = fs_default_world_def();
        def.capacity = 8000, def.worker_count = 2, def.parallel_for = fs_pool_parallel_for, def.task_user = pool;
        fs_world *w = fs_world_create(&def);
        fs_error err;
        CHECK(fs_world_set_solver(w, (fs_solver)s, &err) == FS_OK, "set_solver: %s", err.msg);
        CHECK(fs_world_load_scene(w, "spheric2", 4000, &err) == FS_OK, "load: %s", err.msg);
        int off = 0, compared = 0, steps = (int)ceilf((TL_SAN ? 0.2f : 0.7f) / fs_world_dt(w));
        for (int t = 1; t <= steps; t++) {
            fs_world_step(w);
            fs_world_probes_measure(w);
            off += probes_off(w, (fs_solver)s, &compared);
            if (t == steps / 2) {
                int added = fs_world_add_sphere(w, (fs_vec3){0.4f, 0.6f, 0.5f}, 0.15f, FS_MAT_WATER, 0.0f);
                CHECK(added > 0, "a sphere of water added");
                fs_world_probes_measure(w);
                off += probes_off(w, (fs_solver)s, &compared);
                fs_particles_view v;
                fs_world_view(w, &v);
                CHECK(fs_world_remove_particle(w, v.id[0]), "a particle removed");
                fs_world_probes_measure(w);
                off += probes_off(w, (fs_solver)s, &compared);
            }
        }
        REPORT("%s: %d probe readings compared with a scan over every particle, %d differ", fs_solver_name(s), compared,
               off);
        CHECK(compared > 0 && off == 0, "%s: %d of %d readings differ", fs_solver_name(s), off, compared);
        fs_world_destroy(w);
        fs_pool_destroy(pool);
    }
}

/* A pressure sensor's value is the mean over the step's sub-steps, weighted
 * by their time; a height probe's is the state at the step's end.  In each
 * solver, the dam break's first 0.6 s (the front hits the box from 0.45 s)
 * run as steps of 1/120 s (world a) and as steps of 1/60 s cut in two (world
 * b, def.substeps = 2: the same sub-steps, bit for bit): each of b's
 * pressures is the mean of a's two readings (to float rounding), each of its
 * heights a's second; and the sensors' mean does read the impact, which an
 * end-of-step sample need not. */
void test_probes_pressure_step_mean(void) {
    for (int s = 0; s < FS_SOLVER_COUNT; s++) {
        fs_world *w[2];
        fs_error err;
        for (int k = 0; k < 2; k++) {
            fs_world_def def = fs_default_world_def();
            def.capacity = 8000, def.dt = k ? 1.0f / 60.0f : 1.0f / 120.0f, def.substeps = k ? 2 : 1;
            w[k] = fs_world_create(&def);
            CHECK(fs_world_set_solver(w[k], (fs_solver)s, &err) == FS_OK, "set_solver: %s", err.msg);
            CHECK(fs_world_load_scene(w[k], "spheric2", 4000, &err) == FS_OK, "load: %s", err.msg);
        }
        const int np = fs_world_probe_count(w[1]), steps = TL_SAN ? 12 : 36;
        int off = 0, compared = 0;
        double worst = 0, p1max = 0;
        for (int t = 1; t <= steps; t++) {
            float a[2][FS_MAX_PROBES];
            for (int h = 0; h < 2; h++) {
                fs_world_step(w[0]);
                for (int k = 0; k < np; k++) fs_world_probe_get(w[0], k, NULL, &a[h][k], NULL);
            }
            fs_world_step(w[1]);
            for (int k = 0; k < np; k++) {
                fs_probe_def d;
                float b;
                fs_world_probe_get(w[1], k, &d, &b, NULL);
                const bool mean = d.kind == FS_PROBE_PRESSURE;
                const double want = mean ? 0.5 * ((double)a[0][k] + a[1][k]) : a[1][k];
                const double err_k = fabs(b - want), tol = mean ? 1e-5 * fmax(fabs(want), 10.0) : 0.0;
                worst = err_k > worst ? err_k : worst;
                if (mean && strcmp(d.name, "P1") == 0 && b > p1max) p1max = b;
                off += err_k > tol, compared++;
                if (err_k > tol)
                    REPORT("%s: %s at %.3f s reads %.9g, want %.9g", fs_solver_name((fs_solver)s), d.name, t / 60.0,
                           (double)b, want);
            }
        }
        REPORT("%s: %d readings of the cut steps against the halves, %d off (worst %.3g); P1 up to %.0f Pa",
               fs_solver_name((fs_solver)s), compared, off, worst, p1max);
        CHECK(compared == steps * np && off == 0, "%s: %d of %d readings off", fs_solver_name((fs_solver)s), off,
              compared);
        if (!TL_SAN) CHECK(p1max > 1000, "%s: P1 read the impact (%.0f Pa)", fs_solver_name((fs_solver)s), p1max);
        for (int k = 0; k < 2; k++) fs_world_destroy(w[k]);
    }
}
