/* fleet_mirror.c - a relay's rooms in a fleet (docs/fleet.md, "Relays in a
 * fleet"): a mirror (a room of the relay's directory with a hub and no sim
 * thread, which the bus thread feeds from the room's stream) for each room
 * of the directory that a node has claimed, with the key's public role; a
 * mirror whose key is gone is closed (its viewers are told by the network
 * thread).  When a room's holder or claim changes, its viewers get
 * {type: "status", moved: true, node}: the new holder's first frame is a
 * keyframe of a new epoch, which their decoders take as a scene load.  The
 * relay only reads the bucket. */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>

#include "log.h"
#include "wire.h"

/* The mirror of v's room, made when missing (a reference, or NULL: logged once). */
static room *mirror_of(fleet *f, const fleet_room_view *v) {
    room *r = room_find(f->dir, v->name);
    if (r) return r;
    room_def d = room_default_def();
    d.name = v->name;
    char why[200];
    if (room_open(f->dir, &d, &r, why, sizeof why) != ROOM_OK) {
        log_once("fleet-mirror", "relay: cannot mirror room '%s' of the fleet: %s (logged once)", v->name, why);
        return NULL;
    }
    log_info("relay: room '%s' of the fleet, held by node %u", v->name, (unsigned)v->rec.node);
    return r;
}

static void tell_moved(room *r, const fleet_room_view *v) {
    char text[160];
    snprintf(text, sizeof text, "the room moved to sim node %u", (unsigned)v->rec.node);
    msg_buf *m = wire_encode_moved(v->rec.node, text);
    hub_publish_bcast(room_hub(r), m);
    hub_wake(room_hub(r));
    log_info("relay: room '%s' moved from node %u to node %u (claim %llu)", v->name, (unsigned)v->shown_node,
             (unsigned)v->rec.node, (unsigned long long)v->rec.claim);
}

/* Whether a claimed room of the directory is named name. */
static bool claimed(fleet *f, const char *name) {
    const fleet_room_view *v = fleet_dir_room(f, name);
    return v && v->rec.claim > 0;
}

void fleet_mirror_pass(fleet *f) {
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (!v->rec.claim || !v->rec.node) continue; /* placed and not made yet, or released: no holder streams it */
        room *r = mirror_of(f, v);
        if (!r) continue;
        room_set_mirror_role(r, v->rec.public_role);
        if (v->shown_claim && (v->rec.claim != v->shown_claim || v->rec.node != v->shown_node)) tell_moved(r, v);
        v->shown_claim = v->rec.claim;
        v->shown_node = v->rec.node;
        room_unref(r);
    }
    static _Thread_local room_entry have[FLEET_ROOMS + 1];
    int h = rooms_list(f->dir, have, FLEET_ROOMS + 1);
    for (int i = 0; i < h && i < FLEET_ROOMS + 1; i++) {
        if (!strcmp(have[i].name, ROOMS_DEFAULT) || claimed(f, have[i].name)) continue;
        room *r = room_find(f->dir, have[i].name);
        if (!r) continue;
        room_close(f->dir, have[i].name);
        hub_wake(room_hub(r)); /* its viewers are closed by the network thread */
        room_unref(r);
        log_info("relay: room '%s' is gone from the fleet", have[i].name);
    }
}
