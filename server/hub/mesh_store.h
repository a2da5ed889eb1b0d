/* mesh_store.h - the meshes a room holds (POST /api/meshes): immutable,
 * refcounted triangle meshes found by id, which the network thread lists,
 * a mesh loader thread adds, and the sim thread reads to place an obstacle.
 *
 * Bounded: at most MESH_STORE_MAX meshes and MESH_STORE_MAX_BYTES of
 * vertices and triangles together; a mesh that would pass either bound
 * makes room by forgetting the oldest (a mesh already placed is not
 * touched: an obstacle holds its own copy).  Ids count up from 1 and are
 * never reused within a room. */
#ifndef SRV_MESH_STORE_H
#define SRV_MESH_STORE_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"

#define MESH_STORE_MAX 32
#define MESH_STORE_MAX_BYTES ((size_t)256 << 20) /* vertices and triangles of every mesh held */

/* Threads: built by one thread, then read-only; refs is atomic, the last
 * holder frees it. */
typedef struct hub_mesh {
    atomic_int refs;
    uint32_t id;
    int format; /* mesh_format (wire/mesh_load.h) it came as */
    bool closed;
    fs_vec3 lo, hi; /* bounding box, mesh coordinates */
    size_t bytes;   /* of vertices and triangles */
    fs_vec3 *vertices;
    uint32_t *triangles;
    int vertex_count, triangle_count;
} hub_mesh;

/* Takes ownership of the arrays (malloc'd): a mesh with one reference,
 * its bounds and its closedness worked out; NULL when out of memory (the
 * arrays are freed then). */
hub_mesh *hub_mesh_make(fs_vec3 *vertices, int vertex_count, uint32_t *triangles, int triangle_count, int format);
void hub_mesh_unref(hub_mesh *m);
static inline fs_mesh hub_mesh_view(const hub_mesh *m) {
    fs_mesh v = {m->vertices, m->vertex_count, m->triangles, m->triangle_count};
    return v;
}

/* Threads: any; every field under mtx. */
typedef struct mesh_store {
    pthread_mutex_t mtx;
    hub_mesh *mesh[MESH_STORE_MAX]; /* oldest first */
    int count;
    size_t bytes;
    uint32_t next_id;
} mesh_store;

void mesh_store_init(mesh_store *s);
void mesh_store_destroy(mesh_store *s);
/* Adds m (takes the caller's reference) under a new id, written into m->id
 * and returned; forgets the oldest as needed.  0 when m alone is above
 * MESH_STORE_MAX_BYTES (m is dropped). */
uint32_t mesh_store_put(mesh_store *s, hub_mesh *m);
/* The mesh with that id with a reference for the caller, or NULL. */
hub_mesh *mesh_store_get(mesh_store *s, uint32_t id);
/* New references to the meshes held, oldest first: up to max; how many. */
int mesh_store_list(mesh_store *s, hub_mesh **out, int max);

#endif
