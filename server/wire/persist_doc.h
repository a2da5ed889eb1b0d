/* persist_doc.h - the snapshot document (GET/POST /api/snapshot, the save
 * file in --data-dir) into a world: the part of persist.c that needs no sim
 * thread, so tests and the fuzz harness (tests/fuzz/fuzz_snapshot.c) run the
 * same bytes -> world path the server does.  Threads: the caller's (the
 * world's owner). */
#ifndef SRV_PERSIST_DOC_H
#define SRV_PERSIST_DOC_H

#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"

/* The most particles a saved world may ask for (the --capacity limit). */
#define PERSIST_MAX_CAPACITY (1 << 20)

/* What a world must be created with to restore the document at p (its
 * capacity, spring slots, step).  0, or -1 with a reason: not a snapshot
 * document, or a capacity outside 1..PERSIST_MAX_CAPACITY. */
int persist_doc_peek(const uint8_t *p, size_t n, fs_snapshot_info *info, char *err, size_t errlen);
/* Restores the document into w (fs_world_restore: all or nothing).  0, or
 * -1 with a reason; the world is then left as it was. */
int persist_doc_restore(fs_world *w, const uint8_t *p, size_t n, char *err, size_t errlen);

#endif
