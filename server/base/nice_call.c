/* nice_call.c - a function run on a short-lived thread of a given nice value
 * (see nice_call.h). */
#include "nice_call.h"

#include <pthread.h>
#include <sys/resource.h>

#include "log.h"

typedef struct call {
    int nice;
    void (*fn)(void *);
    void *arg;
} call;

static void *run(void *p) {
    const call *c = p;
    if (setpriority(PRIO_PROCESS, 0, c->nice))
        log_info("cannot lower a thread's priority to nice %d (continuing)", c->nice);
    c->fn(c->arg);
    return NULL;
}

void nice_call(int nice, void (*fn)(void *), void *arg) {
    call c = {.nice = nice, .fn = fn, .arg = arg};
    pthread_t t;
    if (nice == 0 || pthread_create(&t, NULL, run, &c)) {
        fn(arg);
        return;
    }
    pthread_join(t, NULL);
}
