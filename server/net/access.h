/* access.h - the network thread's checks before a command reaches the world
 * (origin, token) and its one way onto the command queue. */
#ifndef SRV_ACCESS_H
#define SRV_ACCESS_H

#include <libwebsockets.h>
#include <stdbool.h>

#include "command.h"

typedef struct net net;             /* net_internal.h */
typedef struct cmd_queue cmd_queue; /* queue.h */

/* Stamps the arrival time and pushes c onto a room's queue (internal: a
 * command the network thread makes itself, which may use the reserved room). */
bool net_enqueue(cmd_queue *q, cmd *c, bool internal);
/* --token given and this is it (constant time in the token's length). */
bool net_token_ok(const net *n, const char *token);
/* A request without an Origin header (not a browser), from this server's own
 * origin, or from one in --allow-origin. */
bool net_origin_ok(const net *n, struct lws *wsi);

#endif
