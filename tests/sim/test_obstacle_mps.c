/* test_obstacle_mps.c - the MPS solver's mesh obstacles (wall particles
 * sampled from the mesh's distance field in the layers of its box walls):
 * a tank whose walls are a mesh holds the hydrostatic pressure, as the
 * box tank of test_mps.c does. */
#include <math.h>
#include <stdlib.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "test_meshes.h"
#include "testlib.h"

#define SAN TL_SAN

/* The hydrostatic tank of test_mps.c (14 x 20 x 7 particles of 2 cm, 1 s
 * to settle, then the pressure averaged over 3 s by layer of the central
 * columns), its walls and floor a closed mesh 3 spacings thick with a well
 * of the tank's size (tm_cup), in a domain box no larger than the mesh
 * (whose walls then lie outside the mesh's). */
void test_obstacle_mps_tank(void) {
    const float l0 = 0.02f, T = 3 * l0;
    const int nx = SAN ? 10 : 14, ny = SAN ? 12 : 20, nz = 7;
    fs_pool *pool = fs_pool_create(2);
    fs_world_def d = fs_default_world_def();
    d.capacity = 20000;
    d.worker_count = 2;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err = {{0}};
    CHECK(fs_world_set_solver(w, FS_SOLVER_MPS, &err) == FS_OK, "mps: %s", err.msg);
    const fs_vec3 box = {nx * l0 + 2 * T, ny * l0 + T + 8 * l0, nz * l0 + 2 * T};
    fs_domain dom = {{0, 0, 0}, box, {0, -9.81f, 0}, 3.1f * l0, l0, 0.5f * l0};
    CHECK(fs_world_reset(w, &dom, &err) == FS_OK, "reset: %s", err.msg);
    tmesh cup = tm_cup((fs_vec3){0, 0, 0}, (fs_vec3){box.x, T + (ny + 4) * l0, box.z}, T);
    fs_mesh m = tm_view(&cup);
    CHECK(fs_mesh_check_closed(&m, &err) == FS_OK, "the tank's mesh: %s", err.msg);
    CHECK(fs_world_add_obstacle(w, &m, (fs_vec3){0, 0, 0}, (fs_quat){1, 0, 0, 0}, 1, &err) >= 0, "tank: %s", err.msg);
    tm_free(&cup);
    const int n =
        fs_world_add_block(w, (fs_vec3){T, T, T}, (fs_vec3){T + nx * l0, T + ny * l0, T + nz * l0}, FS_MAT_WATER, 0.0f);
    CHECK(n == nx * ny * nz, "%d particles in the well", n);
    const float H = ny * l0, rho = 1000.0f, g = 9.81f;
    const int settle = 60, avg = SAN ? 30 : 180;
    for (int t = 0; t < settle; t++) fs_world_step(w);
    enum { LAYERS = 64 };
    double psum[LAYERS] = {0}, ysum[LAYERS] = {0};
    long cnt[LAYERS] = {0};
    float *P = malloc(sizeof(float) * (size_t)n);
    int escaped = 0;
    for (int t = 0; t < avg; t++) {
        fs_world_step(w);
        fs_particles_view v;
        fs_world_view(w, &v);
        int k = fs_world_mps_fields(w, P, NULL, n);
        for (int i = 0; i < k; i++) {
            escaped += v.x[i] < T || v.x[i] > T + nx * l0 || v.z[i] < T || v.z[i] > T + nz * l0 || v.y[i] < T;
            int layer = (int)floorf((v.y[i] - T) / l0);
            if (layer < 0 || layer >= LAYERS || v.x[i] < T + 3 * l0 || v.x[i] > T + (nx - 3) * l0) continue;
            psum[layer] += P[i], ysum[layer] += v.y[i] - T, cnt[layer]++;
        }
    }
    fs_mps_info in;
    fs_world_mps_info(w, &in);
    REPORT("a tank of %d x %d x %d particles (l0 = %.0f mm) in a mesh 3 spacings thick: %d wall particles (box and "
           "mesh)",
           nx, ny, nz, l0 * 1e3, in.walls);
    double worst = 0, sum = 0;
    int used = 0;
    for (int k = 0; k < ny; k++) {
        if (!cnt[k]) continue;
        double y = ysum[k] / cnt[k], p = psum[k] / cnt[k], dd = H - y, ref = rho * g * dd, e = (p - ref) / ref;
        if (dd > 0.25 * H) worst = fmax(worst, fabs(e)), sum += fabs(e), used++;
        if (k % 3 == 1 || k == ny - 1)
            REPORT("  depth %.3f m: p = %7.1f Pa, rho g d = %7.1f Pa, error %+5.1f%%", dd, p, ref, 100 * e);
    }
    REPORT("pressure below the top quarter: mean |error| %.2f%%, worst %.2f%% (the box tank of mps_hydrostatic: "
           "0.3%%, 0.6%%); particle steps outside the well: %d",
           used ? 100 * sum / used : 0.0, 100 * worst, escaped);
    CHECK(used > 3, "too few layers");
    CHECK(worst < (SAN ? 0.15 : 0.02), "hydrostatic pressure off by %.2f%% (mean %.2f%%)", 100 * worst,
          100 * sum / used);
    CHECK(escaped == 0, "%d particle steps outside the well", escaped);
    free(P);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
}
