/* clavet_internal.h - what the Clavet solver's files share: its state
 * behind w->solver_state, the per-material constants and the per-call
 * context of a step, the inline pair sums the Jacobi form and the coloured
 * sweeps both run (Alg. 5, Eq. 21), the walls as mirror particles of the
 * Jacobi and sequential forms, and the entry points of clavet_springs.c,
 * clavet_jacobi.c, clavet_sequential.c and clavet_colour.c, which the
 * driver (clavet.c) calls.  Internal to server/sim; the method and its
 * measurements are in docs/clavet-notes.md. */
#ifndef FS_CLAVET_INTERNAL_H
#define FS_CLAVET_INTERNAL_H

#include <math.h>
#include <string.h>

#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "sim_util.h"
#include "solver_table.h"
#include "step.h"
#include "tasks.h"

/* The state only this solver reads (w->solver_state), sized for the
 * world's capacity; its settings are w->def.clavet.  Threads: the thread
 * that owns the world, and during a step the workers of parallel_for, each
 * writing only its own particles' entries and its own spr_refused_worker
 * slot. */
typedef struct clavet_state {
    float *s_a, *s_b;   /* per particle: pressure / near pressure (premultiplied), or dt sigma / dt beta/h */
    float *s_c;         /* per particle: the XSPH weight of its material this step */
    int32_t *spr_total; /* Alg. 4: springs + candidates per particle */
    int32_t *seq_order; /* FS_RELAX_SEQUENTIAL: a fixed random order of slots */
    int32_t *nb_off;    /* the coloured sweeps: where i's list starts in w->nb (list_task) */
    uint64_t spr_refused_worker[FS_MAX_WORKERS];
} clavet_state;

/* ---- per-material constants, premultiplied for the inner loops ---------- */
typedef struct mconst {
    float sigma[FS_MAX_MATERIALS], beta[FS_MAX_MATERIALS]; /* dt*sigma, dt*beta/h */
    float k[FS_MAX_MATERIALS], kn[FS_MAX_MATERIALS];       /* h * (k dt^2) */
    float rho0[FS_MAX_MATERIALS];
    float ks[FS_MAX_MATERIALS], alpha[FS_MAX_MATERIALS]; /* k_spring dt^2, dt*alpha */
    float ys[FS_MAX_MATERIALS], yc[FS_MAX_MATERIALS], brk[FS_MAX_MATERIALS];
    uint8_t springs[FS_MAX_MATERIALS], add[FS_MAX_MATERIALS];
    float diff[FS_MAX_MATERIALS]; /* Eq. 21: dt-free, D * lattice normalisation * h */
    uint8_t phase[FS_MAX_MATERIALS];
    float tsolid[FS_MAX_MATERIALS], tmelt[FS_MAX_MATERIALS];
    bool any_phase;
    bool heat;
    float mu[FS_MAX_MATERIALS];
    float stick_d[FS_MAX_MATERIALS], stick_k[FS_MAX_MATERIALS]; /* Eq. 12: d_stick [m], k_stick (obstacles) */
    bool any_springs;
    float xsph[FS_MAX_MATERIALS]; /* XSPH_C (clavet.c) over rho0 for this step's dt; 0 for materials with springs */
} mconst;

typedef struct step_ctx {
    fs_world *w;
    clavet_state *s;
    mconst m;
    float dt, h, h2, inv_h;
    fs_vec3 g;
    uint64_t nonfinite[FS_MAX_WORKERS], clamped[FS_MAX_WORKERS], freeze_events[FS_MAX_WORKERS];
    bool freezing;                  /* some particle froze this step */
    bool colored;                   /* this step relaxed by coloured sweeps (walls projected inside them) */
    bool uni;                       /* the materials present share Alg. 5's and XSPH's constants */
    bool present[FS_MAX_MATERIALS]; /* a particle of this material is in the world this step */
    int spr_pass;                   /* which springs Algorithm 3's pass moves: SPR_ALL, SPR_PLASTIC, SPR_ELASTIC */
} step_ctx;

enum { SPR_ALL, SPR_PLASTIC, SPR_ELASTIC };

/* A spring between two materials that never yield (no Eq. 8 plasticity,
 * fully solid): the coloured sweeps project it (fs__clavet_springs_colored). */
static inline bool spring_elastic(const step_ctx *c, const fs_world *w, int i, int j) {
    const int mi = w->p.mat[i], mj = w->p.mat[j];
    return c->m.alpha[mi] == 0.0f && c->m.alpha[mj] == 0.0f && (!c->m.phase[mi] || w->solid[i] >= 1.0f) &&
           (!c->m.phase[mj] || w->solid[j] >= 1.0f);
}

/* The step's double buffers: what a pass wrote into nv* (n*) becomes the
 * velocities (positions). */
static inline void swap_velocities(fs_world *w) {
    float *t;
    t = w->p.vx, w->p.vx = w->nvx, w->nvx = t;
    t = w->p.vy, w->p.vy = w->nvy, w->nvy = t;
    t = w->p.vz, w->p.vz = w->nvz, w->nvz = t;
}

static inline void swap_positions(fs_world *w) {
    float *t;
    t = w->p.x, w->p.x = w->nx, w->nx = t;
    t = w->p.y, w->p.y = w->ny, w->ny = t;
    t = w->p.z, w->p.z = w->nz, w->nz = t;
}

/* ---- gravity + viscosity (Alg. 1 lines 1-5, Alg. 5), gather form -------
 * Alg. 5 for particle i over its neighbours J[0..n) (r_ij in DX, DY, DZ, as a
 * scan packs them), all within h; the sum of the impulses (and XSPH's
 * exchange) i receives, to add to its velocity. */
static inline __attribute__((always_inline)) void visc_sum(const step_ctx *c, int i, const int32_t *restrict J,
                                                           const float *restrict DX, const float *restrict DY,
                                                           const float *restrict DZ, int n, bool uni, float *oax,
                                                           float *oay, float *oaz) {
    const fs_particles *p = &c->w->p;
    const float *VX = p->vx, *VY = p->vy, *VZ = p->vz;
    const float *SG = c->s->s_a, *BT = c->s->s_b; /* per-particle dt sigma, dt beta / h */
    const float *XS = c->s->s_c;                  /* per-particle XSPH weight */
    const float inv_h = c->inv_h;
    const float vxi = VX[i], vyi = VY[i], vzi = VZ[i], si = SG[i], bi = BT[i], xsi = XS[i];
    float ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
    for (int k = 0; k < n; k++) {
        const int j = J[k];
        const float dx = DX[k], dy = DY[k], dz = DZ[k];
        const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
        /* a coincident pair has no direction: no radial impulse */
        const float inv = rr > 1e-9f ? 1.0f / rr : 0.0f;
        const float ux = dx * inv, uy = dy * inv, uz = dz * inv;
        /* u: inward radial velocity (Alg. 5 line 5); only u > 0 acts (line 6) */
        float u = (vxi - VX[j]) * ux + (vyi - VY[j]) * uy + (vzi - VZ[j]) * uz;
        u = u > 0.0f ? u : 0.0f;
        const float q = rr * inv_h;
        /* uni: every particle has i's constants, and 0.5 (a + a) = a exactly */
        const float sg = uni ? si : 0.5f * (si + SG[j]), bt = uni ? bi : 0.5f * (bi + BT[j]);
        /* Alg. 5 line 8 (dt folded into sigma, beta).  Applied as a
         * Jacobi gather, an impulse larger than (1-q) u / 16 per pair
         * could make the sum over ~40 neighbours reverse the relative
         * velocity; saturating there keeps the smoothing operator's
         * eigenvalues in [0, 1] up to twice the rest density. */
        float I = sg * u + bt * u * u;
        const float cap = u * (1.0f / 16.0f);
        I = (1.0f - q) * (I < cap ? I : cap) * 0.5f; /* line 9: v_i -= I/2 */
        ax -= I * ux, ay -= I * uy, az -= I * uz;
        /* XSPH (XSPH_C), symmetric in i and j: momentum is kept */
        const float xs = (uni ? xsi : 0.5f * (xsi + XS[j])) * (1.0f - q) * (1.0f - q);
        ax += xs * (VX[j] - vxi), ay += xs * (VY[j] - vyi), az += xs * (VZ[j] - vzi);
    }
    *oax = ax, *oay = ay, *oaz = az;
}

/* Eq. 21 for particle i over its neighbours J[0..n) (|r_ij|^2 in R2): heat
 * diffusion with the Laplacian of the viscosity kernel, proportional to
 * (h - r) = h q; each pair's exchange is antisymmetric, so heat is conserved. */
static inline __attribute__((always_inline)) float heat_sum(const step_ctx *c, int i, const int32_t *restrict J,
                                                            const float *restrict R2, int n) {
    const fs_particles *p = &c->w->p;
    const float Ti = p->temp[i], Di = c->m.diff[p->mat[i]], inv_h = c->inv_h;
    const float *T = p->temp;
    const uint8_t *MM = p->mat;
    float acc = 0;
#pragma omp simd reduction(+ : acc)
    for (int k = 0; k < n; k++) {
        const float q = 1.0f - sqrtf(R2[k]) * inv_h;
        acc += 0.5f * (Di + c->m.diff[MM[J[k]]]) * q * (T[J[k]] - Ti);
    }
    return acc;
}

/* n rounded up to whole vectors of 8: the pair loops run over padded lists
 * (entries that add exactly nothing), with no scalar remainder loop. */
static inline int pad8(int n) {
    return (n + 7) & ~7;
}

/* Stores i's list (sc's first n entries) in w->nb, or marks it overflowed;
 * the list is padded to pad8(n) with i itself. */
static inline void store_list_at(fs_world *w, int i, const int32_t *J, int n, size_t at) {
    if (n <= FS_NB_MAX) {
        int32_t *l = w->nb + at;
        memcpy(l, J, sizeof(int32_t) * (size_t)n);
        for (int k = n; k < pad8(n); k++) l[k] = i; /* padding (gs_particle) */
        w->nb_n[i] = n;
    } else {
        w->nb_n[i] = -1; /* whoever reads it scans again: same positions, same set */
    }
}
static inline void store_list(fs_world *w, int i, const int32_t *J, int n) {
    store_list_at(w, i, J, n, (size_t)i * FS_NB_MAX);
}

/* Walls as mirror particles for the Jacobi and sequential forms (an
 * extension; the paper has only collisions; the coloured sweeps mirror the
 * whole neighbourhood, wall_images in clavet_colour.c).
 * A particle closer than h/2 to a face sees its own mirror image at 2d: the
 * image adds (1-q)^2 and (1-q)^3 to the densities (Eq. 1, 4) and the pair
 * displacement of Eq. 6, both visits counted as in the Jacobi form, pushes
 * the particle off the wall (the wall is static: it takes no share).  Only
 * repulsion: a negative pressure does not glue fluid to walls.  Without it
 * the box's faces are a vacuum to the relaxation, and particles pressed into
 * an edge or a corner by the bulk are clamped onto one point. */
static inline void wall_density(const fs_world *w, float x, float y, float z, float *rho, float *rhon) {
    const float p[3] = {x, y, z};
    const float lo[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
    const float hi[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
    for (int a = 0; a < 3; a++) {
        float q1 = 1.0f - 2.0f * (p[a] - lo[a]) * w->inv_h, q2 = 1.0f - 2.0f * (hi[a] - p[a]) * w->inv_h;
        if (q1 > 0) *rho += q1 * q1, *rhon += q1 * q1 * q1;
        if (q2 > 0) *rho += q2 * q2, *rhon += q2 * q2 * q2;
    }
}

static inline void wall_push(const fs_world *w, float x, float y, float z, float P, float PN, float *ax, float *ay,
                             float *az) {
    const float p[3] = {x, y, z};
    const float lo[3] = {w->dom.box_min.x, w->dom.box_min.y, w->dom.box_min.z};
    const float hi[3] = {w->dom.box_max.x, w->dom.box_max.y, w->dom.box_max.z};
    float d[3] = {0, 0, 0};
    P = P > 0 ? P : 0;
    for (int a = 0; a < 3; a++) {
        float q1 = 1.0f - 2.0f * (p[a] - lo[a]) * w->inv_h, q2 = 1.0f - 2.0f * (hi[a] - p[a]) * w->inv_h;
        if (q1 > 0) d[a] += P * q1 + PN * q1 * q1;
        if (q2 > 0) d[a] -= P * q2 + PN * q2 * q2;
    }
    *ax += d[0], *ay += d[1], *az += d[2];
}

/* clavet_springs.c: the springs stage (Alg. 4, then Alg. 3: every spring,
 * or only the plastic ones when the coloured sweeps project the elastic). */
void fs__clavet_springs(fs_world *w, step_ctx *c);
/* ... Algorithm 3 over the elastic springs alone: a coloured step whose
 * lists overflowed falls back to the Jacobi sweeps, which leave them. */
void fs__clavet_springs_elastic(fs_world *w, step_ctx *c);

/* clavet_jacobi.c: Alg. 1 lines 1-5 at the step's start (the Jacobi and
 * sequential forms): gravity and Alg. 5's impulses into the velocities. */
void fs__clavet_viscosity(fs_world *w, step_ctx *c);
/* ... Alg. 2's densities and pressures (and Eq. 21's heat rates) at the
 * current positions: pass 1 of a Jacobi iteration. */
void fs__clavet_density(fs_world *w, step_ctx *c);
/* ... one Jacobi iteration of Alg. 2: pass 1, then Eq. 6 as a gather. */
void fs__clavet_relax_jacobi(fs_world *w, step_ctx *c);

/* clavet_sequential.c: one iteration of Algorithm 2 as printed. */
void fs__clavet_relax_sequential(fs_world *w, step_ctx *c);

/* clavet_colour.c: the coloured sweeps' one scan a step (the lists, Alg.
 * 5's impulses applied to the prediction, Eq. 21's heat rates); false when
 * a particle's list overflowed (the step falls back to the Jacobi form). */
bool fs__clavet_lists(fs_world *w, step_ctx *c);
/* ... one Gauss-Seidel sweep of Alg. 2 over the blocks in eight colours,
 * then one of the elastic springs; odd sweeps run backwards. */
void fs__clavet_relax_colored(fs_world *w, step_ctx *c, int sweep);
void fs__clavet_springs_colored(fs_world *w, step_ctx *c, int sweep);

#endif
