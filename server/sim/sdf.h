/* sdf.h - a signed distance field sampled on a regular grid: built once
 * from a triangle mesh (sdf.c), then read by trilinear interpolation in the
 * step (fs__sdf_sample, inline here; it allocates nothing).  Internal to
 * server/sim: the mesh obstacles (obstacles.c) hold one each. */
#ifndef SIM_SDF_H
#define SIM_SDF_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "fluid_sim.h"

/* Samples phi at origin + (i, j, k) cell, x fastest; negative inside a
 * closed mesh.  Immutable once built: any thread may read it. */
typedef struct fs_sdf {
    float *phi;
    int ni, nj, nk; /* each >= 2 */
    fs_vec3 origin;
    float cell, inv_cell;
} fs_sdf;

/* Builds s over the grid of ni x nj x nk samples at origin with the given
 * cell from the triangles T (3 indices each) over the vertices V.  closed:
 * the sign comes from the parity of crossings along each x-line of the grid
 * (the mesh must be closed); otherwise the field is the unsigned distance
 * less `thickness` (a shell).  Refused (FS_ERR_RANGE) when the work it
 * would take exceeds FS_SDF_MAX_WORK sample-triangle visits; FS_ERR_NOMEM.
 * On failure s holds nothing. */
#define FS_SDF_MAX_WORK 4e8
fs_status fs__sdf_build(fs_sdf *s, const fs_vec3 *V, const uint32_t *T, int nt, bool closed, float thickness,
                        fs_vec3 origin, float cell, int ni, int nj, int nk, fs_error *err);
void fs__sdf_free(fs_sdf *s);

/* phi and its gradient (of the trilinear interpolant) at world point
 * (x, y, z); false when the point lies outside the grid. */
static inline bool fs__sdf_sample(const fs_sdf *s, float x, float y, float z, float *phi, float grad[3]) {
    const float fx = (x - s->origin.x) * s->inv_cell, fy = (y - s->origin.y) * s->inv_cell,
                fz = (z - s->origin.z) * s->inv_cell;
    if (!(fx >= 0.0f && fy >= 0.0f && fz >= 0.0f && fx <= (float)(s->ni - 1) && fy <= (float)(s->nj - 1) &&
          fz <= (float)(s->nk - 1)))
        return false;
    int i = (int)fx, j = (int)fy, k = (int)fz;
    i = i > s->ni - 2 ? s->ni - 2 : i, j = j > s->nj - 2 ? s->nj - 2 : j, k = k > s->nk - 2 ? s->nk - 2 : k;
    const float tx = fx - (float)i, ty = fy - (float)j, tz = fz - (float)k;
    const size_t sx = 1, sy = (size_t)s->ni, sz = (size_t)s->ni * (size_t)s->nj;
    const float *c = s->phi + (size_t)i + sy * (size_t)j + sz * (size_t)k;
    const float c000 = c[0], c100 = c[sx], c010 = c[sy], c110 = c[sx + sy];
    const float c001 = c[sz], c101 = c[sx + sz], c011 = c[sy + sz], c111 = c[sx + sy + sz];
    /* along x first, then y, then z */
    const float c00 = c000 + tx * (c100 - c000), c10 = c010 + tx * (c110 - c010);
    const float c01 = c001 + tx * (c101 - c001), c11 = c011 + tx * (c111 - c011);
    const float c0 = c00 + ty * (c10 - c00), c1 = c01 + ty * (c11 - c01);
    *phi = c0 + tz * (c1 - c0);
    const float dx00 = c100 - c000, dx10 = c110 - c010, dx01 = c101 - c001, dx11 = c111 - c011;
    const float dx0 = dx00 + ty * (dx10 - dx00), dx1 = dx01 + ty * (dx11 - dx01);
    grad[0] = (dx0 + tz * (dx1 - dx0)) * s->inv_cell;
    const float dy0 = c10 - c00, dy1 = c11 - c01;
    grad[1] = (dy0 + tz * (dy1 - dy0)) * s->inv_cell;
    grad[2] = (c1 - c0) * s->inv_cell;
    return true;
}

#endif
