/* roles.c - the role table: which role each command kind and each REST route
 * needs (see roles.h).  protocol/PROTOCOL.md's "Rooms and roles" shows the same
 * table; tests/server/test_roles.c fails when the two differ. */
#include "roles.h"

#include <stdio.h>
#include <string.h>

static const char *const role_names[ROLE_COUNT] = {
    [ROLE_VIEWER] = "viewer", [ROLE_PLAYER] = "player", [ROLE_EDITOR] = "editor",
    [ROLE_OWNER] = "owner",   [ROLE_ADMIN] = "admin",
};

const char *role_name(role r) {
    return (r >= 0 && r < ROLE_COUNT) ? role_names[r] : "unknown";
}

int role_parse(const char *s, size_t len, role *out) {
    for (int r = 0; r < ROLE_COUNT; r++) {
        if (strlen(role_names[r]) == len && !memcmp(s, role_names[r], len)) {
            *out = (role)r;
            return 0;
        }
    }
    return -1;
}

/* In cmd_kind order, one row per kind. */
#define ROW(k, r)                                                                                                      \
    { k, r, false }
#define INTERNAL(k)                                                                                                    \
    { k, ROLE_VIEWER, true }
const role_command_row role_commands[] = {
    INTERNAL(CMD_NONE),
    ROW(CMD_PUSH, ROLE_PLAYER),
    ROW(CMD_SET_PARAM, ROLE_EDITOR),
    ROW(CMD_LOAD_SCENE, ROLE_EDITOR),
    ROW(CMD_PAUSE, ROLE_EDITOR),
    ROW(CMD_RESUME, ROLE_EDITOR),
    ROW(CMD_STEP, ROLE_EDITOR),
    ROW(CMD_EMITTER, ROLE_EDITOR),
    ROW(CMD_CURSOR, ROLE_VIEWER),
    ROW(CMD_AUTH, ROLE_VIEWER),
    ROW(CMD_GET_PARTICLES, ROLE_VIEWER),
    INTERNAL(CMD_CLIENT_LEFT),
    ROW(CMD_BODY_CREATE, ROLE_PLAYER),
    ROW(CMD_BODY_DESTROY, ROLE_PLAYER),
    ROW(CMD_BODY_IMPULSE, ROLE_PLAYER),
    ROW(CMD_BODY_GRAB, ROLE_PLAYER),
    ROW(CMD_BODY_DRAG, ROLE_PLAYER),
    ROW(CMD_BODY_RELEASE, ROLE_PLAYER),
    ROW(CMD_GET_BODIES, ROLE_VIEWER),
    ROW(CMD_SET_SOLVER, ROLE_EDITOR),
    ROW(CMD_HEAT, ROLE_PLAYER),
    ROW(CMD_GET_SNAPSHOT, ROLE_VIEWER),
    ROW(CMD_RESTORE, ROLE_EDITOR),
    ROW(CMD_HEATER, ROLE_EDITOR),
    ROW(CMD_KEYFRAME, ROLE_VIEWER),
    ROW(CMD_RECORD_START, ROLE_EDITOR),
    ROW(CMD_RECORD_STOP, ROLE_EDITOR),
    ROW(CMD_PACE, ROLE_VIEWER),
    ROW(CMD_MESH_UPLOAD, ROLE_PLAYER), /* a player's dropped file becomes an obstacle or a body: the store is bounded */
    ROW(CMD_OBSTACLE_ADD, ROLE_PLAYER),
    ROW(CMD_OBSTACLE_REMOVE, ROLE_PLAYER),
    ROW(CMD_GET_OBSTACLES, ROLE_VIEWER),
    ROW(CMD_PROBE_ADD, ROLE_EDITOR),
    ROW(CMD_PROBE_REMOVE, ROLE_EDITOR),
    ROW(CMD_DETAIL, ROLE_VIEWER),
};
#undef ROW
#undef INTERNAL
_Static_assert(sizeof role_commands / sizeof role_commands[0] == CMD_KIND_COUNT,
               "role_commands needs exactly one row per cmd_kind (command.h), in its order");

role role_needed_for_command(cmd_kind k) {
    /* outside the enum: only the administrator, so nothing unknown slips through */
    if (k < 0 || k >= CMD_KIND_COUNT || role_commands[k].kind != k) return ROLE_ADMIN;
    return role_commands[k].needed;
}

/* Every route of rest_route.c's table, then the routes of rooms.  Reads need
 * a viewer, except the list of clients (their addresses; kicking one is the
 * owner's); a route that carries a command needs that command's role. */
const role_route_row role_routes[] = {
    {"GET", "/api", ROLE_VIEWER},
    {"GET", "/api/health", ROLE_VIEWER},
    {"GET", "/api/stats", ROLE_VIEWER},
    {"GET", "/api/scenes", ROLE_VIEWER},
    {"POST", "/api/scene", ROLE_EDITOR},
    {"GET", "/api/materials", ROLE_VIEWER},
    {"PATCH", "/api/materials/{name}", ROLE_EDITOR},
    {"POST", "/api/pause", ROLE_EDITOR},
    {"POST", "/api/resume", ROLE_EDITOR},
    {"POST", "/api/step", ROLE_EDITOR},
    {"GET", "/api/particles", ROLE_VIEWER},
    {"POST", "/api/push", ROLE_PLAYER},
    {"POST", "/api/emitter", ROLE_EDITOR},
    {"GET", "/api/bodies", ROLE_VIEWER},
    {"POST", "/api/bodies", ROLE_PLAYER},
    {"DELETE", "/api/bodies/{id}", ROLE_PLAYER},
    {"POST", "/api/bodies/{id}/impulse", ROLE_PLAYER},
    {"GET", "/api/clients", ROLE_OWNER},
    {"GET", "/api/solvers", ROLE_VIEWER},
    {"POST", "/api/solver", ROLE_EDITOR},
    {"POST", "/api/heat", ROLE_PLAYER},
    {"POST", "/api/heater", ROLE_EDITOR},
    {"GET", "/api/snapshot", ROLE_VIEWER},
    {"POST", "/api/snapshot", ROLE_EDITOR},
    {"GET", "/api/recordings", ROLE_VIEWER},
    {"POST", "/api/recordings", ROLE_EDITOR},
    {"POST", "/api/recordings/stop", ROLE_EDITOR},
    {"GET", "/api/recordings/{name}", ROLE_VIEWER},
    {"GET", "/api/meshes", ROLE_VIEWER},
    {"POST", "/api/meshes", ROLE_PLAYER},
    {"GET", "/api/obstacles", ROLE_VIEWER},
    {"POST", "/api/obstacles", ROLE_PLAYER},
    {"DELETE", "/api/obstacles/{id}", ROLE_PLAYER},
    {"GET", "/api/obstacles/{id}/mesh", ROLE_VIEWER},
    {"GET", "/api/probes", ROLE_VIEWER},
    {"POST", "/api/probes", ROLE_EDITOR},
    {"DELETE", "/api/probes/{name}", ROLE_EDITOR},
    {"GET", "/metrics", ROLE_VIEWER},
    /* the rooms */
    {"GET", "/api/rooms", ROLE_VIEWER},
    {"GET", "/api/fleet", ROLE_VIEWER},
    {"POST", "/api/fleet/nodes/{id}/drain", ROLE_ADMIN},
    {"DELETE", "/api/fleet/nodes/{id}/drain", ROLE_ADMIN},
    {"POST", "/api/rooms", ROLE_ADMIN},
    {"PATCH", "/api/rooms/{room}", ROLE_OWNER},
    {"DELETE", "/api/rooms/{room}", ROLE_OWNER},
    {"POST", "/api/rooms/{room}/invites", ROLE_OWNER},
    {"POST", "/api/rooms/{room}/rotate-key", ROLE_OWNER},
    {"POST", "/api/rooms/{room}/clients/{id}/kick", ROLE_OWNER},
};
const int role_route_count = (int)(sizeof role_routes / sizeof role_routes[0]);

static int route_row(const char *method, const char *path) {
    for (int i = 0; i < role_route_count; i++)
        if (!strcmp(role_routes[i].method, method) && !strcmp(role_routes[i].path, path)) return i;
    return -1;
}

int role_needed_for_route(const char *method, const char *path, role *out) {
    int i = route_row(method, path);
    static const char room_prefix[] = "/api/rooms/{room}/";
    if (i < 0 && !strncmp(path, room_prefix, sizeof room_prefix - 1)) {
        char plain[128];
        int n = snprintf(plain, sizeof plain, "/api/%s", path + sizeof room_prefix - 1);
        if (n > 0 && (size_t)n < sizeof plain && strncmp(plain, "/api/rooms", 10)) i = route_row(method, plain);
    }
    if (i < 0) return -1;
    *out = role_routes[i].needed;
    return 0;
}

const char *role_refusal(char *buf, size_t cap, const char *action, role needed, role have) {
    const char *an = have == ROLE_OWNER || have == ROLE_ADMIN || have == ROLE_EDITOR ? "an" : "a";
    snprintf(buf, cap, "'%s' needs the %s role; this connection is %s %s.", action, role_name(needed), an,
             role_name(have));
    return buf;
}
