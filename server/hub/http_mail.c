/* http_mail.c - the REST writes between the network and bus threads (see
 * http_mail.h). */
#include "http_mail.h"

#include <string.h>

void http_mail_init(http_mail *m) {
    memset(m, 0, sizeof *m);
    pthread_mutex_init(&m->mtx, NULL);
}

void http_mail_destroy(http_mail *m) {
    for (int b = 0; b < HTTP_BOXES; b++)
        for (int i = 0; i < m->count[b]; i++) msg_buf_unref(m->ring[b][(m->head[b] + i) % HTTP_MAIL_RING].msg);
    pthread_mutex_destroy(&m->mtx);
    memset(m, 0, sizeof *m);
}

bool http_mail_put(http_mail *m, http_mail_box box, const http_mail_msg *e) {
    pthread_mutex_lock(&m->mtx);
    bool ok = m->count[box] < HTTP_MAIL_RING;
    if (ok) m->ring[box][(m->head[box] + m->count[box]++) % HTTP_MAIL_RING] = *e;
    pthread_mutex_unlock(&m->mtx);
    return ok;
}

int http_mail_take(http_mail *m, http_mail_box box, http_mail_msg *out, int max) {
    pthread_mutex_lock(&m->mtx);
    int k = 0;
    while (k < max && m->count[box] > 0) {
        out[k++] = m->ring[box][m->head[box]];
        m->head[box] = (m->head[box] + 1) % HTTP_MAIL_RING;
        m->count[box]--;
    }
    pthread_mutex_unlock(&m->mtx);
    return k;
}

int http_mail_count(http_mail *m, http_mail_box box) {
    pthread_mutex_lock(&m->mtx);
    int k = m->count[box];
    pthread_mutex_unlock(&m->mtx);
    return k;
}
