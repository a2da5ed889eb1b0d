/* apply_mesh.c - a stored mesh as a command names it (see apply_mesh.h). */
#include "apply_mesh.h"

#include "hub.h"
#include "publish.h"

hub_mesh *apply_stored_mesh(sim_thread *s, const cmd *c, uint32_t id) {
    hub_mesh *m = mesh_store_get(&s->hub->meshes, id);
    if (!m)
        sim_reply_error(s, c, RC_NOT_FOUND,
                        "unknown mesh %u (GET /api/meshes lists the meshes held; past %d the oldest are forgotten)",
                        (unsigned)id, MESH_STORE_MAX);
    return m;
}
