/* fleet_claims.c - a fleet's claims (docs/fleet.md, "Claims and leases",
 * "Placement"): POST /api/rooms placed by creating the room's key naming a
 * node; the rooms placed on this node made and claimed, by compare-and-set
 * on the revision last read; their claims renewed every lease/3 and their
 * sim threads fenced at the lease's end less a margin; a room whose renewal
 * fails, or whose fence passed before one, closed here without saving. */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

#define RETRY_NS 100000000ull /* a renewal the broker did not answer is tried again this soon */

void fleet_room_key(const char *name, char *out, size_t cap) {
    snprintf(out, cap, "room.%s", name);
}

/* Whether the broker refused a write for its revision: another node wrote
 * the key since (or deleted it). */
bool fleet_wrong_revision(void) {
    const char *last = nats_GetLastError(NULL);
    return last && strstr(last, "wrong last sequence");
}

bool fleet_kv_may(fleet *f) {
    if (!f->kv_failing) return true;
    if (f->kv_probed) return false;
    f->kv_probed = true;
    return true;
}

void fleet_kv_noted(fleet *f, bool ok) {
    if (ok || fleet_wrong_revision()) {
        f->kv_failing = false;
        f->kv_ok_ns = clock_now_ns();
    } else {
        f->kv_failing = true;
    }
}

/* Writes the room's key at the revision last read: 0 and the new revision
 * in v, or -1. */
static int update(fleet *f, fleet_room_view *v, const fleet_room_rec *rec) {
    char key[64], text[FLEET_DOC_MAX];
    fleet_room_key(v->name, key, sizeof key);
    int len = fleet_room_write(rec, text, sizeof text);
    uint64_t rev = 0;
    if (len < 0) return -1;
    const bool ok = kvStore_Update(&rev, f->kv, key, text, len, v->rev) == NATS_OK;
    fleet_kv_noted(f, ok);
    if (!ok) return -1;
    v->rec = *rec;
    v->rev = rev;
    return 0;
}

/* ---- Placement (the keeper's asks) ---------------------------------------------- */

static void answer(fleet *f, fleet_ask *a, room_status st, uint32_t node, const char *fmt, const char *arg) {
    pthread_mutex_lock(&f->mu);
    a->out.status = st;
    a->out.node = node;
    if (fmt) snprintf(a->out.err, sizeof a->out.err, fmt, a->name, arg ? arg : "");
    a->state = ASK_ANSWERED;
    pthread_cond_broadcast(&f->cv);
    pthread_mutex_unlock(&f->mu);
}

/* A new ask: the room's key created naming the node with the most free
 * budget (the key exists: 409). */
static void send_ask(fleet *f, fleet_ask *a, uint64_t now) {
    if (!f->kv) {
        answer(f, a, ROOM_FULL, 0, "busy: room '%s': the fleet's directory is not reachable%s", NULL);
        return;
    }
    a->rec.node = fleet_dir_place(f, now);
    a->rec.claim = 0;
    if (!a->rec.node) {
        answer(f, a, ROOM_FULL, 0, "busy: room '%s': every live node of the fleet is draining%s", NULL);
        return;
    }
    char key[64], text[FLEET_DOC_MAX];
    fleet_room_key(a->name, key, sizeof key);
    int len = fleet_room_write(&a->rec, text, sizeof text);
    uint64_t rev = 0;
    natsStatus s = len < 0 ? NATS_INVALID_ARG : kvStore_Create(&rev, f->kv, key, text, len);
    if (s != NATS_OK) {
        if (fleet_wrong_revision())
            answer(f, a, ROOM_EXISTS, 0, "a room named '%s' exists in the fleet%s", NULL);
        else
            answer(f, a, ROOM_FULL, 0, "busy: room '%s': the fleet's directory did not take it: %s",
                   natsStatus_GetText(s));
        return;
    }
    log_info("fleet: room '%s' placed on node %u", a->name, (unsigned)a->rec.node);
    a->deadline_ns = now + FLEET_CLAIM_WAIT_NS;
    a->rev = rev;
    pthread_mutex_lock(&f->mu);
    a->state = ASK_SENT;
    pthread_mutex_unlock(&f->mu);
}

/* A placement waiting for its node: claimed, refused, or too late.  Read
 * only from a view of the key at or after the revision it was created at:
 * before the watch shows the create, this node's view of the name may be of
 * the room's previous key (deleted since, a deletion the watch has not shown
 * yet either), whose claim or error is not this placement's answer. */
static void check_sent(fleet *f, fleet_ask *a, uint64_t now) {
    fleet_room_view *v = fleet_dir_room(f, a->name);
    if (v && v->rev < a->rev) v = NULL;
    char key[64];
    fleet_room_key(a->name, key, sizeof key);
    if (v && v->rec.claim >= 1) {
        a->out.room = v->rec.node == f->id ? room_find(f->dir, a->name) : NULL;
        answer(f, a, ROOM_OK, v->rec.node, NULL, NULL);
    } else if (v && v->rec.error[0]) {
        kvStore_Delete(f->kv, key);
        answer(f, a, ROOM_NO_ROOM, v->rec.node, "room '%s': %s", v->rec.error);
    } else if (now >= a->deadline_ns) {
        kvStore_Delete(f->kv, key); /* a claim after this fails on the revision */
        char node[16];
        snprintf(node, sizeof node, "%u", (unsigned)a->rec.node);
        answer(f, a, ROOM_FULL, a->rec.node, "busy: room '%s': its node %s did not claim it within 5 s", node);
    }
}

static void pass_asks(fleet *f, uint64_t now) {
    for (int i = 0; i < FLEET_ASKS; i++) {
        fleet_ask *a = &f->ask[i];
        pthread_mutex_lock(&f->mu);
        fleet_ask_state st = a->state;
        pthread_mutex_unlock(&f->mu);
        if (st == ASK_ASKED)
            send_ask(f, a, now);
        else if (st == ASK_SENT)
            check_sent(f, a, now);
    }
}

/* ---- Making and claiming ----------------------------------------------------------- */

/* Rooms placed on this node and not yet made: to the maker (a node
 * draining refuses them: the placing node answers 503 with why). */
static void start_makes(fleet *f) {
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (v->hold != HOLD_NONE || v->rec.node != f->id || v->rec.claim || v->rec.error[0]) continue;
        if (f->draining) {
            fleet_room_rec rec = v->rec;
            snprintf(rec.error, sizeof rec.error, "node %u is draining: it takes no new room", (unsigned)f->id);
            if (update(f, v, &rec)) log_warn("fleet: room '%s' placed on this draining node, and not told", v->name);
            continue;
        }
        fleet_make job;
        memset(&job, 0, sizeof job);
        memcpy(job.name, v->name, sizeof job.name);
        job.rec = v->rec;
        if (!fleet_maker_ask(f->maker, &job)) return; /* the maker is full: the next pass */
        v->hold = HOLD_MAKING;
    }
}

/* A room taken over made here: held from now (its fence is its claim's, as
 * renewed meanwhile), or closed when the claim was lost meanwhile. */
static void took_made(fleet *f, const fleet_made *m) {
    fleet_room_view *v = fleet_dir_room(f, m->name);
    const bool ours = v && v->hold == HOLD_TAKING && v->rec.node == f->id && v->rec.claim == m->claim;
    if (m->status != ROOM_OK || !ours) {
        if (m->status == ROOM_OK) {
            log_warn("fleet: room '%s' made here but its claim %llu was lost meanwhile; closed", m->name,
                     (unsigned long long)m->claim);
            room_close(f->dir, m->name);
            room_unref(m->room);
        } else {
            log_error("fleet: room '%s' taken over (claim %llu) cannot be made here: %s; it is given up", m->name,
                      (unsigned long long)m->claim, m->err);
        }
        if (ours) v->hold = HOLD_NONE; /* its claim lapses: another node tries */
        return;
    }
    v->hold = HOLD_HELD;
    v->r = m->room;
    sim_stats st; /* as made, before its first step here */
    hub_get_stats(room_hub(v->r), &st);
    hub_set_fence(room_hub(v->r), v->fence_ns);
    log_info("fleet: room '%s' taken over (claim %llu): stepping from tick %llu (simulated time %.4f s)", v->name,
             (unsigned long long)m->claim, (unsigned long long)st.tick, st.sim_time);
}

/* A room made here: claimed (its first holder), or, when the key moved on
 * meanwhile, closed. */
static void claim_made(fleet *f, const fleet_made *m) {
    if (m->claim) {
        took_made(f, m);
        return;
    }
    fleet_room_view *v = fleet_dir_room(f, m->name);
    if (m->status != ROOM_OK) {
        if (v && v->hold == HOLD_MAKING) {
            fleet_room_rec rec = v->rec;
            snprintf(rec.error, sizeof rec.error, "%s", m->err);
            v->hold = HOLD_NONE;
            if (update(f, v, &rec)) log_warn("fleet: room '%s' not made here (%s), and not told", m->name, m->err);
        }
        return;
    }
    fleet_room_rec rec = v ? v->rec : (fleet_room_rec){0};
    rec.claim = v ? v->rec.claim + 1 : 0;
    rec.ms = room_cost_ms(m->room);
    const uint64_t sent = clock_now_ns();
    if (!v || v->hold != HOLD_MAKING || v->rec.node != f->id || v->rec.claim || update(f, v, &rec)) {
        f->st.claims_failed++;
        log_warn("fleet: room '%s' made here but not claimed (its key moved on); closed", m->name);
        room_close(f->dir, m->name);
        room_unref(m->room);
        if (v && v->hold == HOLD_MAKING) v->hold = HOLD_NONE;
        return;
    }
    v->hold = HOLD_HELD;
    v->r = m->room;
    v->fence_ns = lease_fence(&f->rule, sent);
    v->renew_ns = sent + lease_renew_every(&f->rule);
    hub_set_fence(room_hub(v->r), v->fence_ns);
    f->st.claims++;
    log_info("fleet: room '%s' claimed (claim %llu)", v->name, (unsigned long long)rec.claim);
}

/* ---- Renewals ------------------------------------------------------------------------ */

int fleet_renew_with(fleet *f, fleet_room_view *v, const fleet_room_rec *rec) {
    const uint64_t sent = clock_now_ns();
    if (update(f, v, rec)) return -1;
    f->st.renewals++;
    v->fence_ns = lease_fence(&f->rule, sent);
    v->renew_ns = sent + lease_renew_every(&f->rule);
    if (v->r) hub_set_fence(room_hub(v->r), v->fence_ns);
    return 0;
}

static void renew(fleet *f, fleet_room_view *v, uint64_t now) {
    char key[64];
    fleet_room_key(v->name, key, sizeof key);
    if (v->r && !room_listed(f->dir, v->r)) { /* deleted here (DELETE /api/rooms/{room}): out of the directory too */
        kvStore_Delete(f->kv, key);
        fleet_move_drop(v);
        room_unref(v->r);
        v->r = NULL;
        v->hold = HOLD_NONE;
        return;
    }
    if (now < v->renew_ns) return;
    if (!lease_may_step(v->fence_ns, now)) {
        char why[160];
        snprintf(why, sizeof why,
                 "its fence passed %.1f s ago: no renewal, and no heartbeat round all nodes acknowledged "
                 "(paused, or cut off)",
                 (double)(now - v->fence_ns) / 1e9);
        fleet_lose(f, v, why);
        return;
    }
    if (!fleet_kv_may(f)) return; /* the bucket answers no write: one a pass tries */
    fleet_room_rec rec = v->rec;
    if (v->r) rec.ms = room_cost_ms(v->r); /* what a takeover weighs against the taker's budget */
    if (!fleet_renew_with(f, v, &rec)) return;
    f->st.renewals_failed++;
    if (fleet_wrong_revision())
        fleet_lose(f, v, "its renewal failed on the revision (another node wrote its key)");
    else
        v->renew_ns = now + RETRY_NS; /* the broker did not answer: tried again until the fence */
}

void fleet_claims_take_made(fleet *f) {
    fleet_made made[FLEET_MAKER_JOBS];
    int k = fleet_maker_take(f->maker, made, FLEET_MAKER_JOBS);
    for (int i = 0; i < k; i++) claim_made(f, &made[i]);
}

void fleet_claims_pass(fleet *f, uint64_t now) {
    pass_asks(f, now);
    if (!f->kv) return;
    start_makes(f);
    fleet_claims_take_made(f);
    for (int i = 0; i < f->nroom; i++)
        if (fleet_holds(f->room[i].hold)) renew(f, &f->room[i], clock_now_ns());
}

void fleet_put_record(fleet *f) {
    rooms_load load;
    rooms_get_load(f->dir, &load);
    fleet_node_rec rec = {.id = f->id,
                          .budget_ms = load.budget_ms,
                          .used_ms = load.used_ms,
                          .rooms = load.rooms,
                          .clients = load.clients,
                          .cap_rooms = load.cap_rooms};
    snprintf(rec.url, sizeof rec.url, "%s", f->url);
    char key[32], text[FLEET_DOC_MAX];
    snprintf(key, sizeof key, "node.%u", (unsigned)f->id);
    int len = fleet_node_write(&rec, text, sizeof text);
    uint64_t rev;
    if (len < 0 || !fleet_kv_may(f)) return;
    const bool ok = kvStore_Put(&rev, f->kv, key, text, len) == NATS_OK;
    fleet_kv_noted(f, ok);
    if (!ok) {
        log_once("fleet-record", "fleet: cannot put this node's record %s (logged once)", key);
        return;
    }
    if (!f->unseen_ns) f->unseen_ns = clock_now_ns(); /* the watch is to show it back (fleet_dir_stale) */
    f->put_rev = rev;
}
