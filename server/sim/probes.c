/* probes.c - the world's named sampling points: water-height probes and
 * pressure sensors (fluid_sim.h, "Probes"), their checks, and their
 * measurement (the heights at the end of each step, the pressures summed
 * over its sub-steps): a pass over the particles for how far they moved from
 * their grid cells, then each probe's cells of the neighbour grid; no
 * allocation. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "kernels.h"
#include "mps_internal.h"
#include "probes.h"
#include "world_internal.h"

#define PI_F 3.14159265f

const char *fs_probe_kind_name(fs_probe_kind k) {
    switch (k) {
    case FS_PROBE_HEIGHT:
        return "height";
    case FS_PROBE_PRESSURE:
        return "pressure";
    default:
        return NULL;
    }
}

static bool name_ok(const char *s) {
    size_t n = strnlen(s, FS_PROBE_NAME_LEN);
    if (n == 0 || n >= FS_PROBE_NAME_LEN) return false;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
                  c == '-';
        if (!ok) return false;
    }
    return true;
}

int fs_world_probe_find(const fs_world *w, const char *name) {
    if (!name) return -1;
    for (int i = 0; i < w->nprobes; i++)
        if (strncmp(w->probes[i].name, name, FS_PROBE_NAME_LEN) == 0) return i;
    return -1;
}

static bool inside_box(const fs_domain *dom, fs_vec3 p) {
    fs_vec3 a = dom->box_min, b = dom->box_max;
    return p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y && p.z >= a.z && p.z <= b.z;
}

fs_status fs__probe_check(const fs_domain *dom, const fs_probe_def *def, fs_probe_def *out, fs_error *err) {
    if (!def || !name_ok(def->name)) {
        SETERR(err, "probe name must be 1..%d characters of A-Z a-z 0-9 _ . -", FS_PROBE_NAME_LEN - 1);
        return FS_ERR_ARG;
    }
    if (!fs_probe_kind_name(def->kind)) {
        SETERR(err, "probe kind must be height or pressure");
        return FS_ERR_ARG;
    }
    if (!fs__vec_finite(def->pos) || !inside_box(dom, def->pos)) {
        SETERR(err, "probe position must lie inside the domain's box");
        return FS_ERR_RANGE;
    }
    fs_vec3 a = dom->box_min, b = dom->box_max;
    float ext = fmaxf(fmaxf(b.x - a.x, b.y - a.y), b.z - a.z);
    if (!isfinite(def->size) || def->size < 0 || def->size > ext) {
        SETERR(err, "probe size %g m outside 0..%g m", (double)def->size, (double)ext);
        return FS_ERR_RANGE;
    }
    fs_probe_def d = *def;
    size_t len = strnlen(d.name, FS_PROBE_NAME_LEN);
    memset(d.name + len, 0, FS_PROBE_NAME_LEN - len); /* no stale bytes after the name */
    if (d.kind == FS_PROBE_PRESSURE) {
        fs_vec3 n = d.normal;
        float l = fs__vec_finite(n) ? sqrtf(n.x * n.x + n.y * n.y + n.z * n.z) : 0.0f;
        if (!(l > 1e-6f) || !isfinite(l)) {
            SETERR(err, "pressure probe needs a finite non-zero normal");
            return FS_ERR_ARG;
        }
        d.normal = (fs_vec3){n.x / l, n.y / l, n.z / l};
    } else {
        d.normal = (fs_vec3){0, 1, 0};
    }
    *out = d;
    return FS_OK;
}

int fs_world_add_probe(fs_world *w, const fs_probe_def *def, fs_error *err) {
    if (def && name_ok(def->name) && fs_world_probe_find(w, def->name) >= 0) {
        SETERR(err, "probe '%s' exists already", def->name);
        return -1;
    }
    fs_probe_def d;
    if (fs__probe_check(&w->dom, def, &d, err) != FS_OK) return -1;
    if (w->nprobes >= FS_MAX_PROBES) {
        SETERR(err, "at most %d probes", FS_MAX_PROBES);
        return -1;
    }
    int i = w->nprobes++;
    w->probes[i] = d;
    w->probe_value[i] = 0.0f;
    w->probe_tick[i] = w->st.tick;
    w->probe_impulse[i] = 0, w->probe_span = 0; /* between steps: no sums to keep */
    fs_world_probes_measure(w);
    return i;
}

bool fs_world_remove_probe(fs_world *w, const char *name) {
    int i = fs_world_probe_find(w, name);
    if (i < 0) return false;
    for (int k = i + 1; k < w->nprobes; k++) {
        w->probes[k - 1] = w->probes[k];
        w->probe_value[k - 1] = w->probe_value[k];
        w->probe_tick[k - 1] = w->probe_tick[k];
        w->probe_impulse[k - 1] = w->probe_impulse[k];
    }
    w->nprobes--;
    return true;
}

int fs_world_probe_count(const fs_world *w) {
    return w->nprobes;
}

bool fs_world_probe_get(const fs_world *w, int index, fs_probe_def *def, float *value, uint64_t *tick) {
    if (index < 0 || index >= w->nprobes) return false;
    if (def) *def = w->probes[index];
    if (value) *value = w->probe_value[index];
    if (tick) *tick = w->probe_tick[index];
    return true;
}

/* ---- where the probes look: the neighbour grid (grid.c) -------------------
 * Particles [0, grid_n) are sorted by the cell they were in when the grid was
 * last built, which every solver does during its step: at a sub-step's start
 * (MPS and unified, which also build it for the shape bodies at the step's
 * end), or at Clavet's predicted positions.  They move after it, so a
 * region's cells are widened by the drift: the most any particle's cell has
 * changed along each axis since the build (one pass for all the probes).
 * Particles appended since (fs_world_add_particle between steps) come in a
 * run of their own, and with no grid (after a removal, a reset or a
 * snapshot) one run holds them all.  The runs come in increasing index
 * order, so a probe's sums add in the order a scan over all the particles
 * would: the same values. */

/* A cell coordinate from (x - origin) / cs as fs__cell_of takes it (floor
 * clamped to 0..top, NaN 0), written so that the drift's loop vectorises. */
static inline int axis_cell(float u, int top) {
    return u >= (float)top ? top : (u >= 0.0f ? (int)u : 0);
}

/* (q, r) = (a / m, a % m) for 0 <= a < 2^31, through a double reciprocal
 * (within one of the quotient) and one correction: no integer division. */
static inline int div_rem(int a, int m, double inv_m, int *r) {
    int q = (int)((double)a * inv_m);
    q += (a - q * m >= m) - (a - q * m < 0);
    *r = a - q * m;
    return q;
}

FS_SIMD_CLONES static void drift(const fs_world *w, int d[3]) {
    const float *X = w->p.x, *Y = w->p.y, *Z = w->p.z, inv = w->inv_cs;
    const int32_t *cell = w->cell;
    const fs_vec3 o = w->dom.box_min;
    const int gx = w->gx, gxy = w->gx * w->gy, tx = w->gx - 1, ty = w->gy - 1, tz = w->gz - 1, n = w->grid_n;
    const double igx = 1.0 / gx, igxy = 1.0 / gxy;
    int mx = 0, my = 0, mz = 0;
#pragma omp simd reduction(max : mx, my, mz)
    for (int i = 0; i < n; i++) {
        const int cx = axis_cell((X[i] - o.x) * inv, tx), cy = axis_cell((Y[i] - o.y) * inv, ty),
                  cz = axis_cell((Z[i] - o.z) * inv, tz);
        int r, bx;
        const int bz = div_rem(cell[i], gxy, igxy, &r), by = div_rem(r, gx, igx, &bx);
        const int ax = abs(cx - bx), ay = abs(cy - by), az = abs(cz - bz);
        mx = ax > mx ? ax : mx, my = ay > my ? ay : my, mz = az > mz ? az : mz;
    }
    d[0] = mx, d[1] = my, d[2] = mz;
}

/* The runs of particle indices whose cell at the grid's build lies within
 * the drift of the cells [lo, hi] covers, then the appended ones. */
typedef struct walk {
    int x0, x1, y0, y1, z0, z1; /* cells, inclusive */
    int y, z;                   /* the next row */
    bool rows_done, tail_done;
} walk;

/* The cells of [a, b] along one axis (origin o, n cells), widened by d. */
static void cells_of(const fs_world *w, float a, float b, float o, int n, int d, int *c0, int *c1) {
    const float pad = 1e-3f * w->cs; /* the tests' rounding at the region's edge */
    int lo = fs__floor_clamp((a - pad - o) * w->inv_cs, 0, n - 1) - d;
    int hi = fs__floor_clamp((b + pad - o) * w->inv_cs, 0, n - 1) + d;
    *c0 = lo < 0 ? 0 : lo, *c1 = hi > n - 1 ? n - 1 : hi;
}

static void walk_start(const fs_world *w, const int dr[3], fs_vec3 lo, fs_vec3 hi, walk *k) {
    const fs_vec3 o = w->dom.box_min;
    cells_of(w, lo.x, hi.x, o.x, w->gx, dr[0], &k->x0, &k->x1);
    cells_of(w, lo.y, hi.y, o.y, w->gy, dr[1], &k->y0, &k->y1);
    cells_of(w, lo.z, hi.z, o.z, w->gz, dr[2], &k->z0, &k->z1);
    k->y = k->y0, k->z = k->z0;
    k->rows_done = w->grid_n == 0, k->tail_done = false;
}

static bool walk_next(const fs_world *w, walk *k, int *b, int *e) {
    while (!k->rows_done) {
        const int row = (k->z * w->gy + k->y) * w->gx;
        *b = w->cell_start[row + k->x0], *e = w->cell_start[row + k->x1 + 1];
        if (++k->y > k->y1) k->y = k->y0, k->rows_done = ++k->z > k->z1;
        if (*e > *b) return true;
    }
    if (k->tail_done) return false;
    k->tail_done = true;
    *b = w->grid_n, *e = w->n;
    return *e > *b;
}

/* Mass per unit floor area of the particles above y0 around (cx, cz),
 * kernel 6/(pi R^2) (1 - r/R)^2 (its integral over the disc is 1); *vol
 * (if given) the same sum of volumes. */
static double column(const fs_world *w, const int dr[3], const float *rho, float cx, float y0, float cz, float R,
                     double *vol) {
    const fs_particles *p = &w->p;
    float s = w->dom.spacing, v = s * s * s, R2 = R * R, norm = 6.0f / (PI_F * R2);
    double m = 0, V = 0;
    walk k;
    walk_start(w, dr, (fs_vec3){cx - R, y0, cz - R}, (fs_vec3){cx + R, w->dom.box_max.y, cz + R}, &k);
    for (int b, e; walk_next(w, &k, &b, &e);)
        for (int i = b; i < e; i++) {
            if (p->y[i] < y0) continue;
            float dx = p->x[i] - cx, dz = p->z[i] - cz, r2 = dx * dx + dz * dz;
            if (r2 >= R2) continue;
            float q = 1.0f - sqrtf(r2) / R, k1 = norm * q * q * v;
            V += k1, m += (double)k1 * rho[p->mat[i]];
        }
    if (vol) *vol = V;
    return m;
}

static float default_radius(const fs_world *w, const fs_probe_def *d) {
    if (d->size > 0) return d->size;
    return fmaxf(w->h, 2.0f * w->dom.spacing);
}

/* The pressure on the patch: a mean over the particles within R in front of
 * the face (on the side its normal points to: R spans several spacings, and
 * past an edge of the face it would reach water that presses on the next
 * face, as a sensor on a box's top 2 cm from the front edge read the front's
 * impact), kernel (1 - r/R)^2.  MPS: of the solver's pressure, each
 * particle's carried hydrostatically from its height to the patch's
 * (rho g dy): the nearest sit half a spacing and more off the face.  Clavet
 * and unified: of the stagnation pressure, added to the column's weight. */
static float patch_pressure(const fs_world *w, const int dr[3], const fs_probe_def *d, const float *rho, float R) {
    const bool mps = w->solver == FS_SOLVER_MPS;
    const mps_state *s = mps ? state_of(w) : NULL;
    if (mps && (!s || !s->press)) return 0.0f;
    fs_vec3 n = d->normal, g = w->dom.gravity;
    float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
    double stat = 0;
    if (!mps) {
        float hx = n.x, hz = n.z, hl = sqrtf(hx * hx + hz * hz);
        float cx = d->pos.x, cz = d->pos.z;
        if (hl > 1e-3f) cx += R * hx / hl, cz += R * hz / hl;
        stat = gm * column(w, dr, rho, cx, d->pos.y, cz, R, NULL);
    }
    const fs_particles *p = &w->p;
    const fs_vec3 c = d->pos;
    double num = 0, den = 0;
    walk k;
    walk_start(w, dr, (fs_vec3){c.x - R, c.y - R, c.z - R}, (fs_vec3){c.x + R, c.y + R, c.z + R}, &k);
    for (int b, e; walk_next(w, &k, &b, &e);)
        for (int i = b; i < e; i++) {
            float dx = p->x[i] - c.x, dy = p->y[i] - c.y, dz = p->z[i] - c.z;
            float r2 = dx * dx + dy * dy + dz * dz;
            if (r2 >= R * R || dx * n.x + dy * n.y + dz * n.z < 0) continue;
            float q = 1.0f - sqrtf(r2) / R, k2 = q * q;
            if (mps) {
                num += (double)k2 * (s->press[i] + rho[p->mat[i]] * gm * dy);
            } else {
                float un = p->vx[i] * n.x + p->vy[i] * n.y + p->vz[i] * n.z; /* < 0: moving into the face */
                if (un < 0) num += (double)k2 * 0.5 * rho[p->mat[i]] * un * un;
            }
            den += k2;
        }
    return (float)(stat + (den > 0 ? num / den : 0.0));
}

static void densities(const fs_world *w, float rho[FS_MAX_MATERIALS]) {
    for (int m = 0; m < FS_MAX_MATERIALS; m++) rho[m] = m < w->nmat ? w->mat[m].p[FS_P_MASS_DENSITY] : 1000.0f;
}

/* Probe k's reading of the world as it stands; 0 if not finite. */
static float reading(const fs_world *w, const int dr[3], const float *rho, int k) {
    const fs_probe_def *d = &w->probes[k];
    float R = default_radius(w, d), v;
    if (d->kind == FS_PROBE_HEIGHT) {
        double vol;
        column(w, dr, rho, d->pos.x, d->pos.y, d->pos.z, R, &vol);
        v = (float)vol;
    } else {
        v = patch_pressure(w, dr, d, rho, fmaxf(R, w->h));
    }
    return isfinite(v) ? v : 0.0f;
}

/* An incompressible solver stops the water that meets a face within one
 * sub-step, so its pressure there is an impulse over dt: a reading at the
 * step's end would be the last sub-step's share of it (or none), and the
 * peak grows as the sub-step shrinks (docs/validation.md, "P1's impulse").
 * The mean over the step is the impulse the step delivered, which does not
 * depend on how the step is cut. */
void fs__probes_substep(fs_world *w, float dt) {
    int np = 0;
    for (int k = 0; k < w->nprobes; k++) np += w->probes[k].kind == FS_PROBE_PRESSURE;
    if (np == 0 || !(dt > 0)) return;
    float rho[FS_MAX_MATERIALS];
    densities(w, rho);
    int dr[3];
    drift(w, dr);
    for (int k = 0; k < w->nprobes; k++)
        if (w->probes[k].kind == FS_PROBE_PRESSURE) w->probe_impulse[k] += (double)reading(w, dr, rho, k) * dt;
    w->probe_span += dt;
}

void fs_world_probes_measure(fs_world *w) {
    const double span = w->probe_span;
    w->probe_span = 0;
    if (w->nprobes == 0) return;
    float rho[FS_MAX_MATERIALS];
    densities(w, rho);
    int dr[3];
    bool drifted = false;
    for (int k = 0; k < w->nprobes; k++) {
        const bool mean = w->probes[k].kind == FS_PROBE_PRESSURE && span > 0;
        if (!mean && !drifted) drift(w, dr), drifted = true;
        w->probe_value[k] = mean ? (float)(w->probe_impulse[k] / span) : reading(w, dr, rho, k);
        w->probe_impulse[k] = 0;
        w->probe_tick[k] = w->st.tick;
    }
}
