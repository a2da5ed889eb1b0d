/* ws_frames.c - each client's next frame and stride (see ws_frames.h and
 * protocol/PROTOCOL.md, "Frames, baselines, epochs"). */
#include "ws_frames.h"

#include <string.h>

#include "clock.h"
#include "frame_held.h"
#include "frame_tier.h"
#include "link_meter.h"
#include "link_rule.h"
#include "hub.h"
#include "log.h"
#include "net_internal.h"
#include "net_room.h"
#include "ws_client.h"

/* Counts the frames c will never be sent up to seq (of its stream): those
 * older than a frame it was sent, or gone from the ring unsent. */
static void count_dropped(net_room *v, ws_client *c, uint32_t epoch, uint32_t seq) {
    if (!c->held.any || epoch != c->held.epoch) return;
    uint32_t from = c->last_seq > c->dropped_through ? c->last_seq : c->dropped_through;
    if (seq <= from) return;
    v->net->frames_dropped += seq - from;
    c->frames_dropped += seq - from;
    c->dropped_through = seq;
}

bool ws_frames_take(net_room *v) {
    frameset got[HUB_FRAME_RING];
    int k = hub_take_framesets(v->hub, &v->frames_next, got, HUB_FRAME_RING);
    /* the time between frames, over a second or more (framesets come in
     * bursts when the network thread was busy) */
    uint64_t now = clock_now_ns();
    v->frames_counted += (uint64_t)k;
    if (!v->frames_at_ns) v->frames_at_ns = now, v->frames_counted = 0;
    if (now - v->frames_at_ns >= 1000000000ull) {
        if (v->frames_counted) v->frame_s = (double)(now - v->frames_at_ns) / 1e9 / (double)v->frames_counted;
        v->frames_at_ns = now;
        v->frames_counted = 0;
    }
    for (int i = 0; i < k; i++) {
        uint64_t at = v->frames_next - (uint64_t)k + (uint64_t)i;
        frameset *old = &v->frames[at % HUB_FRAME_RING];
        if (old->count)
            for (ws_client *c = v->clients; c; c = c->next) count_dropped(v, c, old->epoch, old->seq);
        frameset_unref(old);
        *old = got[i];
        for (int j = 0; j < got[i].count; j++) {
            const frame_coding *fc = &got[i].coding[j];
            if (fc->base == got[i].seq - 1 && fc->tier >= 0 && fc->tier < FRAME_TIERS)
                v->tier_bytes[fc->tier] = fc->msg->len;
        }
    }
    return k > 0;
}

static const frameset *ring_at(const net_room *v, uint64_t k) {
    return &v->frames[k % HUB_FRAME_RING];
}

static uint64_t ring_oldest(const net_room *v) {
    return v->frames_next > HUB_FRAME_RING ? v->frames_next - HUB_FRAME_RING : 0;
}

/* Whether fs is newer than what c was last sent: never an older frame of
 * the same stream, even to a client whose decoder holds nothing (it asked for
 * a keyframe: an older keyframe still in the ring is not one). */
static bool newer(const ws_client *c, const frameset *fs) {
    if (fs->count <= 0) return false;
    if (c->sent_any && fs->epoch == c->last_epoch && fs->seq <= c->last_seq) return false;
    return !c->held.any || fs->epoch != c->held.epoch || fs->seq > c->last_seq;
}

/* The smallest delta of fs in the tier of the frames c holds that c can
 * decode whose base is at most max_gap frames back, or -1. */
static int usable_delta(const ws_client *c, const frameset *fs, uint32_t max_gap) {
    int best = -1;
    for (int i = 0; i < fs->count; i++) {
        const frame_coding *fc = &fs->coding[i];
        if (fc->tier != c->held_tier || fc->base == FC_NONE || fs->seq - fc->base > max_gap ||
            !fc_held_can_decode(&c->held, fs->epoch, fc->base, fc->prev))
            continue;
        if (best < 0 || fc->msg->len < fs->coding[best].msg->len) best = i;
    }
    return best;
}

/* fs's keyframe of tier, or -1. */
static int key_of(const frameset *fs, int tier) {
    for (int i = 0; i < fs->count; i++)
        if (fs->coding[i].base == FC_NONE && fs->coding[i].tier == tier) return i;
    return -1;
}

/* Whether c's decoder holds frames of the tier it is due (a client moved to
 * another tier takes the old tier's deltas until its new tier's keyframe). */
static bool in_tier(const ws_client *c) {
    return c->held.any && c->held_tier == c->link.tier;
}

/* Finds the newest frame c can take: a delta it can decode that keeps its
 * stride (a client taking every 2nd frame that took a delta 4 back would
 * hold only every 4th from then on), else any delta it can decode, else
 * (it holds nothing usable) the newest keyframe.  Sets *at and *which;
 * false if none. */
/* Whether c can no longer expect a delta it can decode: nothing held,
 * another stream, or a stride's worth of frames went by without one. */
static bool stuck(const net_room *v, const ws_client *c) {
    const frameset *newest = ring_at(v, v->frames_next - 1);
    return c->need_key || !c->held.any || newest->epoch != c->held.epoch ||
           newest->seq >= c->last_seq + 2 * (uint32_t)c->link.stride;
}

/* The grid a paced client follows now: its pace, or a finer one (every
 * 2nd, every frame) until its decoder holds two frames of the pace's grid,
 * the newest and the one a pace before it.  The codings against the frame
 * 2 (4) back predict from those two, so a client that holds only a keyframe
 * off the grid (or the frames of a finer pace) climbs there through the
 * finer codings; it would otherwise find no usable delta on the grid, and
 * be sent a keyframe, again and again. */
static uint32_t pace_grid(const ws_client *c) {
    const uint32_t top = fc_held_newest(&c->held);
    if (top == FC_NONE) return 1;
    for (uint32_t p = (uint32_t)c->link.pace; p > 1; p /= 2)
        if (top % p == 0 && top >= p && fc_held_has(&c->held, c->held.epoch, top - p)) return p;
    return 1;
}

/* A client whose decoder asked for every 2nd (4th) frame takes, in its
 * stream, only the frames whose seq is a multiple of that: the ones the
 * encoder also codes against the frame 2 (4) back, so from every frame it
 * steps onto that grid with frames it holds (PROTOCOL.md, "pace"; grid:
 * pace_grid's, how it gets there).  While it bridges to a faster stride it takes the
 * frame after its last, whatever its seq. */
static bool off_pace(const ws_client *c, const frameset *fs, uint32_t grid) {
    return c->link.pace > 1 && !c->link.bridging && c->held.any && fs->epoch == c->held.epoch && fs->seq % grid != 0;
}

static bool find(const net_room *v, const ws_client *c, uint64_t *at, int *which) {
    /* a client moved to another tier: that tier's newest keyframe once there
     * is one (it asked for it), meanwhile its old tier's deltas */
    if (c->held.any && !in_tier(c))
        for (uint64_t k = v->frames_next; k-- > ring_oldest(v);) {
            const frameset *fs = ring_at(v, k);
            if (!newer(c, fs)) break;
            int i = key_of(fs, c->link.tier);
            if (i >= 0) {
                *at = k;
                *which = i;
                return true;
            }
        }
    /* moved to a coarser tier, its keyframe asked for at once: the old
     * tier's deltas are what the link could not carry */
    if (c->held.any && c->link.tier > c->held_tier && c->key_asked && !c->key_deferred) return false;
    /* a keyframe (someone else's, or the recording's) only for a client that
     * needs one: one waiting for its next delta waits, not paying a key's bytes */
    int passes = stuck(v, c) ? 3 : 2;
    const uint32_t grid = pace_grid(c);
    for (int pass = 0; pass < passes; pass++)
        for (uint64_t k = v->frames_next; k-- > ring_oldest(v);) {
            const frameset *fs = ring_at(v, k);
            if (!newer(c, fs)) break;
            if (pass < 2 && off_pace(c, fs, grid)) continue;
            int i = pass == 2     ? key_of(fs, c->link.tier)
                    : c->need_key ? -1
                                  : usable_delta(c, fs, pass == 0 ? (uint32_t)c->link.stride : FC_NONE);
            if (i >= 0) {
                *at = k;
                *which = i;
                return true;
            }
        }
    return false;
}

/* The frame c asked the next frames to be coded against, if its decoder
 * still holds it (0: none). */
static uint32_t base_wanted(const ws_client *c) {
    return c->base_want && in_tier(c) && fc_held_has(&c->held, c->held.epoch, c->base_want) ? c->base_want : 0;
}

static void want_base(net_room *v, ws_client *c, uint32_t seq) {
    if (c->base_want == seq) return;
    c->base_want = seq;
    ws_frames_update_wants(v);
}

/* A client that has no usable delta but holds recent frames of its tier
 * and stream: instead of a keyframe, the next frames are coded against its
 * newest, while the encoder still holds it (a keyframe's bytes on a slow
 * link take longer to send than the frames the ring keeps).  Not on a
 * relay: its wants reach the sim node without bases.  False: it needs a
 * keyframe. */
static bool go_on_from_newest(net_room *v, ws_client *c, const frameset *newest) {
    if (v->net->relay_id || c->need_key || !in_tier(c) || newest->epoch != c->held.epoch) return false;
    uint32_t h = fc_held_newest(&c->held);
    if (h == FC_NONE || h >= newest->seq || newest->seq + 1 - h >= FC_HISTORY) return false;
    want_base(v, c, h);
    return true;
}

bool ws_frames_pending(const net_room *v, const ws_client *c) {
    uint64_t at;
    int which;
    return v->frames_next > 0 && find(v, c, &at, &which);
}

/* Asks the encoder for a keyframe of c's tier: one request per client until
 * the keyframe comes (or the ring no longer holds the frame that answered
 * it), none within NET_KEY_GAP_NS of the last keyframe it was sent. */
static void request_key_now(net_room *v, ws_client *c, bool now) {
    if (c->key_asked && c->key_tier == c->link.tier && v->frames_next < c->key_asked_at + HUB_FRAME_RING) return;
    /* at most one keyframe coded for a client a second: within the second
     * after its last one, the request waits (a keyframe coded anyway, for a
     * new stream or another client, is still sent to it if it comes first);
     * but a client the measured rate sends back from a try takes its tier's
     * keyframe at once (a try costs one more, and tries are rarer than that) */
    if (!now && c->key_sent_ns && clock_now_ns() - c->key_sent_ns < NET_KEY_GAP_NS) {
        if (!c->key_deferred) {
            c->key_deferred = true;
            c->keys_deferred++;
            v->net->key_deferred++;
        }
        return;
    }
    c->key_deferred = false;
    c->key_asked = true;
    c->key_tier = c->link.tier;
    c->key_asked_at = v->frames_next;
    if (c->link.tier > 0)
        v->wants.coarse[c->link.tier - 1].key_requests++;
    else
        v->wants.key_requests++;
    hub_set_frame_wants(v->hub, &v->wants);
}

static void request_key(net_room *v, ws_client *c) {
    request_key_now(v, c, false);
}

void ws_frames_want_key(net_room *v, ws_client *c) {
    c->need_key = true;
    request_key(v, c);
}

void ws_frames_release_keys(net_room *v) {
    for (ws_client *c = v->clients; c; c = c->next)
        if (c->key_deferred) request_key(v, c);
}

void ws_frames_set_pace(net_room *v, ws_client *c, int stride) {
    c->link.pace = stride;
    if (c->link.stride < stride) {
        c->link.stride = stride;
        c->link.stride_ns = clock_now_ns();
        c->link.bridging = false;
        ws_frames_update_wants(v);
    }
}

void ws_frames_set_detail(net_room *v, ws_client *c, bool full) {
    link_pin(&c->link, full, clock_now_ns());
    if (!in_tier(c)) request_key(v, c);
    ws_frames_update_wants(v);
}

/* The bytes a second each tier's frames would take at c's stride: each
 * tier's last delta (a tier no client takes now: its last seen, else 2.5
 * times the next coarser one's) over the stream's time between frames. */
static void tier_needs(const net_room *v, const ws_client *c, double need[LINK_TIERS_MAX]) {
    double per_s = v->frame_s > 0 ? 1.0 / v->frame_s : 30.0;
    for (int t = 0; t < LINK_TIERS_MAX; t++) need[t] = t < FRAME_TIERS ? (double)v->tier_bytes[t] : 0;
    for (int t = FRAME_TIERS - 2; t >= 0; t--)
        if (need[t] <= 0 && need[t + 1] > 0) need[t] = 2.5 * need[t + 1];
    for (int t = 1; t < FRAME_TIERS; t++)
        if (need[t] <= 0 && need[t - 1] > 0) need[t] = need[t - 1] / 2.5;
    for (int t = 0; t < LINK_TIERS_MAX; t++) need[t] *= per_s / c->link.stride;
}

/* A slow link's socket lets fewer bytes wait unsent: the frame that shows
 * a client's push waits behind less (PROTOCOL.md, "Tiers of detail"). */
static void set_lowat(ws_client *c) {
    int want = c->link.tier > 0 || c->link.stride > 1 ? NET_NOTSENT_LOWAT_SLOW : NET_NOTSENT_LOWAT;
    if (want == c->lowat) return;
    if (link_meter_set_lowat((int)lws_get_socket_fd(c->wsi), want)) c->lowat = want;
}

/* c's socket's TCP_INFO sample (link_meter.h); false where there is none. */
static bool sample(const ws_client *c, link_sample *ls) {
    return c->wsi && link_meter_read((int)lws_get_socket_fd(c->wsi), ls);
}

/* The bytes of c's stream the kernel still holds: unsent, or sent and not
 * yet acknowledged. */
static double queued(const link_sample *ls) {
    return (double)ls->unacked * ls->mss + ls->notsent;
}

/* A new window of late picks and busy time from now (link_rule.h). */
static void new_window(ws_client *c, uint64_t now) {
    c->late = 0;
    c->reader_slow = false;
    c->busy_ns = 0;
    c->window_ns = now;
}

static void hold_poll(ws_client *c);

/* Holds c's frames until its link has delivered what it holds, or until
 * `until` (ws_client.h, holding); proving: a try's keyframe. */
static void hold(ws_client *c, bool proving, uint64_t until) {
    c->holding = true;
    c->proving = proving;
    c->hold_until = until;
    hold_poll(c);
}

/* Looks at a held client's socket again in NET_HOLD_POLL_US (ws.c's timer
 * asks for a write, which comes to hold_over): no frame of a paused world
 * would.  Not for a client being closed for bad messages (its timer is the
 * close's). */
static void hold_poll(ws_client *c) {
    if (c->wsi && !c->close_bad) lws_set_timer_usecs(c->wsi, NET_HOLD_POLL_US);
}

/* What a change of tier needs: its keyframe (at once when the client holds
 * frames its link cannot carry: the measured rate sent it to a coarser tier,
 * or a try failed), the encoder's wants, the socket's unsent bytes; and a
 * new window (late picks and busy time are the new tier's). */
static void changed(net_room *v, ws_client *c, int what, const link_window *w, uint64_t now) {
    if (what)
        log_debug("ws: client %u: late %d, busy %.2f, rate %.0f kB/s: stride %d, tier %d%s%s%s", (unsigned)c->id,
                  w->late, w->busy, w->rate / 1e3, c->link.stride, c->link.tier, c->link.bridging ? " (bridging)" : "",
                  what & LINK_MEASURED ? " (measured)" : "", what & LINK_BACK ? " (the try failed)" : "");
    if (what & (LINK_COARSER | LINK_FINER)) {
        bool measured_down = (what & (LINK_MEASURED | LINK_COARSER)) == (LINK_MEASURED | LINK_COARSER);
        link_sample ls;
        if ((measured_down || (what & LINK_BACK)) && sample(c, &ls)) {
            /* the old tier's frames its link could not carry are queued: the
             * new tier's keyframe waits until they have gone (so that it
             * shows the newest world, and no frame adds to the queue), and
             * late picks until the new tier's frames have drained them are
             * that backlog's */
            const double q = queued(&ls);
            link_window now_w = *w;
            now_w.now = now;
            tier_needs(v, c, now_w.need);
            link_settle(&c->link, &now_w, q);
            if (q > NET_DRAIN_LEFT && w->rate > 0) {
                double ns = q / w->rate * 1e9;
                hold(c, false, now + (ns < (double)NET_DRAIN_MAX_NS ? (uint64_t)ns : NET_DRAIN_MAX_NS));
            }
        }
        request_key_now(v, c, measured_down || (what & LINK_BACK));
        new_window(c, now);
    }
    set_lowat(c);
    ws_frames_update_wants(v);
}

/* Reads the socket's TCP_INFO: whether the receiver's window held the sender
 * back since the last read (noted for the window), and the sample. */
static bool read_link(ws_client *c, link_sample *ls) {
    if (!sample(c, ls)) return false;
    bool held = ls->rwnd_limited_us > c->rwnd_us;
    if (held) c->reader_slow = true;
    c->rwnd_us = ls->rwnd_limited_us;
    return !held;
}

/* Whether the kernel still held bytes of c's stream unsent, at a pick that
 * found it a stride behind: the link's window (its congestion window, or
 * the reader's receive window) was full, so its link or its reader was
 * late.  A socket that had sent everything was kept waiting by this host (a
 * network thread the CPU did not run in time), which no coarser tier or
 * slower stride would help: such a pick is not counted against the link.
 * Bytes sent and not yet acknowledged do not count: on a busy host the
 * acknowledgements of a loopback or a fast link are handled late too
 * (seen: 12-17 kB unacknowledged and nothing unsent).  Counted where the
 * kernel does not say. */
static bool link_held(const ws_client *c) {
    link_sample ls;
    if (!sample(c, &ls)) return true;
    return ls.notsent > 0;
}

static link_window window_of(const net_room *v, const ws_client *c, uint64_t now) {
    double busy = now > c->window_ns ? (double)c->busy_ns / (double)(now - c->window_ns) : 0;
    int t = c->link.tier;
    size_t mine = v->tier_bytes[t], full = v->tier_bytes[0];
    link_window w = {.now = now,
                     .from = c->window_ns,
                     .late = c->late,
                     .busy = busy,
                     .ratio = mine && full && t ? (double)full / mine : 0,
                     .reader = c->reader_slow,
                     .rate = c->rate_max,
                     .rate_ns = c->rate_ns};
    tier_needs(v, c, w.need);
    return w;
}

/* The client's stride and tier from what its link did over the last window
 * (link_rule.h): late picks (it could not take the frame it was due), the
 * fraction of the window it spent sending, its measured rate. */
static void judge(net_room *v, ws_client *c, uint64_t now) {
    if (now - c->window_ns < LINK_WINDOW_NS && c->late < LINK_LATE_TO_SLOW) {
        /* between windows, on the window so far: every frame again, or the full world's try, once due */
        if (c->link.stride > c->link.pace || (c->link.tier > 0 && !c->link.pinned && now >= c->link.probe_ns)) {
            link_window w = window_of(v, c, now);
            int what = link_try(&c->link, &w);
            if (what) changed(v, c, what, &w, now);
        }
        return;
    }
    link_sample ls;
    read_link(c, &ls);
    link_window w = window_of(v, c, now);
    changed(v, c, link_judge(&c->link, &w), &w, now);
    new_window(c, now);
}

void ws_frames_measure(net_room *v, ws_client *c) {
    link_sample ls;
    /* a sample the receiver's window held back measures the reader, not the link */
    if (!read_link(c, &ls) || ls.app_limited || ls.rate <= 0) return;
    /* the highest sample of the last second: the kernel's samples run low
     * more often than high (a window the congestion control held back, ACKs
     * that came late) */
    uint64_t now = clock_now_ns();
    if (ls.rate > c->rate_max || now - c->rate_max_ns > NET_RATE_MAX_NS) c->rate_max = ls.rate, c->rate_max_ns = now;
    c->rate_ns = now;
    if (c->link.pinned || !c->window_ns) return;
    link_window w = window_of(v, c, now);
    w.late = 0; /* late picks and busy time are judged over whole windows */
    changed(v, c, link_measure(&c->link, &w), &w, now);
}

/* While c's frames are held (ws_client.h, holding): whether the hold is
 * over.  A try's keyframe is delivered when every byte written is
 * acknowledged (the try goes on); not delivered by hold_until, the try
 * failed (back, the old tier's keyframe asked for at once, and a hold for
 * the queue it leaves).  A backlog is drained when at most NET_DRAIN_LEFT
 * bytes are left, or at hold_until.  While held nothing is picked: a link
 * too slow for the try queues no more than its keyframe, and the frame
 * after a backlog shows the newest world. */
static bool hold_over(net_room *v, ws_client *c, uint64_t now) {
    link_sample ls;
    bool delivered =
        !sample(c, &ls) || (c->proving ? ls.notsent == 0 && ls.unacked == 0 : queued(&ls) <= NET_DRAIN_LEFT);
    if (c->proving && !c->link.trying) delivered = true; /* moved since, by its rate */
    if (!delivered && now < c->hold_until) {
        hold_poll(c);
        return false;
    }
    bool failed = c->proving && !delivered;
    if (!c->proving) new_window(c, now); /* the backlog's sending was the old tier's */
    c->holding = c->proving = false;
    if (failed) {
        link_window w = window_of(v, c, now);
        changed(v, c, link_proof_failed(&c->link, now), &w, now);
    }
    return !c->holding;
}

/* A try's keyframe picked: held until delivered, its time from the full
 * world's rate and the connection's least round trip (link_proof_ns). */
static void proof_begin(net_room *v, ws_client *c, const msg_buf *key, uint64_t now) {
    link_sample ls;
    uint64_t rtt_ns = 0;
    if (sample(c, &ls) && ls.min_rtt_us != UINT32_MAX) rtt_ns = (uint64_t)ls.min_rtt_us * 1000u;
    link_window w = window_of(v, c, now);
    uint64_t t = link_proof_ns(&w, key->len, rtt_ns);
    if (t > 0) hold(c, true, now + t);
}

msg_buf *ws_frames_pick(net_room *v, ws_client *c) {
    uint64_t now = clock_now_ns();
    if (!c->window_ns) c->window_ns = now;
    if (!v->frames_next) return NULL;
    if (c->holding && !hold_over(v, c, now)) return NULL;
    if (c->held.any && !in_tier(c)) request_key(v, c);
    uint64_t at;
    int which;
    if (!find(v, c, &at, &which)) {
        const frameset *newest = ring_at(v, v->frames_next - 1);
        /* A keyframe only when its next coding cannot come any more. */
        if (newer(c, newest) && stuck(v, c) && !go_on_from_newest(v, c, newest)) {
            if (!c->need_key)
                log_debug("ws: client %u: nothing usable (last %u, newest %u, stride %d); keyframe", (unsigned)c->id,
                          (unsigned)c->last_seq, (unsigned)newest->seq, c->link.stride);
            ws_frames_want_key(v, c);
        }
        return NULL;
    }
    const frameset *fs = ring_at(v, at);
    const frame_coding *fc = &fs->coding[which];
    const frameset *newest = ring_at(v, v->frames_next - 1);
    uint64_t skipped = v->frames_next - 1 - at;
    /* (late picks while a change's backlog drains are that backlog's: they count for nothing) */
    if (newest->epoch == fs->epoch && skipped >= (uint64_t)c->link.stride && now >= c->link.settle_ns && link_held(c))
        c->late++;
    count_dropped(v, c, fs->epoch, fs->seq - 1);
    if (fc->base == FC_NONE) {
        if (c->link.trying && fc->tier == 0) proof_begin(v, c, fc->msg, now);
        c->need_key = false;
        c->key_asked = false;
        c->key_deferred = false;
        c->key_sent_ns = now;
        c->keyframes_sent++;
        v->net->keyframes_sent++;
    } else if (c->link.bridging && fc->prev == FC_NONE && fc->base == fs->seq - 1) {
        link_bridged(&c->link, now);
    }
    /* frames of another tier: the decoder's frames of the old tier are no
     * base for them (their grids differ) */
    if (fc->tier != c->held_tier) fc_held_reset(&c->held);
    c->held_tier = fc->tier;
    fc_held_note(&c->held, fs->epoch, fs->seq, fc->base, fc->prev);
    c->last_seq = fs->seq;
    c->last_epoch = fs->epoch;
    c->sent_any = true;
    /* a keyframe's sending is no measure of the tier's steady frames: it
     * counts no busy time (a try's or a move's keyframe would hold off the
     * next try for a whole window) */
    c->pick_ns = fc->base == FC_NONE ? 0 : now;
    /* the next frame's usual coding is against this one, with velocities
     * from the frame a stride before it: without that one (a keyframe, a
     * jump over frames it could not take), the next frames are coded
     * against this one alone too */
    if (!v->net->relay_id)
        want_base(v, c, fc_held_has(&c->held, fs->epoch, fs->seq - (uint32_t)c->link.stride) ? 0 : fs->seq);
    judge(v, c, now);
    return msg_buf_ref(fc->msg);
}

void ws_frames_sent(net_room *v, ws_client *c) {
    (void)v;
    if (c->pick_ns) c->busy_ns += clock_now_ns() - c->pick_ns;
    c->pick_ns = 0;
}

void ws_frames_update_wants(net_room *v) {
    frame_wants w = v->wants;
    w.clients = 0;
    w.stride2 = w.stride4 = w.bridge = false;
    frame_tier_wants tw[FRAME_TIERS] = {{0}};
    for (ws_client *c = v->clients; c; c = c->next) {
        if (c->reject) continue;
        w.clients++;
        /* its tier, and while it moves to another, the tier it holds too */
        for (int t = 0; t < FRAME_TIERS; t++) {
            if (t != c->link.tier && !(c->held.any && t == c->held_tier)) continue;
            tw[t].clients++;
            /* a client taking every 4th frame also takes every 2nd's codings
             * while its frames held are 2 apart (after a change of stride) */
            tw[t].stride2 |= c->link.stride >= 2;
            tw[t].stride4 |= c->link.stride >= 4;
            tw[t].bridge |= c->link.bridging;
        }
        uint32_t b = base_wanted(c);
        frame_tier_wants *bt = &tw[c->held_tier];
        bool listed = false;
        for (int i = 0; i < bt->nbases; i++) listed |= bt->bases[i] == b;
        if (b && !listed && bt->nbases < FRAME_BASES_MAX) bt->bases[bt->nbases++] = b;
    }
    w.stride2 = tw[0].stride2, w.stride4 = tw[0].stride4, w.bridge = tw[0].bridge;
    w.nbases = tw[0].nbases;
    memcpy(w.bases, tw[0].bases, sizeof w.bases);
    bool changed = w.clients != v->wants.clients || w.stride2 != v->wants.stride2 || w.stride4 != v->wants.stride4 ||
                   w.bridge != v->wants.bridge || memcmp(w.bases, v->wants.bases, sizeof w.bases) ||
                   w.nbases != v->wants.nbases;
    for (int t = 1; t < FRAME_TIERS; t++) {
        frame_tier_wants *o = &w.coarse[t - 1];
        changed |= o->clients != tw[t].clients || o->stride2 != tw[t].stride2 || o->stride4 != tw[t].stride4 ||
                   o->bridge != tw[t].bridge || o->nbases != tw[t].nbases ||
                   memcmp(o->bases, tw[t].bases, sizeof o->bases);
        o->clients = tw[t].clients, o->stride2 = tw[t].stride2, o->stride4 = tw[t].stride4, o->bridge = tw[t].bridge;
        o->nbases = tw[t].nbases;
        memcpy(o->bases, tw[t].bases, sizeof o->bases);
    }
    if (changed) {
        v->wants = w;
        hub_set_frame_wants(v->hub, &v->wants);
    }
}
