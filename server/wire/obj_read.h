/* obj_read.h - a strict reader of the Wavefront OBJ geometry subset: the
 * vertex positions (`v`) and the faces (`f`) of an uploaded text file, each
 * face cut into a fan of triangles, every other statement ignored; a line it
 * cannot read is refused with its number (obj_read.c has the rules).
 * Untrusted input; it allocates nothing and recurses nowhere. */
#ifndef OBJ_READ_H
#define OBJ_READ_H

#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"

#define OBJ_LINE_MAX 4096 /* bytes in a line, its CR counted, its LF not */

/* One pass's room and counts.  With vertices and triangles NULL the pass
 * only checks and counts; with room for what a counting pass found it also
 * writes the positions (every `v`, in order) and the triangles (three
 * 0-based indices into the positions each). */
typedef struct obj_out {
    fs_vec3 *vertices;
    uint32_t *triangles;
    long vertex_room, triangle_room;   /* what vertices and triangles hold */
    long vertex_count, triangle_count; /* what the file holds */
} obj_out;

/* Reads buf[0..len): 0, or -1 with a sentence in err ("mesh: model/obj
 * line N: ...").  The counts are held to no bound here: the caller holds
 * them to its limits before it makes room for a second pass. */
int obj_read(const void *buf, size_t len, obj_out *o, char *err, size_t errlen);

#endif
