/* log.h - logging for fluid-server; log_once prints a given key only once
 * (bad input is logged once, never flooding the log).  Thread-safe. */
#ifndef SRV_LOG_H
#define SRV_LOG_H

#include <stdbool.h>

void log_set_quiet(bool quiet);
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Logs the message the first time `key` is seen (up to 256 distinct keys;
 * later keys are counted in a summary line). */
void log_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void log_shutdown(void);

#endif
