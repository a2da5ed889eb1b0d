/* job_thread.h - a thread that runs jobs one at a time, in the order asked,
 * and keeps their answers until the asker takes them back: a ring of asks
 * and a ring of answers, both bounded by the jobs asked and not yet taken
 * back (at most cap), one mutex and one condition variable.  Jobs and
 * answers are values of fixed sizes, copied in and out.  The fleet's maker
 * (rooms made) and saver (snapshots written) are two.
 *
 * Threads: its own runs run(); the rest from one owner thread (create and
 * destroy may be another, once the owner is done with it). */
#ifndef SRV_JOB_THREAD_H
#define SRV_JOB_THREAD_H

#include <stdbool.h>
#include <stddef.h>

typedef struct job_thread job_thread;

typedef struct job_thread_def {
    const char *name;   /* the thread's name (thread_name.h) */
    int nice;           /* its nice value (0: the creator's) */
    size_t job_size;    /* bytes of a job */
    size_t answer_size; /* bytes of an answer */
    int cap;            /* jobs asked and not yet taken back, at most */
    void *ctx;          /* passed to the functions below */
    /* Runs one job into its answer (zeroed before), on the thread. */
    void (*run)(void *ctx, const void *job, void *answer);
    /* At destroy: a job never run, and an answer never taken (NULL: nothing to drop). */
    void (*drop_job)(void *ctx, void *job);
    void (*drop_answer)(void *ctx, void *answer);
} job_thread_def;

/* Starts the thread.  NULL with a reason. */
job_thread *job_thread_create(const job_thread_def *def, char *err, size_t errlen);
/* Joins it (a job under way finishes first), dropping the jobs not run and
 * the answers not taken.  NULL is allowed. */
void job_thread_destroy(job_thread *t);
/* Copies job in; false when cap jobs are asked and not taken back (the job
 * is then the caller's still). */
bool job_thread_ask(job_thread *t, const void *job);
/* Whether an ask would be refused now. */
bool job_thread_full(job_thread *t);
/* Copies up to max answers out (into an array of answer_size elements);
 * returns how many. */
int job_thread_take(job_thread *t, void *out, int max);

#endif
