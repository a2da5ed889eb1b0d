/* rest_rooms.h - the rooms over REST: every route also answers under
 * /api/rooms/{name}/... for that room (the plain /api/... routes address the
 * default room), and the rooms themselves: GET and POST /api/rooms (list,
 * create), GET, PATCH and DELETE /api/rooms/{name}, and a room's invites,
 * key rotation and kicks (POST /api/rooms/{name}/invites, /rotate-key,
 * /clients/{id}/kick).  A room is made off this
 * thread (room_keeper.h); the POST is answered when it is running.
 * Network thread only. */
#ifndef SRV_REST_ROOMS_H
#define SRV_REST_ROOMS_H

#include <stdbool.h>

#include "http_req.h"
#include "net_internal.h"
#include "room_keeper.h"

/* The rooms' own routes, as GET /api lists them. */
#define REST_ROOMS_ROUTES 8
extern const char *const rest_rooms_routes[REST_ROOMS_ROUTES];

/* Takes the room out of r->path: sets r->room (a user of its view) and
 * leaves the path the plain routes know, or marks r a rooms request
 * (rooms_op).  False when it answered r already (no such room, a bad name). */
bool rest_rooms_split(net *n, http_req *r);
/* A rooms request's route as the role table names it ("/api/rooms/{room}/invites"). */
const char *rest_rooms_pattern(const http_req *r);
/* Answers a rooms request (list, create, one room, change, delete). */
void rest_rooms_route(net *n, http_req *r);
/* A room the keeper opened (or failed to) for a POST /api/rooms: answers
 * the request if it still waits, and drops the keeper's reference. */
void rest_rooms_opened(net *n, const room_opened *res);

#endif
