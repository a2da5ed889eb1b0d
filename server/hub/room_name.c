/* room_name.c - the room-name rule (see room_name.h): length, then each byte,
 * the error quoting the first offending byte (escaped when not printable). */
#include "room_name.h"

#include <stdio.h>

static bool name_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

bool room_name_ok(const char *bytes, size_t len, char *err, size_t errlen) {
    if (len == 0 || len > ROOM_NAME_MAX) {
        if (err && errlen) snprintf(err, errlen, "%s (this one has %zu)", ROOM_NAME_RULE, len);
        return false;
    }
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)bytes[i];
        if (name_byte(c)) continue;
        if (err && errlen) {
            if (c > 0x20 && c < 0x7f && c != '\'')
                snprintf(err, errlen, "%s (character %zu is '%c')", ROOM_NAME_RULE, i + 1, c);
            else
                snprintf(err, errlen, "%s (character %zu is byte 0x%02x)", ROOM_NAME_RULE, i + 1, c);
        }
        return false;
    }
    return true;
}
