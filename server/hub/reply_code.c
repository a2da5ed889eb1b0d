/* reply_code.c - the table of reply codes: name, HTTP status, Retry-After
 * (see reply_code.h). */
#include "reply_code.h"

#include <string.h>

static const reply_code_info table[RC_COUNT] = {
    [RC_OK] = {"ok", 200, false},
    [RC_BAD_REQUEST] = {"bad_request", 400, false},
    [RC_UNAUTHORIZED] = {"unauthorized", 401, false},
    [RC_FORBIDDEN] = {"forbidden", 403, false},
    [RC_NOT_FOUND] = {"not_found", 404, false},
    [RC_METHOD_NOT_ALLOWED] = {"method_not_allowed", 405, false},
    [RC_NOT_ACCEPTABLE] = {"not_acceptable", 406, false},
    [RC_CONFLICT] = {"conflict", 409, false},
    [RC_LENGTH_REQUIRED] = {"length_required", 411, false},
    [RC_TOO_LARGE] = {"too_large", 413, false},
    [RC_RATE_LIMITED] = {"rate_limited", 429, true},
    [RC_INTERNAL] = {"internal", 500, false},
    [RC_NOT_IMPLEMENTED] = {"not_implemented", 501, false},
    [RC_BUSY] = {"busy", 503, true},
    [RC_NO_SPACE] = {"no_space", 507, false},
    [RC_TIMEOUT] = {"timeout", 504, false},
    [RC_MISDIRECTED] = {"misdirected", 421, false},
};

const reply_code_info *reply_code_get(reply_code c) {
    return (unsigned)c < RC_COUNT ? &table[c] : &table[RC_INTERNAL];
}

const char *reply_code_name(reply_code c) {
    return reply_code_get(c)->name;
}

int reply_code_http(reply_code c) {
    return reply_code_get(c)->http;
}

int reply_code_find(const char *name) {
    for (int i = 0; name && i < RC_COUNT; i++)
        if (!strcmp(table[i].name, name)) return i;
    return -1;
}

reply_code reply_code_of_status(fs_status st) {
    switch (st) {
    case FS_OK:
        return RC_OK;
    case FS_ERR_ARG:
    case FS_ERR_RANGE:
        return RC_BAD_REQUEST;
    case FS_ERR_UNKNOWN:
        return RC_NOT_FOUND;
    case FS_ERR_FULL:
        return RC_CONFLICT;
    case FS_ERR_NOMEM:
        return RC_INTERNAL;
    }
    return RC_INTERNAL;
}
