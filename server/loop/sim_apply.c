/* sim_apply.c - applies checked commands to the world at a tick boundary and
 * posts their replies and broadcasts.  Sim thread only. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim_thread.h"

static void post(sim_thread *s, const cmd *c, bool ok, const char *error, int64_t value)
{
    if ((c->kind == CMD_CURSOR || c->kind == CMD_BODY_DRAG) && ok)
        return; /* presence and drag updates are not acknowledged */
    cmd_reply r;
    memset(&r, 0, sizeof r);
    r.client = c->client;
    r.rid = c->rid;
    r.kind = c->kind;
    r.ok = ok;
    if (error)
        cmd_strlcpy(r.error, sizeof r.error, error);
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    r.tick = fst.tick;
    r.value = value;
    if (ok)
        s->stats.commands_applied++, s->stats.cmd_ok[c->kind]++;
    else
        s->stats.commands_failed++, s->stats.cmd_failed[c->kind]++;
    hub_post_reply(s->hub, &r);
}

/* A reply that carries a payload (particles, bodies, snapshot). */
static void post_payload(sim_thread *s, cmd_reply *r)
{
    if (r->ok)
        s->stats.commands_applied++, s->stats.cmd_ok[r->kind]++;
    else
        s->stats.commands_failed++, s->stats.cmd_failed[r->kind]++;
    hub_post_reply(s->hub, r);
}

void sim_world_replaced(sim_thread *s, uint32_t by)
{
    world_info wi;
    sim_flush_pending_steps(s, true);
    s->grab_count = 0;                                /* the bodies were replaced */
    memset(s->heat_tool, 0, sizeof s->heat_tool);     /* and the heaters */
    sim_publish_info(s, &wi);
    hub_publish_bcast(s->hub, wire_encode_scene_bcast(&wi, by, sim_world_tick(s)));
}

void sim_expire_heat(sim_thread *s)
{
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
static void apply_heat(sim_thread *s, const cmd *c)
{
    int k = -1;
    for (int i = 0; i < SIM_HEAT_TOOLS && k < 0; i++)
        if (s->heat_tool[i].used && s->heat_tool[i].client == c->client)
            k = i;
    for (int i = 0; i < SIM_HEAT_TOOLS && k < 0; i++)
        if (!s->heat_tool[i].used)
            k = i;
    if (k < 0) {
        post(s, c, false, "heat: all heat tools are in use by other clients; try again shortly", 0);
        return;
    }
    fs_heater_def d = {.kind = FS_HEAT_SPHERE,
                       .centre = {c->u.heat.point[0], c->u.heat.point[1], c->u.heat.point[2]},
                       .radius = c->u.heat.radius,
                       .rate = c->u.heat.rate,
                       .temperature = 0,
                       .enabled = true};
    fs_error e = {{0}};
    char msg[FS_ERROR_LEN + 64];
    if (fs_world_set_heater(s->world, FS_MAX_HEATERS - SIM_HEAT_TOOLS + k, &d, &e) < 0) {
        snprintf(msg, sizeof msg, "heat: %s", e.msg);
        post(s, c, false, msg, 0);
        return;
    }
    uint64_t ticks = (uint64_t)ceil(c->u.heat.duration / s->dt);
    s->heat_tool[k].used = true;
    s->heat_tool[k].client = c->client;
    s->heat_tool[k].until_tick = sim_world_tick(s) + (ticks ? ticks : 1);
    post(s, c, true, NULL, 0);
}

static uint32_t by_of(const cmd *c)
{
    return (c->client & CMD_REST_BIT) ? 0 : c->client;
}

uint64_t sim_world_tick(sim_thread *s)
{
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    return fst.tick;
}

void sim_flush_pending_steps(sim_thread *s, bool all)
{
    uint64_t tick = sim_world_tick(s);
    int k = 0;
    for (int i = 0; i < s->pending_count; i++) {
        sim_pending_step *p = &s->pending[i];
        if (all || tick >= p->tick) {
            cmd c;
            memset(&c, 0, sizeof c);
            c.kind = CMD_STEP;
            c.client = p->client;
            c.rid = p->rid;
            post(s, &c, true, NULL, p->steps);
        } else {
            s->pending[k++] = *p;
        }
    }
    s->pending_count = k;
}

static void apply_set_param(sim_thread *s, const cmd *c)
{
    char msg[FS_ERROR_LEN + 64];
    int m = fs_world_material_find(s->world, c->u.set_param.material);
    if (m < 0) {
        snprintf(msg, sizeof msg, "set_param: unknown material '%s'", c->u.set_param.material);
        post(s, c, false, msg, 0);
        return;
    }
    int idx[FS_P_COUNT];
    int n = c->u.set_param.count;
    if (n < 1 || n > FS_P_COUNT) { /* cmd_from_fields guarantees it; the arrays here depend on it */
        snprintf(msg, sizeof msg, "set_param: 'params' holds 1 to %d entries", FS_P_COUNT);
        post(s, c, false, msg, 0);
        return;
    }
    for (int i = 0; i < n; i++) {
        idx[i] = fs_param_find(c->u.set_param.param[i]);
        const fs_param_info *pi = idx[i] >= 0 ? fs_param_get_info((fs_param)idx[i]) : NULL;
        if (!pi) {
            snprintf(msg, sizeof msg, "set_param: unknown parameter '%s'", c->u.set_param.param[i]);
            post(s, c, false, msg, 0);
            return;
        }
        float v = c->u.set_param.value[i];
        if (!(v >= pi->min && v <= pi->max) || (pi->is_flag && v != 0 && v != 1)) {
            snprintf(msg, sizeof msg, "set_param: %s=%g outside [%g, %g]%s", pi->name, (double)v, (double)pi->min,
                     (double)pi->max, pi->is_flag ? " (0 or 1)" : "");
            post(s, c, false, msg, 0);
            return;
        }
    }
    float old[FS_P_COUNT];
    for (int i = 0; i < n; i++)
        old[i] = fs_world_get_param(s->world, m, (fs_param)idx[i]);
    for (int i = 0; i < n; i++) {
        fs_error e = {{0}};
        if (fs_world_set_param(s->world, m, (fs_param)idx[i], c->u.set_param.value[i], &e) != FS_OK) {
            for (int j = 0; j < i; j++) /* all or nothing */
                fs_world_set_param(s->world, m, (fs_param)idx[j], old[j], NULL);
            snprintf(msg, sizeof msg, "set_param: %s", e.msg);
            post(s, c, false, msg, 0);
            return;
        }
    }
    world_info wi;
    sim_publish_info(s, &wi);
    hub_publish_bcast(s->hub, wire_encode_param_bcast(&wi, s->st, m, by_of(c), sim_world_tick(s)));
    post(s, c, true, NULL, m);
}

static particles_snap *snapshot(sim_thread *s, int offset, int limit)
{
    fs_particles_view v;
    fs_world_view(s->world, &v);
    particles_snap *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->tick = sim_world_tick(s);
    p->total = v.count;
    p->offset = offset;
    int n = offset < v.count ? v.count - offset : 0;
    if (n > limit)
        n = limit;
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

static void set_cursor(sim_thread *s, uint32_t client, bool visible, const float pos[3])
{
    int at = -1;
    for (int i = 0; i < s->cursor_count; i++)
        if (s->cursor[i].client == client)
            at = i;
    if (!visible) {
        if (at >= 0)
            s->cursor[at] = s->cursor[--s->cursor_count];
        return;
    }
    if (at < 0) {
        if (s->cursor_count >= s->cfg->max_clients)
            return;
        at = s->cursor_count++;
        s->cursor[at].client = client;
    }
    memcpy(s->cursor[at].pos, pos, sizeof s->cursor[at].pos);
}

uint32_t sim_grab_owner(const sim_thread *s, uint32_t body)
{
    for (int i = 0; i < s->grab_count; i++)
        if (s->grab[i].body == body)
            return s->grab[i].client;
    return 0;
}

static void grab_forget(sim_thread *s, uint32_t body)
{
    for (int i = 0; i < s->grab_count; i++)
        if (s->grab[i].body == body) {
            s->grab[i] = s->grab[--s->grab_count];
            return;
        }
}

/* A client went away: let go of what it held. */
static void release_all(sim_thread *s, uint32_t client)
{
    for (int i = s->grab_count - 1; i >= 0; i--)
        if (s->grab[i].client == client) {
            fs_world_body_release(s->world, s->grab[i].body, NULL);
            s->grab[i] = s->grab[--s->grab_count];
        }
}

static void apply_body(sim_thread *s, const cmd *c)
{
    char msg[FS_ERROR_LEN + 64];
    fs_error e = {{0}};
    const char *k = cmd_kind_name(c->kind);
    uint32_t id = c->u.body.id;
    fs_vec3 p = {c->u.body.point[0], c->u.body.point[1], c->u.body.point[2]};
    fs_vec3 v = {c->u.body.vec[0], c->u.body.vec[1], c->u.body.vec[2]};
    fs_status st = FS_OK;
    if (c->kind != CMD_BODY_CREATE && !fs_world_body_get(s->world, id, &(fs_body_state){0})) {
        snprintf(msg, sizeof msg, "%s: unknown body %u", k, (unsigned)id);
        post(s, c, false, msg, 0);
        return;
    }
    uint32_t owner = c->kind == CMD_BODY_CREATE ? 0 : sim_grab_owner(s, id);
    fs_domain dom = fs_world_domain(s->world);
    if (c->kind == CMD_BODY_GRAB || c->kind == CMD_BODY_DRAG) {
        /* A pointer ray may aim outside the tank: pull towards the nearest
         * point inside it instead. */
        v.x = fminf(fmaxf(v.x, dom.box_min.x), dom.box_max.x);
        v.y = fminf(fmaxf(v.y, dom.box_min.y), dom.box_max.y);
        v.z = fminf(fmaxf(v.z, dom.box_min.z), dom.box_max.z);
    }
    switch (c->kind) {
    case CMD_BODY_CREATE: {
        fs_body_def d = fs_default_body_def();
        d.shape = (fs_shape)c->u.body_create.shape;
        d.size = (fs_vec3){c->u.body_create.size[0], c->u.body_create.size[1], c->u.body_create.size[2]};
        d.pos = (fs_vec3){c->u.body_create.pos[0], c->u.body_create.pos[1], c->u.body_create.pos[2]};
        d.rot = (fs_quat){c->u.body_create.rot[0], c->u.body_create.rot[1], c->u.body_create.rot[2],
                          c->u.body_create.rot[3]};
        d.vel = (fs_vec3){c->u.body_create.vel[0], c->u.body_create.vel[1], c->u.body_create.vel[2]};
        d.ang_vel = (fs_vec3){c->u.body_create.ang_vel[0], c->u.body_create.ang_vel[1], c->u.body_create.ang_vel[2]};
        if (c->u.body_create.has_density)
            d.density = c->u.body_create.density;
        if (c->u.body_create.has_friction)
            d.friction = c->u.body_create.friction;
        d.is_static = c->u.body_create.is_static;
        if (d.pos.x < dom.box_min.x || d.pos.x > dom.box_max.x || d.pos.y < dom.box_min.y ||
            d.pos.y > dom.box_max.y || d.pos.z < dom.box_min.z || d.pos.z > dom.box_max.z) {
            snprintf(msg, sizeof msg, "body_create: 'pos' (%g, %g, %g) is outside the world box (%g..%g, %g..%g, %g..%g)",
                     (double)d.pos.x, (double)d.pos.y, (double)d.pos.z, (double)dom.box_min.x, (double)dom.box_max.x,
                     (double)dom.box_min.y, (double)dom.box_max.y, (double)dom.box_min.z, (double)dom.box_max.z);
            post(s, c, false, msg, 0);
            return;
        }
        int64_t nid = fs_world_create_body(s->world, &d, &e);
        if (nid < 0) {
            snprintf(msg, sizeof msg, "body_create: %s", e.msg);
            post(s, c, false, msg, 0);
        } else {
            post(s, c, true, NULL, nid);
        }
        return;
    }
    case CMD_BODY_DESTROY:
        if (owner && owner != c->client) {
            snprintf(msg, sizeof msg, "body_destroy: body %u is held by client %u", (unsigned)id, (unsigned)owner);
            post(s, c, false, msg, 0);
            return;
        }
        fs_world_destroy_body(s->world, id);
        grab_forget(s, id);
        post(s, c, true, NULL, id);
        return;
    case CMD_BODY_IMPULSE:
        st = fs_world_body_impulse(s->world, id, p, v, &e);
        break;
    case CMD_BODY_GRAB:
        if (owner && owner != c->client) {
            snprintf(msg, sizeof msg, "body_grab: body %u is held by client %u", (unsigned)id, (unsigned)owner);
            post(s, c, false, msg, 0);
            return;
        }
        st = fs_world_body_grab(s->world, id, p, v, &e);
        if (st == FS_OK && !owner && s->grab_count < FS_MAX_BODIES) {
            s->grab[s->grab_count].body = id;
            s->grab[s->grab_count++].client = c->client;
        }
        break;
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE:
        if (owner != c->client) {
            snprintf(msg, sizeof msg, "%s: body %u is not held by you (grab it first)", k, (unsigned)id);
            post(s, c, false, msg, 0);
            return;
        }
        if (c->kind == CMD_BODY_DRAG) {
            st = fs_world_body_drag(s->world, id, v, &e);
        } else {
            st = fs_world_body_release(s->world, id, &e);
            grab_forget(s, id);
        }
        break;
    default:
        return;
    }
    if (st != FS_OK) {
        snprintf(msg, sizeof msg, "%s: %s", k, e.msg);
        post(s, c, false, msg, 0);
    } else if (c->kind != CMD_BODY_DRAG) {
        post(s, c, true, NULL, id);
    }
}

void sim_apply(sim_thread *s, const cmd *c)
{
    char msg[FS_ERROR_LEN + 64];
    fs_error e = {{0}};
    world_info wi;
    if (cmd_kind_mutates(c->kind) && (!s->earliest_unshown_ns || c->arrival_ns < s->earliest_unshown_ns))
        s->earliest_unshown_ns = c->arrival_ns;
    switch (c->kind) {
    case CMD_PUSH: {
        int touched = 0;
        fs_vec3 p = {c->u.push.point[0], c->u.push.point[1], c->u.push.point[2]};
        fs_vec3 d = {c->u.push.dir[0], c->u.push.dir[1], c->u.push.dir[2]};
        if (fs_world_push(s->world, p, c->u.push.radius, d, c->u.push.strength, &touched, &e) != FS_OK) {
            snprintf(msg, sizeof msg, "push: %s", e.msg);
            post(s, c, false, msg, 0);
        } else {
            post(s, c, true, NULL, touched);
        }
        break;
    }
    case CMD_SET_PARAM:
        apply_set_param(s, c);
        break;
    case CMD_LOAD_SCENE: {
        /* the scene's own solver unless the command names one; checked
         * before anything changes */
        int which = fs_scene_find(c->u.scene.name);
        int np = c->u.scene.particles;
        if (which < 0 || (np != 0 && (np < 100 || np > fs_world_capacity(s->world)))) {
            if (which < 0)
                snprintf(msg, sizeof msg, "load_scene: unknown scene '%s' (GET /api/scenes lists them)",
                         c->u.scene.name);
            else
                snprintf(msg, sizeof msg, "load_scene: particles %d outside 100..%d (or 0: the scene's default)",
                         np, fs_world_capacity(s->world));
            post(s, c, false, msg, 0);
            break;
        }
        fs_solver sv = c->u.scene.solver >= 0 ? (fs_solver)c->u.scene.solver : fs_scene_get(which)->solver;
        if (fs_world_set_solver(s->world, sv, &e) != FS_OK ||
            fs_world_load_scene(s->world, c->u.scene.name, np, &e) != FS_OK) {
            snprintf(msg, sizeof msg, "load_scene: %s", e.msg);
            post(s, c, false, msg, 0);
            break;
        }
        sim_world_replaced(s, by_of(c));
        post(s, c, true, NULL, fs_world_particle_count(s->world));
        break;
    }
    case CMD_SET_SOLVER: {
        if (fs_world_set_solver(s->world, (fs_solver)c->u.solver.solver, &e) != FS_OK) {
            snprintf(msg, sizeof msg, "set_solver: %s", e.msg);
            post(s, c, false, msg, 0);
            break;
        }
        sim_publish_info(s, &wi);
        hub_publish_bcast(s->hub, wire_encode_solver_bcast(wi.solver, by_of(c), sim_world_tick(s)));
        post(s, c, true, NULL, 0);
        break;
    }
    case CMD_HEAT:
        apply_heat(s, c);
        break;
    case CMD_HEATER: {
        fs_heater_def d;
        int slot = c->u.heater.slot;
        if (c->u.heater.has_def) {
            memset(&d, 0, sizeof d);
            d.kind = (fs_heat_kind)c->u.heater.kind;
            d.centre = (fs_vec3){c->u.heater.point[0], c->u.heater.point[1], c->u.heater.point[2]};
            d.radius = c->u.heater.radius;
            d.rate = c->u.heater.rate;
            d.temperature = c->u.heater.temperature;
        } else if (!fs_world_get_heater(s->world, slot, &d)) {
            snprintf(msg, sizeof msg, "heater: slot %d is empty; give a definition", slot);
            post(s, c, false, msg, 0);
            break;
        }
        d.enabled = c->u.heater.enabled;
        if (fs_world_set_heater(s->world, slot, &d, &e) < 0) {
            snprintf(msg, sizeof msg, "heater: %s", e.msg);
            post(s, c, false, msg, 0);
            break;
        }
        post(s, c, true, NULL, slot);
        break;
    }
    case CMD_GET_SNAPSHOT:
    case CMD_RESTORE: {
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.client = c->client;
        r.rid = c->rid;
        r.kind = c->kind;
        if (c->kind == CMD_GET_SNAPSHOT) {
            r.blob = sim_snapshot_doc(s);
            r.ok = r.blob != NULL;
            if (!r.ok)
                snprintf(r.error, sizeof r.error, "out of memory");
        } else {
            msg_buf *up = hub_take_upload(s->hub, c->u.restore.upload);
            if (!up) {
                snprintf(r.error, sizeof r.error, "restore: the upload is gone");
            } else {
                char why[FS_ERROR_LEN];
                r.ok = sim_restore_doc(s, up->data, up->len, why, sizeof why) == 0;
                if (!r.ok)
                    snprintf(r.error, sizeof r.error, "restore: %.150s", why);
                else
                    r.value = fs_world_particle_count(s->world);
                msg_buf_unref(up);
            }
        }
        r.tick = sim_world_tick(s);
        post_payload(s, &r);
        break;
    }
    case CMD_PAUSE:
    case CMD_RESUME: {
        bool pause = c->kind == CMD_PAUSE;
        bool changed = fs_world_paused(s->world) != pause;
        fs_world_set_paused(s->world, pause);
        if (!pause)
            sim_flush_pending_steps(s, true);
        if (changed) {
            sim_publish_info(s, &wi);
            hub_publish_bcast(s->hub, wire_encode_state_bcast(pause, by_of(c), sim_world_tick(s)));
        }
        post(s, c, true, NULL, 0);
        break;
    }
    case CMD_STEP: {
        if (!fs_world_paused(s->world)) {
            post(s, c, false, "step: the world is running; pause it first", 0);
            break;
        }
        if (s->pending_count >= SIM_MAX_PENDING_STEPS) {
            post(s, c, false, "step: too many step requests in flight", 0);
            break;
        }
        uint64_t base = sim_world_tick(s);
        for (int i = 0; i < s->pending_count; i++)
            if (s->pending[i].tick > base)
                base = s->pending[i].tick;
        fs_world_request_steps(s->world, c->u.step.steps);
        s->pending[s->pending_count++] =
            (sim_pending_step){c->client, c->rid, base + (uint64_t)c->u.step.steps, c->u.step.steps};
        break;
    }
    case CMD_EMITTER: {
        int slot = c->u.emitter.slot;
        if (c->u.emitter.has_def) {
            int m = fs_world_material_find(s->world, c->u.emitter.material);
            if (m < 0) {
                snprintf(msg, sizeof msg, "emitter: unknown material '%s'", c->u.emitter.material);
                post(s, c, false, msg, 0);
                break;
            }
            fs_emitter_def d;
            memset(&d, 0, sizeof d);
            d.pos = (fs_vec3){c->u.emitter.pos[0], c->u.emitter.pos[1], c->u.emitter.pos[2]};
            d.dir = (fs_vec3){c->u.emitter.dir[0], c->u.emitter.dir[1], c->u.emitter.dir[2]};
            d.speed = c->u.emitter.speed;
            d.radius = c->u.emitter.radius;
            d.rate = c->u.emitter.rate;
            d.cap = c->u.emitter.cap;
            d.material = m;
            d.enabled = c->u.emitter.enabled;
            slot = fs_world_set_emitter(s->world, slot, &d, &e);
            if (slot < 0) {
                snprintf(msg, sizeof msg, "emitter: %s", e.msg);
                post(s, c, false, msg, 0);
                break;
            }
        } else if (fs_world_enable_emitter(s->world, slot, c->u.emitter.enabled, &e) != FS_OK) {
            snprintf(msg, sizeof msg, "emitter: %s", e.msg);
            post(s, c, false, msg, 0);
            break;
        }
        post(s, c, true, NULL, slot);
        break;
    }
    case CMD_CURSOR:
        set_cursor(s, c->client, c->u.cursor.visible, c->u.cursor.pos);
        break;
    case CMD_CLIENT_LEFT:
        set_cursor(s, c->client, false, NULL);
        release_all(s, c->client);
        break;
    case CMD_BODY_CREATE:
    case CMD_BODY_DESTROY:
    case CMD_BODY_IMPULSE:
    case CMD_BODY_GRAB:
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE:
        apply_body(s, c);
        break;
    case CMD_GET_BODIES: {
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.client = c->client;
        r.rid = c->rid;
        r.kind = c->kind;
        r.bodies = calloc(1, sizeof *r.bodies);
        r.ok = r.bodies != NULL;
        r.tick = sim_world_tick(s);
        if (r.bodies) {
            r.bodies->tick = r.tick;
            int nb = fs_world_body_count(s->world);
            for (int i = 0; i < nb && r.bodies->count < FS_MAX_BODIES; i++)
                if (fs_world_body_at(s->world, i, &r.bodies->body[r.bodies->count])) {
                    r.bodies->grabbed_by[r.bodies->count] = sim_grab_owner(s, r.bodies->body[r.bodies->count].id);
                    r.bodies->count++;
                }
        } else {
            snprintf(r.error, sizeof r.error, "out of memory");
        }
        post_payload(s, &r);
        break;
    }
    case CMD_GET_PARTICLES: {
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.client = c->client;
        r.rid = c->rid;
        r.kind = c->kind;
        r.snap = snapshot(s, c->u.particles.offset, c->u.particles.limit);
        r.ok = r.snap != NULL;
        if (!r.ok)
            snprintf(r.error, sizeof r.error, "out of memory");
        r.tick = sim_world_tick(s);
        post_payload(s, &r);
        break;
    }
    default:
        post(s, c, false, "command not handled by the simulation", 0);
        break;
    }
}
