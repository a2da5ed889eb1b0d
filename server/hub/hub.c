/* hub.c - the mailbox between the sim and network threads (see hub.h). */
#include "hub.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

int hub_init(hub *h) {
    memset(h, 0, sizeof *h);
    h->replies = calloc(HUB_REPLY_RING, sizeof *h->replies);
    h->relay_replies = calloc(HUB_REPLY_RING, sizeof *h->relay_replies);
    if (!h->replies || !h->relay_replies) {
        free(h->replies);
        free(h->relay_replies);
        h->replies = NULL;
        return -1;
    }
    pthread_mutex_init(&h->mtx, NULL);
    atomic_init(&h->fence_ns, 0);
    atomic_init(&h->fleet_save_asked, 0);
    mesh_store_init(&h->meshes);
    http_mail_init(&h->http);
    return 0;
}

void hub_destroy(hub *h) {
    if (!h->replies) return;
    for (int i = 0; i < HUB_FRAME_RING; i++) frameset_unref(&h->frames[i]);
    for (int i = 0; i < HUB_BCAST_RING; i++) msg_buf_unref(h->bcast[i]);
    for (int i = 0; i < h->reply_count; i++) cmd_reply_free_payload(&h->replies[(h->reply_head + i) % HUB_REPLY_RING]);
    for (int i = 0; i < HUB_UPLOADS; i++) msg_buf_unref(h->upload[i].buf);
    for (int i = 0; i < h->relay_reply_count; i++)
        cmd_reply_free_payload(&h->relay_replies[(h->relay_reply_head + i) % HUB_REPLY_RING]);
    for (int i = 0; i < h->fwd_count; i++) {
        msg_buf_unref(h->fwd[(h->fwd_head + i) % HUB_FORWARD_RING].msg);
        msg_buf_unref(h->fwd[(h->fwd_head + i) % HUB_FORWARD_RING].cred);
    }
    msg_buf_unref(h->obstacles_msg);
    msg_buf_unref(h->fleet_doc);
    msg_buf_unref(h->fleet_snap);
    for (int i = 0; i < h->obstacle_mesh_count; i++) msg_buf_unref(h->obstacle_mesh[i].mesh);
    free(h->replies);
    free(h->relay_replies);
    mesh_store_destroy(&h->meshes);
    http_mail_destroy(&h->http);
    pthread_mutex_destroy(&h->mtx);
    memset(h, 0, sizeof *h);
}

void hub_wake(hub *h) {
    if (h->wake) h->wake(h->wake_arg);
}

void hub_publish_frameset(hub *h, frameset *f) {
    pthread_mutex_lock(&h->mtx);
    frameset old = h->frames[h->frames_next % HUB_FRAME_RING];
    h->frames[h->frames_next % HUB_FRAME_RING] = *f;
    h->frames_next++;
    pthread_mutex_unlock(&h->mtx);
    memset(f, 0, sizeof *f);
    frameset_unref(&old);
}

void hub_set_rec_status(hub *h, const rec_status *r) {
    pthread_mutex_lock(&h->mtx);
    h->rec = *r;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_rec_status(hub *h, rec_status *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->rec;
    pthread_mutex_unlock(&h->mtx);
}

uint64_t hub_bcast_next(hub *h) {
    pthread_mutex_lock(&h->mtx);
    uint64_t n = h->bcast_next;
    pthread_mutex_unlock(&h->mtx);
    return n;
}

/* a relay not heard from for this long is gone quiet: its wants count no more */
#define REMOTE_QUIET_NS 3000000000ull

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Whether relay slot i holds a relay heard from within REMOTE_QUIET_NS (under mtx). */
static bool remote_live(const hub *h, int i, uint64_t now) {
    return h->remote[i].relay && now - h->remote[i].seen_ns <= REMOTE_QUIET_NS;
}

/* Passes on relay i's newest keyframe request count of tier t when its
 * last one passed on a second ago or more (under mtx). */
static void grant_keys(hub *h, int i, int t, uint64_t now) {
    hub_remote *r = &h->remote[i];
    uint32_t asked = t ? r->w.coarse[t - 1].key_requests : r->w.key_requests;
    if (asked == r->key_granted[t]) return;
    if (r->key_granted_ns[t] && now - r->key_granted_ns[t] < HUB_REMOTE_KEY_GAP_NS) {
        if (!r->key_waiting[t]) h->remote_keys_deferred++;
        r->key_waiting[t] = true;
        return;
    }
    r->key_granted[t] = asked;
    r->key_granted_ns[t] = now;
    r->key_waiting[t] = false;
}

uint64_t hub_remote_keys_deferred(hub *h) {
    pthread_mutex_lock(&h->mtx);
    uint64_t n = h->remote_keys_deferred;
    pthread_mutex_unlock(&h->mtx);
    return n;
}

void hub_get_frame_wants(hub *h, frame_wants *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->wants;
    const uint64_t now = mono_ns();
    for (int i = 0; i < HUB_RELAYS; i++) {
        if (!remote_live(h, i, now)) continue;
        const frame_wants *w = &h->remote[i].w;
        for (int t = 0; t < FRAME_TIERS; t++) grant_keys(h, i, t, now);
        out->clients += w->clients;
        out->key_requests += h->remote[i].key_granted[0];
        out->stride2 |= w->stride2;
        out->stride4 |= w->stride4;
        out->bridge |= w->bridge;
        /* the coarser tiers its clients take (coded against the tier's frame before, never a base of theirs) */
        for (int t = 1; t < FRAME_TIERS; t++) {
            const frame_tier_wants *rt = &w->coarse[t - 1];
            frame_tier_wants *o = &out->coarse[t - 1];
            o->clients += rt->clients;
            o->key_requests += h->remote[i].key_granted[t];
            o->stride2 |= rt->stride2;
            o->stride4 |= rt->stride4;
            o->bridge |= rt->bridge;
        }
    }
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_remote_wants(hub *h, uint32_t relay, const frame_wants *w, uint64_t now_ns) {
    pthread_mutex_lock(&h->mtx);
    int slot = -1, oldest = 0;
    for (int i = 0; i < HUB_RELAYS && slot < 0; i++)
        if (h->remote[i].relay == relay) slot = i;
    for (int i = 0; i < HUB_RELAYS && slot < 0; i++)
        if (!h->remote[i].relay) slot = i;
    if (slot < 0) {
        for (int i = 1; i < HUB_RELAYS; i++)
            if (h->remote[i].seen_ns < h->remote[oldest].seen_ns) oldest = i;
        slot = oldest;
    }
    if (h->remote[slot].relay != relay) /* a new relay here: its first requests pass on at once */
        for (int t = 0; t < FRAME_TIERS; t++) {
            h->remote[slot].key_granted[t] = 0;
            h->remote[slot].key_granted_ns[t] = 0;
            h->remote[slot].key_waiting[t] = false;
        }
    h->remote[slot].relay = relay;
    h->remote[slot].seen_ns = now_ns;
    h->remote[slot].w = *w;
    pthread_mutex_unlock(&h->mtx);
}

int hub_take_relay_replies(hub *h, cmd_reply *out, int max) {
    int n = 0;
    pthread_mutex_lock(&h->mtx);
    while (n < max && h->relay_reply_count > 0) {
        out[n++] = h->relay_replies[h->relay_reply_head];
        h->relay_reply_head = (h->relay_reply_head + 1) % HUB_REPLY_RING;
        h->relay_reply_count--;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

bool hub_forward(hub *h, uint32_t client, hub_forward_what what, msg_buf *msg, msg_buf *cred) {
    pthread_mutex_lock(&h->mtx);
    bool ok = h->fwd_count < HUB_FORWARD_RING;
    if (ok) {
        h->fwd[(h->fwd_head + h->fwd_count) % HUB_FORWARD_RING] = (hub_forward_msg){client, what, msg, cred};
        h->fwd_count++;
    } else {
        h->fwd_dropped++;
    }
    pthread_mutex_unlock(&h->mtx);
    if (!ok) {
        msg_buf_unref(msg);
        msg_buf_unref(cred);
    }
    return ok;
}

int hub_take_forwards(hub *h, hub_forward_msg *out, int max) {
    int n = 0;
    pthread_mutex_lock(&h->mtx);
    while (n < max && h->fwd_count > 0) {
        out[n++] = h->fwd[h->fwd_head];
        h->fwd_head = (h->fwd_head + 1) % HUB_FORWARD_RING;
        h->fwd_count--;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

void hub_set_frame_wants(hub *h, const frame_wants *w) {
    pthread_mutex_lock(&h->mtx);
    h->wants = *w;
    pthread_mutex_unlock(&h->mtx);
}

int hub_take_framesets(hub *h, uint64_t *next, frameset *out, int max) {
    int k = 0;
    pthread_mutex_lock(&h->mtx);
    if (h->frames_next > HUB_FRAME_RING && *next < h->frames_next - HUB_FRAME_RING)
        *next = h->frames_next - HUB_FRAME_RING;
    while (*next < h->frames_next && k < max) {
        out[k++] = frameset_ref(&h->frames[*next % HUB_FRAME_RING]);
        (*next)++;
    }
    pthread_mutex_unlock(&h->mtx);
    return k;
}

void hub_publish_bcast(hub *h, msg_buf *m) {
    pthread_mutex_lock(&h->mtx);
    int slot = (int)(h->bcast_next % HUB_BCAST_RING);
    msg_buf *old = h->bcast[slot];
    h->bcast[slot] = m;
    h->bcast_next++;
    pthread_mutex_unlock(&h->mtx);
    msg_buf_unref(old);
}

void hub_post_reply(hub *h, cmd_reply *r) {
    bool dropped = false;
    pthread_mutex_lock(&h->mtx);
    bool relay = h->route_relay_replies && cmd_client_relay(r->client);
    cmd_reply *ring = relay ? h->relay_replies : h->replies;
    int *head = relay ? &h->relay_reply_head : &h->reply_head, *count = relay ? &h->relay_reply_count : &h->reply_count;
    if (*count < HUB_REPLY_RING) {
        ring[(*head + *count) % HUB_REPLY_RING] = *r;
        (*count)++;
    } else {
        h->replies_dropped++;
        dropped = true;
    }
    pthread_mutex_unlock(&h->mtx);
    if (dropped) cmd_reply_free_payload(r);
    r->snap = NULL; /* the hub (the network thread) owns them now */
    r->bodies = NULL;
    r->obstacles = NULL;
    r->blob = NULL;
}

void hub_set_info(hub *h, const world_info *wi) {
    pthread_mutex_lock(&h->mtx);
    h->info = *wi;
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_stats(hub *h, const sim_stats *st) {
    pthread_mutex_lock(&h->mtx);
    h->stats = *st;
    h->stats.replies_dropped = h->replies_dropped;
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_obstacles(hub *h, msg_buf *list, const hub_obstacle *o, int n) {
    msg_buf *old[FS_MAX_OBSTACLES + 1];
    int nold = 0;
    if (n > FS_MAX_OBSTACLES) {
        for (int i = FS_MAX_OBSTACLES; i < n; i++) msg_buf_unref(o[i].mesh);
        n = FS_MAX_OBSTACLES;
    }
    pthread_mutex_lock(&h->mtx);
    old[nold++] = h->obstacles_msg;
    for (int i = 0; i < h->obstacle_mesh_count; i++) old[nold++] = h->obstacle_mesh[i].mesh;
    h->obstacles_msg = list;
    for (int i = 0; i < n; i++) h->obstacle_mesh[i] = o[i];
    h->obstacle_mesh_count = n;
    pthread_mutex_unlock(&h->mtx);
    for (int i = 0; i < nold; i++) msg_buf_unref(old[i]); /* outside the lock: the last may free megabytes */
}

int hub_fill_obstacle_mesh(hub *h, uint64_t hash, msg_buf *mesh) {
    int k = 0;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < h->obstacle_mesh_count; i++) {
        hub_obstacle *o = &h->obstacle_mesh[i];
        if (o->hash != hash || o->mesh || o->too_big) continue;
        o->mesh = msg_buf_ref(mesh);
        k++;
    }
    pthread_mutex_unlock(&h->mtx);
    return k;
}

int hub_get_obstacles(hub *h, hub_obstacle *out, int cap) {
    pthread_mutex_lock(&h->mtx);
    int n = h->obstacle_mesh_count < cap ? h->obstacle_mesh_count : cap;
    for (int i = 0; i < n; i++) {
        out[i] = h->obstacle_mesh[i];
        out[i].mesh = msg_buf_ref(out[i].mesh);
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

msg_buf *hub_obstacles_msg(hub *h) {
    pthread_mutex_lock(&h->mtx);
    msg_buf *m = msg_buf_ref(h->obstacles_msg);
    pthread_mutex_unlock(&h->mtx);
    return m;
}

msg_buf *hub_obstacle_mesh(hub *h, uint32_t id, bool *listed, bool *too_big) {
    msg_buf *m = NULL;
    bool in = false, big = false;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < h->obstacle_mesh_count && !in; i++)
        if (h->obstacle_mesh[i].id == id) {
            in = true, big = h->obstacle_mesh[i].too_big;
            m = msg_buf_ref(h->obstacle_mesh[i].mesh);
        }
    pthread_mutex_unlock(&h->mtx);
    if (listed) *listed = in;
    if (too_big) *too_big = big;
    return m;
}

void hub_get_info(hub *h, world_info *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->info;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_stats(hub *h, sim_stats *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->stats;
    pthread_mutex_unlock(&h->mtx);
}

int hub_take_bcast(hub *h, uint64_t *next, msg_buf **out, int max, bool *lost) {
    int n = 0;
    *lost = false;
    pthread_mutex_lock(&h->mtx);
    uint64_t oldest = h->bcast_next > HUB_BCAST_RING ? h->bcast_next - HUB_BCAST_RING : 0;
    if (*next < oldest) {
        *lost = true;
        *next = oldest;
    }
    while (n < max && *next < h->bcast_next) {
        out[n++] = msg_buf_ref(h->bcast[*next % HUB_BCAST_RING]);
        (*next)++;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

int hub_take_replies(hub *h, cmd_reply *out, int max) {
    int n = 0;
    pthread_mutex_lock(&h->mtx);
    while (n < max && h->reply_count > 0) {
        out[n++] = h->replies[h->reply_head];
        h->reply_head = (h->reply_head + 1) % HUB_REPLY_RING;
        h->reply_count--;
    }
    pthread_mutex_unlock(&h->mtx);
    return n;
}

uint32_t hub_put_upload(hub *h, msg_buf *buf) {
    uint32_t id = 0;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_UPLOADS && !id; i++)
        if (!h->upload[i].buf) {
            if (++h->next_upload == 0) h->next_upload = 1;
            id = h->next_upload;
            h->upload[i].id = id;
            h->upload[i].buf = buf;
        }
    pthread_mutex_unlock(&h->mtx);
    return id;
}

msg_buf *hub_take_upload(hub *h, uint32_t id) {
    msg_buf *b = NULL;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_UPLOADS; i++)
        if (h->upload[i].buf && h->upload[i].id == id) {
            b = h->upload[i].buf;
            h->upload[i].buf = NULL;
        }
    pthread_mutex_unlock(&h->mtx);
    return b;
}

void hub_drop_upload(hub *h, uint32_t id) {
    msg_buf_unref(hub_take_upload(h, id));
}

void hub_set_bus_state(hub *h, const bus_state *s) {
    pthread_mutex_lock(&h->mtx);
    h->bus = *s;
    pthread_mutex_unlock(&h->mtx);
}

void hub_get_bus_state(hub *h, bus_state *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->bus;
    pthread_mutex_unlock(&h->mtx);
}

void hub_set_fleet(hub *h, const fleet_state *s, msg_buf *doc) {
    pthread_mutex_lock(&h->mtx);
    h->fleet = *s;
    msg_buf *old = h->fleet_doc;
    h->fleet_doc = doc;
    pthread_mutex_unlock(&h->mtx);
    msg_buf_unref(old);
}

void hub_get_fleet_state(hub *h, fleet_state *out) {
    pthread_mutex_lock(&h->mtx);
    *out = h->fleet;
    pthread_mutex_unlock(&h->mtx);
}

msg_buf *hub_get_fleet_doc(hub *h) {
    pthread_mutex_lock(&h->mtx);
    msg_buf *m = msg_buf_ref(h->fleet_doc);
    pthread_mutex_unlock(&h->mtx);
    return m;
}

void hub_set_fence(hub *h, uint64_t until_ns) {
    atomic_store(&h->fence_ns, until_ns);
}

uint64_t hub_fence(hub *h) {
    return atomic_load(&h->fence_ns);
}

void hub_put_fleet_snap(hub *h, msg_buf *snap, uint64_t tick, bool last) {
    pthread_mutex_lock(&h->mtx);
    msg_buf *old = h->fleet_snap;
    h->fleet_snap = snap;
    h->fleet_snap_tick = tick;
    h->fleet_snap_last = last;
    pthread_mutex_unlock(&h->mtx);
    msg_buf_unref(old);
}

msg_buf *hub_take_fleet_snap(hub *h, uint64_t *tick, bool *last) {
    pthread_mutex_lock(&h->mtx);
    msg_buf *m = h->fleet_snap;
    h->fleet_snap = NULL;
    if (tick) *tick = h->fleet_snap_tick;
    if (last) *last = m && h->fleet_snap_last;
    pthread_mutex_unlock(&h->mtx);
    return m;
}

void hub_ask_fleet_save(hub *h, bool last) {
    atomic_store(&h->fleet_save_asked, last ? 2 : 1);
}

bool hub_fleet_save_asked(hub *h, bool *last) {
    const int asked = atomic_exchange(&h->fleet_save_asked, 0);
    if (last) *last = asked == 2;
    return asked != 0;
}

bool hub_fleet_save_pending(hub *h) {
    return atomic_load(&h->fleet_save_asked) != 0;
}

bool hub_ask_drain(hub *h, uint32_t node, bool put, bool newest) {
    pthread_mutex_lock(&h->mtx);
    int at = -1;
    for (int i = 0; i < h->drain_asks; i++)
        if (h->drain_ask[i] == node) at = i;
    const bool ok = at >= 0 || h->drain_asks < HUB_DRAIN_ASKS;
    if (at >= 0 && newest) h->drain_put[at] = put;
    if (at < 0 && ok) {
        h->drain_ask[h->drain_asks] = node;
        h->drain_put[h->drain_asks++] = put;
    }
    pthread_mutex_unlock(&h->mtx);
    return ok;
}

bool hub_take_drain(hub *h, uint32_t *node, bool *put) {
    pthread_mutex_lock(&h->mtx);
    const bool any = h->drain_asks > 0;
    if (any) {
        *node = h->drain_ask[0];
        *put = h->drain_put[0];
        const size_t rest = (size_t)(h->drain_asks - 1);
        memmove(&h->drain_ask[0], &h->drain_ask[1], rest * sizeof h->drain_ask[0]);
        memmove(&h->drain_put[0], &h->drain_put[1], rest * sizeof h->drain_put[0]);
        h->drain_asks--;
    }
    pthread_mutex_unlock(&h->mtx);
    return any;
}

int hub_get_relays(hub *h, uint32_t *relay, int *viewers, int max) {
    const uint64_t now = mono_ns();
    int k = 0;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_RELAYS && k < max; i++)
        if (remote_live(h, i, now)) {
            relay[k] = h->remote[i].relay;
            viewers[k++] = h->remote[i].w.clients;
        }
    pthread_mutex_unlock(&h->mtx);
    return k;
}

unsigned hub_relay_tiers(hub *h) {
    const uint64_t now = mono_ns();
    unsigned tiers = 1;
    pthread_mutex_lock(&h->mtx);
    for (int i = 0; i < HUB_RELAYS; i++)
        if (remote_live(h, i, now))
            for (int t = 1; t < FRAME_TIERS; t++)
                if (h->remote[i].w.coarse[t - 1].clients > 0) tiers |= 1u << t;
    pthread_mutex_unlock(&h->mtx);
    return tiers;
}

void hub_touch(hub *h, uint64_t now_ns) {
    pthread_mutex_lock(&h->mtx);
    if (now_ns > h->touched_ns) h->touched_ns = now_ns;
    pthread_mutex_unlock(&h->mtx);
}

uint64_t hub_touched(hub *h) {
    pthread_mutex_lock(&h->mtx);
    uint64_t t = h->touched_ns;
    pthread_mutex_unlock(&h->mtx);
    return t;
}
