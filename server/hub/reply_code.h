/* reply_code.h - why a command or a request was refused: one code per kind
 * of refusal, set where the refusal is decided and carried with its reason
 * by every reply (cmd_reply, the WebSocket reply, the bus, a REST error
 * body).  The table behind it names each code and gives its HTTP status: the
 * REST edge chooses every error status there, never from a reason's text
 * (PROTOCOL.md, "Reply codes").  Constant data: any thread. */
#ifndef SRV_REPLY_CODE_H
#define SRV_REPLY_CODE_H

#include <stdbool.h>

#include "fluid_sim.h"

typedef enum reply_code {
    RC_OK = 0,
    RC_BAD_REQUEST,        /* 400: the message or its values are wrong */
    RC_UNAUTHORIZED,       /* 401: no token, or the wrong one */
    RC_FORBIDDEN,          /* 403: from another site's page */
    RC_NOT_FOUND,          /* 404: no such endpoint, scene, material, body, recording file */
    RC_METHOD_NOT_ALLOWED, /* 405: the path takes other methods */
    RC_NOT_ACCEPTABLE,     /* 406: the Accept header excludes the answer */
    RC_CONFLICT,           /* 409: the world's state refuses it now (running, held, exists) */
    RC_LENGTH_REQUIRED,    /* 411: a chunked body */
    RC_TOO_LARGE,          /* 413: a body or message past its limit */
    RC_RATE_LIMITED,       /* 429: the sender's own rate or share; Retry-After */
    RC_INTERNAL,           /* 500: the server failed (out of memory, a file it cannot write) */
    RC_NOT_IMPLEMENTED,    /* 501: not on this server (a relay has no world's data) */
    RC_BUSY,               /* 503: the server's shared bounds are full; Retry-After */
    RC_NO_SPACE,           /* 507: no room for recordings */
    RC_TIMEOUT,            /* 504: the world (or a reader thread) did not answer in time; it may still apply it */
    RC_MISDIRECTED,        /* 421: a fleet's room whose answer the bus does not carry: ask its holder */
    RC_COUNT
} reply_code;

/* One code: its name on the wire ("not_found"), its HTTP status, and
 * whether a REST answer says when to try again (Retry-After). */
typedef struct reply_code_info {
    const char *name;
    int http;
    bool retry;
} reply_code_info;

/* The code's row; a value outside the enum reads as RC_INTERNAL's. */
const reply_code_info *reply_code_get(reply_code c);
const char *reply_code_name(reply_code c);
int reply_code_http(reply_code c);
/* The code named name, or -1. */
int reply_code_find(const char *name);
/* The code of a core refusal: a malformed or out-of-range value is a bad
 * request, an unknown name not found, a full world a conflict, no memory
 * internal. */
reply_code reply_code_of_status(fs_status st);

#endif
