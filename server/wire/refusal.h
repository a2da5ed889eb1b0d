/* refusal.h - the decoders' way to refuse an input: the reason, formatted
 * into the caller's buffer (err may be NULL or errlen 0: none kept), and -1
 * to return.  Header-only, so that every build of a decoder (the server,
 * its unit tests, the fuzz harnesses) has it without another file. */
#ifndef SRV_REFUSAL_H
#define SRV_REFUSAL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

static inline int wire_refuse(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static inline int wire_refuse(char *err, size_t errlen, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    if (err && errlen) vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

#endif
