/* bus_cmdsub.c - a sim node's subscriptions to one command subject (see
 * bus_cmdsub.h). */
#include "bus_cmdsub.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

static natsSubscription *subscribe(const bus_cmdsub *s, const char *last) {
    char subj[sizeof s->base + 16];
    snprintf(subj, sizeof subj, "%s.%s", s->base, last);
    natsSubscription *sub = NULL;
    natsStatus st = natsConnection_QueueSubscribe(&sub, s->nc, subj, s->queue, s->on_message, s->closure);
    if (st != NATS_OK) {
        log_once("bus-cmdsub", "bus: cannot subscribe to %s: %s (logged once; tried again)", subj,
                 natsStatus_GetText(st));
        return NULL;
    }
    return sub;
}

static void drop(natsSubscription **sub) {
    if (!*sub) return;
    natsSubscription_Unsubscribe(*sub);
    natsSubscription_Destroy(*sub);
    *sub = NULL;
}

/* Lets go of a subscription at a switch: drained (the broker told, the
 * messages already delivered here still taken), destroyed once it is
 * closed (reap).  With no room to keep it, or a drain the client refuses,
 * dropped at once: logged, its pending messages lost. */
static void retire(bus_cmdsub *s, natsSubscription **sub) {
    if (!*sub) return;
    if (s->ndraining < BUS_CMD_DRAINING && natsSubscription_Drain(*sub) == NATS_OK) {
        s->draining[s->ndraining++] = *sub;
        *sub = NULL;
        return;
    }
    log_once("bus-cmdsub-drain", "bus: a command subscription dropped without draining it (logged once)");
    drop(sub);
}

/* Destroys the drained subscriptions that have closed. */
static void reap(bus_cmdsub *s) {
    int kept = 0;
    for (int i = 0; i < s->ndraining; i++) {
        if (natsSubscription_IsValid(s->draining[i]))
            s->draining[kept++] = s->draining[i];
        else
            natsSubscription_Destroy(s->draining[i]);
    }
    s->ndraining = kept;
}

int bus_cmdsub_open(bus_cmdsub *s, natsConnection *nc, const char *base, natsMsgHandler on_message, void *closure,
                    char *err, size_t errlen) {
    memset(s, 0, sizeof *s);
    if ((size_t)snprintf(s->base, sizeof s->base, "%s", base) >= sizeof s->base) {
        snprintf(err, errlen, "bus: the subject %.60s... is longer than %zu bytes", base, sizeof s->base - 1);
        return -1;
    }
    s->nc = nc, s->on_message = on_message, s->closure = closure;
    /* a name no other connection uses: the group holds this node's subscriptions only */
    static unsigned next;
    snprintf(s->queue, sizeof s->queue, "cmd_%ld_%u", (long)getpid(), ++next);
    if (!(s->wild = subscribe(s, "*"))) {
        snprintf(err, errlen, "bus: cannot subscribe to %s.*", base);
        return -1;
    }
    return 0;
}

static bool listed(const uint32_t *relay, int k, uint32_t id) {
    for (int i = 0; i < k; i++)
        if (relay[i] == id) return true;
    return false;
}

void bus_cmdsub_update(bus_cmdsub *s, bool shedding, const uint32_t *relay, int k) {
    if (s->ndraining) reap(s);
    if (!shedding || k > BUS_CMD_RELAYS) {
        if (!s->wild && !(s->wild = subscribe(s, "*"))) return; /* the relays' own kept meanwhile */
        for (int i = 0; i < s->n; i++) retire(s, &s->one[i]);
        s->n = 0;
        return;
    }
    for (int i = 0; i < k; i++) { /* the new ones first */
        if (listed(s->relay, s->n, relay[i])) continue;
        char last[16];
        snprintf(last, sizeof last, "%u", (unsigned)relay[i]);
        natsSubscription *sub = subscribe(s, last);
        if (!sub) return; /* the wildcard kept: nothing is lost */
        s->one[s->n] = sub, s->relay[s->n++] = relay[i];
    }
    int kept = 0;
    for (int i = 0; i < s->n; i++) { /* then those no longer read */
        if (listed(relay, k, s->relay[i])) {
            s->one[kept] = s->one[i], s->relay[kept++] = s->relay[i];
        } else {
            retire(s, &s->one[i]);
        }
    }
    s->n = kept;
    retire(s, &s->wild);
}

void bus_cmdsub_close(bus_cmdsub *s) {
    drop(&s->wild);
    for (int i = 0; i < s->n; i++) drop(&s->one[i]);
    s->n = 0;
    for (int i = 0; i < s->ndraining; i++) drop(&s->draining[i]);
    s->ndraining = 0;
}
