/* fleet_beat.c - a fleet's heartbeats (docs/fleet.md, "A broker that is a
 * cluster"; the messages: fleet_alive.h; the rule: lease.h).  A bucket
 * whose stream lost its leader takes no write until the cluster elects
 * another (4-9 s), longer than a claim's lease: without more, every holder
 * would stop its rooms and every room would be taken over.  Core NATS needs
 * no leader, so over it:
 * - a node that holds rooms publishes, every alive_every_ns, a numbered
 *   round listing them on fluid.<fleet>.alive.<id>;
 * - every other node notes the instant it heard each listed room, and
 *   acknowledges the round on fluid.<fleet>.ack.<holder>.<id>, unless it
 *   holds one of those rooms itself (then it is its claim, and the
 *   heartbeat's holder must not step on);
 * - when every other node that was live before the bucket stopped taking
 *   writes has acknowledged a round, the holder's fences move to the
 *   round's sending plus alive_keep_ns (never back); the last
 *   FLEET_BEAT_ROUNDS rounds wait at once (an acknowledgement may come
 *   after the next round is sent: its node's thread waited on the bucket);
 * - a node claims an orphan only alive_quiet_ns after it last heard a
 *   heartbeat listing it (fleet_takeover.c), later than any fence a round
 *   it acknowledged can give.
 * A node alone in its view (no other node to acknowledge) gets no
 * extension: a holder cut off from everyone stops at its fence as before. */
#include "fleet_link.h"

#include <stdio.h>
#include <string.h>

#include "fleet_alive.h"
#include "log.h"

#define BEAT_READ_MAX 256 /* messages read from each subscription a pass */
#define BEAT_PENDING_MSGS 4096
#define BEAT_PENDING_BYTES (8 * 1024 * 1024)

/* The id that ends subj (the sender's: the broker's permissions bind it),
 * or 0. */
static uint32_t last_id(const char *subj) {
    const char *dot = subj ? strrchr(subj, '.') : NULL;
    if (!dot || !dot[1] || dot[1] == '0' || strlen(dot + 1) > 5) return 0;
    uint32_t id = 0;
    for (const char *p = dot + 1; *p; p++) {
        if (*p < '0' || *p > '9') return 0;
        id = id * 10 + (uint32_t)(*p - '0');
    }
    return id <= FLEET_NODE_MAX ? id : 0;
}

static int subscribe(fleet *f, natsSubscription **sub, const char *subj) {
    natsStatus s = natsConnection_SubscribeSync(sub, f->nc, subj);
    if (s == NATS_OK) s = natsSubscription_SetPendingLimits(*sub, BEAT_PENDING_MSGS, BEAT_PENDING_BYTES);
    if (s == NATS_OK) return 0;
    log_once("fleet-beat-sub", "fleet: cannot subscribe to %s: %s (logged once)", subj, natsStatus_GetText(s));
    natsSubscription_Destroy(*sub);
    *sub = NULL;
    return -1;
}

int fleet_beat_setup(fleet *f) {
    char subj[96];
    snprintf(subj, sizeof subj, "fluid.%s.alive.*", f->cfg->fleet);
    if (!f->beat_sub && subscribe(f, &f->beat_sub, subj)) return -1;
    snprintf(subj, sizeof subj, "fluid.%s.ack.%u.*", f->cfg->fleet, (unsigned)f->id);
    if (!f->ack_sub && subscribe(f, &f->ack_sub, subj)) return -1;
    return 0;
}

void fleet_beat_close(fleet *f) {
    natsSubscription_Destroy(f->beat_sub);
    natsSubscription_Destroy(f->ack_sub);
    f->beat_sub = f->ack_sub = NULL;
}

/* Another node's heartbeat: its rooms heard now, and acknowledged unless
 * this node holds one of them. */
static void hear(fleet *f, natsMsg *m, uint64_t now) {
    const uint32_t from = last_id(natsMsg_GetSubject(m));
    if (!from || from == f->id) return;
    static fleet_alive_msg a; /* the fleet thread's alone */
    char err[160];
    const int n = natsMsg_GetDataLength(m);
    if (fleet_alive_read(natsMsg_GetData(m), n > 0 ? (size_t)n : 0, &a, err, sizeof err)) {
        f->st.refused++;
        log_once("fleet-beat-bad", "fleet: node %u's heartbeat refused: %s (logged once)", (unsigned)from, err);
        return;
    }
    bool mine = false;
    for (int i = 0; i < a.nrooms; i++) {
        fleet_room_view *v = fleet_dir_room(f, a.rooms[i]);
        if (!v) continue;
        if (fleet_holds(v->hold) || v->hold == HOLD_MAKING)
            mine = true;
        else
            v->heard_ns = now;
    }
    if (mine) {
        log_once("fleet-beat-mine",
                 "fleet: node %u's heartbeat lists a room this node holds: not acknowledged (logged once)",
                 (unsigned)from);
        return;
    }
    char subj[96], text[24];
    snprintf(subj, sizeof subj, "fluid.%s.ack.%u.%u", f->cfg->fleet, (unsigned)from, (unsigned)f->id);
    const int len = fleet_ack_write(a.round, text, sizeof text);
    if (len > 0) natsConnection_Publish(f->nc, subj, text, len);
}

/* Every node the round waited for acknowledged it: the fences of the rooms
 * it listed (and this node still holds) move on. */
static void round_done(fleet *f, fleet_beat_round *r) {
    r->open = false;
    const uint64_t fence = lease_alive_fence(&f->rule, r->sent_ns);
    bool moved = false;
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (!fleet_holds(v->hold) || !v->beat_since || v->beat_since > r->round || fence <= v->fence_ns) continue;
        v->fence_ns = fence;
        if (v->r) hub_set_fence(room_hub(v->r), fence);
        moved = true;
    }
    if (moved && f->kv_failing) f->st.fences_kept++;
}

static void acked(fleet *f, natsMsg *m, uint64_t now) {
    const uint32_t from = last_id(natsMsg_GetSubject(m));
    uint64_t round = 0;
    char err[96];
    const int n = natsMsg_GetDataLength(m);
    if (!from || fleet_ack_read(natsMsg_GetData(m), n > 0 ? (size_t)n : 0, &round, err, sizeof err)) return;
    for (int i = 0; i < f->nnode; i++)
        if (f->node[i].rec.id == from) f->node[i].acked_ns = now;
    fleet_beat_round *r = &f->beat[round % FLEET_BEAT_ROUNDS];
    if (!r->open || r->round != round) return; /* an older round's, whose slot is a later one's now */
    for (int i = 0; i < r->nneed; i++)
        if (r->need[i] == from) {
            r->need[i] = r->need[--r->nneed];
            if (!r->nneed) round_done(f, r);
            return;
        }
}

/* Whether node n counts as live for a round: it acknowledged a round
 * within FLEET_LIVE_NS (this node's watch may have fallen behind, its
 * records standing still), or its record moved within FLEET_LIVE_NS of the
 * last instant the bucket took a write from this node (while it takes
 * none, no record moves).  Either adds a node a round waits for, never
 * takes one away. */
static bool live_before(const fleet *f, const fleet_node_view *n, uint64_t now) {
    if (n->acked_ns && now - n->acked_ns < FLEET_LIVE_NS) return true;
    const uint64_t at = f->kv_failing ? f->kv_ok_ns : now;
    if (!n->watch.moved_ns || !at) return false;
    return at <= n->watch.moved_ns || at - n->watch.moved_ns < FLEET_LIVE_NS;
}

/* A new round: this node's rooms listed and published, the nodes it waits
 * for noted.  None when it holds no room. */
static void send_round(fleet *f, uint64_t now) {
    static fleet_alive_msg a; /* the fleet thread's alone */
    static char text[FLEET_ALIVE_MAX + 1];
    a.round = f->beat_round + 1;
    a.nrooms = 0;
    for (int i = 0; i < f->nroom; i++) {
        fleet_room_view *v = &f->room[i];
        if (!fleet_holds(v->hold)) {
            v->beat_since = 0;
            continue;
        }
        if (a.nrooms == FLEET_ALIVE_ROOMS) continue;
        if (!v->beat_since) v->beat_since = a.round;
        memcpy(a.rooms[a.nrooms++], v->name, ROOM_NAME_CAP);
    }
    if (!a.nrooms) return;
    f->beat_round = a.round;
    fleet_beat_round *r = &f->beat[a.round % FLEET_BEAT_ROUNDS];
    r->round = a.round, r->sent_ns = now, r->open = false, r->nneed = 0;
    for (int i = 0; i < f->nnode; i++)
        if (f->node[i].rec.id != f->id && live_before(f, &f->node[i], now)) r->need[r->nneed++] = f->node[i].rec.id;
    const int len = fleet_alive_write(&a, text, sizeof text);
    char subj[96];
    snprintf(subj, sizeof subj, "fluid.%s.alive.%u", f->cfg->fleet, (unsigned)f->id);
    if (len < 0 || natsConnection_Publish(f->nc, subj, text, len) != NATS_OK) return;
    r->open = r->nneed > 0; /* alone: nothing to extend on */
}

void fleet_beat_pass(fleet *f, uint64_t now) {
    if (!f->beat_sub || !f->ack_sub) return;
    natsSubscription *subs[2] = {f->beat_sub, f->ack_sub};
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < BEAT_READ_MAX; i++) {
            int pending = 0;
            natsMsg *m = NULL;
            if (natsSubscription_GetPending(subs[k], &pending, NULL) != NATS_OK || pending <= 0 ||
                natsSubscription_NextMsg(&m, subs[k], 1) != NATS_OK)
                break;
            if (k == 0)
                hear(f, m, now);
            else
                acked(f, m, now);
            natsMsg_Destroy(m);
        }
    if (now >= f->next_beat_ns) {
        send_round(f, now);
        f->next_beat_ns = now + f->rule.alive_every_ns;
    }
}
