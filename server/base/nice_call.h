/* nice_call.h - runs a function on a short-lived thread of a given nice
 * value.  On Linux a nice value is a thread's own and a new thread inherits
 * its creator's: the threads a library starts inside the call (the NATS
 * client's reader, flusher and delivery threads) run at that value for good,
 * while the caller keeps its own. */
#ifndef SRV_NICE_CALL_H
#define SRV_NICE_CALL_H

/* fn(arg) on a thread of nice value `nice` (0: on the caller's thread, as it
 * is); returns when fn has.  A thread that cannot be made or lowered runs
 * fn all the same (on the caller's thread, or at its own value). */
void nice_call(int nice, void (*fn)(void *), void *arg);

#endif
