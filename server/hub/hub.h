/* hub.h - the mailbox between the server's threads: the sim thread, the
 * encoder thread, the network thread and, with --nats, the bus thread.  It
 * holds the newest framesets, broadcast messages, replies to commands,
 * uploads, the recording's status, the latest world information and
 * statistics, and what each reader wants coded (values in their own
 * headers: world_info.h, sim_stats.h, reply.h, snapshots.h, frameset.h).
 *
 * Everything crosses as a value or as an immutable refcounted buffer; the
 * network thread never sees a pointer into the world.
 */
#ifndef SRV_HUB_H
#define SRV_HUB_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "bus_state.h"
#include "fleet_state.h"
#include "frameset.h"
#include "http_mail.h"
#include "mesh_store.h"
#include "msgbuf.h"
#include "rec_status.h"
#include "reply.h"
#include "sim_stats.h"
#include "world_info.h"

#define HUB_BCAST_RING 64
#define HUB_FRAME_RING 8                    /* frames the network thread can still pick from */
#define HUB_FORWARD_RING 1024               /* a relay's client messages waiting for the bus thread */
#define HUB_RELAYS 64                       /* relays whose frame wants a sim node merges */
#define HUB_DRAIN_ASKS 8                    /* drains asked and not yet taken by the fleet thread */
#define HUB_REMOTE_KEY_GAP_NS 1000000000ull /* at most one keyframe coded for a relay's requests a second */

/* What a relay forwards to the sim node for a client. */
typedef enum hub_forward_what {
    HUB_FWD_MSG,   /* the client's message, the bytes as it sent them (the sim node checks them again) */
    HUB_FWD_LEFT,  /* the client went away (no bytes) */
    HUB_FWD_CHECK, /* its credential alone: the sim node answers with the role it grants */
} hub_forward_what;
typedef struct hub_forward_msg {
    uint32_t client;
    hub_forward_what what;
    msg_buf *msg;  /* the client's message (one reference), NULL but for HUB_FWD_MSG */
    msg_buf *cred; /* the credential the relay holds for the client (one reference), or NULL */
} hub_forward_msg;
#define HUB_REPLY_RING 2048

typedef void hub_wake_fn(void *arg);

/* A relay's frame wants as a sim node merges them (hub.remote). */
typedef struct hub_remote {
    uint32_t relay;
    uint64_t seen_ns;
    frame_wants w;                     /* as the relay said; each tier's key_requests pass on as key_granted[tier], */
    uint32_t key_granted[FRAME_TIERS]; /* changed at most once a HUB_REMOTE_KEY_GAP_NS (one keyframe coded) */
    uint64_t key_granted_ns[FRAME_TIERS];
    bool key_waiting[FRAME_TIERS]; /* a change waits (counted once in remote_keys_deferred) */
} hub_remote;

/* Threads: the sim thread publishes (broadcasts, replies, info, stats) and
 * takes uploads; the encoder thread publishes framesets and the recording's
 * status and reads the frame wants; the network thread takes framesets,
 * broadcasts and replies, reads info and stats, parks uploads and sets its
 * frame wants; the bus thread publishes the link's state and what a relay
 * hears, takes the relay replies and forwarded messages and sets the relays'
 * wants.  Every field is under mtx except wake and wake_arg, which the main
 * thread sets before the sim thread starts and clears after it is joined. */
/* One obstacle as viewers are sent it: its id, the content hash of its
 * encoded mesh (obstacle_mesh.h), the mesh (NULL on a relay until the sim
 * node sent it), and on a relay whether the mesh is larger than the bus
 * carries (it is then never sent). */
typedef struct hub_obstacle {
    uint32_t id;
    uint64_t hash;
    msg_buf *mesh;
    bool too_big;
} hub_obstacle;

typedef struct hub {
    pthread_mutex_t mtx;
    frameset frames[HUB_FRAME_RING]; /* frames[k % RING] for k in [frames_next-RING, frames_next) */
    uint64_t frames_next;
    frame_wants wants; /* set by the network thread, read by the encoder */
    rec_status rec;    /* set by the encoder thread */
    /* relays (bus/): a sim node's replies to relays' clients go to the bus
     * thread instead of the network thread; the relays' frame wants add to
     * the network thread's; a relay's client messages wait for its bus thread */
    bool route_relay_replies;
    bus_state bus;
    /* a fleet (fleet/): the directory's state and document, on the default room's hub */
    fleet_state fleet;
    msg_buf *fleet_doc;
    /* a fleet's room: the sim thread steps it only before this instant
     * (clock_now_ns; 0: no fence, a room of no fleet).  Atomic, outside mtx:
     * the fleet thread sets it, the sim thread reads it before each tick. */
    atomic_ullong fence_ns;
    /* a fleet's room: the snapshot its sim thread took for the fleet thread
     * (hub_put_fleet_snap; one reference, the newest replaces an untaken
     * one), and a save the fleet thread asks for now (atomic, outside mtx:
     * 0 none, 1 a save, 2 the last save: the room moves or stops here) */
    msg_buf *fleet_snap;
    uint64_t fleet_snap_tick;
    bool fleet_snap_last; /* ... it is the last save (the room is parked) */
    atomic_int fleet_save_asked;
    /* a fleet (the default room's hub): the nodes whose drain POST
     * /api/fleet/nodes/{id}/drain asked for (drain_put true) or DELETE
     * cancelled (false), one ask a node, until the fleet thread takes them
     * (under mtx) */
    uint32_t drain_ask[HUB_DRAIN_ASKS];
    bool drain_put[HUB_DRAIN_ASKS];
    int drain_asks;
    /* a fleet (the default room's hub): REST writes to and from the rooms' holders over the bus (its own lock) */
    http_mail http;
    cmd_reply *relay_replies; /* ring of HUB_REPLY_RING */
    int relay_reply_head, relay_reply_count;
    hub_remote remote[HUB_RELAYS];
    uint64_t remote_keys_deferred;
    hub_forward_msg fwd[HUB_FORWARD_RING];
    int fwd_head, fwd_count;
    uint64_t fwd_dropped;
    msg_buf *bcast[HUB_BCAST_RING]; /* bcast[seq % RING] for seq in [bcast_next-RING, bcast_next) */
    uint64_t bcast_next;
    cmd_reply *replies; /* ring of HUB_REPLY_RING */
    int reply_head, reply_count;
    uint64_t replies_dropped;
    world_info info;
    sim_stats stats;
    /* snapshot uploads waiting for the sim thread (POST /api/snapshot):
     * immutable buffers, one reference each, found by upload id */
#define HUB_UPLOADS 2
    struct {
        uint32_t id;
        msg_buf *buf;
    } upload[HUB_UPLOADS];
    uint32_t next_upload;
    /* the obstacles as viewers are sent them (hub_set_obstacles): the latest
     * `obstacles` message, which a new viewer gets after its hello, and each
     * obstacle's encoded placed mesh (GET /api/obstacles/{id}/mesh) */
    msg_buf *obstacles_msg;
    hub_obstacle obstacle_mesh[FS_MAX_OBSTACLES];
    int obstacle_mesh_count;
    /* the room's uploaded meshes (POST /api/meshes): their own lock */
    mesh_store meshes;
    uint64_t touched_ns; /* the last REST request for its room (hub_touch): a room with it is not idle */
    hub_wake_fn *wake;   /* lws_cancel_service wrapper; set before threads start */
    void *wake_arg;
} hub;

int hub_init(hub *h);
void hub_destroy(hub *h);
/* Sim thread side.  Each takes ownership of the message reference. */
void hub_publish_frameset(hub *h, frameset *f); /* takes f's references */
/* The wants of the network thread and of every relay heard from in the last
 * 3 s, merged.  A relay's keyframe requests pass on at most once a
 * HUB_REMOTE_KEY_GAP_NS: one keyframe a second answers them all. */
void hub_get_frame_wants(hub *h, frame_wants *out);
/* The network thread: a REST request for the room at now_ns (it keeps an
 * idle room awake, as a viewer does); the sim thread reads the latest. */
void hub_touch(hub *h, uint64_t now_ns);
uint64_t hub_touched(hub *h);
/* Relay keyframe requests that waited for their relay's second. */
uint64_t hub_remote_keys_deferred(hub *h);
void hub_set_bus_state(hub *h, const bus_state *s);
void hub_get_bus_state(hub *h, bus_state *out);
/* The fleet thread: its state and its directory as JSON (takes one reference
 * of doc); the network thread copies the state and takes a reference of the
 * document (NULL: no fleet). */
void hub_set_fleet(hub *h, const fleet_state *s, msg_buf *doc);
void hub_get_fleet_state(hub *h, fleet_state *out);
msg_buf *hub_get_fleet_doc(hub *h);
/* A fleet room's fence (fleet thread) and its reading (sim thread). */
void hub_set_fence(hub *h, uint64_t until_ns);
uint64_t hub_fence(hub *h);
/* A fleet room's snapshot: the sim thread puts one (takes the reference;
 * an older one not yet taken is dropped), the fleet thread takes it (NULL:
 * none; *tick: the tick it was taken at; *last: whether it is the last
 * save, which parked the room).  The fleet thread asks for one at
 * the next tick boundary (hub_ask_fleet_save; last: the room moves to
 * another node or the node stops, and after that save the sim thread steps
 * it no more), the sim thread notes the ask (hub_fleet_save_asked: true once
 * per ask, *last whether it was the last; hub_fleet_save_pending: an ask not
 * yet noted, which wakes a room asleep). */
void hub_put_fleet_snap(hub *h, msg_buf *snap, uint64_t tick, bool last);
msg_buf *hub_take_fleet_snap(hub *h, uint64_t *tick, bool *last);
void hub_ask_fleet_save(hub *h, bool last);
bool hub_fleet_save_asked(hub *h, bool *last);
bool hub_fleet_save_pending(hub *h);
/* A drain (put: drain.<node> to be written) or its cancel (!put: to be
 * deleted) asked through the REST API (network thread: false when
 * HUB_DRAIN_ASKS other nodes' asks wait already), taken by the fleet thread
 * in the order asked (false: none).  A node has one ask waiting at most: a
 * newer ask replaces its waiting one when newest (the REST API's), and is
 * dropped for it when not (the fleet thread asking again for a write the
 * broker did not take: the waiting ask came later). */
bool hub_ask_drain(hub *h, uint32_t node, bool put, bool newest);
bool hub_take_drain(hub *h, uint32_t *node, bool *put);
/* The relays heard from in the last 3 s and their viewers: up to max. */
int hub_get_relays(hub *h, uint32_t *relay, int *viewers, int max);
/* The tiers of detail those relays' clients take: bit t for tier t (tier 0's always). */
unsigned hub_relay_tiers(hub *h);
/* Takes replies addressed to relays' clients (route_relay_replies). */
int hub_take_relay_replies(hub *h, cmd_reply *out, int max);
/* A relay's frame wants (the bus thread of a sim node). */
void hub_set_remote_wants(hub *h, uint32_t relay, const frame_wants *w, uint64_t now_ns);
/* A relay's bus thread takes its clients' messages. */
int hub_take_forwards(hub *h, hub_forward_msg *out, int max);
void hub_set_rec_status(hub *h, const rec_status *r);
/* The number the next broadcast will have (a new reader starts there). */
uint64_t hub_bcast_next(hub *h);
void hub_publish_bcast(hub *h, msg_buf *m);
/* The obstacles now: list (the `obstacles` message) and the n obstacles'
 * ids, hashes and encoded meshes (a relay's mirror: NULL until the sim node
 * sent it); takes every reference, drops the ones held before.  The caller
 * broadcasts the list itself. */
void hub_set_obstacles(hub *h, msg_buf *list, const hub_obstacle *o, int n);
/* A relay's mirror: the mesh of hash for every listed obstacle of that hash
 * that has none (a reference taken for each).  Returns how many took it. */
int hub_fill_obstacle_mesh(hub *h, uint64_t hash, msg_buf *mesh);
/* The obstacles listed now (new references to their meshes, NULL where
 * there is none), at most cap; returns how many. */
int hub_get_obstacles(hub *h, hub_obstacle *out, int cap);
/* Takes ownership of r's snapshots.  Drops (and frees) them when the ring is full. */
void hub_post_reply(hub *h, cmd_reply *r);
void hub_set_info(hub *h, const world_info *wi);
void hub_set_stats(hub *h, const sim_stats *st);
/* Takes (removes) the upload with this id: the caller owns the reference; NULL if gone. */
msg_buf *hub_take_upload(hub *h, uint32_t id);
void hub_wake(hub *h);

/* Network thread side. */
void hub_get_info(hub *h, world_info *out);
void hub_get_stats(hub *h, sim_stats *out);
/* Copies (new references) the framesets numbered >= *next, at most max,
 * oldest first, into out; sets *next past them (skipping any already
 * overwritten).  Returns how many. */
int hub_take_framesets(hub *h, uint64_t *next, frameset *out, int max);
void hub_set_frame_wants(hub *h, const frame_wants *w);
/* A new reference to the latest `obstacles` message, or NULL before the
 * first (a relay's mirror: the sim node's, from the bus). */
msg_buf *hub_obstacles_msg(hub *h);
/* A new reference to the encoded placed mesh of obstacle id, or NULL; *listed
 * (may be NULL) says whether the obstacle is listed at all, and *too_big
 * whether a relay cannot have its mesh (larger than the bus carries). */
msg_buf *hub_obstacle_mesh(hub *h, uint32_t id, bool *listed, bool *too_big);
/* A relay's network thread hands a client message to the bus thread (takes
 * the references); false when the ring is full (the message is dropped). */
bool hub_forward(hub *h, uint32_t client, hub_forward_what what, msg_buf *msg, msg_buf *cred);
void hub_get_rec_status(hub *h, rec_status *out);
/* Copies up to max broadcasts with seq >= *next into out (new references);
 * sets *next past them.  *lost is set when some were already overwritten. */
int hub_take_bcast(hub *h, uint64_t *next, msg_buf **out, int max, bool *lost);
int hub_take_replies(hub *h, cmd_reply *out, int max);
/* Parks an upload for the sim thread (takes the reference); returns its id,
 * or 0 when every slot is busy (the caller unrefs and answers 503). */
uint32_t hub_put_upload(hub *h, msg_buf *buf);
/* Drops the upload if it is still parked (its command never ran). */
void hub_drop_upload(hub *h, uint32_t id);

#endif
