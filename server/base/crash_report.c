/* crash_report.c - the stack of a fatal signal, to stderr (see crash_report.h). */
#define _GNU_SOURCE
#include "crash_report.h"

#include <execinfo.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

static void put(const char *s) {
    ssize_t r = write(STDERR_FILENO, s, strlen(s));
    (void)r;
}

/* Async-signal-safe (write, prctl, backtrace_symbols_fd) but for
 * backtrace's first call, which may load libgcc: crash_report_init makes
 * that call beforehand. */
static void on_fatal(int sig) {
    char name[17] = {0};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    put("fatal: ");
    put(sig == SIGSEGV  ? "SIGSEGV"
        : sig == SIGBUS ? "SIGBUS"
        : sig == SIGFPE ? "SIGFPE"
        : sig == SIGILL ? "SIGILL"
                        : "SIGABRT");
    put(" in thread ");
    put(name);
    put("; the stack (addr2line -f -e fluid-server OFFSET, the +0x... after its name):\n");
    void *frames[64];
    int n = backtrace(frames, 64);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
    signal(sig, SIG_DFL); /* SA_RESETHAND did so already; the signal is raised again on return */
    raise(sig);
}

void crash_report_init(void) {
    void *warm[1];
    (void)backtrace(warm, 1);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_fatal;
    sa.sa_flags = (int)SA_RESETHAND;
    sigemptyset(&sa.sa_mask);
    static const int fatal[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) sigaction(fatal[i], &sa, NULL);
}
