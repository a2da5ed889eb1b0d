/* test_mesh.c - triangle meshes in the core: the checks (bounds, finite
 * coordinates, degenerate triangles, closedness naming the open edge) and
 * the exact mass properties against analytic solids. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "test_meshes.h"
#include "testlib.h"

void test_mesh_validation(void) {
    tmesh box = tm_box((fs_vec3){0, 0, 0}, 0.5f, 0.5f, 0.5f);
    fs_mesh m = tm_view(&box);
    fs_error err = {{0}};
    CHECK(fs_mesh_check(&m, &err) == FS_OK, "box refused: %s", err.msg);
    CHECK(fs_mesh_check_closed(&m, &err) == FS_OK, "box not closed: %s", err.msg);

    /* one triangle gone: its three edges each border one triangle */
    fs_mesh open = m;
    open.triangle_count = 11;
    fs_status st = fs_mesh_check_closed(&open, &err);
    REPORT("box without its last triangle: %s", err.msg);
    CHECK(st == FS_ERR_ARG && strstr(err.msg, "not closed") && strstr(err.msg, "borders no other triangle"),
          "open box: %d %s", (int)st, err.msg);
    /* the missing triangle is (4, 7, 6): its edges, reversed, are the open ones */
    CHECK(strstr(err.msg, "edge 6-7") || strstr(err.msg, "edge 7-4") || strstr(err.msg, "edge 4-6"),
          "the open edge is not one of the missing triangle's: %s", err.msg);

    /* one triangle turned over */
    uint32_t t0[3];
    memcpy(t0, box.t, sizeof t0);
    box.t[1] = t0[2], box.t[2] = t0[1];
    st = fs_mesh_check_closed(&m, &err);
    REPORT("box with a triangle turned over: %s", err.msg);
    CHECK(st == FS_ERR_ARG && strstr(err.msg, "the same way"), "flipped triangle: %d %s", (int)st, err.msg);
    memcpy(box.t, t0, sizeof t0);

    /* refusals of fs_mesh_check */
    fs_vec3 keep = box.v[3];
    box.v[3].y = NAN;
    st = fs_mesh_check(&m, &err);
    CHECK(st == FS_ERR_ARG && strstr(err.msg, "vertex 3"), "NaN vertex: %d %s", (int)st, err.msg);
    box.v[3].y = 2e4f;
    st = fs_mesh_check(&m, &err);
    CHECK(st == FS_ERR_RANGE, "vertex beyond the bound: %d %s", (int)st, err.msg);
    box.v[3] = keep;
    box.t[5] = 99;
    st = fs_mesh_check(&m, &err);
    CHECK(st == FS_ERR_RANGE && strstr(err.msg, "triangle 1"), "index out of range: %d %s", (int)st, err.msg);
    box.t[5] = box.t[4];
    st = fs_mesh_check(&m, &err);
    CHECK(st == FS_ERR_ARG && strstr(err.msg, "degenerate"), "repeated index: %d %s", (int)st, err.msg);
    memcpy(box.t + 3, (uint32_t[]){0, 2, 6}, sizeof t0);
    fs_vec3 k6 = box.v[6];
    box.v[6] = (fs_vec3){-0.5f, 1.5f, -0.5f}; /* 0, 2, 6 on one line */
    st = fs_mesh_check(&m, &err);
    REPORT("collinear triangle: %s", err.msg);
    CHECK(st == FS_ERR_ARG && strstr(err.msg, "degenerate"), "collinear corners: %d %s", (int)st, err.msg);
    box.v[6] = k6;
    fs_mesh none = m;
    none.triangle_count = 0;
    CHECK(fs_mesh_check(&none, &err) == FS_ERR_RANGE, "no triangles: %s", err.msg);
    none.triangle_count = FS_MESH_MAX_TRIANGLES + 1;
    CHECK(fs_mesh_check(&none, &err) == FS_ERR_RANGE, "too many triangles: %s", err.msg);
    CHECK(fs_mesh_check(NULL, &err) == FS_ERR_ARG, "NULL mesh");
    tm_free(&box);

    /* the generated solids are closed */
    tmesh sph = tm_sphere((fs_vec3){0, 0, 0}, 1, 24, 12), tor = tm_torus((fs_vec3){0, 0, 0}, 1, 0.3f, 24, 12);
    fs_mesh ms = tm_view(&sph), mt = tm_view(&tor);
    CHECK(fs_mesh_check_closed(&ms, &err) == FS_OK, "sphere: %s", err.msg);
    CHECK(fs_mesh_check_closed(&mt, &err) == FS_OK, "torus: %s", err.msg);
    tm_free(&sph), tm_free(&tor);
}

/* |a - b| / |b| */
static double rel(double a, double b) {
    return fabs(a - b) / fabs(b);
}

/* The largest off-diagonal element of I against its largest diagonal. */
static double off_diagonal(double I[3][3]) {
    double d = fmax(I[0][0], fmax(I[1][1], I[2][2]));
    return fmax(fabs(I[0][1]), fmax(fabs(I[1][2]), fabs(I[0][2]))) / d;
}

static void check_solid(const char *name, tmesh *t, double V_exact, fs_vec3 c, const double I_unit[3], double tol) {
    fs_mesh m = tm_view(t);
    fs_mass_props mp;
    fs_error err = {{0}};
    fs_status st = fs_mesh_mass_properties(&m, &mp, &err);
    CHECK(st == FS_OK, "%s: %s", name, err.msg);
    if (st != FS_OK) return;
    /* the analytic inertia for the mesh's own volume (mass at unit density) */
    double worst = 0;
    for (int a = 0; a < 3; a++) worst = fmax(worst, rel(mp.inertia[a][a], I_unit[a] * mp.volume));
    double dc = sqrt(pow(mp.centre.x - c.x, 2) + pow(mp.centre.y - c.y, 2) + pow(mp.centre.z - c.z, 2));
    REPORT("%s (%d triangles): volume %.6f (analytic %.6f, %.3f%%), centre off by %.2e, inertia within %.4f%% of "
           "the analytic for its volume, off-diagonal %.1e",
           name, t->nt, mp.volume, V_exact, 100 * rel(mp.volume, V_exact), dc, 100 * worst, off_diagonal(mp.inertia));
    CHECK(worst < tol, "%s: inertia off by %.3f%%", name, 100 * worst);
    CHECK(rel(mp.volume, V_exact) < 0.01, "%s: volume %.5f, analytic %.5f", name, mp.volume, V_exact);
    CHECK(dc < 1e-4, "%s: centre off by %g", name, dc);
    CHECK(off_diagonal(mp.inertia) < 1e-5, "%s: off-diagonal inertia", name);
}

void test_mesh_mass_properties(void) {
    /* box: exact */
    const float a = 0.7f, b = 0.3f, c = 0.2f;
    fs_vec3 at = {1.5f, -2.0f, 0.25f};
    tmesh box = tm_box(at, a, b, c);
    const double Ib[3] = {(b * b + c * c) / 3.0, (a * a + c * c) / 3.0, (a * a + b * b) / 3.0};
    check_solid("box", &box, 8.0 * a * b * c, at, Ib, 1e-6);

    /* the same box turned inside out (every triangle clockwise) */
    for (int t = 0; t < box.nt; t++) {
        uint32_t s = box.t[3 * t + 1];
        box.t[3 * t + 1] = box.t[3 * t + 2], box.t[3 * t + 2] = s;
    }
    check_solid("box inside out", &box, 8.0 * a * b * c, at, Ib, 1e-6);

    /* the box turned by 30 degrees about z: I = R diag R^T */
    const double th = TM_PI / 6, cs = cos(th), sn = sin(th);
    for (int k = 0; k < box.nv; k++) {
        double x = box.v[k].x - at.x, y = box.v[k].y - at.y;
        box.v[k].x = at.x + (float)(cs * x - sn * y), box.v[k].y = at.y + (float)(sn * x + cs * y);
    }
    fs_mesh mb = tm_view(&box);
    fs_mass_props mp;
    fs_error err = {{0}};
    CHECK(fs_mesh_mass_properties(&mb, &mp, &err) == FS_OK, "turned box: %s", err.msg);
    double V = mp.volume;
    double Ixx = V * (cs * cs * Ib[0] + sn * sn * Ib[1]), Iyy = V * (sn * sn * Ib[0] + cs * cs * Ib[1]);
    double Ixy = V * cs * sn * (Ib[0] - Ib[1]); /* -(product of inertia): R diag R^T's off-diagonal */
    REPORT("box turned 30 deg: Ixx %.6f (%.6f), Iyy %.6f (%.6f), Ixy %.6f (%.6f)", mp.inertia[0][0], Ixx,
           mp.inertia[1][1], Iyy, mp.inertia[0][1], Ixy);
    CHECK(rel(mp.inertia[0][0], Ixx) < 1e-5 && rel(mp.inertia[1][1], Iyy) < 1e-5 && rel(mp.inertia[0][1], Ixy) < 1e-4,
          "turned box's tensor");
    tm_free(&box);

    /* sphere: I = 2/5 V r^2 */
    const float r = 0.4f;
    fs_vec3 sc = {0.3f, 0.2f, -0.1f};
    tmesh sph = tm_sphere(sc, r, 96, 48);
    const double Is = 0.4 * r * r, Isv[3] = {Is, Is, Is};
    check_solid("sphere", &sph, 4.0 / 3.0 * TM_PI * r * r * r, sc, Isv, 0.01);
    tm_free(&sph);

    /* torus about z: Izz = V (R^2 + 3/4 r^2), Ixx = Iyy = V (R^2/2 + 5/8 r^2) */
    const float R = 0.5f, rr = 0.15f;
    tmesh tor = tm_torus((fs_vec3){0, 0, 0}, R, rr, 128, 48);
    const double It[3] = {R * R / 2.0 + 5.0 / 8.0 * rr * rr, R * R / 2.0 + 5.0 / 8.0 * rr * rr, R * R + 0.75 * rr * rr};
    check_solid("torus", &tor, 2.0 * TM_PI * TM_PI * R * rr * rr, (fs_vec3){0, 0, 0}, It, 0.01);

    /* an open mesh has no volume: refused */
    fs_mesh mt = tm_view(&tor);
    mt.triangle_count--;
    CHECK(fs_mesh_mass_properties(&mt, &mp, &err) == FS_ERR_ARG, "open torus accepted");
    REPORT("open torus: %s", err.msg);
    tm_free(&tor);
}
