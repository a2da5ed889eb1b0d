/* probes.c - the world's named sampling points: water-height probes and
 * pressure sensors (fluid_sim.h, "Probes"), their checks, and their
 * measurement at the end of each step: a bounded number of O(N) scans over
 * the particles, no allocation. */
#include <math.h>
#include <string.h>

#include "mps_internal.h"
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

static bool inside_box(const fs_world *w, fs_vec3 p) {
    fs_vec3 a = w->dom.box_min, b = w->dom.box_max;
    return p.x >= a.x && p.x <= b.x && p.y >= a.y && p.y <= b.y && p.z >= a.z && p.z <= b.z;
}

int fs_world_add_probe(fs_world *w, const fs_probe_def *def, fs_error *err) {
    if (!def || !name_ok(def->name)) {
        SETERR(err, "probe name must be 1..%d characters of A-Z a-z 0-9 _ . -", FS_PROBE_NAME_LEN - 1);
        return -1;
    }
    if (fs_world_probe_find(w, def->name) >= 0) {
        SETERR(err, "probe '%s' exists already", def->name);
        return -1;
    }
    if (!fs_probe_kind_name(def->kind)) {
        SETERR(err, "probe kind must be height or pressure");
        return -1;
    }
    if (!fs__vec_finite(def->pos) || !inside_box(w, def->pos)) {
        SETERR(err, "probe position must lie inside the domain's box");
        return -1;
    }
    fs_vec3 a = w->dom.box_min, b = w->dom.box_max;
    float ext = fmaxf(fmaxf(b.x - a.x, b.y - a.y), b.z - a.z);
    if (!isfinite(def->size) || def->size < 0 || def->size > ext) {
        SETERR(err, "probe size %g m outside 0..%g m", (double)def->size, (double)ext);
        return -1;
    }
    fs_probe_def d = *def;
    d.name[FS_PROBE_NAME_LEN - 1] = 0;
    if (d.kind == FS_PROBE_PRESSURE) {
        fs_vec3 n = d.normal;
        float len = fs__vec_finite(n) ? sqrtf(n.x * n.x + n.y * n.y + n.z * n.z) : 0.0f;
        if (!(len > 1e-6f) || !isfinite(len)) {
            SETERR(err, "pressure probe needs a finite non-zero normal");
            return -1;
        }
        d.normal = (fs_vec3){n.x / len, n.y / len, n.z / len};
    } else {
        d.normal = (fs_vec3){0, 1, 0};
    }
    if (w->nprobes >= FS_MAX_PROBES) {
        SETERR(err, "at most %d probes", FS_MAX_PROBES);
        return -1;
    }
    int i = w->nprobes++;
    w->probes[i] = d;
    w->probe_value[i] = 0.0f;
    w->probe_tick[i] = w->st.tick;
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

/* Mass per unit floor area of the particles above y0 around (cx, cz),
 * kernel 6/(pi R^2) (1 - r/R)^2 (its integral over the disc is 1); *vol
 * (if given) the same sum of volumes. */
static double column(const fs_world *w, const float *rho, float cx, float y0, float cz, float R, double *vol) {
    const fs_particles *p = &w->p;
    float s = w->dom.spacing, v = s * s * s, R2 = R * R, norm = 6.0f / (PI_F * R2);
    double m = 0, V = 0;
    for (int i = 0; i < w->n; i++) {
        if (p->y[i] < y0) continue;
        float dx = p->x[i] - cx, dz = p->z[i] - cz, r2 = dx * dx + dz * dz;
        if (r2 >= R2) continue;
        float q = 1.0f - sqrtf(r2) / R, k = norm * q * q * v;
        V += k, m += (double)k * rho[p->mat[i]];
    }
    if (vol) *vol = V;
    return m;
}

static float default_radius(const fs_world *w, const fs_probe_def *d) {
    if (d->size > 0) return d->size;
    return fmaxf(w->h, 2.0f * w->dom.spacing);
}

/* MPS: the solver's pressure, kernel-weighted over the particles within R,
 * each carried hydrostatically from its height to the patch's (rho g dy):
 * the nearest particles sit half a spacing and more off the face. */
static float mps_pressure(const fs_world *w, const fs_probe_def *d, const float *rho, float R) {
    const mps_state *s = w->solver == FS_SOLVER_MPS ? state_of(w) : NULL;
    if (!s || !s->press) return 0.0f;
    fs_vec3 g = w->dom.gravity;
    float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
    const fs_particles *p = &w->p;
    double num = 0, den = 0;
    for (int i = 0; i < w->n; i++) {
        float dx = p->x[i] - d->pos.x, dy = p->y[i] - d->pos.y, dz = p->z[i] - d->pos.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= R * R) continue;
        float q = 1.0f - sqrtf(r2) / R, k = q * q;
        num += (double)k * (s->press[i] + rho[p->mat[i]] * gm * dy), den += k;
    }
    return den > 0 ? (float)(num / den) : 0.0f;
}

/* Clavet and unified: column weight plus the stagnation pressure. */
static float model_pressure(const fs_world *w, const fs_probe_def *d, const float *rho, float R) {
    fs_vec3 n = d->normal;
    float hx = n.x, hz = n.z, hl = sqrtf(hx * hx + hz * hz);
    float cx = d->pos.x, cz = d->pos.z;
    if (hl > 1e-3f) cx += R * hx / hl, cz += R * hz / hl;
    fs_vec3 g = w->dom.gravity;
    float gm = sqrtf(g.x * g.x + g.y * g.y + g.z * g.z);
    double stat = gm * column(w, rho, cx, d->pos.y, cz, R, NULL);
    const fs_particles *p = &w->p;
    double num = 0, den = 0;
    for (int i = 0; i < w->n; i++) {
        float dx = p->x[i] - d->pos.x, dy = p->y[i] - d->pos.y, dz = p->z[i] - d->pos.z;
        float r2 = dx * dx + dy * dy + dz * dz;
        if (r2 >= R * R) continue;
        float q = 1.0f - sqrtf(r2) / R, k = q * q;
        float un = p->vx[i] * n.x + p->vy[i] * n.y + p->vz[i] * n.z; /* < 0: moving into the face */
        if (un < 0) num += (double)k * 0.5 * rho[p->mat[i]] * un * un;
        den += k;
    }
    return (float)(stat + (den > 0 ? num / den : 0.0));
}

void fs_world_probes_measure(fs_world *w) {
    if (w->nprobes == 0) return;
    float rho[FS_MAX_MATERIALS];
    for (int m = 0; m < FS_MAX_MATERIALS; m++) rho[m] = m < w->nmat ? w->mat[m].p[FS_P_MASS_DENSITY] : 1000.0f;
    for (int k = 0; k < w->nprobes; k++) {
        const fs_probe_def *d = &w->probes[k];
        float R = default_radius(w, d), v;
        if (d->kind == FS_PROBE_HEIGHT) {
            double vol;
            column(w, rho, d->pos.x, d->pos.y, d->pos.z, R, &vol);
            v = (float)vol;
        } else {
            R = fmaxf(R, w->h);
            v = w->solver == FS_SOLVER_MPS ? mps_pressure(w, d, rho, R) : model_pressure(w, d, rho, R);
        }
        w->probe_value[k] = isfinite(v) ? v : 0.0f;
        w->probe_tick[k] = w->st.tick;
    }
}
