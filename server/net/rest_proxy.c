/* rest_proxy.c - REST through a fleet, the asking side (see
 * rest_proxy.h).  Where a room is comes from the fleet thread's view of the
 * directory (the document of GET /api/fleet in the default room's hub). */
#include "rest_proxy.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus_http.h"
#include "clock.h"
#include "hub.h"
#include "net_room.h"
#include "reply_code.h"
#include "rest_answer.h"
#include "rest_route.h"

/* W_MOVING: listed, held by no node now (placed and being made, released by
 * a drain, or being taken over); W_ORPHANED: its holder stopped renewing its
 * claim (stopped, or cut off) and nobody has taken it yet. */
typedef enum where { W_UNREAD, W_NONE, W_HELD, W_MOVING, W_ORPHANED } where;

/* Where room name is in the fleet's directory as this server reads it; its
 * holder's node id and URL (the node's record) into node and url when given. */
static where where_is_at(net *n, const char *name, int *node, char *url, size_t url_len) {
    msg_buf *m = hub_get_fleet_doc(n->home->hub);
    cJSON *doc = m ? cJSON_ParseWithLength((const char *)m->data, m->len) : NULL;
    msg_buf_unref(m);
    if (!doc) return W_UNREAD;
    where w = W_NONE;
    double holder = 0;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "rooms")) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name)) continue;
        const cJSON *nd = cJSON_GetObjectItemCaseSensitive(o, "node"),
                    *claim = cJSON_GetObjectItemCaseSensitive(o, "claim");
        const bool orphaned = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "orphaned")),
                   held = cJSON_IsNumber(nd) && nd->valuedouble > 0 && cJSON_IsNumber(claim) &&
                          claim->valuedouble > 0 && !orphaned;
        w = held ? W_HELD : orphaned ? W_ORPHANED : W_MOVING;
        if (held) holder = nd->valuedouble;
        break;
    }
    if (node) *node = (int)holder;
    if (url && url_len) url[0] = 0;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "nodes")) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(o, "id"), *u = cJSON_GetObjectItemCaseSensitive(o, "url");
        if (url && holder > 0 && cJSON_IsNumber(id) && id->valuedouble == holder && cJSON_IsString(u))
            snprintf(url, url_len, "%s", u->valuestring);
    }
    cJSON_Delete(doc);
    return w;
}

static where where_is(net *n, const char *name) {
    return where_is_at(n, name, NULL, NULL, 0);
}

/* A read this server cannot pass on whole (an answer the bus does not carry,
 * a query or an Accept the bus does not take): 421 naming the holder. */
static void answer_misdirected(net *n, http_req *r, const char *what) {
    int node = 0;
    char url[256];
    where_is_at(n, r->rooms_name, &node, url, sizeof url);
    cJSON *j = cJSON_CreateObject();
    char why[600];
    snprintf(why, sizeof why,
             "misdirected: room '%s' is held by sim node %d (%s), and %s; ask that node for GET /api%s there",
             r->rooms_name, node, url[0] ? url : "its URL is not in the fleet's directory", what, r->path);
    cJSON_AddStringToObject(j, "error", why);
    cJSON_AddStringToObject(j, "code", reply_code_name(RC_MISDIRECTED));
    cJSON_AddNumberToObject(j, "node", node);
    cJSON_AddStringToObject(j, "url", url);
    rest_respond_json(n, r, reply_code_http(RC_MISDIRECTED), j);
}

/* A read with a query string, or an Accept the bus's JSON answer does not
 * meet: it cannot travel whole (the bus carries the path alone). */
static bool read_needs_holder(http_req *r) {
    if (!r->wsi) return false;
    if (lws_hdr_total_length(r->wsi, WSI_TOKEN_HTTP_URI_ARGS) > 0) return true;
    char accept[256] = "";
    if (lws_hdr_copy(r->wsi, accept, sizeof accept, WSI_TOKEN_HTTP_ACCEPT) < 0) accept[0] = 0;
    return accept[0] && !strstr(accept, "json") && !strstr(accept, "*/*");
}

static void answer_moving(net *n, http_req *r) {
    r->retry_after = NET_PROXY_RETRY_S;
    rest_respond_error(n, r, RC_BUSY,
                       "busy: room '%s' is between sim nodes (no node of the fleet holds it right now: it is moving, "
                       "or its holder stopped answering); try again in %d s",
                       r->rooms_name, NET_PROXY_RETRY_S);
}

/* No node answered for the room: what this server's view says of it. */
static void answer_unheld(net *n, http_req *r) {
    if (r->proxy_view == W_NONE)
        rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s' (GET /api/fleet lists the fleet's rooms)",
                           r->rooms_name);
    else
        answer_moving(n, r);
}

bool rest_proxy_refuse_moving(net *n, http_req *r) {
    if (!n->cfg->fleet[0] || r->room == n->home) return false;
    const where w = where_is(n, r->room->name);
    if (w != W_MOVING && w != W_ORPHANED) return false;
    snprintf(r->rooms_name, sizeof r->rooms_name, "%s", r->room->name);
    answer_moving(n, r);
    return true;
}

static void send_on(net *n, http_req *r);

void rest_proxy_send(net *n, http_req *r) {
    const bool read = r->method == HM_GET;
    if (!read && rest_refuse_origin(n, r)) return;
    const bool create = !r->rooms_name[0];
    if (!create) {
        where w = where_is(n, r->rooms_name);
        if (w == W_UNREAD) {
            rest_respond_error(n, r, RC_BUSY, "busy: this server has not read the fleet's directory yet, try again");
            return;
        }
        /* A room whose holder stopped answering: 503 at once (its subject
         * may still be read by a node that will never answer). */
        if (w == W_ORPHANED) {
            answer_moving(n, r);
            return;
        }
        /* A room this view does not list, or lists as held by nobody, is
         * asked all the same: the view lags the directory by up to a quarter
         * second, and a room made a moment ago (through this very server,
         * say), or claimed just now by its new holder, is served by that
         * holder.  Only when no node reads its subject does the view answer
         * (answer_unheld). */
        r->proxy_view = (uint8_t)w;
        if (read && read_needs_holder(r)) {
            if (w == W_HELD)
                answer_misdirected(n, r, "a query string or an Accept other than JSON does not travel over the bus");
            else
                answer_unheld(n, r);
            return;
        }
    }
    send_on(n, r);
}

/* Encodes r for the bus and makes it wait for its answer (or answers it busy). */
static void send_on(net *n, http_req *r) {
    const bool create = !r->rooms_name[0];
    if (n->npending >= NET_MAX_PENDING_REST) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d REST requests already waiting, try again", NET_MAX_PENDING_REST);
        return;
    }
    bus_http_req q = {.method = r->method,
                      .cred = r->cred ? r->cred->data : NULL,
                      .cred_len = r->cred ? r->cred->len : 0,
                      .body = r->body,
                      .body_len = r->body_len};
    snprintf(q.path, sizeof q.path, "%s", r->path);
    http_mail_msg e = {.id = r->id, .create = create, .msg = bus_encode_http_req(&q)};
    snprintf(e.room, sizeof e.room, "%s", r->rooms_name);
    if (!e.msg || !http_mail_put(&n->home->hub->http, HTTP_OUT, &e)) {
        msg_buf_unref(e.msg);
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d REST requests are waiting for the bus, try again", HTTP_MAIL_RING);
        return;
    }
    rest_wait(n, r, create ? NET_ROOM_OPEN_TIMEOUT_S : NET_REST_TIMEOUT_S);
}

/* Whether room name was made through this server within NET_MADE_SPAN_NS. */
static bool made_lately(const net *n, const char *name, uint64_t now) {
    for (int i = 0; i < NET_MADE_LATELY; i++)
        if (n->made_ns[i] && now - n->made_ns[i] < NET_MADE_SPAN_NS && !strcmp(n->made_name[i], name)) return true;
    return false;
}

static void note_made(net *n, const char *body, size_t len) {
    cJSON *j = cJSON_ParseWithLength(body, len);
    const cJSON *nm = cJSON_GetObjectItemCaseSensitive(j, "name");
    if (cJSON_IsString(nm) && strlen(nm->valuestring) < ROOM_NAME_CAP) {
        int i = n->made_next;
        n->made_next = (i + 1) % NET_MADE_LATELY;
        snprintf(n->made_name[i], ROOM_NAME_CAP, "%s", nm->valuestring);
        n->made_ns[i] = clock_now_ns();
    }
    cJSON_Delete(j);
}

/* No node reads the room's subject: a room on its way to a holder (placed
 * and being made, released, taken over: or made through this server a
 * moment ago, which this view may not list yet) is asked again a few times
 * before the view answers; its holder reads the subject within a fraction
 * of a second of its claim. */
static bool ask_again(net *n, http_req *r) {
    if (!r->wsi) return false;
    const bool made = made_lately(n, r->rooms_name, clock_now_ns());
    if (r->proxy_tries >= (made ? NET_MADE_TRIES : NET_PROXY_TRIES)) return false;
    if (r->proxy_view != W_MOVING && !(r->proxy_view == W_NONE && made)) return false;
    r->proxy_tries++;
    r->proxy_again = true;
    lws_set_timer_usecs(r->wsi, (lws_usec_t)NET_PROXY_AGAIN_MS * 1000);
    return true;
}

void rest_proxy_again(net *n, http_req *r) {
    r->proxy_again = false;
    const where w = where_is(n, r->rooms_name);
    if (w == W_ORPHANED) {
        answer_moving(n, r);
        return;
    }
    if (w != W_UNREAD) r->proxy_view = (uint8_t)w;
    send_on(n, r);
}

void rest_proxy_answered(net *n, const http_mail_msg *e) {
    http_req *r = rest_take_pending(n, e->id);
    if (!r) return;       /* the request went away, or its wait ran out (504) */
    if (e->status == 0) { /* no node reads the room's subject now */
        if (!r->rooms_name[0])
            rest_respond_error(n, r, RC_BUSY, "busy: no sim node of the fleet is there to make the room, try again");
        else if (!ask_again(n, r))
            answer_unheld(n, r);
        return;
    }
    if (e->status == -2) {
        if (r->rooms_name[0] && r->proxy_view != W_HELD)
            answer_unheld(n, r); /* what the view says: the bus cannot tell more now */
        else
            rest_respond_error(n, r, RC_BUSY, "busy: the message bus is not connected, try again");
        return;
    }
    bus_http_answer a;
    char err[160];
    if (e->status < 0 || !e->msg || bus_decode_http_answer(e->msg->data, e->msg->len, &a, err, sizeof err)) {
        rest_respond_error(n, r, RC_INTERNAL, "the answer of the room's sim node did not read");
        return;
    }
    if (a.status == reply_code_http(RC_MISDIRECTED) && r->method == HM_GET) {
        char what[120];
        snprintf(what, sizeof what, "its answer is not a JSON object of at most %u bytes (the bus's bound)",
                 BUS_HTTP_ANSWER);
        answer_misdirected(n, r, what);
        return;
    }
    char *body = malloc(a.body_len + 1);
    if (!body) {
        rest_respond_error(n, r, RC_INTERNAL, "out of memory");
        return;
    }
    memcpy(body, a.body, a.body_len);
    body[a.body_len] = 0;
    r->retry_after = a.retry_after;
    if (!r->rooms_name[0] && a.status == 201) note_made(n, body, a.body_len);
    rest_respond_bytes(n, r, a.status, "application/json", body, a.body_len);
}
