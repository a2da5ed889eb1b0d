/* apply_probes.c - the probe commands (apply_probes.h): the world checks
 * the definition (name, position in its box, normal, size) and refuses
 * with its reason; a taken name is a conflict. */
#include "apply_probes.h"

#include <stdio.h>
#include <string.h>

#include "publish.h"

void apply_probe_add(sim_thread *s, const cmd *c) {
    fs_probe_def d;
    memset(&d, 0, sizeof d);
    snprintf(d.name, sizeof d.name, "%s", c->u.probe.name);
    d.kind = (fs_probe_kind)c->u.probe.kind;
    d.pos = (fs_vec3){c->u.probe.pos[0], c->u.probe.pos[1], c->u.probe.pos[2]};
    d.normal = (fs_vec3){c->u.probe.normal[0], c->u.probe.normal[1], c->u.probe.normal[2]};
    d.size = c->u.probe.radius;
    if (fs_world_probe_find(s->world, d.name) >= 0) {
        sim_reply_error(s, c, RC_CONFLICT, "probe '%s' exists already (DELETE /api/probes/%s first)", d.name, d.name);
        return;
    }
    fs_error e;
    int i = fs_world_add_probe(s->world, &d, &e);
    if (i < 0) {
        sim_reply_error(s, c, RC_BAD_REQUEST, "%s", e.msg);
        return;
    }
    sim_reply_ok(s, c, i);
}

void apply_probe_remove(sim_thread *s, const cmd *c) {
    if (!fs_world_remove_probe(s->world, c->u.probe.name)) {
        sim_reply_error(s, c, RC_NOT_FOUND, "unknown probe '%s' (GET /api/probes lists them)", c->u.probe.name);
        return;
    }
    sim_reply_ok(s, c, 0);
}
