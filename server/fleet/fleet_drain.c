/* fleet_drain.c - draining a node of a fleet (docs/fleet.md, "Draining"):
 * POST /api/fleet/nodes/{id}/drain at any node of the fleet leaves the ask
 * in the default room's hub, and that node's fleet thread writes the key
 * drain.<id> into the directory, which every node watches: the drained node
 * takes no new room and no orphan, and no node places a room on it or
 * counts it in a takeover's ranks.  The drained node moves each room it
 * holds (so does a node that stops): it asks the room's sim thread for its
 * last save, which the sim thread takes at a tick boundary and after which
 * it steps and applies nothing (the room is parked); the save is written to
 * JetStream and the room's key updated, by compare-and-set, to name the
 * save and no node (released); the node with the most free budget claims it
 * at once (claim + 1, fleet_takeover.c) and steps it from exactly that
 * save, so no simulated time is lost and none is stepped twice.  A node
 * that starts deletes its own drain key: it was drained to be updated.
 * DELETE /api/fleet/nodes/{id}/drain deletes the key the same way: the node
 * takes rooms again; a move already started (its last save asked for)
 * finishes, and no room moves back. */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"

void fleet_drain_asks(fleet *f) {
    uint32_t id;
    bool put;
    if (!f->kv || !hub_take_drain(f->home, &id, &put)) return; /* one a pass */
    char key[32], text[64];
    snprintf(key, sizeof key, "drain.%u", (unsigned)id);
    int len = snprintf(text, sizeof text, "{\"node\":%u,\"by\":%u}", (unsigned)id, (unsigned)f->id);
    uint64_t rev = 0;
    if ((put ? kvStore_Put(&rev, f->kv, key, text, len) : kvStore_Delete(f->kv, key)) != NATS_OK) {
        log_warn("fleet: cannot %s %s %s the directory (tried again)", put ? "write" : "delete", key,
                 put ? "into" : "from");
        hub_ask_drain(f->home, id, put, false);
        return;
    }
    if (put)
        log_info("fleet: node %u asked to drain (%s written)", (unsigned)id, key);
    else
        log_info("fleet: node %u's drain cancelled (%s deleted)", (unsigned)id, key);
}

/* Asks v's sim thread for its last save (an older one not taken is dropped:
 * the save taken for the move is the one marked last). */
static void start_move(fleet_room_view *v) {
    hub *h = room_hub(v->r);
    msg_buf_unref(hub_take_fleet_snap(h, NULL, NULL));
    hub_ask_fleet_save(h, true);
    v->hold = HOLD_MOVING;
}

/* A moving room: its last save taken when there, written and its key
 * released; then it is closed here (at stop it stays listed, parked, for
 * the server's stop).  True when done with (released, or lost); false while
 * it waits (for its save, or for the broker). */
static bool move_one(fleet *f, fleet_room_view *v, uint64_t now, bool at_stop) {
    if (!v->move_doc) {
        bool last = false;
        uint64_t tick = 0;
        msg_buf *doc = hub_take_fleet_snap(room_hub(v->r), &tick, &last);
        if (doc && !last) msg_buf_unref(doc); /* a periodic save that came before the ask: the last one follows */
        if (!doc || !last) return false;
        v->move_doc = doc;
        v->move_tick = tick;
    }
    if (!lease_may_step(v->fence_ns, now)) { /* another node may hold it now: its move is over */
        fleet_move_drop(v);
        fleet_lose(f, v, "its lease ran out before it was released (the broker did not take its last save)");
        return true;
    }
    if (v->saving) return false; /* a periodic save is being written: its chunks' slot is this one's */
    fleet_room_rec rec = v->rec;
    rec.node = 0; /* released: the next holder claims it at once */
    const uint64_t save = v->rec.snap.save + 1, tick = v->move_tick;
    const int rc = fleet_save_doc(f, v, v->move_doc, tick, &rec);
    if (rc == -2) return false; /* the broker did not take it: tried again on the next pass */
    fleet_move_drop(v);
    if (rc) return true; /* lost (logged) */
    f->st.handed++;
    v->hold = HOLD_NONE;
    if (at_stop) {
        log_info("fleet: room '%s' saved at stop (save %llu, tick %llu) and released", v->name,
                 (unsigned long long)save, (unsigned long long)tick);
        return true; /* its reference goes with the fleet (fleet_destroy) */
    }
    log_info("fleet: room '%s' released at tick %llu (save %llu) for the next holder", v->name,
             (unsigned long long)tick, (unsigned long long)save);
    room_close(f->dir, v->name);
    room_unref(v->r);
    v->r = NULL;
    return true;
}

void fleet_drain_pass(fleet *f, uint64_t now) {
    bool others = true;
    if (f->draining) {
        others = fleet_dir_other_live(f, now);
        if (!others)
            log_once("fleet-drain-alone",
                     "fleet: node %u is draining but no other live node of the fleet takes rooms: its rooms stay here "
                     "until one does (logged once)",
                     (unsigned)f->id);
    }
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (f->draining && others && v->hold == HOLD_HELD) start_move(v);
        if (v->hold == HOLD_MOVING) move_one(f, v, now, false);
    }
}

void fleet_move_all(fleet *f, uint64_t wait_ns) {
    if (!f->kv || !f->js) return;
    const uint64_t t0 = clock_now_ns();
    int left = 1;
    while (left && clock_now_ns() - t0 < wait_ns) {
        left = 0;
        /* a room taken over and being made as the server stops: held once made, then moved too */
        fleet_claims_take_made(f);
        for (int i = 0; i < f->nroom; i++) {
            fleet_room_view *v = &f->room[i];
            const uint64_t now = clock_now_ns();
            if (v->hold == HOLD_TAKING) {
                left++;
                continue;
            }
            if (v->hold == HOLD_HELD && lease_may_step(v->fence_ns, now)) start_move(v);
            if (v->hold != HOLD_MOVING) continue;
            if (move_one(f, v, now, true)) continue;
            left++;
            fleet_room_rec rec = v->rec; /* the fleet thread is joined: the renewals are this loop's */
            if (now >= v->renew_ns && fleet_renew_with(f, v, &rec) && fleet_wrong_revision())
                fleet_lose(f, v, "its renewal failed on the revision (another node wrote its key)");
        }
        struct timespec ts = {0, 10 * 1000000L};
        if (left) nanosleep(&ts, NULL);
    }
    if (left)
        log_warn("fleet: %d room%s not saved at stop (their sim threads or the broker did not answer)", left,
                 left == 1 ? "" : "s");
}
