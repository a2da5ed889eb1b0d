/* roles.h - the roles of a room's connections (viewer < player < editor <
 * owner, and admin for the server's --token) and the table of which role each
 * command kind and each REST route needs: the table the server enforces, and
 * the one protocol/PROTOCOL.md shows under "Rooms and roles".
 *
 * Pure: constant tables and functions of values, no state; any thread.
 */
#ifndef SRV_ROLES_H
#define SRV_ROLES_H

#include <stdbool.h>
#include <stddef.h>

#include "command.h"

/* Each role may do everything the ones before it may. */
typedef enum role {
    ROLE_VIEWER = 0, /* the stream and its own cursor */
    ROLE_PLAYER,     /* push, grab and throw bodies, heat and cool, add and remove bodies */
    ROLE_EDITOR,     /* materials, emitter, scene, solver, pause, step, snapshot restore, recordings */
    ROLE_OWNER,      /* the room itself: its public role, invites, key rotation, kicking, deleting it */
    ROLE_ADMIN,      /* the server's --token: every room, and creating rooms */
    ROLE_COUNT
} role;

#define ROLE_NAME_MAX 6 /* the longest role name ("viewer", "player", "editor") */

/* "viewer", "player", ...; "unknown" outside the enum. */
const char *role_name(role r);
/* The role named by the len bytes at s (exactly a name of role_name, a NUL
 * inside refused); 0, or -1 when no role has that name. */
int role_parse(const char *s, size_t len, role *out);
/* Whether a connection with role have may do what needs role needed. */
static inline bool role_allows(role have, role needed) {
    return have >= needed;
}

/* One command kind's row of the table.  internal: never sent by a client
 * (none, client_left), so PROTOCOL.md does not list it. */
typedef struct role_command_row {
    cmd_kind kind;
    role needed;
    bool internal;
} role_command_row;

/* Row k is cmd_kind k's: the table has exactly CMD_KIND_COUNT rows (a
 * _Static_assert in roles.c), so a new kind without a role fails the build.
 * Constant data (any thread). */
extern const role_command_row role_commands[];
role role_needed_for_command(cmd_kind k);

/* One REST route's row: its method and path pattern spelled as
 * server/wire/rest_route.c's table spells them ("GET", "/api/bodies/{id}"),
 * and the routes of rooms with {room} for a room's name.  Constant data. */
typedef struct role_route_row {
    const char *method;
    const char *path;
    role needed;
} role_route_row;

extern const role_route_row role_routes[];
extern const int role_route_count;

/* The role a route needs, by method and pattern.  Every route also answers
 * under /api/rooms/{room}/... with the role of the plain /api/... route
 * ("/api/rooms/{room}/stats" needs what "/api/stats" needs).  0, or -1 for a
 * route the table does not know. */
int role_needed_for_route(const char *method, const char *path, role *out);

/* The one sentence a refused action answers: "'push' needs the player role;
 * this connection is a viewer."  action: a command's type or a route
 * ("POST /api/push").  Returns buf. */
const char *role_refusal(char *buf, size_t cap, const char *action, role needed, role have);

#endif
