/* sources.c - emitters (nozzles that add particles at a rate) and drains
 * (spheres that remove them): their settings and what they do at the start
 * of every solver's step. */
#include <limits.h>
#include <math.h>

#include "particles.h"
#include "sim_util.h"
#include "sources.h"
#include "world_internal.h"

/* The emitter's documented ranges (fluid_sim.h); also a snapshot's emitters. */
fs_status fs__emitter_check(const fs_emitter_def *d, int nmat, fs_error *err) {
    if (!fs__vec_finite(d->pos) || !fs__vec_finite(d->dir) || !isfinite(d->speed) || !isfinite(d->radius) ||
        !isfinite(d->rate)) {
        SETERR(err, "emitter: every number must be finite");
        return FS_ERR_ARG;
    }
    if (d->speed < 0 || d->speed > FS_EMITTER_MAX_SPEED || d->radius < 0 || d->radius > FS_EMITTER_MAX_RADIUS ||
        d->rate < 0 || d->rate > FS_EMITTER_MAX_RATE || d->cap < 0 || fabsf(d->pos.x) > 2 * FS_DOMAIN_MAX_COORD ||
        fabsf(d->pos.y) > 2 * FS_DOMAIN_MAX_COORD || fabsf(d->pos.z) > 2 * FS_DOMAIN_MAX_COORD) {
        SETERR(err, "emitter: speed 0..%g m/s, radius 0..%g m, rate 0..%g /s, cap >= 0, position within %g m",
               FS_EMITTER_MAX_SPEED, FS_EMITTER_MAX_RADIUS, FS_EMITTER_MAX_RATE, 2 * FS_DOMAIN_MAX_COORD);
        return FS_ERR_RANGE;
    }
    if (d->material < 0 || d->material >= nmat) {
        SETERR(err, "emitter: unknown material %d", d->material);
        return FS_ERR_UNKNOWN;
    }
    float len = sqrtf(d->dir.x * d->dir.x + d->dir.y * d->dir.y + d->dir.z * d->dir.z);
    if (!(len > 1e-6f && len < 1e6f)) {
        SETERR(err, "emitter: direction must be non-zero");
        return FS_ERR_ARG;
    }
    return FS_OK;
}

int fs_world_set_emitter(fs_world *w, int slot, const fs_emitter_def *d, fs_error *err) {
    if (!d) {
        SETERR(err, "emitter: missing definition");
        return -1;
    }
    if (slot < 0 &&
        (slot = fs__first_free(slot, &w->emit[0].used, sizeof w->emit[0], FS_MAX_EMITTERS)) == FS_MAX_EMITTERS) {
        SETERR(err, "emitter: all %d slots in use", FS_MAX_EMITTERS);
        return -1;
    }
    if (slot >= FS_MAX_EMITTERS) {
        SETERR(err, "emitter: slot %d outside 0..%d", slot, FS_MAX_EMITTERS - 1);
        return -1;
    }
    if (fs__emitter_check(d, w->nmat, err) != FS_OK) return -1;
    float len = sqrtf(d->dir.x * d->dir.x + d->dir.y * d->dir.y + d->dir.z * d->dir.z);
    fs_emitter *e = &w->emit[slot];
    bool fresh = !e->used;
    e->def = *d;
    e->def.dir = (fs_vec3){d->dir.x / len, d->dir.y / len, d->dir.z / len};
    e->used = true;
    if (fresh) e->emitted = 0, e->accum = 0;
    return slot;
}

fs_status fs_world_enable_emitter(fs_world *w, int slot, bool enabled, fs_error *err) {
    if (slot < 0 || slot >= FS_MAX_EMITTERS || !w->emit[slot].used) {
        SETERR(err, "emitter %d does not exist", slot);
        return FS_ERR_UNKNOWN;
    }
    w->emit[slot].def.enabled = enabled;
    return FS_OK;
}

int fs_world_emitter_count(const fs_world *w) {
    int c = 0;
    for (int i = 0; i < FS_MAX_EMITTERS; i++) c += w->emit[i].used;
    return c;
}

/* The drain's documented ranges; also a snapshot's drains. */
fs_status fs__drain_check(const fs_drain_def *d, fs_error *err) {
    if (!d || !fs__vec_finite(d->centre) || !isfinite(d->radius) || d->radius < 0 || d->radius > 10) {
        SETERR(err, "drain: centre must be finite and radius in 0..10 m");
        return FS_ERR_ARG;
    }
    return FS_OK;
}

int fs_world_set_drain(fs_world *w, int slot, const fs_drain_def *d, fs_error *err) {
    if (fs__drain_check(d, err) != FS_OK) return -1;
    slot = fs__first_free(slot, &w->drain[0].used, sizeof w->drain[0], FS_MAX_DRAINS);
    if (slot >= FS_MAX_DRAINS) {
        SETERR(err, "drain: no free slot");
        return -1;
    }
    w->drain[slot].def = *d;
    w->drain[slot].used = true;
    return slot;
}

/* ---- emitters and drains (commands, run at the start of a step) -------- */
void fs__emit_and_drain(fs_world *w) {
    int removed = 0;
    for (int d = 0; d < FS_MAX_DRAINS; d++) {
        const fs_drain *dr = &w->drain[d];
        if (!dr->used || !dr->def.enabled) continue;
        float r2 = dr->def.radius * dr->def.radius;
        for (int i = w->n - 1; i >= 0; i--) {
            float dx = w->p.x[i] - dr->def.centre.x, dy = w->p.y[i] - dr->def.centre.y,
                  dz = w->p.z[i] - dr->def.centre.z;
            if (dx * dx + dy * dy + dz * dz <= r2) fs__remove_index(w, i), removed++;
        }
    }
    if (removed) {
        fs__sync_ids(w);
        w->st.drained += (uint64_t)removed;
    }
    for (int k = 0; k < FS_MAX_EMITTERS; k++) {
        fs_emitter *em = &w->emit[k];
        if (!em->used || !em->def.enabled) continue;
        em->accum += (double)em->def.rate * w->dt;
        /* rate and dt are bounded (fs_world_set_emitter, restore), but no
         * state converts out of int range: NaN or less gives 0 */
        double owed = em->accum < 1e9 ? em->accum : 1e9;
        int want = owed > 0 ? (int)owed : 0;
        em->accum = owed - want;
        int room = (em->def.cap > 0 && em->def.cap < w->cap ? em->def.cap : w->cap) - w->n;
        if (want > room) want = room > 0 ? room : 0;
        const fs_vec3 d = em->def.dir;
        /* an orthonormal basis (t1, t2) of the nozzle plane */
        fs_vec3 a = fabsf(d.x) < 0.9f ? (fs_vec3){1, 0, 0} : (fs_vec3){0, 1, 0};
        fs_vec3 t1 = {d.y * a.z - d.z * a.y, d.z * a.x - d.x * a.z, d.x * a.y - d.y * a.x};
        float tl = sqrtf(t1.x * t1.x + t1.y * t1.y + t1.z * t1.z);
        t1.x /= tl, t1.y /= tl, t1.z /= tl;
        fs_vec3 t2 = {d.y * t1.z - d.z * t1.y, d.z * t1.x - d.x * t1.z, d.x * t1.y - d.y * t1.x};
        for (int q = 0; q < want; q++) {
            uint64_t key = ((uint64_t)k << 40) + (uint64_t)em->emitted;
            float rad = em->def.radius * sqrtf(fs__rand01(key, 11));
            float ang = 6.2831853f * fs__rand01(key, 12);
            float along = em->def.speed * w->dt * ((float)q + 0.5f) / (float)want;
            float ox = rad * cosf(ang), oy = rad * sinf(ang);
            float x = em->def.pos.x + t1.x * ox + t2.x * oy + d.x * along;
            float y = em->def.pos.y + t1.y * ox + t2.y * oy + d.y * along;
            float z = em->def.pos.z + t1.z * ox + t2.z * oy + d.z * along;
            float s = em->def.speed;
            if (fs__alloc_particle(w, x, y, z, d.x * s, d.y * s, d.z * s, em->def.material) < 0) break;
            em->emitted = em->emitted < INT_MAX ? em->emitted + 1 : 0; /* the noise key wraps, never overflows */
            w->st.emitted++;
        }
    }
}
