/* bus_link.c - publishing on the world's subjects (see bus_link.h). */
#include "bus_link.h"

#include <stdbool.h>
#include <stdio.h>
#include <sys/resource.h>

#include "log.h"

void bus_subject(const bus *b, const char *leaf, char *out, size_t n) {
    snprintf(out, n, "%s.%s", b->prefix, leaf);
}

void bus_room_leaf(const char *rname, const char *what, char *out, size_t n) {
    snprintf(out, n, "r.%s.%s", rname, what);
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

/* The NATS client delivers on threads of its own: each lowers itself, once,
 * to the network thread's nice value (--net-nice; on Linux a nice value is
 * per thread), so that a relay's flood of messages takes its CPU from the
 * edge and not from the simulation's tick. */
static void lower_priority(const bus *b) {
    static _Thread_local bool lowered;
    if (lowered) return;
    lowered = true;
    if (b->cfg->net_nice && setpriority(PRIO_PROCESS, 0, b->cfg->net_nice))
        log_once("bus-nice", "bus: cannot lower the delivery thread's priority (continuing)");
}

void bus_on_message(natsConnection *nc, natsSubscription *sub, natsMsg *m, void *closure) {
    (void)nc, (void)sub;
    const bus_route *r = closure;
    bus *b = r->b;
    lower_priority(b);
    atomic_fetch_add(&b->received, 1);
    int l = natsMsg_GetDataLength(m);
    char err[192] = "";
    if (r->take(b, m, (const uint8_t *)natsMsg_GetData(m), l > 0 ? (size_t)l : 0, err, sizeof err)) {
        atomic_fetch_add(&b->bad, 1);
        char key[48];
        snprintf(key, sizeof key, "bus-bad-%s", r->what);
        log_once(key, "%s: refused a %s message from the bus: %s (logged once)", b->relay ? "relay" : "bus", r->what,
                 err);
    }
    natsMsg_Destroy(m);
}

int bus_subscribe(bus *b, const bus_route *routes, int k, char *err, size_t errlen) {
    for (int i = 0; i < k; i++) {
        if (b->nsub >= (int)(sizeof b->sub / sizeof *b->sub)) {
            snprintf(err, errlen, "bus: too many subscriptions");
            return -1;
        }
        char subj[BUS_SUBJECT];
        bus_subject(b, routes[i].leaf, subj, sizeof subj);
        bus_route *r = &b->route[b->nsub];
        if (!r->take) { /* set once: a resubscription (after refused credentials) makes the same routes, and a
                         * callback of the destroyed subscription may still be reading this one */
            *r = routes[i];
            r->b = b;
        }
        natsStatus s = routes[i].queue ? natsConnection_QueueSubscribe(&b->sub[b->nsub], b->nc, subj, routes[i].queue,
                                                                       bus_on_message, r)
                                       : natsConnection_Subscribe(&b->sub[b->nsub], b->nc, subj, bus_on_message, r);
        if (s != NATS_OK) {
            snprintf(err, errlen, "bus: cannot subscribe to %s: %s", subj, natsStatus_GetText(s));
            return -1;
        }
        b->nsub++;
    }
    return 0;
}

int bus_subscribe_one(bus *b, bus_route *r, const char *leaf, natsSubscription **out, char *err, size_t errlen) {
    char subj[BUS_SUBJECT];
    bus_subject(b, leaf, subj, sizeof subj);
    if (r->b != b) r->b = b; /* set once: a drained subscription's callback of the same route may still read it */
    natsStatus s = natsConnection_Subscribe(out, b->nc, subj, bus_on_message, r);
    if (s != NATS_OK) {
        *out = NULL;
        snprintf(err, errlen, "bus: cannot subscribe to %s: %s", subj, natsStatus_GetText(s));
        return -1;
    }
    return 0;
}
