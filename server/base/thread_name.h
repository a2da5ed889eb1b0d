/* thread_name.h - names the calling thread for the operator's tools
 * (top -H, ps -L, perf, /proc/<pid>/task/<tid>/comm): "sim:<room>",
 * "enc:<room>", "bus", "keeper".  The network thread keeps the process's
 * name, and the worker pool's threads (the core's) keep it too. */
#ifndef SRV_THREAD_NAME_H
#define SRV_THREAD_NAME_H

/* kind and an optional room name (NULL: none), cut to the 15 bytes Linux
 * keeps; elsewhere nothing. */
void thread_name_set(const char *kind, const char *room);

#endif
