/* bus_relay.c - a relay's side of the bus: it keeps a mirror of each room of
 * its sim node (a room of its directory with a hub and no sim thread, made
 * and closed as the node's list of rooms says), subscribes to a room's
 * stream while it has viewers of it (the default room's always) and feeds
 * what it hears into that room's hub (its network thread serves viewers
 * from there, as a sim node's does); its clients' messages, each with the
 * client's room and credential (never a role), and each room's frame wants
 * go to the sim node.  A relay of a fleet (--fleet) has no node's list: its
 * mirrors are the fleet's rooms, made and closed by its fleet thread
 * (fleet_mirror.c), and each room's messages go to the room's own command
 * subject, r.<room>.cmd.<relay>, which only the room's holder reads: a room
 * that moves is followed with no action here. */
#include "bus_relay.h"

#include <stdio.h>
#include <string.h>

#include "bus_codec.h"
#include "bus_rest.h"
#include "bus_rooms.h"
#include "command.h"
#include "log.h"
#include "wire.h"

#define WANTS_EVERY_NS 1000000000ull /* the sim node forgets a relay's wants silent for 3 s */
#define REFRESH_EVERY_NS 50000000ull /* the mirrors' list read again */
#define UNWATCHED_NS 5000000000ull   /* a room without viewers this long: its stream unsubscribed */
#define REAP_EVERY_NS 1000000000ull  /* closed mirrors freed */

/* The mirror a room's stream message is for, from its subject (a reference,
 * or NULL: the room is not mirrored, or no longer).  -1 with the reason for
 * a subject that does not name a room. */
static int room_of(bus *b, natsMsg *m, const char *what, room **out, char *err, size_t errlen) {
    char base[BUS_SUBJECT], name[ROOM_NAME_CAP];
    bus_subject(b, "r", base, sizeof base);
    *out = NULL;
    if (bus_subject_room(natsMsg_GetSubject(m), base, what, name, err, errlen)) return -1;
    *out = room_find(b->dir, name);
    return 0;
}

static int take_frames(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "frames", &r, err, errlen)) return -1;
    if (!r) return 0;
    frameset fs;
    int rc = bus_decode_frameset(p, n, &fs, err, errlen);
    if (!rc) {
        hub_publish_frameset(room_hub(r), &fs);
        hub_wake(room_hub(r));
    }
    room_unref(r);
    return rc;
}

static int take_bcast(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "bcast", &r, err, errlen)) return -1;
    if (!r) return 0;
    wire_frame_view v;
    int rc = -1;
    /* a broadcast is passed on as it is, once it reads as a message */
    if (n > BUS_MAX_MSG)
        snprintf(err, errlen, "too large");
    else if (!(rc = wire_read_message(p, n, &v, err, errlen))) {
        hub_publish_bcast(room_hub(r), msg_buf_from_bytes(p, n));
        hub_wake(room_hub(r));
    }
    room_unref(r);
    return rc;
}

static int take_info(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "info", &r, err, errlen)) return -1;
    if (!r) return 0;
    world_info wi, old;
    int rc = bus_decode_info(p, n, &wi, err, errlen);
    /* a room's description waits for its public role (the rooms' list): a hello carries both */
    if (!rc && atomic_load(&b->heard_rooms)) {
        hub_get_info(room_hub(r), &old);
        hub_set_info(room_hub(r), &wi);
        if (!old.version) hub_wake(room_hub(r)); /* clients waiting for their hello */
    }
    room_unref(r);
    return rc;
}

static int take_stats(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "stats", &r, err, errlen)) return -1;
    if (!r) return 0;
    sim_stats st;
    int rc = bus_decode_stats(p, n, &st, err, errlen);
    if (!rc) hub_set_stats(room_hub(r), &st);
    room_unref(r);
    return rc;
}

/* r.<room>.obst: the room's obstacles.  The list (for a hello) is passed on
 * as it is once it reads as a message; each obstacle keeps the mesh this
 * room already holds of its hash, and one larger than the bus carries is
 * marked so (never asked for: its GET answers 501). */
static int take_obst(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "obst", &r, err, errlen)) return -1;
    if (!r) return 0;
    bus_obstacles o;
    wire_frame_view v;
    int rc = bus_decode_obstacles(p, n, &o, err, errlen);
    if (!rc) rc = wire_read_message(o.list, o.list_len, &v, err, errlen);
    if (!rc) {
        hub *h = room_hub(r);
        hub_obstacle held[FS_MAX_OBSTACLES], now[FS_MAX_OBSTACLES];
        const int k = hub_get_obstacles(h, held, FS_MAX_OBSTACLES);
        const uint64_t room_for = (uint64_t)natsConnection_GetMaxPayload(b->nc);
        for (int i = 0; i < o.count; i++) {
            now[i] = (hub_obstacle){.id = o.id[i], .hash = o.hash[i], .too_big = o.bytes[i] + 64ull > room_for};
            for (int j = 0; j < k && !now[i].mesh && !now[i].too_big; j++)
                if (held[j].mesh && held[j].hash == o.hash[i]) now[i].mesh = msg_buf_ref(held[j].mesh);
        }
        for (int j = 0; j < k; j++) msg_buf_unref(held[j].mesh);
        hub_set_obstacles(h, msg_buf_from_bytes(o.list, o.list_len), now, o.count);
    }
    room_unref(r);
    return rc;
}

/* r.<room>.omesh: an obstacle's mesh (checked, its hash its own), kept for
 * every listed obstacle of that hash that lacks it, within the relay's
 * budget for meshes. */
static int take_omesh(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    room *r;
    if (room_of(b, m, "omesh", &r, err, errlen)) return -1;
    if (!r) return 0;
    uint32_t id;
    uint64_t hash;
    const uint8_t *mesh;
    size_t len;
    int rc = bus_decode_obstacle_mesh(p, n, &id, &hash, &mesh, &len, err, errlen);
    if (!rc && atomic_load(&b->mesh_bytes) + len <= BUS_RELAY_MESH_BYTES) {
        msg_buf *mb = msg_buf_from_bytes(mesh, len);
        if (mb && hub_fill_obstacle_mesh(room_hub(r), hash, mb) > 0) atomic_fetch_add(&b->mesh_bytes, len);
        msg_buf_unref(mb);
    }
    room_unref(r);
    return rc;
}

static int take_reply(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    cmd_reply rep;
    char name[ROOM_NAME_CAP];
    if (bus_decode_reply(p, n, &rep, name, err, errlen)) return -1;
    if (cmd_client_relay(rep.client) != b->relay_id) {
        snprintf(err, errlen, "a reply for another relay's client");
        return -1;
    }
    room *r = room_find(b->dir, name);
    if (!r) return 0; /* its room was closed here: its clients are gone */
    hub_post_reply(room_hub(r), &rep);
    hub_wake(room_hub(r));
    room_unref(r);
    return 0;
}

/* Whether name is one of the k entries. */
static bool among(const bus_room_entry *e, int k, const char *name) {
    for (int i = 0; i < k; i++)
        if (!strcmp(e[i].name, name)) return true;
    return false;
}

/* fluid.<world>.rooms: the node's rooms.  A mirror is made for each room
 * that has none (so /r/{name}/ and /api/rooms/{name}/ find it), each
 * mirror takes its room's public role, and a mirror whose room is gone is
 * closed (its viewers are told: the network thread sees it closed). */
static int take_rooms(bus *b, natsMsg *m, const uint8_t *p, size_t n, char *err, size_t errlen) {
    (void)m;
    static _Thread_local bus_room_entry e[BUS_MAX_ROOMS];
    static _Thread_local room_entry have[BUS_MAX_ROOMS];
    int k;
    if (bus_decode_rooms(p, n, e, BUS_MAX_ROOMS, &k, err, errlen)) return -1;
    for (int i = 0; i < k; i++) {
        room *r = room_find(b->dir, e[i].name);
        if (!r) {
            room_def d = room_default_def();
            d.name = e[i].name;
            char why[200];
            if (room_open(b->dir, &d, &r, why, sizeof why) != ROOM_OK) {
                log_once("mirror", "relay: cannot mirror room '%s': %s (logged once)", e[i].name, why);
                continue;
            }
        }
        room_set_mirror_role(r, e[i].public_role);
        room_unref(r);
    }
    int h = rooms_list(b->dir, have, BUS_MAX_ROOMS);
    for (int i = 0; i < h && i < BUS_MAX_ROOMS; i++) {
        if (among(e, k, have[i].name) || !strcmp(have[i].name, ROOMS_DEFAULT)) continue;
        room *r = room_find(b->dir, have[i].name);
        if (!r) continue;
        room_close(b->dir, have[i].name);
        hub_wake(room_hub(r)); /* its viewers are closed by the network thread */
        room_unref(r);
        log_info("relay: room '%s' is gone from the sim node", have[i].name);
    }
    atomic_store(&b->heard_rooms, true);
    return 0;
}

int bus_relay_subscribe(bus *b, char *err, size_t errlen) {
    const bus_route routes[] = {{.leaf = "rooms", .what = "rooms", .take = take_rooms},
                                {.leaf = b->reply_leaf, .what = "reply", .take = take_reply}};
    static const bus_route streams[BUS_ROOM_SUBS] = {{.leaf = "frames", .what = "frames", .take = take_frames},
                                                     {.leaf = "bcast", .what = "bcast", .take = take_bcast},
                                                     {.leaf = "info", .what = "info", .take = take_info},
                                                     {.leaf = "stats", .what = "stats", .take = take_stats},
                                                     {.leaf = "obst", .what = "obstacles", .take = take_obst},
                                                     {.leaf = "omesh", .what = "obstacle mesh", .take = take_omesh}};
    for (int j = 0; j < BUS_ROOM_SUBS; j++)
        if (!b->room_route[j].take) b->room_route[j] = streams[j]; /* set once (callbacks may still read them) */
    if (b->fleet) { /* the rooms and their public roles are the directory's */
        atomic_store(&b->heard_rooms, true);
        if (bus_subscribe(b, routes + 1, 1, err, errlen)) return -1;
        return bus_rest_subscribe(b, err, errlen); /* the answers to REST writes sent to rooms' holders */
    }
    return bus_subscribe(b, routes, 2, err, errlen);
}

static void unsubscribe_room(bus *b, bus_room *br) {
    (void)b;
    for (int j = 0; j < BUS_ROOM_SUBS; j++) {
        if (!br->sub[j]) continue;
        natsSubscription_Unsubscribe(br->sub[j]);
        natsSubscription_Destroy(br->sub[j]);
        br->sub[j] = NULL;
    }
    br->subscribed = false;
}

static void subscribe_room(bus *b, bus_room *br) {
    char leaf[BUS_SUBJECT], why[200] = "";
    for (int j = 0; j < BUS_ROOM_SUBS; j++) {
        bus_room_leaf(br->name, b->room_route[j].leaf, leaf, sizeof leaf);
        if (bus_subscribe_one(b, &b->room_route[j], leaf, &br->sub[j], why, sizeof why)) {
            log_once("room-sub", "relay: %s (retrying)", why);
            unsubscribe_room(b, br);
            return;
        }
    }
    br->subscribed = true;
}

/* A room's stream is listened to while it has viewers here (the default
 * room's always), and for UNWATCHED_NS after the last one left; then its
 * description is forgotten, so that the next viewer's hello waits for a
 * fresh one. */
static void follow_room(bus *b, bus_room *br, const frame_wants *w, uint64_t now) {
    bool want = (br->r == b->home && !b->fleet) || w->clients > 0; /* a fleet's nodes keep theirs off the bus */
    br->unwatched_ns = want ? 0 : br->unwatched_ns ? br->unwatched_ns : now;
    if (want && !br->subscribed && b->subscribed) subscribe_room(b, br);
    if (!want && br->subscribed && now - br->unwatched_ns > UNWATCHED_NS) {
        unsubscribe_room(b, br);
        world_info none;
        memset(&none, 0, sizeof none);
        hub_set_info(room_hub(br->r), &none);
        hub_set_obstacles(room_hub(br->r), NULL, NULL, 0); /* its meshes too */
    }
}

/* The meshes a followed room's obstacles lack, asked of the sim node (again
 * each second while they are missing, within the relay's budget); adds the
 * bytes the room holds to *held. */
static void ask_meshes(bus *b, bus_room *br, uint64_t now, uint64_t *held) {
    hub_obstacle ho[FS_MAX_OBSTACLES];
    uint32_t ids[FS_MAX_OBSTACLES];
    int k = hub_get_obstacles(room_hub(br->r), ho, FS_MAX_OBSTACLES), nw = 0;
    for (int i = 0; i < k; i++) {
        if (ho[i].mesh)
            *held += ho[i].mesh->len;
        else if (!ho[i].too_big)
            ids[nw++] = ho[i].id;
        msg_buf_unref(ho[i].mesh);
    }
    if (!nw || !br->subscribed || now - br->mesh_asked_ns < 1000000000ull ||
        atomic_load(&b->mesh_bytes) >= BUS_RELAY_MESH_BYTES)
        return;
    msg_buf *m = bus_encode_mesh_wants(b->relay_id, br->name, ids, nw);
    bus_publish(b, b->omesh_leaf, m);
    msg_buf_unref(m);
    br->mesh_asked_ns = now;
}

/* A room's clients' messages, to the sim node (in a fleet, to the room's holder). */
static void forward_room(bus *b, bus_room *br) {
    hub_forward_msg fm[64];
    char leaf[BUS_SUBJECT];
    if (b->fleet)
        bus_room_leaf(br->name, b->cmd_leaf, leaf, sizeof leaf); /* r.<room>.cmd.<relay> */
    else
        snprintf(leaf, sizeof leaf, "%s", b->cmd_leaf);
    int k;
    while ((k = hub_take_forwards(room_hub(br->r), fm, 64)) > 0)
        for (int i = 0; i < k; i++) {
            bus_forward f = {.relay = b->relay_id, .client = fm[i].client};
            f.kind = fm[i].what == HUB_FWD_LEFT      ? BUS_FWD_LEFT
                     : fm[i].what == HUB_FWD_CHECK   ? BUS_FWD_AUTH
                     : (fm[i].client & CMD_REST_BIT) ? BUS_FWD_REST
                                                     : BUS_FWD_WS;
            snprintf(f.room, sizeof f.room, "%s", br->name);
            if (fm[i].cred && fm[i].cred->len <= BUS_MAX_CRED) {
                f.cred = fm[i].cred->data;
                f.cred_len = fm[i].cred->len;
            }
            if (fm[i].msg) {
                f.bytes = fm[i].msg->data;
                f.len = fm[i].msg->len;
            }
            msg_buf *m = bus_encode_forward(&f);
            bus_publish(b, leaf, m);
            msg_buf_unref(m);
            msg_buf_unref(fm[i].msg);
            msg_buf_unref(fm[i].cred);
        }
}

void bus_relay_pass(bus *b, uint64_t now) {
    if (!b->nroom || now - b->last_refresh_ns > REFRESH_EVERY_NS) {
        bus_rooms_refresh(b, NULL, unsubscribe_room);
        b->last_refresh_ns = now;
    }
    /* each room's wants: those with viewers, and those changed since told (a room's last viewer left) */
    int k = 0;
    bool changed = false;
    uint64_t held = 0;
    for (int i = 0; i < b->nroom; i++) {
        bus_room *br = &b->room[i];
        forward_room(b, br);
        frame_wants w;
        hub_get_frame_wants(room_hub(br->r), &w);
        follow_room(b, br, &w, now);
        ask_meshes(b, br, now, &held);
        bool news = !br->told_any || memcmp(&w, &br->told, sizeof w);
        if (w.clients > 0 || news) {
            memcpy(b->wants[k].room, br->name, sizeof br->name); /* (both ROOM_NAME_CAP, terminated) */
            b->wants[k++].w = w;
        }
        changed = changed || news;
        br->told = w;
        br->told_any = true;
    }
    atomic_store(&b->mesh_bytes, held);
    if (changed || now - b->last_wants_ns > WANTS_EVERY_NS) {
        msg_buf *m = bus_encode_wants(b->relay_id, b->wants, k);
        bus_publish(b, b->wants_leaf, m);
        msg_buf_unref(m);
        b->last_wants_ns = now;
    }
    if (now - b->last_reap_ns > REAP_EVERY_NS) {
        rooms_reap(b->dir); /* mirrors closed and no longer held (no sim thread to join) */
        b->last_reap_ns = now;
    }
    if (b->fleet) bus_rest_pass(b, HTTP_MAIL_RING);
}

void bus_relay_end(bus *b) {
    bus_rooms_clear(b, unsubscribe_room);
}
