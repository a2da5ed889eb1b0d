/* rest_recordings.h - the recordings over REST: the listing (GET
 * /api/recordings?offset=&limit=: the recording running, the disk's budget,
 * and a page of the recordings sorted by name, each a summary of its
 * index.json) and a recording's files (GET /api/recordings/NAME/FILE).
 * Network thread. */
#ifndef SRV_REST_RECORDINGS_H
#define SRV_REST_RECORDINGS_H

#include <cJSON.h>
#include <stddef.h>

#include "net_internal.h"
#include "net_room.h"
#include "reply_code.h"

/* The room's listing page as JSON text (malloc'd, *len bytes), or NULL when out
 * of memory.  offset and limit are checked by rest_route.c. */
char *rest_recordings_text(net *n, net_room *v, int offset, int limit, size_t *len);
/* Reads file (checked by rest_route.c: NAME/index.json or NAME/seg-N.fsrec)
 * from the recordings folder, following no symbolic link and only inside
 * the folder: the bytes (malloc'd, *len), or NULL with a reply code and a
 * reason. */
char *rest_recfile_read(const net *n, const char *file, size_t *len, const char **ctype, reply_code *code, char *err,
                        size_t errlen);

#endif
