/* sdf.c - building a signed distance field on a grid from a triangle mesh,
 * after Bridson's makelevelset3 (as in Batty's SDFGen, MIT licence):
 *   1. exact distances (and the closest triangle) at the samples within
 *      one cell of each triangle's bounding box;
 *   2. fast sweeping (Zhao 2005, "A fast sweeping method for Eikonal
 *      equations"): eight sweep orders, twice, each sample trying the
 *      closest triangles of its up-wind neighbours;
 *   3. the sign, for a closed mesh, from the parity of the triangles an
 *      x-line of samples crosses before each sample: crossings are counted
 *      with a 2-D point-in-triangle test whose ties (a line through an edge
 *      or a vertex) are broken by simulation of simplicity, so a line through
 *      a shared edge is counted exactly once.
 * An open mesh gets the unsigned distance less a thickness (a shell). */
#include <math.h>
#include <stdlib.h>

#include "sdf.h"
#include "sim_util.h"

typedef struct d3 {
    double x, y, z;
} d3;

static inline d3 dsub(d3 a, d3 b) {
    return (d3){a.x - b.x, a.y - b.y, a.z - b.z};
}
static inline double ddot(d3 a, d3 b) {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}
static inline d3 dof(fs_vec3 v) {
    return (d3){v.x, v.y, v.z};
}

/* Distance from p to triangle (a, b, c): the closest point by the Voronoi
 * regions of its vertices, edges and face (Ericson 2005, "Real-Time
 * Collision Detection", 5.1.5). */
static double point_triangle_distance(d3 p, d3 a, d3 b, d3 c) {
    d3 ab = dsub(b, a), ac = dsub(c, a), ap = dsub(p, a);
    double d1 = ddot(ab, ap), d2 = ddot(ac, ap);
    d3 q;
    if (d1 <= 0 && d2 <= 0) {
        q = a;
    } else {
        d3 bp = dsub(p, b);
        double d3_ = ddot(ab, bp), d4 = ddot(ac, bp);
        d3 cp = dsub(p, c);
        double d5 = ddot(ab, cp), d6 = ddot(ac, cp);
        double vc = d1 * d4 - d3_ * d2, vb = d5 * d2 - d1 * d6, va = d3_ * d6 - d5 * d4;
        if (d3_ >= 0 && d4 <= d3_) {
            q = b;
        } else if (d6 >= 0 && d5 <= d6) {
            q = c;
        } else if (vc <= 0 && d1 >= 0 && d3_ <= 0) {
            double v = d1 / (d1 - d3_);
            q = (d3){a.x + v * ab.x, a.y + v * ab.y, a.z + v * ab.z};
        } else if (vb <= 0 && d2 >= 0 && d6 <= 0) {
            double w = d2 / (d2 - d6);
            q = (d3){a.x + w * ac.x, a.y + w * ac.y, a.z + w * ac.z};
        } else if (va <= 0 && (d4 - d3_) >= 0 && (d5 - d6) >= 0) {
            double w = (d4 - d3_) / ((d4 - d3_) + (d5 - d6));
            q = (d3){b.x + w * (c.x - b.x), b.y + w * (c.y - b.y), b.z + w * (c.z - b.z)};
        } else {
            double den = 1.0 / (va + vb + vc), v = vb * den, w = vc * den;
            q = (d3){a.x + ab.x * v + ac.x * w, a.y + ab.y * v + ac.y * w, a.z + ab.z * v + ac.z * w};
        }
    }
    d3 d = dsub(p, q);
    return sqrt(ddot(d, d));
}

/* The sign of twice the signed area of (0,0)-(x1,y1)-(x2,y2), ties broken
 * by simulation of simplicity (0 only when the two points coincide). */
static int orientation(double x1, double y1, double x2, double y2, double *area2) {
    *area2 = y1 * x2 - x1 * y2;
    if (*area2 > 0) return 1;
    if (*area2 < 0) return -1;
    if (y2 > y1) return 1;
    if (y2 < y1) return -1;
    if (x1 > x2) return 1;
    if (x1 < x2) return -1;
    return 0;
}

/* Whether (x0, y0) lies in the triangle (x1,y1)-(x2,y2)-(x3,y3); its
 * barycentric coordinates in a, b, c when it does. */
static bool point_in_triangle_2d(double x0, double y0, double x1, double y1, double x2, double y2, double x3, double y3,
                                 double *a, double *b, double *c) {
    x1 -= x0, x2 -= x0, x3 -= x0;
    y1 -= y0, y2 -= y0, y3 -= y0;
    int sa = orientation(x2, y2, x3, y3, a);
    if (sa == 0) return false;
    if (orientation(x3, y3, x1, y1, b) != sa) return false;
    if (orientation(x1, y1, x2, y2, c) != sa) return false;
    double sum = *a + *b + *c;
    if (sum == 0) return false;
    *a /= sum, *b /= sum, *c /= sum;
    return true;
}

typedef struct build {
    fs_sdf *s;
    const fs_vec3 *V;
    const uint32_t *T;
    int32_t *closest;
    uint8_t *parity; /* crossings in (i - 1, i] of each x-line, mod 2 */
    double origin[3], cell;
} build;

static inline size_t at(const fs_sdf *s, int i, int j, int k) {
    return (size_t)i + (size_t)s->ni * ((size_t)j + (size_t)s->nj * (size_t)k);
}

static inline double tri_distance(const build *b, int t, int i, int j, int k) {
    const uint32_t *T = b->T + 3 * (size_t)t;
    d3 p = {b->origin[0] + i * b->cell, b->origin[1] + j * b->cell, b->origin[2] + k * b->cell};
    return point_triangle_distance(p, dof(b->V[T[0]]), dof(b->V[T[1]]), dof(b->V[T[2]]));
}

/* Step 1 and the crossings of step 3 for triangle t. */
static void near_triangle(build *b, int t) {
    fs_sdf *s = b->s;
    const uint32_t *T = b->T + 3 * (size_t)t;
    double f[3][3]; /* f[vertex][axis]: grid coordinates */
    for (int v = 0; v < 3; v++) {
        fs_vec3 p = b->V[T[v]];
        f[v][0] = ((double)p.x - b->origin[0]) / b->cell;
        f[v][1] = ((double)p.y - b->origin[1]) / b->cell;
        f[v][2] = ((double)p.z - b->origin[2]) / b->cell;
    }
    const int n[3] = {s->ni, s->nj, s->nk};
    int lo[3], hi[3];
    bool inside = true; /* the box grown by a cell meets the grid */
    for (int a = 0; a < 3; a++) {
        double mn = fmin(f[0][a], fmin(f[1][a], f[2][a])) - 1, mx = fmax(f[0][a], fmax(f[1][a], f[2][a])) + 1;
        inside &= mx >= 0 && mn <= n[a] - 1;
        lo[a] = (int)fmin(fmax(floor(mn), 0), n[a] - 1), hi[a] = (int)fmin(fmax(ceil(mx), 0), n[a] - 1);
    }
    for (int k = lo[2]; inside && k <= hi[2]; k++)
        for (int j = lo[1]; j <= hi[1]; j++)
            for (int i = lo[0]; i <= hi[0]; i++) {
                size_t q = at(s, i, j, k);
                double d = tri_distance(b, t, i, j, k);
                if (d < s->phi[q]) s->phi[q] = (float)d, b->closest[q] = t;
            }
    if (!b->parity) return;
    int j0 = (int)fmax(0.0, fmin(ceil(fmin(f[0][1], fmin(f[1][1], f[2][1]))), s->nj));
    int j1 = (int)fmax(-1.0, fmin(floor(fmax(f[0][1], fmax(f[1][1], f[2][1]))), s->nj - 1));
    int k0 = (int)fmax(0.0, fmin(ceil(fmin(f[0][2], fmin(f[1][2], f[2][2]))), s->nk));
    int k1 = (int)fmax(-1.0, fmin(floor(fmax(f[0][2], fmax(f[1][2], f[2][2]))), s->nk - 1));
    for (int k = k0; k <= k1; k++)
        for (int j = j0; j <= j1; j++) {
            double a, bb, c;
            if (!point_in_triangle_2d(j, k, f[0][1], f[0][2], f[1][1], f[1][2], f[2][1], f[2][2], &a, &bb, &c))
                continue;
            double fi = a * f[0][0] + bb * f[1][0] + c * f[2][0]; /* where the line crosses */
            double ci = ceil(fi);                                 /* in (ci - 1, ci] */
            if (ci < (double)s->ni) b->parity[at(s, ci < 0 ? 0 : (int)ci, j, k)] ^= 1;
        }
}

/* Step 2: sample (i, j, k) tries the closest triangle of a neighbour. */
static inline void try_neighbour(build *b, int i, int j, int k, int i1, int j1, int k1) {
    fs_sdf *s = b->s;
    const int32_t t = b->closest[at(s, i1, j1, k1)];
    const size_t q = at(s, i, j, k);
    if (t < 0 || t == b->closest[q]) return;
    double d = tri_distance(b, t, i, j, k);
    if (d < s->phi[q]) s->phi[q] = (float)d, b->closest[q] = t;
}

static void sweep(build *b, int di, int dj, int dk) {
    const fs_sdf *s = b->s;
    const int i0 = di > 0 ? 1 : s->ni - 2, i1 = di > 0 ? s->ni : -1;
    const int j0 = dj > 0 ? 1 : s->nj - 2, j1 = dj > 0 ? s->nj : -1;
    const int k0 = dk > 0 ? 1 : s->nk - 2, k1 = dk > 0 ? s->nk : -1;
    for (int k = k0; k != k1; k += dk)
        for (int j = j0; j != j1; j += dj)
            for (int i = i0; i != i1; i += di) {
                try_neighbour(b, i, j, k, i - di, j, k);
                try_neighbour(b, i, j, k, i, j - dj, k);
                try_neighbour(b, i, j, k, i - di, j - dj, k);
                try_neighbour(b, i, j, k, i, j, k - dk);
                try_neighbour(b, i, j, k, i - di, j, k - dk);
                try_neighbour(b, i, j, k, i, j - dj, k - dk);
                try_neighbour(b, i, j, k, i - di, j - dj, k - dk);
            }
}

/* The samples step 1 visits (each triangle's box grown by a cell) and the
 * x-lines step 3 tests, summed: the work bound's measure. */
static double work_of(const fs_vec3 *V, const uint32_t *T, int nt, fs_vec3 origin, float cell, const int n[3]) {
    double work = 0;
    for (int t = 0; t < nt; t++) {
        double box = 1, lines = 1;
        for (int a = 0; a < 3; a++) {
            double mn = INFINITY, mx = -INFINITY, o = a == 0 ? origin.x : (a == 1 ? origin.y : origin.z);
            for (int v = 0; v < 3; v++) {
                fs_vec3 p = V[T[3 * (size_t)t + v]];
                double c = ((a == 0 ? p.x : (a == 1 ? p.y : p.z)) - o) / cell;
                mn = fmin(mn, c), mx = fmax(mx, c);
            }
            double span = fmin(fmax(mx, 0), n[a]) - fmin(fmax(mn, 0), n[a]);
            box *= span + 3;
            if (a > 0) lines *= span + 1;
        }
        work += box + lines;
    }
    return work;
}

fs_status fs__sdf_build(fs_sdf *s, const fs_vec3 *V, const uint32_t *T, int nt, bool closed, float thickness,
                        fs_vec3 origin, float cell, int ni, int nj, int nk, fs_error *err) {
    *s = (fs_sdf){0};
    const int n[3] = {ni, nj, nk};
    const double work = work_of(V, T, nt, origin, cell, n) + 16.0 * ni * nj * nk;
    if (work > FS_SDF_MAX_WORK) {
        SETERR(err,
               "obstacle: its distance field would take %.3g sample visits, above %.3g (fewer or smaller "
               "triangles, or a smaller mesh)",
               work, FS_SDF_MAX_WORK);
        return FS_ERR_RANGE;
    }
    const size_t N = (size_t)ni * nj * nk;
    s->phi = malloc(sizeof(float) * N);
    build b = {s,   V, T, malloc(sizeof(int32_t) * N), closed ? calloc(N, 1) : NULL, {origin.x, origin.y, origin.z},
               cell};
    if (!s->phi || !b.closest || (closed && !b.parity)) {
        free(s->phi), free(b.closest), free(b.parity);
        *s = (fs_sdf){0};
        SETERR(err, "obstacle: out of memory for a distance field of %zu samples", N);
        return FS_ERR_NOMEM;
    }
    s->ni = ni, s->nj = nj, s->nk = nk, s->origin = origin, s->cell = cell, s->inv_cell = 1.0f / cell;
    const float far = (float)(ni + nj + nk) * cell; /* more than any distance within the grid */
    for (size_t q = 0; q < N; q++) s->phi[q] = far, b.closest[q] = -1;
    for (int t = 0; t < nt; t++) near_triangle(&b, t);
    static const int order[8][3] = {{1, 1, 1},  {-1, -1, -1}, {1, 1, -1},  {-1, -1, 1},
                                    {1, -1, 1}, {-1, 1, -1},  {1, -1, -1}, {-1, 1, 1}};
    for (int pass = 0; pass < 2; pass++)
        for (int o = 0; o < 8; o++) sweep(&b, order[o][0], order[o][1], order[o][2]);
    if (closed) {
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++) {
                uint8_t par = 0;
                for (int i = 0; i < ni; i++) {
                    size_t q = at(s, i, j, k);
                    par ^= b.parity[q];
                    if (par) s->phi[q] = -s->phi[q];
                }
            }
    } else {
        for (size_t q = 0; q < N; q++) s->phi[q] -= thickness;
    }
    free(b.closest), free(b.parity);
    return FS_OK;
}

void fs__sdf_free(fs_sdf *s) {
    free(s->phi);
    *s = (fs_sdf){0};
}
