/* reply.c - a command reply's refusal and code, and freeing what it carries. */
#include "reply.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cmd_reply_refuse(cmd_reply *r, reply_code code, const char *fmt, ...) {
    r->ok = false;
    r->code = code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

reply_code cmd_reply_code(const cmd_reply *r) {
    if (r->ok) return RC_OK;
    return r->code > RC_OK && r->code < RC_COUNT ? r->code : RC_INTERNAL;
}

void cmd_reply_free_payload(cmd_reply *r) {
    particles_snap_free(r->snap);
    free(r->bodies);
    free(r->obstacles);
    msg_buf_unref(r->blob);
    r->snap = NULL;
    r->bodies = NULL;
    r->obstacles = NULL;
    r->blob = NULL;
}
