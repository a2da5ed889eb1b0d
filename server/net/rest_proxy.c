/* rest_proxy.c - REST writes through a fleet, the asking side (see
 * rest_proxy.h).  Where a room is comes from the fleet thread's view of the
 * directory (the document of GET /api/fleet in the default room's hub). */
#include "rest_proxy.h"

#include <cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bus_http.h"
#include "hub.h"
#include "net_room.h"
#include "rest_answer.h"

typedef enum where { W_UNREAD, W_NONE, W_HELD, W_MOVING } where;

/* Where room name is in the fleet's directory as this server reads it. */
static where where_is(net *n, const char *name) {
    msg_buf *m = hub_get_fleet_doc(n->home->hub);
    cJSON *doc = m ? cJSON_ParseWithLength((const char *)m->data, m->len) : NULL;
    msg_buf_unref(m);
    if (!doc) return W_UNREAD;
    where w = W_NONE;
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "rooms")) {
        const cJSON *nm = cJSON_GetObjectItemCaseSensitive(o, "name");
        if (!cJSON_IsString(nm) || strcmp(nm->valuestring, name)) continue;
        const cJSON *node = cJSON_GetObjectItemCaseSensitive(o, "node"),
                    *claim = cJSON_GetObjectItemCaseSensitive(o, "claim");
        bool held = cJSON_IsNumber(node) && node->valuedouble > 0 && cJSON_IsNumber(claim) && claim->valuedouble > 0 &&
                    !cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "orphaned"));
        w = held ? W_HELD : W_MOVING;
        break;
    }
    cJSON_Delete(doc);
    return w;
}

static void answer_moving(net *n, http_req *r) {
    r->retry_after = NET_PROXY_RETRY_S;
    rest_respond_error(n, r, RC_BUSY,
                       "busy: room '%s' is between sim nodes (no node of the fleet holds it right now: it is moving, "
                       "or its holder stopped answering); try again in %d s",
                       r->rooms_name, NET_PROXY_RETRY_S);
}

bool rest_proxy_refuse_moving(net *n, http_req *r) {
    if (!n->cfg->fleet[0] || r->room == n->home || where_is(n, r->room->name) != W_MOVING) return false;
    snprintf(r->rooms_name, sizeof r->rooms_name, "%s", r->room->name);
    answer_moving(n, r);
    return true;
}

void rest_proxy_send(net *n, http_req *r) {
    if (rest_refuse_origin(n, r)) return;
    if (n->npending >= NET_MAX_PENDING_REST) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d REST requests already waiting, try again", NET_MAX_PENDING_REST);
        return;
    }
    const bool create = !r->rooms_name[0];
    if (!create) {
        where w = where_is(n, r->rooms_name);
        if (w == W_UNREAD) {
            rest_respond_error(n, r, RC_BUSY, "busy: this server has not read the fleet's directory yet, try again");
            return;
        }
        if (w == W_NONE) {
            rest_respond_error(n, r, RC_NOT_FOUND, "no room named '%s' (GET /api/fleet lists the fleet's rooms)",
                               r->rooms_name);
            return;
        }
        if (w == W_MOVING) {
            answer_moving(n, r);
            return;
        }
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

void rest_proxy_answered(net *n, const http_mail_msg *e) {
    http_req *r = rest_take_pending(n, e->id);
    if (!r) return;       /* the request went away, or its wait ran out (504) */
    if (e->status == 0) { /* no node reads the room's subject now */
        if (r->rooms_name[0])
            answer_moving(n, r);
        else
            rest_respond_error(n, r, RC_BUSY, "busy: no sim node of the fleet is there to make the room, try again");
        return;
    }
    if (e->status == -2) {
        rest_respond_error(n, r, RC_BUSY, "busy: the message bus is not connected, try again");
        return;
    }
    bus_http_answer a;
    char err[160];
    if (e->status < 0 || !e->msg || bus_decode_http_answer(e->msg->data, e->msg->len, &a, err, sizeof err)) {
        rest_respond_error(n, r, RC_INTERNAL, "the answer of the room's sim node did not read");
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
    rest_respond_bytes(n, r, a.status, "application/json", body, a.body_len);
}
