/* room_doc.h - a room's settings as they are kept beside its saved world
 * (<data-dir>/rooms/<name>/room.json): its public role and the generation of
 * its invites' key.  Read back at start, so a bad file is refused with a
 * reason and the room is left out, never guessed at.
 *
 * Pure; any thread. */
#ifndef SRV_ROOM_DOC_H
#define SRV_ROOM_DOC_H

#include <stddef.h>

#include "roles.h"

#define ROOM_DOC_MAX 1024 /* bytes: a longer file is refused unread */

typedef struct room_doc {
    role public_role; /* viewer to owner */
    unsigned key_gen; /* the invites' key generation (invite.h) */
} room_doc;

/* The document's text into out (cap bytes, terminated): its length, or -1
 * when it does not fit. */
int room_doc_write(const room_doc *d, char *out, size_t cap);
/* Reads len bytes: 0 and *d, or -1 with err (errlen bytes) saying why
 * (not JSON, a field missing, of the wrong type or out of range, another
 * field). */
int room_doc_read(const char *text, size_t len, room_doc *d, char *err, size_t errlen);

#endif
