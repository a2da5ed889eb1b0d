/* scene_spheric2.c - SPHERIC Benchmark Test 2 (the MARIN dam break on a
 * box, Kleefsman et al. 2005): a 3.22 x 1 x 1 m tank, a column of water
 * 1.228 m long and 0.55 m deep across its whole width at the far end, and a
 * 0.161 x 0.161 x 0.403 m box on its floor (a mesh obstacle made here, which
 * every solver meets), with the experiment's four height probes and eight
 * pressure sensors.  The gate is gone at t = 0 (the experiment's was pulled
 * up "almost instantaneously"): the column starts free.  The spacing is the
 * column's volume over n, cube-rooted, rounded to fit the depth
 * (column_lattice).  The box is centred across the tank
 * (as Lethe places it; the source's 0.295 m to each wall is rounded).
 *
 * Probe names follow the measured data's column labels, which swap two of
 * the source figure's: H1 stands at x = 1.488 m (nearest the reservoir),
 * H3 at 0.496 m (behind the box), H2 at 0.992 m, H4 at 2.638 m in the
 * reservoir; all on the centreline.  P1-P4 are on the box's face to the
 * reservoir, 0.021, 0.061, 0.101, 0.141 m up; P5-P8 on its top, 0.021 +
 * k 0.04 m back from that face; all 0.176 m from the box's side. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "scene_spheric2.h"

/* A closed box mesh lo..hi, triangles counter-clockwise from outside. */
static void box_mesh(fs_vec3 lo, fs_vec3 hi, fs_vec3 v[8], uint32_t t[36]) {
    for (int i = 0; i < 8; i++) v[i] = (fs_vec3){(i & 1) ? hi.x : lo.x, (i & 2) ? hi.y : lo.y, (i & 4) ? hi.z : lo.z};
    static const uint32_t quads[6][4] = {{0, 2, 6, 4}, {1, 3, 7, 5}, {0, 1, 5, 4},
                                         {2, 3, 7, 6}, {0, 1, 3, 2}, {4, 5, 7, 6}};
    fs_vec3 c = {0.5f * (lo.x + hi.x), 0.5f * (lo.y + hi.y), 0.5f * (lo.z + hi.z)};
    for (int f = 0; f < 6; f++) {
        const uint32_t *q = quads[f];
        uint32_t tri[2][3] = {{q[0], q[1], q[2]}, {q[0], q[2], q[3]}};
        for (int k = 0; k < 2; k++) {
            fs_vec3 a = v[tri[k][0]], b = v[tri[k][1]], d = v[tri[k][2]];
            fs_vec3 e1 = {b.x - a.x, b.y - a.y, b.z - a.z}, e2 = {d.x - a.x, d.y - a.y, d.z - a.z};
            fs_vec3 n = {e1.y * e2.z - e1.z * e2.y, e1.z * e2.x - e1.x * e2.z, e1.x * e2.y - e1.y * e2.x};
            fs_vec3 m = {(a.x + b.x + d.x) / 3 - c.x, (a.y + b.y + d.y) / 3 - c.y, (a.z + b.z + d.z) / 3 - c.z};
            bool out = n.x * m.x + n.y * m.y + n.z * m.z > 0;
            uint32_t *o = t + 3 * (2 * f + k);
            o[0] = tri[k][0], o[1] = out ? tri[k][1] : tri[k][2], o[2] = out ? tri[k][2] : tri[k][1];
        }
    }
}

static fs_status add_probe(fs_world *w, const char *name, fs_probe_kind kind, fs_vec3 pos, fs_vec3 normal,
                           fs_error *err) {
    fs_probe_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", name);
    d.kind = kind, d.pos = pos, d.normal = normal;
    return fs_world_add_probe(w, &d, err) >= 0 ? FS_OK : FS_ERR_ARG;
}

static fs_status add_probes(fs_world *w, fs_error *err) {
    static const char *hn[4] = {"H1", "H2", "H3", "H4"};
    static const float hx[4] = {1.488f, 0.992f, 0.496f, 2.638f};
    const float zc = 0.5f * SPHERIC2_TANK_Z, zs = SPHERIC2_BOX_Z0 + 0.176f;
    fs_status st = FS_OK;
    for (int k = 0; k < 4 && st == FS_OK; k++)
        st = add_probe(w, hn[k], FS_PROBE_HEIGHT, (fs_vec3){hx[k], 0, zc}, (fs_vec3){0, 1, 0}, err);
    for (int k = 0; k < 4 && st == FS_OK; k++) {
        char name[4] = {'P', (char)('1' + k), 0, 0};
        float y = 0.021f + 0.04f * (float)k;
        st = add_probe(w, name, FS_PROBE_PRESSURE, (fs_vec3){SPHERIC2_BOX_X1, y, zs}, (fs_vec3){1, 0, 0}, err);
    }
    for (int k = 0; k < 4 && st == FS_OK; k++) {
        char name[4] = {'P', (char)('5' + k), 0, 0};
        float x = SPHERIC2_BOX_X1 - 0.021f - 0.04f * (float)k;
        st = add_probe(w, name, FS_PROBE_PRESSURE, (fs_vec3){x, SPHERIC2_BOX_Y, zs}, (fs_vec3){0, 1, 0}, err);
    }
    return st;
}

/* The column's lattice, fitted to the tank: the spacing s0 (the column's
 * volume over n, cube-rooted) rounded so that a whole number of layers
 * makes the depth exactly, the column laid from the reservoir wall (its
 * length to the nearest spacing), and across the tank the rows that fit
 * with at most 0.15 spacings of overlap a side, centred.  Every particle
 * that touches a wall then stands 0.35 to 0.85 spacings from it (0.5 on a
 * perfect fit).  A lattice laid from one corner left the rows at the far
 * side wall 0.12 spacings from it at 62k particles (1.0 m is 44.6 of its
 * spacings), and the pressure that pushed them off lifted the reservoir's
 * surface 2 cm in the first 0.1 s. */
static void column_lattice(int n, float *s, fs_vec3 *lo, fs_vec3 *hi) {
    const float len = SPHERIC2_TANK_X - SPHERIC2_COLUMN_X0,
                s0 = cbrtf(len * SPHERIC2_COLUMN_Y * SPHERIC2_TANK_Z / (float)n);
    const int ny = (int)fmaxf(1.0f, roundf(SPHERIC2_COLUMN_Y / s0));
    *s = SPHERIC2_COLUMN_Y / (float)ny;
    const int nx = (int)fmaxf(1.0f, roundf(len / *s)), nz = (int)fmaxf(1.0f, roundf(SPHERIC2_TANK_Z / *s - 0.2f));
    const float z0 = 0.5f * (SPHERIC2_TANK_Z - (float)nz * *s);
    /* add_block places centres at lo + (k + 1/2) s up to hi: hi half a spacing short of the next row's centre */
    *lo = (fs_vec3){SPHERIC2_TANK_X - (float)nx * *s, 0, z0};
    *hi = (fs_vec3){SPHERIC2_TANK_X - 0.25f * *s, SPHERIC2_COLUMN_Y - 0.25f * *s, z0 + ((float)nz - 0.25f) * *s};
}

fs_status fs__build_spheric2(fs_world *w, int n, float h_over_s, fs_error *err) {
    float s;
    fs_vec3 lo, hi;
    column_lattice(n, &s, &lo, &hi);
    fs_domain d = {{0, 0, 0}, {SPHERIC2_TANK_X, SPHERIC2_TANK_Y, SPHERIC2_TANK_Z}, {0, -9.81f, 0}, h_over_s * s, s,
                   0.5f * s};
    fs_status st = fs_world_reset(w, &d, err);
    if (st != FS_OK) return st;
    fs_vec3 v[8];
    uint32_t t[36];
    box_mesh((fs_vec3){SPHERIC2_BOX_X0, 0, SPHERIC2_BOX_Z0},
             (fs_vec3){SPHERIC2_BOX_X1, SPHERIC2_BOX_Y, SPHERIC2_BOX_Z1}, v, t);
    fs_mesh m = {v, 8, t, 12};
    if (fs_world_add_obstacle(w, &m, (fs_vec3){0, 0, 0}, (fs_quat){1, 0, 0, 0}, 1.0f, err) < 0) return FS_ERR_ARG;
    fs_world_add_block(w, lo, hi, FS_MAT_WATER, 0.0f);
    return add_probes(w, err);
}
