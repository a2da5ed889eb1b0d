/* rest_export.h - GET /api/particles?format=ply|vtp|vtu|csv: the whole
 * world's particles as a file, written from the sim thread's snapshot a
 * bounded slice at a time as the connection takes it (wire/export.c),
 * never built whole and never counted first: rest.c sends the slices with
 * chunked transfer encoding.  A job per request.  Network thread only. */
#ifndef SRV_REST_EXPORT_H
#define SRV_REST_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "export.h"
#include "fluid_sim.h"
#include "snapshots.h"
#include "world_info.h"

/* One export in flight: owns its snapshot.  A value inside the request. */
typedef struct export_job {
    particles_snap *snap; /* NULL: no export */
    export_gen gen;
    bool done; /* the generator wrote its last byte */
    const char *names[FS_MAX_MATERIALS];
    char name_buf[FS_MAX_MATERIALS][CMD_NAME_LEN];
    char disposition[96]; /* the Content-Disposition value */
    const char *ctype;
} export_job;

/* Takes the snapshot; returns the memory it holds (bytes), which the
 * server counts among the answers held for slow readers. */
size_t rest_export_start(export_job *j, particles_snap *snap, int format, const world_info *wi);
/* The next bytes of the body (at most cap); sets j->done once the document
 * ended (a slice shorter than cap). */
size_t rest_export_chunk(export_job *j, uint8_t *out, size_t cap);
/* Frees the snapshot (the request ends). */
void rest_export_free(export_job *j);

#endif
