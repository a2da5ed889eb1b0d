/* bus.c - the NATS connection and the bus thread (see bus.h). */
#include "thread_name.h"
#include "bus.h"
#include "bus_link.h"
#include "bus_node.h"
#include "bus_relay.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "clock.h"
#include "bus_options.h"
#include "log.h"
#include "nice_call.h"
#include "wire.h"

static void on_disconnected(natsConnection *nc, void *closure) {
    (void)nc;
    bus *b = closure;
    atomic_store(&b->connected, false);
}

static void on_connected(natsConnection *nc, void *closure) {
    (void)nc;
    bus *b = closure;
    atomic_store(&b->connected, true);
    atomic_fetch_add(&b->reconnects, 1);
}

/* The world's name is a subject token: letters, digits, '-' and '_'. */
static bool world_ok(const char *w) {
    if (!*w) return false;
    for (; *w; w++)
        if (!((*w >= 'a' && *w <= 'z') || (*w >= 'A' && *w <= 'Z') || (*w >= '0' && *w <= '9') || *w == '-' ||
              *w == '_'))
            return false;
    return true;
}

static int make_options(bus *b, char *err, size_t errlen) {
    if (bus_options_make(&b->opts, b->cfg, on_connected, on_disconnected, b, err, errlen)) return -1;
    /* past this, publishes fail while the broker is away: frames are dropped */
    natsStatus s = natsOptions_SetReconnectBufSize(b->opts, 1 << 20);
    if (s != NATS_OK) {
        snprintf(err, errlen, "--nats %s: %s", b->cfg->nats, natsStatus_GetText(s));
        return -1;
    }
    return 0;
}

/* The relay's status to its viewers (of every room), as a broadcast only they get. */
static void tell_viewers(bus *b, bool up) {
    char text[200];
    snprintf(text, sizeof text,
             up ? "connected to the simulation again" : "lost the simulation's message bus; waiting for it");
    for (int i = 0; i < b->nroom; i++) {
        hub_publish_bcast(room_hub(b->room[i].r), wire_encode_status(up, text));
        hub_wake(room_hub(b->room[i].r));
    }
    log_info("relay: %s", text);
}

/* (Re)makes every subscription; 0, or -1 with the reason (the connection
 * is closed: refused credentials, or not up yet). */
static int subscribe_all(bus *b, char *err, size_t errlen) {
    for (int i = 0; i < b->nsub; i++) natsSubscription_Destroy(b->sub[i]);
    b->nsub = 0;
    return b->relay ? bus_relay_subscribe(b, err, errlen) : bus_node_subscribe(b, err, errlen);
}

static void *bus_main(void *arg) {
    bus *b = arg;
    thread_name_set("bus", NULL);
    /* the edge's priority, as the network thread's (--net-nice): the tick comes first */
    if (b->cfg->net_nice && setpriority(PRIO_PROCESS, 0, b->cfg->net_nice))
        log_info("bus: cannot lower the bus thread's priority (continuing)");
    while (!atomic_load(&b->stop)) {
        uint64_t now = clock_now_ns();
        bool up = atomic_load(&b->connected);
        if (!b->subscribed && up) {
            char why[200] = "";
            b->subscribed = subscribe_all(b, why, sizeof why) == 0;
            if (b->subscribed) log_info("bus: subscribed on %s", b->cfg->nats);
        }
        if (b->relay && up != b->was_connected) tell_viewers(b, up);
        b->was_connected = up;
        if (b->relay)
            bus_relay_pass(b, now);
        else
            bus_node_pass(b, now);
        bus_stats bs;
        bus_get_stats(b, &bs);
        bus_state st = {.enabled = true,
                        .connected = bs.connected,
                        .relay = b->relay,
                        .published = bs.published,
                        .publish_failed = bs.publish_failed,
                        .received = bs.received,
                        .bad = bs.bad,
                        .reconnects = bs.reconnects,
                        .rate_limited = bs.rate_limited,
                        .unanswered = bs.unanswered,
                        .shed = bs.shed};
        hub_set_bus_state(b->hub, &st);
        struct timespec ts = {0, 5 * 1000000L}; /* 5 ms: a frame waits at most that long */
        nanosleep(&ts, NULL);
    }
    return NULL;
}

/* What open_connection is given and says. */
typedef struct bus_open {
    bus *b;
    char *err;
    size_t errlen;
    bool failed;
} bus_open;

/* The library's options, the connection and the first subscriptions; on a
 * sim node made on a thread at the edge's priority (--net-nice,
 * nice_call.h): the threads the NATS client starts for them (its reader,
 * flusher, delivery threads, and the library's own at its first use)
 * inherit it, so that a relay's flood of messages takes its CPU from the
 * edge's share, not the simulation's.  (A relay has no simulation.) */
static void open_connection(void *arg) {
    bus_open *o = arg;
    bus *b = o->b;
    const srv_config *cfg = b->cfg;
    if (make_options(b, o->err, o->errlen)) {
        o->failed = true;
        return;
    }
    natsStatus s = natsConnection_Connect(&b->nc, b->opts);
    if (s != NATS_OK && s != NATS_NOT_YET_CONNECTED) {
        snprintf(o->err, o->errlen, "--nats %s: %s", cfg->nats, natsStatus_GetText(s));
        o->failed = true;
        return;
    }
    if (s == NATS_OK) atomic_store(&b->connected, true);
    if (s == NATS_NOT_YET_CONNECTED) log_info("bus: %s not reachable yet; retrying", cfg->nats);
    /* Not subscribed yet (the broker is not up, or refused us): the bus
     * thread subscribes once the connection is up; the node runs either way. */
    char why[200] = "";
    b->subscribed = subscribe_all(b, why, sizeof why) == 0;
    if (!b->subscribed)
        log_error("bus: %s: %s; the %s runs on and subscribes when the broker accepts it (check --nats-token, "
                  "--nats-user, --nats-pass)",
                  cfg->nats, why, b->relay ? "relay" : "sim node");
}

bus *bus_create(const srv_config *cfg, rooms *dir, const secret_key *secret, uint32_t relay_id, char *err,
                size_t errlen) {
    if (!world_ok(cfg->world)) {
        snprintf(err, errlen, "--world '%s': letters, digits, '-' and '_' only", cfg->world);
        return NULL;
    }
    bus *b = calloc(1, sizeof *b);
    if (!b) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    b->cfg = cfg;
    b->dir = dir;
    if (!(b->home = room_find(dir, ROOMS_DEFAULT))) {
        snprintf(err, errlen, "bus: no default room");
        free(b);
        return NULL;
    }
    b->hub = room_hub(b->home);
    if (secret) b->secret = *secret;
    b->relay = cfg->relay != 0;
    b->relay_id = relay_id;
    /* a relay's own subjects: its replies, and where it publishes (the node
     * checks that a message names the relay of its subject: bus_subject_relay) */
    snprintf(b->reply_leaf, sizeof b->reply_leaf, "reply.%u", relay_id);
    snprintf(b->cmd_leaf, sizeof b->cmd_leaf, "cmd.%u", relay_id);
    snprintf(b->wants_leaf, sizeof b->wants_leaf, "wants.%u", relay_id);
    snprintf(b->omesh_leaf, sizeof b->omesh_leaf, "omesh.%u", relay_id);
    b->was_connected = true; /* a relay tells its viewers only about changes */
    if (!b->relay) {
        if (relay_rate_init(&b->rate, cfg->rate_per_s, cfg->rate_burst)) {
            snprintf(err, errlen, "bus: cannot make the relays' rate limits (--rate %d, --burst %d)", cfg->rate_per_s,
                     cfg->rate_burst);
            free(b);
            return NULL;
        }
        pthread_mutex_init(&b->rate_mtx, NULL);
        b->rate_on = true;
    }
    b->fleet = cfg->fleet[0] != 0;
    snprintf(b->prefix, sizeof b->prefix, "fluid.%s", b->fleet ? cfg->fleet : cfg->world);
    bus_open o = {.b = b, .err = err, .errlen = errlen};
    nice_call(b->relay ? 0 : cfg->net_nice, open_connection, &o);
    if (o.failed) {
        bus_destroy(b);
        return NULL;
    }
    if (pthread_create(&b->thread, NULL, bus_main, b)) {
        snprintf(err, errlen, "cannot start the bus thread");
        bus_destroy(b);
        return NULL;
    }
    b->started = true;
    log_info("bus: %s on %s, subjects %s.*", b->relay ? "relay" : "sim node", cfg->nats, b->prefix);
    return b;
}

void bus_destroy(bus *b) {
    if (!b) return;
    if (b->started) {
        atomic_store(&b->stop, true);
        pthread_join(b->thread, NULL);
    }
    for (int i = 0; i < b->nsub; i++) {
        natsSubscription_Unsubscribe(b->sub[i]);
        natsSubscription_Destroy(b->sub[i]);
    }
    if (b->relay)
        bus_relay_end(b);
    else
        bus_node_end(b);
    if (b->nc) {
        natsConnection_Close(b->nc);
        natsConnection_Destroy(b->nc);
    }
    natsOptions_Destroy(b->opts);
    /* the library's threads may still run this connection's callbacks (they
     * write into b) after natsConnection_Close returns: b is freed only once
     * they have ended (2 s at most) */
    nats_CloseAndWait(2000);
    if (b->rate_on) {
        relay_rate_free(&b->rate);
        pthread_mutex_destroy(&b->rate_mtx);
    }
    room_unref(b->home);
    secret_wipe(&b->secret);
    free(b);
}

void bus_get_stats(bus *b, bus_stats *out) {
    out->connected = atomic_load(&b->connected);
    out->published = atomic_load(&b->published);
    out->publish_failed = atomic_load(&b->publish_failed);
    out->received = atomic_load(&b->received);
    out->bad = atomic_load(&b->bad);
    out->reconnects = atomic_load(&b->reconnects);
    out->rate_limited = atomic_load(&b->rate_limited);
    out->unanswered = atomic_load(&b->unanswered);
    out->shed = atomic_load(&b->shed);
}
