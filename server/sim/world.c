/* world.c - world lifetime, particle bookkeeping (ids, slots, springs),
 * interaction entry points, stats and the state hash. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim_internal.h"

#define SETERR(err, ...)                                                \
    do {                                                                \
        if (err) snprintf((err)->msg, sizeof (err)->msg, __VA_ARGS__); \
    } while (0)

double fs__now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

fs_world_def fs_default_world_def(void) {
    fs_world_def d;
    memset(&d, 0, sizeof d);
    d.capacity = 100000;
    d.springs_per_particle = 48;
    d.dt = 1.0f / 60.0f;
    d.substeps = 1;
    d.relax = FS_RELAX_JACOBI;
    d.relax_iterations = 1;
    d.worker_count = 1;
    return d;
}

static void particles_free(fs_particles *p) {
    free(p->x), free(p->y), free(p->z);
    free(p->px), free(p->py), free(p->pz);
    free(p->vx), free(p->vy), free(p->vz);
    free(p->mat), free(p->id), free(p->slot), free(p->temp), free(p->frozen);
    memset(p, 0, sizeof *p);
}

static bool particles_alloc(fs_particles *p, int cap) {
    size_t f = sizeof(float) * (size_t)cap;
    /* positions are read 8 at a time past the last particle (masked): pad */
    size_t padded = (size_t)cap + FS_SCR_PAD;
    p->x = calloc(padded, sizeof(float)), p->y = calloc(padded, sizeof(float)), p->z = calloc(padded, sizeof(float));
    p->px = malloc(f), p->py = malloc(f), p->pz = malloc(f);
    p->vx = malloc(f), p->vy = malloc(f), p->vz = malloc(f);
    p->mat = malloc((size_t)cap);
    p->temp = malloc(sizeof(float) * (size_t)cap);
    p->frozen = malloc((size_t)cap);
    p->id = malloc(sizeof(uint32_t) * (size_t)cap);
    p->slot = malloc(sizeof(int32_t) * (size_t)cap);
    return p->x && p->y && p->z && p->px && p->py && p->pz && p->vx && p->vy && p->vz && p->mat && p->temp && p->frozen && p->id &&
           p->slot;
}

void fs_world_destroy(fs_world *w) {
    if (!w) return;
    fs__solver_detach(w);
    particles_free(&w->p);
    particles_free(&w->alt);
    free(w->s_a), free(w->s_b), free(w->dT), free(w->solid);
    free(w->nx), free(w->ny), free(w->nz);
    free(w->nvx), free(w->nvy), free(w->nvz);
    free(w->cell), free(w->perm), free(w->spr_total);
    free(w->nb), free(w->nb_n), free(w->scr_j);
    free(w->slot_index), free(w->free_slots), free(w->id_order), free(w->by_id), free(w->seq_order);
    free(w->spr_n), free(w->spr_j), free(w->spr_L);
    free(w->cell_start);
    free(w->contacts), free(w->contacts_prev);
    free(w);
}

fs_world *fs_world_create(const fs_world_def *def) {
    fs_world_def d = def ? *def : fs_default_world_def();
    if (d.capacity < 1 || d.capacity > (1 << 24)) return NULL;
    if (d.springs_per_particle < 1) d.springs_per_particle = 48;
    if (d.springs_per_particle > 255) d.springs_per_particle = 255;
    if (!(d.dt > 0.0f && d.dt <= 0.1f)) d.dt = 1.0f / 60.0f;
    if (d.relax_iterations < 1) d.relax_iterations = 1;
    if (d.substeps < 1) d.substeps = 1;
    if (d.substeps > 64) d.substeps = 64;
    if (d.worker_count < 1 || !d.parallel_for) d.worker_count = 1;
    if (d.worker_count > FS_MAX_WORKERS) d.worker_count = FS_MAX_WORKERS;
    fs__scan_init();
    fs_world *w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->def = d;
    w->dt = d.dt / (float)d.substeps;
    w->cap = d.capacity;
    w->K = d.springs_per_particle;
    size_t n = (size_t)w->cap, f = sizeof(float) * n, i32 = sizeof(int32_t) * n;
    bool ok = particles_alloc(&w->p, w->cap) && particles_alloc(&w->alt, w->cap);
    w->s_a = malloc(f), w->s_b = malloc(f), w->dT = calloc(n, sizeof(float)), w->solid = calloc(n, sizeof(float));
    size_t padded = n + FS_SCR_PAD;
    w->nx = calloc(padded, sizeof(float)), w->ny = calloc(padded, sizeof(float)), w->nz = calloc(padded, sizeof(float));
    w->nvx = malloc(f), w->nvy = malloc(f), w->nvz = malloc(f);
    w->cell = malloc(i32), w->perm = malloc(i32), w->spr_total = malloc(i32);
    w->nb = malloc(i32 * FS_NB_MAX), w->nb_n = malloc(i32);
    /* one block: j, r2, dx, dy, dz for each worker */
    size_t per = (size_t)w->cap + FS_SCR_PAD, nw = (size_t)d.worker_count;
    w->scr_j = malloc(sizeof(int32_t) * per * nw * 5);
    if (w->scr_j) {
        float *fl = (float *)(w->scr_j + per * nw);
        w->scr_r2 = fl, w->scr_dx = fl + per * nw, w->scr_dy = fl + 2 * per * nw, w->scr_dz = fl + 3 * per * nw;
    }
    w->slot_index = malloc(i32), w->free_slots = malloc(i32);
    w->id_order = malloc(i32), w->by_id = malloc(i32), w->seq_order = malloc(i32);
    w->spr_n = calloc(n, sizeof(uint16_t));
    w->spr_j = malloc(sizeof(int32_t) * n * (size_t)w->K);
    w->spr_L = malloc(sizeof(float) * n * (size_t)w->K);
    w->contacts = malloc(fs__contact_size() * FS_MAX_CONTACTS);
    w->contacts_prev = malloc(fs__contact_size() * FS_MAX_CONTACTS);
    ok = ok && w->dT && w->solid && w->contacts && w->contacts_prev && w->s_a && w->s_b && w->nx && w->ny && w->nz && w->nvx && w->nvy && w->nvz && w->cell && w->perm &&
         w->spr_total && w->nb && w->nb_n && w->scr_j && w->slot_index && w->free_slots && w->id_order && w->by_id && w->seq_order && w->spr_n &&
         w->spr_j && w->spr_L;
    if (!ok) {
        fs_world_destroy(w);
        return NULL;
    }
    /* A fixed random order of slots for the sequential relaxation
     * ("randomized but not modified throughout the simulation", Sec. 4.3). */
    for (int i = 0; i < w->cap; i++) w->seq_order[i] = i;
    for (int i = w->cap - 1; i > 0; i--) {
        int j = (int)(fs__rand01(77, (uint64_t)i) * (float)(i + 1));
        if (j > i) j = i;
        int32_t t = w->seq_order[i];
        w->seq_order[i] = w->seq_order[j];
        w->seq_order[j] = t;
    }
    fs__materials_init(w);
    w->ambient = 20.0f;
    fs_domain dom = {{0, 0, 0}, {1, 1, 1}, {0, -9.81f, 0}, 0.1f, 0.1f / 2.1f, 0.0f};
    if (fs_world_reset(w, &dom, NULL) != FS_OK) {
        fs_world_destroy(w);
        return NULL;
    }
    return w;
}

static bool vec_finite(fs_vec3 v) { return isfinite(v.x) && isfinite(v.y) && isfinite(v.z); }
static double len3(fs_vec3 v) { return sqrt((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z); }

/* The domain's documented ranges (fluid_sim.h, fs_world_reset), checked
 * before anything changes; also the first check of a snapshot's domain. */
fs_status fs__domain_check(const fs_domain *dom, int cap, fs_error *err) {
    if (!dom || !vec_finite(dom->box_min) || !vec_finite(dom->box_max) || !vec_finite(dom->gravity) ||
        !isfinite(dom->h) || !isfinite(dom->spacing) || !isfinite(dom->particle_radius)) {
        SETERR(err, "domain has a missing or non-finite value");
        return FS_ERR_ARG;
    }
    fs_vec3 a = dom->box_min, b = dom->box_max;
    if (!(b.x > a.x && b.y > a.y && b.z > a.z) || !(dom->h > 0) || !(dom->spacing > 0) ||
        dom->particle_radius < 0) {
        SETERR(err, "domain box must be non-empty and h, spacing positive");
        return FS_ERR_ARG;
    }
    const float cmax = FS_DOMAIN_MAX_COORD;
    if (fabsf(a.x) > cmax || fabsf(a.y) > cmax || fabsf(a.z) > cmax || fabsf(b.x) > cmax || fabsf(b.y) > cmax ||
        fabsf(b.z) > cmax) {
        SETERR(err, "domain box corners must lie within -%g..%g m", cmax, cmax);
        return FS_ERR_RANGE;
    }
    if (len3(dom->gravity) > FS_DOMAIN_MAX_GRAVITY) {
        SETERR(err, "domain gravity %g m/s^2 outside 0..%g", len3(dom->gravity), FS_DOMAIN_MAX_GRAVITY);
        return FS_ERR_RANGE;
    }
    if (dom->spacing < FS_DOMAIN_MIN_SPACING || dom->spacing > FS_DOMAIN_MAX_SPACING) {
        SETERR(err, "domain spacing %g m outside %g..%g m", dom->spacing, FS_DOMAIN_MIN_SPACING,
               FS_DOMAIN_MAX_SPACING);
        return FS_ERR_RANGE;
    }
    /* a float coordinate of the box resolves an eighth of a spacing (lattice loops always advance) */
    float amax_c = fmaxf(fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(a.z), fabsf(b.x))), fmaxf(fabsf(b.y), fabsf(b.z)));
    if (amax_c / dom->spacing > 1048576.0f) {
        SETERR(err, "domain box corner %g m is more than 2^20 spacings (%g m) from the origin", amax_c, dom->spacing);
        return FS_ERR_RANGE;
    }
    /* the ratio sizes every neighbourhood (and the (2 h/spacing + 3)^3 lattice sum below) */
    double ratio = (double)dom->h / dom->spacing;
    if (!(ratio >= FS_DOMAIN_MIN_H_OVER_S && ratio <= FS_DOMAIN_MAX_H_OVER_S)) {
        SETERR(err, "domain h / spacing = %g outside %g..%g", ratio, FS_DOMAIN_MIN_H_OVER_S, FS_DOMAIN_MAX_H_OVER_S);
        return FS_ERR_RANGE;
    }
    if (dom->particle_radius > dom->h) {
        SETERR(err, "domain particle radius %g m outside 0..h (%g m)", dom->particle_radius, dom->h);
        return FS_ERR_RANGE;
    }
    float r = dom->particle_radius > 0 ? dom->particle_radius : 0.5f * dom->spacing;
    if (2 * r >= b.x - a.x || 2 * r >= b.y - a.y || 2 * r >= b.z - a.z) {
        SETERR(err, "box is smaller than a particle");
        return FS_ERR_ARG;
    }
    double cs = dom->h / FS_GRID_DIV;
    double ex = (double)b.x - a.x, ey = (double)b.y - a.y, ez = (double)b.z - a.z;
    double cells = ceil(ex / cs) * ceil(ey / cs) * ceil(ez / cs);
    if (cells > FS_DOMAIN_MAX_CELLS) {
        SETERR(err, "box / (h/2) gives %.0f grid cells (limit %.0f)", cells, FS_DOMAIN_MAX_CELLS);
        return FS_ERR_RANGE;
    }
    /* what the box costs (solvers that fill the box or its faces with a
     * lattice: MPS walls) stays in proportion to the capacity */
    double s = dom->spacing, vol = ex * ey * ez / (s * s * s), area = 2 * (ex * ey + ey * ez + ex * ez) / (s * s);
    double cap_d = cap > 0 ? cap : 1;
    double vmax = fmax(FS_DOMAIN_SITES_FLOOR, FS_DOMAIN_SITES_PER_PARTICLE * cap_d);
    double amax = fmax(FS_DOMAIN_FACE_FLOOR, FS_DOMAIN_FACE_PER_PARTICLE * pow(cap_d, 2.0 / 3.0));
    if (vol > vmax || area > amax) {
        SETERR(err, "box holds %.0f lattice sites (limit %.0f) with %.0f on its faces (limit %.0f) at capacity %d",
               vol, vmax, area, amax, cap);
        return FS_ERR_RANGE;
    }
    return FS_OK;
}

fs_status fs_world_reset(fs_world *w, const fs_domain *dom, fs_error *err) {
    fs_status st = fs__domain_check(dom, w->cap, err);
    if (st != FS_OK) return st;
    int32_t *starts = fs__grid_alloc(dom);
    if (!starts) {
        SETERR(err, "out of memory for the grid");
        return FS_ERR_NOMEM;
    }
    fs__reset_apply(w, dom, starts);
    return FS_OK;
}

int32_t *fs__grid_alloc(const fs_domain *dom) {
    fs_vec3 a = dom->box_min, b = dom->box_max;
    float cs = dom->h / FS_GRID_DIV;
    int gx = (int)ceil((b.x - a.x) / cs), gy = (int)ceil((b.y - a.y) / cs), gz = (int)ceil((b.z - a.z) / cs);
    if (gx < 1) gx = 1;
    if (gy < 1) gy = 1;
    if (gz < 1) gz = 1;
    return malloc(sizeof(int32_t) * ((size_t)gx * gy * gz + 1));
}

/* The part of fs_world_reset that cannot fail: the domain was checked and
 * the grid allocated (fs__grid_alloc); takes ownership of starts. */
void fs__reset_apply(fs_world *w, const fs_domain *dom, int32_t *starts) {
    fs_vec3 a = dom->box_min, b = dom->box_max;
    float r = dom->particle_radius > 0 ? dom->particle_radius : 0.5f * dom->spacing;
    float cs = dom->h / FS_GRID_DIV;
    int gx = (int)ceil((b.x - a.x) / cs), gy = (int)ceil((b.y - a.y) / cs), gz = (int)ceil((b.z - a.z) / cs);
    if (gx < 1) gx = 1;
    if (gy < 1) gy = 1;
    if (gz < 1) gz = 1;
    free(w->cell_start);
    w->cell_start = starts;
    w->gx = gx, w->gy = gy, w->gz = gz, w->ncell = gx * gy * gz;
    w->cs = cs, w->inv_cs = 1.0f / cs;
    w->dom = *dom;
    w->dom.particle_radius = r;
    w->h = dom->h;
    w->inv_h = 1.0f / dom->h;
    /* Safety rail against runaway parameters: no particle moves more than
     * 4 h in a step (a tenfold margin over a 1 m fall at h = 3 cm). */
    w->max_speed = 4.0f * dom->h / w->dt;
    w->lo = (fs_vec3){a.x + r, a.y + r, a.z + r};
    w->hi = (fs_vec3){b.x - r, b.y - r, b.z - r};
    w->epoch++;
    w->n = 0;
    w->next_id = 0;
    w->nfree = 0;
    for (int i = w->cap - 1; i >= 0; i--) w->free_slots[w->nfree++] = i;
    for (int i = 0; i < w->cap; i++) w->slot_index[i] = -1;
    memset(w->spr_n, 0, sizeof(uint16_t) * (size_t)w->cap);
    w->springs = 0;
    memset(w->emit, 0, sizeof w->emit);
    memset(w->drain, 0, sizeof w->drain);
    memset(w->heat, 0, sizeof w->heat);
    w->nbodies = 0;
    /* Eq. 21 on the rest lattice: for T = x^2/2 (Laplacian 1) the sum
     * sum_j (T_j - T_i)(h - r_ij) is (1/6) sum_j r_j^2 (h - r_j); its inverse
     * normalises the kernel so that the diffusivity is the physical one at
     * this resolution. */
    {
        double acc = 0, sp = dom->spacing, hh = dom->h;
        int m = (int)(hh / sp) + 1;
        for (int k = -m; k <= m; k++)
            for (int j = -m; j <= m; j++)
                for (int i = -m; i <= m; i++) {
                    double rr = sp * sqrt((double)(i * i + j * j + k * k));
                    if (rr > 0 && rr < hh) acc += rr * rr * (hh - rr);
                }
        w->lap_norm = acc > 0 ? (float)(6.0 / acc) : 0.0f;
    }
    w->ncontacts = w->ncontacts_prev = 0;
    memset(&w->st, 0, sizeof w->st);
    w->pending_steps = 0;
    snprintf(w->scene, sizeof w->scene, "custom");
    /* the solver's per-particle state belongs to no particle any more */
    const fs_solver_ops *ops = fs__solver_ops(w->solver);
    if (ops && ops->prepare && w->solver_state) ops->prepare(w);
}

fs_domain fs_world_domain(const fs_world *w) { return w->dom; }
float fs_world_dt(const fs_world *w) { return w->def.dt; }
int fs_world_capacity(const fs_world *w) { return w->cap; }
int fs_world_particle_count(const fs_world *w) { return w->n; }
int fs_world_spring_count(const fs_world *w) { return w->springs; }
const char *fs_world_scene_name(const fs_world *w) { return w->scene; }

int fs__alloc_particle(fs_world *w, float x, float y, float z, float vx, float vy, float vz, int m) {
    if (w->n >= w->cap || w->nfree == 0) return -1;
    int i = w->n++;
    int s = w->free_slots[--w->nfree];
    /* keep every particle strictly inside the box */
    x = fminf(fmaxf(x, w->lo.x), w->hi.x);
    y = fminf(fmaxf(y, w->lo.y), w->hi.y);
    z = fminf(fmaxf(z, w->lo.z), w->hi.z);
    fs_particles *p = &w->p;
    p->x[i] = x, p->y[i] = y, p->z[i] = z;
    p->px[i] = x, p->py[i] = y, p->pz[i] = z;
    p->vx[i] = vx, p->vy[i] = vy, p->vz[i] = vz;
    p->mat[i] = (uint8_t)m;
    p->temp[i] = w->ambient;
    p->frozen[i] = w->mat[m].p[FS_P_PHASE_CHANGE] != 0.0f && w->ambient <= w->mat[m].p[FS_P_SOLID_POINT];
    p->id[i] = w->next_id++;
    p->slot[i] = s;
    w->slot_index[s] = i;
    w->spr_n[s] = 0;
    w->id_order[i] = s; /* ids grow, so appending keeps id order */
    w->by_id[i] = i;
    return i;
}

int64_t fs_world_add_particle(fs_world *w, fs_vec3 pos, fs_vec3 vel, int material) {
    if (material < 0 || material >= w->nmat || !vec_finite(pos) || !vec_finite(vel)) return -1;
    int i = fs__alloc_particle(w, pos.x, pos.y, pos.z, vel.x, vel.y, vel.z, material);
    return i < 0 ? -1 : (int64_t)w->p.id[i];
}

/* Removes spring s-t from t's list (lists are sorted by partner slot). */
static void spring_unlink(fs_world *w, int t, int s) {
    int K = w->K, n = w->spr_n[t];
    int32_t *J = w->spr_j + (size_t)t * K;
    float *L = w->spr_L + (size_t)t * K;
    for (int k = 0; k < n; k++) {
        if (J[k] == s) {
            memmove(J + k, J + k + 1, sizeof *J * (size_t)(n - k - 1));
            memmove(L + k, L + k + 1, sizeof *L * (size_t)(n - k - 1));
            w->spr_n[t] = (uint16_t)(n - 1);
            return;
        }
    }
}

/* Removes the particle at index i (swap with the last one).  The id order
 * is left stale (the freed slot is marked -1): call fs__sync_ids after a
 * batch of removals, before any particle is added. */
void fs__remove_index(fs_world *w, int i) {
    fs_particles *p = &w->p;
    int s = p->slot[i];
    int K = w->K;
    const fs_solver_ops *ops = fs__solver_ops(w->solver);
    if (ops->removed) ops->removed(w, s);
    for (int k = 0; k < w->spr_n[s]; k++) spring_unlink(w, w->spr_j[(size_t)s * K + k], s);
    w->springs -= w->spr_n[s];
    w->spr_n[s] = 0;
    int last = --w->n;
    if (i != last) {
        p->x[i] = p->x[last], p->y[i] = p->y[last], p->z[i] = p->z[last];
        p->px[i] = p->px[last], p->py[i] = p->py[last], p->pz[i] = p->pz[last];
        p->vx[i] = p->vx[last], p->vy[i] = p->vy[last], p->vz[i] = p->vz[last];
        p->mat[i] = p->mat[last], p->id[i] = p->id[last], p->slot[i] = p->slot[last];
        p->temp[i] = p->temp[last], p->frozen[i] = p->frozen[last];
        w->slot_index[p->slot[i]] = i;
    }
    w->slot_index[s] = -1;
    w->free_slots[w->nfree++] = s;
}

/* Drops freed slots from the id order and rebuilds by_id: O(N). */
void fs__sync_ids(fs_world *w) {
    /* the first n live entries come before or among the stale ones */
    for (int k = 0, m = 0; m < w->n; k++) {
        int32_t s = w->id_order[k];
        if (w->slot_index[s] >= 0) w->id_order[m++] = s;
    }
    fs__rebuild_by_id(w);
}

void fs__rebuild_by_id(fs_world *w) {
    for (int k = 0; k < w->n; k++) w->by_id[k] = w->slot_index[w->id_order[k]];
}

int fs_world_index_of(const fs_world *w, uint32_t id) {
    /* id_order is sorted by id: binary search */
    int lo = 0, hi = w->n - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int idx = w->slot_index[w->id_order[mid]];
        uint32_t v = w->p.id[idx];
        if (v == id) return idx;
        if (v < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

bool fs_world_remove_particle(fs_world *w, uint32_t id) {
    int i = fs_world_index_of(w, id);
    if (i < 0) return false;
    fs__remove_index(w, i);
    fs__sync_ids(w);
    return true;
}

int fs_world_remove_in_sphere(fs_world *w, fs_vec3 c, float radius) {
    if (!vec_finite(c) || !(radius >= 0)) return 0;
    float r2 = radius * radius;
    int removed = 0;
    for (int i = w->n - 1; i >= 0; i--) {
        float dx = w->p.x[i] - c.x, dy = w->p.y[i] - c.y, dz = w->p.z[i] - c.z;
        if (dx * dx + dy * dy + dz * dz <= r2) {
            fs__remove_index(w, i);
            removed++;
        }
    }
    if (removed) fs__sync_ids(w);
    return removed;
}

int fs_world_add_block(fs_world *w, fs_vec3 lo, fs_vec3 hi, int material, float jitter) {
    if (material < 0 || material >= w->nmat || !vec_finite(lo) || !vec_finite(hi)) return 0;
    float s = w->dom.spacing;
    int added = 0;
    uint64_t seed = w->next_id;
    for (float z = lo.z + 0.5f * s; z <= hi.z; z += s)
        for (float y = lo.y + 0.5f * s; y <= hi.y; y += s)
            for (float x = lo.x + 0.5f * s; x <= hi.x; x += s) {
                uint64_t k = seed + (uint64_t)added;
                float jx = (fs__rand01(k, 1) - 0.5f) * jitter * s;
                float jy = (fs__rand01(k, 2) - 0.5f) * jitter * s;
                float jz = (fs__rand01(k, 3) - 0.5f) * jitter * s;
                if (fs__alloc_particle(w, x + jx, y + jy, z + jz, 0, 0, 0, material) < 0) return added;
                added++;
            }
    return added;
}

int fs_world_add_sphere(fs_world *w, fs_vec3 c, float radius, int material, float jitter) {
    if (material < 0 || material >= w->nmat || !vec_finite(c) || !(radius > 0)) return 0;
    float s = w->dom.spacing;
    int added = 0;
    uint64_t seed = w->next_id;
    int m = (int)ceil(radius / s);
    for (int k = -m; k <= m; k++)
        for (int j = -m; j <= m; j++)
            for (int i = -m; i <= m; i++) {
                float x = (float)i * s, y = (float)j * s, z = (float)k * s;
                if (x * x + y * y + z * z > radius * radius) continue;
                uint64_t key = seed + (uint64_t)added;
                float jx = (fs__rand01(key, 1) - 0.5f) * jitter * s;
                float jy = (fs__rand01(key, 2) - 0.5f) * jitter * s;
                float jz = (fs__rand01(key, 3) - 0.5f) * jitter * s;
                if (fs__alloc_particle(w, c.x + x + jx, c.y + y + jy, c.z + z + jz, 0, 0, 0, material) < 0)
                    return added;
                added++;
            }
    return added;
}

/* Inserts spring s-t with rest length L into s's sorted list. */
static bool spring_insert(fs_world *w, int s, int t, float L) {
    int K = w->K, n = w->spr_n[s];
    if (n >= K) return false;
    int32_t *J = w->spr_j + (size_t)s * K;
    float *Ls = w->spr_L + (size_t)s * K;
    int k = n;
    while (k > 0 && J[k - 1] > t) {
        J[k] = J[k - 1];
        Ls[k] = Ls[k - 1];
        k--;
    }
    if (k > 0 && J[k - 1] == t) { /* already there: undo the shift */
        for (int q = k; q < n; q++) J[q] = J[q + 1], Ls[q] = Ls[q + 1];
        return false;
    }
    J[k] = t;
    Ls[k] = L;
    w->spr_n[s] = (uint16_t)(n + 1);
    return true;
}

int fs_world_make_springs(fs_world *w) {
    /* O(N) with the grid; pairs i<j of spring materials closer than h. */
    fs__grid_build(w);
    fs_particles *p = &w->p;
    float h2 = w->h * w->h;
    int made = 0;
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = 0; i < w->n; i++) {
        if (w->mat[p->mat[i]].p[FS_P_SPRINGS] == 0.0f) continue;
        fs__ranges_of(w, w->cell[i], &r);
        int nn = fs__scan(p->x, p->y, p->z, &r, i, h2, false, w->scr_j, w->scr_r2, NULL, NULL, NULL);
        for (int k = 0; k < nn; k++) {
            int j = w->scr_j[k];
            if (j <= i || w->mat[p->mat[j]].p[FS_P_SPRINGS] == 0.0f) continue;
            int si = p->slot[i], sj = p->slot[j];
            if (w->spr_n[si] >= w->K || w->spr_n[sj] >= w->K) continue;
            float rr = sqrtf(w->scr_r2[k]);
            if (spring_insert(w, si, sj, rr)) {
                spring_insert(w, sj, si, rr);
                made++;
            }
        }
    }
    w->springs += made;
    return made;
}

int fs_world_springs(const fs_world *w, uint32_t *a, uint32_t *b, float *rest, int max) {
    int c = 0;
    for (int k = 0; k < w->n; k++) {
        int i = w->slot_index[w->id_order[k]];
        int s = w->p.slot[i];
        for (int q = 0; q < w->spr_n[s]; q++) {
            int j = w->slot_index[w->spr_j[(size_t)s * w->K + q]];
            if (w->p.id[j] < w->p.id[i]) continue;
            if (c < max) {
                if (a) a[c] = w->p.id[i];
                if (b) b[c] = w->p.id[j];
                if (rest) rest[c] = w->spr_L[(size_t)s * w->K + q];
            }
            c++;
        }
    }
    return c;
}

void fs_world_view(const fs_world *w, fs_particles_view *o) {
    o->count = w->n;
    o->x = w->p.x, o->y = w->p.y, o->z = w->p.z;
    o->vx = w->p.vx, o->vy = w->p.vy, o->vz = w->p.vz;
    o->material = w->p.mat;
    o->temperature = w->p.temp;
    o->id = w->p.id;
    o->by_id = w->by_id;
}

/* ---- interaction ------------------------------------------------------- */
fs_status fs_world_push(fs_world *w, fs_vec3 c, float radius, fs_vec3 dir, float strength, int *touched,
                        fs_error *err) {
    if (touched) *touched = 0;
    if (!vec_finite(c) || !vec_finite(dir) || !isfinite(radius) || !isfinite(strength)) {
        SETERR(err, "push: point, direction, radius and strength must be finite");
        return FS_ERR_ARG;
    }
    if (radius <= 0 || radius > 100.0f) {
        SETERR(err, "push: radius %g outside (0, 100] m", radius);
        return FS_ERR_RANGE;
    }
    if (fabsf(strength) > 50.0f) { /* negative: against dir */
        SETERR(err, "push: strength %g outside -50..50 m/s", strength);
        return FS_ERR_RANGE;
    }
    float len = sqrtf(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
    if (!(len > 1e-6f)) {
        SETERR(err, "push: direction must be non-zero");
        return FS_ERR_ARG;
    }
    float ux = dir.x / len, uy = dir.y / len, uz = dir.z / len, r2 = radius * radius;
    int t = 0;
    for (int i = 0; i < w->n; i++) {
        float dx = w->p.x[i] - c.x, dy = w->p.y[i] - c.y, dz = w->p.z[i] - c.z;
        float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 >= r2) continue;
        float f = strength * (1.0f - d2 / r2);
        w->p.vx[i] += f * ux, w->p.vy[i] += f * uy, w->p.vz[i] += f * uz;
        t++;
    }
    if (touched) *touched = t;
    return FS_OK;
}

/* The emitter's documented ranges (fluid_sim.h); also a snapshot's emitters. */
fs_status fs__emitter_check(const fs_emitter_def *d, int nmat, fs_error *err) {
    if (!vec_finite(d->pos) || !vec_finite(d->dir) || !isfinite(d->speed) || !isfinite(d->radius) ||
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
    if (slot < 0) {
        for (slot = 0; slot < FS_MAX_EMITTERS && w->emit[slot].used; slot++) {
        }
        if (slot == FS_MAX_EMITTERS) {
            SETERR(err, "emitter: all %d slots in use", FS_MAX_EMITTERS);
            return -1;
        }
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

bool fs_world_get_emitter(const fs_world *w, int slot, fs_emitter_def *out, int *emitted) {
    if (slot < 0 || slot >= FS_MAX_EMITTERS || !w->emit[slot].used) return false;
    if (out) *out = w->emit[slot].def;
    if (emitted) *emitted = w->emit[slot].emitted;
    return true;
}

bool fs_world_get_heater(const fs_world *w, int slot, fs_heater_def *out) {
    if (slot < 0 || slot >= FS_MAX_HEATERS || !w->heat[slot].used) return false;
    *out = w->heat[slot].def;
    return true;
}

/* The heater's documented ranges; also a snapshot's heaters. */
fs_status fs__heater_check(const fs_heater_def *d, fs_error *err) {
    if (!d || !vec_finite(d->centre) || !isfinite(d->radius) || !isfinite(d->rate) || !isfinite(d->temperature)) {
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
    if (slot < 0) {
        for (slot = 0; slot < FS_MAX_HEATERS && w->heat[slot].used; slot++) {
        }
    }
    if (slot >= FS_MAX_HEATERS) {
        SETERR(err, "heater: no free slot (%d)", FS_MAX_HEATERS);
        return -1;
    }
    w->heat[slot].def = *d;
    w->heat[slot].used = true;
    return slot;
}

void fs_world_set_temperature(fs_world *w, float c) {
    if (!(c >= FS_TEMP_MIN && c <= FS_TEMP_MAX)) return;
    w->ambient = c;
    for (int i = 0; i < w->n; i++) {
        const fs_material *m = &w->mat[w->p.mat[i]];
        w->p.temp[i] = c;
        /* no freezing event for a reset */
        w->p.frozen[i] = m->p[FS_P_PHASE_CHANGE] != 0.0f && c <= m->p[FS_P_SOLID_POINT];
    }
}

double fs_world_total_heat(const fs_world *w) {
    double s = 0;
    for (int i = 0; i < w->n; i++) s += w->p.temp[i];
    return s;
}

/* The drain's documented ranges; also a snapshot's drains. */
fs_status fs__drain_check(const fs_drain_def *d, fs_error *err) {
    if (!d || !vec_finite(d->centre) || !isfinite(d->radius) || d->radius < 0 || d->radius > 10) {
        SETERR(err, "drain: centre must be finite and radius in 0..10 m");
        return FS_ERR_ARG;
    }
    return FS_OK;
}

int fs_world_set_drain(fs_world *w, int slot, const fs_drain_def *d, fs_error *err) {
    if (fs__drain_check(d, err) != FS_OK) return -1;
    if (slot < 0) {
        for (slot = 0; slot < FS_MAX_DRAINS && w->drain[slot].used; slot++) {
        }
    }
    if (slot >= FS_MAX_DRAINS) {
        SETERR(err, "drain: no free slot");
        return -1;
    }
    w->drain[slot].def = *d;
    w->drain[slot].used = true;
    return slot;
}

void fs_world_set_paused(fs_world *w, bool paused) {
    w->paused = paused;
    if (!paused) w->pending_steps = 0;
}
bool fs_world_paused(const fs_world *w) { return w->paused; }
void fs_world_request_steps(fs_world *w, int n) {
    if (n > 0) w->pending_steps = (w->pending_steps + n > 100000) ? 100000 : w->pending_steps + n;
}

bool fs_world_advance(fs_world *w) {
    if (w->paused) {
        if (w->pending_steps <= 0) return false;
        w->pending_steps--;
    }
    fs_world_step(w);
    return true;
}

void fs_world_step(fs_world *w) {
    double t0 = fs__now_ms();
    double ph[FS_PHASE_COUNT] = {0};
    const fs_solver_ops *ops = fs__solver_ops(w->solver);
    for (int k = 0; k < w->def.substeps; k++) {
        ops->step(w);
        for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] += w->st.phase_ms[q];
    }
    for (int q = 0; q < FS_PHASE_COUNT; q++) w->st.phase_ms[q] = ph[q];
    w->st.tick++;
    w->st.step_ms = fs__now_ms() - t0;
}

/* ---- stats, diagnostics, hash ----------------------------------------- */
void fs_world_stats(const fs_world *w, fs_stats *out) {
    *out = w->st;
    out->particles = w->n;
    out->springs = w->springs;
    out->bodies = w->nbodies;
    out->contacts = w->ncontacts;
    out->solver = w->solver;
}

float fs_world_mean_neighbours(fs_world *w, float *mean_density, float *mean_near) {
    /* Interior particle: its neighbours' centroid lies within 0.1 h of it
     * (a balanced neighbourhood: not at a free surface, not at a wall). */
    const fs_particles *p = &w->p;
    float h = w->h, h2 = h * h;
    double sn = 0, sd = 0, snear = 0;
    long cnt = 0;
    fs__grid_build(w);
    fs_ranges r = {.cell = -1, .cyz = -1};
    for (int i = 0; i < w->n; i++) {
        fs__ranges_of(w, w->cell[i], &r);
        int nb = fs__scan(p->x, p->y, p->z, &r, i, h2, false, w->scr_j, w->scr_r2, NULL, NULL, NULL);
        double rho = 0, rhon = 0, mx = 0, my = 0, mz = 0;
        for (int k = 0; k < nb; k++) {
            int j = w->scr_j[k];
            float q = 1.0f - sqrtf(w->scr_r2[k]) / h;
            rho += q * q, rhon += q * q * q;
            mx += p->x[j] - p->x[i], my += p->y[j] - p->y[i], mz += p->z[j] - p->z[i];
        }
        if (nb < 8) continue;
        double off = sqrt(mx * mx + my * my + mz * mz) / nb;
        if (off > 0.1 * h) continue;
        sn += nb, sd += rho, snear += rhon;
        cnt++;
    }
    if (mean_density) *mean_density = cnt ? (float)(sd / cnt) : 0.0f;
    if (mean_near) *mean_near = cnt ? (float)(snear / cnt) : 0.0f;
    return cnt ? (float)(sn / cnt) : 0.0f;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
    const unsigned char *b = data;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
    return h;
}

uint64_t fs_world_hash(const fs_world *w) {
    uint64_t h = 0xcbf29ce484222325ull;
    h = fnv(h, &w->st.tick, sizeof w->st.tick);
    h = fnv(h, &w->n, sizeof w->n);
    const fs_particles *p = &w->p;
    for (int k = 0; k < w->n; k++) {
        int i = w->slot_index[w->id_order[k]];
        float v[9] = {p->x[i], p->y[i], p->z[i], p->vx[i], p->vy[i], p->vz[i], p->px[i], p->py[i], p->pz[i]};
        h = fnv(h, &p->id[i], sizeof p->id[i]);
        h = fnv(h, v, sizeof v);
        h = fnv(h, &p->mat[i], 1);
        h = fnv(h, &p->temp[i], sizeof(float));
        h = fnv(h, &p->frozen[i], 1);
        int s = p->slot[i];
        for (int q = 0; q < w->spr_n[s]; q++) {
            int t = w->spr_j[(size_t)s * w->K + q];
            uint32_t pid = p->id[w->slot_index[t]];
            h = fnv(h, &pid, sizeof pid);
            h = fnv(h, &w->spr_L[(size_t)s * w->K + q], sizeof(float));
        }
    }
    for (int k = 0; k < w->nbodies; k++) {
        const fs_body *b = &w->bodies[k];
        float v[13] = {b->pos.x, b->pos.y, b->pos.z, b->rot.w, b->rot.x, b->rot.y, b->rot.z,
                       b->vel.x, b->vel.y, b->vel.z, b->ang.x, b->ang.y, b->ang.z};
        h = fnv(h, &b->id, sizeof b->id);
        h = fnv(h, v, sizeof v);
    }
    return h;
}
