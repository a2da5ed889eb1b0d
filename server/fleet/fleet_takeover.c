/* fleet_takeover.c - a fleet's snapshots and takeovers (docs/fleet.md,
 * "Snapshots", "Claims and leases"): the snapshot each held room's sim
 * thread leaves in its hub every --fleet-save-s written to JetStream and
 * named in the room's key by compare-and-set (so a stale holder's save
 * cannot win); an orphaned room claimed after this node's rank's delay
 * (claim + 1, by compare-and-set on the revision last read), its snapshot
 * read back and checked, and made from it on the maker's thread (from its
 * scene when it has none, or when it does not check); at stop, a last
 * snapshot of every room held. */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"

#define TRY_AGAIN_NS 500000000ull       /* an orphan whose claim failed is tried again no sooner */
#define STOP_SAVE_WAIT_NS 3000000000ull /* at stop, the rooms' last snapshots are waited for this long */

/* Writes doc (taken at tick) as the room's next save: its chunks, then its
 * key naming them, which renews the claim too.  Not past the fence: then
 * another node may hold the room. */
static void save_one(fleet *f, fleet_room_view *v, msg_buf *doc, uint64_t tick, uint64_t now) {
    if (!lease_may_step(v->fence_ns, now)) {
        msg_buf_unref(doc);
        return;
    }
    fleet_snap_manifest man;
    int rc = fleet_snap_write(f, v->name, v->rec.claim, v->rec.snap.save + 1, doc, tick, &man);
    msg_buf_unref(doc);
    if (rc) {
        f->st.saves_failed++;
        return;
    }
    fleet_room_rec rec = v->rec;
    rec.snap = man;
    if (!fleet_renew_with(f, v, &rec)) {
        f->st.saves++;
        return;
    }
    f->st.saves_failed++;
    if (fleet_wrong_revision())
        fleet_lose(f, v, "its snapshot's key update failed on the revision (another node wrote its key)");
}

void fleet_save_pass(fleet *f, uint64_t now) {
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_HELD) continue;
        uint64_t tick = 0;
        msg_buf *doc = hub_take_fleet_snap(room_hub(v->r), &tick);
        if (doc) save_one(f, v, doc, tick, now);
    }
}

void fleet_save_at_stop(fleet *f) {
    if (!f->kv || !f->js) return;
    bool waiting[FLEET_ROOMS] = {false};
    int left = 0;
    const uint64_t t0 = clock_now_ns();
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_HELD || !lease_may_step(v->fence_ns, t0)) continue;
        hub *h = room_hub(v->r);
        sim_stats st;
        hub_get_stats(h, &st);
        if (st.asleep) continue; /* saved when it fell asleep, and unchanged since */
        msg_buf_unref(hub_take_fleet_snap(h, NULL));
        hub_ask_fleet_save(h);
        waiting[i] = true;
        left++;
    }
    while (left && clock_now_ns() - t0 < STOP_SAVE_WAIT_NS) {
        for (int i = 0; i < f->nroom; i++) {
            if (!waiting[i]) continue;
            fleet_room_view *v = &f->room[i];
            uint64_t tick = 0;
            msg_buf *doc = hub_take_fleet_snap(room_hub(v->r), &tick);
            if (!doc) continue;
            hub_set_fence(room_hub(v->r), 1); /* stepped no further here: the next holder starts where this ends */
            save_one(f, v, doc, tick, clock_now_ns());
            log_info("fleet: room '%s' saved at stop (save %llu, tick %llu)", v->name,
                     (unsigned long long)v->rec.snap.save, (unsigned long long)tick);
            waiting[i] = false;
            left--;
        }
        struct timespec ts = {0, 10 * 1000000L};
        nanosleep(&ts, NULL);
    }
    if (left)
        log_warn("fleet: %d room%s not saved at stop (their sim threads did not answer)", left, left == 1 ? "" : "s");
}

/* Claims the orphan v (claim + 1) and hands it to the maker with its
 * snapshot, read back and checked. */
static void take(fleet *f, fleet_room_view *v, uint64_t now) {
    const uint32_t from = v->rec.node;
    fleet_room_rec rec = v->rec;
    rec.node = f->id;
    rec.claim = v->rec.claim + 1;
    rec.error[0] = 0;
    if (fleet_renew_with(f, v, &rec)) {
        f->st.claims_failed++;
        v->next_try_ns = now + TRY_AGAIN_NS;
        log_info("fleet: orphaned room '%s' not claimed here (%s)", v->name,
                 fleet_wrong_revision() ? "another node wrote its key first" : "the broker did not answer");
        return;
    }
    f->st.claims++;
    f->st.takeovers++;
    v->hold = HOLD_TAKING;
    fleet_make job;
    memset(&job, 0, sizeof job);
    memcpy(job.name, v->name, sizeof job.name);
    job.rec = v->rec;
    job.claim = v->rec.claim;
    const fleet_snap_manifest *m = &v->rec.snap;
    if (!m->save) {
        log_warn("fleet: room '%s' orphaned by node %u: taken over here (claim %llu); it has no snapshot yet: it "
                 "starts again from its scene",
                 v->name, (unsigned)from, (unsigned long long)job.claim);
    } else {
        char why[256];
        job.snap = fleet_snap_read(f, v->name, m, why, sizeof why);
        if (job.snap)
            log_info("fleet: room '%s' orphaned by node %u: taken over here (claim %llu) from save %llu (tick %llu, "
                     "%llu bytes in %d chunk%s)",
                     v->name, (unsigned)from, (unsigned long long)job.claim, (unsigned long long)m->save,
                     (unsigned long long)m->tick, (unsigned long long)m->bytes, m->chunks, m->chunks == 1 ? "" : "s");
        else {
            f->st.snaps_refused++;
            log_warn("fleet: room '%s' orphaned by node %u: taken over here (claim %llu); its snapshot (save %llu) is "
                     "refused: %s; it starts again from its scene",
                     v->name, (unsigned)from, (unsigned long long)job.claim, (unsigned long long)m->save, why);
        }
    }
    if (!fleet_maker_ask(f->maker, &job)) { /* not full: checked before the claim, and this thread alone asks */
        msg_buf_unref(job.snap);
        v->hold = HOLD_NONE;
    }
}

void fleet_takeover_pass(fleet *f, uint64_t now) {
    int rank = -1;
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_NONE || !v->rec.claim || now < v->next_try_ns || !lease_orphaned(&v->watch, &f->rule, now))
            continue;
        if (rank < 0) rank = fleet_dir_rank(f, now);
        if (now < lease_takeover_at(&v->watch, &f->rule, rank) || fleet_maker_full(f->maker)) continue;
        take(f, v, now);
    }
}
