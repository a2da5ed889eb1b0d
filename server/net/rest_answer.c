/* rest_answer.c - how a REST request is answered (rest_answer.h): the
 * answer held for the writable callbacks, the refusals with their codes,
 * the origin and token check, the wait for another thread's answer.
 * Network thread only. */
#include "rest_answer.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "access.h"
#include "clock.h"
#include "invite.h"
#include "roles.h"
#include "log.h"

/* ---- Responses ------------------------------------------------------------- */

void rest_respond_text(net *n, http_req *r, int status, char *json) {
    n->resp_bytes -= r->resp_len;
    free(r->resp);
    msg_buf_unref(r->resp_msg);
    r->resp_msg = NULL;
    r->status = status;
    r->resp = json;
    r->resp_len = json ? strlen(json) : 0;
    n->resp_bytes += r->resp_len;
    r->resp_off = 0;
    r->ready = true;
    bool waited = r->waiting;
    r->waiting = false;
    if (!r->wsi) return; /* a request from the bus: its answer goes back there (rest_bus_pump) */
    if (waited) lws_set_timer_usecs(r->wsi, LWS_SET_TIMER_USEC_CANCEL); /* its wait's (rest_wait) */
    lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, NET_REST_TIMEOUT_S);
    lws_callback_on_writable(r->wsi);
}

/* Any other content: takes ownership of data (malloc'd, len bytes), or
 * sends an immutable buffer (takes one reference; no copy). */
void rest_respond_bytes(net *n, http_req *r, int status, const char *ctype, char *data, size_t len) {
    rest_respond_text(n, r, status, NULL);
    r->resp = data;
    r->resp_len = data ? len : 0;
    n->resp_bytes += r->resp_len;
    r->ctype = ctype;
}

void rest_respond_msg(net *n, http_req *r, int status, const char *ctype, msg_buf *m) {
    rest_respond_text(n, r, status, NULL);
    r->resp_msg = m;
    r->resp_len = m->len;
    n->resp_bytes += r->resp_len;
    r->ctype = ctype;
}

void rest_respond_json(net *n, http_req *r, int status, cJSON *j) {
    char *s = j ? cJSON_PrintUnformatted(j) : NULL;
    cJSON_Delete(j);
    if (!s) {
        s = strdup("{\"error\":\"out of memory\",\"code\":\"internal\"}");
        status = reply_code_http(RC_INTERNAL);
    }
    rest_respond_text(n, r, status, s);
}

/* A refusal: the code's HTTP status (reply_code.h's table, the only place a
 * status of an error is chosen), and {"error": reason, "code": name}; a
 * code that asks for a wait says how long (Retry-After: 1 s unless the
 * caller set it). */
void rest_respond_error(net *n, http_req *r, reply_code code, const char *fmt, ...) {
    char msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    const reply_code_info *ci = reply_code_get(code);
    if (ci->http >= 400 && ci->http < 500 && code != RC_NOT_FOUND) {
        char key[64];
        snprintf(key, sizeof key, "rest:%s:%.40s", ci->name, msg);
        log_once(key, "rest: %d %s (logged once)", ci->http, msg);
    }
    if (ci->retry && !r->retry_after) r->retry_after = 1; /* busy: a moment's wait may do */
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "error", msg);
    cJSON_AddStringToObject(j, "code", ci->name);
    rest_respond_json(n, r, ci->http, j);
}

/* ---- Checks and waits ----------------------------------------------------------- */

/* A request that would change a world from another site's page: answers
 * forbidden and returns true.  Only headers are read, so a body is refused
 * before it is received. */
bool rest_refuse_origin(net *n, http_req *r) {
    if (!r->wsi || net_origin_ok(n, r->wsi)) return false; /* (a request from the bus: its edge checked it) */
    n->origin_refused++;
    rest_respond_error(n, r, RC_FORBIDDEN,
                       "forbidden: requests from another site's page may not change the world "
                       "(see --allow-origin)");
    return true;
}

bool rest_grant(net *n, http_req *r) {
    char buf[INVITE_MAX_TOKEN + 16];
    int l;
    if (!r->wsi) /* a request from the bus: the credential it carried, as its Authorization header */
        l = r->cred ? snprintf(buf, sizeof buf, "Bearer %.*s", (int)r->cred->len, (const char *)r->cred->data) : 0;
    else
        l = lws_hdr_copy(r->wsi, buf, sizeof buf, WSI_TOKEN_HTTP_AUTHORIZATION);
    if (l < 0 || (size_t)l >= sizeof buf ||
        (l == 0 && r->wsi && lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_AUTHORIZATION) > 0)) {
        rest_respond_error(n, r, RC_UNAUTHORIZED, "unauthorized: a credential is at most %d bytes", INVITE_MAX_TOKEN);
        return false;
    }
    if (l == 0) { /* no credential: the room's public role */
        r->role = (uint8_t)net_public_role(n, r->room);
        return true;
    }
    char why[200];
    role got;
    if (l <= 7 || strncmp(buf, "Bearer ", 7)) {
        rest_respond_error(n, r, RC_UNAUTHORIZED, "unauthorized: send 'Authorization: Bearer <token or invite>'");
        return false;
    }
    if (n->relay_id || r->proxy) { /* a relay, or a write for another node's room: the holder checks it */
        r->role = (uint8_t)net_public_role(n, r->room);
        r->cred = msg_buf_from_bytes(buf + 7, (size_t)l - 7);
        return true;
    }
    /* A request for the server's own routes (GET and POST /api/rooms, /metrics)
     * is in no room: an invite, which is for its room, grants nothing more
     * there than no credential does; a wrong token is still refused. */
    bool no_room = (r->rooms_op && !r->rooms_name[0]) || r->metrics;
    if (no_room && memchr(buf + 7, '.', (size_t)l - 7) && n->cfg->token[0]) {
        r->role = (uint8_t)net_public_role(n, r->room);
        return true;
    }
    if (net_grant(n, r->room, buf + 7, (size_t)l - 7, &got, why, sizeof why)) {
        rest_respond_error(n, r, RC_UNAUTHORIZED, "%s", why);
        return false;
    }
    r->role = (uint8_t)got;
    r->granted = true;
    return true;
}

bool rest_refuse_role(net *n, http_req *r, role need, const char *action) {
    if (role_allows((role)r->role, need)) return false;
    char why[200];
    role_refusal(why, sizeof why, action, need, (role)r->role);
    rest_respond_error(n, r, RC_FORBIDDEN, "%s", why);
    return true;
}

void rest_wait(net *n, http_req *r, int timeout_s) {
    r->waiting = true;
    if (!r->linked) {
        r->next = n->pending;
        n->pending = r;
        r->linked = true;
        n->npending++;
    }
    r->wait_s = timeout_s;
    r->deadline_ns = clock_now_ns() + (uint64_t)timeout_s * 1000000000ull;
    if (!r->wsi) return; /* a request from the bus: rest_bus_pump ends its wait */
    lws_set_timer_usecs(r->wsi, (lws_usec_t)timeout_s * LWS_US_PER_SEC);
    lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, timeout_s + NET_REST_ANSWER_GRACE_S);
}

void rest_timed_out(net *n, http_req *r) {
    if (!r->waiting || !rest_take_pending(n, r->id)) return;
    n->rest_timeouts++;
    rest_respond_error(n, r, RC_TIMEOUT,
                       "timeout: no answer within %d s (the world is busy); the request was not withdrawn and may "
                       "still be applied: read the state before sending it again",
                       r->wait_s);
}

http_req *rest_take_pending(net *n, uint32_t id) {
    for (http_req **pp = &n->pending; *pp; pp = &(*pp)->next)
        if ((*pp)->id == id) {
            http_req *r = *pp;
            *pp = r->next;
            r->linked = false;
            n->npending--;
            return r->waiting ? r : NULL;
        }
    return NULL;
}
