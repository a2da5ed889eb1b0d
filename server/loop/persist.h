/* persist.h - saving and restoring the world: the snapshot document (the
 * world as bytes and back) and the save file in --data-dir.  It knows
 * nothing of the sim thread: after a restore the caller forgets what the old
 * world held and tells the clients.  Threads: the world's owner (the sim
 * thread; the main thread before the sim thread starts). */
#ifndef SRV_PERSIST_H
#define SRV_PERSIST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fluid_sim.h"
#include "msgbuf.h"

/* The world as a snapshot document (GET /api/snapshot, the save file), or
 * NULL when out of memory. */
msg_buf *persist_encode(fs_world *w);
/* Restores the document at p into w, all or nothing.  0, or -1 with a reason
 * in err (the world is then left as it was). */
int persist_restore(fs_world *w, const uint8_t *p, size_t n, char *err, size_t errlen);

/* What one save wrote, for the statistics. */
typedef struct persist_saved {
    size_t bytes;
    double ms;
} persist_saved;

/* Writes w to dir/world.snapshot atomically: to world.snapshot.tmp, fsync'd,
 * renamed over the save and the directory fsync'd, so a crash at any point
 * leaves either the previous save or the new one.  true when saved (out
 * filled); false, logged, when not. */
bool persist_save(const char *dir, fs_world *w, persist_saved *out);

/* The save file read at start, held until it is restored or set aside. */
typedef struct persist_file {
    uint8_t *data;
    size_t len;
    const char *why; /* why it cannot be used (static text), or NULL */
} persist_file;

/* Reads dir/world.snapshot (if any) into f and sizes def to it: a world
 * restores only into one of the capacity it was saved from. */
void persist_open(const char *dir, persist_file *f, fs_world_def *def);

typedef enum persist_status {
    PERSIST_REJECTED = -1, /* logged; the file was renamed world.snapshot.rejected-<UTC time> */
    PERSIST_NONE = 0,      /* nothing was saved */
    PERSIST_RESTORED = 1,
} persist_status;

/* Restores the file persist_open read into w and frees its bytes. */
persist_status persist_load(const char *dir, persist_file *f, fs_world *w);
/* Frees what persist_open read (when it was never loaded). */
void persist_close(persist_file *f);

#endif
