/* snapshot.c - the whole world as a byte string, and back.
 *
 * Layout: little-endian, no padding between fields, each section
 * a tag (4 bytes) then its fields.  Version 3 adds the mesh obstacles (each
 * its placement and its placed mesh) before the solver's section; version 2
 * (without them) is still read, as a world without obstacles.  Version 4
 * adds the mesh bodies' meshes (each in its body frame, with its volume and
 * principal moments) after the obstacles; a version 2 or 3 snapshot is
 * still read, unless it holds a mesh body.  Version 5 adds the probes (each
 * its definition, latest value and the tick it was measured at) after the
 * mesh bodies; an older snapshot is read as a world without probes.
 * Version 6 adds the size the scene was loaded with (fs_world_scene_size)
 * after the probes; an older snapshot is read with 0 (not known).  It
 * holds everything a step reads,
 * including the internal particle order, the storage slots, the warm-start
 * contacts and the emitters' fractional counts, so a restored world steps
 * bit-identically to the one that was saved.  Restoring validates every
 * count and index against the world's capacity and every float for
 * finiteness; a damaged snapshot is refused with a reason and the world is
 * left as it was.  The format belongs to this library; the server wraps it
 * (as a msgpack bin) and never looks inside.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "body_internal.h"
#include "grid.h"
#include "heat.h"
#include "material.h"
#include "obstacles.h"
#include "probes.h"
#include "solver_table.h"
#include "sources.h"
#include "world.h"

#define SNAP_MAGIC 0x31575346u /* "FSW1" */
#define SNAP_VERSION 6u
#define SNAP_VERSION_OLDEST 2u /* the oldest version read */

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
static void put_u32(wbuf *b, uint32_t v) {
    put(b, &v, 4);
}

/* The obstacles: their count and next id, then each one's id, placement
 * (pos, rot, scale) and placed mesh (world coordinates), from which a
 * restore builds the same distance field. */
static void write_obstacles(const fs_world *w, wbuf *b) {
    put_u32(b, (uint32_t)w->nobstacles);
    put_u32(b, w->next_obstacle_id);
    for (int k = 0; k < w->nobstacles; k++) {
        const fs_obstacle *o = &w->obstacles[k];
        put_u32(b, o->id);
        put(b, &o->pos, sizeof o->pos);
        put(b, &o->rot, sizeof o->rot);
        put(b, &o->scale, sizeof o->scale);
        put_u32(b, (uint32_t)o->nv);
        put_u32(b, (uint32_t)o->nt);
        put(b, o->verts, sizeof(fs_vec3) * (size_t)o->nv);
        put(b, o->tris, sizeof(uint32_t) * 3 * (size_t)o->nt);
    }
}

/* The mesh bodies' meshes, in body order: their count, then each one's
 * vertex and triangle counts, volume and principal moments at unit density
 * and its mesh in the body's frame (fs_world_body_mesh), from which a
 * restore builds the same body (fs__mesh_body_restore). */
static void write_body_meshes(const fs_world *w, wbuf *b) {
    uint32_t count = 0;
    for (int k = 0; k < w->nbodies; k++) count += w->bodies[k].shape == FS_SHAPE_MESH;
    put_u32(b, count);
    for (int k = 0; k < w->nbodies; k++) {
        fs_mesh m;
        if (!fs_world_body_mesh(w, k, &m)) continue;
        double volume;
        fs_vec3 moments;
        fs__mesh_body_unit_mass(fs__mesh_of(w, &w->bodies[k]), &volume, &moments);
        put_u32(b, (uint32_t)m.vertex_count);
        put_u32(b, (uint32_t)m.triangle_count);
        put(b, &volume, sizeof volume);
        put(b, &moments, sizeof moments);
        put(b, m.vertices, sizeof(fs_vec3) * (size_t)m.vertex_count);
        put(b, m.triangles, sizeof(uint32_t) * 3 * (size_t)m.triangle_count);
    }
}

/* The probes, in the order added: their count, then each one's name (the
 * FS_PROBE_NAME_LEN bytes, zero-padded), kind, position, normal, size,
 * latest value and the tick it was measured at. */
static void write_probes(const fs_world *w, wbuf *b) {
    put_u32(b, (uint32_t)w->nprobes);
    for (int k = 0; k < w->nprobes; k++) {
        const fs_probe_def *d = &w->probes[k];
        put(b, d->name, FS_PROBE_NAME_LEN);
        put_u32(b, (uint32_t)d->kind);
        put(b, &d->pos, sizeof d->pos);
        put(b, &d->normal, sizeof d->normal);
        put(b, &d->size, sizeof d->size);
        put(b, &w->probe_value[k], sizeof w->probe_value[k]);
        put(b, &w->probe_tick[k], sizeof w->probe_tick[k]);
    }
}

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
    write_obstacles(w, b);
    write_body_meshes(w, b);
    write_probes(w, b);
    put_u32(b, (uint32_t)w->scene_size);
    /* the solver and its own state */
    const fs_solver_ops *ops = w->ops;
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
    if (!buf || get_u32(&r) != SNAP_MAGIC) return false;
    uint32_t ver = get_u32(&r);
    if (ver < SNAP_VERSION_OLDEST || ver > SNAP_VERSION) return false;
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

static bool in_box(float v, float lo, float hi) {
    return v >= lo && v <= hi;
}

/* A particle's position (and its previous one) lies in the box grown by
 * one h: the step keeps centres inside the box; body extraction may move
 * the previous position a little past it. */
#define POS_MARGIN_H 1.0f

/* What a snapshot holds, read and checked section by section before the
 * world changes: values copied out, arrays as pointers into the buffer
 * (read through memcpy: the buffer need not be aligned). */
typedef struct snap_in {
    uint32_t K, nmat, n, next_id, nfree;
    float dt;
    fs_domain dom;
    char scene[32];
    fs_material mats[FS_MAX_MATERIALS];
    const unsigned char *F[9], *TEMP, *ID, *SL, *ORD, *FREE; /* x y z px py pz vx vy vz, ... */
    const uint8_t *M, *FROZEN;
    size_t spr_at; /* where the springs start */
    fs_emitter emit[FS_MAX_EMITTERS];
    fs_drain drain[FS_MAX_DRAINS];
    fs_heater heat[FS_MAX_HEATERS];
    float ambient;
    uint32_t nb, next_body, nc, flags, pending, solver, slen;
    fs_body bodies[FS_MAX_BODIES];
    const void *contacts, *sbytes;
    fs_stats stats;
    const fs_solver_ops *sops;
    uint32_t ver, nobs, next_obstacle;
    struct {
        uint32_t id, nv, nt;
        fs_vec3 pos;
        fs_quat rot;
        float scale;
        const unsigned char *V, *T; /* the placed mesh, in the buffer */
    } obs[FS_MAX_OBSTACLES];
    uint32_t nbm; /* mesh bodies (version 4), in body order */
    struct {
        uint32_t nv, nt;
        double volume;
        fs_vec3 moments;
        const unsigned char *V, *T; /* the body-frame mesh, in the buffer */
    } bm[FS_MAX_BODIES];
    uint32_t scene_size; /* version 6 */
    uint32_t nprobes;    /* version 5 */
    fs_probe_def probe[FS_MAX_PROBES];
    float probe_value[FS_MAX_PROBES];
    uint64_t probe_tick[FS_MAX_PROBES];
} snap_in;

/* Header and domain: this world's capacity, spring slots and step. */
static fs_status read_header(const fs_world *w, rbuf *r, snap_in *s, fs_error *err) {
    if (!r->p || get_u32(r) != SNAP_MAGIC) return fail(err, FS_ERR_ARG, "snapshot: not a world snapshot (bad magic)");
    uint32_t ver = get_u32(r), cap = get_u32(r);
    s->K = get_u32(r);
    if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (header)");
    if (ver < SNAP_VERSION_OLDEST || ver > SNAP_VERSION)
        return fail(err, FS_ERR_ARG, "snapshot: version %u, this build reads %u to %u", ver, SNAP_VERSION_OLDEST,
                    SNAP_VERSION);
    s->ver = ver;
    s->nobs = 0, s->next_obstacle = 0; /* version 2: none */
    if (cap != (uint32_t)w->cap)
        return fail(err, FS_ERR_ARG, "snapshot: made for a world of capacity %u, this one holds %d", cap, w->cap);
    if (s->K != (uint32_t)w->K)
        return fail(err, FS_ERR_ARG, "snapshot: %u spring slots per particle, this world has %d", s->K, w->K);
    get(r, &s->dt, sizeof s->dt);
    get(r, &s->dom, sizeof s->dom);
    get(r, s->scene, sizeof s->scene);
    s->nmat = get_u32(r);
    if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (domain)");
    if (!(s->nmat >= 1 && s->nmat <= FS_MAX_MATERIALS))
        return fail(err, FS_ERR_RANGE, "snapshot: %u materials, outside 1..%d", s->nmat, FS_MAX_MATERIALS);
    if (!(fabsf(s->dt - w->dt) <= 1e-9f))
        return fail(err, FS_ERR_ARG, "snapshot: step %g s, this world steps %g s", s->dt, w->dt);
    fs_error derr;
    if (fs__domain_check(&s->dom, w->cap, &derr) != FS_OK) return fail(err, FS_ERR_RANGE, "snapshot: %.140s", derr.msg);
    if (!clean_name(s->scene, sizeof s->scene, false))
        return fail(err, FS_ERR_ARG, "snapshot: the scene name is not printable ASCII (1..%zu characters)",
                    sizeof s->scene - 1);
    return FS_OK;
}

/* Materials: unique printable names, every parameter in its range. */
static fs_status read_materials(rbuf *r, snap_in *s, fs_error *err) {
    fs_material *mats = s->mats;
    if (!get(r, mats, sizeof(fs_material) * s->nmat)) return fail(err, FS_ERR_ARG, "snapshot: truncated (materials)");
    for (uint32_t m = 0; m < s->nmat; m++) {
        if (!clean_name(mats[m].name, sizeof mats[m].name, false))
            return fail(err, FS_ERR_ARG, "snapshot: material %u: the name is not printable ASCII (1..%zu characters)",
                        m, sizeof mats[m].name - 1);
        for (uint32_t o = 0; o < m; o++)
            if (!strcmp(mats[o].name, mats[m].name))
                return fail(err, FS_ERR_ARG, "snapshot: materials %u and %u are both named '%s'", o, m, mats[m].name);
        for (int q = 0; q < FS_P_COUNT; q++) {
            const fs_param_info *in = fs_param_get_info((fs_param)q);
            float v = mats[m].p[q];
            if (!(v >= in->min && v <= in->max) || (in->is_flag && v != 0.0f && v != 1.0f))
                return fail(err, FS_ERR_RANGE, "snapshot: material %s: %s = %g outside %g..%g%s", mats[m].name,
                            in->name, v, in->min, in->max, in->is_flag ? " (a flag: 0 or 1)" : "");
        }
    }
    return FS_OK;
}

/* The particle arrays and the free slots, taken (not yet checked). */
static fs_status read_particles(const fs_world *w, rbuf *r, snap_in *s, fs_error *err) {
    s->n = get_u32(r), s->next_id = get_u32(r);
    const uint32_t n = s->n;
    if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (particle count)");
    if (n > (uint32_t)w->cap) return fail(err, FS_ERR_RANGE, "snapshot: %u particles, this world holds %d", n, w->cap);
    size_t bytes_needed = (size_t)n * (10 * sizeof(float) + 2 + 3 * sizeof(int32_t));
    if (bytes_needed > r->n - r->at) return fail(err, FS_ERR_ARG, "snapshot: truncated (particles)");
    for (int k = 0; k < 9; k++) s->F[k] = take(r, sizeof(float) * n);
    s->M = take(r, n);
    s->TEMP = take(r, sizeof(float) * n);
    s->FROZEN = take(r, n);
    s->ID = take(r, sizeof(uint32_t) * n);
    s->SL = take(r, sizeof(int32_t) * n);
    s->ORD = take(r, sizeof(int32_t) * n);
    s->nfree = get_u32(r);
    if (r->bad || s->nfree != (uint32_t)w->cap - n)
        return fail(err, FS_ERR_ARG, "snapshot: %u free slots + %u particles != capacity %d", s->nfree, n, w->cap);
    s->FREE = take(r, sizeof(int32_t) * s->nfree);
    if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (slots)");
    return FS_OK;
}

/* Positions in the box grown by POS_MARGIN_H h, velocities and temperatures in range. */
static fs_status check_motion(const snap_in *s, fs_error *err) {
    const float margin = POS_MARGIN_H * s->dom.h;
    const fs_domain *dom = &s->dom;
    const float blo[3] = {dom->box_min.x - margin, dom->box_min.y - margin, dom->box_min.z - margin};
    const float bhi[3] = {dom->box_max.x + margin, dom->box_max.y + margin, dom->box_max.z + margin};
    for (uint32_t i = 0; i < s->n; i++) {
        float v[9], T;
        for (int k = 0; k < 9; k++) memcpy(&v[k], s->F[k] + 4 * (size_t)i, 4);
        memcpy(&T, s->TEMP + 4 * (size_t)i, 4);
        for (int k = 0; k < 6; k++)
            if (!in_box(v[k], blo[k % 3], bhi[k % 3]))
                return fail(err, FS_ERR_RANGE, "snapshot: particle %u: %sposition %c = %g outside %g..%g m (the box)",
                            i, k < 3 ? "" : "previous ", "xyz"[k % 3], v[k], blo[k % 3], bhi[k % 3]);
        for (int k = 6; k < 9; k++)
            if (!(fabsf(v[k]) <= FS_SNAPSHOT_MAX_SPEED))
                return fail(err, FS_ERR_RANGE, "snapshot: particle %u: velocity %c = %g outside -%g..%g m/s", i,
                            "xyz"[k - 6], v[k], FS_SNAPSHOT_MAX_SPEED, FS_SNAPSHOT_MAX_SPEED);
        if (!(T >= FS_TEMP_MIN && T <= FS_TEMP_MAX))
            return fail(err, FS_ERR_RANGE, "snapshot: particle %u: temperature %g outside %g..%g C", i, T, FS_TEMP_MIN,
                        FS_TEMP_MAX);
    }
    return FS_OK;
}

/* Materials, slots (each once, live or free), ids below next_id and the id
 * order (every live slot once, ids increasing).  seen[slot] ends 3 for a
 * live slot, 2 for a free one. */
static fs_status check_slots(const fs_world *w, const snap_in *s, char *seen, int32_t *idx_of_slot, fs_error *err) {
    for (uint32_t i = 0; i < s->n; i++) {
        uint8_t m;
        int32_t sl;
        uint32_t id;
        memcpy(&m, s->M + i, 1), memcpy(&sl, s->SL + 4 * (size_t)i, 4), memcpy(&id, s->ID + 4 * (size_t)i, 4);
        if (m >= s->nmat || sl < 0 || sl >= w->cap || seen[sl] || id >= s->next_id)
            return fail(err, FS_ERR_ARG,
                        "snapshot: particle %u: material %u (of %u), slot %d (of %d, once) or id %u (below %u)", i, m,
                        s->nmat, sl, w->cap, id, s->next_id);
        seen[sl] = 1;
        idx_of_slot[sl] = (int32_t)i;
    }
    for (uint32_t i = 0; i < s->nfree; i++) {
        int32_t sl;
        memcpy(&sl, s->FREE + 4 * (size_t)i, 4);
        if (sl < 0 || sl >= w->cap || seen[sl])
            return fail(err, FS_ERR_ARG, "snapshot: free slot %d is outside 0..%d or in use", sl, w->cap - 1);
        seen[sl] = 2;
    }
    uint32_t last_id = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        int32_t sl;
        uint32_t id;
        memcpy(&sl, s->ORD + 4 * (size_t)k, 4);
        if (sl < 0 || sl >= w->cap || seen[sl] != 1)
            return fail(err, FS_ERR_ARG, "snapshot: id order names slot %d", sl);
        memcpy(&id, s->ID + 4 * (size_t)idx_of_slot[sl], 4);
        if (k > 0 && id <= last_id) return fail(err, FS_ERR_ARG, "snapshot: ids out of order");
        last_id = id;
        seen[sl] = 3;
    }
    return FS_OK;
}

/* Whether slot t's sorted partner list (sj[t], sc[t] of them) holds s with
 * the same rest length bytes as L. */
static bool spring_held(const unsigned char *const *sj, const unsigned char *const *sl, const uint32_t *sc, int32_t t,
                        int32_t s, const unsigned char *L) {
    for (int32_t lo = 0, hi = (int32_t)sc[t] - 1; lo <= hi;) {
        int32_t mid = (lo + hi) / 2, u;
        memcpy(&u, sj[t] + 4 * (size_t)mid, 4);
        if (u == s) return !memcmp(sl[t] + 4 * (size_t)mid, L, 4);
        if (u < s)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return false;
}

/* Springs: per particle (in index order) a count <= K, then partners (live
 * slots, strictly increasing, not itself) and rest lengths; every spring is
 * held by both ends with the same length.  sj, sl, sc: room for every slot. */
static fs_status check_springs(const fs_world *w, rbuf *r, const snap_in *s, const char *seen, const unsigned char **sj,
                               const unsigned char **sl, uint32_t *sc, fs_error *err) {
    for (uint32_t i = 0; i < s->n; i++) {
        uint32_t c = get_u32(r);
        if (r->bad || c > s->K)
            return fail(err, FS_ERR_ARG, "snapshot: particle %u: %u springs, outside 0..%u (or truncated)", i, c, s->K);
        const unsigned char *J = take(r, sizeof(int32_t) * c);
        const unsigned char *L = take(r, sizeof(float) * c);
        if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (springs)");
        int32_t slot, prev = -1;
        memcpy(&slot, s->SL + 4 * (size_t)i, 4);
        sj[slot] = J, sl[slot] = L, sc[slot] = c;
        for (uint32_t q = 0; q < c; q++) {
            int32_t t;
            float l;
            memcpy(&t, J + 4 * (size_t)q, 4), memcpy(&l, L + 4 * (size_t)q, 4);
            if (t < 0 || t >= w->cap || seen[t] != 3 || t == slot || t <= prev || !(l >= 0 && l <= 100 * s->dom.h))
                return fail(err, FS_ERR_ARG,
                            "snapshot: particle %u: spring %u names slot %d (live, sorted, not itself) "
                            "with rest length %g (0..100 h)",
                            i, q, t, l);
            prev = t;
        }
    }
    for (int32_t slot = 0; slot < w->cap; slot++) /* both ends, same length */
        for (uint32_t q = 0; q < sc[slot]; q++) {
            int32_t t;
            memcpy(&t, sj[slot] + 4 * (size_t)q, 4);
            if (!spring_held(sj, sl, sc, t, slot, sl[slot] + 4 * (size_t)q))
                return fail(err, FS_ERR_ARG, "snapshot: the spring of slots %d and %d is held by one end only", slot,
                            t);
        }
    return FS_OK;
}

/* The particles' sections: motion, slots and ids, springs (scratch of the
 * world's capacity, freed here). */
static fs_status check_particles(const fs_world *w, rbuf *r, snap_in *s, fs_error *err) {
    fs_status st = check_motion(s, err);
    if (st != FS_OK) return st;
    char *seen = calloc((size_t)w->cap, 1);
    int32_t *idx_of_slot = malloc(sizeof(int32_t) * (size_t)w->cap);
    if (!seen || !idx_of_slot) {
        free(seen), free(idx_of_slot);
        return fail(err, FS_ERR_NOMEM, "snapshot: out of memory");
    }
    st = check_slots(w, s, seen, idx_of_slot, err);
    s->spr_at = r->at;
    if (st == FS_OK && s->n) {
        const unsigned char **sj = malloc(sizeof *sj * (size_t)w->cap), **sl = malloc(sizeof *sl * (size_t)w->cap);
        uint32_t *sc = calloc((size_t)w->cap, sizeof *sc);
        if (!sj || !sl || !sc)
            st = fail(err, FS_ERR_NOMEM, "snapshot: out of memory");
        else
            st = check_springs(w, r, s, seen, sj, sl, sc, err);
        free(sj), free(sl), free(sc);
    }
    free(seen), free(idx_of_slot);
    return st;
}

/* The obstacles' section: counts, ids in increasing order below the next
 * id, finite placements (rot of unit length, scale in its range); the
 * meshes are checked when they are built (build_obstacles). */
static fs_status read_obstacles(rbuf *r, snap_in *s, fs_error *err) {
    s->nobs = get_u32(r), s->next_obstacle = get_u32(r);
    if (r->bad || s->nobs > FS_MAX_OBSTACLES)
        return fail(err, FS_ERR_ARG, "snapshot: %u obstacles, outside 0..%d (or truncated)", s->nobs, FS_MAX_OBSTACLES);
    for (uint32_t k = 0; k < s->nobs; k++) {
        s->obs[k].id = get_u32(r);
        get(r, &s->obs[k].pos, sizeof s->obs[k].pos);
        get(r, &s->obs[k].rot, sizeof s->obs[k].rot);
        get(r, &s->obs[k].scale, sizeof s->obs[k].scale);
        uint32_t nv = s->obs[k].nv = get_u32(r), nt = s->obs[k].nt = get_u32(r);
        if (r->bad || nv < 3 || nv > FS_MESH_MAX_VERTICES || nt < 1 || nt > FS_MESH_MAX_TRIANGLES)
            return fail(err, FS_ERR_ARG, "snapshot: obstacle %u: %u vertices and %u triangles (or truncated)", k, nv,
                        nt);
        s->obs[k].V = take(r, sizeof(fs_vec3) * nv);
        s->obs[k].T = take(r, sizeof(uint32_t) * 3 * nt);
        const fs_vec3 p = s->obs[k].pos;
        const fs_quat q = s->obs[k].rot;
        float ql = sqrtf(q.w * q.w + q.x * q.x + q.y * q.y + q.z * q.z);
        bool ok = !r->bad && isfinite(p.x) && isfinite(p.y) && isfinite(p.z) && fabsf(ql - 1.0f) < 1e-3f &&
                  s->obs[k].scale >= FS_OBSTACLE_MIN_SCALE && s->obs[k].scale <= FS_OBSTACLE_MAX_SCALE &&
                  s->obs[k].id < s->next_obstacle && (k == 0 || s->obs[k].id > s->obs[k - 1].id);
        if (!ok)
            return fail(err, FS_ERR_ARG,
                        "snapshot: obstacle %u: a placement that is not finite, a rotation not of unit length, a "
                        "scale outside %g..%g, or ids out of order (or truncated)",
                        k, FS_OBSTACLE_MIN_SCALE, FS_OBSTACLE_MAX_SCALE);
    }
    return FS_OK;
}

/* The mesh bodies' section: one mesh for each body of shape mesh, its
 * counts in range; the meshes and mass properties are checked when the
 * bodies are built (build_body_meshes). */
static fs_status read_body_meshes(rbuf *r, snap_in *s, fs_error *err) {
    uint32_t want = 0;
    for (uint32_t k = 0; k < s->nb; k++) want += s->bodies[k].shape == FS_SHAPE_MESH;
    s->nbm = get_u32(r);
    if (r->bad || s->nbm != want)
        return fail(err, FS_ERR_ARG, "snapshot: %u body meshes for %u mesh bodies (or truncated)", s->nbm, want);
    for (uint32_t k = 0; k < s->nbm; k++) {
        uint32_t nv = s->bm[k].nv = get_u32(r), nt = s->bm[k].nt = get_u32(r);
        get(r, &s->bm[k].volume, sizeof s->bm[k].volume);
        get(r, &s->bm[k].moments, sizeof s->bm[k].moments);
        if (r->bad || nv < 3 || nv > FS_MESH_MAX_VERTICES || nt < 1 || nt > FS_MESH_MAX_TRIANGLES)
            return fail(err, FS_ERR_ARG, "snapshot: body mesh %u: %u vertices and %u triangles (or truncated)", k, nv,
                        nt);
        s->bm[k].V = take(r, sizeof(fs_vec3) * nv);
        s->bm[k].T = take(r, sizeof(uint32_t) * 3 * nt);
        if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (body mesh %u)", k);
    }
    return FS_OK;
}

/* The probes (version 5): each definition checked as fs_world_add_probe
 * checks one, against the snapshot's domain, names unique, a finite value
 * measured at a tick no later than the snapshot's. */
static fs_status read_probes(rbuf *r, snap_in *s, fs_error *err) {
    s->nprobes = get_u32(r);
    if (r->bad || s->nprobes > FS_MAX_PROBES)
        return fail(err, FS_ERR_ARG, "snapshot: %u probes, outside 0..%d (or truncated)", s->nprobes, FS_MAX_PROBES);
    for (uint32_t k = 0; k < s->nprobes; k++) {
        fs_probe_def d;
        memset(&d, 0, sizeof d);
        uint32_t kind;
        get(r, d.name, FS_PROBE_NAME_LEN);
        kind = get_u32(r);
        get(r, &d.pos, sizeof d.pos);
        get(r, &d.normal, sizeof d.normal);
        get(r, &d.size, sizeof d.size);
        get(r, &s->probe_value[k], sizeof s->probe_value[k]);
        get(r, &s->probe_tick[k], sizeof s->probe_tick[k]);
        if (r->bad) return fail(err, FS_ERR_ARG, "snapshot: truncated (probe %u)", k);
        d.kind = kind < FS_PROBE_KIND_COUNT ? (fs_probe_kind)kind : FS_PROBE_KIND_COUNT;
        fs_error why = {{0}};
        if (fs__probe_check(&s->dom, &d, &s->probe[k], &why) != FS_OK)
            return fail(err, FS_ERR_ARG, "snapshot: probe %u: %.150s", k, why.msg);
        for (uint32_t j = 0; j < k; j++)
            if (!strncmp(s->probe[j].name, s->probe[k].name, FS_PROBE_NAME_LEN))
                return fail(err, FS_ERR_ARG, "snapshot: probe %u: the name '%s' is taken", k, s->probe[k].name);
        if (!isfinite(s->probe_value[k]) || s->probe_tick[k] > s->stats.tick)
            return fail(err, FS_ERR_ARG,
                        "snapshot: probe %u: a non-finite value, or measured after the snapshot's tick", k);
    }
    return FS_OK;
}

/* Emitters, drains, heaters, ambient temperature, bodies and contacts, the
 * flags and pending steps, the statistics, the obstacles (version 3), the
 * mesh bodies (version 4), the probes (version 5), the scene's size (version
 * 6), the solver's section and the closing magic: read, with the counts
 * checked. */
static fs_status read_tail(rbuf *r, size_t size, snap_in *s, fs_error *err) {
    get(r, s->emit, sizeof s->emit);
    get(r, s->drain, sizeof s->drain);
    get(r, s->heat, sizeof s->heat);
    get(r, &s->ambient, sizeof s->ambient);
    /* bools from outside are made 0 or 1 before anything reads them as bool */
    for (int k = 0; k < FS_MAX_HEATERS; k++) flag01(&s->heat[k].used), flag01(&s->heat[k].def.enabled);
    for (int k = 0; k < FS_MAX_EMITTERS; k++) flag01(&s->emit[k].used), flag01(&s->emit[k].def.enabled);
    for (int k = 0; k < FS_MAX_DRAINS; k++) flag01(&s->drain[k].used), flag01(&s->drain[k].def.enabled);
    s->nb = get_u32(r), s->next_body = get_u32(r);
    if (r->bad || s->nb > FS_MAX_BODIES)
        return fail(err, FS_ERR_ARG, "snapshot: %u bodies, outside 0..%d (or truncated)", s->nb, FS_MAX_BODIES);
    get(r, s->bodies, sizeof(fs_body) * s->nb);
    for (uint32_t k = 0; k < s->nb; k++) flag01(&s->bodies[k].is_static), flag01(&s->bodies[k].grab);
    s->nc = get_u32(r);
    if (r->bad || s->nc > FS_MAX_CONTACTS)
        return fail(err, FS_ERR_ARG, "snapshot: %u contacts, outside 0..%d (or truncated)", s->nc, FS_MAX_CONTACTS);
    s->contacts = take(r, fs__contact_size() * s->nc);
    s->flags = get_u32(r), s->pending = get_u32(r);
    get(r, &s->stats, sizeof s->stats);
    if (s->ver >= 3 && read_obstacles(r, s, err) != FS_OK) return FS_ERR_ARG;
    s->nbm = 0; /* before version 4: none (and a mesh body is refused) */
    if (s->ver >= 4 && read_body_meshes(r, s, err) != FS_OK) return FS_ERR_ARG;
    s->nprobes = 0; /* before version 5: none */
    if (s->ver >= 5 && read_probes(r, s, err) != FS_OK) return FS_ERR_ARG;
    s->scene_size = s->ver >= 6 ? get_u32(r) : 0; /* before version 6: not known */
    s->solver = get_u32(r), s->slen = get_u32(r);
    s->sbytes = take(r, s->slen);
    if (r->bad || get_u32(r) != SNAP_MAGIC || r->at != size)
        return fail(err, FS_ERR_ARG, "snapshot: truncated or trailing bytes");
    return FS_OK;
}

/* The scene's size, bodies and contacts, flags, pending steps, statistics
 * and the solver's own section (checked by the solver, against the
 * snapshot's domain). */
static fs_status check_state(fs_world *w, snap_in *s, fs_error *err) {
    if (s->scene_size != 0 && (s->scene_size < SCENE_MIN_PARTICLES || s->scene_size > (uint32_t)w->cap))
        return fail(err, FS_ERR_ARG, "snapshot: a scene loaded with %u particles, outside %d..%d (or 0)", s->scene_size,
                    SCENE_MIN_PARTICLES, w->cap);
    /* fills in what derives from shape, size and density */
    if (fs__bodies_check(s->bodies, (int)s->nb, s->next_body, &s->dom, s->contacts, (int)s->nc, s->ver >= 4, err) !=
        FS_OK)
        return FS_ERR_ARG;
    if (s->flags > 1u) return fail(err, FS_ERR_ARG, "snapshot: flags %#x (only bit 0, paused, is known)", s->flags);
    if (s->pending > 100000u)
        return fail(err, FS_ERR_RANGE, "snapshot: %u pending steps, outside 0..100000", s->pending);
    bool ok = isfinite(s->stats.sim_time) && s->stats.sim_time >= 0 && isfinite(s->stats.step_ms) &&
              isfinite(s->stats.solver_residual);
    for (int q = 0; q < FS_PHASE_COUNT; q++) ok = ok && isfinite(s->stats.phase_ms[q]);
    if (!ok) return fail(err, FS_ERR_ARG, "snapshot: the statistics hold a non-finite time or residual");
    const fs_solver_ops *sops = s->sops;
    if (!sops) return fail(err, FS_ERR_ARG, "snapshot: solver %u is not built in", s->solver);
    if (s->slen && !sops->state_read)
        return fail(err, FS_ERR_ARG, "snapshot: state for solver %s, which keeps none", sops->name);
    if (sops->state_read &&
        sops->state_read(w, s->sbytes, s->slen, &(fs__restore_ctx){&s->dom, (int)s->n, false}, err) != FS_OK)
        return FS_ERR_ARG;
    return FS_OK;
}

/* Emitters, heaters and drains against their setters' ranges (unused
 * slots zeroed), and the ambient temperature. */
static fs_status check_sources(snap_in *s, fs_error *err) {
    fs_error derr;
    for (int k = 0; k < FS_MAX_EMITTERS; k++) {
        fs_emitter *e = &s->emit[k];
        if (!e->used) {
            memset(e, 0, sizeof *e);
            continue;
        }
        float dl = sqrtf(e->def.dir.x * e->def.dir.x + e->def.dir.y * e->def.dir.y + e->def.dir.z * e->def.dir.z);
        if (fs__emitter_check(&e->def, (int)s->nmat, &derr) != FS_OK)
            return fail(err, FS_ERR_RANGE, "snapshot: emitter %d: %.120s", k, derr.msg);
        if (!(fabsf(dl - 1.0f) < 1e-3f) || e->emitted < 0 || !(e->accum >= 0 && e->accum < 1))
            return fail(err, FS_ERR_ARG,
                        "snapshot: emitter %d: direction not of unit length, emitted < 0 or a "
                        "fractional count outside 0..1",
                        k);
    }
    for (int k = 0; k < FS_MAX_HEATERS; k++) {
        if (!s->heat[k].used)
            memset(&s->heat[k], 0, sizeof s->heat[k]);
        else if (fs__heater_check(&s->heat[k].def, &derr) != FS_OK)
            return fail(err, FS_ERR_RANGE, "snapshot: heater %d: %.120s", k, derr.msg);
    }
    for (int k = 0; k < FS_MAX_DRAINS; k++) {
        if (!s->drain[k].used)
            memset(&s->drain[k], 0, sizeof s->drain[k]);
        else if (fs__drain_check(&s->drain[k].def, &derr) != FS_OK)
            return fail(err, FS_ERR_RANGE, "snapshot: drain %d: %.120s", k, derr.msg);
    }
    if (!(s->ambient >= FS_TEMP_MIN && s->ambient <= FS_TEMP_MAX))
        return fail(err, FS_ERR_RANGE, "snapshot: ambient temperature %g outside %g..%g C", s->ambient, FS_TEMP_MIN,
                    FS_TEMP_MAX);
    return FS_OK;
}

/* Reads and checks the whole snapshot into s; the world is not changed. */
static fs_status read_all(fs_world *w, rbuf *r, size_t size, snap_in *s, fs_error *err) {
    fs_status st = read_header(w, r, s, err);
    if (st == FS_OK) st = read_materials(r, s, err);
    if (st == FS_OK) st = read_particles(w, r, s, err);
    if (st == FS_OK) st = check_particles(w, r, s, err);
    if (st == FS_OK) st = read_tail(r, size, s, err);
    if (st == FS_OK) s->sops = fs__solver_ops((fs_solver)s->solver);
    if (st == FS_OK) st = check_state(w, s, err);
    if (st == FS_OK) st = check_sources(s, err);
    return st;
}

/* The checked snapshot into the world: nothing here can fail.  The
 * springs are read again from s->spr_at. */
static void commit(fs_world *w, rbuf *r, const snap_in *s, int32_t *grid) {
    const uint32_t n = s->n;
    fs__reset_apply(w, &s->dom, grid);
    memcpy(w->mat, s->mats, sizeof(fs_material) * s->nmat);
    w->nmat = (int)s->nmat;
    memcpy(w->scene, s->scene, sizeof s->scene);
    w->n = (int)n;
    w->next_id = s->next_id;
    float *dst[9] = {w->p.x, w->p.y, w->p.z, w->p.px, w->p.py, w->p.pz, w->p.vx, w->p.vy, w->p.vz};
    for (int k = 0; k < 9; k++) memcpy(dst[k], s->F[k], sizeof(float) * n);
    memcpy(w->p.mat, s->M, n);
    memcpy(w->p.temp, s->TEMP, sizeof(float) * n);
    for (uint32_t i = 0; i < n; i++) w->p.frozen[i] = s->FROZEN[i] ? 1 : 0;
    memcpy(w->p.id, s->ID, sizeof(uint32_t) * n);
    memcpy(w->p.slot, s->SL, sizeof(int32_t) * n);
    memcpy(w->id_order, s->ORD, sizeof(int32_t) * n);
    w->nfree = (int)s->nfree;
    memcpy(w->free_slots, s->FREE, sizeof(int32_t) * s->nfree);
    for (int q = 0; q < w->cap; q++) w->slot_index[q] = -1;
    for (int i = 0; i < w->n; i++) w->slot_index[w->p.slot[i]] = i;
    r->at = s->spr_at, r->bad = false;
    long total = 0;
    for (int i = 0; i < w->n; i++) {
        int q = w->p.slot[i];
        uint32_t c = get_u32(r);
        memcpy(w->spr_j + (size_t)q * s->K, take(r, sizeof(int32_t) * c), sizeof(int32_t) * c);
        memcpy(w->spr_L + (size_t)q * s->K, take(r, sizeof(float) * c), sizeof(float) * c);
        w->spr_n[q] = (uint16_t)c;
        total += c;
    }
    w->springs = (int)(total / 2);
    memcpy(w->emit, s->emit, sizeof s->emit);
    memcpy(w->drain, s->drain, sizeof s->drain);
    memcpy(w->heat, s->heat, sizeof s->heat);
    w->ambient = s->ambient;
    w->nbodies = (int)s->nb;
    w->next_body_id = s->next_body;
    memcpy(w->bodies, s->bodies, sizeof(fs_body) * s->nb);
    w->ncontacts_prev = (int)s->nc;
    if (s->nc) memcpy(w->contacts_prev, s->contacts, fs__contact_size() * s->nc);
    w->paused = s->flags & 1u;
    w->pending_steps = (int)s->pending;
    w->st = s->stats;
    w->st.solver = w->solver;
    w->nprobes = (int)s->nprobes;
    w->scene_size = (int)s->scene_size;
    memcpy(w->probes, s->probe, sizeof(fs_probe_def) * s->nprobes);
    memcpy(w->probe_value, s->probe_value, sizeof(float) * s->nprobes);
    memcpy(w->probe_tick, s->probe_tick, sizeof(uint64_t) * s->nprobes);
    memset(w->probe_impulse, 0, sizeof w->probe_impulse), w->probe_span = 0; /* taken between steps */
    fs__rebuild_by_id(w);
}

/* The snapshot's obstacles built beside the world, in a copy of its record
 * that sees the snapshot's domain and solver (the world is not changed): each
 * placed mesh added as it is (it is already in world coordinates), so its
 * distance field is the one saved, then given its placement back.  NULL
 * with the reason when one is refused or memory runs out; the caller frees
 * the copy's obstacles with it (free_built). */
static fs_world *build_obstacles(const fs_world *w, const snap_in *s, fs_error *err) {
    fs_world *b = malloc(sizeof *b);
    if (!b) {
        fail(err, FS_ERR_NOMEM, "snapshot: out of memory for the obstacles");
        return NULL;
    }
    memcpy(b, w, sizeof *b); /* a shallow copy: only its obstacles are ever written or freed */
    b->dom = s->dom, b->h = s->dom.h, b->solver = (fs_solver)s->solver;
    b->nobstacles = 0;
    memset(b->obstacles, 0, sizeof b->obstacles);
    for (uint32_t k = 0; k < s->nobs; k++) {
        fs_vec3 *v = malloc(sizeof(fs_vec3) * s->obs[k].nv);
        uint32_t *t = malloc(sizeof(uint32_t) * 3 * s->obs[k].nt);
        int64_t id = -1;
        fs_error why = {{0}};
        if (v && t) {
            memcpy(v, s->obs[k].V, sizeof(fs_vec3) * s->obs[k].nv);
            memcpy(t, s->obs[k].T, sizeof(uint32_t) * 3 * s->obs[k].nt);
            fs_mesh m = {v, (int)s->obs[k].nv, t, (int)s->obs[k].nt};
            b->next_obstacle_id = s->obs[k].id;
            id = fs_world_add_obstacle(b, &m, (fs_vec3){0, 0, 0}, (fs_quat){1, 0, 0, 0}, 1.0f, &why);
        } else {
            snprintf(why.msg, sizeof why.msg, "out of memory");
        }
        free(v), free(t);
        if (id < 0) {
            fs__obstacles_clear(b);
            free(b);
            fail(err, FS_ERR_ARG, "snapshot: obstacle %u: %.150s", k, why.msg);
            return NULL;
        }
        fs_obstacle *o = &b->obstacles[b->nobstacles - 1];
        o->pos = s->obs[k].pos, o->rot = s->obs[k].rot, o->scale = s->obs[k].scale;
    }
    b->next_obstacle_id = s->next_obstacle;
    return b;
}

/* The snapshot's mesh bodies' data, built beside the world for its domain
 * (out[k] for the k-th mesh body); the reason when one is refused or memory
 * runs out, with whatever was built freed. */
static fs_status build_body_meshes(const snap_in *s, fs_mesh_body **out, fs_error *err) {
    for (uint32_t k = 0; k < s->nbm; k++) {
        fs_vec3 *v = malloc(sizeof(fs_vec3) * s->bm[k].nv);
        uint32_t *t = malloc(sizeof(uint32_t) * 3 * s->bm[k].nt);
        fs_status st = FS_ERR_NOMEM;
        fs_error why = {"out of memory"};
        if (v && t) { /* aligned copies of the buffer's bytes */
            memcpy(v, s->bm[k].V, sizeof(fs_vec3) * s->bm[k].nv);
            memcpy(t, s->bm[k].T, sizeof(uint32_t) * 3 * s->bm[k].nt);
            const fs_mesh m = {v, (int)s->bm[k].nv, t, (int)s->bm[k].nt};
            st = fs__mesh_body_restore(s->dom.h, s->dom.spacing, &m, s->bm[k].volume, s->bm[k].moments, &out[k], &why);
        }
        free(v), free(t);
        if (st != FS_OK) {
            for (uint32_t j = 0; j < k; j++) fs__mesh_body_free(out[j]), out[j] = NULL;
            return fail(err, st, "snapshot: mesh body %u: %.150s", k, why.msg);
        }
    }
    return FS_OK;
}

/* The built mesh bodies given to the world's mesh bodies, in order. */
static void adopt_body_meshes(fs_world *w, fs_mesh_body **built) {
    for (int k = 0, j = 0; k < w->nbodies; k++)
        if (w->bodies[k].shape == FS_SHAPE_MESH) {
            fs__body_mesh_adopt(w, &w->bodies[k], built[j++]);
            fs__body_set_mass(w, &w->bodies[k]); /* from its mesh, now adopted */
        }
}

/* The built obstacles moved into the world (whose own are gone with the
 * reset of commit), and the copy freed. */
static void take_obstacles(fs_world *w, fs_world *b) {
    fs__obstacles_clear(w);
    memcpy(w->obstacles, b->obstacles, sizeof w->obstacles);
    w->nobstacles = b->nobstacles;
    w->next_obstacle_id = b->next_obstacle_id;
    free(b);
}

fs_status fs_world_restore(fs_world *w, const void *buf, size_t size, fs_error *err) {
    rbuf r = {buf, size, 0, false};
    snap_in in, *s = &in;
    fs_status st = read_all(w, &r, size, s, err);
    /* what can still fail allocates: the grid, the solver's state (made
     * beside the old one, which goes only once it exists) */
    int32_t *grid = NULL;
    if (st == FS_OK && !(grid = fs__grid_alloc(&s->dom)))
        st = fail(err, FS_ERR_NOMEM, "snapshot: out of memory for the grid");
    fs_world *built = NULL;
    if (st == FS_OK && s->nobs && !(built = build_obstacles(w, s, err))) st = FS_ERR_ARG;
    fs_mesh_body *meshes[FS_MAX_BODIES] = {NULL};
    if (st == FS_OK) st = build_body_meshes(s, meshes, err);
    if (st == FS_OK && (w->solver != (fs_solver)s->solver || (s->sops->attach && !w->solver_state)))
        st = fs__solver_switch(w, (fs_solver)s->solver, err);
    if (st == FS_OK) {
        commit(w, &r, s, grid);
        if (built) take_obstacles(w, built);
        adopt_body_meshes(w, meshes);
        if (s->sops->state_read)
            s->sops->state_read(w, s->sbytes, s->slen, &(fs__restore_ctx){&s->dom, (int)s->n, true}, NULL);
    } else {
        free(grid);
        for (int k = 0; k < FS_MAX_BODIES; k++) fs__mesh_body_free(meshes[k]);
        if (built) {
            fs__obstacles_clear(built);
            free(built);
        }
    }
    return st;
}
