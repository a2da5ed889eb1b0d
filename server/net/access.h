/* access.h - the network thread's checks before a command reaches the world
 * (origin, token) and its one way onto the command queue. */
#ifndef SRV_ACCESS_H
#define SRV_ACCESS_H

#include <libwebsockets.h>
#include <stdbool.h>

#include "command.h"
#include "roles.h"

typedef struct net net;             /* net_internal.h */
typedef struct cmd_queue cmd_queue; /* queue.h */
typedef struct net_room net_room;   /* net_room.h */

/* Stamps the arrival time and pushes c onto a room's queue (internal: a
 * command the network thread makes itself, which may use the reserved room). */
bool net_enqueue(cmd_queue *q, cmd *c, bool internal);
/* --token given and this is it (constant time in the token's length). */
bool net_token_ok(const net *n, const char *token);
/* A request without an Origin header (not a browser), from this server's own
 * origin, or from one in --allow-origin. */
bool net_origin_ok(const net *n, struct lws *wsi);

/* The role of a connection or request without a credential in room v now:
 * administrator on a server without --token (one person on loopback), else
 * the room's public role; on a relay, the role its sim node says (the node
 * decides every role: a relay holds no key and asserts none). */
role net_public_role(const net *n, const net_room *v);
/* The role a credential (len bytes: the server's token, or an invite of
 * room v, wire/invite.h) grants in v: 0 and *out, or -1 with why (cap bytes:
 * "unauthorized: " and the reason), as room_grant computes it for every
 * edge.  A sim node's only. */
int net_grant(const net *n, const net_room *v, const char *cred, size_t len, role *out, char *why, size_t cap);

#endif
