/* queue.c - the bounded, mutex-guarded command queue to the sim thread. */
#include "queue.h"

#include <stdlib.h>
#include <string.h>

int cmd_queue_init(cmd_queue *q, int cap, int reserve) {
    memset(q, 0, sizeof *q);
    if (cap < 1 || reserve < 0 || reserve >= cap) return -1;
    q->ring = calloc((size_t)cap, sizeof *q->ring);
    if (!q->ring) return -1;
    q->cap = cap;
    q->reserve = reserve;
    pthread_mutex_init(&q->mtx, NULL);
    return 0;
}

void cmd_queue_destroy(cmd_queue *q) {
    if (!q->ring) return;
    pthread_mutex_destroy(&q->mtx);
    free(q->ring);
    memset(q, 0, sizeof *q);
}

bool cmd_queue_push(cmd_queue *q, const cmd *c, bool internal) {
    pthread_mutex_lock(&q->mtx);
    int limit = internal ? q->cap : q->cap - q->reserve;
    bool ok = q->count < limit;
    if (ok) {
        q->ring[(q->head + q->count) % q->cap] = *c;
        q->count++;
    } else {
        q->refused++;
    }
    pthread_mutex_unlock(&q->mtx);
    return ok;
}

int cmd_queue_pop_through(cmd_queue *q, cmd *out, int max, bool (*last)(const cmd *c)) {
    pthread_mutex_lock(&q->mtx);
    int n = 0;
    while (n < max && q->count > 0) {
        out[n++] = q->ring[q->head];
        q->head = (q->head + 1) % q->cap;
        q->count--;
        if (last && last(&out[n - 1])) break;
    }
    pthread_mutex_unlock(&q->mtx);
    return n;
}

int cmd_queue_pop(cmd_queue *q, cmd *out, int max) {
    return cmd_queue_pop_through(q, out, max, NULL);
}

int cmd_queue_count(cmd_queue *q) {
    pthread_mutex_lock(&q->mtx);
    int n = q->count;
    pthread_mutex_unlock(&q->mtx);
    return n;
}
