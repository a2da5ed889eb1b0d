/* log.h - logging for fluid-server.  Every line is
 *   2026-11-22T11:40:02.123Z info  fluid-server: <message>
 * on stderr (UTC timestamp, level).  Lines below the level set by
 * --log-level are dropped.  log_once prints a given key only once (bad
 * input is logged once, never flooding the log).  Thread-safe. */
#ifndef SRV_LOG_H
#define SRV_LOG_H

#include <stdbool.h>

typedef enum log_level { LOG_ERROR = 0, LOG_WARN, LOG_INFO, LOG_DEBUG } log_level;

void log_set_level(log_level level);
log_level log_get_level(void);
/* "error", "warn", "info", "debug" -> level; -1 when unknown. */
int log_level_parse(const char *name);
void log_msg(log_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
/* Logs at warn level the first time `key` is seen (up to 256 distinct keys;
 * later keys are counted in a summary line). */
void log_once(const char *key, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Lines logged at each level so far (for /metrics). */
unsigned long log_count(log_level level);
void log_shutdown(void);

#endif
