/* room_grant.h - the role a credential gives in a room, computed one way for
 * every edge: the sim node's WebSocket and REST (net/) and what a relay
 * forwards with its clients' messages (bus/), so that a command keeps the
 * same role whichever edge it came through.
 *
 *   - the node has no --token: admin (one person on loopback);
 *   - no credential: the room's public role;
 *   - the server's token: admin;
 *   - an invite of the room (signed with the room's key, unexpired): its role;
 *   - anything else: refused, with the reason.
 *
 * Any thread (the room's public role and key generation are atomic). */
#ifndef SRV_ROOM_GRANT_H
#define SRV_ROOM_GRANT_H

#include <stdbool.h>
#include <stddef.h>

#include "roles.h"
#include "rooms.h"
#include "secret.h"

/* Whether the len bytes at cred are the server's token (constant time in
 * the token's length); false when there is none. */
bool room_token_ok(const char *token, const char *cred, size_t len);

/* The role the len bytes at cred give in room r (len 0: no credential).
 * token: the server's --token ("" for none); secret: the server's, that the
 * room's invite key is made from.  0 and *out, or -1 with why ("unauthorized:
 * ...", cap bytes) and *out untouched. */
int room_grant(room *r, const char *token, const secret_key *secret, const char *cred, size_t len, role *out, char *why,
               size_t cap);

#endif
