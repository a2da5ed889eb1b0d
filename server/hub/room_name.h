/* room_name.h - the rule for a room's name: 1 to 31 of [a-z0-9-], checked on
 * the bytes (the REST edge's paths, the page's /r/{name}/, the invite
 * tokens' `room` claim all check it here).
 *
 * Pure; any thread.
 */
#ifndef SRV_ROOM_NAME_H
#define SRV_ROOM_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define ROOM_NAME_MAX 31
#define ROOM_NAME_CAP (ROOM_NAME_MAX + 1) /* a name with its terminator */
#define ROOM_NAME_RULE "a room name is 1 to 31 characters of a-z, 0-9 and '-'"
/* The room the plain routes (/api/..., /) address, and the only one that
 * may have files (saves, recordings). */
#define ROOM_DEFAULT "default"

/* Whether the len bytes at bytes are a room name (a NUL inside is refused).
 * When not, and err is not NULL, err (errlen bytes) says which rule and
 * where: "a room name is 1 to 31 characters of a-z, 0-9 and '-' (character 3
 * is 'X')". */
bool room_name_ok(const char *bytes, size_t len, char *err, size_t errlen);

#endif
