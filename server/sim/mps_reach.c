/* mps_reach.c - whether an MPS sub-step stayed within what its lists at r^n
 * reach (reach_ok, after Eq. 9-10 and the collisions) and no particle moved
 * more than that from r^n (moved_ok, after Eq. 15-17); a sub-step that
 * fails either is cut in two (mps.c's substep).  Why and what it costs:
 * docs/sim-notes.md, "Time step" ("The lists' reach").
 *
 * Parallel form: the per-particle passes through fs__run, each worker's
 * verdict in its own slot; the displacement boxes by rows of blocks, which
 * are whole rows of grid cells and so whole runs of particles in the r^n
 * grid's order, each row's boxes written by the one task that holds it.
 * Every verdict is a yes or no over exact comparisons, so the result does
 * not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "mps_internal.h"
#include "sim_testing.h"

long fs__mps_reach_blocks(const fs_world *w, int nb[3]) {
    nb[0] = (w->gx + 1) / 2, nb[1] = (w->gy + 1) / 2, nb[2] = (w->gz + 1) / 2;
    return (long)nb[0] * nb[1] * nb[2];
}

/* Folds displacement d into a block's box of displacements (min x y z, max x y z). */
static inline void box_add(float *bx, const float d[3]) {
    for (int a = 0; a < 3; a++) {
        bx[a] = d[a] < bx[a] ? d[a] : bx[a];
        bx[3 + a] = d[a] > bx[3 + a] ? d[a] : bx[3 + a];
    }
}

/* The square of the farthest a displacement in box bx lies from d. */
static inline float box_far2(const float *bx, const float d[3]) {
    float e = 0;
    for (int a = 0; a < 3; a++) {
        const float lo = d[a] - bx[a], hi = bx[3 + a] - d[a], m = lo > hi ? lo : hi;
        e += m * m;
    }
    return e;
}

/* The block (2 x 2 x 2 cells of the r^n grid) of particle i, and its displacements from r^n (p.px) to r* (w->nx,
 * into d0) and to r^{n+1}* (p.x; after the collisions, into d1). */
static inline long block_and_moves(const fs_world *w, const int nb[3], int i, float d0[3], float d1[3]) {
    const fs_particles *p = &w->p;
    const int cell = w->cell[i], gx = w->gx, gy = w->gy, cx = cell % gx, cy = cell / gx % gy, cz = cell / gx / gy;
    d0[0] = w->nx[i] - p->px[i], d0[1] = w->ny[i] - p->py[i], d0[2] = w->nz[i] - p->pz[i];
    d1[0] = p->x[i] - p->px[i], d1[1] = p->y[i] - p->py[i], d1[2] = p->z[i] - p->pz[i];
    return ((long)(cz >> 1) * nb[1] + (cy >> 1)) * nb[0] + (cx >> 1);
}

/* Whether particle i's lists hold every pair this sub-step needs, exactly: each particle j that may lie
 * within r_e of it at r^{n+1}* (p.x; after the collisions) is in its near list (within NEAR at r^n, p.px) if
 * it does, and each within COLLIDE_DIST at r* (w->nx) in its close list (within CLOSE at r^n).  With every
 * displacement within c->reach, such a j lay within 2 NEAR - r_e <= 1.5 h at r^n: within three grid cells
 * (h / 2) of i's along each axis, where the particles still are in the r^n grid's order. */
FS_SIMD_CLONES static bool pairs_kept(const fs_world *w, const mps_state *s, const ctx *c, int i) {
    const fs_particles *p = &w->p;
    const float *PX = p->px, *PY = p->py, *PZ = p->pz, *X = p->x, *Y = p->y, *Z = p->z, *NX = w->nx, *NY = w->ny,
                *NZ = w->nz;
    const int gx = w->gx, gy = w->gy, gz = w->gz, cell = w->cell[i];
    const int cx = cell % gx, cy = cell / gx % gy, cz = cell / gx / gy, R = 3;
    const float near2 = c->near2, re2 = s->re_n * s->re_n, cl = CLOSE * s->l0, cl2 = cl * cl, co = COLLIDE_DIST * s->l0,
                co2 = co * co;
    const float pxi = PX[i], pyi = PY[i], pzi = PZ[i], xi = X[i], yi = Y[i], zi = Z[i], nxi = NX[i], nyi = NY[i],
                nzi = NZ[i];
    for (int z = cz - R; z <= cz + R; z++) {
        if (z < 0 || z >= gz) continue;
        for (int y = cy - R; y <= cy + R; y++) {
            if (y < 0 || y >= gy) continue;
            const int row = (z * gy + y) * gx, x0 = cx - R > 0 ? cx - R : 0, x1 = cx + R < gx - 1 ? cx + R : gx - 1;
            const int j0 = w->cell_start[row + x0], j1 = w->cell_start[row + x1 + 1];
            int lost = 0; /* i itself: r0 = 0, never lost */
#pragma omp simd reduction(| : lost)
            for (int j = j0; j < j1; j++) {
                const float ax = PX[j] - pxi, ay = PY[j] - pyi, az = PZ[j] - pzi;
                const float r0 = ax * ax + ay * ay + az * az; /* at r^n */
                const float bx = X[j] - xi, by = Y[j] - yi, bz = Z[j] - zi;
                const float ex = NX[j] - nxi, ey = NY[j] - nyi, ez = NZ[j] - nzi;
                lost |= ((r0 >= near2) & (bx * bx + by * by + bz * bz < re2)) |
                        ((r0 >= cl2) & (ex * ex + ey * ey + ez * ez < co2));
            }
            if (lost) return false;
        }
    }
    return true;
}

/* One pass of the checks: its inputs and each worker's verdict (true: a particle failed). */
typedef struct reach_pass {
    const ctx *c;
    int nb[3];
    float r2, f2;     /* the reach and a particle's clear of obstacles (moved_ok), squared */
    float *src, *dst; /* the boxes read and written */
    int ax;           /* the axis the boxes grow along */
    bool failed[FS_MAX_WORKERS];
    bool far[FS_MAX_WORKERS]; /* a particle moved past the reach (moved_ok) */
} reach_pass;

static bool any_failed(const reach_pass *q) {
    bool f = false;
    for (int k = 0; k < FS_MAX_WORKERS; k++) f |= q->failed[k];
    return f;
}

/* Rows of blocks [b, e) (row r: the blocks at (r % nb[1], r / nb[1]) along y and z): each block's box of the
 * displacements of its particles, which lie in the two-by-two rows of grid cells under it; a particle moved
 * more than the reach fails (a wall may have come within reach, or a NaN). */
static void box_rows_task(int b, int e, int worker, void *vq) {
    reach_pass *q = vq;
    const fs_world *w = q->c->w;
    const int *nb = q->nb, gx = w->gx, gy = w->gy, gz = w->gz;
    const float r2 = q->r2;
    for (int r = b; r < e && !q->failed[worker]; r++) {
        const int by = r % nb[1], bz = r / nb[1];
        float *row = q->dst + 6 * (size_t)r * nb[0];
        for (int k = 0; k < nb[0]; k++)
            for (int a = 0; a < 3; a++) row[6 * k + a] = INFINITY, row[6 * k + 3 + a] = -INFINITY;
        for (int dz = 0; dz < 2; dz++)
            for (int dy = 0; dy < 2; dy++) {
                const int z = 2 * bz + dz, y = 2 * by + dy;
                if (z >= gz || y >= gy) continue;
                const int cells = (z * gy + y) * gx;
                for (int i = w->cell_start[cells]; i < w->cell_start[cells + gx]; i++) {
                    float d0[3], d1[3];
                    const long blk = block_and_moves(w, nb, i, d0, d1);
                    const float m0 = d0[0] * d0[0] + d0[1] * d0[1] + d0[2] * d0[2],
                                m1 = d1[0] * d1[0] + d1[1] * d1[1] + d1[2] * d1[2];
                    if (!(m0 <= r2 && m1 <= r2)) {
                        q->failed[worker] = true;
                        return;
                    }
                    box_add(q->dst + 6 * blk, d0), box_add(q->dst + 6 * blk, d1);
                }
            }
    }
}

/* Blocks [b, e): the box over the blocks within REACH_BLOCKS along axis q->ax, src -> dst. */
static void grow_task(int b, int e, int worker, void *vq) {
    (void)worker;
    reach_pass *q = vq;
    const int *nb = q->nb, ax = q->ax;
    const long stride = ax == 0 ? 1 : ax == 1 ? nb[0] : (long)nb[0] * nb[1];
    for (long blk = b; blk < e; blk++) {
        const int at = (int)(blk / stride % nb[ax]);
        float *o = q->dst + 6 * blk;
        memcpy(o, q->src + 6 * blk, sizeof(float) * 6);
        for (int d = -REACH_BLOCKS; d <= REACH_BLOCKS; d++) {
            if (!d || at + d < 0 || at + d >= nb[ax]) continue;
            const float *o2 = q->src + 6 * (blk + d * stride);
            for (int a = 0; a < 3; a++)
                o[a] = o2[a] < o[a] ? o2[a] : o[a], o[3 + a] = o2[3 + a] > o[3 + a] ? o2[3 + a] : o[3 + a];
        }
    }
}

/* Particles [b, e): a particle whose own displacements lie farther than the reach from some in the grown box of
 * its block is tested pair by pair. */
static void keep_task(int b, int e, int worker, void *vq) {
    reach_pass *q = vq;
    const ctx *c = q->c;
    const float r2 = q->r2;
    for (int i = b; i < e; i++) {
        float d0[3], d1[3];
        const float *bx = q->src + 6 * block_and_moves(c->w, q->nb, i, d0, d1);
        if (!(box_far2(bx, d0) <= r2 && box_far2(bx, d1) <= r2) && !pairs_kept(c->w, c->s, c, i)) {
            q->failed[worker] = true;
            return;
        }
    }
}

/* Whether the lists built at r^n hold every pair this sub-step needs: those within r_e (NEAR's list: n*,
 * Eq. 14, Eq. 5) at r^{n+1}* (after the collisions, p.x) and those within COLLIDE_DIST (CLOSE's list) at r*
 * (before them, w->nx).  Both hold while no pair's separation has changed by more than c->reach since r^n
 * (p.px).  First, no particle has moved more than that (so no wall pair: the walls stand still).  Then a
 * pair that could end within r_e had moved apart by at most 2 c->reach from it: it lay within
 * r_e + 2 c->reach = 2 NEAR - r_e < 2 h at r^n, so within the 5 x 5 x 5 blocks of 2 x 2 x 2 grid cells
 * (h wide) around either's block.  A particle for which the box of the displacements in those blocks (at
 * r* and at r^{n+1}*) lies within c->reach of its own keeps its pairs; the few that fail this coarse test
 * (where flows meet) are tested pair by pair (pairs_kept).  Every particle must be in the r^n grid's order
 * (mps.c's substep builds the grid first). */
bool fs__mps_reach_ok(fs_world *w, mps_state *s, const ctx *c) {
    reach_pass q = {.c = c, .r2 = c->reach * c->reach};
    const long blocks = fs__mps_reach_blocks(w, q.nb);
    float *box = s->reach, *grown = s->reach + 6 * (size_t)blocks;
    if (w->grid_n != w->n) return false; /* not in the grid's order (substep builds it first): cut, never missed */
    q.dst = box;
    fs__run_all(w, box_rows_task, &q, q.nb[1] * q.nb[2]);
    if (any_failed(&q)) return false;
    /* the boxes over the blocks within two along each axis, one axis at a time (box -> grown -> box -> grown) */
    q.src = box, q.dst = grown;
    for (q.ax = 0; q.ax < 3; q.ax++) {
        fs__run(w, grow_task, &q, (int)blocks);
        float *t = q.src;
        q.src = q.dst, q.dst = t;
    }
    fs__run(w, keep_task, &q, w->n);
    return !any_failed(&q);
}

/* Particles [b, e): whether each stayed within the reach of r^n (p.px) at r^{n+1} (w->nx), or within the far
 * reach if it is clear of obstacles. */
static void moved_task(int b, int e, int worker, void *vq) {
    reach_pass *q = vq;
    const fs_world *w = q->c->w;
    const fs_particles *p = &w->p;
    const uint8_t *clear = q->c->s->clear;
    bool ok = true, far = false;
    for (int i = b; i < e; i++) {
        const float dx = w->nx[i] - p->px[i], dy = w->ny[i] - p->py[i], dz = w->nz[i] - p->pz[i];
        const float m = dx * dx + dy * dy + dz * dz;
        ok &= m <= (clear[i] ? q->f2 : q->r2); /* false for a NaN: the rails have made it finite */
        far |= m > q->r2;
    }
    if (!ok) q->failed[worker] = true;
    if (far) q->far[worker] = true;
}

/* Whether no particle within NEAR of an obstacle's wall particles at r^n moved more than c->reach from r^n
 * (p.px) to r^{n+1} (w->nx), nor any other more than CLEAR_REACH reaches: a sub-step's displacement, the pressure's
 * correction and the shifting included.  A thin obstacle (SPHERIC's box is 3.5 spacings thick at 7k) is crossed
 * otherwise: its first impact's correction moved particles 64 mm in one sub-step at 45.8 mm spacing, past the
 * mesh rail.  Away from obstacles nothing is crossed (the rails keep every centre inside the box) and nothing
 * reads the lists of r^n at r^{n+1}, so there the bound only keeps a sub-step from running away. */
bool fs__mps_moved_ok(fs_world *w, const ctx *c) {
    const float far = CLEAR_REACH * c->reach;
    reach_pass q = {.c = c, .r2 = c->reach * c->reach, .f2 = far * far};
    fs__run(w, moved_task, &q, w->n);
    if (any_failed(&q)) return false;
    bool moved_far = false;
    for (int k = 0; k < FS_MAX_WORKERS; k++) moved_far |= q.far[k];
    c->s->far += moved_far;
    return true;
}

uint64_t fs__mps_far(const fs_world *w) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    return s ? s->far : 0;
}
