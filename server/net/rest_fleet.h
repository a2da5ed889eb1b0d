/* rest_fleet.h - POST and DELETE /api/fleet/nodes/{id}/drain: the network
 * thread's side of a drain and of its cancel (docs/fleet.md, "Draining").
 * The node is looked up in the fleet's view the fleet thread left in the
 * default room's hub, and the ask is left there for the fleet thread, which
 * writes drain.<id> into the directory (a drain) or deletes it (a cancel);
 * the answer (202) does not wait for the key or for the rooms to move: GET
 * /api/fleet shows the node draining or not and its rooms leaving.  Network
 * thread only. */
#ifndef SRV_REST_FLEET_H
#define SRV_REST_FLEET_H

#include <stdint.h>

#include "http_req.h"
#include "net_internal.h"

void rest_fleet_drain(net *n, http_req *r, uint32_t id);
void rest_fleet_undrain(net *n, http_req *r, uint32_t id);

#endif
