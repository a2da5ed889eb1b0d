/* obstacles.c - static mesh obstacles: placing a mesh in the world and
 * sampling its signed distance field once (sdf.c), the world's calls that
 * add, remove and list them, and one particle's collision with them in a
 * step, which treats an obstacle as a static body of Clavet 2005 Sec. 6:
 * Eq. 9-11 (normal velocity cancelled, friction mu on the tangential) and
 * Eq. 12 (stickiness), then the extraction of Algorithm 6 line 15. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "body_math.h"
#include "obstacles.h"
#include "sim_util.h"
#include "solver_table.h"

/* Samples of the field per particle spacing (finest); a large obstacle's
 * cell grows until its grid holds FS_OBSTACLE_MAX_NODES, up to one spacing. */
#define SAMPLES_PER_SPACING 2.0f

static void obstacle_free(fs_obstacle *o) {
    free(o->verts), free(o->tris);
    fs__sdf_free(&o->sdf);
    memset(o, 0, sizeof *o);
}

void fs__obstacles_clear(fs_world *w) {
    for (int k = 0; k < w->nobstacles; k++) obstacle_free(&w->obstacles[k]);
    w->nobstacles = 0;
    w->obstacles_gen++;
}

/* Tells the solver (a solver whose boundary is made from the obstacles
 * rebuilds it). */
static fs_status changed(fs_world *w, fs_error *err) {
    w->obstacles_gen++;
    return w->ops && w->ops->obstacles_changed ? w->ops->obstacles_changed(w, err) : FS_OK;
}

static void remove_at(fs_world *w, int k) {
    obstacle_free(&w->obstacles[k]);
    memmove(&w->obstacles[k], &w->obstacles[k + 1], sizeof(fs_obstacle) * (size_t)(w->nobstacles - k - 1));
    w->nobstacles--;
    memset(&w->obstacles[w->nobstacles], 0, sizeof(fs_obstacle));
}

/* The placement's numbers, before anything is built. */
static fs_status check_placement(const fs_world *w, fs_vec3 pos, fs_quat rot, float scale, fs_error *err) {
    if (w->nobstacles >= FS_MAX_OBSTACLES) {
        SETERR(err, "obstacle: the world holds %d obstacles already (the most)", FS_MAX_OBSTACLES);
        return FS_ERR_FULL;
    }
    if (!fs__vec_finite(pos) || fabsf(pos.x) > FS_DOMAIN_MAX_COORD || fabsf(pos.y) > FS_DOMAIN_MAX_COORD ||
        fabsf(pos.z) > FS_DOMAIN_MAX_COORD) {
        SETERR(err, "obstacle: pos must be finite and within +-%g m", FS_DOMAIN_MAX_COORD);
        return FS_ERR_RANGE;
    }
    double ql = sqrt((double)rot.w * rot.w + (double)rot.x * rot.x + (double)rot.y * rot.y + (double)rot.z * rot.z);
    if (!isfinite(ql) || !(ql > 1e-6)) {
        SETERR(err, "obstacle: rot must be a finite, non-zero quaternion (w, x, y, z)");
        return FS_ERR_ARG;
    }
    if (!(scale >= FS_OBSTACLE_MIN_SCALE && scale <= FS_OBSTACLE_MAX_SCALE)) {
        SETERR(err, "obstacle: scale %g outside %g..%g", scale, FS_OBSTACLE_MIN_SCALE, FS_OBSTACLE_MAX_SCALE);
        return FS_ERR_RANGE;
    }
    return FS_OK;
}

/* The distance grid over the placed mesh's box grown by 2 h, clipped to the
 * domain's box grown as much: its origin, cell and samples. */
static fs_status plan_grid(const fs_world *w, fs_vec3 lo, fs_vec3 hi, fs_vec3 *origin, float *cell, int n[3],
                           fs_error *err) {
    const float m = 2.0f * w->h;
    const float a[3] = {fmaxf(lo.x, w->dom.box_min.x) - m, fmaxf(lo.y, w->dom.box_min.y) - m,
                        fmaxf(lo.z, w->dom.box_min.z) - m};
    const float b[3] = {fminf(hi.x, w->dom.box_max.x) + m, fminf(hi.y, w->dom.box_max.y) + m,
                        fminf(hi.z, w->dom.box_max.z) + m};
    if (!(a[0] < b[0] && a[1] < b[1] && a[2] < b[2])) {
        SETERR(err, "obstacle: the placed mesh lies wholly outside the domain's box");
        return FS_ERR_RANGE;
    }
    const float s = w->dom.spacing;
    float c = s / SAMPLES_PER_SPACING;
    for (;;) {
        double nodes = 1;
        for (int k = 0; k < 3; k++) {
            double q = ceil((b[k] - a[k]) / c) + 1;
            n[k] = q < 2 ? 2 : (int)fmin(q, 1e9);
            nodes *= n[k];
        }
        if (nodes <= FS_OBSTACLE_MAX_NODES) break;
        if (c >= s) {
            SETERR(err,
                   "obstacle: its distance grid would need %.3g samples at the particle spacing, above %d "
                   "(a smaller obstacle, or one clipped by a smaller domain)",
                   nodes, FS_OBSTACLE_MAX_NODES);
            return FS_ERR_RANGE;
        }
        c = fminf(s, c * 1.125f);
    }
    *origin = (fs_vec3){a[0], a[1], a[2]};
    *cell = c;
    return FS_OK;
}

/* The mesh copied and placed: x = pos + rot (scale x_mesh), checked again
 * (placing can take a vertex out of range or flatten a triangle). */
static fs_status place_mesh(fs_obstacle *o, const fs_mesh *mesh, fs_error *err) {
    o->nv = mesh->vertex_count, o->nt = mesh->triangle_count;
    o->verts = malloc(sizeof(fs_vec3) * (size_t)o->nv);
    o->tris = malloc(sizeof(uint32_t) * 3 * (size_t)o->nt);
    if (!o->verts || !o->tris) {
        SETERR(err, "obstacle: out of memory for %d triangles", o->nt);
        return FS_ERR_NOMEM;
    }
    memcpy(o->tris, mesh->triangles, sizeof(uint32_t) * 3 * (size_t)o->nt);
    for (int i = 0; i < o->nv; i++) o->verts[i] = add(o->pos, qrot(o->rot, mul(mesh->vertices[i], o->scale)));
    fs_mesh placed = {o->verts, o->nv, o->tris, o->nt};
    fs_error why = {{0}};
    fs_status st = fs_mesh_check(&placed, &why);
    if (st != FS_OK) {
        SETERR(err, "obstacle: placed, the %.120s", why.msg + (strncmp(why.msg, "mesh: ", 6) ? 0 : 6));
        return st;
    }
    o->lo = fs_mesh_bounds_min(&placed), o->hi = fs_mesh_bounds_max(&placed);
    return FS_OK;
}

int64_t fs_world_add_obstacle(fs_world *w, const fs_mesh *mesh, fs_vec3 pos, fs_quat rot, float scale, fs_error *err) {
    fs_status st = fs_mesh_check(mesh, err);
    if (st == FS_OK) st = check_placement(w, pos, rot, scale, err);
    if (st != FS_OK) return -1;
    fs_obstacle o = {.id = w->next_obstacle_id, .pos = pos, .rot = qnorm(rot), .scale = scale};
    fs_error why = {{0}};
    st = fs_mesh_check_closed(mesh, &why);
    if (st == FS_ERR_NOMEM) {
        SETERR(err, "obstacle: %.140s", why.msg);
        return -1;
    }
    o.closed = st == FS_OK;
    fs_vec3 origin;
    float cell;
    int n[3];
    st = place_mesh(&o, mesh, err);
    if (st == FS_OK) st = plan_grid(w, o.lo, o.hi, &origin, &cell, n, err);
    /* a shell is one spacing thick: particles keep R from either side */
    if (st == FS_OK)
        st = fs__sdf_build(&o.sdf, o.verts, o.tris, o.nt, o.closed, 0.5f * w->dom.spacing, origin, cell, n[0], n[1],
                           n[2], err);
    if (st != FS_OK) {
        obstacle_free(&o);
        return -1;
    }
    w->obstacles[w->nobstacles++] = o;
    if (changed(w, err) != FS_OK) { /* the solver could not take it: the world as it was */
        remove_at(w, w->nobstacles - 1);
        changed(w, NULL);
        return -1;
    }
    w->next_obstacle_id++;
    return o.id;
}

bool fs_world_remove_obstacle(fs_world *w, uint32_t id) {
    for (int k = 0; k < w->nobstacles; k++) {
        if (w->obstacles[k].id != id) continue;
        remove_at(w, k);
        changed(w, NULL); /* fewer walls need no more room */
        return true;
    }
    return false;
}

int fs_world_obstacle_count(const fs_world *w) {
    return w->nobstacles;
}

bool fs_world_obstacle_at(const fs_world *w, int index, fs_obstacle_state *out) {
    if (index < 0 || index >= w->nobstacles) return false;
    const fs_obstacle *o = &w->obstacles[index];
    *out = (fs_obstacle_state){.id = o->id,
                               .pos = o->pos,
                               .rot = o->rot,
                               .scale = o->scale,
                               .closed = o->closed,
                               .triangles = o->nt,
                               .vertices = o->nv,
                               .lo = o->lo,
                               .hi = o->hi,
                               .nodes = {o->sdf.ni, o->sdf.nj, o->sdf.nk},
                               .cell = o->sdf.cell};
    return true;
}

bool fs_world_obstacle_mesh(const fs_world *w, int index, fs_mesh *out) {
    if (index < 0 || index >= w->nobstacles) return false;
    const fs_obstacle *o = &w->obstacles[index];
    *out = (fs_mesh){o->verts, o->nv, o->tris, o->nt};
    return true;
}

/* Far from every obstacle */
#define FAR 1e30f

float fs_world_obstacle_distance(const fs_world *w, fs_vec3 p) {
    float best = FAR, phi, g[3];
    for (int k = 0; k < w->nobstacles; k++)
        if (fs__sdf_sample(&w->obstacles[k].sdf, p.x, p.y, p.z, &phi, g)) best = fminf(best, phi);
    return best;
}

/* Bisections of the entry, to 2^-ENTRY_BISECT of a sample interval. */
#define ENTRY_BISECT 10
/* The most samples along a step's path (a path longer than that many half
 * field cells is sampled more coarsely). */
#define ENTRY_SAMPLES 256

/* Where the path from a to b first comes within R of the obstacle's surface
 * (phi < R): samples half a field cell apart (off the grid: outside), then
 * bisection.  *t (in [0, 1)) is the last point found outside, 0 when a
 * touches already (0 <= phi < R); false when a's centre is inside or no
 * sample is within R. */
static bool entry_along(const fs_sdf *s, float R, const float a[3], const float b[3], float *t) {
    float phi, g[3];
    const bool on = fs__sdf_sample(s, a[0], a[1], a[2], &phi, g); /* off the grid: far outside */
    if (on && !(phi >= 0.0f)) return false;
    if (on && phi < R) {
        *t = 0;
        return true;
    }
    const float d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    const float len = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
    const int n = fs__floor_clamp(ceilf(len / (0.5f * s->cell)), 1, ENTRY_SAMPLES);
    float lo = 0, hi = -1;
    for (int k = 1; k <= n && hi < 0; k++) {
        const float u = (float)k / (float)n;
        if (fs__sdf_sample(s, a[0] + u * d[0], a[1] + u * d[1], a[2] + u * d[2], &phi, g) && phi < R)
            hi = u;
        else
            lo = u;
    }
    if (hi < 0) return false;
    for (int it = 0; it < ENTRY_BISECT; it++) {
        const float u = 0.5f * (lo + hi);
        if (fs__sdf_sample(s, a[0] + u * d[0], a[1] + u * d[1], a[2] + u * d[2], &phi, g) && phi < R)
            hi = u;
        else
            lo = u;
    }
    *t = lo;
    return true;
}

/* g's direction without the part that points out through a wall of the box
 * the centre x lies against (within R of where centres may be); false when
 * nothing is left. */
static bool in_box_dir(const fs_world *w, const float x[3], float R, const float g[3], float n[3]) {
    const float lo[3] = {w->lo.x, w->lo.y, w->lo.z}, hi[3] = {w->hi.x, w->hi.y, w->hi.z};
    float ml = 0;
    for (int a = 0; a < 3; a++) {
        n[a] = (g[a] < 0 && x[a] - lo[a] < R) || (g[a] > 0 && hi[a] - x[a] < R) ? 0.0f : g[a];
        ml += n[a] * n[a];
    }
    if (!(ml > 1e-8f)) return false;
    for (int a = 0; a < 3; a++) n[a] /= sqrtf(ml);
    return true;
}

/* obstacles.h */
bool fs__obstacle_normal_in_box(const fs_world *w, const fs_sdf *s, const float x[3], float R, float phi,
                                const float g[3], float n[3], float *depth, bool *lifted) {
    *depth = phi;
    if (lifted) *lifted = false;
    if (!(g[0] * g[0] + g[1] * g[1] + g[2] * g[2] > 1e-12f)) return false;
    if (in_box_dir(w, x, R, g, n)) return true;
    const float lo[3] = {w->lo.x, w->lo.y, w->lo.z}, hi[3] = {w->hi.x, w->hi.y, w->hi.z};
    float lift = fabsf(phi) + R;
    for (int k = 0; k < 4; k++, lift *= 2.0f) {
        float y[3], p2, g2[3];
        for (int a = 0; a < 3; a++) y[a] = x[a] + (x[a] - lo[a] < R ? lift : 0.0f) - (hi[a] - x[a] < R ? lift : 0.0f);
        if (!fs__sdf_sample(s, y[0], y[1], y[2], &p2, g2) || p2 >= 0) return false;
        if (in_box_dir(w, x, R, g2, n)) {
            *depth = p2;
            if (lifted) *lifted = true;
            return true;
        }
    }
    return false;
}

bool fs__obstacles_particle(const fs_world *w, float R, float mu, float stick_d, float stick_k, float dt, float x[3],
                            float v[3], float moved[3]) {
    bool touched = false;
    for (int k = 0; k < w->nobstacles; k++) {
        const fs_sdf *s = &w->obstacles[k].sdf;
        float phi = 0, g[3] = {0, 0, 0};
        /* A step can carry a particle several field cells (Clavet's step of a
         * tick: 7.7 cm at 4.6 m/s, half of SPHERIC's box), and the field at
         * its end can point out of a far face: through the obstacle, or out
         * of a face resting on the floor, from where the box's wall puts it
         * back inside.  A centre that ends inside (once the walls have put
         * it in the box) after starting outside this step meets the face its
         * path (x - v dt to there) crossed: Eq. 9-11 act with the normal
         * where the path came within R, and the extraction below takes what
         * is left.  A centre that ends within R but outside keeps the normal
         * at its end (it may be sliding over an edge onto the next face). */
        float t, xc[3], pc, gc[3];
        const float x0[3] = {x[0] - v[0] * dt, x[1] - v[1] * dt, x[2] - v[2] * dt};
        const float lo[3] = {w->lo.x, w->lo.y, w->lo.z}, hi[3] = {w->hi.x, w->hi.y, w->hi.z};
        for (int q = 0; q < 3; q++) xc[q] = fminf(fmaxf(x[q], lo[q]), hi[q]); /* where the box's walls will put it */
        bool entered = false;
        const bool on = fs__sdf_sample(s, x[0], x[1], x[2], &phi, g);
        const float d = on ? phi - R : INFINITY;                           /* distance of the particle's surface */
        const bool same = xc[0] == x[0] && xc[1] == x[1] && xc[2] == x[2]; /* in the box already: one sample */
        const bool con = same ? on : fs__sdf_sample(s, xc[0], xc[1], xc[2], &pc, gc);
        if (same) pc = phi;
        if (con && pc < 0 && entry_along(s, R, x0, xc, &t)) {
            const float xe[3] = {x0[0] + t * (xc[0] - x0[0]), x0[1] + t * (xc[1] - x0[1]), x0[2] + t * (xc[2] - x0[2])};
            float ge[3], pe, ne[3];
            if (fs__sdf_sample(s, xe[0], xe[1], xe[2], &pe, ge)) {
                float de;
                if (fs__obstacle_normal_in_box(w, s, xe, R, pe, ge, ne, &de, NULL)) {
                    const float vn = v[0] * ne[0] + v[1] * ne[1] + v[2] * ne[2];
                    for (int q = 0; q < 3; q++) {
                        const float dv = vn < 0 ? -(vn * ne[q] + mu * (v[q] - vn * ne[q])) : 0.0f;
                        v[q] += dv, x[q] += dv * dt;
                    }
                    entered = touched = true;
                }
            }
        }
        if (!entered) {
            if (d >= stick_d && d >= 0.0f) continue; /* far (or off the grid) */
            float n[3], dn;
            if (!fs__obstacle_normal_in_box(w, s, x, R, phi, g, n, &dn, NULL))
                continue; /* no way out (a ridge of the field): the next step's */
            const float vn = v[0] * n[0] + v[1] * n[1] + v[2] * n[2];
            float dv[3] = {0, 0, 0};
            if (d < 0 && vn < 0) {
                /* Eq. 9-11: cancel the approaching normal velocity, remove mu of the tangential */
                for (int a = 0; a < 3; a++) dv[a] = -(vn * n[a] + mu * (v[a] - vn * n[a]));
            }
            if (d > 0 && stick_k > 0 && d < stick_d) {
                /* Eq. 12: attraction towards the surface, largest at stick_d / 2 */
                const float I = dt * stick_k * d * (1.0f - d / stick_d);
                for (int a = 0; a < 3; a++) dv[a] -= I * n[a];
            }
            for (int a = 0; a < 3; a++) v[a] += dv[a], x[a] += dv[a] * dt;
            touched = true;
        }
        /* Alg. 6 line 15: extract what is still inside, along the normal there */
        float n[3], dep;
        bool lifted;
        if (fs__sdf_sample(s, x[0], x[1], x[2], &phi, g) && phi < R &&
            fs__obstacle_normal_in_box(w, s, x, R, phi, g, n, &dep, &lifted)) {
            /* along the field's normal, as far as reaches R; against a wall,
             * along the wall, as far as reaches R past the face found */
            float far = R - dep;
            if (!lifted) {
                const float l = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
                far /= fmaxf((n[0] * g[0] + n[1] * g[1] + n[2] * g[2]) / l, 0.25f);
            }
            for (int a = 0; a < 3; a++) {
                const float e = n[a] * far;
                x[a] += e, moved[a] += e;
            }
        }
    }
    return touched;
}
