/* world.c - a world's lifetime: the def's defaults, create (the particle
 * arrays and the scratch any solver shares), destroy, the domain's checks
 * and fs_world_reset, and the plain accessors. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "obstacles.h"
#include "params.h"
#include "sim_util.h"
#include "solver_table.h"
#include "world.h"

fs_world_def fs_default_world_def(void) {
    fs_world_def d;
    memset(&d, 0, sizeof d);
    d.capacity = 100000;
    d.springs_per_particle = 48;
    d.dt = 1.0f / 60.0f;
    d.substeps = 1;
    d.clavet.relax = FS_RELAX_COLORED;
    d.clavet.relax_iterations = FS_DEFAULT_RELAX_ITERATIONS;
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
    return p->x && p->y && p->z && p->px && p->py && p->pz && p->vx && p->vy && p->vz && p->mat && p->temp &&
           p->frozen && p->id && p->slot;
}

void fs_world_destroy(fs_world *w) {
    if (!w) return;
    fs__solver_detach(w);
    fs__obstacles_clear(w);
    fs__body_meshes_clear(w);
    particles_free(&w->p);
    particles_free(&w->alt);
    free(w->dT), free(w->solid);
    free(w->nx), free(w->ny), free(w->nz);
    free(w->nvx), free(w->nvy), free(w->nvz);
    free(w->cell), free(w->perm);
    free(w->nb), free(w->nb_n), free(w->scr_j);
    free(w->slot_index), free(w->free_slots), free(w->id_order), free(w->by_id);
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
    if (d.clavet.relax_iterations < 1) d.clavet.relax_iterations = 1;
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
    w->dT = calloc(n, sizeof(float)), w->solid = calloc(n, sizeof(float));
    size_t padded = n + FS_SCR_PAD;
    w->nx = calloc(padded, sizeof(float)), w->ny = calloc(padded, sizeof(float)), w->nz = calloc(padded, sizeof(float));
    w->nvx = malloc(f), w->nvy = malloc(f), w->nvz = malloc(f);
    w->cell = malloc(i32), w->perm = malloc(i32);
    w->nb = malloc(i32 * FS_NB_MAX), w->nb_n = malloc(i32);
    /* one block: j, r2, dx, dy, dz for each worker */
    size_t per = (size_t)w->cap + FS_SCR_PAD, nw = (size_t)d.worker_count;
    w->scr_j = malloc(sizeof(int32_t) * per * nw * 5);
    if (w->scr_j) {
        float *fl = (float *)(w->scr_j + per * nw);
        w->scr_r2 = fl, w->scr_dx = fl + per * nw, w->scr_dy = fl + 2 * per * nw, w->scr_dz = fl + 3 * per * nw;
    }
    w->slot_index = malloc(i32), w->free_slots = malloc(i32);
    w->id_order = malloc(i32), w->by_id = malloc(i32);
    w->spr_n = calloc(n, sizeof(uint16_t));
    w->spr_j = malloc(sizeof(int32_t) * n * (size_t)w->K);
    w->spr_L = malloc(sizeof(float) * n * (size_t)w->K);
    w->contacts = malloc(fs__contact_size() * FS_MAX_CONTACTS);
    w->contacts_prev = malloc(fs__contact_size() * FS_MAX_CONTACTS);
    ok = ok && w->dT && w->solid && w->contacts && w->contacts_prev && w->nx && w->ny && w->nz && w->nvx && w->nvy &&
         w->nvz && w->cell && w->perm && w->nb && w->nb_n && w->scr_j && w->slot_index && w->free_slots &&
         w->id_order && w->by_id && w->spr_n && w->spr_j && w->spr_L;
    if (!ok) {
        fs_world_destroy(w);
        return NULL;
    }
    fs__materials_init(w);
    w->ambient = 20.0f;
    fs_domain dom = {{0, 0, 0}, {1, 1, 1}, {0, -9.81f, 0}, 0.1f, 0.1f / 2.1f, 0.0f};
    /* Clavet, the default solver, and its state */
    if (fs_world_reset(w, &dom, NULL) != FS_OK || fs__solver_switch(w, FS_SOLVER_CLAVET, NULL) != FS_OK) {
        fs_world_destroy(w);
        return NULL;
    }
    return w;
}

static double len3(fs_vec3 v) {
    return sqrt((double)v.x * v.x + (double)v.y * v.y + (double)v.z * v.z);
}

/* The domain's documented ranges (fluid_sim.h, fs_world_reset), checked
 * before anything changes; also the first check of a snapshot's domain. */
fs_status fs__domain_check(const fs_domain *dom, int cap, fs_error *err) {
    if (!dom || !fs__vec_finite(dom->box_min) || !fs__vec_finite(dom->box_max) || !fs__vec_finite(dom->gravity) ||
        !isfinite(dom->h) || !isfinite(dom->spacing) || !isfinite(dom->particle_radius)) {
        SETERR(err, "domain has a missing or non-finite value");
        return FS_ERR_ARG;
    }
    fs_vec3 a = dom->box_min, b = dom->box_max;
    if (!(b.x > a.x && b.y > a.y && b.z > a.z) || !(dom->h > 0) || !(dom->spacing > 0) || dom->particle_radius < 0) {
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
        SETERR(err, "domain spacing %g m outside %g..%g m", dom->spacing, FS_DOMAIN_MIN_SPACING, FS_DOMAIN_MAX_SPACING);
        return FS_ERR_RANGE;
    }
    /* a float coordinate of the box resolves an eighth of a spacing (lattice loops always advance) */
    float amax_c =
        fmaxf(fmaxf(fmaxf(fabsf(a.x), fabsf(a.y)), fmaxf(fabsf(a.z), fabsf(b.x))), fmaxf(fabsf(b.y), fabsf(b.z)));
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
        SETERR(err, "box holds %.0f lattice sites (limit %.0f) with %.0f on its faces (limit %.0f) at capacity %d", vol,
               vmax, area, amax, cap);
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

/* The part of fs_world_reset that cannot fail: the domain was checked and
 * the grid allocated (fs__grid_alloc); takes ownership of starts. */
void fs__reset_apply(fs_world *w, const fs_domain *dom, int32_t *starts) {
    fs_vec3 a = dom->box_min, b = dom->box_max;
    float r = dom->particle_radius > 0 ? dom->particle_radius : 0.5f * dom->spacing;
    fs__grid_set(w, dom, starts);
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
    fs__body_meshes_clear(w);
    w->nbodies = 0;
    fs__obstacles_clear(w); /* their grids are clipped to the old box */
    w->lap_norm = fs__heat_lap_norm(dom);
    w->ncontacts = w->ncontacts_prev = 0;
    memset(&w->st, 0, sizeof w->st);
    w->pending_steps = 0;
    w->nprobes = 0, w->probe_span = 0;
    snprintf(w->scene, sizeof w->scene, "custom");
    w->scene_size = 0;
    /* the solver's per-particle state belongs to no particle any more */
    if (w->ops && w->ops->prepare && w->solver_state) w->ops->prepare(w);
}

fs_domain fs_world_domain(const fs_world *w) {
    return w->dom;
}
float fs_world_dt(const fs_world *w) {
    return w->def.dt;
}
int fs_world_capacity(const fs_world *w) {
    return w->cap;
}
const char *fs_world_scene_name(const fs_world *w) {
    return w->scene;
}
int fs_world_scene_size(const fs_world *w) {
    return w->scene_size;
}
