/* rest_proxy.h - REST through a fleet (docs/fleet.md, "REST through the
 * fleet"), the asking side: on a relay of a fleet, POST /api/rooms, a room's
 * own routes (PATCH, DELETE, invites, key rotation, kicks) and every read
 * of a room (but an obstacle's mesh, of which it keeps a copy), and on a node of a fleet every read and write under
 * /api/rooms/{room}/ for a room it does not hold, go to the room's holder
 * over the bus (http_mail.h, bus_rest.h); its answer, status and JSON body,
 * is this request's.  A room whose holder stopped answering (orphaned) is
 * answered 503 with Retry-After at once; one the view lists as held by no
 * node, or does not list, is asked all the same (the view lags), and when
 * no node reads its subject, 503 (404: a room the view does not list); a read whose
 * answer the bus does not carry (not a JSON object of at most 256 KiB, or
 * asked with a query string or another format) 421 misdirected, naming the
 * holder's node id and URL.  Network thread only. */
#ifndef SRV_REST_PROXY_H
#define SRV_REST_PROXY_H

#include <stdbool.h>

#include "http_mail.h"
#include "http_req.h"
#include "net_internal.h"

/* A room between holders is asked again after this (Retry-After, seconds). */
#define NET_PROXY_RETRY_S 2

/* A room on its way to a holder, which no node answers for yet, is asked
 * again every NET_PROXY_AGAIN_MS, NET_PROXY_TRIES times, before it is
 * answered 503 (or 404: a room this server made within NET_MADE_SPAN_NS and
 * its view does not list yet).  A room this server made within that span is
 * asked NET_MADE_TRIES times: its 201 may come from the node that placed it
 * while the node that holds it, another, has yet to read its subject (a
 * loaded node takes longer than half a second to), and the room is known to
 * be on its way. */
#define NET_PROXY_AGAIN_MS 100
#define NET_PROXY_TRIES 5
#define NET_MADE_TRIES 30
#define NET_MADE_SPAN_NS 10000000000ull

/* Sends r (its headers and body read; r->proxy) to its room's holder, or
 * to any node for POST /api/rooms, and makes it wait for the answer; or
 * answers it: 404 for a room the fleet does not have, 503 for one between
 * holders, 503 when the bus's queue is full. */
void rest_proxy_send(net *n, http_req *r);
/* The answer (or the bus's word that none will come) for the request of e->id. */
void rest_proxy_answered(net *n, const http_mail_msg *e);
/* r's timer, while it waits to be asked again (r->proxy_again): sends it again. */
void rest_proxy_again(net *n, http_req *r);
/* A relay of a fleet, forwarding r's command to its room's holder: answers
 * 503 and returns true when no node holds the room right now. */
bool rest_proxy_refuse_moving(net *n, http_req *r);

#endif
