/* queue.h - the one bounded queue that carries commands from the network
 * thread (and internal events) to the sim thread. */
#ifndef SRV_QUEUE_H
#define SRV_QUEUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "command.h"

/* Threads: any thread pushes, the sim thread pops; all fields under mtx.
 * Bounded: pushes beyond capacity are refused (the caller replies "busy").
 * `reserve` slots at the end are kept for internal commands (client left),
 * so a flood of client commands can never lose them. */
typedef struct cmd_queue {
    pthread_mutex_t mtx;
    cmd *ring;
    int cap, reserve, head, count;
    uint64_t refused;
} cmd_queue;

int cmd_queue_init(cmd_queue *q, int cap, int reserve);
void cmd_queue_destroy(cmd_queue *q);
/* Returns false when full (internal=true may use the reserved slots). */
bool cmd_queue_push(cmd_queue *q, const cmd *c, bool internal);
/* Pops up to max commands into out; returns how many. */
int cmd_queue_pop(cmd_queue *q, cmd *out, int max);
/* The same, but stops after the first command for which last() is true (it
 * is popped; those behind it stay queued). */
int cmd_queue_pop_through(cmd_queue *q, cmd *out, int max, bool (*last)(const cmd *c));
/* How many commands wait. */
int cmd_queue_count(cmd_queue *q);

#endif
