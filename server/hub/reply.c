/* reply.c - freeing what a command reply carries. */
#include "reply.h"

#include <stdlib.h>

void cmd_reply_free_payload(cmd_reply *r) {
    particles_snap_free(r->snap);
    free(r->bodies);
    msg_buf_unref(r->blob);
    r->snap = NULL;
    r->bodies = NULL;
    r->blob = NULL;
}
