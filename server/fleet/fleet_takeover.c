/* fleet_takeover.c - a fleet's snapshots and takeovers (docs/fleet.md,
 * "Snapshots", "Claims and leases"): the snapshot each held room's sim
 * thread leaves in its hub every --fleet-save-s written to JetStream and
 * named in the room's key by compare-and-set (so a stale holder's save
 * cannot win; the chunks are written on the saver's thread, fleet_snap.c,
 * the key here); an orphaned room (its claim not renewed for a lease), or a
 * released one (its key names no node: a drain or a stop saved it for the
 * next holder), claimed after this node's rank's delay (claim + 1, by
 * compare-and-set on the revision last read) by a node with room for it in
 * its step budget while one is live (else by the node with the most free
 * budget, past its budget, said in its log and in GET /api/fleet), its
 * snapshot read back and checked, and made from it on the maker's thread
 * (from its scene when it has none, or when it does not check); not while
 * a heartbeat of its holder listed it within alive_quiet_ns (fleet_beat.c). */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"

#define TRY_AGAIN_NS 500000000ull /* an orphan whose claim failed is tried again no sooner */
#define MIN_ROOM_MS 0.5           /* a room whose cost its key does not say yet counts this much */

/* Names the save man in the room's key as rec (which renews the claim): 0,
 * -1 with the room lost when another node wrote its key, -2 when the
 * broker did not take it. */
static int name_save(fleet *f, fleet_room_view *v, const fleet_snap_manifest *man, fleet_room_rec *rec) {
    rec->snap = *man;
    if (v->r) rec->ms = room_cost_ms(v->r);
    if (!fleet_renew_with(f, v, rec)) {
        f->st.saves++;
        return 0;
    }
    f->st.saves_failed++;
    if (!fleet_wrong_revision()) return -2;
    fleet_lose(f, v, "its snapshot's key update failed on the revision (another node wrote its key)");
    return -1;
}

int fleet_save_doc(fleet *f, fleet_room_view *v, const msg_buf *doc, uint64_t tick, fleet_room_rec *rec) {
    fleet_snap_manifest man;
    if (fleet_snap_write(f, v->name, v->rec.claim, v->rec.snap.save + 1, doc, tick, &man)) {
        f->st.saves_failed++;
        return -2;
    }
    return name_save(f, v, &man, rec);
}

/* A save the saver wrote: named in the room's key (which renews the claim
 * too) if the room is still held by the claim it was written for, its
 * fence is ahead (else another node may hold it), and no other save was
 * named since. */
static void saved(fleet *f, const fleet_saved *d, uint64_t now) {
    fleet_room_view *v = fleet_dir_room(f, d->name);
    if (!v || v->saving != d->seq) return; /* gone, or its key is another since */
    v->saving = 0;
    if (!d->ok || v->hold != HOLD_HELD || v->rec.claim != d->claim || v->rec.snap.save + 1 != d->save ||
        !lease_may_step(v->fence_ns, now) || !fleet_kv_may(f)) {
        f->st.saves_failed++;
        return;
    }
    fleet_room_rec rec = v->rec;
    name_save(f, v, &d->man, &rec);
}

void fleet_save_pass(fleet *f, uint64_t now) {
    fleet_saved done[FLEET_SAVER_JOBS];
    const int k = fleet_saver_take(f->saver, done, FLEET_SAVER_JOBS);
    for (int i = 0; i < k; i++) saved(f, &done[i], now);
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_HELD) continue;
        uint64_t tick = 0;
        msg_buf *doc = hub_take_fleet_snap(room_hub(v->r), &tick, NULL);
        if (!doc) continue;
        fleet_save_job job = {
            .seq = f->save_seq + 1, .claim = v->rec.claim, .save = v->rec.snap.save + 1, .tick = tick, .doc = doc};
        memcpy(job.name, v->name, sizeof job.name);
        /* one save of a room at a time, written while its fence is ahead: one
         * that comes meanwhile is dropped (the next comes --fleet-save-s later) */
        if (v->saving || !lease_may_step(v->fence_ns, now) || !fleet_saver_ask(f->saver, &job)) {
            msg_buf_unref(doc);
            continue;
        }
        v->saving = job.seq;
        f->save_seq = job.seq;
    }
}

/* Claims the orphan v (claim + 1) and hands it to the maker with its
 * snapshot, read back and checked before the claim: a snapshot the broker
 * does not give now (a timeout) leaves the room unclaimed, to be tried
 * again, rather than started again from its scene; one that does not check
 * is refused and the room starts from its scene.  The claim is by
 * compare-and-set on the revision the snapshot's manifest was read from. */
static void take(fleet *f, fleet_room_view *v, uint64_t now, bool over) {
    const uint32_t from = v->rec.node;
    char by[48];
    if (from)
        snprintf(by, sizeof by, "orphaned by node %u", (unsigned)from);
    else
        snprintf(by, sizeof by, "released by its holder");
    if (!fleet_kv_may(f)) return; /* the bucket answers no write now */
    const fleet_snap_manifest m = v->rec.snap;
    msg_buf *snap = NULL;
    char why[256] = "";
    if (m.save) {
        bool unread = false;
        snap = fleet_snap_read(f, v->name, &m, &unread, why, sizeof why);
        if (!snap && unread) {
            f->st.claims_failed++;
            v->next_try_ns = now + TRY_AGAIN_NS;
            log_warn("fleet: room '%s' %s: not claimed here now: its snapshot (save %llu) %s", v->name, by,
                     (unsigned long long)m.save, why);
            return;
        }
    }
    fleet_room_rec rec = v->rec;
    rec.node = f->id;
    rec.claim = v->rec.claim + 1;
    rec.error[0] = 0;
    if (fleet_renew_with(f, v, &rec)) {
        msg_buf_unref(snap);
        f->st.claims_failed++;
        v->next_try_ns = now + TRY_AGAIN_NS;
        log_info("fleet: orphaned room '%s' not claimed here (%s)", v->name,
                 fleet_wrong_revision() ? "another node wrote its key first" : "the broker did not answer");
        return;
    }
    f->st.claims++;
    f->st.takeovers++;
    v->hold = HOLD_TAKING;
    v->over_budget = over;
    if (over) {
        f->st.over_budget++;
        log_warn("fleet: room '%s' (%.2f core-ms a tick) taken over here past this node's step budget: no live node "
                 "of the fleet has room for it, and a room is not left unheld",
                 v->name, v->rec.ms);
    }
    fleet_make job;
    memset(&job, 0, sizeof job);
    memcpy(job.name, v->name, sizeof job.name);
    job.rec = v->rec;
    job.claim = v->rec.claim;
    job.snap = snap;
    if (!m.save) {
        log_warn("fleet: room '%s' %s: taken over here (claim %llu); it has no snapshot yet: it starts again from "
                 "its scene",
                 v->name, by, (unsigned long long)job.claim);
    } else if (snap) {
        log_info("fleet: room '%s' %s: taken over here (claim %llu) from save %llu (tick %llu, %llu bytes in %d "
                 "chunk%s)",
                 v->name, by, (unsigned long long)job.claim, (unsigned long long)m.save, (unsigned long long)m.tick,
                 (unsigned long long)m.bytes, m.chunks, m.chunks == 1 ? "" : "s");
    } else {
        f->st.snaps_refused++;
        log_warn("fleet: room '%s' %s: taken over here (claim %llu); its snapshot (save %llu) is refused: %s; it "
                 "starts again from its scene",
                 v->name, by, (unsigned long long)job.claim, (unsigned long long)m.save, why);
    }
    if (!fleet_maker_ask(f->maker, &job)) { /* not full: checked before the claim, and this thread alone asks */
        msg_buf_unref(job.snap);
        v->hold = HOLD_NONE;
    }
}

/* When this node may try to claim v (orphaned or released), or 0: not at
 * all now.  *over: it would hold it past its step budget. */
static uint64_t take_at(fleet *f, const fleet_room_view *v, int rank, uint64_t now, bool *over) {
    const bool released = !v->rec.node;
    if (!released && !lease_orphaned(&v->watch, &f->rule, now)) return 0;
    if (!released && lease_heard(&f->rule, v->heard_ns, now)) return 0; /* its holder's heartbeats list it */
    const uint64_t at =
        released ? lease_released_take_at(&v->watch, &f->rule, rank) : lease_takeover_at(&v->watch, &f->rule, rank);
    const double ms = v->rec.ms > MIN_ROOM_MS ? v->rec.ms : MIN_ROOM_MS;
    *over = !fleet_dir_fits(f, f->id, ms, now);
    /* a node with room for it goes first; past a lease more, anyone (views of the budgets may differ) */
    if (*over && now < at + f->rule.lease_ns && fleet_dir_fits_elsewhere(f, v->rec.node, ms, now)) return 0;
    return at;
}

void fleet_takeover_pass(fleet *f, uint64_t now) {
    if (f->draining) return; /* it takes no room: its rooms go elsewhere */
    int rank = -1;
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_NONE || !v->rec.claim || now < v->next_try_ns) continue;
        if (rank < 0) rank = fleet_dir_rank(f, now);
        bool over = false;
        const uint64_t at = take_at(f, v, rank, now, &over);
        if (!at || now < at || fleet_maker_full(f->maker)) continue;
        take(f, v, now, over);
    }
}
