/* rest_recordings.h - the recordings over REST: the list (GET
 * /api/recordings: the recording running, and each recording's index) and
 * a recording's files (GET /api/recordings/NAME/FILE).  Network thread. */
#ifndef SRV_REST_RECORDINGS_H
#define SRV_REST_RECORDINGS_H

#include <cJSON.h>
#include <stddef.h>

#include "net_internal.h"

cJSON *rest_recordings_json(net *n);
/* Reads file (checked by rest_route.c: NAME/index.json or NAME/seg-N.fsrec)
 * from the recordings folder: the bytes (malloc'd, *len), or NULL with an
 * HTTP status and a reason. */
char *rest_recfile_read(const net *n, const char *file, size_t *len, const char **ctype, int *status, char *err,
                        size_t errlen);

#endif
