/* invite.h - a room's invites: JSON Web Tokens (RFC 7519) signed with HS256
 * (RFC 7518 3.2) through libjwt, carrying exactly the claims `room` (a room
 * name), `role` (viewer, player, editor or owner), `exp` and `iat` (integer
 * seconds since the epoch).
 *
 * invite_verify checks what libjwt 1.10 does not: the header is read before
 * libjwt sees the token (only {"alg": "HS256"} with an optional
 * "typ": "JWT"; `none`, every other algorithm and any other header field are
 * refused, whatever libjwt would do with them) and the algorithm libjwt
 * verified with is checked again after it; the signature must be the 43
 * characters of an HS256 MAC; the claims must be exactly the four above, each
 * once and of its type.  A refusal has no effect but its message.
 *
 * Pure but for libjwt's own allocations, freed before returning; any thread.
 */
#ifndef SRV_INVITE_H
#define SRV_INVITE_H

#include <stddef.h>
#include <stdint.h>

#include "roles.h"
#include "secret.h"

#define INVITE_MAX_TOKEN 4096           /* bytes: a longer token is refused unread */
#define INVITE_SKEW_S 60                /* s: how far in the future `iat` may be (another node's clock) */
#define INVITE_MAX_TTL_S (366 * 86400L) /* s: the longest an invite lives */

/* The key of room's invites at key generation gen, made from the server's
 * secret: HS256 takes a key of any length, and the secret followed by the
 * room's name and the generation is one no other room and no other
 * generation shares, so an invite verifies only in its room and only until
 * the room's key is rotated (the generation moves on).  The secret's first
 * SECRET_MAX - 48 bytes are used (a longer one is cut there). */
void invite_room_key(const secret_key *server, const char *room, unsigned gen, secret_key *out);

/* A token for room (a room name) granting role r (not admin) from now (s
 * since the epoch) for ttl_s seconds (1..INVITE_MAX_TTL_S), written to out
 * (cap bytes, terminated).  0, or -1 with err (errlen bytes). */
int invite_sign(const secret_key *key, const char *room, role r, int64_t ttl_s, int64_t now, char *out, size_t cap,
                char *err, size_t errlen);

/* Checks the len bytes at token: signed with key, for room_expected, valid at
 * now (iat <= now + INVITE_SKEW_S, now < exp).  0 and *out the role it
 * grants, or -1 with err (errlen bytes) saying why and *out untouched. */
int invite_verify(const secret_key *key, const char *token, size_t len, const char *room_expected, int64_t now,
                  role *out, char *err, size_t errlen);

#endif
