/* thread_name.c - names the calling thread (thread_name.h). */
#include "thread_name.h"

#include <stdio.h>

#ifdef __linux__
#include <sys/prctl.h>
#endif

void thread_name_set(const char *kind, const char *room) {
    char name[16]; /* TASK_COMM_LEN */
    if (room && room[0])
        snprintf(name, sizeof name, "%s:%s", kind, room);
    else
        snprintf(name, sizeof name, "%s", kind);
#ifdef __linux__
    prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
#else
    (void)name;
#endif
}
