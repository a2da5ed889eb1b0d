/* mesh_load.h - reading an uploaded triangle mesh (STL binary or ASCII,
 * OBJ, binary glTF; PLY is refused after its header, see mesh_load.c) into
 * the core's fs_mesh: STL and glTF through Assimp's C API, with every
 * other importer refused before it parses anything; OBJ through the
 * server's own reader of its geometry (obj_read.h); the input held to size
 * and triangle bounds.  Untrusted input: a bad file gets a sentence, never
 * a crash.  Any thread may call it. */
#ifndef MESH_LOAD_H
#define MESH_LOAD_H

#include <stddef.h>

#include "fluid_sim.h"

typedef enum mesh_format { MESH_STL = 0, MESH_OBJ, MESH_PLY, MESH_GLB, MESH_FORMAT_COUNT } mesh_format;

/* The format a Content-Type names ("model/stl", "model/obj",
 * "application/ply", "model/gltf-binary", parameters after ';' ignored),
 * or -1. */
int mesh_format_from_type(const char *content_type);
const char *mesh_format_type(mesh_format f);

#define MESH_LOAD_DEFAULT_MAX_BYTES (16u << 20) /* --mesh-max-mb's default: 16 */
typedef struct mesh_limits {
    size_t max_bytes;  /* the file */
    int max_triangles; /* after triangulation, at most FS_MESH_MAX_TRIANGLES */
} mesh_limits;
mesh_limits mesh_default_limits(void);

/* A loaded mesh: one list of vertices (identical positions welded, so a
 * closed surface is closed by index; every one used by a triangle) and
 * triangles, every scene node's transform applied.  Owned by the caller: mesh_data_free. */
typedef struct mesh_data {
    fs_vec3 *vertices;
    uint32_t *triangles;
    int vertex_count, triangle_count;
} mesh_data;

static inline fs_mesh mesh_data_view(const mesh_data *d) {
    fs_mesh m = {d->vertices, d->vertex_count, d->triangles, d->triangle_count};
    return m;
}
void mesh_data_free(mesh_data *d);

/* Reads buf[0..len) as format f.  0 on success (the mesh passes
 * fs_mesh_check); -1 with a sentence in err otherwise (out holds nothing).
 * In this process (Assimp's calls take turns: its last error is one
 * global), where Assimp 5.2 leaks on some malformed files: for tests and
 * the fuzzer. */
int mesh_load(const void *buf, size_t len, mesh_format f, const mesh_limits *lim, mesh_data *out, char *err,
              size_t errlen);
/* The same, with the reading (OBJ's too, though its reader needs no
 * containment: one path for every format) in a forked process that ends
 * after the one file: what the server calls.  The reader gets MESH_READER_CPU_S seconds of CPU
 * and (outside sanitizer builds) MESH_READER_MEMORY bytes of address space;
 * its answer is held to the limits and checked again here.  Blocks the
 * calling thread until the reader ends. */
#define MESH_READER_CPU_S 20
#define MESH_READER_MEMORY (1024ul << 20)
int mesh_load_isolated(const void *buf, size_t len, mesh_format f, const mesh_limits *lim, mesh_data *out, char *err,
                       size_t errlen);

#endif
