/* obstacle_mesh.h - the placed mesh of an obstacle as viewers are sent it
 * (PROTOCOL.md, "Obstacles on the page"): positions quantized to 16 bits
 * over the mesh's bounding box, indices of 16 or 32 bits, and a content
 * hash of those bytes, so that a client that holds a mesh of that hash does
 * not fetch it again.
 *
 * Pure: no world, no threads.  The sim thread encodes (when the obstacles
 * change); the network thread only hands the bytes out. */
#ifndef SRV_OBSTACLE_MESH_H
#define SRV_OBSTACLE_MESH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"
#include "msgbuf.h"

#define OBSTACLE_MESH_MAGIC "FSOM"
#define OBSTACLE_MESH_VERSION 1
#define OBSTACLE_MESH_HEAD 48    /* bytes before the positions */
#define OBSTACLE_MESH_WIDE 1     /* flags bit: 32-bit indices (else 16-bit) */
#define OBSTACLE_MESH_QMAX 65535 /* the largest quantized coordinate */
#define OBSTACLE_MESH_HASH_AT 40 /* the hash's offset, outside the bytes it covers */
#define OBSTACLE_MESH_CTYPE "application/x-fluid-mesh"

/* The encoded size of a mesh of v vertices and t triangles. */
size_t obstacle_mesh_size(int v, int t);
/* FNV-1a, 64 bits, over the encoding's bytes but the hash's own eight. */
uint64_t obstacle_mesh_hash(const uint8_t *p, size_t n);
/* The mesh (a checked one: fs_mesh_check) encoded, its hash written into it
 * and into *hash; NULL when out of memory. */
msg_buf *obstacle_mesh_encode(const fs_mesh *m, uint64_t *hash);
/* Whether p[0..n) is an encoding as obstacle_mesh_encode writes one: its
 * head, counts within the core's bounds, size, finite bounds, indices in
 * range and its hash (into *hash).  0, or -1.  (A relay takes meshes from
 * the bus.) */
int obstacle_mesh_check(const uint8_t *p, size_t n, uint64_t *hash);

#endif
