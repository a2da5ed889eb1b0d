/* fleet_link.h - struct fleet: the connection, the bucket, the directory as
 * this node sees it, the asks of POST /api/rooms; shared by fleet.c
 * (connection and thread), fleet_dir.c (the watch and the view) and
 * fleet_claims.c (placement, claims, renewals), fleet_snap.c (snapshots in
 * JetStream, and the saver's thread), fleet_beat.c (heartbeats),
 * fleet_takeover.c (saves and takeovers), fleet_drain.c (drains and
 * hand-overs) and fleet_mirror.c (a relay's mirrors). */
#ifndef SRV_FLEET_LINK_H
#define SRV_FLEET_LINK_H

#include <nats/nats.h>
#include <pthread.h>
#include <stdatomic.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "fleet_doc.h"
#include "fleet_maker.h"
#include "fleet_state.h"
#include "hub.h"
#include "lease.h"
#include "room_keeper.h"
#include "rooms.h"

typedef struct fleet fleet; /* also in fleet.h */

/* The saver (fleet_snap.c): the thread that writes the rooms' snapshots to
 * JetStream.  A save's chunks may each wait up to 2 s for the broker (the
 * snapshots' stream without a leader: an election), longer than the fleet
 * thread may go without a pass (its renewals and heartbeats, fleet_beat.c),
 * so the fleet thread hands each save to it and, once its chunks are in,
 * names it in the room's key itself (fleet_takeover.c).  One save of a room
 * at a time: the fleet thread asks for another only once the last is
 * taken back. */
#define FLEET_SAVER_JOBS 16 /* asked and not yet taken back */
typedef job_thread fleet_saver;

/* One save: the room, the claim it is held by, the save's number, the
 * document (one reference, which the saver drops) and its tick; seq is the
 * asker's, to match the answer with the ask. */
typedef struct fleet_save_job {
    char name[ROOM_NAME_CAP];
    uint64_t seq;
    uint64_t claim, save, tick;
    msg_buf *doc;
} fleet_save_job;

/* What became of it: ok, and the manifest its key is to name. */
typedef struct fleet_saved {
    char name[ROOM_NAME_CAP];
    uint64_t seq, claim, save;
    bool ok;
    fleet_snap_manifest man;
} fleet_saved;

#define FLEET_NODES 64                    /* node records kept; more are refused (logged) */
#define FLEET_ROOMS 256                   /* room keys kept; more are refused (logged) */
#define FLEET_ASKS 4                      /* placements waiting at once (ROOM_KEEPER_JOBS) */
#define FLEET_LIVE_NS 3000000000ull       /* a node whose record moved within this long is live */
#define FLEET_CLAIM_WAIT_NS 5000000000ull /* a placement waits this long for its node's claim */

/* One node record as this node watches it.  Fleet thread only. */
typedef struct fleet_node_view {
    fleet_node_rec rec;
    lease_watch watch;
    uint64_t acked_ns; /* when it last acknowledged a heartbeat round of this node's (fleet_beat.c) */
} fleet_node_view;

/* Where this node is with a room. */
typedef enum fleet_hold {
    HOLD_NONE,   /* held elsewhere, or by no one */
    HOLD_MAKING, /* placed here: being made (fleet_maker) */
    HOLD_HELD,   /* made and claimed: stepping while its fence is ahead */
    HOLD_TAKING, /* an orphan claimed here: being made from its snapshot (renewed meanwhile) */
    HOLD_MOVING, /* held, its last save asked for (a drain, a stop): parked once saved, then released */
} fleet_hold;

/* Whether this node holds the room in some way (its claim is this node's). */
static inline bool fleet_holds(fleet_hold h) {
    return h == HOLD_HELD || h == HOLD_TAKING || h == HOLD_MOVING;
}

/* One room key as this node watches it.  Fleet thread only. */
typedef struct fleet_room_view {
    char name[ROOM_NAME_CAP];
    fleet_room_rec rec; /* as last read (or written) */
    uint64_t rev;       /* its revision then */
    lease_watch watch;
    fleet_hold hold;
    room *r;                     /* HOLD_HELD: a reference */
    uint64_t fence_ns, renew_ns; /* HOLD_HELD, HOLD_TAKING: its fence, and when it is renewed next */
    uint64_t next_try_ns;        /* an orphan: this node tries to claim it again no sooner */
    msg_buf *move_doc;           /* HOLD_MOVING: its last save, until written and released (one reference) */
    uint64_t move_tick;          /* ... the tick it was taken at */
    bool over_budget;            /* taken over here past this node's step budget (no live node had room) */
    /* a relay's: the holder and claim its mirror's viewers were last shown (claim 0: none yet) */
    uint32_t shown_node;
    uint64_t shown_claim;
    uint64_t saving;     /* a save handed to the saver and not taken back: its sequence number (0: none) */
    uint64_t heard_ns;   /* when another node's heartbeat last listed it (0: never; fleet_beat.c) */
    uint64_t beat_since; /* held: the first of this node's heartbeat rounds that listed it (0: none yet) */
} fleet_room_view;

/* One heartbeat round of this node's, waiting for its acknowledgements
 * (fleet_beat.c).  Several stay open at once: a node whose fleet thread
 * waits on the bucket (a second at most) acknowledges a round after the
 * next one is sent.  Fleet thread only. */
#define FLEET_BEAT_ROUNDS 4
typedef struct fleet_beat_round {
    uint64_t round, sent_ns;
    bool open; /* waiting for the nodes below */
    uint32_t need[FLEET_NODES];
    int nneed;
} fleet_beat_round;

typedef enum fleet_ask_state { ASK_FREE, ASK_ASKED, ASK_SENT, ASK_ANSWERED } fleet_ask_state;

/* A placement from fleet_place.  Threads: state and out under mu; the rest
 * written by the asker before ASK_ASKED, then the fleet thread's. */
typedef struct fleet_ask {
    fleet_ask_state state;
    char name[ROOM_NAME_CAP];
    fleet_room_rec rec;   /* what the key is created with */
    uint64_t deadline_ns; /* ASK_SENT: answered 503 after it */
    uint64_t rev;         /* ASK_SENT: the revision the key was created at */
    room_opened out;
} fleet_ask;

struct fleet {
    const srv_config *cfg;
    rooms *dir;
    hub *home;
    uint32_t id; /* 0 on a relay */
    bool relay;  /* a relay of the fleet: it reads the directory, never writes it (fleet_mirror.c) */
    char url[FLEET_URL_CAP];
    char bucket[48];
    lease_rule rule;
    natsOptions *opts;
    natsConnection *nc;
    jsCtx *js;
    kvStore *kv;
    kvWatcher *watch;
    bool snap_ok; /* the snapshots' stream is there */
    fleet_maker *maker;
    fleet_saver *saver;
    uint64_t save_seq; /* the saves handed to the saver */
    pthread_t thread;
    bool started;
    atomic_bool stop, connected;
    atomic_bool closed; /* the connection's closed callback ran: the client calls it no more */
    pthread_mutex_t mu; /* the asks */
    pthread_cond_t cv;
    fleet_ask ask[FLEET_ASKS];
    /* the fleet thread's own */
    fleet_node_view node[FLEET_NODES];
    int nnode;
    fleet_room_view room[FLEET_ROOMS];
    int nroom;
    uint32_t drained[FLEET_NODES]; /* the nodes whose drain.<id> key is there */
    int ndrained;
    bool draining; /* ... this node among them: it moves its rooms elsewhere and takes no new one */
    uint64_t next_setup_ns, last_record_ns, last_doc_ns;
    /* the bucket's health as this node's writes see it */
    uint64_t kv_ok_ns; /* the last write the bucket answered (taken, or refused on the revision) */
    bool kv_failing;   /* the last write had no answer: one write a pass until one does (fleet_kv_may) */
    bool kv_probed;    /* ... and this pass's is made */
    /* the watch's health: a node's own record put and not yet seen back
     * since unseen_ns (0: seen), at revision put_rev; on a relay, the last
     * value the watch gave (fleet_dir_stale) */
    uint64_t unseen_ns, put_rev, heard_ns, watch_begun_ns;
    job_thread *rewatcher; /* makes a new watch (fleet.c) */
    bool rewatching;       /* ... asked, not yet taken back */
    uint64_t stale_ns;     /* how long a silence is a stale watch: FLEET_WATCH_STALE_NS, doubled at each rewatch
                              that brought no node record moving (at most a minute) */
    bool drain_cleared;    /* its own drain.<id> deleted at start (once) */
    /* heartbeats (fleet_beat.c) */
    natsSubscription *beat_sub, *ack_sub;
    uint64_t beat_round, next_beat_ns;        /* the last round sent; when the next is due */
    fleet_beat_round beat[FLEET_BEAT_ROUNDS]; /* the last rounds: round k in beat[k % FLEET_BEAT_ROUNDS] */
    fleet_state st;
};

/* fleet_dir.c: takes what the watch has (waiting at most wait_ms for the
 * first); the room of that name in the view, or NULL; the node records
 * live at now; publishes the view to the home hub. */
void fleet_dir_drain(fleet *f, int wait_ms);
/* Whether the watch has fallen behind: a node's own record, put, not seen
 * back within FLEET_WATCH_STALE_NS; a relay's watch silent that long while
 * it knows of nodes (each puts its record every second; after a rewatch
 * that brought no record moving, twice as long).  A watch served by
 * a broker server that died may stay silent for many seconds before the
 * client makes it again; the fleet thread then has a new one made (on a
 * thread of its own: making it may wait seconds) and reads the old one
 * until it comes. */
#define FLEET_WATCH_STALE_NS 2500000000ull
bool fleet_dir_stale(const fleet *f, uint64_t now);
fleet_room_view *fleet_dir_room(fleet *f, const char *name);
void fleet_dir_publish(fleet *f, uint64_t now);
/* The node a new room goes to: the live node with the most free budget
 * that is not draining (docs/fleet.md, "Placement"); this node when it sees
 * none, or 0 when it is draining too. */
uint32_t fleet_dir_place(fleet *f, uint64_t now);

/* This node's rank for a takeover among the live nodes that are not
 * draining (0: it goes first). */
int fleet_dir_rank(fleet *f, uint64_t now);
/* Whether node id is draining (its drain.<id> key is there). */
bool fleet_dir_draining(const fleet *f, uint32_t id);
/* Whether a live node other than this one, not draining, is there. */
bool fleet_dir_other_live(fleet *f, uint64_t now);
/* Whether node id has room in its step budget for a room of ms core-ms a
 * tick (by its record, less the rooms given it since; a budget of 0:
 * admission off, always); and whether a live node has that is neither this
 * one, nor draining, nor holder (the node that let the room go: its record
 * may look live for a while after it died). */
bool fleet_dir_fits(fleet *f, uint32_t id, double ms, uint64_t now);
bool fleet_dir_fits_elsewhere(fleet *f, uint32_t holder, double ms, uint64_t now);

/* This node no longer holds the room: fenced, closed without saving, logged with why. */
void fleet_lose(fleet *f, fleet_room_view *v, const char *why);

/* fleet_snap.c: the snapshots' stream (made when missing: 0, or -1 logged);
 * a room's snapshot doc written as save number save of the holder's claim
 * (0 and the manifest its key takes, or -1 logged); and read back as the
 * manifest names it, checked (NULL with why). */
int fleet_snap_setup(fleet *f);
/* The saver, at nice value nice (NULL with a reason); its asks (false when
 * FLEET_SAVER_JOBS are asked and not taken back: job.doc is the caller's
 * still) and answers (up to cap: how many).  Destroying it joins it (a save
 * under way finishes first) and drops the saves not started. */
fleet_saver *fleet_saver_create(fleet *f, int nice, char *err, size_t errlen);
static inline void fleet_saver_destroy(fleet_saver *s) {
    job_thread_destroy(s);
}
static inline bool fleet_saver_ask(fleet_saver *s, const fleet_save_job *job) {
    return job_thread_ask(s, job);
}
static inline int fleet_saver_take(fleet_saver *s, fleet_saved *out, int cap) {
    return job_thread_take(s, out, cap);
}
int fleet_snap_write(fleet *f, const char *name, uint64_t claim, uint64_t save, const msg_buf *doc, uint64_t tick,
                     fleet_snap_manifest *out);
/* The snapshot m names, read back and checked, or NULL with why: *unread
 * when the broker did not give it (a timeout: worth asking again), not
 * when the stream lacks a chunk or what it holds does not check. */
msg_buf *fleet_snap_read(fleet *f, const char *name, const fleet_snap_manifest *m, bool *unread, char *why, size_t cap);

/* fleet_takeover.c: orphans and released rooms claimed (each after this
 * node's rank's delay; by a node with room in its step budget while one is
 * live) and made from their snapshots; the held rooms' snapshots written
 * (fleet_save_doc: one, as save number save + 1, its key updated as rec
 * with the manifest: 0, or -1 with the room lost when another node wrote
 * its key, -2 when the broker did not take it). */
void fleet_takeover_pass(fleet *f, uint64_t now);
void fleet_save_pass(fleet *f, uint64_t now);
int fleet_save_doc(fleet *f, fleet_room_view *v, const msg_buf *doc, uint64_t tick, fleet_room_rec *rec);

/* fleet_drain.c: the drains asked through the REST API written to the
 * directory (drain.<id>); this node draining: each room it holds saved at a
 * tick boundary (the room parked there), written and released (its key
 * names no node) for the node with the most free budget to claim at once
 * and restore from exactly that save; at stop, every room it holds the
 * same way (waiting at most wait_ns). */
void fleet_drain_asks(fleet *f);
void fleet_drain_pass(fleet *f, uint64_t now);
void fleet_move_all(fleet *f, uint64_t wait_ns);
/* A room's move given up: its last save, if taken, dropped. */
static inline void fleet_move_drop(fleet_room_view *v) {
    msg_buf_unref(v->move_doc);
    v->move_doc = NULL;
}

/* fleet_mirror.c: a relay's mirrors brought in line with the directory
 * (one per claimed room, its public role; closed when its key goes), and
 * each mirror's viewers told when its room moved to another node. */
void fleet_mirror_pass(fleet *f);

/* fleet_beat.c: the heartbeats' subscriptions (0, or -1 logged), closed;
 * one pass: the heartbeats heard and acknowledged, the acknowledgements of
 * this node's round counted (the fences moved on when all are in), and a
 * new round sent when due. */
int fleet_beat_setup(fleet *f);
void fleet_beat_close(fleet *f);
void fleet_beat_pass(fleet *f, uint64_t now);

/* fleet_claims.c: whether a write to the bucket may be tried now (while
 * writes go unanswered, one a pass); and a write's outcome noted (ok, or
 * failed: refused on the revision, which is an answer, or unanswered). */
bool fleet_kv_may(fleet *f);
void fleet_kv_noted(fleet *f, bool ok);

/* fleet_claims.c: one pass of the claims (asks, rooms to make, made rooms
 * to claim or to hold, renewals); and this node's record. */
void fleet_claims_pass(fleet *f, uint64_t now);
/* The rooms the maker made since: claimed (placed here) or held (taken
 * over here), or closed when their key moved on meanwhile. */
void fleet_claims_take_made(fleet *f);
void fleet_put_record(fleet *f);
/* The room's key written as rec at the revision last read, as a renewal
 * (the fence moves on): 0, or -1 (fleet_wrong_revision: because another
 * node wrote the key since; else the broker did not answer). */
int fleet_renew_with(fleet *f, fleet_room_view *v, const fleet_room_rec *rec);
bool fleet_wrong_revision(void);
/* The key of a room: room.<name>. */
void fleet_room_key(const char *name, char *out, size_t cap);

#endif
