/* apply_obstacles.c - the mesh obstacle commands (see apply_obstacles.h):
 * the stored mesh is read under a reference, placed (or fitted into the
 * domain's box) and handed to the core, which copies what it keeps. */
#include "apply_obstacles.h"

#include <math.h>
#include <stdlib.h>

#include "apply_mesh.h"
#include "hub.h"
#include "publish.h"

/* v rotated by the unit quaternion q (w, x, y, z). */
static fs_vec3 rotate(fs_quat q, fs_vec3 v) {
    /* t = 2 (q.xyz x v); v' = v + w t + q.xyz x t */
    float tx = 2 * (q.y * v.z - q.z * v.y), ty = 2 * (q.z * v.x - q.x * v.z), tz = 2 * (q.x * v.y - q.y * v.x);
    return (fs_vec3){v.x + q.w * tx + (q.y * tz - q.z * ty), v.y + q.w * ty + (q.z * tx - q.x * tz),
                     v.z + q.w * tz + (q.x * ty - q.y * tx)};
}

/* Who a broadcast names as the author: the WebSocket client, or 0 for REST. */
static uint32_t by_of(const cmd *c) {
    return (c->client & CMD_REST_BIT) ? 0 : c->client;
}

bool apply_obstacle_fit(const fs_mesh *m, fs_quat rot, fs_vec3 box_min, fs_vec3 box_max, fs_vec3 centre, float *scale,
                        fs_vec3 *pos) {
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < m->vertex_count; i++) {
        fs_vec3 r = rotate(rot, m->vertices[i]);
        const float p[3] = {r.x, r.y, r.z};
        for (int k = 0; k < 3; k++) lo[k] = fminf(lo[k], p[k]), hi[k] = fmaxf(hi[k], p[k]);
    }
    const float box[3] = {box_max.x - box_min.x, box_max.y - box_min.y, box_max.z - box_min.z};
    float s = INFINITY;
    for (int k = 0; k < 3; k++)
        if (hi[k] - lo[k] > 0) s = fminf(s, APPLY_FIT_SHARE * box[k] / (hi[k] - lo[k]));
    if (!isfinite(s) || !(s > 0)) return false;
    *scale = s;
    *pos = (fs_vec3){centre.x - s * 0.5f * (lo[0] + hi[0]), centre.y - s * 0.5f * (lo[1] + hi[1]),
                     centre.z - s * 0.5f * (lo[2] + hi[2])};
    return true;
}

void apply_obstacle_add(sim_thread *s, const cmd *c) {
    hub_mesh *m = apply_stored_mesh(s, c, c->u.obstacle.mesh);
    if (!m) return;
    if (fs_world_obstacle_count(s->world) >= FS_MAX_OBSTACLES) {
        hub_mesh_unref(m);
        sim_reply_error(s, c, RC_CONFLICT, "the world holds %d obstacles already (the most); remove one first",
                        FS_MAX_OBSTACLES);
        return;
    }
    fs_mesh mesh = hub_mesh_view(m);
    fs_quat rot = {c->u.obstacle.rot[0], c->u.obstacle.rot[1], c->u.obstacle.rot[2], c->u.obstacle.rot[3]};
    fs_vec3 pos = cmd_vec3(c->u.obstacle.pos);
    float scale = c->u.obstacle.scale;
    if (c->u.obstacle.fit) {
        fs_domain d = fs_world_domain(s->world);
        fs_vec3 centre = c->u.obstacle.has_pos
                             ? pos
                             : (fs_vec3){0.5f * (d.box_min.x + d.box_max.x), 0.5f * (d.box_min.y + d.box_max.y),
                                         0.5f * (d.box_min.z + d.box_max.z)};
        if (!apply_obstacle_fit(&mesh, rot, d.box_min, d.box_max, centre, &scale, &pos)) {
            hub_mesh_unref(m);
            sim_reply_error(s, c, RC_BAD_REQUEST, "mesh %u has no extent to fit", (unsigned)c->u.obstacle.mesh);
            return;
        }
    }
    fs_error e = {{0}};
    int64_t id = fs_world_add_obstacle(s->world, &mesh, pos, rot, scale, &e);
    hub_mesh_unref(m);
    if (id < 0) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "%s", e.msg);
        return;
    }
    sim_publish_obstacles(s, by_of(c), false); /* before the reply: its answer finds the mesh to fetch */
    sim_reply_ok(s, c, id);
}

void apply_obstacle_remove(sim_thread *s, const cmd *c) {
    if (!fs_world_remove_obstacle(s->world, c->u.obstacle.id)) {
        sim_reply_error(s, c, RC_NOT_FOUND, "unknown obstacle %u (GET /api/obstacles lists them)",
                        (unsigned)c->u.obstacle.id);
        return;
    }
    sim_publish_obstacles(s, by_of(c), false);
    sim_reply_ok(s, c, c->u.obstacle.id);
}

void apply_get_obstacles(sim_thread *s, const cmd *c) {
    cmd_reply r = sim_reply_to(s, c);
    r.obstacles = calloc(1, sizeof *r.obstacles);
    r.ok = r.obstacles != NULL;
    if (r.obstacles) {
        r.obstacles->tick = r.tick;
        int n = fs_world_obstacle_count(s->world);
        for (int i = 0; i < n && r.obstacles->count < FS_MAX_OBSTACLES; i++)
            if (fs_world_obstacle_at(s->world, i, &r.obstacles->obstacle[r.obstacles->count])) r.obstacles->count++;
    } else {
        cmd_reply_refuse(&r, RC_INTERNAL, "out of memory");
    }
    sim_reply_post(s, &r);
}
