/* msgbuf.h - refcounted immutable message buffers and a growable byte writer.
 *
 * A msg_buf is built by one thread (with a wbuf), then published; from then on
 * it is never written again and any thread may read it.  The reference count
 * is atomic, so the last holder on whichever thread frees it.
 */
#ifndef SRV_MSGBUF_H
#define SRV_MSGBUF_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/* Threads: any, after publication (read-only; refs is atomic). */
typedef struct msg_buf {
    atomic_int refs;
    size_t len;
    uint8_t *data;
} msg_buf;

/* Threads: the one thread that builds a message. */
typedef struct wbuf {
    uint8_t *data;
    size_t len, cap;
    int failed; /* set when an allocation failed or the cap was hit */
    size_t max; /* hard cap on len (0: none) */
} wbuf;

void wbuf_init(wbuf *b, size_t reserve, size_t max);
void wbuf_free(wbuf *b);
int wbuf_append(wbuf *b, const void *p, size_t n); /* 0 ok, -1 failed */
/* Makes room for n more bytes and returns where they go (len grows by n). */
uint8_t *wbuf_grow(wbuf *b, size_t n);
/* msgpack-c write callback: data is a wbuf*. */
int wbuf_msgpack_write(void *data, const char *buf, size_t len);
/* Turns the writer's bytes into a published buffer with one reference.
 * NULL if the writer failed.  The wbuf is left empty. */
msg_buf *wbuf_finish(wbuf *b);

msg_buf *msg_buf_from_bytes(const void *p, size_t n);
msg_buf *msg_buf_ref(msg_buf *m); /* NULL-safe */
void msg_buf_unref(msg_buf *m);   /* NULL-safe */

#endif
