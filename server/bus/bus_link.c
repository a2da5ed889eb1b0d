/* bus_link.c - publishing on the world's subjects (see bus_link.h). */
#include "bus_link.h"

#include <stdio.h>

void bus_subject(const bus *b, const char *leaf, char *out, size_t n) {
    snprintf(out, n, "%s.%s", b->prefix, leaf);
}

void bus_publish(bus *b, const char *leaf, const msg_buf *m) {
    if (!m) return;
    char subj[BUS_SUBJECT];
    bus_subject(b, leaf, subj, sizeof subj);
    natsStatus s =
        m->len > (size_t)INT32_MAX ? NATS_INVALID_ARG : natsConnection_Publish(b->nc, subj, m->data, (int)m->len);
    if (s == NATS_OK)
        atomic_fetch_add(&b->published, 1);
    else
        atomic_fetch_add(&b->publish_failed, 1);
}

const uint8_t *bus_msg_data(natsMsg *m, size_t *n) {
    int l = natsMsg_GetDataLength(m);
    *n = l > 0 ? (size_t)l : 0;
    return (const uint8_t *)natsMsg_GetData(m);
}
