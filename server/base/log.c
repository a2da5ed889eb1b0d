/* log.c - see log.h.  Threads: any; the key table is under a mutex, the
 * level and the counters are atomics. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LOG_KEYS 256

static const char *const level_names[] = {"error", "warn", "info", "debug"};

/* Threads: any; keys under mtx. */
static struct {
    pthread_mutex_t mtx;
    atomic_int level;
    atomic_ulong count[4];
    char *keys[LOG_KEYS];
    int nkeys;
    unsigned long suppressed;
} lg = {.mtx = PTHREAD_MUTEX_INITIALIZER, .level = LOG_INFO};

void log_set_level(log_level level) {
    atomic_store(&lg.level, (int)level);
}

log_level log_get_level(void) {
    return (log_level)atomic_load(&lg.level);
}

int log_level_parse(const char *name) {
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, level_names[i])) return i;
    return -1;
}

unsigned long log_count(log_level level) {
    return (unsigned)level < 4 ? atomic_load(&lg.count[level]) : 0;
}

static void vlog(log_level level, const char *fmt, va_list ap) {
    atomic_fetch_add(&lg.count[level], 1);
    if ((int)level > atomic_load(&lg.level)) return;
    char line[512], stamp[40];
    vsnprintf(line, sizeof line, fmt, ap);
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    size_t k = strftime(stamp, sizeof stamp, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(stamp + k, sizeof stamp - k, ".%03ldZ", ts.tv_nsec / 1000000);
    /* one fprintf per line: stdio locks the stream, so lines never interleave */
    fprintf(stderr, "%s %-5s fluid-server: %s\n", stamp, level_names[level], line);
}

void log_msg(log_level level, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vlog(level, fmt, ap);
    va_end(ap);
}

void log_once(const char *key, const char *fmt, ...) {
    pthread_mutex_lock(&lg.mtx);
    bool seen = false;
    for (int i = 0; i < lg.nkeys && !seen; i++) seen = !strcmp(lg.keys[i], key);
    if (!seen && lg.nkeys < LOG_KEYS)
        lg.keys[lg.nkeys++] = strdup(key);
    else if (!seen)
        seen = true;
    if (seen) lg.suppressed++;
    pthread_mutex_unlock(&lg.mtx);
    if (seen) return;
    va_list ap;
    va_start(ap, fmt);
    vlog(LOG_WARN, fmt, ap);
    va_end(ap);
}

void log_shutdown(void) {
    pthread_mutex_lock(&lg.mtx);
    unsigned long sup = lg.suppressed;
    for (int i = 0; i < lg.nkeys; i++) free(lg.keys[i]);
    lg.nkeys = 0;
    pthread_mutex_unlock(&lg.mtx);
    if (sup) log_info("%lu repeated log lines were suppressed", sup);
}
