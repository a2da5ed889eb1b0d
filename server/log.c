/* log.c - see log.h.  Threads: any; the key table is under a mutex. */
#include "log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LOG_KEYS 256

/* Threads: any, under mtx. */
static struct {
    pthread_mutex_t mtx;
    bool quiet;
    char *keys[LOG_KEYS];
    int nkeys;
    unsigned long suppressed;
} lg = {PTHREAD_MUTEX_INITIALIZER, false, {0}, 0, 0};

void log_set_quiet(bool quiet)
{
    lg.quiet = quiet;
}

static void vlog(const char *level, const char *fmt, va_list ap)
{
    char line[512];
    vsnprintf(line, sizeof line, fmt, ap);
    fprintf(stderr, "fluid-server: %s%s\n", level, line);
}

void log_info(const char *fmt, ...)
{
    if (lg.quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void log_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vlog("error: ", fmt, ap);
    va_end(ap);
}

void log_once(const char *key, const char *fmt, ...)
{
    pthread_mutex_lock(&lg.mtx);
    bool seen = false;
    for (int i = 0; i < lg.nkeys && !seen; i++)
        seen = !strcmp(lg.keys[i], key);
    if (!seen && lg.nkeys < LOG_KEYS)
        lg.keys[lg.nkeys++] = strdup(key);
    else if (!seen)
        seen = true;
    if (seen)
        lg.suppressed++;
    pthread_mutex_unlock(&lg.mtx);
    if (seen)
        return;
    va_list ap;
    va_start(ap, fmt);
    vlog("", fmt, ap);
    va_end(ap);
}

void log_shutdown(void)
{
    pthread_mutex_lock(&lg.mtx);
    if (lg.suppressed && !lg.quiet)
        fprintf(stderr, "fluid-server: %lu repeated log lines were suppressed\n", lg.suppressed);
    for (int i = 0; i < lg.nkeys; i++)
        free(lg.keys[i]);
    lg.nkeys = 0;
    pthread_mutex_unlock(&lg.mtx);
}
