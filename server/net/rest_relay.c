/* rest_relay.c - a relay's answer to the REST routes only its sim node
 * serves and that need more than a viewer (rest_relay.h): the role comes
 * from the node, which checks the request's credential as it checks a
 * WebSocket upgrade's, and the relay answers the refusal the node's own edge
 * would give, or 501.  Network thread only. */
#include "rest_relay.h"

#include <stdio.h>
#include <string.h>

#include "hub.h"
#include "net_room.h"
#include "rest_answer.h"
#include "rest_rooms.h"
#include "rest_route.h"
#include "roles.h"

/* The routes outside /api/rooms that a relay does not serve itself and that
 * need more than a viewer (the data routes need a viewer: every caller may,
 * and is answered 501).  Every route of the role table under /api/rooms but
 * the two reads is the node's too (rest_rooms.c). */
static const char *const node_only[] = {"GET /api/clients", "POST /api/meshes", "POST /api/snapshot"};

/* Whether r asks for such a route: its role and the action as the role table
 * names it. */
static bool needs_check(const http_req *r, role *need, char *action, size_t cap) {
    int m = r->method == HM_HEAD ? HM_GET : r->method;
    const char *method = rest_method_name(m), *pattern;
    if (r->rooms_op) {
        pattern = rest_rooms_pattern(r);
    } else {
        pattern = rest_route_pattern(m, r->path, r->metrics);
        if (!pattern) return false;
        char key[96];
        snprintf(key, sizeof key, "%s %s", method, pattern);
        bool only = false;
        for (size_t i = 0; i < sizeof node_only / sizeof node_only[0]; i++)
            if (!strcmp(key, node_only[i])) only = true;
        if (!only) return false;
    }
    if (role_needed_for_route(method, pattern, need) || *need == ROLE_VIEWER) return false;
    snprintf(action, cap, "%s %s", rest_method_name(r->method), pattern);
    return true;
}

bool rest_relay_check(net *n, http_req *r) {
    role need;
    char action[sizeof r->check_action];
    if (!n->relay_id || !needs_check(r, &need, action, sizeof action)) return false;
    if (r->method != HM_GET && r->method != HM_HEAD && rest_refuse_origin(n, r)) return true;
    if (n->npending >= NET_MAX_PENDING_REST) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d REST requests already waiting, try again", NET_MAX_PENDING_REST);
        return true;
    }
    /* The server's own routes (POST /api/rooms) are in no room: an invite, which is for its room, gives
     * nothing more there than no credential (the default room's public role), as on the node (rest_grant) */
    bool no_room = r->rooms_op && !r->rooms_name[0];
    bool invite = r->cred && memchr(r->cred->data, '.', r->cred->len);
    msg_buf *cred = r->cred && !(no_room && invite) ? msg_buf_ref(r->cred) : NULL;
    if (!hub_forward(r->room->hub, CMD_REST_BIT | r->id, HUB_FWD_CHECK, NULL, cred)) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: the relay's queue is full, try again");
        return true;
    }
    r->role_check = true;
    r->check_need = (uint8_t)need;
    snprintf(r->check_action, sizeof r->check_action, "%s", action);
    rest_wait(n, r, NET_REST_TIMEOUT_S);
    lws_set_timer_usecs(r->wsi, (lws_usec_t)NET_ROLE_CHECK_WAIT_S * LWS_US_PER_SEC);
    return true;
}

void rest_relay_answered(net *n, http_req *r, const cmd_reply *rep) {
    if (!rep->ok) { /* the credential refused (401), or the node's refusal as it is (rate limited, no such room) */
        rest_respond_error(n, r, cmd_reply_code(rep), "%s", rep->error);
        return;
    }
    if (rep->kind != CMD_AUTH || rep->value < ROLE_VIEWER || rep->value >= ROLE_COUNT) {
        rest_respond_error(n, r, RC_INTERNAL, "the sim node answered the check of the credential with no role");
        return;
    }
    r->role = (uint8_t)rep->value;
    r->granted = true;
    if (rest_refuse_role(n, r, (role)r->check_need, r->check_action)) return;
    rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "this is a relay: %s is the sim node's", r->check_action);
}

void rest_relay_timer(net *n, http_req *r) {
    if (!r->role_check || !r->waiting || !rest_take_pending(n, r->id)) return;
    rest_respond_error(n, r, RC_BUSY,
                       "busy: the sim node did not answer within %d s (it checks the credential of %s), try again",
                       NET_ROLE_CHECK_WAIT_S, r->check_action);
}
