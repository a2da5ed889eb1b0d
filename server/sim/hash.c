/* hash.c - a 64-bit FNV-1a hash of the whole state (particles in id order
 * with their springs, bodies, tick): what the determinism tests compare. */
#include "world_internal.h"

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
