/* rest_meshes.h - the meshes and obstacles of the REST API: POST /api/meshes
 * (a mesh file read on a thread of its own, through wire/mesh_load.c's
 * forked reader, into the room's mesh store), GET /api/meshes, and the
 * answers of GET /api/obstacles.  Network thread, except the reader
 * threads it starts. */
#ifndef SRV_REST_MESHES_H
#define SRV_REST_MESHES_H

#include <cJSON.h>

#include "http_req.h"
#include "net_internal.h"
#include "reply.h"

#define REST_MESH_WAIT_S 60 /* an upload is answered within this (the reader's CPU bound, and its queue) */

/* POST /api/meshes: checks the Content-Type and the body, and starts a
 * reader; its answer comes back as a CMD_MESH_UPLOAD reply (rest_deliver). */
void rest_mesh_upload(net *n, http_req *r);
/* The answer to a reader's reply: the stored mesh's description. */
cJSON *rest_mesh_uploaded_json(net_room *v, uint32_t id);
/* GET /api/meshes. */
cJSON *rest_meshes_json(net *n, net_room *v);
/* GET /api/obstacles from the sim thread's copy. */
cJSON *rest_obstacles_json(const obstacles_snap *o);
/* Joins every reader (shutdown: before the rooms' hubs stop waking the
 * network thread); each ends within its CPU bound. */
void rest_mesh_join_all(net *n);

#endif
