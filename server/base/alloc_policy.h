/* alloc_policy.h - the process's allocator policy: large blocks are mapped
 * from the system and go back to it when freed, so a world freed (an
 * evicted room, a deleted one) leaves no resident memory behind. */
#ifndef SRV_ALLOC_POLICY_H
#define SRV_ALLOC_POLICY_H

/* At start, before any thread: blocks of ALLOC_MAP_MIN bytes and more are
 * mapped from the system, always (glibc; elsewhere the allocator decides). */
#define ALLOC_MAP_MIN (128 * 1024)
void alloc_policy_init(void);
/* After a large free (a world let go of): the free pages of every arena go
 * back to the system (glibc's malloc_trim; elsewhere nothing). */
void alloc_policy_give_back(void);

#endif
