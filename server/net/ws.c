/* ws.c - the WebSocket stream protocol (fluid.v2): a client connects, is
 * sent its hello, replies, broadcasts and the newest frame it can decode
 * fragment by fragment, and sends commands that are decoded, rate limited,
 * checked for authorisation and queued; a client asking for the retired
 * fluid.v1 is closed with a reason.  Network thread only. */
#include "ws.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "clock.h"
#include "hub.h"
#include "frame_tier.h"
#include "invite.h"
#include "link_meter.h"
#include "log.h"
#include "net_internal.h"
#include "net_room.h"
#include "pump.h"
#include "rate.h"
#include "ws_client.h"
#include "ws_frames.h"
#include "wire.h"

/* ---- Sending -------------------------------------------------------------- */

/* The role c has now: the one its credential granted, else its room's
 * public role (which its owner may change while it watches). */
static role ws_role(const net *n, const ws_client *c) {
    return c->granted ? (role)c->role : net_public_role(n, c->room);
}

static msg_buf *encode_hello(net *n, ws_client *c) {
    world_info wi;
    hub_get_info(c->room->hub, &wi);
    return wire_encode_hello(&wi, n->st, c->id, c->room->name, role_name(ws_role(n, c)));
}

/* Chooses the next whole message for c: hello, replies, broadcasts, then
 * the newest frame (older frames are skipped). */
static void pick_next(net *n, ws_client *c) {
    net_room *v = c->room;
    uint64_t oldest = v->bcast_next > HUB_BCAST_RING ? v->bcast_next - HUB_BCAST_RING : 0;
    if (c->bcast_next < oldest) {
        /* Fell behind the broadcast history: resynchronise with a fresh hello. */
        c->hello_pending = true;
        c->bcast_next = v->bcast_next;
        fc_held_reset(&c->held); /* a client resets its decoder at every hello */
        ws_frames_want_key(v, c);
    }
    c->cur_is_frame = false;
    if (c->hello_pending && n->relay_id) {
        world_info wi;
        hub_get_info(v->hub, &wi);
        if (!wi.version) return; /* a relay that has not heard from the sim node yet */
        /* the role its credential gives, as the sim node answers (or, without an answer, its room's public role) */
        if (c->auth_wait && clock_now_ns() - c->connected_ns < NET_AUTH_WAIT_NS) return;
    }
    if (c->hello_pending) {
        c->hello_pending = false;
        c->cur = encode_hello(n, c);
        ws_ctl_push(n, c, hub_obstacles_msg(v->hub)); /* the obstacles now, next (NULL: none published) */
    } else if (c->ctl_count) {
        c->cur = ws_ctl_pop(c);
    } else if (c->bcast_next < v->bcast_next) {
        c->cur = msg_buf_ref(v->bcast[c->bcast_next % HUB_BCAST_RING]);
        c->bcast_next++;
    } else if ((c->cur = ws_frames_pick(v, c)) != NULL) {
        c->cur_is_frame = true;
    }
    c->cur_off = 0;
    if (c->cur) lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, NET_SEND_TIMEOUT_S);
}

static bool has_more(const ws_client *c) {
    if (c->close_bad) return c->cur || c->ctl_count || c->close_ready;
    const net_room *v = c->room;
    return c->cur || c->hello_pending || c->ctl_count || c->bcast_next < v->bcast_next || ws_frames_pending(v, c);
}

static int ws_writeable(net *n, ws_client *c) {
    if (n->closing) {
        static const char why[] = "server shutting down";
        lws_close_reason(c->wsi, LWS_CLOSE_STATUS_GOINGAWAY, (unsigned char *)why, sizeof why - 1);
        return -1;
    }
    if (c->reject) {
        char why[64];
        snprintf(why, sizeof why, "server full (%d clients)", n->cfg->max_clients);
        lws_close_reason(c->wsi, (enum lws_close_status)1013, (unsigned char *)why, strlen(why));
        return -1;
    }
    if (c->close_reason[0]) { /* its room was deleted, or never was */
        lws_close_reason(c->wsi, (enum lws_close_status)(c->close_code ? c->close_code : NET_CLOSE_ROOM_GONE),
                         (unsigned char *)c->close_reason, strlen(c->close_reason));
        return -1;
    }
    if (c->close_bad && !c->cur && !c->ctl_count) {
        /* The error replies went out first, and the client has been quiet
         * for a moment (closing with its unread bytes still queued would
         * reset the connection and lose those replies); now the clean close. */
        if (!c->close_ready) return 0;
        static const char why[] = "too many bad messages";
        lws_close_reason(c->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why, sizeof why - 1);
        return -1;
    }
    if (!c->cur && c->close_bad) {
        c->cur = ws_ctl_pop(c);
        c->cur_off = 0;
        c->cur_is_frame = false;
    }
    ws_frames_measure(c->room, c);
    if (!c->cur) pick_next(n, c);
    if (!c->cur) return 0;
    /* One fragment per callback, copied into this connection's scratch so
     * lws can write the header into LWS_PRE without touching shared bytes. */
    size_t left = c->cur->len - c->cur_off;
    size_t chunk = left < NET_FRAGMENT ? left : NET_FRAGMENT;
    bool first = c->cur_off == 0, last = chunk == left;
    memcpy(c->scratch + LWS_PRE, c->cur->data + c->cur_off, chunk);
    int flags = lws_write_ws_flags(LWS_WRITE_BINARY, first, last);
    int m = lws_write(c->wsi, c->scratch + LWS_PRE, chunk, (enum lws_write_protocol)flags);
    if (m < (int)chunk) {
        log_once("ws-write", "ws: write failed on client %u; closing", (unsigned)c->id);
        return -1;
    }
    n->bytes_sent += chunk;
    c->bytes_sent += chunk;
    c->cur_off += chunk;
    if (last) {
        if (c->cur_is_frame) {
            n->frames_sent++;
            c->frames_sent++;
            ws_frames_sent(c->room, c);
        }
        n->messages_sent++;
        msg_buf_unref(c->cur);
        c->cur = NULL;
        lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
    }
    if (has_more(c)) lws_callback_on_writable(c->wsi);
    return 0;
}

static void bad_message(net *n, ws_client *c, reply_code code, uint32_t rid, const char *cmd_name, const char *reason) {
    n->bad_messages++;
    c->bad++;
    char key[64];
    snprintf(key, sizeof key, "bad:%.40s", reason);
    log_once(key, "ws: client %u: bad message: %s (further ones like it are not logged)", (unsigned)c->id, reason);
    ws_reply_error(n, c, code, rid, cmd_name, reason);
    if (++c->bad_in_a_row >= NET_MAX_BAD_IN_A_ROW && !c->close_bad) {
        c->close_bad = true;
        log_once("close-bad", "ws: closing clients that send %d bad messages in a row (logged once)",
                 NET_MAX_BAD_IN_A_ROW);
        c->close_bad_ns = clock_now_ns();
        lws_set_timer_usecs(c->wsi, NET_CLOSE_QUIET_US);
        lws_callback_on_writable(c->wsi);
    }
}

static void ws_message(net *n, ws_client *c) {
    char err[FS_ERROR_LEN];
    /* Every message, good or bad, costs a token; the refusal is sent after
     * decoding so that it can echo the request id. */
    if (!ws_take_tokens(n, c, 1)) {
        cmd probe;
        char ignored[FS_ERROR_LEN];
        uint32_t rid = 0;
        if (!c->rx_overflow && !c->rx_text) {
            wire_decode_command(c->rx, c->rx_len, &probe, ignored, sizeof ignored);
            rid = probe.rid;
        }
        n->rate_limited++;
        log_once("rate", "ws: client %u exceeded the command rate limit (logged once)", (unsigned)c->id);
        char why[128];
        rate_refusal(why, sizeof why, CMD_NONE, n->cfg->rate_per_s, n->cfg->rate_burst);
        ws_reply_error(n, c, RC_RATE_LIMITED, rid, NULL, why);
        return;
    }
    if (c->rx_overflow) {
        snprintf(err, sizeof err, "message too large (limit %d bytes)", WIRE_MAX_MSG);
        bad_message(n, c, RC_TOO_LARGE, 0, NULL, err);
        return;
    }
    if (c->rx_text) {
        bad_message(n, c, RC_BAD_REQUEST, 0, NULL, "expected a binary msgpack message, got text");
        return;
    }
    cmd cm;
    if (wire_decode_command(c->rx, c->rx_len, &cm, err, sizeof err)) {
        bad_message(n, c, RC_BAD_REQUEST, cm.rid, NULL, err);
        return;
    }
    c->bad_in_a_row = 0;
    double extra = rate_extra_cost(cm.kind);
    if (extra > 0 && !ws_take_tokens(n, c, extra)) {
        n->rate_limited++;
        char why[128];
        rate_refusal(why, sizeof why, cm.kind, n->cfg->rate_per_s, n->cfg->rate_burst);
        ws_reply_error(n, c, RC_RATE_LIMITED, cm.rid, cmd_kind_name(cm.kind), why);
        return;
    }
    if (cm.kind == CMD_GET_PARTICLES || cm.kind == CMD_GET_BODIES || cm.kind == CMD_GET_OBSTACLES) {
        ws_reply_error(n, c, RC_BAD_REQUEST, cm.rid, cmd_kind_name(cm.kind),
                       cm.kind == CMD_GET_PARTICLES ? "get_particles is REST only: GET /api/particles"
                       : cm.kind == CMD_GET_BODIES  ? "get_bodies is REST only: GET /api/bodies (frames carry bodies)"
                                                    : "get_obstacles is REST only: GET /api/obstacles");
        return;
    }
    if (cm.kind == CMD_KEYFRAME) {
        /* its decoder refused a payload: the next frame it gets is a keyframe
         * (one already waited for answers this one too: no more work) */
        c->key_requests++;
        n->key_requests++;
        if (c->need_key) n->key_merged++;
        fc_held_reset(&c->held); /* whatever it holds, it is not what this mirror says */
        ws_frames_want_key(c->room, c);
        lws_callback_on_writable(c->wsi);
        return;
    }
    if (cm.kind == CMD_DETAIL) {
        /* the full world whatever its link (then fewer frames), or the link's choice */
        ws_frames_set_detail(c->room, c, cm.u.detail.full);
        lws_callback_on_writable(c->wsi);
        return;
    }
    if (cm.kind == CMD_PACE) {
        /* its decoder is slower than the stream: send it fewer frames */
        ws_frames_set_pace(c->room, c, cm.u.pace.stride);
        return;
    }
    if (cm.kind == CMD_AUTH && !n->relay_id) {
        char why[200];
        role got;
        if (net_grant(n, c->room, cm.u.auth.token, strlen(cm.u.auth.token), &got, why, sizeof why)) {
            bad_message(n, c, RC_UNAUTHORIZED, cm.rid, "auth", why);
            return;
        }
        c->granted = true;
        c->role = (uint8_t)got;
        c->authed = true;
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.rid = cm.rid;
        r.kind = CMD_AUTH;
        r.ok = true;
        ws_ctl_push(n, c, wire_encode_reply(&r));
        return;
    }
    if (cm.kind == CMD_AUTH) { /* a relay: the sim node answers it (ws_auth_answered) */
        msg_buf_unref(c->cred_pending);
        c->cred_pending = msg_buf_from_bytes(cm.u.auth.token, strlen(cm.u.auth.token));
    }
    cm.client = c->id;
    cm.role = (uint8_t)ws_role(n, c); /* checked where it is applied (apply.c) */
    c->commands++;
    if (n->relay_id) {
        /* a relay: the message as the client sent it, with its credential, to the sim node (which checks
         * both and gives the role) */
        if (!hub_forward(c->room->hub, c->id, HUB_FWD_MSG, msg_buf_from_bytes(c->rx, c->rx_len),
                         c->cred ? msg_buf_ref(c->cred) : NULL)) {
            n->queue_busy++;
            ws_reply_error(n, c, RC_BUSY, cm.rid, cmd_kind_name(cm.kind), "busy: the relay's queue is full, try again");
            return;
        }
    } else if (!net_enqueue(c->room->queue, &cm, false)) {
        n->queue_busy++;
        log_once("busy", "ws: command queue full; refusing commands");
        ws_reply_error(n, c, RC_BUSY, cm.rid, cmd_kind_name(cm.kind), "busy: command queue full, try again");
        return;
    }
    if (cm.kind != CMD_CURSOR) {
        c->inflight++;
        ws_rx_pressure(c);
    }
}

static void ws_receive(net *n, ws_client *c, const void *in, size_t len) {
    /* Reassemble one message (lws may deliver it in pieces and fragments),
     * keeping at most WIRE_MAX_MSG bytes; the rest of an oversized message
     * is dropped as it arrives. */
    if (!c->rx_in_msg) {
        c->rx_in_msg = true;
        c->rx_len = 0;
        c->rx_overflow = false;
        c->rx_text = !lws_frame_is_binary(c->wsi);
    }
    if (!c->rx_overflow) {
        if (len > WIRE_MAX_MSG - c->rx_len) {
            c->rx_overflow = true;
        } else {
            memcpy(c->rx + c->rx_len, in, len);
            c->rx_len += len;
        }
    }
    if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi)) return;
    c->rx_in_msg = false;
    ws_message(n, c);
}

/* An invite in the upgrade's URL (?invite=, as a room's invite link has
 * it): the role it grants; a refused one is said to the client after its
 * hello, and it watches with its room's public role. */
static void read_client_invite(net *n, struct lws *wsi, ws_client *c) {
    char buf[INVITE_MAX_TOKEN + 16];
    const char *v = lws_get_urlarg_by_name(wsi, "invite=", buf, sizeof buf);
    const char *cred = v ? v : c->url_token[0] ? c->url_token : NULL;
    if (!cred || !*cred) return;
    if (n->relay_id) { /* the sim node checks it, and says the role it gives (ws_auth_answered) */
        size_t len = strlen(cred);
        c->cred = len <= INVITE_MAX_TOKEN ? msg_buf_from_bytes(cred, len) : NULL;
        if (!c->cred) {
            ws_reply_error(n, c, RC_UNAUTHORIZED, 0, "auth", "unauthorized: a credential is at most 4096 bytes");
            return;
        }
        c->auth_wait = hub_forward(c->room->hub, c->id, HUB_FWD_CHECK, NULL, msg_buf_ref(c->cred));
        return;
    }
    char why[200];
    role got;
    if (net_grant(n, c->room, cred, strlen(cred), &got, why, sizeof why)) {
        ws_reply_error(n, c, RC_UNAUTHORIZED, 0, "auth", why);
        return;
    }
    c->granted = true;
    c->role = (uint8_t)got;
}

static void read_client_token(struct lws *wsi, ws_client *c) {
    char buf[160];
    const char *v = lws_get_urlarg_by_name(wsi, "token=", buf, sizeof buf);
    if (v) {
        cmd_strlcpy(c->url_token, sizeof c->url_token, v);
        return;
    }
    if (lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION) > 7 && !strncmp(buf, "Bearer ", 7))
        cmd_strlcpy(c->url_token, sizeof c->url_token, buf + 7);
}

/* Keeps at most NET_NOTSENT_LOWAT bytes (plus the fragment being written)
 * waiting unsent in the kernel: the socket reports writable only when its
 * link has drained, so a slow link is seen here (and sent fewer, newer
 * frames) instead of queueing seconds of frames in the kernel. */
static void limit_unsent(struct lws *wsi, ws_client *c) {
    c->lowat = NET_NOTSENT_LOWAT;
    if (!link_meter_set_lowat((int)lws_get_socket_fd(wsi), NET_NOTSENT_LOWAT))
        log_once("lowat", "ws: TCP_NOTSENT_LOWAT not set (%s); slow links queue frames in the kernel", strerror(errno));
}

/* The room a WebSocket upgrade names: /r/{name}/ (or /r/{name}) that room,
 * any other path the default room.  NULL, with the reason for the close,
 * when the name breaks the rule or no such room is listed. */
static net_room *room_of_upgrade(net *n, struct lws *wsi, char *why, size_t cap) {
    char uri[128];
    int l = lws_hdr_copy(wsi, uri, sizeof uri, WSI_TOKEN_GET_URI);
    if (l < 0) {
        snprintf(why, cap, "the path is too long");
        return NULL;
    }
    if (l < 3 || strncmp(uri, "/r/", 3)) {
        n->home->users++;
        return n->home;
    }
    const char *name = uri + 3, *end = strchr(name, '/');
    size_t nl = end ? (size_t)(end - name) : strlen(name);
    if (end && end[1]) {
        snprintf(why, cap, "a room's stream is /r/{name}/");
        return NULL;
    }
    if (!room_name_ok(name, nl, why, cap)) return NULL;
    char buf[ROOM_NAME_CAP];
    memcpy(buf, name, nl);
    buf[nl] = 0;
    net_room *v = net_room_find(n, buf);
    if (!v) snprintf(why, cap, "no room named '%s'", buf);
    return v;
}

int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    net *n = lws_context_user(lws_get_context(wsi));
    ws_client *c = user;

    switch (reason) {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (n) net_pump(n);
        return 0;
    case LWS_CALLBACK_FILTER_PROTOCOL_CONNECTION:
        if (!net_origin_ok(n, wsi)) {
            char origin[128] = "";
            lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN);
            n->origin_refused++;
            log_once("origin-ws", "ws: refusing upgrades from other sites' pages (first: %s); see --allow-origin",
                     origin);
            return 1; /* the upgrade is refused */
        }
        return 0;
    case LWS_CALLBACK_ESTABLISHED:
        c->wsi = wsi;
        c->id = ++n->next_client_id;
        if (n->nclients >= n->cfg->max_clients) {
            n->ws_rejected++;
            log_once("full", "ws: refusing clients beyond --max-clients %d", n->cfg->max_clients);
            c->reject = true;
            lws_callback_on_writable(wsi);
            return 0;
        }
        if (!(c->room = room_of_upgrade(n, wsi, c->close_reason, sizeof c->close_reason))) {
            lws_callback_on_writable(wsi); /* closed with the reason */
            return 0;
        }
        if (c->room->users == 1) net_pump(n); /* a new view: what the room published so far, before its hello */
        c->scratch = malloc(LWS_PRE + NET_FRAGMENT);
        if (!c->scratch) {
            net_room_release(n, c->room);
            return -1;
        }
        read_client_token(wsi, c);
        c->authed = !n->cfg->token[0] || net_token_ok(n, c->url_token);
        read_client_invite(n, wsi, c);
        c->next = c->room->clients;
        c->room->clients = c;
        c->linked = true;
        c->room->nclients++;
        n->nclients++;
        strcpy(c->peer, "?");
        lws_get_peer_simple(wsi, c->peer, sizeof c->peer);
        if (!strncmp(c->peer, "::ffff:", 7)) /* an IPv4 peer on a dual-stack socket */
            memmove(c->peer, c->peer + 7, strlen(c->peer + 7) + 1);
        c->connected_ns = clock_now_ns();
        log_info("ws: client %u connected from %s to room '%s' (%d clients)", (unsigned)c->id, c->peer, c->room->name,
                 n->nclients);
        c->hello_pending = true;
        c->bcast_next = c->room->bcast_next;
        /* (a relay's clients too: the sim node codes the tiers a relay's wants name, and the bus carries them) */
        c->link = link_start(FC_TIERS, clock_now_ns());
        fc_held_reset(&c->held);
        ws_frames_want_key(c->room, c); /* its first frame */
        ws_frames_update_wants(c->room);
        limit_unsent(wsi, c);
        c->bucket = rate_bucket_full(n->cfg->rate_burst, clock_now_ns());
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (c->linked) {
            net_room *v = c->room;
            for (ws_client **pp = &v->clients; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                    *pp = c->next;
                    break;
                }
            c->linked = false;
            v->nclients--;
            n->nclients--;
            cmd left;
            memset(&left, 0, sizeof left);
            left.kind = CMD_CLIENT_LEFT;
            left.client = c->id;
            if (n->relay_id)
                hub_forward(v->hub, c->id, HUB_FWD_LEFT, NULL, NULL);
            else
                net_enqueue(v->queue, &left, true);
            log_info("ws: client %u left (%d clients)", (unsigned)c->id, n->nclients);
            ws_frames_update_wants(v);
            c->room = NULL;
            net_room_release(n, v);
        }
        while (c->ctl_count) msg_buf_unref(ws_ctl_pop(c));
        msg_buf_unref(c->cur);
        c->cur = NULL;
        msg_buf_unref(c->cred);
        msg_buf_unref(c->cred_pending);
        c->cred = c->cred_pending = NULL;
        free(c->scratch);
        c->scratch = NULL;
        return 0;
    case LWS_CALLBACK_RECEIVE:
        if (c->linked && !c->close_bad)
            ws_receive(n, c, in, len);
        else if (c->close_bad && clock_now_ns() - c->close_bad_ns < NET_CLOSE_MAX_WAIT_NS)
            lws_set_timer_usecs(wsi, NET_CLOSE_QUIET_US); /* read and drop until it is quiet */
        return 0;
    case LWS_CALLBACK_TIMER:
        if (c->close_bad) {
            c->close_ready = true;
            lws_callback_on_writable(wsi);
        } else if (c->holding) {
            lws_callback_on_writable(wsi); /* its held frames: is the hold over? (ws_frames.c, hold_poll) */
        }
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return ws_writeable(n, c);
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

int ws_v1_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    static const char why[] = "protocol fluid.v1 is no longer served: this server speaks fluid.v2 (reload the page)";
    switch (reason) {
    case LWS_CALLBACK_ESTABLISHED:
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        lws_close_reason(wsi, (enum lws_close_status)NET_CLOSE_OLD_VERSION, (unsigned char *)why, sizeof why - 1);
        return -1;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}
