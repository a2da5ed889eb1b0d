#include "testlib.h"

#include <stdarg.h>
#include <string.h>

static int g_fail_here;

void tl_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...) {
    if (ok) return;
    g_fail_here++;
    printf("    FAIL %s:%d: %s: ", file, line, expr);
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

/* argv[1], when given, runs only the tests whose name contains it. */
int tl_run(const tl_test *tests, int count, int argc, char **argv) {
    int passed = 0, failed = 0;
    for (int i = 0; i < count; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        printf("--- %s\n", tests[i].name);
        fflush(stdout);
        g_fail_here = 0;
        tests[i].fn();
        if (g_fail_here) {
            failed++;
            printf("not ok %s\n", tests[i].name);
        } else {
            passed++;
            printf("ok %s\n", tests[i].name);
        }
        fflush(stdout);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
