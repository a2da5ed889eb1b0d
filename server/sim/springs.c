/* springs.c - the world's springs (Clavet 2005 Sec. 5): per storage slot,
 * sorted by partner, held by both ends; the mold of Fig. 12
 * (fs_world_make_springs), removal and the public listing.  The Clavet step
 * (clavet.c, Algorithms 3-4) makes, yields and breaks them while it runs. */
#include <math.h>
#include <string.h>

#include "grid.h"
#include "kernels.h"
#include "springs.h"

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

void fs__springs_drop(fs_world *w, int s) {
    for (int k = 0; k < w->spr_n[s]; k++) spring_unlink(w, w->spr_j[(size_t)s * w->K + k], s);
    w->springs -= w->spr_n[s];
    w->spr_n[s] = 0;
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

int fs_world_spring_count(const fs_world *w) {
    return w->springs;
}
