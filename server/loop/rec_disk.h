/* rec_disk.h - the recordings folder's disk: what its recordings keep, the
 * free space of its file system, and the total budget of the recordings
 * (--record-total-mb, or by default a share of the free space at start).
 * Plain file-system reads, no state; the encoder thread's (recorder.c). */
#ifndef SRV_REC_DISK_H
#define SRV_REC_DISK_H

#include <stdbool.h>
#include <stdint.h>

/* The default budget: what the recordings keep at start plus half the free
 * space then, the free share at most REC_AUTO_BUDGET_MAX bytes. */
#define REC_AUTO_BUDGET_MAX ((uint64_t)100000 * 1000 * 1000)
/* The least free space the recordings leave on their disk, whatever the
 * size of the world's save (the save needs twice its size while it is
 * written beside the one before). */
#define REC_RESERVE_MIN ((uint64_t)1 << 20)

/* The bytes of the regular files in each folder of dir (one level, no
 * symbolic link followed: a linked folder or file counts nothing), except
 * the folder named `except` (NULL: none); *folders counts the folders. */
uint64_t rec_disk_kept(const char *dir, const char *except, int *folders);
/* The bytes free to an unprivileged writer on the file system of path, or
 * of its nearest existing parent when it does not exist yet; false when
 * it cannot be read. */
bool rec_disk_free(const char *path, uint64_t *out);
/* The total budget: total_mb MB when > 0, else the default above. */
uint64_t rec_disk_budget(double total_mb, uint64_t kept, uint64_t free_bytes);

#endif
