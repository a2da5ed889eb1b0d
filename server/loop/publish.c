/* publish.c - the world info and the command replies the sim thread hands to
 * the hub (see publish.h). */
#include "publish.h"
#include "log.h"
#include "obstacle_mesh.h"
#include "stream.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

uint64_t sim_world_tick(sim_thread *s) {
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    return fst.tick;
}

static void fill_info(sim_thread *s, world_info *wi) {
    fs_world *w = s->world;
    memset(wi, 0, sizeof *wi);
    wi->version = ++s->info_version;
    fs_domain d = fs_world_domain(w);
    wi->box_min = d.box_min;
    wi->box_max = d.box_max;
    wi->gravity = d.gravity;
    wi->h = d.h;
    wi->spacing = d.spacing;
    wi->dt = s->dt;
    float lo[3] = {d.box_min.x, d.box_min.y, d.box_min.z}, hi[3] = {d.box_max.x, d.box_max.y, d.box_max.z};
    fc_grid g;
    char why[128];
    wi->frame_step = stream_grid(&g, lo, hi, d.spacing, s->cfg->frame_bits, why, sizeof why) ? 0 : g.step;
    const char *sc = fs_world_scene_name(w);
    snprintf(wi->scene, sizeof wi->scene, "%s", sc ? sc : "");
    snprintf(wi->solver, sizeof wi->solver, "%s", fs_solver_name(fs_world_solver(w)));
    wi->particles = fs_world_particle_count(w);
    wi->scene_particles = fs_world_scene_size(w);
    wi->capacity = fs_world_capacity(w);
    wi->paused = fs_world_paused(w);
    int nm = fs_world_material_count(w);
    if (nm > FS_MAX_MATERIALS) nm = FS_MAX_MATERIALS;
    wi->material_count = nm;
    for (int m = 0; m < nm; m++) {
        const char *name = fs_world_material_name(w, m);
        snprintf(wi->material[m], CMD_NAME_LEN, "%s", name ? name : "?");
        for (int p = 0; p < FS_P_COUNT; p++) wi->param[m][p] = fs_world_get_param(w, m, (fs_param)p);
    }
}

void sim_publish_info(sim_thread *s, world_info *wi) {
    fill_info(s, wi);
    hub_set_info(s->hub, wi);
}

/* The kept encoding of obstacle id, with a new reference, or NULL. */
static msg_buf *kept_mesh(sim_thread *s, uint32_t id, uint64_t *hash) {
    for (int i = 0; i < s->obstacle_pub_count; i++)
        if (s->obstacle_pub[i].id == id) {
            *hash = s->obstacle_pub[i].hash;
            return msg_buf_ref(s->obstacle_pub[i].mesh);
        }
    return NULL;
}

void sim_obstacles_free(sim_thread *s) {
    for (int i = 0; i < s->obstacle_pub_count; i++) msg_buf_unref(s->obstacle_pub[i].mesh);
    s->obstacle_pub_count = 0;
}

void sim_publish_obstacles(sim_thread *s, uint32_t by, bool forget) {
    if (forget) sim_obstacles_free(s);
    wire_obstacle o[FS_MAX_OBSTACLES];
    uint32_t ids[FS_MAX_OBSTACLES];
    msg_buf *mesh[FS_MAX_OBSTACLES], *keep[FS_MAX_OBSTACLES];
    int n = 0;
    const int count = fs_world_obstacle_count(s->world);
    for (int i = 0; i < count && n < FS_MAX_OBSTACLES; i++) {
        fs_obstacle_state st;
        fs_mesh m;
        if (!fs_world_obstacle_at(s->world, i, &st) || !fs_world_obstacle_mesh(s->world, i, &m)) continue;
        uint64_t hash = 0;
        msg_buf *b = kept_mesh(s, st.id, &hash);
        if (!b) b = obstacle_mesh_encode(&m, &hash);
        if (!b) {
            log_warn("sim: out of memory encoding obstacle %u for the viewers; it is not listed", (unsigned)st.id);
            continue;
        }
        o[n] = (wire_obstacle){.id = st.id,
                               .hash = hash,
                               .lo = st.lo,
                               .hi = st.hi,
                               .triangles = st.triangles,
                               .vertices = st.vertices,
                               .closed = st.closed};
        ids[n] = st.id;
        mesh[n] = b;
        keep[n] = msg_buf_ref(b);
        n++;
    }
    sim_obstacles_free(s);
    for (int i = 0; i < n; i++)
        s->obstacle_pub[i].id = ids[i], s->obstacle_pub[i].hash = o[i].hash, s->obstacle_pub[i].mesh = keep[i];
    s->obstacle_pub_count = n;
    msg_buf *list = wire_encode_obstacles_bcast(o, n, ++s->obstacles_version, by, sim_world_tick(s));
    hub_obstacle ho[FS_MAX_OBSTACLES];
    for (int i = 0; i < n; i++) ho[i] = (hub_obstacle){.id = ids[i], .hash = o[i].hash, .mesh = mesh[i]};
    hub_set_obstacles(s->hub, msg_buf_ref(list), ho, n);
    if (list) hub_publish_bcast(s->hub, list);
}

cmd_reply sim_reply_to(sim_thread *s, const cmd *c) {
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.client = c->client;
    r.rid = c->rid;
    r.kind = c->kind;
    r.tick = sim_world_tick(s);
    return r;
}

void sim_stats_of_world(sim_thread *s, const fs_stats *fst) {
    s->stats.tick = fst->tick;
    s->stats.sim_time = fst->sim_time;
    s->stats.particles = fst->particles;
    s->stats.scene_particles = fs_world_scene_size(s->world);
    s->stats.springs = fst->springs;
    s->stats.paused = fs_world_paused(s->world);
    int np = fs_world_probe_count(s->world);
    s->stats.probe_count = np;
    for (int k = 0; k < np; k++)
        fs_world_probe_get(s->world, k, &s->stats.probe[k], &s->stats.probe_value[k], &s->stats.probe_tick[k]);
}

void sim_reply_post(sim_thread *s, cmd_reply *r) {
    if (s->dedupe_cur && r->client == s->dedupe_client && r->rid == s->dedupe_cur->rid) {
        dedupe_set_reply(s->dedupe_cur, r);
        s->dedupe_cur = NULL;
    }
    if (r->ok)
        s->stats.commands_applied++, s->stats.cmd_ok[r->kind]++;
    else
        s->stats.commands_failed++, s->stats.cmd_failed[r->kind]++;
    /* the statistics first: a client that reads /api/stats after this reply sees the world the command
     * left (a scene's particle count), not the last tick's */
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    sim_stats_of_world(s, &fst);
    hub_set_stats(s->hub, &s->stats);
    hub_post_reply(s->hub, r);
}

void sim_reply_ok(sim_thread *s, const cmd *c, int64_t value) {
    if (c->kind == CMD_CURSOR || c->kind == CMD_BODY_DRAG) return; /* presence and drag updates are not acknowledged */
    cmd_reply r = sim_reply_to(s, c);
    r.ok = true;
    r.value = value;
    sim_reply_post(s, &r);
}

void sim_reply_error(sim_thread *s, const cmd *c, reply_code code, const char *fmt, ...) {
    cmd_reply r = sim_reply_to(s, c);
    r.code = code;
    int k = snprintf(r.error, sizeof r.error, "%s: ", cmd_kind_name(c->kind));
    if (k > 0 && (size_t)k < sizeof r.error) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(r.error + k, sizeof r.error - (size_t)k, fmt, ap);
        va_end(ap);
    }
    sim_reply_post(s, &r);
}

void sim_reply_status(sim_thread *s, const cmd *c, fs_status st, const fs_error *e, int64_t value) {
    if (st == FS_OK)
        sim_reply_ok(s, c, value);
    else
        sim_reply_error(s, c, reply_code_of_status(st), "%s", e->msg);
}
