/* rest_export.h - GET /api/particles?format=ply|vtp|vtu|csv: the whole
 * world's particles as a file, written from the sim thread's snapshot chunk
 * by chunk as the connection takes it (wire/export.c), never built whole.
 * Network thread only. */
#ifndef SRV_REST_EXPORT_H
#define SRV_REST_EXPORT_H

#include <stddef.h>
#include <stdint.h>

#include "net_internal.h"
#include "rest.h"

/* Takes the snapshot: the answer's length, content type and file name are
 * set on r; its body is what rest_export_chunk writes. */
void rest_export_start(net *n, http_req *r, particles_snap *snap, int format, const world_info *wi);
/* The next bytes of the body (at most cap). */
size_t rest_export_chunk(http_req *r, uint8_t *out, size_t cap);
/* Frees the snapshot (the request ends). */
void rest_export_free(http_req *r);

#endif
