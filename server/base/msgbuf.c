/* msgbuf.c - reference-counted immutable message buffers and the growable byte writer that builds them (see msgbuf.h).
 */
#include "msgbuf.h"

#include <stdlib.h>
#include <string.h>

void wbuf_init(wbuf *b, size_t reserve, size_t max) {
    memset(b, 0, sizeof *b);
    b->max = max;
    if (reserve) {
        b->data = malloc(reserve);
        if (!b->data)
            b->failed = 1;
        else
            b->cap = reserve;
    }
}

void wbuf_free(wbuf *b) {
    free(b->data);
    memset(b, 0, sizeof *b);
}

uint8_t *wbuf_grow(wbuf *b, size_t n) {
    if (b->failed) return NULL;
    if (b->max && (n > b->max || b->len > b->max - n)) {
        b->failed = 1;
        return NULL;
    }
    if (b->len + n > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n) cap *= 2;
        uint8_t *d = realloc(b->data, cap);
        if (!d) {
            b->failed = 1;
            return NULL;
        }
        b->data = d;
        b->cap = cap;
    }
    uint8_t *at = b->data + b->len;
    b->len += n;
    return at;
}

int wbuf_append(wbuf *b, const void *p, size_t n) {
    uint8_t *at = wbuf_grow(b, n);
    if (!at) return -1;
    if (n) memcpy(at, p, n);
    return 0;
}

int wbuf_msgpack_write(void *data, const char *buf, size_t len) {
    return wbuf_append((wbuf *)data, buf, len);
}

msg_buf *wbuf_finish(wbuf *b) {
    if (b->failed) {
        wbuf_free(b);
        return NULL;
    }
    msg_buf *m = malloc(sizeof *m);
    if (!m) {
        wbuf_free(b);
        return NULL;
    }
    atomic_init(&m->refs, 1);
    m->len = b->len;
    m->data = b->data;
    b->data = NULL;
    wbuf_free(b);
    return m;
}

msg_buf *msg_buf_from_bytes(const void *p, size_t n) {
    wbuf b;
    wbuf_init(&b, n ? n : 1, 0);
    wbuf_append(&b, p, n);
    return wbuf_finish(&b);
}

msg_buf *msg_buf_ref(msg_buf *m) {
    if (m) atomic_fetch_add_explicit(&m->refs, 1, memory_order_relaxed);
    return m;
}

void msg_buf_unref(msg_buf *m) {
    if (!m) return;
    if (atomic_fetch_sub_explicit(&m->refs, 1, memory_order_acq_rel) == 1) {
        free(m->data);
        free(m);
    }
}
