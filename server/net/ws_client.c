/* ws_client.c - one WebSocket client's state between messages: its queue of
 * replies and errors (with back-pressure on reading) and its command rate
 * limit, and on a relay the sim node's answer to its credential.  Network
 * thread only. */
#include "ws_client.h"

#include <stdio.h>

#include "clock.h"
#include "net_internal.h"
#include "net_room.h"
#include "roles.h"
#include "wire.h"

/* ---- The control queue ---------------------------------------------------- */

/* Back-pressure: stop reading a client whose replies (queued here or still
 * in the sim's hands) pile up because it does not read them; read again
 * once half have gone out. */
void ws_rx_pressure(ws_client *c) {
    int owed = c->ctl_count + c->inflight;
    if (!c->rx_paused && owed >= NET_RX_PAUSE_AT) {
        lws_rx_flow_control(c->wsi, 0);
        c->rx_paused = true;
    } else if (c->rx_paused && !c->close_bad && owed <= NET_RX_PAUSE_AT / 2) {
        lws_rx_flow_control(c->wsi, 1);
        c->rx_paused = false;
    }
}

void ws_ctl_push(net *n, ws_client *c, msg_buf *m) {
    if (!m) return;
    if (c->ctl_count >= NET_REPLY_RING) {
        n->replies_dropped++;
        msg_buf_unref(m);
        return;
    }
    c->ctl[(c->ctl_head + c->ctl_count) % NET_REPLY_RING] = m;
    c->ctl_count++;
    ws_rx_pressure(c);
    lws_callback_on_writable(c->wsi);
}

msg_buf *ws_ctl_pop(ws_client *c) {
    if (!c->ctl_count) return NULL;
    msg_buf *m = c->ctl[c->ctl_head];
    c->ctl[c->ctl_head] = NULL;
    c->ctl_head = (c->ctl_head + 1) % NET_REPLY_RING;
    c->ctl_count--;
    ws_rx_pressure(c);
    return m;
}

ws_client *ws_find_client(net_room *v, uint32_t id) {
    for (ws_client *c = v->clients; c; c = c->next)
        if (c->id == id) return c;
    return NULL;
}

void ws_reply_error(net *n, ws_client *c, reply_code code, uint32_t rid, const char *cmd_name, const char *reason) {
    ws_ctl_push(n, c, wire_encode_error(code, rid, cmd_name, reason));
}

/* ---- Rate limit ------------------------------------------------------------ */

/* Token bucket: every message costs one token, refilled at --rate per
 * second up to --burst. */
bool ws_take_tokens(net *n, ws_client *c, double cost) {
    return rate_bucket_take(&c->bucket, n->cfg->rate_per_s, n->cfg->rate_burst, cost, clock_now_ns());
}

void ws_close_room(net_room *v, const char *reason) {
    v->closed = true;
    for (ws_client *c = v->clients; c; c = c->next) {
        snprintf(c->close_reason, sizeof c->close_reason, "%s", reason);
        lws_callback_on_writable(c->wsi);
    }
}

bool ws_auth_answered(net *n, ws_client *c, const cmd_reply *r) {
    bool url = c->auth_wait && r->rid == 0 && !c->cred_pending;
    if (url) {
        c->auth_wait = false;
        lws_callback_on_writable(c->wsi); /* its hello */
    } else if (c->inflight > 0) {
        c->inflight--;
    }
    if (r->ok && r->value >= ROLE_VIEWER && r->value < ROLE_COUNT) {
        c->granted = true;
        c->role = (uint8_t)r->value;
        c->authed = true;
        if (!url) { /* the credential of the auth command: sent from now on */
            msg_buf_unref(c->cred);
            c->cred = c->cred_pending;
            c->cred_pending = NULL;
        }
        return !url; /* an accepted credential of the upgrade is not answered (as on the sim node) */
    }
    if (url) { /* refused: its room's public role, and the reason after its hello */
        msg_buf_unref(c->cred);
        c->cred = NULL;
    } else {
        msg_buf_unref(c->cred_pending);
        c->cred_pending = NULL;
    }
    (void)n;
    return true;
}
