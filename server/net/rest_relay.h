/* rest_relay.h - a relay's answer to the REST routes only its sim node
 * serves and that need more than a viewer (the list of clients, a mesh
 * upload, a snapshot restore, the rooms' changes, invites, key rotation and
 * kicks): the relay holds no key, so it asks the node for the role the
 * request's credential gives in its room (a credential alone, forwarded as a
 * WebSocket upgrade's is), and answers 401 when the node refuses it, 403 with
 * the role table's sentence when the role is below the route's, else 501.
 * Nothing is changed either way.  Network thread only. */
#ifndef SRV_REST_RELAY_H
#define SRV_REST_RELAY_H

#include <stdbool.h>

#include "http_req.h"
#include "net_internal.h"
#include "reply.h"

/* The sim node answers a credential's check within this, or the request is answered busy. */
#define NET_ROLE_CHECK_WAIT_S 5

/* On a relay, at r's headers (its room and credential read): when r asks for
 * such a route, its credential is sent to the sim node to be checked (or r is
 * answered busy) and this returns true; false for any other request. */
bool rest_relay_check(net *n, http_req *r);
/* The sim node's answer to r's check (r taken off the pending list): 401 (or
 * the node's refusal as it is), 403 with the sentence, or 501. */
void rest_relay_answered(net *n, http_req *r, const cmd_reply *rep);
/* r's timer: a check the sim node has not answered is answered 503 busy. */
void rest_relay_timer(net *n, http_req *r);

#endif
