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

/* Arguments, when given, run only the tests whose name contains one of them;
 * an argument "-NAME" leaves out the test named NAME exactly (and the
 * skipped ones are counted and named in the summary). */
static int tl_selected(const char *name, int argc, char **argv) {
    int includes = 0;
    for (int a = 1; a < argc; a++) {
        if (argv[a][0] == '-') {
            if (!strcmp(name, argv[a] + 1)) return 0;
            continue;
        }
        includes++;
    }
    if (!includes) return 1;
    for (int a = 1; a < argc; a++)
        if (argv[a][0] != '-' && strstr(name, argv[a])) return 1;
    return 0;
}

int tl_run(const tl_test *tests, int count, int argc, char **argv) {
    int passed = 0, failed = 0, skipped = 0;
    for (int i = 0; i < count; i++) {
        if (!tl_selected(tests[i].name, argc, argv)) {
            int named = 0, included = 1;
            for (int a = 1; a < argc; a++) {
                if (argv[a][0] == '-' && !strcmp(tests[i].name, argv[a] + 1)) named = 1;
                if (argv[a][0] != '-') included = 0;
            }
            for (int a = 1; a < argc && !included; a++)
                if (argv[a][0] != '-' && strstr(tests[i].name, argv[a])) included = 1;
            if (named && included) {
                printf("skip %s: left out by the command line\n", tests[i].name);
                skipped++;
            }
            continue;
        }
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
    /* A run that selected nothing proved nothing: it fails, naming the filter. */
    if (passed + failed == 0) {
        printf("no test matched:");
        for (int a = 1; a < argc; a++) printf(" '%s'", argv[a]);
        printf(" (of %d tests)\n", count);
        failed = 1;
    }
    printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
    return failed ? 1 : 0;
}
