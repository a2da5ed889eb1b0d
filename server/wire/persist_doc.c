/* persist_doc.c - snapshot document bytes -> world (see persist_doc.h). */
#include <stdio.h>

#include "persist_doc.h"
#include "wire.h"

int persist_doc_peek(const uint8_t *p, size_t n, fs_snapshot_info *info, char *err, size_t errlen) {
    const uint8_t *world;
    size_t len;
    if (wire_decode_snapshot(p, n, &world, &len, err, errlen)) return -1;
    if (!fs_snapshot_peek(world, len, info)) {
        snprintf(err, errlen, "snapshot: not a world snapshot of this version");
        return -1;
    }
    if (info->capacity < 1 || info->capacity > PERSIST_MAX_CAPACITY) {
        snprintf(err, errlen, "snapshot: made for a capacity of %d particles, outside 1..%d", info->capacity,
                 PERSIST_MAX_CAPACITY);
        return -1;
    }
    return 0;
}

int persist_doc_restore(fs_world *w, const uint8_t *p, size_t n, char *err, size_t errlen) {
    const uint8_t *world;
    size_t len;
    if (wire_decode_snapshot(p, n, &world, &len, err, errlen)) return -1;
    fs_error e = {{0}};
    if (fs_world_restore(w, world, len, &e) != FS_OK) {
        snprintf(err, errlen, "%s", e.msg);
        return -1;
    }
    return 0;
}
