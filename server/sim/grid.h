/* grid.h - the uniform neighbour grid (Clavet 2005 Sec. 7.1), cells h/2
 * wide, and the runs of cells a neighbour scan visits (grid.c). */
#ifndef SIM_GRID_H
#define SIM_GRID_H

#include "sim_util.h"
#include "world_internal.h"

/* The grid's cells are h/2 wide.  A particle's neighbours lie in the 5 x 5
 * rows of 5 cells (consecutive in x, hence contiguous index ranges of the
 * cell-sorted particles) around its cell.  A scan tests every row: skipping
 * the rows farther than h, a test and a branch per row and particle, cost
 * more than the candidates it saved (docs/clavet-notes.md, "Neighbour lists"). */
#define FS_GRID_DIV 2
typedef struct fs_ranges {
    int cell, cyz; /* cached cell and its (y, z) row index */
    int n;
    int32_t base[25]; /* first cell of each row */
    int32_t b[25], e[25];
} fs_ranges;
void fs__ranges_of(const fs_world *w, int cell, fs_ranges *r);

/* The cell starts of a grid over the domain's box (NULL: out of memory),
 * and setting the world's grid to that domain (takes ownership). */
int32_t *fs__grid_alloc(const fs_domain *dom);
void fs__grid_set(fs_world *w, const fs_domain *dom, int32_t *starts);
/* Counting sort of the particles by cell (stable): the particle arrays are
 * permuted into cell order, slot_index and by_id follow. */
void fs__grid_build(fs_world *w);

/* The grid cell holding (x, y, z), clamped to the grid (any float, NaN included). */
static inline int fs__cell_of(const fs_world *w, float x, float y, float z) {
    int cx = fs__floor_clamp((x - w->dom.box_min.x) * w->inv_cs, 0, w->gx - 1);
    int cy = fs__floor_clamp((y - w->dom.box_min.y) * w->inv_cs, 0, w->gy - 1);
    int cz = fs__floor_clamp((z - w->dom.box_min.z) * w->inv_cs, 0, w->gz - 1);
    return (cz * w->gy + cy) * w->gx + cx;
}

#endif
