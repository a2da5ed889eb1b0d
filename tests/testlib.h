/* testlib.h - a minimal test runner: named tests, CHECK macros that record
 * failures with file:line and a message, and a closing line
 * "N passed, N failed, N skipped" that CI reads (skipped: the tests the
 * command line left out with -NAME); a run whose filter selects no test
 * fails. */
#ifndef TESTLIB_H
#define TESTLIB_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* 1 in a build under AddressSanitizer (about 10x slower: tests that step
 * long worlds run shorter versions there), else 0. */
#if defined(__SANITIZE_ADDRESS__)
#define TL_SAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TL_SAN 1
#endif
#endif
#ifndef TL_SAN
#define TL_SAN 0
#endif

typedef void tl_fn(void);
typedef struct tl_test {
    const char *name;
    tl_fn *fn;
} tl_test;

void tl_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
int tl_run(const tl_test *tests, int count, int argc, char **argv);

/* CHECK(cond, "printf-style context", ...) */
#define CHECK(cond, ...) tl_check((cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
/* Prints a measured figure, indented under the running test. */
#define REPORT(...) (printf("    "), printf(__VA_ARGS__), printf("\n"))

/* A reproducible uniform number in [0, 1) (64-bit LCG, the top 24 bits). */
static inline float tl_rand01(uint64_t *state) {
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return (float)(*state >> 40) / 16777216.0f;
}

#endif
