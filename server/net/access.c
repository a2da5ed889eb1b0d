/* access.c - who may reach the world: the Origin check (--allow-origin),
 * the token check (--token), and the door every command goes through onto
 * the queue.  Network thread only. */
#include "access.h"

#include <stdio.h>
#include <strings.h>
#include <string.h>

#include "clock.h"
#include "net_internal.h"
#include "net_room.h"
#include "queue.h"
#include "room_grant.h"
#include "rooms.h"

bool net_enqueue(cmd_queue *q, cmd *c, bool internal) {
    c->arrival_ns = clock_now_ns();
    return cmd_queue_push(q, c, internal);
}

bool net_token_ok(const net *n, const char *token) {
    return room_token_ok(n->cfg->token, token, strlen(token));
}

bool net_origin_ok(const net *n, struct lws *wsi) {
    char origin[sizeof n->cfg->allow_origin], host[256];
    int got = lws_hdr_copy(wsi, origin, sizeof origin, WSI_TOKEN_ORIGIN);
    if (got == 0) return true; /* not a browser: scripts and tools send no Origin */
    const char *list = n->cfg->allow_origin;
    if (!strcmp(list, "*")) return true;
    if (got < 0) return false; /* an Origin too long to copy (-1) is there, and longer than any allowed one */
    const char *o = origin;
    if (!strncmp(o, "http://", 7))
        o += 7;
    else if (!strncmp(o, "https://", 8))
        o += 8;
    if (lws_hdr_copy(wsi, host, sizeof host, WSI_TOKEN_HOST) > 0 && !strcasecmp(o, host))
        return true; /* the page this server served */
    size_t ol = strlen(origin);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        while (l && *p == ' ') p++, l--;
        while (l && p[l - 1] == ' ') l--;
        if (l == ol && !strncasecmp(p, origin, l)) return true;
        p = e ? e + 1 : p + strlen(p);
    }
    return false;
}

role net_public_role(const net *n, const net_room *v) {
    /* a relay: what its sim node says of the room (room_set_mirror_role), whatever its own options */
    if (n->relay_id) return room_public_role(v->room);
    if (!n->cfg->token[0]) return ROLE_ADMIN; /* one person on loopback: every caller administrates */
    return room_public_role(v->room);
}

int net_grant(const net *n, const net_room *v, const char *cred, size_t len, role *out, char *why, size_t cap) {
    return room_grant(v->room, n->cfg->token, &n->secret, cred, len, out, why, cap);
}
