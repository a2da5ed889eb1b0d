/* snapshot.c - the whole world as a byte string, and back.
 *
 * Layout (version 1): little-endian, no padding between fields, each section
 * a tag (4 bytes) then its fields.  It holds everything a step reads,
 * including the internal particle order, the storage slots, the warm-start
 * contacts and the emitters' fractional counts, so a restored world steps
 * bit-identically to the one that was saved.  Restoring validates every
 * count and index against the world's capacity and every float for
 * finiteness; a damaged snapshot is refused with a reason and the world is
 * left as it was.  The format belongs to this library; the server wraps it
 * (as a msgpack bin) and never looks inside.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"

#define SNAP_MAGIC 0x31575346u /* "FSW1" */
#define SNAP_VERSION 2u

#define SETERR(err, ...)                                                \
    do {                                                                \
        if (err) snprintf((err)->msg, sizeof (err)->msg, __VA_ARGS__); \
    } while (0)

#include <stdarg.h>
static fs_status fail(fs_error *err, fs_status st, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static fs_status fail(fs_error *err, fs_status st, const char *fmt, ...) {
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return st;
}

/* ---- writing ----------------------------------------------------------------- */
typedef struct wbuf {
    unsigned char *p;
    size_t n, cap; /* cap == 0: only count */
} wbuf;

static void put(wbuf *b, const void *src, size_t n) {
    if (b->cap && b->n + n <= b->cap) memcpy(b->p + b->n, src, n);
    b->n += n;
}
static void put_u32(wbuf *b, uint32_t v) { put(b, &v, 4); }

static void write_all(const fs_world *w, wbuf *b) {
    const size_t n = (size_t)w->n, K = (size_t)w->K;
    put_u32(b, SNAP_MAGIC);
    put_u32(b, SNAP_VERSION);
    put_u32(b, (uint32_t)w->cap);
    put_u32(b, (uint32_t)w->K);
    put(b, &w->dt, sizeof w->dt);
    put(b, &w->dom, sizeof w->dom);
    put(b, w->scene, sizeof w->scene);
    put_u32(b, (uint32_t)w->nmat);
    put(b, w->mat, sizeof(fs_material) * (size_t)w->nmat);
    put_u32(b, (uint32_t)w->n);
    put_u32(b, w->next_id);
    const fs_particles *p = &w->p;
    const float *f[9] = {p->x, p->y, p->z, p->px, p->py, p->pz, p->vx, p->vy, p->vz};
    for (int k = 0; k < 9; k++) put(b, f[k], sizeof(float) * n);
    put(b, p->mat, n);
    put(b, p->temp, sizeof(float) * n);
    put(b, p->frozen, n);
    put(b, p->id, sizeof(uint32_t) * n);
    put(b, p->slot, sizeof(int32_t) * n);
    put(b, w->id_order, sizeof(int32_t) * n);
    put_u32(b, (uint32_t)w->nfree);
    put(b, w->free_slots, sizeof(int32_t) * (size_t)w->nfree);
    /* springs of live slots, in particle order */
    for (size_t i = 0; i < n; i++) {
        int s = p->slot[i];
        uint32_t c = w->spr_n[s];
        put_u32(b, c);
        put(b, w->spr_j + (size_t)s * K, sizeof(int32_t) * c);
        put(b, w->spr_L + (size_t)s * K, sizeof(float) * c);
    }
    put(b, w->emit, sizeof w->emit);
    put(b, w->drain, sizeof w->drain);
    put(b, w->heat, sizeof w->heat);
    put(b, &w->ambient, sizeof w->ambient);
    put_u32(b, (uint32_t)w->nbodies);
    put_u32(b, w->next_body_id);
    put(b, w->bodies, sizeof(fs_body) * (size_t)w->nbodies);
    put_u32(b, (uint32_t)w->ncontacts_prev);
    put(b, w->contacts_prev, fs__contact_size() * (size_t)w->ncontacts_prev);
    uint32_t flags = (w->paused ? 1u : 0u);
    put_u32(b, flags);
    put_u32(b, (uint32_t)w->pending_steps);
    put(b, &w->st, sizeof w->st);
    /* the solver and its own state */
    const fs_solver_ops *ops = fs__solver_ops(w->solver);
    size_t sn = ops->state_write ? ops->state_write(w, NULL, 0) : 0;
    put_u32(b, (uint32_t)w->solver);
    put_u32(b, (uint32_t)sn);
    if (sn && b->cap && b->n + sn <= b->cap) ops->state_write(w, b->p + b->n, sn);
    b->n += sn;
    put_u32(b, SNAP_MAGIC);
}

size_t fs_world_snapshot_size(const fs_world *w) {
    wbuf b = {NULL, 0, 0};
    write_all(w, &b);
    return b.n;
}

size_t fs_world_snapshot_write(const fs_world *w, void *buf, size_t cap) {
    size_t need = fs_world_snapshot_size(w);
    if (!buf || cap < need) return 0;
    wbuf b = {buf, 0, cap};
    write_all(w, &b);
    return b.n;
}

/* ---- reading ------------------------------------------------------------------ */
typedef struct rbuf {
    const unsigned char *p;
    size_t n, at;
    bool bad;
} rbuf;

static const void *take(rbuf *r, size_t n) {
    if (r->bad || n > r->n - r->at) {
        r->bad = true;
        return NULL;
    }
    const void *q = r->p + r->at;
    r->at += n;
    return q;
}
static bool get(rbuf *r, void *dst, size_t n) {
    const void *q = take(r, n);
    if (q) memcpy(dst, q, n);
    return q != NULL;
}
static uint32_t get_u32(rbuf *r) {
    uint32_t v = 0;
    get(r, &v, 4);
    return v;
}
static void flag01(bool *b) {
    unsigned char u;
    memcpy(&u, b, 1);
    u = u ? 1 : 0;
    memcpy(b, &u, 1);
}

static bool finite_all(const float *f, size_t n) {
    for (size_t i = 0; i < n; i++)
        if (!isfinite(f[i])) return false;
    return true;
}

bool fs_snapshot_peek(const void *buf, size_t size, fs_snapshot_info *out) {
    rbuf r = {buf, size, 0, false};
    if (!buf || get_u32(&r) != SNAP_MAGIC || get_u32(&r) != SNAP_VERSION) return false;
    uint32_t cap = get_u32(&r), K = get_u32(&r);
    float dt = 0;
    fs_domain dom;
    char scene[32];
    uint32_t nmat = 0;
    get(&r, &dt, sizeof dt);
    get(&r, &dom, sizeof dom);
    get(&r, scene, sizeof scene);
    nmat = get_u32(&r);
    if (r.bad || nmat > FS_MAX_MATERIALS || !take(&r, sizeof(fs_material) * nmat)) return false;
    uint32_t n = get_u32(&r);
    if (r.bad || cap < 1 || cap > (1u << 24) || K < 1 || K > 255 || n > cap || !(dt > 0 && dt <= 0.1f)) return false;
    out->capacity = (int)cap;
    out->springs_per_particle = (int)K;
    out->particles = (int)n;
    out->dt = dt;
    return true;
}

fs_status fs_world_restore(fs_world *w, const void *buf, size_t size, fs_error *err) {
    rbuf r = {buf, size, 0, false};
    if (!buf || get_u32(&r) != SNAP_MAGIC) {
        SETERR(err, "snapshot: not a world snapshot (bad magic)");
        return FS_ERR_ARG;
    }
    uint32_t ver = get_u32(&r), cap = get_u32(&r), K = get_u32(&r);
    if (ver != SNAP_VERSION) {
        SETERR(err, "snapshot: version %u, this build reads %u", ver, SNAP_VERSION);
        return FS_ERR_ARG;
    }
    if (cap != (uint32_t)w->cap) {
        SETERR(err, "snapshot: made for a world of capacity %u, this one holds %d", cap, w->cap);
        return FS_ERR_ARG;
    }
    if (K != (uint32_t)w->K) {
        SETERR(err, "snapshot: %u spring slots per particle, this world has %d", K, w->K);
        return FS_ERR_ARG;
    }
    float dt;
    fs_domain dom;
    char scene[sizeof w->scene];
    get(&r, &dt, sizeof dt);
    get(&r, &dom, sizeof dom);
    get(&r, scene, sizeof scene);
    uint32_t nmat = get_u32(&r);
    if (r.bad || nmat < 1 || nmat > FS_MAX_MATERIALS) {
        SETERR(err, "snapshot: truncated, or %u materials", nmat);
        return FS_ERR_ARG;
    }
    if (fabsf(dt - w->dt) > 1e-9f) {
        SETERR(err, "snapshot: step %g s, this world steps %g s", dt, w->dt);
        return FS_ERR_ARG;
    }
    fs_material mats[FS_MAX_MATERIALS];
    get(&r, mats, sizeof(fs_material) * nmat);
    for (uint32_t m = 0; m < nmat && !r.bad; m++) {
        mats[m].name[sizeof mats[m].name - 1] = 0;
        for (int q = 0; q < FS_P_COUNT; q++) {
            const fs_param_info *in = fs_param_get_info((fs_param)q);
            float v = mats[m].p[q];
            if (!(v >= in->min && v <= in->max)) {
                SETERR(err, "snapshot: material %u %s = %g outside %g..%g", m, in->name, v, in->min, in->max);
                return FS_ERR_RANGE;
            }
        }
    }
    uint32_t n = get_u32(&r), next_id = get_u32(&r);
    if (r.bad || n > (uint32_t)w->cap || cap > (uint32_t)w->cap * 4u + 1000000u) {
        SETERR(err, "snapshot: %u particles, this world holds %d", n, w->cap);
        return FS_ERR_RANGE;
    }
    /* Everything below is read into a scratch copy first; the world changes
     * only once the whole snapshot has been checked. */
    size_t bytes_needed = (size_t)n * (10 * sizeof(float) + 2 + 3 * sizeof(int32_t));
    if (bytes_needed > size - r.at) {
        SETERR(err, "snapshot: truncated (particles)");
        return FS_ERR_ARG;
    }
    const float *F[9];
    for (int k = 0; k < 9; k++) F[k] = take(&r, sizeof(float) * n);
    const uint8_t *M = take(&r, n);
    const float *TEMP = take(&r, sizeof(float) * n);
    const uint8_t *FROZEN = take(&r, n);
    const uint32_t *ID = take(&r, sizeof(uint32_t) * n);
    const int32_t *SL = take(&r, sizeof(int32_t) * n);
    const int32_t *ORD = take(&r, sizeof(int32_t) * n);
    uint32_t nfree = get_u32(&r);
    if (r.bad || nfree + n != (uint32_t)w->cap) {
        SETERR(err, "snapshot: %u free slots + %u particles != capacity %d", nfree, n, w->cap);
        return FS_ERR_ARG;
    }
    const int32_t *FREE = take(&r, sizeof(int32_t) * nfree);
    if (r.bad) {
        SETERR(err, "snapshot: truncated (slots)");
        return FS_ERR_ARG;
    }
    /* floats are read through memcpy: the buffer need not be aligned */
    float *tmpf = malloc(sizeof(float) * (n ? n : 1));
    char *seen = calloc((size_t)w->cap, 1);
    if (!tmpf || !seen) {
        free(tmpf), free(seen);
        SETERR(err, "snapshot: out of memory");
        return FS_ERR_NOMEM;
    }
    fs_status st = FS_OK;
    for (int k = 0; k < 10 && st == FS_OK; k++) {
        memcpy(tmpf, k < 9 ? F[k] : TEMP, sizeof(float) * n);
        if (!finite_all(tmpf, n)) st = fail(err, FS_ERR_ARG, "snapshot: a particle has a non-finite value");
    }
    int32_t *idx_of_slot = malloc(sizeof(int32_t) * (size_t)w->cap);
    if (!idx_of_slot) st = fail(err, FS_ERR_NOMEM, "snapshot: out of memory");
    for (uint32_t i = 0; i < n && st == FS_OK; i++) {
        uint8_t m;
        int32_t s;
        uint32_t id;
        memcpy(&m, M + i, 1), memcpy(&s, SL + i, 4), memcpy(&id, ID + i, 4);
        if (m >= nmat || s < 0 || s >= w->cap || seen[s] || id >= next_id) {
            st = fail(err, FS_ERR_ARG, "snapshot: particle %u has a bad material, slot or id", i);
        } else {
            seen[s] = 1;
            idx_of_slot[s] = (int32_t)i;
        }
    }
    for (uint32_t i = 0; i < nfree && st == FS_OK; i++) {
        int32_t s;
        memcpy(&s, FREE + i, 4);
        if (s < 0 || s >= w->cap || seen[s])
            st = fail(err, FS_ERR_ARG, "snapshot: free slot %d is bad or in use", s);
        else
            seen[s] = 2;
    }
    /* id order: every live slot once, ids increasing */
    uint32_t last_id = 0;
    for (uint32_t k = 0; k < n && st == FS_OK; k++) {
        int32_t s;
        uint32_t id;
        memcpy(&s, ORD + k, 4);
        if (s < 0 || s >= w->cap || seen[s] != 1) {
            st = fail(err, FS_ERR_ARG, "snapshot: id order names slot %d", s);
            break;
        }
        memcpy(&id, ID + idx_of_slot[s], 4);
        if (k > 0 && id <= last_id) {
            st = fail(err, FS_ERR_ARG, "snapshot: ids out of order");
            break;
        }
        last_id = id;
        seen[s] = 3;
    }
    /* springs: count and partners (live slots) */
    size_t spr_at = r.at;
    for (uint32_t i = 0; i < n && st == FS_OK; i++) {
        uint32_t c = get_u32(&r);
        if (r.bad || c > K) {
            st = fail(err, FS_ERR_ARG, "snapshot: bad spring count");
            break;
        }
        const int32_t *J = take(&r, sizeof(int32_t) * c);
        const float *L = take(&r, sizeof(float) * c);
        if (!J || !L) {
            st = fail(err, FS_ERR_ARG, "snapshot: truncated (springs)");
            break;
        }
        for (uint32_t q = 0; q < c; q++) {
            int32_t t;
            float l;
            memcpy(&t, J + q, 4), memcpy(&l, L + q, 4);
            if (t < 0 || t >= w->cap || seen[t] != 3 || !isfinite(l)) {
                st = fail(err, FS_ERR_ARG, "snapshot: a spring names a bad partner");
                break;
            }
        }
    }
    fs_emitter emit[FS_MAX_EMITTERS];
    fs_drain drain[FS_MAX_DRAINS];
    get(&r, emit, sizeof emit);
    get(&r, drain, sizeof drain);
    fs_heater heat[FS_MAX_HEATERS];
    float ambient = 20;
    get(&r, heat, sizeof heat);
    get(&r, &ambient, sizeof ambient);
    for (int k = 0; k < FS_MAX_HEATERS; k++) flag01(&heat[k].used), flag01(&heat[k].def.enabled);
    /* bools from outside are made 0 or 1 before anything reads them as bool */
    for (int k = 0; k < FS_MAX_EMITTERS; k++) flag01(&emit[k].used), flag01(&emit[k].def.enabled);
    for (int k = 0; k < FS_MAX_DRAINS; k++) flag01(&drain[k].used), flag01(&drain[k].def.enabled);
    uint32_t nb = get_u32(&r), next_body = get_u32(&r);
    if (st == FS_OK && (r.bad || nb > FS_MAX_BODIES))
        st = fail(err, FS_ERR_ARG, "snapshot: truncated or %u bodies", nb);
    fs_body bodies[FS_MAX_BODIES];
    if (st == FS_OK) get(&r, bodies, sizeof(fs_body) * nb);
    for (uint32_t k = 0; k < nb && st == FS_OK; k++) flag01(&bodies[k].is_static), flag01(&bodies[k].grab);
    for (uint32_t k = 0; k < nb && st == FS_OK; k++)
        if ((int)bodies[k].shape < 0 || bodies[k].shape > FS_SHAPE_CAPSULE || bodies[k].id >= next_body ||
            !finite_all(&bodies[k].pos.x, 3) || !finite_all(&bodies[k].vel.x, 3) || !isfinite(bodies[k].rot.w))
            st = fail(err, FS_ERR_ARG, "snapshot: body %u is damaged", k);
    uint32_t nc = get_u32(&r);
    if (st == FS_OK && (r.bad || nc > FS_MAX_CONTACTS)) st = fail(err, FS_ERR_ARG, "snapshot: %u contacts", nc);
    const void *contacts = st == FS_OK ? take(&r, fs__contact_size() * nc) : NULL;
    uint32_t flags = get_u32(&r), pending = get_u32(&r);
    fs_stats stats;
    get(&r, &stats, sizeof stats);
    uint32_t solver = get_u32(&r), slen = get_u32(&r);
    const void *sbytes = take(&r, slen);
    const fs_solver_ops *sops = r.bad ? NULL : fs__solver_ops((fs_solver)solver);
    if (st == FS_OK && !r.bad && !sops) st = fail(err, FS_ERR_ARG, "snapshot: solver %u is not built in", solver);
    if (st == FS_OK && sops && (slen ? !sops->state_read : false))
        st = fail(err, FS_ERR_ARG, "snapshot: state for solver %s, which keeps none", sops->name);
    if (st == FS_OK && sops && sops->state_read && sops->state_read(w, sbytes, slen, false, err) != FS_OK)
        st = FS_ERR_ARG;
    if (st == FS_OK && (r.bad || get_u32(&r) != SNAP_MAGIC || r.at != size))
        st = fail(err, FS_ERR_ARG, "snapshot: truncated or trailing bytes");
    if (st == FS_OK) { /* emitters and drains */
        for (int k = 0; k < FS_MAX_EMITTERS && st == FS_OK; k++)
            if (emit[k].used && (emit[k].def.material < 0 || emit[k].def.material >= (int)nmat ||
                                 !finite_all(&emit[k].def.pos.x, 3) || !finite_all(&emit[k].def.dir.x, 3) ||
                                 !isfinite(emit[k].def.rate) || !isfinite(emit[k].def.speed) ||
                                 !isfinite(emit[k].def.radius) || !(emit[k].accum >= 0 && emit[k].accum < 1e7)))
                st = fail(err, FS_ERR_ARG, "snapshot: emitter %d is damaged", k);
        for (int k = 0; k < FS_MAX_HEATERS && st == FS_OK; k++)
            if (heat[k].used && ((int)heat[k].def.kind < 0 || heat[k].def.kind > FS_HEAT_FLOOR ||
                                 !finite_all(&heat[k].def.centre.x, 3) || !isfinite(heat[k].def.radius) ||
                                 !isfinite(heat[k].def.rate) || !isfinite(heat[k].def.temperature)))
                st = fail(err, FS_ERR_ARG, "snapshot: heater %d is damaged", k);
        if (!isfinite(ambient)) st = fail(err, FS_ERR_ARG, "snapshot: ambient temperature");
        for (int k = 0; k < FS_MAX_DRAINS && st == FS_OK; k++)
            if (drain[k].used && (!finite_all(&drain[k].def.centre.x, 3) || !isfinite(drain[k].def.radius)))
                st = fail(err, FS_ERR_ARG, "snapshot: drain %d is damaged", k);
    }
    fs_error derr;
    if (st == FS_OK && fs_world_reset(w, &dom, &derr) != FS_OK) { /* also checks the domain */
        SETERR(err, "snapshot: %.140s", derr.msg);
        st = FS_ERR_ARG;
    }
    if (st == FS_OK && (w->solver != (fs_solver)solver || (sops->attach && !w->solver_state))) {
        fs__solver_detach(w);
        w->solver = FS_SOLVER_CLAVET;
        if (sops->attach) st = sops->attach(w, err);
        if (st == FS_OK) w->solver = (fs_solver)solver;
    }
    if (st != FS_OK) {
        free(tmpf), free(seen), free(idx_of_slot);
        return st;
    }
    /* ---- commit ---- */
    memcpy(w->mat, mats, sizeof(fs_material) * nmat);
    w->nmat = (int)nmat;
    memcpy(w->scene, scene, sizeof scene);
    w->scene[sizeof w->scene - 1] = 0;
    w->n = (int)n;
    w->next_id = next_id;
    float *dst[9] = {w->p.x, w->p.y, w->p.z, w->p.px, w->p.py, w->p.pz, w->p.vx, w->p.vy, w->p.vz};
    for (int k = 0; k < 9; k++) memcpy(dst[k], F[k], sizeof(float) * n);
    memcpy(w->p.mat, M, n);
    memcpy(w->p.temp, TEMP, sizeof(float) * n);
    for (uint32_t i = 0; i < n; i++) w->p.frozen[i] = FROZEN[i] ? 1 : 0;
    memcpy(w->p.id, ID, sizeof(uint32_t) * n);
    memcpy(w->p.slot, SL, sizeof(int32_t) * n);
    memcpy(w->id_order, ORD, sizeof(int32_t) * n);
    w->nfree = (int)nfree;
    memcpy(w->free_slots, FREE, sizeof(int32_t) * nfree);
    for (int s = 0; s < w->cap; s++) w->slot_index[s] = -1;
    for (int i = 0; i < w->n; i++) w->slot_index[w->p.slot[i]] = i;
    r.at = spr_at, r.bad = false;
    long total = 0;
    for (int i = 0; i < w->n; i++) {
        int s = w->p.slot[i];
        uint32_t c = get_u32(&r);
        memcpy(w->spr_j + (size_t)s * K, take(&r, sizeof(int32_t) * c), sizeof(int32_t) * c);
        memcpy(w->spr_L + (size_t)s * K, take(&r, sizeof(float) * c), sizeof(float) * c);
        w->spr_n[s] = (uint16_t)c;
        total += c;
    }
    w->springs = (int)(total / 2);
    memcpy(w->emit, emit, sizeof emit);
    memcpy(w->drain, drain, sizeof drain);
    memcpy(w->heat, heat, sizeof heat);
    w->ambient = ambient;
    w->nbodies = (int)nb;
    w->next_body_id = next_body;
    memcpy(w->bodies, bodies, sizeof(fs_body) * nb);
    w->ncontacts_prev = (int)nc;
    memcpy(w->contacts_prev, contacts, fs__contact_size() * nc);
    w->paused = flags & 1u;
    w->pending_steps = (int)(pending > 100000 ? 100000 : pending);
    w->st = stats;
    w->st.solver = w->solver;
    fs__rebuild_by_id(w);
    free(tmpf), free(seen), free(idx_of_slot);
    if (sops->state_read) sops->state_read(w, sbytes, slen, true, NULL);
    return FS_OK;
}
