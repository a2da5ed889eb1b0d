/* export.h - the whole world's particles as files other tools read
 * (GET /api/particles?format=...): binary little-endian PLY, VTK XML
 * PolyData (.vtp) and UnstructuredGrid (.vtu) for ParaView, and CSV.  A
 * generator writes a document chunk by chunk into the caller's buffer, so
 * a server streams it a bounded slice at a time without building it whole
 * (its length is not known before the last byte: the server sends it
 * chunked).  Pure functions on a caller-owned snapshot. */
#ifndef SRV_EXPORT_H
#define SRV_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snapshots.h"

typedef enum export_format {
    EXPORT_JSON = 0,
    EXPORT_PLY,
    EXPORT_VTP,
    EXPORT_VTU,
    EXPORT_CSV,
    EXPORT_COUNT
} export_format;

/* "ply", ... (EXPORT_JSON: "json"). */
const char *export_name(export_format f);
const char *export_content_type(export_format f);
/* The format a `format=` value names; -1 when none. */
int export_find(const char *name);
/* The format an Accept header asks for: JSON for an empty header, any type,
 * application/json; else the first listed type this server writes; -1
 * when it names none of them. */
int export_from_accept(const char *accept);
/* "json, ply, vtp, vtu, csv" (the 406 answer's list). */
const char *export_list(void);

/* A document being written.  A value; the snapshot must outlive it. */
typedef struct export_gen {
    export_format fmt;
    const particles_snap *s;
    const char *const *material; /* names, for the CSV's material_name column (may be NULL) */
    int materials;
    int section, k;     /* where it stands */
    char pending[1024]; /* one item: a header or one particle's line */
    size_t pend_len, pend_off;
} export_gen;

void export_begin(export_gen *g, export_format f, const particles_snap *s, const char *const *material, int materials);
/* Writes the next bytes (at most cap) into out; fewer than cap (0 included)
 * only at the end of the document. */
size_t export_next(export_gen *g, uint8_t *out, size_t cap);

#endif
