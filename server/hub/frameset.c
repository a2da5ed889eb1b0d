/* frameset.c - references to a frame's codings (see frameset.h). */
#include "frameset.h"

#include <string.h>

frameset frameset_ref(const frameset *f) {
    frameset c = *f;
    for (int i = 0; i < c.count; i++) msg_buf_ref(c.coding[i].msg);
    return c;
}

void frameset_unref(frameset *f) {
    for (int i = 0; i < f->count; i++) msg_buf_unref(f->coding[i].msg);
    memset(f, 0, sizeof *f);
}
