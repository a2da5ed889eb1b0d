/* grid.c - the neighbour grid (Clavet 2005 Sec. 7.1): a uniform grid of
 * h/2 cells over the box, the particles counting-sorted into cell order, and
 * the runs of cells a neighbour scan visits. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "tasks.h"

void fs__ranges_of(const fs_world *w, int c, fs_ranges *r) {
    if (r->cell == c) return;
    const int gx = w->gx, gy = w->gy, gz = w->gz, R = FS_GRID_DIV;
    const int cx = c % gx, cyz = c / gx;
    const int x0 = cx - R > 0 ? cx - R : 0, x1 = cx + R < gx - 1 ? cx + R : gx - 1;
    r->cell = c;
    if (r->cyz == cyz) {
        /* same rows, shifted in x: refresh the index ranges only */
        for (int k = 0; k < r->n; k++)
            r->b[k] = w->cell_start[r->base[k] + x0], r->e[k] = w->cell_start[r->base[k] + x1 + 1];
        return;
    }
    r->cyz = cyz;
    r->n = 0;
    const int cy = cyz % gy, cz = cyz / gy;
    for (int dz = -R; dz <= R; dz++) {
        int zz = cz + dz;
        if (zz < 0 || zz >= gz) continue;
        for (int dy = -R; dy <= R; dy++) {
            int yy = cy + dy;
            if (yy < 0 || yy >= gy) continue;
            int k = r->n++;
            r->base[k] = (zz * gy + yy) * gx;
            r->b[k] = w->cell_start[r->base[k] + x0], r->e[k] = w->cell_start[r->base[k] + x1 + 1];
        }
    }
}

/* The tasks of fs__grid_build (their context is the world). */
static void cell_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    fs_world *w = vctx;
    for (int i = b; i < e; i++) w->cell[i] = fs__cell_of(w, w->p.x[i], w->p.y[i], w->p.z[i]);
}

/* The arrays of w->p into w->alt in cell order, one array at a time (a tight
 * loop each: d[k] = s[perm[k]]); slot_index follows, and the cells in the new
 * order replace perm (its last use). */
#define PERMUTE(field)                                                                                                 \
    for (int k = b; k < e; k++) d->field[k] = s->field[perm[k]]
static void reorder_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    fs_world *w = vctx;
    int32_t *restrict perm = w->perm;
    const int32_t *restrict cell = w->cell;
    fs_particles *s = &w->p, *d = &w->alt;
    PERMUTE(x);
    PERMUTE(y);
    PERMUTE(z);
    PERMUTE(px);
    PERMUTE(py);
    PERMUTE(pz);
    PERMUTE(vx);
    PERMUTE(vy);
    PERMUTE(vz);
    PERMUTE(mat);
    PERMUTE(id);
    PERMUTE(slot);
    PERMUTE(temp);
    PERMUTE(frozen);
    for (int k = b; k < e; k++) w->slot_index[d->slot[k]] = k;
    for (int k = b; k < e; k++) perm[k] = cell[perm[k]];
}
#undef PERMUTE

static void by_id_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    fs__rebuild_by_id_range(vctx, b, e);
}

/* Counting sort of the particles by cell; the particle arrays are permuted
 * into cell order so neighbour runs are contiguous in memory.  Stable, hence
 * deterministic. */
void fs__grid_build(fs_world *w) {
    const int n = w->n, nc = w->ncell;
    int32_t *start = w->cell_start, *cell = w->cell, *perm = w->perm;
    fs__run(w, cell_task, w, n);
    /* cell c's count in start[c + 2]; after the prefix sum start[c + 1] is
     * where c begins, the cursor of the scatter, which leaves it where c + 1
     * begins: start[c] is then c's first index, with no pass to shift it */
    memset(start, 0, sizeof(int32_t) * ((size_t)nc + 2));
    for (int i = 0; i < n; i++) start[cell[i] + 2]++;
    for (int c = 2; c <= nc + 1; c++) start[c] += start[c - 1];
    for (int i = 0; i < n; i++) perm[start[cell[i] + 1]++] = i;
    fs__run(w, reorder_task, w, n);
    fs_particles t = w->p;
    w->p = w->alt;
    w->alt = t;
    w->cell = perm, w->perm = cell; /* reorder_task left the new order's cells in perm */
    w->grid_n = n;
    fs__run(w, by_id_task, w, n);
}

/* Cells of h/2 over the box, at least one along each axis. */
static void grid_dims(const fs_domain *dom, float *cs, int *gx, int *gy, int *gz) {
    fs_vec3 a = dom->box_min, b = dom->box_max;
    *cs = dom->h / FS_GRID_DIV;
    *gx = (int)ceil((b.x - a.x) / *cs), *gy = (int)ceil((b.y - a.y) / *cs), *gz = (int)ceil((b.z - a.z) / *cs);
    if (*gx < 1) *gx = 1;
    if (*gy < 1) *gy = 1;
    if (*gz < 1) *gz = 1;
}

int32_t *fs__grid_alloc(const fs_domain *dom) {
    float cs;
    int gx, gy, gz;
    grid_dims(dom, &cs, &gx, &gy, &gz);
    return malloc(sizeof(int32_t) * ((size_t)gx * gy * gz + 2)); /* + 2: fs__grid_build's counts */
}

void fs__grid_set(fs_world *w, const fs_domain *dom, int32_t *starts) {
    float cs;
    int gx, gy, gz;
    grid_dims(dom, &cs, &gx, &gy, &gz);
    free(w->cell_start);
    w->cell_start = starts;
    w->gx = gx, w->gy = gy, w->gz = gz, w->ncell = gx * gy * gz;
    w->cs = cs, w->inv_cs = 1.0f / cs;
    w->grid_n = 0;
}
