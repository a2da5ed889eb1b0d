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

bool fs__obstacles_particle(const fs_world *w, float R, float mu, float stick_d, float stick_k, float dt, float x[3],
                            float v[3], float moved[3]) {
    bool touched = false;
    for (int k = 0; k < w->nobstacles; k++) {
        const fs_sdf *s = &w->obstacles[k].sdf;
        float phi, g[3];
        if (!fs__sdf_sample(s, x[0], x[1], x[2], &phi, g)) continue;
        const float d = phi - R; /* distance of the particle's surface */
        if (d >= stick_d && d >= 0.0f) continue;
        const float gl = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        if (!(gl > 1e-6f)) continue; /* no direction out (a ridge of the field): left to the next step */
        const float n[3] = {g[0] / gl, g[1] / gl, g[2] / gl};
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
        /* Alg. 6 line 15: extract what is still inside, along the normal there */
        if (fs__sdf_sample(s, x[0], x[1], x[2], &phi, g) && phi < R) {
            const float l = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
            if (l > 1e-6f)
                for (int a = 0; a < 3; a++) {
                    const float e = g[a] / l * (R - phi);
                    x[a] += e, moved[a] += e;
                }
        }
    }
    return touched;
}
