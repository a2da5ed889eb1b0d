/* mps_walls.c - the MPS solver's walls: the box's faces and the box
 * obstacles as lattices of fixed particles three deep (Premoze et al. 2003,
 * Sec. 3.2, "three layers of fixed particles"; Koshizuka's "dummy"
 * particles), their static grid and sums, the rest-lattice constants of
 * Eq. 5-8, the safety rails, and fs_world_mps_add_obstacle.  The first
 * layer takes part in the Laplacians, the gradient and Eq. 14 (its
 * pressure); the second and third only fill the number density.  Choices
 * and measurements: docs/sim-notes.md, "MPS", "Walls". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mps_internal.h"
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
/* Lattice coordinates along one axis: three layers outside the low face,
 * the interior row lo + (k + 1/2) l0, three layers outside the high face.
 * axis_count gives how many; axis_coord the k-th and its depth (0 inside,
 * 1..3 outside). */
static int axis_interior(float lo, float hi, float l0) {
    int m = 0;
    while (lo + ((float)m + 0.5f) * l0 <= hi - 0.25f * l0) m++;
    return m;
}

static float axis_coord(float lo, float hi, float l0, int m, int k, int *depth) {
    if (k < 3) return *depth = 3 - k, lo - ((float)(3 - k) - 0.5f) * l0;
    if (k < 3 + m) return *depth = 0, lo + ((float)(k - 3) + 0.5f) * l0;
    return *depth = k - 2 - m, hi + ((float)(k - 3 - m) + 0.5f) * l0;
}

void fs__mps_free_walls(mps_state *s) {
    free(s->wx), free(s->wy), free(s->wz), free(s->wp), free(s->wlayer), free(s->wl1);
    free(s->l1_wall), free(s->l1_nstatic), free(s->l1_wn), free(s->l1_wj), free(s->l1_ww);
    free(s->wg_start), free(s->wg_idx);
    free(s->act), free(s->act_of), free(s->anb), free(s->anb_n), free(s->anst), free(s->arow);
    s->wx = s->wy = s->wz = s->wp = NULL;
    s->wlayer = NULL;
    s->wl1 = s->l1_wall = s->l1_wj = s->wg_start = s->wg_idx = s->act = s->act_of = s->anb = s->arow = NULL;
    s->l1_nstatic = s->l1_ww = s->anst = NULL;
    s->l1_wn = s->anb_n = NULL;
    s->nwall = s->wall_cap = s->nl1 = 0;
}

/* Appends a wall particle (counting only when s->wx is NULL). */
static void wall_put(mps_state *s, int *n, float x, float y, float z, int layer) {
    if (s->wx) {
        s->wx[*n] = x, s->wy[*n] = y, s->wz[*n] = z;
        s->wlayer[*n] = (uint8_t)layer;
    }
    (*n)++;
}

static void emit_walls(mps_state *s, const fs_world *w, int *n) {
    const float l0 = s->l0;
    const fs_vec3 lo = w->dom.box_min, hi = w->dom.box_max;
    const int mx = axis_interior(lo.x, hi.x, l0), my = axis_interior(lo.y, hi.y, l0),
              mz = axis_interior(lo.z, hi.z, l0);
    /* the box: three layers outside each face, corners and edges included */
    for (int k = 0; k < mz + 6; k++)
        for (int j = 0; j < my + 6; j++)
            for (int i = 0; i < mx + 6; i++) {
                int di, dj, dk;
                float x = axis_coord(lo.x, hi.x, l0, mx, i, &di), y = axis_coord(lo.y, hi.y, l0, my, j, &dj),
                      z = axis_coord(lo.z, hi.z, l0, mz, k, &dk);
                int d = di > dj ? di : dj;
                d = d > dk ? d : dk;
                if (d) wall_put(s, n, x, y, z, d);
            }
    /* obstacles: their own lattice, three layers in from each face */
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
                    if (d < 3)
                        wall_put(s, n, a.x + ((float)i + 0.5f) * l0, a.y + ((float)j + 0.5f) * l0,
                                 a.z + ((float)k + 0.5f) * l0, d + 1);
                }
    }
}

/* Builds the wall particles for the domain and the obstacles, their grid
 * and their static sums.  Allocates when their number grows. */
bool fs__mps_build_walls(fs_world *w, mps_state *s) {
    s->l0 = w->dom.spacing;
    s->h = w->h;
    s->re_n = RE_N * s->l0;
    if (s->re_n > s->h) s->re_n = s->h;
    s->re_l = RE_LAP * s->l0;
    if (s->re_l > s->h) s->re_l = s->h;
    s->re_st = s->re_l;
    lattice_constants(s);
    if (s->obst_epoch != w->epoch) s->nobst = 0; /* the world was reset: obstacles went with it */
    if (s->built_epoch != w->epoch)              /* and so did its particles: no stale warm starts in free slots */
        memset(s->p_slot, 0, sizeof(float) * (size_t)w->cap);
    int n = 0;
    float *keep = s->wx;
    s->wx = NULL;
    emit_walls(s, w, &n);
    s->wx = keep;
    if (n > s->wall_cap || !s->wx) {
        fs__mps_free_walls(s);
        size_t m = (size_t)(n > 0 ? n : 1);
        s->wx = malloc(sizeof(float) * m), s->wy = malloc(sizeof(float) * m), s->wz = malloc(sizeof(float) * m);
        s->wp = calloc(m, sizeof(float)), s->wlayer = malloc(m), s->wl1 = malloc(sizeof(int32_t) * m);
        s->l1_wall = malloc(sizeof(int32_t) * m), s->l1_nstatic = malloc(sizeof(float) * m);
        s->l1_wn = malloc(sizeof(int16_t) * m), s->l1_wj = malloc(sizeof(int32_t) * m * WWN_MAX);
        s->l1_ww = malloc(sizeof(float) * m * WWN_MAX);
        s->wg_idx = malloc(sizeof(int32_t) * m);
        s->act = malloc(sizeof(int32_t) * m), s->act_of = malloc(sizeof(int32_t) * m);
        s->anb = malloc(sizeof(int32_t) * m * WNB_MAX), s->anb_n = malloc(sizeof(int16_t) * m);
        s->anst = malloc(sizeof(float) * m), s->arow = malloc(sizeof(int32_t) * m);
        if (!s->wx || !s->wy || !s->wz || !s->wp || !s->wlayer || !s->wl1 || !s->l1_wall || !s->l1_nstatic ||
            !s->l1_wn || !s->l1_wj || !s->l1_ww || !s->wg_idx || !s->act || !s->act_of || !s->anb || !s->anb_n ||
            !s->anst || !s->arow) {
            fs__mps_free_walls(s);
            return false;
        }
        s->wall_cap = (int)m;
    }
    s->nwall = 0;
    emit_walls(s, w, &s->nwall);
    memset(s->wp, 0, sizeof(float) * (size_t)s->nwall);
    /* the wall grid */
    const float g = s->h;
    s->wg_inv = 1.0f / g;
    const float lo[3] = {w->dom.box_min.x - 3 * s->l0, w->dom.box_min.y - 3 * s->l0, w->dom.box_min.z - 3 * s->l0};
    const float hi[3] = {w->dom.box_max.x + 3 * s->l0, w->dom.box_max.y + 3 * s->l0, w->dom.box_max.z + 3 * s->l0};
    long cells = 1;
    for (int a = 0; a < 3; a++) {
        s->wg_lo[a] = lo[a];
        s->wg_n[a] = (int)ceilf((hi[a] - lo[a]) * s->wg_inv);
        if (s->wg_n[a] < 1) s->wg_n[a] = 1;
        cells *= s->wg_n[a];
    }
    free(s->wg_start);
    s->wg_start = calloc((size_t)cells + 1, sizeof(int32_t));
    if (!s->wg_start) {
        fs__mps_free_walls(s);
        return false;
    }
    for (int k = 0; k < s->nwall; k++) s->wg_start[grid_cell(s, s->wx[k], s->wy[k], s->wz[k]) + 1]++;
    for (long c = 0; c < cells; c++) s->wg_start[c + 1] += s->wg_start[c];
    for (int k = 0; k < s->nwall; k++) s->wg_idx[s->wg_start[grid_cell(s, s->wx[k], s->wy[k], s->wz[k])]++] = k;
    for (long c = cells; c > 0; c--) s->wg_start[c] = s->wg_start[c - 1];
    s->wg_start[0] = 0;
    /* first layer: its index, static number density and first-layer neighbours */
    s->nl1 = 0;
    for (int k = 0; k < s->nwall; k++) s->wl1[k] = s->wlayer[k] == 1 ? s->nl1++ : -1;
    for (int k = 0; k < s->nwall; k++)
        if (s->wl1[k] >= 0) s->l1_wall[s->wl1[k]] = k;
    const float rmin = RMIN * s->l0, h2 = s->h * s->h;
    for (int q = 0; q < s->nl1; q++) {
        int k = s->l1_wall[q];
        float nsum = 0;
        int m = 0;
        int32_t *J = s->l1_wj + (size_t)q * WWN_MAX;
        float *W = s->l1_ww + (size_t)q * WWN_MAX;
        int32_t cb[27], ce[27];
        const int nc = wall_cells(s, s->wx[k], s->wy[k], s->wz[k], cb, ce);
        for (int gc = 0; gc < nc; gc++)
            for (int t = cb[gc]; t < ce[gc]; t++) {
                int o = s->wg_idx[t];
                if (o == k) continue;
                float dx = s->wx[o] - s->wx[k], dy = s->wy[o] - s->wy[k], dz = s->wz[o] - s->wz[k];
                float r2 = dx * dx + dy * dy + dz * dz;
                if (r2 >= h2) continue;
                float r = sqrtf(r2);
                nsum += weight(r, s->re_n, rmin);
                float wl = weight(r, s->re_n, rmin); /* the pressure Laplacian's radius */
                if (s->wl1[o] >= 0 && wl > 0 && m < WWN_MAX) J[m] = s->wl1[o], W[m] = wl, m++;
            }
        fs__sort_keyed(J, W, sizeof *W, 1, m); /* ascending first-layer index */
        s->l1_wn[q] = (int16_t)m;
        s->l1_nstatic[q] = nsum;
        s->act_of[q] = -1;
    }
    s->nact = 0;
    s->built_epoch = w->epoch;
    s->built_dom = w->dom;
    s->built_nobst = s->nobst;
    s->built = true;
    return true;
}

bool fs__mps_walls_current(const fs_world *w, const mps_state *s) {
    return s->built && s->built_epoch == w->epoch && memcmp(&s->built_dom, &w->dom, sizeof w->dom) == 0 &&
           s->built_nobst == s->nobst && s->obst_epoch == w->epoch;
}

/* ---- safety rails (not in the paper): out of the obstacles, inside the box -- */
uint64_t fs__mps_rails(const mps_state *s, fs_vec3 lo, fs_vec3 hi, float x[3], float v[3]) {
    uint64_t clamped = 0;
    for (int o = 0; o < s->nobst; o++) {
        const fs_vec3 a = s->obst[o].lo, bb = s->obst[o].hi;
        if (x[0] <= a.x || x[0] >= bb.x || x[1] <= a.y || x[1] >= bb.y || x[2] <= a.z || x[2] >= bb.z) continue;
        const float d[6] = {x[0] - a.x, bb.x - x[0], x[1] - a.y, bb.y - x[1], x[2] - a.z, bb.z - x[2]};
        int f = 0;
        for (int q = 1; q < 6; q++)
            if (d[q] < d[f]) f = q;
        int ax = f / 2;
        float sg = f % 2 ? 1.0f : -1.0f; /* outward normal along ax */
        x[ax] += sg * d[f];
        if (v[ax] * sg < 0) v[ax] = 0;
        clamped++;
    }
    const float l[3] = {lo.x, lo.y, lo.z}, u[3] = {hi.x, hi.y, hi.z};
    for (int a = 0; a < 3; a++) {
        if (x[a] < l[a]) {
            x[a] = l[a], v[a] = v[a] < 0 ? 0 : v[a], clamped++;
        } else if (x[a] > u[a]) {
            x[a] = u[a], v[a] = v[a] > 0 ? 0 : v[a], clamped++;
        }
    }
    return clamped;
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
    if (s->obst_epoch != w->epoch) s->nobst = 0, s->obst_epoch = w->epoch;
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
