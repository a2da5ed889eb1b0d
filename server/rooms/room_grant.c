/* room_grant.c - the role a credential gives in a room (see room_grant.h). */
#include "room_grant.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "invite.h"

bool room_token_ok(const char *token, const char *cred, size_t len) {
    size_t wl = strlen(token);
    unsigned diff = (unsigned)(wl ^ len);
    for (size_t i = 0; i < wl; i++) /* constant time in the token's length */
        diff |= (unsigned)(uint8_t)token[i] ^ (unsigned)(uint8_t)(i < len ? cred[i] : 0);
    return wl > 0 && diff == 0;
}

int room_grant(room *r, const char *token, const secret_key *secret, const char *cred, size_t len, role *out, char *why,
               size_t cap) {
    if (!token[0] || room_token_ok(token, cred, len)) {
        *out = ROLE_ADMIN;
        return 0;
    }
    if (!len) {
        *out = room_public_role(r);
        return 0;
    }
    if (!memchr(cred, '.', len)) {
        snprintf(why, cap, "unauthorized: wrong token");
        return -1;
    }
    secret_key key;
    invite_room_key(secret, room_name(r), room_key_generation(r), &key);
    char err[160];
    int rc = invite_verify(&key, cred, len, room_name(r), (int64_t)time(NULL), out, err, sizeof err);
    memset(&key, 0, sizeof key);
    if (rc) snprintf(why, cap, "unauthorized: %s", err);
    return rc;
}
