/* rest_views.c - the JSON documents the REST API answers with, built from
 * the snapshots and copies the sim thread publishes.  Network thread only. */
#include "rest_views.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "hub.h"
#include "net_internal.h"
#include "net_room.h"
#include "rest_rooms.h"
#include "rest_route.h"
#include "ws_client.h"
#include "wire.h"

/* Rounds a float to its shortest faithful decimal so JSON stays readable. */
double rest_tidy(float f) {
    char b[32];
    snprintf(b, sizeof b, "%.7g", (double)f);
    return strtod(b, NULL);
}

cJSON *rest_vec3_json(const float *v) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < 3; i++) cJSON_AddItemToArray(a, cJSON_CreateNumber(rest_tidy(v[i])));
    return a;
}

cJSON *rest_material_json(const net *n, const world_info *wi, int m, bool with_meta) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", wi->material[m]);
    cJSON_AddNumberToObject(o, "index", m);
    cJSON *ps = cJSON_AddObjectToObject(o, "params");
    for (int p = 0; p < FS_P_COUNT; p++) {
        const fs_param_info *pi = n->st->param[p];
        if (!pi) continue;
        if (!with_meta) {
            cJSON_AddNumberToObject(ps, pi->name, rest_tidy(wi->param[m][p]));
            continue;
        }
        cJSON *e = cJSON_AddObjectToObject(ps, pi->name);
        cJSON_AddNumberToObject(e, "value", rest_tidy(wi->param[m][p]));
        cJSON_AddNumberToObject(e, "min", rest_tidy(pi->min));
        cJSON_AddNumberToObject(e, "max", rest_tidy(pi->max));
        cJSON_AddStringToObject(e, "unit", pi->unit ? pi->unit : "");
        cJSON_AddBoolToObject(e, "flag", pi->is_flag);
        cJSON_AddStringToObject(e, "doc", pi->doc ? pi->doc : "");
    }
    return o;
}

cJSON *rest_index_json(void) {
    cJSON *j = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(j, "endpoints");
    for (int i = 0; i < rest_route_count; i++) {
        const rest_route_def *r = &rest_routes[i];
        char e[96];
        snprintf(e, sizeof e, "%s %s%s", rest_method_name(r->method), r->path, r->query ? r->query : "");
        cJSON_AddItemToArray(a, cJSON_CreateString(e));
    }
    for (int i = 0; i < REST_ROOMS_ROUTES; i++) cJSON_AddItemToArray(a, cJSON_CreateString(rest_rooms_routes[i]));
    cJSON_AddStringToObject(j, "spec", "protocol/openapi.json");
    return j;
}

cJSON *rest_probes_json(const net_room *v) {
    sim_stats s;
    hub_get_stats(v->hub, &s);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "room", v->name);
    cJSON_AddNumberToObject(j, "tick", (double)s.tick);
    cJSON *a = cJSON_AddArrayToObject(j, "probes");
    for (int k = 0; k < s.probe_count && k < FS_MAX_PROBES; k++) {
        const fs_probe_def *d = &s.probe[k];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", d->name);
        const char *kind = fs_probe_kind_name(d->kind);
        cJSON_AddStringToObject(o, "kind", kind ? kind : "height");
        const float pos[3] = {d->pos.x, d->pos.y, d->pos.z}, nrm[3] = {d->normal.x, d->normal.y, d->normal.z};
        cJSON_AddItemToObject(o, "pos", rest_vec3_json(pos));
        cJSON_AddItemToObject(o, "normal", rest_vec3_json(nrm));
        cJSON_AddNumberToObject(o, "radius", rest_tidy(d->size));
        cJSON_AddNumberToObject(o, "value", rest_tidy(s.probe_value[k]));
        cJSON_AddStringToObject(o, "unit", d->kind == FS_PROBE_PRESSURE ? "Pa" : "m");
        cJSON_AddNumberToObject(o, "tick", (double)s.probe_tick[k]);
        cJSON_AddItemToArray(a, o);
    }
    return j;
}

cJSON *rest_stats_json(const net *n, const net_room *v) {
    sim_stats s;
    world_info wi;
    hub_get_stats(v->hub, &s);
    hub_get_info(v->hub, &wi);
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "room", v->name);
    cJSON_AddNumberToObject(j, "tick", (double)s.tick);
    cJSON_AddNumberToObject(j, "sim_time", s.sim_time);
    cJSON_AddNumberToObject(j, "particles", s.particles);
    cJSON_AddNumberToObject(j, "scene_particles", s.scene_particles);
    cJSON_AddNumberToObject(j, "springs", s.springs);
    cJSON_AddNumberToObject(j, "clients", v->nclients);
    cJSON_AddBoolToObject(j, "paused", s.paused);
    cJSON_AddStringToObject(j, "scene", wi.scene);
    cJSON_AddStringToObject(j, "solver", wi.solver);
    cJSON_AddNumberToObject(j, "solver_iterations", s.solver_iterations);
    cJSON_AddNumberToObject(j, "solver_residual", s.solver_residual);
    cJSON_AddNumberToObject(j, "bodies", s.bodies);
    cJSON_AddNumberToObject(j, "threads", n->cfg->threads);
    cJSON_AddNumberToObject(j, "step_threads", s.step_threads);
    cJSON_AddNumberToObject(j, "tick_hz", n->cfg->tick_hz);
    cJSON_AddNumberToObject(j, "frame_hz", n->cfg->frame_hz);
    cJSON_AddNumberToObject(j, "tick_hz_actual", s.tick_hz_actual);
    cJSON_AddNumberToObject(j, "step_ms", s.step_ms_mean);
    cJSON_AddNumberToObject(j, "step_cpu_ms", s.step_cpu_ms_mean);
    cJSON_AddNumberToObject(j, "step_ms_last", s.step_ms_last);
    cJSON_AddNumberToObject(j, "step_ms_max", s.step_ms_max);
    static const char *const phases[FS_PHASE_COUNT] = {"grid",    "viscosity", "springs", "relax",
                                                       "collide", "assemble",  "solve"};
    cJSON *ph = cJSON_AddObjectToObject(j, "phase_ms");
    for (int i = 0; i < FS_PHASE_COUNT; i++) cJSON_AddNumberToObject(ph, phases[i], s.phase_ms[i]);
    cJSON_AddNumberToObject(j, "realtime_ratio", s.realtime_ratio);
    /* Simulated seconds per wall second the schedule asks for (tick rate x dt);
     * below it, steps take longer than a tick and simulated time slows. */
    double target = n->cfg->tick_hz * wi.dt;
    cJSON_AddNumberToObject(j, "realtime_target", target);
    cJSON_AddBoolToObject(j, "slowed", !s.paused && s.tick_hz_actual > 0 && s.realtime_ratio < 0.95 * target);
    cJSON_AddNumberToObject(j, "overruns", (double)s.overruns);
    cJSON_AddNumberToObject(j, "encode_ms", s.encode_ms_mean);
    cJSON_AddNumberToObject(j, "frame_handoff_ms", s.handoff_ms);
    cJSON_AddNumberToObject(j, "frame_bits_per_particle", s.frame_bits_per_particle);
    cJSON_AddNumberToObject(j, "keyframe_bytes", (double)s.key_bytes);
    cJSON_AddNumberToObject(j, "keyframes_coded", (double)s.keyframes);
    cJSON_AddNumberToObject(j, "frames_skipped", (double)s.frames_skipped);
    cJSON_AddNumberToObject(j, "keyframes_sent", (double)n->keyframes_sent);
    cJSON_AddNumberToObject(j, "keyframe_requests", (double)n->key_requests);
    cJSON_AddNumberToObject(j, "keyframe_requests_merged", (double)n->key_merged);
    cJSON_AddNumberToObject(j, "keyframes_deferred", (double)n->key_deferred);
    cJSON_AddNumberToObject(j, "relay_keyframes_deferred", (double)hub_remote_keys_deferred(v->hub));
    cJSON_AddNumberToObject(j, "frame_bytes", (double)s.frame_bytes);
    cJSON_AddNumberToObject(j, "frames_published", (double)s.frames_published);
    cJSON_AddNumberToObject(j, "frames_sent", (double)n->frames_sent);
    cJSON_AddNumberToObject(j, "frames_dropped", (double)n->frames_dropped);
    cJSON_AddNumberToObject(j, "bytes_sent", (double)n->bytes_sent);
    cJSON_AddNumberToObject(j, "messages_sent", (double)n->messages_sent);
    cJSON_AddNumberToObject(j, "commands_applied", (double)s.commands_applied);
    cJSON_AddNumberToObject(j, "commands_failed", (double)s.commands_failed);
    cJSON_AddNumberToObject(j, "commands_forbidden", (double)s.commands_forbidden);
    cJSON_AddNumberToObject(j, "commands_duplicate", (double)s.commands_duplicate);
    cJSON_AddNumberToObject(j, "cmd_to_frame_ms", s.cmd_to_frame_ms_mean);
    cJSON_AddNumberToObject(j, "bad_messages", (double)n->bad_messages);
    cJSON_AddNumberToObject(j, "rate_limited", (double)n->rate_limited);
    cJSON_AddNumberToObject(j, "queue_busy", (double)n->queue_busy);
    cJSON_AddNumberToObject(j, "clients_refused", (double)n->ws_rejected);
    cJSON_AddNumberToObject(j, "origin_refused", (double)n->origin_refused);
    cJSON_AddNumberToObject(j, "replies_dropped", (double)(n->replies_dropped + s.replies_dropped));
    cJSON_AddNumberToObject(j, "http_requests", (double)n->http_requests);
    cJSON_AddNumberToObject(j, "nonfinite_repaired", (double)s.nonfinite_repaired);
    cJSON_AddNumberToObject(j, "escapes_clamped", (double)s.escapes_clamped);
    cJSON_AddNumberToObject(j, "lists_full", (double)s.lists_full);
    cJSON_AddNumberToObject(j, "emitted", (double)s.emitted);
    cJSON_AddNumberToObject(j, "drained", (double)s.drained);
    cJSON_AddNumberToObject(j, "saves", (double)s.saves);
    cJSON_AddNumberToObject(j, "save_failures", (double)s.save_failures);
    cJSON_AddNumberToObject(j, "save_ms", s.save_ms_last);
    return j;
}

/* {"<cur_key>": cur, "<list_key>": []}: the scene and solver lists, *items
 * the empty list. */
static cJSON *list_doc(const char *cur_key, const char *cur, const char *list_key, cJSON **items) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, cur_key, cur);
    *items = cJSON_AddArrayToObject(j, list_key);
    return j;
}

/* {"name": name, "doc": doc}: an entry of the scene and solver lists. */
static cJSON *named_json(const char *name, const char *doc) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddStringToObject(o, "doc", doc ? doc : "");
    return o;
}

cJSON *rest_scenes_json(const net_room *v) {
    world_info wi;
    hub_get_info(v->hub, &wi);
    cJSON *a, *j = list_doc("current", wi.scene, "scenes", &a);
    for (int i = 0; i < fs_scene_count(); i++) {
        const fs_scene_info *si = fs_scene_get(i); /* static table, not the world */
        cJSON *o = named_json(si->name, si->doc);
        cJSON_AddNumberToObject(o, "default_particles", si->default_particles);
        const char *sv = fs_solver_name(si->solver);
        cJSON_AddStringToObject(o, "solver", sv ? sv : "");
        cJSON_AddItemToArray(a, o);
    }
    return j;
}

cJSON *rest_materials_json(const net *n, const net_room *v) {
    world_info wi;
    hub_get_info(v->hub, &wi);
    cJSON *j = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(j, "materials");
    for (int m = 0; m < wi.material_count; m++) cJSON_AddItemToArray(a, rest_material_json(n, &wi, m, true));
    return j;
}

cJSON *rest_particles_json(const particles_snap *s, const world_info *wi) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "tick", (double)s->tick);
    cJSON_AddNumberToObject(j, "total", s->total);
    cJSON_AddNumberToObject(j, "offset", s->offset);
    cJSON_AddNumberToObject(j, "count", s->count);
    cJSON *names = cJSON_AddArrayToObject(j, "material_names");
    for (int m = 0; m < wi->material_count; m++) cJSON_AddItemToArray(names, cJSON_CreateString(wi->material[m]));
    cJSON *ids = cJSON_AddArrayToObject(j, "ids");
    cJSON *pos = cJSON_AddArrayToObject(j, "positions");
    cJSON *vel = cJSON_AddArrayToObject(j, "velocities");
    cJSON *mat = cJSON_AddArrayToObject(j, "materials");
    cJSON *temp = cJSON_AddArrayToObject(j, "temperatures");
    for (int k = 0; k < s->count; k++) {
        cJSON_AddItemToArray(temp, cJSON_CreateNumber(rest_tidy(s->temp[k])));
        cJSON_AddItemToArray(ids, cJSON_CreateNumber(s->id[k]));
        cJSON_AddItemToArray(pos, rest_vec3_json(&s->pos[3 * k]));
        cJSON_AddItemToArray(vel, rest_vec3_json(&s->vel[3 * k]));
        cJSON_AddItemToArray(mat, cJSON_CreateNumber(s->material[k]));
    }
    return j;
}

cJSON *rest_bodies_json(const bodies_snap *bs, uint64_t tick) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "tick", (double)tick);
    cJSON *a = cJSON_AddArrayToObject(j, "bodies");
    for (int i = 0; bs && i < bs->count; i++) {
        const fs_body_state *b = &bs->body[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", b->id);
        cJSON_AddStringToObject(o, "shape", wire_shape_name(b->shape));
        cJSON_AddItemToObject(o, "size", rest_vec3_json((const float[3]){b->size.x, b->size.y, b->size.z}));
        cJSON_AddItemToObject(o, "pos", rest_vec3_json((const float[3]){b->pos.x, b->pos.y, b->pos.z}));
        cJSON *q = cJSON_AddArrayToObject(o, "rot");
        const float qv[4] = {b->rot.w, b->rot.x, b->rot.y, b->rot.z};
        for (int k = 0; k < 4; k++) cJSON_AddItemToArray(q, cJSON_CreateNumber(rest_tidy(qv[k])));
        cJSON_AddItemToObject(o, "vel", rest_vec3_json((const float[3]){b->vel.x, b->vel.y, b->vel.z}));
        cJSON_AddItemToObject(o, "ang_vel", rest_vec3_json((const float[3]){b->ang_vel.x, b->ang_vel.y, b->ang_vel.z}));
        cJSON_AddNumberToObject(o, "mass", rest_tidy(b->mass));
        cJSON_AddNumberToObject(o, "density", rest_tidy(b->density));
        cJSON_AddBoolToObject(o, "static", b->is_static);
        cJSON_AddNumberToObject(o, "grabbed_by", bs->grabbed_by[i]);
        cJSON_AddItemToArray(a, o);
    }
    return j;
}

cJSON *rest_clients_json(const net *n, const net_room *v) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "count", v->nclients);
    cJSON_AddNumberToObject(j, "max", n->cfg->max_clients);
    cJSON *a = cJSON_AddArrayToObject(j, "clients");
    uint64_t now = clock_now_ns();
    for (const ws_client *c = v->clients; c; c = c->next) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", c->id);
        cJSON_AddStringToObject(o, "peer", c->peer);
        char col[8];
        snprintf(col, sizeof col, "#%06x", (unsigned)wire_client_colour(c->id));
        cJSON_AddStringToObject(o, "colour", col);
        cJSON_AddBoolToObject(o, "authed", c->authed);
        cJSON_AddNumberToObject(o, "connected_s", (double)(now - c->connected_ns) / 1e9);
        cJSON_AddNumberToObject(o, "frames_sent", (double)c->frames_sent);
        cJSON_AddNumberToObject(o, "frames_dropped", (double)c->frames_dropped);
        cJSON_AddNumberToObject(o, "keyframes_sent", (double)c->keyframes_sent);
        cJSON_AddNumberToObject(o, "keyframe_requests", (double)c->key_requests);
        cJSON_AddNumberToObject(o, "keyframes_deferred", (double)c->keys_deferred);
        cJSON_AddNumberToObject(o, "stride", c->link.stride);
        cJSON_AddNumberToObject(o, "pace", c->link.pace);
        cJSON_AddNumberToObject(o, "tier", c->link.tier);
        cJSON_AddBoolToObject(o, "full_detail", c->link.pinned);
        cJSON_AddNumberToObject(o, "bytes_sent", (double)c->bytes_sent);
        cJSON_AddNumberToObject(o, "commands", (double)c->commands);
        cJSON_AddNumberToObject(o, "bad_messages", (double)c->bad);
        cJSON_AddNumberToObject(o, "replies_queued", c->ctl_count);
        cJSON_AddBoolToObject(o, "sending", c->cur != NULL);
        cJSON_AddItemToArray(a, o);
    }
    return j;
}

cJSON *rest_solvers_json(const net_room *v) {
    world_info wi;
    hub_get_info(v->hub, &wi);
    cJSON *a, *j = list_doc("solver", wi.solver, "solvers", &a);
    for (int i = 0; i < FS_SOLVER_COUNT; i++) {
        if (!fs_solver_name((fs_solver)i)) continue;
        cJSON *o = named_json(fs_solver_name((fs_solver)i), fs_solver_doc((fs_solver)i));
        cJSON *ps = cJSON_AddArrayToObject(o, "params"); /* the parameters this solver's step reads */
        for (int p = 0; p < FS_P_COUNT; p++)
            if (fs_param_used_by((fs_param)p, i))
                cJSON_AddItemToArray(ps, cJSON_CreateString(fs_param_get_info((fs_param)p)->name));
        cJSON_AddItemToArray(a, o);
    }
    return j;
}
