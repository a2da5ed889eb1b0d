/* heat.c - temperature (Solenthaler, Schlafli, Pajarola 2007, "Temperature
 * Effects"): heaters, Eq. 21's kernel normalisation on the rest lattice, the
 * per-particle update (diffusion by explicit Euler, then the heaters) every
 * solver calls, and the world's total heat.  The Eq. 21 pair sums live in
 * each solver's density pass (one neighbour scan for both). */
#include <math.h>

#include "heat.h"
#include "sim_util.h"
#include "world_internal.h"

float fs__heat_update(const fs_world *w, float T, bool diffuse, float dTdt, float x, float y, float z, float dt) {
    /* Eq. 21 integrated by explicit Euler, then the heaters */
    if (diffuse) T += dt * dTdt;
    for (int k = 0; k < FS_MAX_HEATERS; k++) {
        const fs_heater *hs = &w->heat[k];
        if (!hs->used || !hs->def.enabled) continue;
        if (hs->def.kind == FS_HEAT_FLOOR) {
            if (y - w->dom.box_min.y < hs->def.radius) {
                float a = dt * hs->def.rate;
                T += (a < 1.0f ? a : 1.0f) * (hs->def.temperature - T);
            }
        } else {
            float dx = x - hs->def.centre.x, dy = y - hs->def.centre.y, dz = z - hs->def.centre.z;
            float r2 = dx * dx + dy * dy + dz * dz, R2 = hs->def.radius * hs->def.radius;
            if (r2 < R2) T += dt * hs->def.rate * (1.0f - r2 / R2);
        }
    }
    /* heaters may run for ever: temperatures stay in the documented range
     * (NaN passes through for the caller to repair) */
    if (T < FS_TEMP_MIN) T = FS_TEMP_MIN;
    if (T > FS_TEMP_MAX) T = FS_TEMP_MAX;
    return T;
}

float fs__heat_coef(const fs_world *w, int m) {
    return w->mat[m].p[FS_P_HEAT_DIFFUSIVITY] * w->lap_norm * w->h;
}

bool fs_world_get_heater(const fs_world *w, int slot, fs_heater_def *out) {
    if (slot < 0 || slot >= FS_MAX_HEATERS || !w->heat[slot].used) return false;
    *out = w->heat[slot].def;
    return true;
}

/* The heater's documented ranges; also a snapshot's heaters. */
fs_status fs__heater_check(const fs_heater_def *d, fs_error *err) {
    if (!d || !fs__vec_finite(d->centre) || !isfinite(d->radius) || !isfinite(d->rate) || !isfinite(d->temperature)) {
        SETERR(err, "heater: every number must be finite");
        return FS_ERR_ARG;
    }
    if ((int)d->kind < 0 || d->kind > FS_HEAT_FLOOR || d->radius <= 0 || d->radius > 10 || fabsf(d->rate) > 1000 ||
        d->temperature < -100 || d->temperature > 1000) {
        SETERR(err, "heater: kind 0/1, radius (0, 10] m, |rate| <= 1000 /s, temperature -100..1000 C");
        return FS_ERR_RANGE;
    }
    return FS_OK;
}

int fs_world_set_heater(fs_world *w, int slot, const fs_heater_def *d, fs_error *err) {
    if (fs__heater_check(d, err) != FS_OK) return -1;
    slot = fs__first_free(slot, &w->heat[0].used, sizeof w->heat[0], FS_MAX_HEATERS);
    if (slot >= FS_MAX_HEATERS) {
        SETERR(err, "heater: no free slot (%d)", FS_MAX_HEATERS);
        return -1;
    }
    w->heat[slot].def = *d;
    w->heat[slot].used = true;
    return slot;
}

double fs_world_total_heat(const fs_world *w) {
    double s = 0;
    for (int i = 0; i < w->n; i++) s += w->p.temp[i];
    return s;
}

/* Eq. 21 on the rest lattice: for T = x^2/2 (Laplacian 1) the sum
 * sum_j (T_j - T_i)(h - r_ij) is (1/6) sum_j r_j^2 (h - r_j); its inverse
 * normalises the kernel so that the diffusivity is the physical one at
 * this resolution. */
float fs__heat_lap_norm(const fs_domain *dom) {
    double acc = 0, sp = dom->spacing, hh = dom->h;
    int m = (int)(hh / sp) + 1;
    for (int k = -m; k <= m; k++)
        for (int j = -m; j <= m; j++)
            for (int i = -m; i <= m; i++) {
                double rr = sp * sqrt((double)(i * i + j * j + k * k));
                if (rr > 0 && rr < hh) acc += rr * rr * (hh - rr);
            }
    return acc > 0 ? (float)(6.0 / acc) : 0.0f;
}
