/* apply.c - applies checked commands to the world at a tick boundary: one
 * handler per command kind, in a table; each posts its reply and broadcasts.
 * The body commands are in apply_bodies.c.  Sim thread only. */
#include "apply.h"

#include <math.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apply_bodies.h"
#include "apply_obstacles.h"
#include "apply_probes.h"
#include "apply_record.h"
#include "clock.h"
#include "persist.h"
#include "publish.h"
#include "roles.h"

/* Who a broadcast names as the author: the WebSocket client, or 0 for REST. */
static uint32_t by_of(const cmd *c) {
    return (c->client & CMD_REST_BIT) ? 0 : c->client;
}

void sim_world_replaced(sim_thread *s, uint32_t by) {
    world_info wi;
    s->epoch++; /* particle ids restart: the frame stream restarts with a keyframe */
    sim_flush_pending_steps(s, true);
    sim_forget_grabs(s);                          /* the bodies were replaced */
    memset(s->heat_tool, 0, sizeof s->heat_tool); /* and the heaters */
    sim_publish_info(s, &wi);
    hub_publish_bcast(s->hub, wire_encode_scene_bcast(&wi, by, sim_world_tick(s)));
    sim_publish_obstacles(s, by, true); /* cleared by a scene, brought back by a restore */
}

static void apply_push(sim_thread *s, const cmd *c) {
    int touched = 0;
    fs_error e = {{0}};
    fs_status st = fs_world_push(s->world, cmd_vec3(c->u.push.point), c->u.push.radius, cmd_vec3(c->u.push.dir),
                                 c->u.push.strength, &touched, &e);
    sim_reply_status(s, c, st, &e, touched);
}

/* Finds the parameters a set_param command names and checks their values
 * against their ranges (idx: their fs_param).  false: replied the error. */
static bool check_params(sim_thread *s, const cmd *c, int idx[FS_P_COUNT]) {
    int n = c->u.set_param.count;
    if (n < 1 || n > FS_P_COUNT) { /* cmd_from_fields guarantees it; the arrays here depend on it */
        sim_reply_error(s, c, RC_BAD_REQUEST, "'params' holds 1 to %d entries", FS_P_COUNT);
        return false;
    }
    for (int i = 0; i < n; i++) {
        idx[i] = fs_param_find(c->u.set_param.param[i]);
        const fs_param_info *pi = idx[i] >= 0 ? fs_param_get_info((fs_param)idx[i]) : NULL;
        if (!pi) {
            sim_reply_error(s, c, RC_BAD_REQUEST, "unknown parameter '%s'", c->u.set_param.param[i]);
            return false;
        }
        float v = c->u.set_param.value[i];
        if (!(v >= pi->min && v <= pi->max) || (pi->is_flag && v != 0 && v != 1)) {
            sim_reply_error(s, c, RC_BAD_REQUEST, "%s=%g outside [%g, %g]%s", pi->name, (double)v, (double)pi->min,
                            (double)pi->max, pi->is_flag ? " (0 or 1)" : "");
            return false;
        }
    }
    return true;
}

static void apply_set_param(sim_thread *s, const cmd *c) {
    int m = fs_world_material_find(s->world, c->u.set_param.material);
    if (m < 0) {
        sim_reply_error(s, c, RC_NOT_FOUND, "unknown material '%s'", c->u.set_param.material);
        return;
    }
    int idx[FS_P_COUNT];
    if (!check_params(s, c, idx)) return;
    int n = c->u.set_param.count;
    float old[FS_P_COUNT];
    for (int i = 0; i < n; i++) old[i] = fs_world_get_param(s->world, m, (fs_param)idx[i]);
    for (int i = 0; i < n; i++) {
        fs_error e = {{0}};
        fs_status st = fs_world_set_param(s->world, m, (fs_param)idx[i], c->u.set_param.value[i], &e);
        if (st != FS_OK) {
            for (int j = 0; j < i; j++) /* all or nothing */
                fs_world_set_param(s->world, m, (fs_param)idx[j], old[j], NULL);
            sim_reply_status(s, c, st, &e, 0);
            return;
        }
    }
    world_info wi;
    sim_publish_info(s, &wi);
    hub_publish_bcast(s->hub, wire_encode_param_bcast(&wi, s->st, m, by_of(c), sim_world_tick(s)));
    sim_reply_ok(s, c, m);
}

/* The scene's own solver unless the command names one; checked before
 * anything changes. */
static void apply_load_scene(sim_thread *s, const cmd *c) {
    int which = fs_scene_find(c->u.scene.name);
    int np = c->u.scene.particles;
    if (which < 0) {
        sim_reply_error(s, c, RC_NOT_FOUND, "unknown scene '%s' (GET /api/scenes lists them)", c->u.scene.name);
        return;
    }
    if (np != 0 && (np < 100 || np > fs_world_capacity(s->world))) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "particles %d outside 100..%d (or 0: the scene's default)", np,
                        fs_world_capacity(s->world));
        return;
    }
    fs_error e = {{0}};
    fs_solver sv = c->u.scene.solver >= 0 ? (fs_solver)c->u.scene.solver : fs_scene_get(which)->solver;
    fs_status st = fs_world_set_solver(s->world, sv, &e);
    if (st == FS_OK) st = fs_world_load_scene(s->world, c->u.scene.name, np, &e);
    if (st != FS_OK) {
        sim_reply_status(s, c, st, &e, 0);
        return;
    }
    sim_world_replaced(s, by_of(c));
    sim_reply_ok(s, c, fs_world_particle_count(s->world));
}

static void apply_set_solver(sim_thread *s, const cmd *c) {
    fs_error e = {{0}};
    fs_status st = fs_world_set_solver(s->world, (fs_solver)c->u.solver.solver, &e);
    if (st != FS_OK) {
        sim_reply_status(s, c, st, &e, 0);
        return;
    }
    world_info wi;
    sim_publish_info(s, &wi);
    hub_publish_bcast(s->hub, wire_encode_solver_bcast(wi.solver, by_of(c), sim_world_tick(s)));
    sim_reply_ok(s, c, 0);
}

void sim_expire_heat(sim_thread *s) {
    uint64_t tick = sim_world_tick(s);
    for (int k = 0; k < SIM_HEAT_TOOLS; k++)
        if (s->heat_tool[k].used && tick >= s->heat_tool[k].until_tick) {
            fs_heater_def off = {.kind = FS_HEAT_SPHERE, .radius = 1, .enabled = false};
            fs_world_set_heater(s->world, FS_MAX_HEATERS - SIM_HEAT_TOOLS + k, &off, NULL);
            s->heat_tool[k].used = false;
        }
}

/* The heat tool: one core heater per client while it heats; each command
 * moves it and heats for `duration` more seconds. */
static void apply_heat(sim_thread *s, const cmd *c) {
    int k = -1;
    for (int i = 0; i < SIM_HEAT_TOOLS && k < 0; i++)
        if (s->heat_tool[i].used && s->heat_tool[i].client == c->client) k = i;
    for (int i = 0; i < SIM_HEAT_TOOLS && k < 0; i++)
        if (!s->heat_tool[i].used) k = i;
    if (k < 0) {
        sim_reply_error(s, c, RC_BUSY, "all heat tools are in use by other clients; try again shortly");
        return;
    }
    fs_heater_def d = {.kind = FS_HEAT_SPHERE,
                       .centre = cmd_vec3(c->u.heat.point),
                       .radius = c->u.heat.radius,
                       .rate = c->u.heat.rate,
                       .temperature = 0,
                       .enabled = true};
    fs_error e = {{0}};
    if (fs_world_set_heater(s->world, FS_MAX_HEATERS - SIM_HEAT_TOOLS + k, &d, &e) < 0) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "%s", e.msg); /* the definition, checked: the slot is the tool's */
        return;
    }
    uint64_t ticks = (uint64_t)ceil(c->u.heat.duration / s->dt);
    s->heat_tool[k].used = true;
    s->heat_tool[k].client = c->client;
    s->heat_tool[k].until_tick = sim_world_tick(s) + (ticks ? ticks : 1);
    sim_reply_ok(s, c, 0);
}

static void apply_heater(sim_thread *s, const cmd *c) {
    fs_heater_def d;
    int slot = c->u.heater.slot;
    if (c->u.heater.has_def) {
        memset(&d, 0, sizeof d);
        d.kind = (fs_heat_kind)c->u.heater.kind;
        d.centre = cmd_vec3(c->u.heater.point);
        d.radius = c->u.heater.radius;
        d.rate = c->u.heater.rate;
        d.temperature = c->u.heater.temperature;
    } else if (!fs_world_get_heater(s->world, slot, &d)) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "slot %d is empty; give a definition", slot);
        return;
    }
    d.enabled = c->u.heater.enabled;
    fs_error e = {{0}};
    /* -1: the definition or the slot (both the client's): a bad request */
    sim_reply_status(s, c, fs_world_set_heater(s->world, slot, &d, &e) >= 0 ? FS_OK : FS_ERR_ARG, &e, slot);
}

static void apply_emitter(sim_thread *s, const cmd *c) {
    int slot = c->u.emitter.slot;
    fs_error e = {{0}};
    if (!c->u.emitter.has_def) {
        fs_status st = fs_world_enable_emitter(s->world, slot, c->u.emitter.enabled, &e);
        /* an empty slot switched without a definition: the request lacks one (as a heater's does) */
        sim_reply_status(s, c, st == FS_ERR_UNKNOWN ? FS_ERR_ARG : st, &e, slot);
        return;
    }
    int m = fs_world_material_find(s->world, c->u.emitter.material);
    if (m < 0) {
        sim_reply_error(s, c, RC_NOT_FOUND, "unknown material '%s'", c->u.emitter.material);
        return;
    }
    fs_emitter_def d;
    memset(&d, 0, sizeof d);
    d.pos = cmd_vec3(c->u.emitter.pos);
    d.dir = cmd_vec3(c->u.emitter.dir);
    d.speed = c->u.emitter.speed;
    d.radius = c->u.emitter.radius;
    d.rate = c->u.emitter.rate;
    d.cap = c->u.emitter.cap;
    d.material = m;
    d.enabled = c->u.emitter.enabled;
    slot = fs_world_set_emitter(s->world, slot, &d, &e);
    /* -1: the definition, or the slot (named, or none free): a bad request */
    sim_reply_status(s, c, slot >= 0 ? FS_OK : FS_ERR_ARG, &e, slot);
}

void sim_flush_pending_steps(sim_thread *s, bool all) {
    uint64_t tick = sim_world_tick(s);
    int k = 0;
    for (int i = 0; i < s->pending_count; i++) {
        sim_pending_step *p = &s->pending[i];
        if (all || tick >= p->tick) {
            cmd c = {.kind = CMD_STEP, .client = p->client, .rid = p->rid};
            sim_reply_ok(s, &c, p->steps);
        } else {
            s->pending[k++] = *p;
        }
    }
    s->pending_count = k;
}

static void apply_pause_resume(sim_thread *s, const cmd *c) {
    bool pause = c->kind == CMD_PAUSE;
    bool changed = fs_world_paused(s->world) != pause;
    fs_world_set_paused(s->world, pause);
    if (!pause) sim_flush_pending_steps(s, true);
    if (changed) {
        world_info wi;
        sim_publish_info(s, &wi);
        hub_publish_bcast(s->hub, wire_encode_state_bcast(pause, by_of(c), sim_world_tick(s)));
    }
    sim_reply_ok(s, c, 0);
}

/* Steps by hand: the reply is held until the world has made the steps. */
static void apply_step(sim_thread *s, const cmd *c) {
    if (!fs_world_paused(s->world)) {
        sim_reply_error(s, c, RC_CONFLICT, "the world is running; pause it first");
        return;
    }
    if (s->pending_count >= SIM_MAX_PENDING_STEPS) {
        sim_reply_error(s, c, RC_CONFLICT, "too many step requests in flight");
        return;
    }
    uint64_t base = sim_world_tick(s);
    for (int i = 0; i < s->pending_count; i++)
        if (s->pending[i].tick > base) base = s->pending[i].tick;
    fs_world_request_steps(s->world, c->u.step.steps);
    s->pending[s->pending_count++] =
        (sim_pending_step){c->client, c->rid, base + (uint64_t)c->u.step.steps, c->u.step.steps};
}

static void set_cursor(sim_thread *s, uint32_t client, bool visible, const float pos[3]) {
    int at = -1;
    for (int i = 0; i < s->cursor_count; i++)
        if (s->cursor[i].client == client) at = i;
    if (!visible) {
        if (at >= 0) s->cursor[at] = s->cursor[--s->cursor_count];
        return;
    }
    if (at < 0) {
        if (s->cursor_count >= s->cfg->max_clients) return;
        at = s->cursor_count++;
        s->cursor[at].client = client;
    }
    memcpy(s->cursor[at].pos, pos, sizeof s->cursor[at].pos);
}

static void apply_cursor(sim_thread *s, const cmd *c) {
    set_cursor(s, c->client, c->u.cursor.visible, c->u.cursor.pos);
}

/* A client went away: its cursor goes, and it lets go of what it held. */
static void apply_client_left(sim_thread *s, const cmd *c) {
    set_cursor(s, c->client, false, NULL);
    sim_release_all(s, c->client);
}

/* A copy of particles [offset, offset + limit) in id order. */
static particles_snap *copy_particles(sim_thread *s, int offset, int limit) {
    fs_particles_view v;
    fs_world_view(s->world, &v);
    particles_snap *p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->tick = sim_world_tick(s);
    p->total = v.count;
    p->offset = offset;
    int n = offset < v.count ? v.count - offset : 0;
    if (n > limit) n = limit;
    p->count = n;
    size_t cnt = n > 0 ? (size_t)n : 1;
    p->id = malloc(cnt * sizeof *p->id);
    p->pos = malloc(cnt * 3 * sizeof *p->pos);
    p->vel = malloc(cnt * 3 * sizeof *p->vel);
    p->material = malloc(cnt);
    p->temp = malloc(cnt * sizeof *p->temp);
    if (!p->id || !p->pos || !p->vel || !p->material || !p->temp) {
        particles_snap_free(p);
        return NULL;
    }
    for (int k = 0; k < n; k++) {
        int i = v.by_id[offset + k];
        p->id[k] = v.id[i];
        p->pos[3 * k] = v.x[i];
        p->pos[3 * k + 1] = v.y[i];
        p->pos[3 * k + 2] = v.z[i];
        p->vel[3 * k] = v.vx[i];
        p->vel[3 * k + 1] = v.vy[i];
        p->vel[3 * k + 2] = v.vz[i];
        p->material[k] = v.material[i];
        p->temp[k] = v.temperature[i];
    }
    return p;
}

static void apply_get_particles(sim_thread *s, const cmd *c) {
    cmd_reply r = sim_reply_to(s, c);
    /* a file format is the whole world; JSON comes in pages */
    bool all = c->u.particles.format != 0;
    r.snap = copy_particles(s, all ? 0 : c->u.particles.offset, all ? INT_MAX : c->u.particles.limit);
    r.value = c->u.particles.format;
    r.ok = r.snap != NULL;
    if (!r.ok) cmd_reply_refuse(&r, RC_INTERNAL, "out of memory");
    sim_reply_post(s, &r);
}

static void apply_get_snapshot(sim_thread *s, const cmd *c) {
    cmd_reply r = sim_reply_to(s, c);
    r.blob = persist_encode(s->world);
    r.ok = r.blob != NULL;
    if (!r.ok) cmd_reply_refuse(&r, RC_INTERNAL, "out of memory");
    sim_reply_post(s, &r);
}

/* Restores the snapshot parked in the hub by POST /api/snapshot. */
static void apply_restore(sim_thread *s, const cmd *c) {
    msg_buf *up = hub_take_upload(s->hub, c->u.restore.upload);
    if (!up) {
        sim_reply_error(s, c, RC_INTERNAL, "the upload is gone");
        return;
    }
    char why[FS_ERROR_LEN];
    int rc = persist_restore(s->world, up->data, up->len, why, sizeof why);
    msg_buf_unref(up);
    if (rc) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "%.150s", why); /* the document the client sent */
        return;
    }
    sim_world_replaced(s, 0);
    sim_reply_ok(s, c, fs_world_particle_count(s->world));
}

typedef void apply_fn(sim_thread *s, const cmd *c);

static apply_fn *const handler[CMD_KIND_COUNT] = {
    [CMD_PUSH] = apply_push,
    [CMD_SET_PARAM] = apply_set_param,
    [CMD_LOAD_SCENE] = apply_load_scene,
    [CMD_SET_SOLVER] = apply_set_solver,
    [CMD_HEAT] = apply_heat,
    [CMD_HEATER] = apply_heater,
    [CMD_EMITTER] = apply_emitter,
    [CMD_PAUSE] = apply_pause_resume,
    [CMD_RESUME] = apply_pause_resume,
    [CMD_STEP] = apply_step,
    [CMD_CURSOR] = apply_cursor,
    [CMD_CLIENT_LEFT] = apply_client_left,
    [CMD_GET_PARTICLES] = apply_get_particles,
    [CMD_GET_SNAPSHOT] = apply_get_snapshot,
    [CMD_RESTORE] = apply_restore,
    [CMD_BODY_CREATE] = apply_body_create,
    [CMD_RECORD_START] = apply_record_start,
    [CMD_RECORD_STOP] = apply_record_stop,
    [CMD_BODY_DESTROY] = apply_body_destroy,
    [CMD_BODY_IMPULSE] = apply_body_impulse,
    [CMD_BODY_GRAB] = apply_body_grab,
    [CMD_BODY_DRAG] = apply_body_drag,
    [CMD_BODY_RELEASE] = apply_body_release,
    [CMD_GET_BODIES] = apply_get_bodies,
    [CMD_OBSTACLE_ADD] = apply_obstacle_add,
    [CMD_OBSTACLE_REMOVE] = apply_obstacle_remove,
    [CMD_GET_OBSTACLES] = apply_get_obstacles,
    [CMD_PROBE_ADD] = apply_probe_add,
    [CMD_PROBE_REMOVE] = apply_probe_remove,
};

/* A command sent again (the same page session and request id, e.g. after
 * its relay went away): answered with the first answer, not applied again.
 * One still waiting for its reply (a `step` under way) is answered ok at the
 * current tick. */
static bool answered_before(sim_thread *s, const cmd *c) {
    s->dedupe_cur = NULL;
    if (!c->sid[0] || !c->rid || !cmd_kind_mutates(c->kind)) return false;
    const dedupe_entry *e = dedupe_find(s->dedupe, c->sid, c->rid);
    if (!e) {
        s->dedupe_cur = dedupe_add(s->dedupe, c->sid, c->rid);
        s->dedupe_client = c->client;
        return false;
    }
    cmd_reply r = sim_reply_to(s, c);
    if (e->replied) {
        r = e->reply;
        r.client = c->client;
    } else {
        r.ok = true;
    }
    r.duplicate = true;
    s->stats.commands_duplicate++;
    hub_post_reply(s->hub, &r);
    return true;
}

/* The role check, where every command is applied whichever edge it came
 * through (PROTOCOL.md, "Rooms and roles"): a command its connection's role
 * does not allow changes nothing and is answered forbidden, naming the role
 * it needs. */
static bool allowed(sim_thread *s, const cmd *c) {
    if ((unsigned)c->kind >= CMD_KIND_COUNT || role_commands[c->kind].internal) return true;
    role need = role_needed_for_command(c->kind);
    if (role_allows((role)c->role, need)) return true;
    char why[160];
    role_refusal(why, sizeof why, cmd_kind_name(c->kind), need, (role)c->role);
    cmd_reply r = sim_reply_to(s, c);
    cmd_reply_refuse(&r, RC_FORBIDDEN, why);
    sim_reply_post(s, &r);
    s->stats.commands_forbidden++;
    return false;
}

/* The world's bound on rebuilds (rate.h, rate_cmd_rebuilds): whoever asks,
 * at most --rebuilds-per-min; past it the command changes nothing and is
 * answered rate_limited (a restore's upload is let go).  A command sent
 * again that was applied before is not charged: answered_before answers it. */
static bool within_rebuilds(sim_thread *s, const cmd *c) {
    const int per_min = s->cfg->rebuilds_per_min;
    if (per_min <= 0 || !rate_cmd_rebuilds(c->kind)) return true;
    if (c->sid[0] && c->rid && dedupe_find(s->dedupe, c->sid, c->rid)) return true;
    if (rate_bucket_take(&s->rebuilds, rate_rebuilds_per_s(per_min), rate_rebuilds_burst(per_min), 1, clock_now_ns()))
        return true;
    if (c->kind == CMD_RESTORE) msg_buf_unref(hub_take_upload(s->hub, c->u.restore.upload));
    cmd_reply r = sim_reply_to(s, c);
    cmd_reply_refuse(&r, RC_RATE_LIMITED,
                     "rate limited: this world applies at most %d scene loads, solver switches and restores a "
                     "minute (%g at once), whoever asks; try again later",
                     per_min, rate_rebuilds_burst(per_min));
    sim_reply_post(s, &r);
    s->stats.rebuilds_refused++;
    return false;
}

void sim_apply(sim_thread *s, const cmd *c) {
    if (!allowed(s, c) || !within_rebuilds(s, c)) return;
    if (answered_before(s, c)) return;
    if (cmd_kind_mutates(c->kind) && (!s->earliest_unshown_ns || c->arrival_ns < s->earliest_unshown_ns))
        s->earliest_unshown_ns = c->arrival_ns;
    apply_fn *fn = (unsigned)c->kind < CMD_KIND_COUNT ? handler[c->kind] : NULL;
    if (fn) {
        fn(s, c);
    } else {
        cmd_reply r = sim_reply_to(s, c);
        cmd_reply_refuse(&r, RC_NOT_IMPLEMENTED, "command not handled by the simulation");
        sim_reply_post(s, &r);
    }
    s->dedupe_cur = NULL; /* a reply held back is not remembered (see answered_before) */
}
