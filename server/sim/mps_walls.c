/* mps_walls.c - the MPS solver's walls: the box's faces, the box
 * obstacles and the world's mesh obstacles as lattices of fixed particles
 * (Premoze et al. 2003, Sec. 3.2; Koshizuka's "dummy" particles),
 * WALL_LAYERS deep, and their grid; the rest-lattice constants of Eq. 5-8,
 * the safety rails, and fs_world_mps_add_obstacle.  The first layer takes part in the viscosity
 * (no-slip) and in the gradient and Eq. 14 with the mirrored pressure
 * (mps_pressure.c); the second only fills the number density.  Choices and
 * measurements: docs/sim-notes.md, "MPS", "Walls". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mps_internal.h"
#include "sim_testing.h"
#include "obstacles.h"
#include "sim_util.h"

/* ---- the rest-lattice constants of Eq. 5-8 ---------------------------------- */
static void lattice_constants(mps_state *s) {
    double n0 = 0, n0l = 0, r2w = 0, r2wn = 0, flat = 0;
    const double l0 = s->l0;
    int m = (int)(s->re_l / s->l0) + 2;
    for (int k = -m; k <= m; k++)
        for (int j = -m; j <= m; j++)
            for (int i = -m; i <= m; i++) {
                if (!i && !j && !k) continue;
                double r = l0 * sqrt((double)(i * i + j * j + k * k));
                if (r < s->re_n) n0 += s->re_n / r - 1.0, r2wn += r * r * (s->re_n / r - 1.0);
                if (r < s->re_l) n0l += s->re_l / r - 1.0, r2w += r * r * (s->re_l / r - 1.0);
                /* Eq. 39's n0^st1 on a flat face (z <= 0 filled): the neighbours deeper than i and half
                 * of those level with it (on a face that is not a perfect lattice, half of them are
                 * denser than i) */
                if (r < s->re_st && k <= 0) flat += k < 0 ? 1.0 : 0.5;
            }
    s->n0 = (float)n0;
    s->n0l = (float)n0l;
    s->lambda = (float)(r2w / n0l); /* Eq. 8 */
    s->lambda_n = (float)(r2wn / n0);
    s->nst_flat = (float)flat;
}

/* ---- the wall lattice --------------------------------------------------------- */
/* Lattice coordinates along one axis: WALL_LAYERS layers outside the low
 * face, the interior row lo + (k + 1/2) l0, WALL_LAYERS outside the high
 * face.  axis_interior gives how many interior rows; axis_coord the k-th
 * coordinate and its depth (0 inside, 1..WALL_LAYERS outside). */
static int axis_interior(float lo, float hi, float l0) {
    int m = 0;
    while (lo + ((float)m + 0.5f) * l0 <= hi - 0.25f * l0) m++;
    return m;
}

static float axis_coord(float lo, float hi, float l0, int m, int k, int *depth) {
    const int L = WALL_LAYERS;
    if (k < L) return *depth = L - k, lo - ((float)(L - k) - 0.5f) * l0;
    if (k < L + m) return *depth = 0, lo + ((float)(k - L) + 0.5f) * l0;
    return *depth = k - L + 1 - m, hi + ((float)(k - L - m) + 0.5f) * l0;
}

void fs__mps_free_walls(mps_state *s) {
    free(s->wx), free(s->wy), free(s->wz), free(s->wlayer), free(s->wg_start), free(s->wg_near);
    s->wx = s->wy = s->wz = NULL;
    s->wlayer = NULL;
    s->wg_near = NULL;
    s->wg_start = NULL;
    s->nwall = s->wall_cap = 0;
}

/* Appends a wall particle (counting only when s->wx is NULL). */
static void wall_put(mps_state *s, int *n, float x, float y, float z, int layer) {
    if (s->wx) {
        s->wx[*n] = x, s->wy[*n] = y, s->wz[*n] = z;
        s->wlayer[*n] = layer;
    }
    (*n)++;
}

/* the wall grid's cell of wall particle k */
static long wall_cell(const mps_state *s, int k) {
    const float p[3] = {s->wx[k], s->wy[k], s->wz[k]};
    int c[3];
    for (int a = 0; a < 3; a++) c[a] = fs__floor_clamp((p[a] - s->wg_lo[a]) * s->wg_inv, 0, s->wg_n[a] - 1);
    return ((long)c[2] * s->wg_n[1] + c[1]) * s->wg_n[0] + c[0];
}

/* A mesh obstacle's walls: the lattice of l0 over the placed mesh's box
 * (its low corner's, as a box obstacle's lattice is its own: a cube mesh
 * gives a box obstacle's particles), the points that lie under the surface
 * of its distance field by less than WALL_LAYERS l0, in layer 1 +
 * floor(depth / l0), as the box obstacles' layers are counted from their
 * faces.  A closed mesh gets both layers under its surface; an open one (a
 * shell of one spacing, obstacles.c) the points within its thickness, in
 * the first layer.  Points beyond the box grown by WALL_LAYERS l0 (where the
 * wall grid ends) are left out. */
static void emit_mesh_walls(mps_state *s, const fs_world *w, const fs_obstacle *ob, int *n) {
    const float l0 = s->l0, g = WALL_LAYERS * l0;
    const float a[3] = {ob->lo.x, ob->lo.y, ob->lo.z}, b[3] = {ob->hi.x, ob->hi.y, ob->hi.z};
    const float dlo[3] = {w->dom.box_min.x - g, w->dom.box_min.y - g, w->dom.box_min.z - g};
    const float dhi[3] = {w->dom.box_max.x + g, w->dom.box_max.y + g, w->dom.box_max.z + g};
    int i0[3], i1[3]; /* the lattice's indices [i0, i1) inside the grown box */
    for (int q = 0; q < 3; q++) {
        const int m = fs__floor_clamp(ceilf((b[q] - a[q]) / l0 - 1e-3f), 1, 1 << 20);
        i0[q] = fs__floor_clamp(ceilf((dlo[q] - a[q]) / l0 - 0.5f), 0, m);
        i1[q] = fs__floor_clamp(floorf((dhi[q] - a[q]) / l0 - 0.5f) + 1.0f, i0[q], m);
    }
    for (int k = i0[2]; k < i1[2]; k++)
        for (int j = i0[1]; j < i1[1]; j++)
            for (int i = i0[0]; i < i1[0]; i++) {
                const float x = a[0] + ((float)i + 0.5f) * l0, y = a[1] + ((float)j + 0.5f) * l0,
                            z = a[2] + ((float)k + 0.5f) * l0;
                float phi, grad[3];
                if (!fs__sdf_sample(&ob->sdf, x, y, z, &phi, grad) || phi > 0 || -phi >= g) continue;
                const int layer = 1 + (int)(-phi / l0);
                wall_put(s, n, x, y, z, layer < WALL_LAYERS ? layer : WALL_LAYERS);
            }
}

static void emit_walls(mps_state *s, const fs_world *w, int *n) {
    const float l0 = s->l0;
    const fs_vec3 lo = w->dom.box_min, hi = w->dom.box_max;
    const int mx = axis_interior(lo.x, hi.x, l0), my = axis_interior(lo.y, hi.y, l0),
              mz = axis_interior(lo.z, hi.z, l0);
    /* the box: WALL_LAYERS outside each face, corners and edges included */
    const int L2 = 2 * WALL_LAYERS;
    for (int k = 0; k < mz + L2; k++)
        for (int j = 0; j < my + L2; j++)
            for (int i = 0; i < mx + L2; i++) {
                int di, dj, dk;
                float x = axis_coord(lo.x, hi.x, l0, mx, i, &di), y = axis_coord(lo.y, hi.y, l0, my, j, &dj),
                      z = axis_coord(lo.z, hi.z, l0, mz, k, &dk);
                int d = di > dj ? di : dj;
                d = d > dk ? d : dk;
                if (d) wall_put(s, n, x, y, z, d);
            }
    /* obstacles: their own lattice, WALL_LAYERS in from each face */
    for (int o = 0; o < s->nobst; o++) {
        fs_vec3 a = s->obst[o].lo, b = s->obst[o].hi;
        /* obstacles lie inside the box (fs_world_mps_add_obstacle, restore): the clamp only keeps the
         * conversion defined */
        int ox = fs__floor_clamp((b.x - a.x) / l0 + 1e-3f, 0, 1 << 20),
            oy = fs__floor_clamp((b.y - a.y) / l0 + 1e-3f, 0, 1 << 20),
            oz = fs__floor_clamp((b.z - a.z) / l0 + 1e-3f, 0, 1 << 20);
        for (int k = 0; k < oz; k++)
            for (int j = 0; j < oy; j++)
                for (int i = 0; i < ox; i++) {
                    int d = i < ox - 1 - i ? i : ox - 1 - i;
                    int e = j < oy - 1 - j ? j : oy - 1 - j;
                    int f = k < oz - 1 - k ? k : oz - 1 - k;
                    d = d < e ? d : e;
                    d = d < f ? d : f;
                    if (d < WALL_LAYERS)
                        wall_put(s, n, a.x + ((float)i + 0.5f) * l0, a.y + ((float)j + 0.5f) * l0,
                                 a.z + ((float)k + 0.5f) * l0, d + 1);
                }
    }
    for (int o = 0; o < w->nobstacles; o++) emit_mesh_walls(s, w, &w->obstacles[o], n);
}

/* Builds the wall particles for the domain and the obstacles, and their
 * grid.  Allocates when their number grows. */
/* near = occ grown by two cells along each axis (x fastest), in three
 * passes along one axis each; occ is spent as scratch. */
static void dilate(uint8_t *occ, uint8_t *near, const int n[3]) {
    const long stride[3] = {1, n[0], (long)n[0] * n[1]}, cells = stride[2] * n[2];
    uint8_t *src = occ, *dst = near;
    for (int a = 0; a < 3; a++) {
        for (long c = 0; c < cells; c++) {
            const int at = (int)(c / stride[a] % n[a]);
            uint8_t v = 0;
            for (int d = -2; d <= 2; d++) v |= at + d >= 0 && at + d < n[a] ? src[c + d * stride[a]] : 0;
            dst[c] = v;
        }
        uint8_t *t = src;
        src = dst, dst = t;
    }
    /* three passes: occ -> near -> occ -> near */
}

/* A reset of the world cleared its box obstacles: forgets them and records the reset (fs__mps_walls_current
 * compares it), so that they are forgotten once, not on every later call. */
static void forget_reset_obstacles(const fs_world *w, mps_state *s) {
    if (s->obst_epoch != w->epoch) s->nobst = 0, s->obst_epoch = w->epoch;
}

bool fs__mps_build_walls(fs_world *w, mps_state *s) {
    s->l0 = w->dom.spacing;
    s->h = w->h;
    s->re_n = RE_N * s->l0;
    if (s->re_n > s->h) s->re_n = s->h;
    s->re_l = RE_LAP * s->l0;
    if (s->re_l > s->h) s->re_l = s->h;
    s->re_st = s->re_l;
    lattice_constants(s);
    forget_reset_obstacles(w, s);
    s->wall_builds++;
    if (s->built_epoch != w->epoch) /* and so did its particles: no stale warm starts in free slots */
        memset(s->p_slot, 0, sizeof(float) * (size_t)w->cap);
    int n = 0;
    float *keep = s->wx;
    s->wx = NULL;
    emit_walls(s, w, &n);
    s->wx = keep;
    if (n > s->wall_cap || !s->wx) {
        fs__mps_free_walls(s);
        size_t m = (size_t)(n > 0 ? n : 1);
        /* FS_SCAN_PAD more positions: fs__scan_point reads whole vectors past a range's end */
        const size_t fb = sizeof(float) * (m + FS_SCAN_PAD);
        s->wx = calloc(1, fb), s->wy = calloc(1, fb), s->wz = calloc(1, fb);
        s->wlayer = malloc(sizeof(int32_t) * m);
        if (!s->wx || !s->wy || !s->wz || !s->wlayer) {
            fs__mps_free_walls(s);
            return false;
        }
        s->wall_cap = (int)m;
    }
    s->nwall = 0;
    emit_walls(s, w, &s->nwall);
    /* the wall grid: cells of h / 2 (wall_rows scans two cells each way) */
    s->wg_inv = 2.0f / s->h;
    const float grow = WALL_LAYERS * s->l0;
    const float lo[3] = {w->dom.box_min.x - grow, w->dom.box_min.y - grow, w->dom.box_min.z - grow};
    const float hi[3] = {w->dom.box_max.x + grow, w->dom.box_max.y + grow, w->dom.box_max.z + grow};
    long cells = 1;
    for (int a = 0; a < 3; a++) {
        s->wg_lo[a] = lo[a];
        s->wg_n[a] = fs__floor_clamp(ceilf((hi[a] - lo[a]) * s->wg_inv), 1, 1 << 20);
        cells *= s->wg_n[a];
    }
    /* the walls reordered by cell (x fastest), so that a row of cells is one contiguous range */
    free(s->wg_start), free(s->wg_near);
    const size_t nw = (size_t)(s->nwall > 0 ? s->nwall : 1);
    s->wg_start = calloc((size_t)cells + 1, sizeof(int32_t));
    s->wg_near = calloc((size_t)cells, 1);
    int32_t *perm = malloc(sizeof(int32_t) * nw);
    float *tmp = malloc(sizeof(float) * nw);
    int32_t *tl = malloc(sizeof(int32_t) * nw);
    uint8_t *occ = calloc((size_t)cells, 1);
    if (!s->wg_start || !s->wg_near || !perm || !tmp || !tl || !occ) {
        free(perm), free(tmp), free(tl), free(occ);
        fs__mps_free_walls(s);
        return false;
    }
    for (int k = 0; k < s->nwall; k++) s->wg_start[wall_cell(s, k) + 1]++;
    for (long c = 0; c < cells; c++) s->wg_start[c + 1] += s->wg_start[c];
    for (int k = 0; k < s->nwall; k++) perm[s->wg_start[wall_cell(s, k)]++] = k;
    for (long c = cells; c > 0; c--) s->wg_start[c] = s->wg_start[c - 1];
    s->wg_start[0] = 0;
    float *axis[3] = {s->wx, s->wy, s->wz};
    for (int a = 0; a < 3; a++) {
        for (int t = 0; t < s->nwall; t++) tmp[t] = axis[a][perm[t]];
        memcpy(axis[a], tmp, sizeof(float) * (size_t)s->nwall);
    }
    for (int t = 0; t < s->nwall; t++) tl[t] = s->wlayer[perm[t]];
    memcpy(s->wlayer, tl, sizeof(int32_t) * (size_t)s->nwall);
    /* wg_near: the cells with a wall particle within two cells along each axis (wall_rows' reach) */
    for (long c = 0; c < cells; c++) occ[c] = s->wg_start[c + 1] > s->wg_start[c];
    dilate(occ, s->wg_near, s->wg_n);
    free(perm), free(tmp), free(tl), free(occ);
    s->built_epoch = w->epoch;
    s->built_dom = w->dom;
    s->built_nobst = s->nobst;
    s->built_mesh_gen = w->obstacles_gen;
    s->built = true;
    return true;
}

uint32_t fs__mps_wall_builds(const fs_world *w) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    return s ? s->wall_builds : 0;
}

bool fs__mps_walls_current(const fs_world *w, const mps_state *s) {
    return s->built && s->built_epoch == w->epoch && memcmp(&s->built_dom, &w->dom, sizeof w->dom) == 0 &&
           s->built_nobst == s->nobst && s->obst_epoch == w->epoch && s->built_mesh_gen == w->obstacles_gen;
}

/* ---- safety rails (not in the paper): out of the obstacles, inside the box -- */
/* Into [lo, hi] along each axis, the velocity out through a face taken off; returns how many axes it moved. */
static uint64_t box_rail(fs_vec3 lo, fs_vec3 hi, float x[3], float v[3]) {
    const float l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
    uint64_t clamped = 0;
    for (int a = 0; a < 3; a++) {
        if (x[a] < l[a]) {
            x[a] = l[a], v[a] = v[a] < 0 ? 0 : v[a], clamped++;
        } else if (x[a] > u[a]) {
            x[a] = u[a], v[a] = v[a] > 0 ? 0 : v[a], clamped++;
        }
    }
    return clamped;
}

uint64_t fs__mps_rails(const fs_world *w, const mps_state *s, fs_vec3 lo, fs_vec3 hi, float x[3], float v[3]) {
    /* the box's rails first: a centre past a wall where an obstacle stands on it (a plate across the tank, SPHERIC's
     * box on the floor) is otherwise outside the obstacle's bounds when they are tested and put inside it by the
     * box's clamp after them; and last, for a centre an obstacle's face sent past them */
    uint64_t clamped = box_rail(lo, hi, x, v);
    for (int o = 0; o < w->nobstacles; o++) {
        /* a mesh obstacle: out to MESH_RAIL cells of its field from its surface along the field's gradient, the
         * normal velocity into it taken off.  Against a wall of the box the normal loses its part out through
         * the wall, and a centre nearest to a face lying on the floor goes out by the nearest other face
         * (fs__obstacle_normal_in_box): sent down through that face, the floor's rail below put it straight
         * back in, and water sliding along the floor went through SPHERIC's box */
        const fs_sdf *f = &w->obstacles[o].sdf;
        const float margin = MESH_RAIL * f->cell;
        float phi, g[3], nn[3], depth;
        bool lifted;
        if (!fs__sdf_sample(f, x[0], x[1], x[2], &phi, g) || phi >= margin) continue;
        if (!fs__obstacle_normal_in_box(w, f, x, margin, phi, g, nn, &depth, &lifted))
            continue; /* a ridge of the field: no direction out */
        float far = margin - depth;
        if (!lifted) { /* along the wall as far as reaches the margin along the field */
            const float gl = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
            far /= fmaxf((nn[0] * g[0] + nn[1] * g[1] + nn[2] * g[2]) / gl, 0.25f);
        }
        const float vn = v[0] * nn[0] + v[1] * nn[1] + v[2] * nn[2];
        for (int a = 0; a < 3; a++) x[a] += far * nn[a], v[a] -= vn < 0 ? vn * nn[a] : 0.0f;
        clamped++;
    }
    const float bl[3] = {lo.x, lo.y, lo.z}, bh[3] = {hi.x, hi.y, hi.z};
    for (int o = 0; o < s->nobst; o++) {
        const fs_vec3 a = s->obst[o].lo, bb = s->obst[o].hi;
        if (x[0] <= a.x || x[0] >= bb.x || x[1] <= a.y || x[1] >= bb.y || x[2] <= a.z || x[2] >= bb.z) continue;
        const float d[6] = {x[0] - a.x, bb.x - x[0], x[1] - a.y, bb.y - x[1], x[2] - a.z, bb.z - x[2]};
        const float fa[6] = {a.x, bb.x, a.y, bb.y, a.z, bb.z};
        /* out by the nearest face that does not lie on a wall of the box (or beyond where centres may be):
         * sent out through the face on the floor, the floor's rail below put it straight back in (as the mesh
         * obstacles' normal, above) */
        int f = -1;
        for (int q = 0; q < 6; q++) {
            const bool walled = q % 2 ? fa[q] >= bh[q / 2] : fa[q] <= bl[q / 2];
            if (!walled && (f < 0 || d[q] < d[f])) f = q;
        }
        if (f < 0) continue; /* an obstacle that fills the box */
        int ax = f / 2;
        float sg = f % 2 ? 1.0f : -1.0f; /* outward normal along ax */
        x[ax] += sg * d[f];
        if (v[ax] * sg < 0) v[ax] = 0;
        clamped++;
    }
    return clamped + box_rail(lo, hi, x, v);
}

/* ---- public extras ------------------------------------------------------------ */
fs_status fs_world_mps_add_obstacle(fs_world *w, fs_vec3 lo, fs_vec3 hi, fs_error *err) {
    mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s) {
        SETERR(err, "obstacles need the mps solver (fs_world_set_solver)");
        return FS_ERR_ARG;
    }
    if (!(isfinite(lo.x) && isfinite(lo.y) && isfinite(lo.z) && isfinite(hi.x) && isfinite(hi.y) && isfinite(hi.z)) ||
        !(hi.x > lo.x && hi.y > lo.y && hi.z > lo.z)) {
        SETERR(err, "obstacle: lo < hi and finite, on every axis");
        return FS_ERR_ARG;
    }
    forget_reset_obstacles(w, s);
    if (s->nobst >= MAX_OBST) {
        SETERR(err, "obstacle: all %d slots in use", MAX_OBST);
        return FS_ERR_FULL;
    }
    /* clipped to the box */
    const fs_vec3 a = w->dom.box_min, b = w->dom.box_max;
    lo = (fs_vec3){fmaxf(lo.x, a.x), fmaxf(lo.y, a.y), fmaxf(lo.z, a.z)};
    hi = (fs_vec3){fminf(hi.x, b.x), fminf(hi.y, b.y), fminf(hi.z, b.z)};
    if (!(hi.x - lo.x >= w->dom.spacing && hi.y - lo.y >= w->dom.spacing && hi.z - lo.z >= w->dom.spacing)) {
        SETERR(err, "obstacle: less than one spacing thick inside the box");
        return FS_ERR_RANGE;
    }
    s->obst[s->nobst++] = (mps_obst){lo, hi};
    if (!fs__mps_build_walls(w, s) || !fs__mps_ensure_matrix(w, s)) {
        s->nobst--;
        s->built = false;
        SETERR(err, "obstacle: out of memory for its wall particles");
        return FS_ERR_NOMEM;
    }
    /* particles inside it leave */
    for (int i = w->n - 1; i >= 0; i--)
        if (w->p.x[i] > lo.x && w->p.x[i] < hi.x && w->p.y[i] > lo.y && w->p.y[i] < hi.y && w->p.z[i] > lo.z &&
            w->p.z[i] < hi.z)
            fs__remove_index(w, i);
    fs__sync_ids(w);
    return FS_OK;
}

fs_status fs__mps_obstacles_changed(fs_world *w, fs_error *err) {
    mps_state *s = state_of(w);
    if (!s) return FS_OK;
    s->built = false;
    if (!fs__mps_build_walls(w, s) || !fs__mps_ensure_matrix(w, s)) {
        s->built = false;
        SETERR(err, "obstacle: out of memory for its wall particles");
        return FS_ERR_NOMEM;
    }
    /* particles inside an obstacle leave (as fs_world_mps_add_obstacle's do) */
    int removed = 0;
    for (int i = w->n - 1; i >= 0; i--)
        for (int o = 0; o < w->nobstacles; o++) {
            float phi, g[3];
            if (fs__sdf_sample(&w->obstacles[o].sdf, w->p.x[i], w->p.y[i], w->p.z[i], &phi, g) && phi < 0) {
                fs__remove_index(w, i);
                removed++;
                break;
            }
        }
    if (removed) fs__sync_ids(w);
    return FS_OK;
}
