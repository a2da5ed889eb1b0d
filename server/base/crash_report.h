/* crash_report.h - a fatal signal (SIGSEGV, SIGBUS, SIGFPE, SIGILL,
 * SIGABRT) writes its name, the crashing thread's name and the stack's
 * return addresses to stderr before the process dies of it as it would
 * have, so that a crash in a test run or in production leaves its place
 * in the log (addr2line -e fluid-server turns the addresses into lines).
 * Under a sanitizer, its own handler reports instead. */
#ifndef SRV_CRASH_REPORT_H
#define SRV_CRASH_REPORT_H

/* Installs the handler; before any thread starts. */
void crash_report_init(void);

#endif
