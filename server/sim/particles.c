/* particles.c - adding and removing particles: storage slots, stable ids
 * (never reused) and the id order, single particles, lattice blocks and
 * spheres, and the read-only view. */
#include <math.h>

#include "particles.h"
#include "sim_util.h"
#include "solver_table.h"
#include "springs.h"
#include "world_internal.h"

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
    if (material < 0 || material >= w->nmat || !fs__vec_finite(pos) || !fs__vec_finite(vel)) return -1;
    int i = fs__alloc_particle(w, pos.x, pos.y, pos.z, vel.x, vel.y, vel.z, material);
    return i < 0 ? -1 : (int64_t)w->p.id[i];
}

/* The id order is left stale by a removal (the freed slot is marked -1):
 * fs__sync_ids mends it. */
void fs__remove_index(fs_world *w, int i) {
    fs_particles *p = &w->p;
    int s = p->slot[i];
    if (w->ops->removed) w->ops->removed(w, s);
    fs__springs_drop(w, s);
    int last = --w->n;
    w->grid_n = 0; /* the last particle takes i's place: the cell order is lost */
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

static int index_of(const fs_world *w, uint32_t id) {
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
    int i = index_of(w, id);
    if (i < 0) return false;
    fs__remove_index(w, i);
    fs__sync_ids(w);
    return true;
}

int fs_world_add_block(fs_world *w, fs_vec3 lo, fs_vec3 hi, int material, float jitter) {
    if (material < 0 || material >= w->nmat || !fs__vec_finite(lo) || !fs__vec_finite(hi)) return 0;
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
    if (material < 0 || material >= w->nmat || !fs__vec_finite(c) || !(radius > 0)) return 0;
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
void fs_world_view(const fs_world *w, fs_particles_view *o) {
    o->count = w->n;
    o->x = w->p.x, o->y = w->p.y, o->z = w->p.z;
    o->vx = w->p.vx, o->vy = w->p.vy, o->vz = w->p.vz;
    o->material = w->p.mat;
    o->temperature = w->p.temp;
    o->id = w->p.id;
    o->by_id = w->by_id;
}

int fs_world_particle_count(const fs_world *w) {
    return w->n;
}
