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
    char scene[sizeof w->scene] = {0}; /* the name and zeros: the same bytes after a restore */
    memcpy(scene, w->scene, strnlen(w->scene, sizeof scene - 1));
    put(b, scene, sizeof scene);
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

/* A name from outside (material, scene): NUL-terminated, printable ASCII
 * without quotes or backslashes, so it can go into JSON and msgpack as it is. */
static bool clean_name(char *name, size_t cap, bool allow_empty) {
    if (!memchr(name, 0, cap)) return false;
    size_t n = strlen(name);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)name[i];
        if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    }
    memset(name + n, 0, cap - n); /* no stale bytes after the name */
    return allow_empty || n > 0;
}

static bool in_box(float v, float lo, float hi) { return v >= lo && v <= hi; }

/* A particle's position (and its previous one) lies in the box grown by
 * one h: the step keeps centres inside the box; body extraction may move
 * the previous position a little past it. */
#define POS_MARGIN_H 1.0f

fs_status fs_world_restore(fs_world *w, const void *buf, size_t size, fs_error *err) {
    rbuf r = {buf, size, 0, false};
    if (!buf || get_u32(&r) != SNAP_MAGIC) return fail(err, FS_ERR_ARG, "snapshot: not a world snapshot (bad magic)");
    uint32_t ver = get_u32(&r), cap = get_u32(&r), K = get_u32(&r);
    if (r.bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (header)");
    if (ver != SNAP_VERSION) return fail(err, FS_ERR_ARG, "snapshot: version %u, this build reads %u", ver, SNAP_VERSION);
    if (cap != (uint32_t)w->cap)
        return fail(err, FS_ERR_ARG, "snapshot: made for a world of capacity %u, this one holds %d", cap, w->cap);
    if (K != (uint32_t)w->K)
        return fail(err, FS_ERR_ARG, "snapshot: %u spring slots per particle, this world has %d", K, w->K);
    float dt;
    fs_domain dom;
    char scene[sizeof w->scene];
    get(&r, &dt, sizeof dt);
    get(&r, &dom, sizeof dom);
    get(&r, scene, sizeof scene);
    uint32_t nmat = get_u32(&r);
    if (r.bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (domain)");
    if (!(nmat >= 1 && nmat <= FS_MAX_MATERIALS))
        return fail(err, FS_ERR_RANGE, "snapshot: %u materials, outside 1..%d", nmat, FS_MAX_MATERIALS);
    if (!(fabsf(dt - w->dt) <= 1e-9f))
        return fail(err, FS_ERR_ARG, "snapshot: step %g s, this world steps %g s", dt, w->dt);
    fs_error derr;
    if (fs__domain_check(&dom, w->cap, &derr) != FS_OK) return fail(err, FS_ERR_RANGE, "snapshot: %.140s", derr.msg);
    if (!clean_name(scene, sizeof scene, false))
        return fail(err, FS_ERR_ARG, "snapshot: the scene name is not printable ASCII (1..%zu characters)", sizeof scene - 1);
    const float h = dom.h, margin = POS_MARGIN_H * dom.h;
    const float blo[3] = {dom.box_min.x - margin, dom.box_min.y - margin, dom.box_min.z - margin};
    const float bhi[3] = {dom.box_max.x + margin, dom.box_max.y + margin, dom.box_max.z + margin};

    fs_material mats[FS_MAX_MATERIALS];
    if (!get(&r, mats, sizeof(fs_material) * nmat)) return fail(err, FS_ERR_ARG, "snapshot: truncated (materials)");
    for (uint32_t m = 0; m < nmat; m++) {
        if (!clean_name(mats[m].name, sizeof mats[m].name, false))
            return fail(err, FS_ERR_ARG, "snapshot: material %u: the name is not printable ASCII (1..%zu characters)", m,
                        sizeof mats[m].name - 1);
        for (uint32_t o = 0; o < m; o++)
            if (!strcmp(mats[o].name, mats[m].name))
                return fail(err, FS_ERR_ARG, "snapshot: materials %u and %u are both named '%s'", o, m, mats[m].name);
        for (int q = 0; q < FS_P_COUNT; q++) {
            const fs_param_info *in = fs_param_get_info((fs_param)q);
            float v = mats[m].p[q];
            if (!(v >= in->min && v <= in->max) || (in->is_flag && v != 0.0f && v != 1.0f))
                return fail(err, FS_ERR_RANGE, "snapshot: material %s: %s = %g outside %g..%g%s", mats[m].name, in->name,
                            v, in->min, in->max, in->is_flag ? " (a flag: 0 or 1)" : "");
        }
    }
    uint32_t n = get_u32(&r), next_id = get_u32(&r);
    if (r.bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (particle count)");
    if (n > (uint32_t)w->cap) return fail(err, FS_ERR_RANGE, "snapshot: %u particles, this world holds %d", n, w->cap);
    /* Everything below is read into a scratch copy first; the world changes
     * only once the whole snapshot has been checked. */
    size_t bytes_needed = (size_t)n * (10 * sizeof(float) + 2 + 3 * sizeof(int32_t));
    if (bytes_needed > size - r.at) return fail(err, FS_ERR_ARG, "snapshot: truncated (particles)");
    const unsigned char *F[9];
    for (int k = 0; k < 9; k++) F[k] = take(&r, sizeof(float) * n);
    const uint8_t *M = take(&r, n);
    const unsigned char *TEMP = take(&r, sizeof(float) * n);
    const uint8_t *FROZEN = take(&r, n);
    const unsigned char *ID = take(&r, sizeof(uint32_t) * n);
    const unsigned char *SL = take(&r, sizeof(int32_t) * n);
    const unsigned char *ORD = take(&r, sizeof(int32_t) * n);
    uint32_t nfree = get_u32(&r);
    if (r.bad || nfree != (uint32_t)w->cap - n)
        return fail(err, FS_ERR_ARG, "snapshot: %u free slots + %u particles != capacity %d", nfree, n, w->cap);
    const unsigned char *FREE = take(&r, sizeof(int32_t) * nfree);
    if (r.bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (slots)");

    char *seen = calloc((size_t)w->cap, 1);
    int32_t *idx_of_slot = malloc(sizeof(int32_t) * (size_t)w->cap);
    int32_t *grid = NULL;
    if (!seen || !idx_of_slot) {
        free(seen), free(idx_of_slot);
        return fail(err, FS_ERR_NOMEM, "snapshot: out of memory");
    }
    fs_status st = FS_OK;
    /* floats are read through memcpy: the buffer need not be aligned */
    for (uint32_t i = 0; i < n && st == FS_OK; i++) {
        float v[9], T;
        for (int k = 0; k < 9; k++) memcpy(&v[k], F[k] + 4 * (size_t)i, 4);
        memcpy(&T, TEMP + 4 * (size_t)i, 4);
        for (int k = 0; k < 6 && st == FS_OK; k++)
            if (!in_box(v[k], blo[k % 3], bhi[k % 3]))
                st = fail(err, FS_ERR_RANGE, "snapshot: particle %u: %sposition %c = %g outside %g..%g m (the box)", i,
                          k < 3 ? "" : "previous ", "xyz"[k % 3], v[k], blo[k % 3], bhi[k % 3]);
        for (int k = 6; k < 9 && st == FS_OK; k++)
            if (!(fabsf(v[k]) <= FS_SNAPSHOT_MAX_SPEED))
                st = fail(err, FS_ERR_RANGE, "snapshot: particle %u: velocity %c = %g outside -%g..%g m/s", i, "xyz"[k - 6],
                          v[k], FS_SNAPSHOT_MAX_SPEED, FS_SNAPSHOT_MAX_SPEED);
        if (st == FS_OK && !(T >= FS_TEMP_MIN && T <= FS_TEMP_MAX))
            st = fail(err, FS_ERR_RANGE, "snapshot: particle %u: temperature %g outside %g..%g C", i, T, FS_TEMP_MIN,
                      FS_TEMP_MAX);
    }
    for (uint32_t i = 0; i < n && st == FS_OK; i++) {
        uint8_t m;
        int32_t s;
        uint32_t id;
        memcpy(&m, M + i, 1), memcpy(&s, SL + 4 * (size_t)i, 4), memcpy(&id, ID + 4 * (size_t)i, 4);
        if (m >= nmat || s < 0 || s >= w->cap || seen[s] || id >= next_id) {
            st = fail(err, FS_ERR_ARG, "snapshot: particle %u: material %u (of %u), slot %d (of %d, once) or id %u (below %u)",
                      i, m, nmat, s, w->cap, id, next_id);
        } else {
            seen[s] = 1;
            idx_of_slot[s] = (int32_t)i;
        }
    }
    for (uint32_t i = 0; i < nfree && st == FS_OK; i++) {
        int32_t s;
        memcpy(&s, FREE + 4 * (size_t)i, 4);
        if (s < 0 || s >= w->cap || seen[s])
            st = fail(err, FS_ERR_ARG, "snapshot: free slot %d is outside 0..%d or in use", s, w->cap - 1);
        else
            seen[s] = 2;
    }
    /* id order: every live slot once, ids increasing */
    uint32_t last_id = 0;
    for (uint32_t k = 0; k < n && st == FS_OK; k++) {
        int32_t s;
        uint32_t id;
        memcpy(&s, ORD + 4 * (size_t)k, 4);
        if (s < 0 || s >= w->cap || seen[s] != 1) {
            st = fail(err, FS_ERR_ARG, "snapshot: id order names slot %d", s);
            break;
        }
        memcpy(&id, ID + 4 * (size_t)idx_of_slot[s], 4);
        if (k > 0 && id <= last_id) {
            st = fail(err, FS_ERR_ARG, "snapshot: ids out of order");
            break;
        }
        last_id = id;
        seen[s] = 3;
    }
    /* springs: per particle (in index order) a count <= K, then partners
     * (live slots, strictly increasing, not itself) and rest lengths; every
     * spring is held by both ends with the same length */
    size_t spr_at = r.at;
    const unsigned char **sj = NULL, **sl = NULL;
    uint32_t *sc = NULL;
    if (st == FS_OK && n) {
        sj = malloc(sizeof *sj * (size_t)w->cap), sl = malloc(sizeof *sl * (size_t)w->cap);
        sc = calloc((size_t)w->cap, sizeof *sc);
        if (!sj || !sl || !sc) st = fail(err, FS_ERR_NOMEM, "snapshot: out of memory");
    }
    for (uint32_t i = 0; i < n && st == FS_OK; i++) {
        uint32_t c = get_u32(&r);
        if (r.bad || c > K) {
            st = fail(err, FS_ERR_ARG, "snapshot: particle %u: %u springs, outside 0..%u (or truncated)", i, c, K);
            break;
        }
        const unsigned char *J = take(&r, sizeof(int32_t) * c);
        const unsigned char *L = take(&r, sizeof(float) * c);
        if (r.bad) {
            st = fail(err, FS_ERR_ARG, "snapshot: truncated (springs)");
            break;
        }
        int32_t s, prev = -1;
        memcpy(&s, SL + 4 * (size_t)i, 4);
        sj[s] = J, sl[s] = L, sc[s] = c;
        for (uint32_t q = 0; q < c; q++) {
            int32_t t;
            float l;
            memcpy(&t, J + 4 * (size_t)q, 4), memcpy(&l, L + 4 * (size_t)q, 4);
            if (t < 0 || t >= w->cap || seen[t] != 3 || t == s || t <= prev || !(l >= 0 && l <= 100 * h)) {
                st = fail(err, FS_ERR_ARG, "snapshot: particle %u: spring %u names slot %d (live, sorted, not itself) "
                          "with rest length %g (0..100 h)", i, q, t, l);
                break;
            }
            prev = t;
        }
    }
    for (int32_t s = 0; s < w->cap && st == FS_OK && n; s++) { /* both ends, same length */
        for (uint32_t q = 0; q < sc[s] && st == FS_OK; q++) {
            int32_t t;
            memcpy(&t, sj[s] + 4 * (size_t)q, 4);
            bool found = false; /* t's partners are sorted: bisect */
            for (int32_t lo = 0, hi = (int32_t)sc[t] - 1; lo <= hi && !found;) {
                int32_t mid = (lo + hi) / 2, u;
                memcpy(&u, sj[t] + 4 * (size_t)mid, 4);
                if (u == s)
                    found = !memcmp(sl[t] + 4 * (size_t)mid, sl[s] + 4 * (size_t)q, 4), lo = hi + 1;
                else if (u < s)
                    lo = mid + 1;
                else
                    hi = mid - 1;
            }
            if (!found) st = fail(err, FS_ERR_ARG, "snapshot: the spring of slots %d and %d is held by one end only", s, t);
        }
    }
    free(sj), free(sl), free(sc);

    fs_emitter emit[FS_MAX_EMITTERS];
    fs_drain drain[FS_MAX_DRAINS];
    fs_heater heat[FS_MAX_HEATERS];
    float ambient = 20;
    get(&r, emit, sizeof emit);
    get(&r, drain, sizeof drain);
    get(&r, heat, sizeof heat);
    get(&r, &ambient, sizeof ambient);
    /* bools from outside are made 0 or 1 before anything reads them as bool */
    for (int k = 0; k < FS_MAX_HEATERS; k++) flag01(&heat[k].used), flag01(&heat[k].def.enabled);
    for (int k = 0; k < FS_MAX_EMITTERS; k++) flag01(&emit[k].used), flag01(&emit[k].def.enabled);
    for (int k = 0; k < FS_MAX_DRAINS; k++) flag01(&drain[k].used), flag01(&drain[k].def.enabled);
    uint32_t nb = get_u32(&r), next_body = get_u32(&r);
    if (st == FS_OK && (r.bad || nb > FS_MAX_BODIES))
        st = fail(err, FS_ERR_ARG, "snapshot: %u bodies, outside 0..%d (or truncated)", nb, FS_MAX_BODIES);
    fs_body bodies[FS_MAX_BODIES];
    if (st == FS_OK) get(&r, bodies, sizeof(fs_body) * nb);
    for (uint32_t k = 0; k < nb && st == FS_OK; k++) flag01(&bodies[k].is_static), flag01(&bodies[k].grab);
    uint32_t nc = get_u32(&r);
    if (st == FS_OK && (r.bad || nc > FS_MAX_CONTACTS))
        st = fail(err, FS_ERR_ARG, "snapshot: %u contacts, outside 0..%d (or truncated)", nc, FS_MAX_CONTACTS);
    const void *contacts = st == FS_OK ? take(&r, fs__contact_size() * nc) : NULL;
    uint32_t flags = get_u32(&r), pending = get_u32(&r);
    fs_stats stats;
    get(&r, &stats, sizeof stats);
    uint32_t solver = get_u32(&r), slen = get_u32(&r);
    const void *sbytes = take(&r, slen);
    if (st == FS_OK && (r.bad || get_u32(&r) != SNAP_MAGIC || r.at != size))
        st = fail(err, FS_ERR_ARG, "snapshot: truncated or trailing bytes");
    if (st == FS_OK && fs__bodies_check(bodies, (int)nb, next_body, &dom, contacts, (int)nc, err) != FS_OK)
        st = FS_ERR_ARG;
    if (st == FS_OK && flags > 1u) st = fail(err, FS_ERR_ARG, "snapshot: flags %#x (only bit 0, paused, is known)", flags);
    if (st == FS_OK && pending > 100000u)
        st = fail(err, FS_ERR_RANGE, "snapshot: %u pending steps, outside 0..100000", pending);
    if (st == FS_OK) {
        bool ok = isfinite(stats.sim_time) && stats.sim_time >= 0 && isfinite(stats.step_ms) &&
                  isfinite(stats.solver_residual);
        for (int q = 0; q < FS_PHASE_COUNT; q++) ok = ok && isfinite(stats.phase_ms[q]);
        if (!ok) st = fail(err, FS_ERR_ARG, "snapshot: the statistics hold a non-finite time or residual");
    }
    const fs_solver_ops *sops = fs__solver_ops((fs_solver)solver);
    if (st == FS_OK && !sops) st = fail(err, FS_ERR_ARG, "snapshot: solver %u is not built in", solver);
    if (st == FS_OK && slen && !sops->state_read)
        st = fail(err, FS_ERR_ARG, "snapshot: state for solver %s, which keeps none", sops->name);
    if (st == FS_OK && sops->state_read &&
        sops->state_read(w, sbytes, slen, &(fs__restore_ctx){&dom, (int)n, false}, err) != FS_OK)
        st = FS_ERR_ARG;
    for (int k = 0; k < FS_MAX_EMITTERS && st == FS_OK; k++) {
        if (!emit[k].used) {
            memset(&emit[k], 0, sizeof emit[k]);
            continue;
        }
        float dl = sqrtf(emit[k].def.dir.x * emit[k].def.dir.x + emit[k].def.dir.y * emit[k].def.dir.y +
                         emit[k].def.dir.z * emit[k].def.dir.z);
        if (fs__emitter_check(&emit[k].def, (int)nmat, &derr) != FS_OK)
            st = fail(err, FS_ERR_RANGE, "snapshot: emitter %d: %.120s", k, derr.msg);
        else if (!(fabsf(dl - 1.0f) < 1e-3f) || emit[k].emitted < 0 || !(emit[k].accum >= 0 && emit[k].accum < 1))
            st = fail(err, FS_ERR_ARG, "snapshot: emitter %d: direction not of unit length, emitted < 0 or a "
                      "fractional count outside 0..1", k);
    }
    for (int k = 0; k < FS_MAX_HEATERS && st == FS_OK; k++) {
        if (!heat[k].used)
            memset(&heat[k], 0, sizeof heat[k]);
        else if (fs__heater_check(&heat[k].def, &derr) != FS_OK)
            st = fail(err, FS_ERR_RANGE, "snapshot: heater %d: %.120s", k, derr.msg);
    }
    for (int k = 0; k < FS_MAX_DRAINS && st == FS_OK; k++) {
        if (!drain[k].used)
            memset(&drain[k], 0, sizeof drain[k]);
        else if (fs__drain_check(&drain[k].def, &derr) != FS_OK)
            st = fail(err, FS_ERR_RANGE, "snapshot: drain %d: %.120s", k, derr.msg);
    }
    if (st == FS_OK && !(ambient >= FS_TEMP_MIN && ambient <= FS_TEMP_MAX))
        st = fail(err, FS_ERR_RANGE, "snapshot: ambient temperature %g outside %g..%g C", ambient, FS_TEMP_MIN, FS_TEMP_MAX);

    /* ---- what can still fail allocates: the grid, the solver's state ---- */
    if (st == FS_OK && !(grid = fs__grid_alloc(&dom))) st = fail(err, FS_ERR_NOMEM, "snapshot: out of memory for the grid");
    if (st == FS_OK && (w->solver != (fs_solver)solver || (sops->attach && !w->solver_state))) {
        /* the new solver's state is made beside the old one, which goes only once it exists */
        void *old_state = w->solver_state;
        w->solver_state = NULL;
        if (sops->attach && (st = sops->attach(w, err)) != FS_OK) {
            w->solver_state = old_state;
        } else {
            void *new_state = w->solver_state;
            w->solver_state = old_state;
            fs__solver_detach(w);
            w->solver_state = new_state;
            w->solver = (fs_solver)solver;
        }
    }
    if (st != FS_OK) {
        free(seen), free(idx_of_slot), free(grid);
        return st;
    }
    /* ---- commit: nothing below can fail ---- */
    fs__reset_apply(w, &dom, grid);
    memcpy(w->mat, mats, sizeof(fs_material) * nmat);
    w->nmat = (int)nmat;
    memcpy(w->scene, scene, sizeof scene);
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
    if (nc) memcpy(w->contacts_prev, contacts, fs__contact_size() * nc);
    w->paused = flags & 1u;
    w->pending_steps = (int)pending;
    w->st = stats;
    w->st.solver = w->solver;
    fs__rebuild_by_id(w);
    free(seen), free(idx_of_slot);
    if (sops->state_read) sops->state_read(w, sbytes, slen, &(fs__restore_ctx){&dom, (int)n, true}, NULL);
    return FS_OK;
}
