/* net.c - libwebsockets context, the WebSocket protocol and the routing of
 * what the sim thread publishes (frames, broadcasts, replies) to clients.
 * Everything in this file runs on the network thread, except net_wake. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "net_internal.h"

#include <limits.h>
#include <stdio.h>
#include <strings.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "clock.h"

/* ---- Shared helpers ------------------------------------------------------ */

bool net_enqueue(net *n, cmd *c, bool internal)
{
    c->arrival_ns = clock_now_ns();
    return cmd_queue_push(n->queue, c, internal);
}

bool net_token_ok(const net *n, const char *token)
{
    const char *want = n->cfg->token;
    size_t wl = strlen(want), tl = strlen(token);
    unsigned diff = (unsigned)(wl ^ tl);
    for (size_t i = 0; i < wl; i++) /* constant time in the token's length */
        diff |= (unsigned)(uint8_t)want[i] ^ (unsigned)(uint8_t)(i < tl ? token[i] : 0);
    return wl > 0 && diff == 0;
}

bool net_origin_ok(const net *n, struct lws *wsi)
{
    char origin[sizeof n->cfg->allow_origin], host[256];
    int got = lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN);
    if (got == 0)
        return true; /* not a browser: scripts and tools send no Origin */
    const char *list = n->cfg->allow_origin;
    if (!strcmp(list, "*"))
        return true;
    if (got < 0)
        return false; /* an Origin too long to copy (-1) is there, and longer than any allowed one */
    const char *o = origin;
    if (!strncmp(o, "http://", 7))
        o += 7;
    else if (!strncmp(o, "https://", 8))
        o += 8;
    if (lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) > 0 && !strcasecmp(o, host))
        return true; /* the page this server served */
    size_t ol = strlen(origin);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && *p == ' ')
            p++, l--;
        while (l && p[l - 1] == ' ')
            l--;
        if (l == ol && !strncasecmp(p, origin, l))
            return true;
        p = e ? e + 1 : p + strlen(p);
    }
    return false;
}

void net_wake(void *arg)
{
    net *n = arg;
    if (n && n->ctx)
        lws_cancel_service(n->ctx);
}

/* libwebsockets' own lines go through log.c, so every line has one format. */
static void lws_emit(int level, const char *line)
{
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r'))
        n--;
    log_msg(level & LLL_ERR ? LOG_ERROR : level & LLL_WARN ? LOG_WARN : level & (LLL_NOTICE | LLL_INFO) ? LOG_INFO : LOG_DEBUG,
            "lws: %.*s", (int)n, line);
}

void net_set_log_level(void)
{
    const char *dbg = getenv("FLUID_LWS_LOG");
    log_level l = log_get_level();
    int lv = LLL_ERR | (l >= LOG_WARN ? LLL_WARN : 0) | (l >= LOG_DEBUG ? LLL_NOTICE : 0);
    lws_set_log_level(dbg ? atoi(dbg) : lv, lws_emit);
}

int net_port(const net *n)
{
    return n->vhost ? lws_get_vhost_listen_port(n->vhost) : -1;
}

/* ---- Per-client control queue ------------------------------------------- */

/* Back-pressure: stop reading a client whose replies (queued here or still
 * in the sim's hands) pile up because it does not read them; read again
 * once half have gone out. */
static void rx_pressure(ws_client *c)
{
    int owed = c->ctl_count + c->inflight;
    if (!c->rx_paused && owed >= NET_RX_PAUSE_AT) {
        lws_rx_flow_control(c->wsi, 0);
        c->rx_paused = true;
    } else if (c->rx_paused && !c->close_bad && owed <= NET_RX_PAUSE_AT / 2) {
        lws_rx_flow_control(c->wsi, 1);
        c->rx_paused = false;
    }
}

static void ctl_push(net *n, ws_client *c, msg_buf *m)
{
    if (!m)
        return;
    if (c->ctl_count >= NET_REPLY_RING) {
        n->replies_dropped++;
        msg_buf_unref(m);
        return;
    }
    c->ctl[(c->ctl_head + c->ctl_count) % NET_REPLY_RING] = m;
    c->ctl_count++;
    rx_pressure(c);
    lws_callback_on_writable(c->wsi);
}

static msg_buf *ctl_pop(ws_client *c)
{
    if (!c->ctl_count)
        return NULL;
    msg_buf *m = c->ctl[c->ctl_head];
    c->ctl[c->ctl_head] = NULL;
    c->ctl_head = (c->ctl_head + 1) % NET_REPLY_RING;
    c->ctl_count--;
    rx_pressure(c);
    return m;
}

static ws_client *find_client(net *n, uint32_t id)
{
    for (ws_client *c = n->clients; c; c = c->next)
        if (c->id == id)
            return c;
    return NULL;
}

static void reply_error(net *n, ws_client *c, uint32_t rid, const char *cmd_name, const char *reason)
{
    ctl_push(n, c, wire_encode_error(rid, cmd_name, reason));
}

/* ---- What the sim thread published --------------------------------------- */

static void pump(net *n)
{
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_replies(n->hub, rs, 64)) > 0) {
        for (int i = 0; i < k; i++) {
            cmd_reply *r = &rs[i];
            if (r->client & CMD_REST_BIT) {
                rest_deliver(n, r);
            } else {
                ws_client *c = find_client(n, r->client);
                if (c) {
                    if (c->inflight > 0)
                        c->inflight--;
                    ctl_push(n, c, wire_encode_reply(r));
                }
            }
            cmd_reply_free_payload(r);
        }
    }
    bool news = false;
    msg_buf *f = hub_take_frame(n->hub, &n->frame_seq);
    if (f) {
        msg_buf_unref(n->frame);
        n->frame = f;
        news = true;
    }
    msg_buf *b[HUB_BCAST_RING];
    bool lost;
    uint64_t first = n->bcast_next;
    k = hub_take_bcast(n->hub, &n->bcast_next, b, HUB_BCAST_RING, &lost);
    if (lost)
        first = n->bcast_next - (uint64_t)k;
    for (int i = 0; i < k; i++) {
        uint64_t seq = first + (uint64_t)i;
        msg_buf_unref(n->bcast[seq % HUB_BCAST_RING]);
        n->bcast[seq % HUB_BCAST_RING] = b[i];
        news = true;
    }
    if (news)
        for (ws_client *c = n->clients; c; c = c->next)
            lws_callback_on_writable(c->wsi);
}

/* ---- Sending -------------------------------------------------------------- */

static msg_buf *encode_hello(net *n, ws_client *c)
{
    world_info wi;
    hub_get_info(n->hub, &wi);
    return wire_encode_hello(&wi, n->st, c->id);
}

/* Chooses the next whole message for c: hello, replies, broadcasts, then
 * the newest frame (older frames are skipped). */
static void pick_next(net *n, ws_client *c)
{
    uint64_t oldest = n->bcast_next > HUB_BCAST_RING ? n->bcast_next - HUB_BCAST_RING : 0;
    if (c->bcast_next < oldest) {
        /* Fell behind the broadcast history: resynchronise with a fresh hello. */
        c->hello_pending = true;
        c->bcast_next = n->bcast_next;
    }
    c->cur_is_frame = false;
    if (c->hello_pending) {
        c->hello_pending = false;
        c->cur = encode_hello(n, c);
    } else if (c->ctl_count) {
        c->cur = ctl_pop(c);
    } else if (c->bcast_next < n->bcast_next) {
        c->cur = msg_buf_ref(n->bcast[c->bcast_next % HUB_BCAST_RING]);
        c->bcast_next++;
    } else if (n->frame && c->frame_seq != n->frame_seq) {
        if (c->frame_seq && n->frame_seq > c->frame_seq + 1) {
            n->frames_dropped += n->frame_seq - c->frame_seq - 1;
            c->frames_dropped += n->frame_seq - c->frame_seq - 1;
        }
        c->frame_seq = n->frame_seq;
        c->cur = msg_buf_ref(n->frame);
        c->cur_is_frame = true;
    }
    c->cur_off = 0;
    if (c->cur)
        lws_set_timeout(c->wsi, PENDING_TIMEOUT_USER_OK, NET_SEND_TIMEOUT_S);
}

static bool has_more(const net *n, const ws_client *c)
{
    if (c->close_bad)
        return c->cur || c->ctl_count || c->close_ready;
    return c->cur || c->hello_pending || c->ctl_count || c->bcast_next < n->bcast_next ||
           (n->frame && c->frame_seq != n->frame_seq);
}

static int ws_writeable(net *n, ws_client *c)
{
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
    if (c->close_bad && !c->cur && !c->ctl_count) {
        /* The error replies went out first, and the client has been quiet
         * for a moment (closing with its unread bytes still queued would
         * reset the connection and lose those replies); now the clean close. */
        if (!c->close_ready)
            return 0;
        static const char why[] = "too many bad messages";
        lws_close_reason(c->wsi, LWS_CLOSE_STATUS_POLICY_VIOLATION, (unsigned char *)why, sizeof why - 1);
        return -1;
    }
    if (!c->cur && c->close_bad) {
        c->cur = ctl_pop(c);
        c->cur_off = 0;
        c->cur_is_frame = false;
    }
    if (!c->cur)
        pick_next(n, c);
    if (!c->cur)
        return 0;
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
        }
        n->messages_sent++;
        msg_buf_unref(c->cur);
        c->cur = NULL;
        lws_set_timeout(c->wsi, NO_PENDING_TIMEOUT, 0);
    }
    if (has_more(n, c))
        lws_callback_on_writable(c->wsi);
    return 0;
}

/* ---- Receiving ------------------------------------------------------------ */

/* Token bucket: every message costs one token, refilled at --rate per
 * second up to --burst. */
static bool take_tokens(net *n, ws_client *c, double cost)
{
    uint64_t now = clock_now_ns();
    double el = (double)(now - c->tokens_ns) / 1e9;
    c->tokens_ns = now;
    c->tokens += el * n->cfg->rate_per_s;
    if (c->tokens > n->cfg->rate_burst)
        c->tokens = n->cfg->rate_burst;
    if (c->tokens < cost)
        return false;
    c->tokens -= cost;
    return true;
}

/* Commands that cost the sim thread far more than a step are charged more:
 * a scene load rebuilds the world (at most 4 a second per client at the
 * default rate), a body is allocated. */
static double extra_cost(cmd_kind k)
{
    return k == CMD_LOAD_SCENE ? 29 : k == CMD_BODY_CREATE ? 4 : 0;
}

static void bad_message(net *n, ws_client *c, uint32_t rid, const char *cmd_name, const char *reason)
{
    n->bad_messages++;
    c->bad++;
    char key[64];
    snprintf(key, sizeof key, "bad:%.40s", reason);
    log_once(key, "ws: client %u: bad message: %s (further ones like it are not logged)", (unsigned)c->id,
             reason);
    reply_error(n, c, rid, cmd_name, reason);
    if (++c->bad_in_a_row >= NET_MAX_BAD_IN_A_ROW && !c->close_bad) {
        c->close_bad = true;
        log_once("close-bad", "ws: closing clients that send %d bad messages in a row (logged once)",
                 NET_MAX_BAD_IN_A_ROW);
        c->close_bad_ns = clock_now_ns();
        lws_set_timer_usecs(c->wsi, NET_CLOSE_QUIET_US);
        lws_callback_on_writable(c->wsi);
    }
}

static void ws_message(net *n, ws_client *c)
{
    char err[FS_ERROR_LEN];
    /* Every message, good or bad, costs a token; the refusal is sent after
     * decoding so that it can echo the request id. */
    if (!take_tokens(n, c, 1)) {
        cmd probe;
        char ignored[FS_ERROR_LEN];
        uint32_t rid = 0;
        if (!c->rx_overflow && !c->rx_text) {
            wire_decode_command(c->rx, c->rx_len, &probe, ignored, sizeof ignored);
            rid = probe.rid;
        }
        n->rate_limited++;
        log_once("rate", "ws: client %u exceeded the command rate limit (logged once)", (unsigned)c->id);
        char why[96];
        snprintf(why, sizeof why, "rate limited: at most %d commands per second (burst %d)",
                 n->cfg->rate_per_s, n->cfg->rate_burst);
        reply_error(n, c, rid, NULL, why);
        return;
    }
    if (c->rx_overflow) {
        snprintf(err, sizeof err, "message too large (limit %d bytes)", WIRE_MAX_MSG);
        bad_message(n, c, 0, NULL, err);
        return;
    }
    if (c->rx_text) {
        bad_message(n, c, 0, NULL, "expected a binary msgpack message, got text");
        return;
    }
    cmd cm;
    if (wire_decode_command(c->rx, c->rx_len, &cm, err, sizeof err)) {
        bad_message(n, c, cm.rid, NULL, err);
        return;
    }
    c->bad_in_a_row = 0;
    double extra = extra_cost(cm.kind);
    if (extra > 0 && !take_tokens(n, c, extra)) {
        n->rate_limited++;
        char why[128];
        snprintf(why, sizeof why, "rate limited: %s costs %g commands of the %d per second allowed", cmd_kind_name(cm.kind),
                 extra + 1, n->cfg->rate_per_s);
        reply_error(n, c, cm.rid, cmd_kind_name(cm.kind), why);
        return;
    }
    if (cm.kind == CMD_GET_PARTICLES || cm.kind == CMD_GET_BODIES) {
        reply_error(n, c, cm.rid, cmd_kind_name(cm.kind),
                    cm.kind == CMD_GET_PARTICLES ? "get_particles is REST only: GET /api/particles"
                                                 : "get_bodies is REST only: GET /api/bodies (frames carry bodies)");
        return;
    }
    if (cm.kind == CMD_AUTH) {
        if (n->cfg->token[0] && !net_token_ok(n, cm.u.auth.token)) {
            bad_message(n, c, cm.rid, "auth", "unauthorized: wrong token");
            return;
        }
        c->authed = true;
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.rid = cm.rid;
        r.kind = CMD_AUTH;
        r.ok = true;
        ctl_push(n, c, wire_encode_reply(&r));
        return;
    }
    if (cmd_kind_mutates(cm.kind) && n->cfg->token[0] && !c->authed) {
        reply_error(n, c, cm.rid, cmd_kind_name(cm.kind),
                    "unauthorized: this server needs a token (send an auth command or connect with ?token=)");
        return;
    }
    cm.client = c->id;
    c->commands++;
    if (!net_enqueue(n, &cm, false)) {
        n->queue_busy++;
        log_once("busy", "ws: command queue full; refusing commands");
        reply_error(n, c, cm.rid, cmd_kind_name(cm.kind), "busy: command queue full, try again");
        return;
    }
    if (cm.kind != CMD_CURSOR) {
        c->inflight++;
        rx_pressure(c);
    }
}

static void ws_receive(net *n, ws_client *c, const void *in, size_t len)
{
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
    if (!lws_is_final_fragment(c->wsi) || lws_remaining_packet_payload(c->wsi))
        return;
    c->rx_in_msg = false;
    ws_message(n, c);
}

/* ---- The WebSocket protocol ---------------------------------------------- */

static void read_client_token(struct lws *wsi, ws_client *c)
{
    char buf[160];
    const char *v = lws_get_urlarg_by_name(wsi, "token=", buf, sizeof buf);
    if (v) {
        cmd_strlcpy(c->url_token, sizeof c->url_token, v);
        return;
    }
    if (lws_hdr_copy(wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION) > 7 && !strncmp(buf, "Bearer ", 7))
        cmd_strlcpy(c->url_token, sizeof c->url_token, buf + 7);
}

static int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len)
{
    net *n = lws_context_user(lws_get_context(wsi));
    ws_client *c = user;

    switch (reason) {
    case LWS_CALLBACK_EVENT_WAIT_CANCELLED:
        if (n)
            pump(n);
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
        c->scratch = malloc(LWS_PRE + NET_FRAGMENT);
        if (!c->scratch)
            return -1;
        read_client_token(wsi, c);
        c->authed = !n->cfg->token[0] || net_token_ok(n, c->url_token);
        c->next = n->clients;
        n->clients = c;
        c->linked = true;
        n->nclients++;
        strcpy(c->peer, "?");
        lws_get_peer_simple(wsi, c->peer, sizeof c->peer);
        if (!strncmp(c->peer, "::ffff:", 7)) /* an IPv4 peer on a dual-stack socket */
            memmove(c->peer, c->peer + 7, strlen(c->peer + 7) + 1);
        c->connected_ns = clock_now_ns();
        log_info("ws: client %u connected from %s (%d clients)", (unsigned)c->id, c->peer, n->nclients);
        c->hello_pending = true;
        c->bcast_next = n->bcast_next;
        c->tokens = n->cfg->rate_burst;
        c->tokens_ns = clock_now_ns();
        lws_callback_on_writable(wsi);
        return 0;
    case LWS_CALLBACK_CLOSED:
        if (c->linked) {
            for (ws_client **pp = &n->clients; *pp; pp = &(*pp)->next)
                if (*pp == c) {
                    *pp = c->next;
                    break;
                }
            c->linked = false;
            n->nclients--;
            cmd left;
            memset(&left, 0, sizeof left);
            left.kind = CMD_CLIENT_LEFT;
            left.client = c->id;
            net_enqueue(n, &left, true);
            log_info("ws: client %u left (%d clients)", (unsigned)c->id, n->nclients);
        }
        while (c->ctl_count)
            msg_buf_unref(ctl_pop(c));
        msg_buf_unref(c->cur);
        c->cur = NULL;
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
        }
        return 0;
    case LWS_CALLBACK_SERVER_WRITEABLE:
        return ws_writeable(n, c);
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

/* ---- Context --------------------------------------------------------------- */

net *net_create(const srv_config *cfg, const wire_static *st, hub *h, cmd_queue *q)
{
    net *n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->cfg = cfg;
    n->st = st;
    n->hub = h;
    n->queue = q;
    if (!realpath(cfg->web_root, n->web_root)) {
        log_error("web root '%s' not found; static files will 404", cfg->web_root);
        snprintf(n->web_root, sizeof n->web_root, "%s", cfg->web_root);
    }

    n->protocols[0] = (struct lws_protocols){"http", rest_callback, sizeof(http_req), 0, 0, NULL, 0};
    n->protocols[1] = (struct lws_protocols){WIRE_SUBPROTOCOL, ws_callback, sizeof(ws_client), WIRE_MAX_MSG,
                                             0, NULL, 0};
    /* A WebSocket upgrade that names no subprotocol gets fluid.v1 too. */
    n->pvo_default = (struct lws_protocol_vhost_options){NULL, NULL, "default", "1"};
    n->pvo = (struct lws_protocol_vhost_options){NULL, &n->pvo_default, WIRE_SUBPROTOCOL, ""};

    static const char *const mimes[][2] = {
        {".mjs", "text/javascript"}, {".wasm", "application/wasm"}, {".map", "application/json"},
        {".webp", "image/webp"},     {".md", "text/markdown"},      {".msgpack", "application/msgpack"},
    };
    for (int i = 0; i < 6; i++) {
        n->mime[i].next = i < 5 ? &n->mime[i + 1] : NULL;
        n->mime[i].name = mimes[i][0];
        n->mime[i].value = mimes[i][1];
    }
    memset(&n->mount_metrics, 0, sizeof n->mount_metrics);
    n->mount_metrics.mountpoint = "/metrics";
    n->mount_metrics.mountpoint_len = 8;
    n->mount_metrics.protocol = "http";
    n->mount_metrics.origin_protocol = LWSMPRO_CALLBACK;
    memset(&n->mount_api, 0, sizeof n->mount_api);
    n->mount_api.mount_next = &n->mount_metrics;
    n->mount_api.mountpoint = "/api";
    n->mount_api.mountpoint_len = 4;
    n->mount_api.protocol = "http";
    n->mount_api.origin_protocol = LWSMPRO_CALLBACK;
    memset(&n->mount_root, 0, sizeof n->mount_root);
    n->mount_root.mount_next = &n->mount_api;
    n->mount_root.mountpoint = "/";
    n->mount_root.mountpoint_len = 1;
    n->mount_root.origin = n->web_root;
    n->mount_root.def = "index.html";
    n->mount_root.origin_protocol = LWSMPRO_FILE;
    n->mount_root.extra_mimetypes = &n->mime[0];

    memset(&n->retry, 0, sizeof n->retry);
    n->retry.secs_since_valid_ping = 20;   /* ping an idle WebSocket */
    n->retry.secs_since_valid_hangup = 45; /* and drop a dead one */

    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = cfg->port;
    info.iface = cfg->bind;
    info.protocols = n->protocols;
    info.pvo = &n->pvo;
    info.mounts = &n->mount_root;
    info.user = n;
    info.vhost_name = "fluid";
    info.server_string = "fluid-server";
    info.max_http_header_data = 4096;
    info.retry_and_idle_policy = &n->retry;
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    if (config_tls(cfg)) {
        /* https and wss on the same port (minimal-http-server-tls): OpenSSL
         * is set up with the context, the certificate with the vhost.  ALPN
         * offers http/1.1 only: Debian's libwebsockets is built with HTTP/2,
         * which browsers would pick, and this server's request, body and
         * stream handling is the HTTP/1.1 path the tests cover. */
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cfg->tls_cert;
        info.ssl_private_key_filepath = cfg->tls_key;
        info.alpn = "http/1.1";
        /* libwebsockets 4.1.6 spins forever in its WebSocket read loop when
         * a connection is rx-flow-controlled (rx_pressure) while OpenSSL
         * still holds decrypted bytes of the record it last read: it loops
         * on SSL_pending() over a buflist it may not consume.  Reading with
         * a buffer that holds a whole TLS record (2^14 bytes of plaintext)
         * leaves nothing pending in OpenSSL, so that state cannot arise;
         * the service buffer must be at least as large. */
        n->protocols[1].rx_buffer_size = NET_TLS_RX_READ;
        info.pt_serv_buf_size = 2 * NET_TLS_RX_READ;
    }
    n->ctx = lws_create_context(&info);
    if (!n->ctx) {
        log_error("cannot create the libwebsockets context");
        free(n);
        return NULL;
    }
    n->vhost = lws_create_vhost(n->ctx, &info);
    if (!n->vhost) {
        if (config_tls(cfg))
            log_error("cannot listen on %s:%d over TLS with the certificate '%s' and the key '%s' "
                      "(libwebsockets' reason is logged above)",
                      cfg->bind, cfg->port, cfg->tls_cert, cfg->tls_key);
        else
            log_error("cannot listen on %s:%d", cfg->bind, cfg->port);
        lws_context_destroy(n->ctx);
        free(n);
        return NULL;
    }
    return n;
}

void net_run(net *n, volatile sig_atomic_t *stop)
{
    while (!*stop)
        if (lws_service(n->ctx, 0) < 0)
            return;
    /* Shutdown: every WebSocket gets a close frame with a reason (1001,
     * "server shutting down"); wait for them to go, 500 ms at most. */
    n->closing = true;
    for (ws_client *c = n->clients; c; c = c->next)
        lws_callback_on_writable(c->wsi);
    uint64_t until = clock_now_ns() + 500000000ull;
    while (n->nclients > 0 && clock_now_ns() < until)
        if (lws_service(n->ctx, 50) < 0)
            break;
    log_info("closed %s WebSocket connections", n->nclients ? "some" : "all");
}

void net_destroy(net *n)
{
    if (!n)
        return;
    rest_abandon_all(n);
    lws_context_destroy(n->ctx); /* closes every connection (CLOSED frees per-client state) */
    n->ctx = NULL;
    /* Replies nobody will read. */
    cmd_reply rs[64];
    int k;
    while ((k = hub_take_replies(n->hub, rs, 64)) > 0)
        for (int i = 0; i < k; i++)
            cmd_reply_free_payload(&rs[i]);
    msg_buf_unref(n->frame);
    for (int i = 0; i < HUB_BCAST_RING; i++)
        msg_buf_unref(n->bcast[i]);
    free(n);
}
