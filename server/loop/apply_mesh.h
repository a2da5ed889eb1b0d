/* apply_mesh.h - a stored mesh (hub.meshes) as the commands that place one
 * name it (an obstacle, a mesh body): found under a reference, or the
 * command refused.  Sim thread only. */
#ifndef SRV_APPLY_MESH_H
#define SRV_APPLY_MESH_H

#include <stdint.h>

#include "command.h"
#include "mesh_store.h"
#include "sim_state.h"

/* The mesh with that id with a reference for the caller (hub_mesh_unref it);
 * NULL when the room holds none by that id, c then refused (not found). */
hub_mesh *apply_stored_mesh(sim_thread *s, const cmd *c, uint32_t id);

#endif
