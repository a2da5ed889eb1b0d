/* apply_bodies.c - the rigid-body commands and who holds which body (see apply_bodies.h). */
#include "apply_bodies.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "apply_mesh.h"
#include "hub.h"
#include "publish.h"

uint32_t sim_grab_owner(const sim_thread *s, uint32_t body) {
    for (int i = 0; i < s->grab_count; i++)
        if (s->grab[i].body == body) return s->grab[i].client;
    return 0;
}

static void grab_forget(sim_thread *s, uint32_t body) {
    for (int i = 0; i < s->grab_count; i++)
        if (s->grab[i].body == body) {
            s->grab[i] = s->grab[--s->grab_count];
            return;
        }
}

void sim_release_all(sim_thread *s, uint32_t client) {
    for (int i = s->grab_count - 1; i >= 0; i--)
        if (s->grab[i].client == client) {
            fs_world_body_release(s->world, s->grab[i].body, NULL);
            s->grab[i] = s->grab[--s->grab_count];
        }
}

void sim_forget_grabs(sim_thread *s) {
    s->grab_count = 0;
}

/* True when the body the command names exists; else replies the error. */
static bool known_body(sim_thread *s, const cmd *c) {
    if (fs_world_body_get(s->world, c->u.body.id, &(fs_body_state){0})) return true;
    sim_reply_error(s, c, RC_NOT_FOUND, "unknown body %u", (unsigned)c->u.body.id);
    return false;
}

/* True when the body exists and no other client holds it; else replies the
 * error.  *owner: who holds it (0: nobody). */
static bool free_body(sim_thread *s, const cmd *c, uint32_t *owner) {
    if (!known_body(s, c)) return false;
    *owner = sim_grab_owner(s, c->u.body.id);
    if (*owner && *owner != c->client) {
        sim_reply_error(s, c, RC_CONFLICT, "body %u is held by client %u", (unsigned)c->u.body.id, (unsigned)*owner);
        return false;
    }
    return true;
}

/* True when the body exists and this client holds it; else replies the error. */
static bool held_body(sim_thread *s, const cmd *c) {
    if (!known_body(s, c)) return false;
    if (sim_grab_owner(s, c->u.body.id) != c->client) {
        sim_reply_error(s, c, RC_CONFLICT, "body %u is not held by you (grab it first)", (unsigned)c->u.body.id);
        return false;
    }
    return true;
}

/* A pointer ray may aim outside the tank: pull towards the nearest point
 * inside it instead. */
static fs_vec3 target_in_box(const sim_thread *s, const cmd *c) {
    fs_domain dom = fs_world_domain(s->world);
    fs_vec3 v = cmd_vec3(c->u.body.vec);
    v.x = fminf(fmaxf(v.x, dom.box_min.x), dom.box_max.x);
    v.y = fminf(fmaxf(v.y, dom.box_min.y), dom.box_max.y);
    v.z = fminf(fmaxf(v.z, dom.box_min.z), dom.box_max.z);
    return v;
}

void apply_body_create(sim_thread *s, const cmd *c) {
    fs_body_def d = fs_default_body_def();
    d.shape = (fs_shape)c->u.body_create.shape;
    d.size = cmd_vec3(c->u.body_create.size);
    d.pos = cmd_vec3(c->u.body_create.pos);
    d.rot =
        (fs_quat){c->u.body_create.rot[0], c->u.body_create.rot[1], c->u.body_create.rot[2], c->u.body_create.rot[3]};
    d.vel = cmd_vec3(c->u.body_create.vel);
    d.ang_vel = cmd_vec3(c->u.body_create.ang_vel);
    if (c->u.body_create.has_density) d.density = c->u.body_create.density;
    if (c->u.body_create.has_friction) d.friction = c->u.body_create.friction;
    d.is_static = c->u.body_create.is_static;
    fs_domain dom = fs_world_domain(s->world);
    if (d.pos.x < dom.box_min.x || d.pos.x > dom.box_max.x || d.pos.y < dom.box_min.y || d.pos.y > dom.box_max.y ||
        d.pos.z < dom.box_min.z || d.pos.z > dom.box_max.z) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "'pos' (%g, %g, %g) is outside the world box (%g..%g, %g..%g, %g..%g)",
                        (double)d.pos.x, (double)d.pos.y, (double)d.pos.z, (double)dom.box_min.x, (double)dom.box_max.x,
                        (double)dom.box_min.y, (double)dom.box_max.y, (double)dom.box_min.z, (double)dom.box_max.z);
        return;
    }
    /* a mesh body: the stored mesh, read under a reference (the core copies it) */
    hub_mesh *m = NULL;
    fs_mesh mesh;
    if (d.shape == FS_SHAPE_MESH) {
        m = apply_stored_mesh(s, c, c->u.body_create.mesh);
        if (!m) return;
        mesh = hub_mesh_view(m);
        d.mesh = &mesh;
        d.scale = c->u.body_create.scale;
    }
    fs_error e = {{0}};
    int64_t nid = fs_world_create_body(s->world, &d, &e);
    hub_mesh_unref(m);
    sim_reply_status(s, c, nid >= 0 ? FS_OK : FS_ERR_ARG, &e, nid); /* -1: the definition, or no room */
}

void apply_body_destroy(sim_thread *s, const cmd *c) {
    uint32_t owner;
    if (!free_body(s, c, &owner)) return;
    fs_world_destroy_body(s->world, c->u.body.id);
    grab_forget(s, c->u.body.id);
    sim_reply_ok(s, c, c->u.body.id);
}

void apply_body_impulse(sim_thread *s, const cmd *c) {
    if (!known_body(s, c)) return;
    fs_error e = {{0}};
    fs_status st =
        fs_world_body_impulse(s->world, c->u.body.id, cmd_vec3(c->u.body.point), cmd_vec3(c->u.body.vec), &e);
    sim_reply_status(s, c, st, &e, c->u.body.id);
}

void apply_body_grab(sim_thread *s, const cmd *c) {
    uint32_t owner;
    if (!free_body(s, c, &owner)) return;
    fs_error e = {{0}};
    fs_status st = fs_world_body_grab(s->world, c->u.body.id, cmd_vec3(c->u.body.point), target_in_box(s, c), &e);
    if (st == FS_OK && !owner && s->grab_count < FS_MAX_BODIES) {
        s->grab[s->grab_count].body = c->u.body.id;
        s->grab[s->grab_count++].client = c->client;
    }
    sim_reply_status(s, c, st, &e, c->u.body.id);
}

void apply_body_drag(sim_thread *s, const cmd *c) {
    if (!held_body(s, c)) return;
    fs_error e = {{0}};
    fs_status st = fs_world_body_drag(s->world, c->u.body.id, target_in_box(s, c), &e);
    sim_reply_status(s, c, st, &e, c->u.body.id); /* only a failure is answered */
}

void apply_body_release(sim_thread *s, const cmd *c) {
    if (!held_body(s, c)) return;
    fs_error e = {{0}};
    fs_status st = fs_world_body_release(s->world, c->u.body.id, &e);
    grab_forget(s, c->u.body.id);
    sim_reply_status(s, c, st, &e, c->u.body.id);
}

void apply_get_bodies(sim_thread *s, const cmd *c) {
    cmd_reply r = sim_reply_to(s, c);
    r.bodies = calloc(1, sizeof *r.bodies);
    r.ok = r.bodies != NULL;
    if (r.bodies) {
        r.bodies->tick = r.tick;
        int nb = fs_world_body_count(s->world);
        for (int i = 0; i < nb && r.bodies->count < FS_MAX_BODIES; i++)
            if (fs_world_body_at(s->world, i, &r.bodies->body[r.bodies->count])) {
                r.bodies->grabbed_by[r.bodies->count] = sim_grab_owner(s, r.bodies->body[r.bodies->count].id);
                r.bodies->count++;
            }
    } else {
        cmd_reply_refuse(&r, RC_INTERNAL, "out of memory");
    }
    sim_reply_post(s, &r);
}
