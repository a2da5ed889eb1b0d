/* clavet_colour.c - the Clavet solver's coloured sweeps
 * (FS_RELAX_COLORED, the default): the one scan a step that stores every
 * sweep's neighbour lists and sums Alg. 5's impulses, Algorithm 2 as a
 * Gauss-Seidel sweep over blocks of cells in eight colours (position-based
 * fluids' Newton step on the compressed side, the walls as mirror images of
 * the neighbourhood), and the elastic springs as distance constraints in
 * the same sweeps. */
#include "clavet_internal.h"

/* list_task packs the lists of each chunk of LIST_CHUNK particles one after
 * the other, from the place of the chunk's first particle in w->nb (which
 * has room for FS_NB_MAX a particle).  A pass then touches only the entries
 * it uses, where the fixed stride left most of each 4 KiB page unused (the
 * list pass's share of samples fell from 0.73 to 0.59 of the scan's).  An
 * offset stays at most i FS_NB_MAX, within 32 bits at the largest capacity. */
#define LIST_CHUNK 64

/* The coloured sweeps' one scan a step, at the predicted positions: i's list
 * for every sweep, Alg. 5's impulses into nv (then visc_apply_task) and Eq.
 * 21's heat rate.  Over the chunks [qb, qe) of LIST_CHUNK particles. */
FS_SIMD_CLONES static void list_task(int qb, int qe, int worker, void *vctx) {
    step_ctx *c = vctx;
    fs_world *w = c->w;
    const fs_particles *p = &w->p;
    fs_scratch sc = fs__scratch_of(w, worker);
    fs_ranges r = {.cell = -1, .cyz = -1};
    const int b = qb * LIST_CHUNK, e = qe * LIST_CHUNK < w->n ? qe * LIST_CHUNK : w->n;
    size_t at = (size_t)b * FS_NB_MAX;
    for (int i = b; i < e; i++) {
        if (i % LIST_CHUNK == 0) at = (size_t)i * FS_NB_MAX;
        fs__ranges_of(w, w->cell[i], &r);
        const int n = fs__scan(p->x, p->y, p->z, &r, i, c->h2, true, sc.j, sc.r2, sc.dx, sc.dy, sc.dz);
        c->s->nb_off[i] = (int32_t)at;
        store_list_at(w, i, sc.j, n, at);
        if (n <= FS_NB_MAX) at += (size_t)pad8(n);
        /* padded with i at zero offset: no direction, no impulse, and XSPH's
         * v_i - v_i = 0 (the scratch has FS_SCR_PAD entries of room) */
        const int n8 = pad8(n);
        for (int k = n; k < n8; k++) sc.j[k] = i, sc.dx[k] = sc.dy[k] = sc.dz[k] = 0.0f;
        float ax, ay, az;
        if (c->uni)
            visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n8, true, &ax, &ay, &az);
        else
            visc_sum(c, i, sc.j, sc.dx, sc.dy, sc.dz, n8, false, &ax, &ay, &az);
        w->nvx[i] = p->vx[i] + ax, w->nvy[i] = p->vy[i] + ay, w->nvz[i] = p->vz[i] + az;
        if (c->m.heat) w->dT[i] = heat_sum(c, i, sc.j, sc.r2, n);
    }
}

/* The coloured order (clavet.c's header): the prediction moves by dt times
 * the impulses list_task summed into nv, as line 7 would have moved it.
 * Alg. 5 thus reads its pairs at x + dt v instead of x, and the step needs
 * one grid build and one neighbour scan, not two (docs/clavet-notes.md,
 * "The step"). */
static void visc_apply_task(int b, int e, int worker, void *vctx) {
    (void)worker;
    step_ctx *c = vctx;
    fs_world *w = c->w;
    fs_particles *p = &w->p;
    const float dt = c->dt;
    for (int i = b; i < e; i++) {
        p->x[i] += dt * (w->nvx[i] - p->vx[i]);
        p->y[i] += dt * (w->nvy[i] - p->vy[i]);
        p->z[i] += dt * (w->nvz[i] - p->vz[i]);
    }
}

bool fs__clavet_lists(fs_world *w, step_ctx *c) {
    fs__run_all(w, list_task, c, (w->n + LIST_CHUNK - 1) / LIST_CHUNK);
    fs__run(w, visc_apply_task, c, w->n);
    swap_velocities(w);
    bool ok = true;
    for (int i = 0; i < w->n && ok; i++) ok = w->nb_n[i] >= 0;
    return ok;
}

/* ---- Algorithm 2 as a coloured Gauss-Seidel sweep (FS_RELAX_COLORED) -----
 * The grid's cells (h/2) are grouped in blocks of 4 x 4 x 4 cells (2h), and
 * the blocks in eight colours by the parity of their block coordinates.  A
 * particle's constraint reads and moves only the particles of its neighbour
 * list (within h at this step's list build), so two particles in different
 * blocks of one colour (a whole block, 2h, apart) touch disjoint sets: the
 * blocks of a colour run in parallel, each visiting its particles in index
 * order, and the result is the same for any thread count.
 *
 * Per particle, Algorithm 2 lines 2-21 on the fixed list, with one change to
 * line 11: a compressed particle (rho > rho0) takes the pressure that makes
 * its displacements the Newton step of the constraint C_i = rho_i - rho0,
 * linearised, every particle of unit mass: the position-based fluids step
 * (Macklin & Mueller 2013, "Position Based Fluids", Eq. 9-11, with Eq. 1's
 * kernel).  Eq. 6's displacement of j is D/2 = P (1-q)/2 r^_ij =
 * -(h/4) P grad_j rho_i and line 20's of i is -(h/4) P grad_i rho_i, so
 * Algorithm 2 is a gradient step on C_i of length (h/4) P; with
 * grad_j rho_i = -(2/h)(1-q) r^_ij the Newton step C_i / sum_k |grad_k C_i|^2 is
 *     P_i = omega h (rho_i - rho0) / (sum_j (1-q)^2 + |sum_j (1-q) r^_ij|^2).
 * One sweep is then successive over-relaxation on the linearised system
 * A lambda = C with A = J J^T symmetric positive semi-definite, which
 * converges for any 0 < omega < 2 (Ostrowski-Reich); omega is the material's
 * stiffness over its preset 0.01, kept at most COLOR_OMEGA_MAX.  The
 * stretched side (rho < rho0: Clavet's cohesion and surface tension) and the
 * near-pressure (Eq. 5) keep the paper's per-step k and k_near, split over
 * the sweeps, so a material's cohesion does not depend on the sweep count.
 * The box's walls are position constraints inside the sweep (a particle moved
 * past one is put back on it at once, as position-based dynamics projects
 * collisions in its loop).  docs/clavet-notes.md keeps the measurements. */
#define COLOR_OMEGA_MAX 1.5f
#ifndef COLOR_P_MAX
#define COLOR_P_MAX 0.5f
#endif
#define COLOR_BLOCK 4 /* cells (h/2) per block side: 2h */

/* One pass over the blocks of sb cells in the eight colours (run_colors):
 * the colour running, and how many of its blocks lie along x and y. */
typedef struct color_pass {
    int sb;        /* block side in cells */
    bool backward; /* odd sweeps visit the colours and particles in reverse */
    int color, nbx, nby;
} color_pass;

/* Runs task over the blocks of each colour in turn (in reverse when
 * cp->backward), the blocks of a colour in parallel; ctx holds cp. */
static void run_colors(fs_world *w, color_pass *cp, fs_task_fn *task, void *ctx) {
    const int NBX = (w->gx + cp->sb - 1) / cp->sb, NBY = (w->gy + cp->sb - 1) / cp->sb,
              NBZ = (w->gz + cp->sb - 1) / cp->sb;
    for (int k = 0; k < 8; k++) {
        const int color = cp->backward ? 7 - k : k;
        const int ox = color & 1, oy = (color >> 1) & 1, oz = (color >> 2) & 1;
        cp->color = color;
        cp->nbx = (NBX - ox + 1) / 2, cp->nby = (NBY - oy + 1) / 2;
        const int count = cp->nbx * cp->nby * ((NBZ - oz + 1) / 2);
        /* blocks hold many particles each: parallel from two blocks on (fs__run
         * waits for 512 items) */
        if (count > 1 && w->def.parallel_for && w->def.worker_count > 1)
            w->def.parallel_for(task, ctx, count, w->def.task_user);
        else if (count > 0)
            task(0, count, 0, ctx);
    }
}

/* Block coordinates of the t-th block of the running colour. */
static inline void block_at(const color_pass *cp, int t, int *bx, int *by, int *bz) {
    *bx = 2 * (t % cp->nbx) + (cp->color & 1);
    *by = 2 * ((t / cp->nbx) % cp->nby) + ((cp->color >> 1) & 1);
    *bz = 2 * (t / (cp->nbx * cp->nby)) + ((cp->color >> 2) & 1);
}

typedef struct gs_ctx {
    step_ctx *c;
    color_pass cp;
    int nbx_all, nby_all, nbz_all; /* blocks along each axis, all colours */
    float inv_iters;
    float omega[FS_MAX_MATERIALS];
} gs_ctx;

/* Two independent selects, which compile to maxss and minss (no branch). */
static inline float clampf(float v, float a, float b) {
    v = a > v ? a : v;
    return v > b ? b : v;
}

/* Walls as mirror images for the coloured sweeps (an extension; the paper
 * has only collisions), after the ghost particles of SPH (Libersky et al.
 * 1993; Randles & Libersky 1996).  The box's faces lie a particle radius
 * (off/2) beyond the planes lo, hi that hold the particles' centres.  A
 * particle at distance D from such a plane sees, across the face, its own
 * image (2D + off away) and the image of every neighbour j (D + off + D_j
 * away along the normal, the same offset along the face): a block laid out
 * on the wall continues past it as a lattice, and a particle on the wall has
 * a whole neighbourhood, half of it mirrored.  One face at a time: no second
 * images at edges and corners.  The single self-image of wall_density left
 * the wall layer half a neighbourhood short: Clavet's cohesion packed it 1.6
 * times as dense as a lattice layer, and the dam break's column drained too
 * slowly (27% over Martin & Moyce's residual height; with the images and
 * XSPH 8.4%; docs/clavet-notes.md, "Walls").
 *
 * Adds the images' (1-q)^2 and (1-q)^3 to rho and rhon, and sums q u and
 * q^2 u (u from i to the image) in g1 and g2. */
static inline void wall_images(const float *restrict U[3], const float *restrict Q, int n, float xi, float yi, float zi,
                               fs_vec3 lo, fs_vec3 hi, float h, float inv_h, float off, float *rho, float *rhon,
                               float g1[3], float g2[3]) {
    const float p[3] = {xi, yi, zi}, L[3] = {lo.x, lo.y, lo.z}, H[3] = {hi.x, hi.y, hi.z}, h2 = h * h;
    for (int a = 0; a < 3; a++)
        for (int side = 0; side < 2; side++) {
            /* D: i's distance to the plane of centres; the face lies off/2
             * beyond it, so i's image is 2D + off away and a neighbour j's
             * D + off + D_j */
            const float D = side ? H[a] - p[a] : p[a] - L[a];
            if (D + off >= h) continue;
            /* s: the images lie towards -s (the face's inward normal is s) */
            const float s = side ? -1.0f : 1.0f;
            const float *UN = U[a], *UT = U[(a + 1) % 3], *UU = U[(a + 2) % 3];
            float r_sum = 0, rn_sum = 0, gn = 0, gt = 0, gu = 0, hn = 0, ht = 0, hu = 0;
            if (D + D + off < h) { /* i's own image */
                const float q = 1.0f - (D + D + off) * inv_h;
                r_sum += q * q, rn_sum += q * q * q, gn -= q, hn -= q * q;
            }
            /* from the pair's unit vector u and q (the sweep's scratch): the
             * neighbour's offset r u, r = h (1 - q); its image keeps the
             * tangential part and has the normal part D + off + D_j, with
             * D_j = D + s r u_a; a pair out of range (q = 0) has its image
             * farther still */
#pragma omp simd reduction(+ : r_sum, rn_sum, gn, gt, gu, hn, ht, hu)
            for (int k = 0; k < n; k++) {
                const float r = h * (1.0f - Q[k]);
                const float dn = D + D + off + s * r * UN[k], dt = r * UT[k], du = r * UU[k];
                const float r2 = dn * dn + dt * dt + du * du;
                const float ri = sqrtf(r2);
                const bool in = Q[k] > 0.0f && r2 < h2;
                const float q = in ? 1.0f - ri * inv_h : 0.0f, inv = in ? 1.0f / ri : 0.0f;
                r_sum += q * q, rn_sum += q * q * q;
                gn -= q * dn * inv, gt += q * dt * inv, gu += q * du * inv;
                hn -= q * q * dn * inv, ht += q * q * dt * inv, hu += q * q * du * inv;
            }
            *rho += r_sum, *rhon += rn_sum;
            g1[a] += s * gn, g1[(a + 1) % 3] += gt, g1[(a + 2) % 3] += gu;
            g2[a] += s * hn, g2[(a + 1) % 3] += ht, g2[(a + 2) % 3] += hu;
        }
}

/* Algorithm 2 lines 2-21 for particle i over its list (sq, su*: scratch). */
static inline __attribute__((always_inline)) void gs_particle(fs_world *w, const gs_ctx *g, int i, bool walls,
                                                              float *restrict sux, float *restrict suy,
                                                              float *restrict suz, float *restrict sq) {
    const step_ctx *c = g->c;
    fs_particles *p = &w->p;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const int32_t *J = w->nb + c->s->nb_off[i];
    const int n = w->nb_n[i];
    const float xi = X[i], yi = Y[i], zi = Z[i], inv_h = c->inv_h, h2 = c->h2;
    const fs_vec3 lo = w->lo, hi = w->hi;
    float rho = 0, rhon = 0, gx = 0, gy = 0, gz = 0;
    int coincident = 0;
    /* lines 4-9 (Eq. 1, 4), and sum_j (1-q) r^_ij for the Newton step; a
     * pair that left h during this step's sweeps drops out (q = 0) */
    const int n8 = pad8(n);
#pragma omp simd reduction(+ : rho, rhon, gx, gy, gz, coincident)
    for (int k = 0; k < n8; k++) {
        const int j = J[k];
        const float dx = X[j] - xi, dy = Y[j] - yi, dz = Z[j] - zi;
        const float r2 = dx * dx + dy * dy + dz * dz;
        const float rr = sqrtf(r2);
        const bool real = k < n; /* the padding is i itself: nothing */
        const float q = real && r2 < h2 ? 1.0f - rr * inv_h : 0.0f;
        const float inv = rr >= 1e-9f ? 1.0f / rr : 0.0f;
        coincident += real && rr < 1e-9f;
        const float ux = dx * inv, uy = dy * inv, uz = dz * inv;
        sux[k] = ux, suy[k] = uy, suz[k] = uz, sq[k] = q;
        rho += q * q, rhon += q * q * q;
        gx += q * ux, gy += q * uy, gz += q * uz;
    }
    if (coincident) /* rare: pairs at one point act along a direction drawn from their ids */
        for (int k = 0; k < n; k++) {
            if (sux[k] != 0.0f || suy[k] != 0.0f || suz[k] != 0.0f || sq[k] <= 0.0f) continue;
            fs__coincident_dir(p, i, J[k], 21, &sux[k], &suy[k], &suz[k]);
            gx += sq[k] * sux[k], gy += sq[k] * suy[k], gz += sq[k] * suz[k];
        }
    const float rho_pairs = rho;
    float g1[3] = {0, 0, 0}, g2[3] = {0, 0, 0};
    if (walls) {
        const float *Us[3] = {sux, suy, suz};
        wall_images(Us, sq, n8, xi, yi, zi, lo, hi, c->h, inv_h, 2.0f * w->dom.particle_radius, &rho, &rhon, g1, g2);
        gx += g1[0], gy += g1[1], gz += g1[2];
    }
    /* lines 11-12 */
    const int m = p->mat[i];
    const float C = rho - c->m.rho0[m];
    float P = C > 0.0f ? g->omega[m] * c->h * C / (rho_pairs + gx * gx + gy * gy + gz * gz + 1e-3f)
                       : g->inv_iters * c->m.k[m] * C;
    P = P < COLOR_P_MAX * c->h ? P : COLOR_P_MAX * c->h;
    const float PN = g->inv_iters * c->m.kn[m] * rhon;
    /* lines 14-21: the neighbours move at once, i after its loop */
    float ax = 0, ay = 0, az = 0;
#pragma omp simd reduction(+ : ax, ay, az)
    for (int k = 0; k < n8; k++) {
        const float q = sq[k];
        const float D = 0.5f * (P * q + PN * q * q);
        const float ex = D * sux[k], ey = D * suy[k], ez = D * suz[k];
        sux[k] = ex, suy[k] = ey, suz[k] = ez;
        ax -= ex, ay -= ey, az -= ez;
    }
    for (int k = 0; k < n; k++) {
        const int j = J[k];
        if (walls) {
            X[j] = clampf(X[j] + sux[k], lo.x, hi.x);
            Y[j] = clampf(Y[j] + suy[k], lo.y, hi.y);
            Z[j] = clampf(Z[j] + suz[k], lo.z, hi.z);
        } else {
            X[j] += sux[k], Y[j] += suy[k], Z[j] += suz[k];
        }
    }
    /* the images' share: half of each pair's displacement, as a real
     * neighbour's visit gives i (the other half moves the neighbour when it
     * meets i's image); only repulsion, so walls do not glue */
    {
        const float Pg = P > 0.0f ? 0.5f * P : 0.0f, PNg = 0.5f * PN;
        ax -= Pg * g1[0] + PNg * g2[0], ay -= Pg * g1[1] + PNg * g2[1], az -= Pg * g1[2] + PNg * g2[2];
    }
    X[i] = clampf(xi + ax, lo.x, hi.x), Y[i] = clampf(yi + ay, lo.y, hi.y), Z[i] = clampf(zi + az, lo.z, hi.z);
}

/* Asks for the lines of particle i's list a few particles ahead
 * of the sweep: a sweep visits the particles block by block, not in the
 * lists' order, and the first load of a list took a quarter of the sweep's
 * samples without it. */
#define GS_AHEAD 2
static inline void prefetch_nb(const fs_world *w, int i) {
    const clavet_state *st = w->solver_state;
    const char *l = (const char *)(w->nb + st->nb_off[i]);
    for (int k = 0; k < 4 * w->nb_n[i]; k += 64) __builtin_prefetch(l + k);
}

/* gs_particle compiled once for each case, so that every particle is
 * relaxed by the same machine code wherever gs_task visits it: inlined at
 * several call sites, the vectoriser may sum a loop in another order at
 * each, and the result would depend on which site (here: which of the two
 * interleaved blocks) a thread's split put the particle in. */
FS_SIMD_CLONES static __attribute__((noinline)) void gs_particle_walls(fs_world *w, const gs_ctx *g, int i,
                                                                       float (*s)[FS_NB_MAX]) {
    gs_particle(w, g, i, true, s[0], s[1], s[2], s[3]);
}
FS_SIMD_CLONES static __attribute__((noinline)) void gs_particle_inner(fs_world *w, const gs_ctx *g, int i,
                                                                       float (*s)[FS_NB_MAX]) {
    gs_particle(w, g, i, false, s[0], s[1], s[2], s[3]);
}

/* The particles of the running colour's t-th block (of cp->sb cells a side)
 * in the order a sweep visits them: rows of cells in turn, each row's
 * particles reversed when backward.  Into o; returns how many. */
static int block_order(const fs_world *w, const color_pass *cp, int t, int32_t *o) {
    const int SB = cp->sb;
    int bx, by, bz, m = 0;
    block_at(cp, t, &bx, &by, &bz);
    const int x0 = bx * SB, x1 = x0 + SB < w->gx ? x0 + SB : w->gx;
    for (int cz = bz * SB; cz < bz * SB + SB && cz < w->gz; cz++)
        for (int cy = by * SB; cy < by * SB + SB && cy < w->gy; cy++) {
            const int row = (cz * w->gy + cy) * w->gx;
            const int i0 = w->cell_start[row + x0], i1 = w->cell_start[row + x1];
            if (cp->backward)
                for (int i = i1 - 1; i >= i0; i--) o[m++] = i;
            else
                for (int i = i0; i < i1; i++) o[m++] = i;
        }
    return m;
}

/* Whether the running colour's t-th block lies within a block (2h) of a face;
 * otherwise its particles' neighbours lie over h inside, and no share, under
 * h, takes one past a wall. */
static bool block_walls(const gs_ctx *g, int t) {
    int bx, by, bz;
    block_at(&g->cp, t, &bx, &by, &bz);
    return bx < 1 || by < 1 || bz < 1 || bx + 2 >= g->nbx_all || by + 2 >= g->nby_all || bz + 2 >= g->nbz_all;
}

/* Two blocks of one colour at a time, a particle of each in turn.  Within a
 * block each particle reads the positions the one before it wrote (the
 * Gauss-Seidel chain: the gather's loads wait for the last scatter's
 * stores); the two blocks share no particle, so the core runs one block's
 * particle while the other's stores drain.  The order within each block is
 * unchanged, and so are the results, bit for bit. */
static void gs_task(int b, int e, int worker, void *vctx) {
    const gs_ctx *g = vctx;
    fs_world *w = g->c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    float sa[4][FS_NB_MAX] __attribute__((aligned(32))), sb[4][FS_NB_MAX] __attribute__((aligned(32)));
    for (int t = b; t < e; t += 2) {
        const bool wa = block_walls(g, t), wb = t + 1 < e && block_walls(g, t + 1);
        const int32_t *A = sc.j;
        const int na = block_order(w, &g->cp, t, sc.j);
        const int32_t *B = sc.j + na;
        const int nb = t + 1 < e ? block_order(w, &g->cp, t + 1, sc.j + na) : 0;
        for (int k = 0; k < na || k < nb; k++) {
            if (k < na) {
                if (k + GS_AHEAD < na) prefetch_nb(w, A[k + GS_AHEAD]);
                (wa ? gs_particle_walls : gs_particle_inner)(w, g, A[k], sa);
            }
            if (k < nb) {
                if (k + GS_AHEAD < nb) prefetch_nb(w, B[k + GS_AHEAD]);
                (wb ? gs_particle_walls : gs_particle_inner)(w, g, B[k], sb);
            }
        }
    }
}

/* One sweep: the eight colours in turn; odd sweeps run backwards (colours and
 * particles), so two sweeps are a symmetric Gauss-Seidel pass. */
void fs__clavet_relax_colored(fs_world *w, step_ctx *c, int sweep) {
    gs_ctx g = {.c = c,
                .cp = {.sb = COLOR_BLOCK, .backward = sweep & 1},
                .inv_iters = 1.0f / (float)w->def.clavet.relax_iterations};
    for (int m = 0; m < w->nmat; m++) {
        float o = w->mat[m].p[FS_P_STIFFNESS] / 0.01f;
        g.omega[m] = o < COLOR_OMEGA_MAX ? o : COLOR_OMEGA_MAX;
    }
    g.nbx_all = (w->gx + COLOR_BLOCK - 1) / COLOR_BLOCK, g.nby_all = (w->gy + COLOR_BLOCK - 1) / COLOR_BLOCK,
    g.nbz_all = (w->gz + COLOR_BLOCK - 1) / COLOR_BLOCK;
    run_colors(w, &g.cp, gs_task, &g);
}

/* ---- elastic springs as distance constraints inside the sweeps ----------
 * Algorithm 3 moves both ends of a spring by dt^2 k_spring (1 - L/h)(L - r)/2
 * once per step, a Jacobi pass; it cannot be made much stiffer (the sum over
 * a particle's ~32 springs overshoots), and a jelly that soft cannot hold
 * its own weight: an 8-layer block slumps to 45% of its height at the
 * default tick.  With FS_RELAX_COLORED the springs of materials that never
 * yield (no Eq. 8 plasticity, fully solid: jelly, ice) are instead position
 * constraints projected in every sweep, Gauss-Seidel, as position-based
 * dynamics projects distance constraints (Mueller, Heidelberger, Hennix,
 * Ratcliff 2007, "Position based dynamics", Sec. 3.3, Eq. 10-11: both ends,
 * of unit mass, move by (r - L)/2 along r^_ij, times a stiffness k in
 * [0, 1]).  k keeps Algorithm 3's law, k = SPRING_GAIN k_spring (1 - L/h),
 * at most 1, and is spread over the sweeps as Sec. 3.3 does (1 - (1 - k)^(1/n)
 * per sweep), so the jelly is the same at any sweep count.
 *
 * Plastic springs (goo, clay, a melting jelly) keep Algorithm 3's pass: Eq.
 * 8 yields on the stretch the springs leave, and projected springs leave so
 * little that clay squeezed by a push springs back (it came back to 101% of
 * its width; docs/clavet-notes.md).
 *
 * Parallel form: blocks of SB cells in eight colours, SB chosen each step so
 * that a block side exceeds twice the longest elastic spring (the break
 * length, measured at the predicted positions the grid was built on): the
 * particles one block's springs move lie within one break length of it, so
 * two blocks of one colour (a block apart) move disjoint sets.  Each spring
 * is projected once per sweep, from its end with the lower slot, and moves
 * both ends by equal and opposite amounts along r_ij (linear and angular
 * momentum are kept, except where a wall clamps one end, as in the density
 * sweep).  The result does not depend on the thread count. */
#ifndef SPRING_GAIN
#define SPRING_GAIN 16.0f
#endif

typedef struct spring_sweep_ctx {
    step_ctx *c;
    color_pass cp;
    float gain, inv_iters;
} spring_sweep_ctx;

static inline void spring_project(fs_world *w, const spring_sweep_ctx *g, int i) {
    const step_ctx *c = g->c;
    fs_particles *p = &w->p;
    const int s = p->slot[i], n = w->spr_n[s];
    if (n == 0) return;
    float *X = p->x, *Y = p->y, *Z = p->z;
    const int32_t *J = w->spr_j + (size_t)s * w->K;
    const float *L = w->spr_L + (size_t)s * w->K;
    const fs_vec3 lo = w->lo, hi = w->hi;
    const float ksi = c->m.ks[p->mat[i]];
    for (int k = 0; k < n; k++) {
        if (J[k] < s) continue; /* once per pair: from the lower slot */
        const int j = w->slot_index[J[k]];
        if (!spring_elastic(c, w, i, j)) continue; /* Algorithm 3 moved it before the sweeps */
        const float dx = X[j] - X[i], dy = Y[j] - Y[i], dz = Z[j] - Z[i];
        const float rr = sqrtf(dx * dx + dy * dy + dz * dz);
        if (rr < 1e-9f) continue; /* no direction; the density constraint separates them */
        float f = g->gain * 0.5f * (ksi + c->m.ks[p->mat[j]]) * (1.0f - L[k] * c->inv_h);
        /* the stiffness per sweep that compounds to f over the step's sweeps
         * (Mueller et al. 2007, Sec. 3.3): the same jelly at any sweep count */
        f = f < 1.0f ? 1.0f - powf(1.0f - f, g->inv_iters) : 1.0f;
        const float D = 0.5f * f * (rr - L[k]) / rr;
        X[i] = clampf(X[i] + D * dx, lo.x, hi.x), Y[i] = clampf(Y[i] + D * dy, lo.y, hi.y);
        Z[i] = clampf(Z[i] + D * dz, lo.z, hi.z);
        X[j] = clampf(X[j] - D * dx, lo.x, hi.x), Y[j] = clampf(Y[j] - D * dy, lo.y, hi.y);
        Z[j] = clampf(Z[j] - D * dz, lo.z, hi.z);
    }
}

static void spring_sweep_task(int b, int e, int worker, void *vctx) {
    const spring_sweep_ctx *g = vctx;
    fs_world *w = g->c->w;
    fs_scratch sc = fs__scratch_of(w, worker);
    for (int t = b; t < e; t++) {
        const int m = block_order(w, &g->cp, t, sc.j);
        for (int k = 0; k < m; k++) spring_project(w, g, sc.j[k]);
    }
}

/* One Gauss-Seidel sweep over every spring; odd sweeps run backwards. */
void fs__clavet_springs_colored(fs_world *w, step_ctx *c, int sweep) {
    float brk = 0;
    for (int m = 0; m < w->nmat; m++) /* the longest a spring between two elastic materials gets */
        if (c->m.alpha[m] == 0.0f && c->m.brk[m] > brk) brk = c->m.brk[m];
    spring_sweep_ctx g = {.c = c,
                          .cp = {.sb = (int)(2.0f * brk * w->inv_cs) + 1, .backward = sweep & 1},
                          .gain = SPRING_GAIN,
                          .inv_iters = 1.0f / (float)w->def.clavet.relax_iterations};
    run_colors(w, &g.cp, spring_sweep_task, &g);
}
