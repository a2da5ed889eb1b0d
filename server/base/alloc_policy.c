/* alloc_policy.c - the process's allocator policy (alloc_policy.h).
 *
 * glibc maps a block of 128 KiB or more from the system, but raises that
 * threshold, up to 32 MiB, each time it frees a mapped block: after the
 * first world is freed, the next worlds, command queues and reply rings
 * come from the per-thread arenas instead, where calloc must clear them
 * (every page resident at once) and a free keeps the pages.  Setting the
 * threshold fixes it.  Measured (tests/bench/rooms_memory.mjs, 94 rooms
 * made and evicted, each of 1,000 particles): 3.3 MB resident for each
 * evicted room as glibc chose, 0.8 MB with malloc_trim after evictions
 * alone, 0.15 MB with the fixed threshold and malloc_trim. */
#include "alloc_policy.h"

#include <stdlib.h>

#ifdef __GLIBC__
#include <malloc.h>
#endif

void alloc_policy_init(void) {
#ifdef __GLIBC__
    mallopt(M_MMAP_THRESHOLD, ALLOC_MAP_MIN);
#endif
}

void alloc_policy_give_back(void) {
#ifdef __GLIBC__
    malloc_trim(0);
#endif
}
