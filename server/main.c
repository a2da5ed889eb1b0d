/* main.c - fluid-server: parses options, wires the directory of rooms (the
 * worker pool its rooms share, and its default room: a hub, a command queue
 * and the sim thread, which starts the encoder thread), the network thread and, with --nats,
 * the bus thread together, and shuts them down cleanly on SIGINT/SIGTERM.  main() itself runs the network thread;
 * --health-check instead runs the health check client and exits. */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/resource.h>
#include <stdio.h>
#include <string.h>

#include "alloc_policy.h"
#include "crash_report.h"
#include "bus.h"
#include "command.h"
#include "config.h"
#include "fleet.h"
#include "health.h"
#include "hub.h"
#include "log.h"
#include "net.h"
#include "wire.h"
#include "queue.h"
#include "room_keeper.h"
#include "rooms.h"
#include "secret.h"

#define CMD_QUEUE_CAP 1024

static volatile sig_atomic_t g_stop;

static void on_signal(int sig) {
    (void)sig;
    g_stop = 1;
}

static void install_signals(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, NULL); /* no SA_RESTART: poll() returns at once */
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
}

/* --relays split at commas into st (pointing into relays, which the caller
 * keeps alive). */
static void split_relays(wire_static *st, char *relays) {
    for (char *save = NULL, *u = strtok_r(relays, ",", &save); u && st->relay_count < 16;
         u = strtok_r(NULL, ",", &save))
        if (*u) st->relay[st->relay_count++] = u;
}

static void fill_static(wire_static *st, const srv_config *cfg, char *relays) {
    memset(st, 0, sizeof *st);
    split_relays(st, relays);
    for (int p = 0; p < FS_P_COUNT; p++) st->param[p] = fs_param_get_info((fs_param)p);
    st->scene_count = fs_scene_count() < 32 ? fs_scene_count() : 32;
    for (int i = 0; i < st->scene_count; i++) st->scene[i] = fs_scene_get(i)->name;
    st->tick_hz = cfg->tick_hz;
    st->frame_hz = cfg->frame_hz;
    for (int i = 0; i < FS_SOLVER_COUNT; i++)
        if (fs_solver_name((fs_solver)i)) st->solver[st->solver_count++] = fs_solver_name((fs_solver)i);
    st->auth_required = cfg->token[0] != 0;
    st->max_msg = WIRE_MAX_MSG;
    st->rate_per_s = cfg->rate_per_s;
    st->rate_burst = cfg->rate_burst;
}

/* The first line on stdout (tests and scripts wait for it), after a warning
 * when a token would cross the network in the clear. */
static void announce(const srv_config *cfg, net *n, hub *h) {
    if (cfg->token[0] && !config_tls(cfg) && strncmp(cfg->bind, "127.", 4) && strcmp(cfg->bind, "::1") &&
        strcmp(cfg->bind, "localhost"))
        log_warn("--token over plain http on %s: the token crosses the network in the clear; "
                 "give --tls-cert and --tls-key to serve https and wss",
                 cfg->bind);
    world_info wi;
    hub_get_info(h, &wi);
    printf("fluid-server: listening on %s://%s:%d/ (scene %s, %d particles, %g Hz tick, %g Hz frames)\n",
           config_tls(cfg) ? "https" : "http", cfg->bind, net_port(n), wi.scene, wi.particles, cfg->tick_hz,
           cfg->frame_hz);
    fflush(stdout);
}

/* The key of the rooms' invites: --secret-file, else secret.key in
 * --data-dir (made at first start), else a random one for this run.  Its
 * bytes are never logged. */
static int load_secret(const srv_config *cfg, net *n, secret_key *out, char *err, size_t errlen) {
    secret_key key;
    bool created = false;
    if (!cfg->secret_file[0] && cfg->data_dir[0] && mkdir(cfg->data_dir, 0700) && errno != EEXIST) {
        snprintf(err, errlen, "--data-dir %.200s: cannot make it: %s", cfg->data_dir, strerror(errno));
        return -1;
    }
    int rc = cfg->secret_file[0] ? secret_read_file(cfg->secret_file, &key, err, errlen)
             : cfg->data_dir[0]  ? secret_load_or_create(cfg->data_dir, &key, &created, err, errlen)
                                 : secret_random(&key, err, errlen);
    if (rc) return -1;
    net_set_secret(n, &key);
    *out = key; /* the bus checks the invites relays' clients send */
    memset(&key, 0, sizeof key);
    if (cfg->secret_file[0])
        log_info("invites: signed with the key in %s", cfg->secret_file);
    else if (cfg->data_dir[0])
        log_info("invites: signed with %s/%s%s", cfg->data_dir, SECRET_FILE, created ? " (made now)" : "");
    else
        log_info("invites: signed with a random key for this run (give --secret-file or --data-dir to keep them "
                 "valid across restarts)");
    if (!cfg->token[0])
        log_info("roles: no --token, so every caller administrates every room (one person on loopback; give "
                 "--token to give others the rooms' public roles and invites)");
    return 0;
}

int main(int argc, char **argv) {
    alloc_policy_init(); /* before any thread */
    crash_report_init();
    srv_config cfg;
    config_defaults(&cfg);
    int rc = config_parse(&cfg, argc, argv, stdout, stderr);
    if (rc) return rc > 0 ? 0 : 2;
    if (cfg.health_check) /* a client of a running server, not a server */
        return health_check(&cfg);
    log_set_level(cfg.quiet ? LOG_ERROR : (log_level)log_level_parse(cfg.log_level));
    install_signals();
    net_set_log_level();

    /* config -> the directory and its default room (hub, queue, sim thread) -> net -> run until a signal ->
     * teardown */
    wire_static st;
    static char relays[sizeof cfg.relays];
    snprintf(relays, sizeof relays, "%s", cfg.relays);
    fill_static(&st, &cfg, relays);
    char err[256] = "";
    int status = 1;
    net *n = NULL;
    bus *b = NULL;
    fleet *fl = NULL;
    rooms *dir = NULL;
    room *home = NULL;
    room_keeper *keeper = NULL;
    secret_key secret;
    memset(&secret, 0, sizeof secret);
    bool relay = cfg.relay != 0;
    uint32_t relay_id = cfg.relay_id > 0 ? (uint32_t)cfg.relay_id : (uint32_t)(getpid() % CMD_RELAY_MAX) + 1;
    if (relay && !cfg.nats[0]) {
        log_error("--relay needs --nats URL (the sim node's message bus)");
        goto out;
    }
    rooms_def rd = rooms_default_def();
    rd.cfg = &cfg;
    rd.st = &st;
    rd.simulate = !relay; /* a relay's room: a hub and a queue, fed by the bus thread */
    rd.route_relay_replies = cfg.nats[0] && !relay;
    rd.queue_cap = CMD_QUEUE_CAP;
    rd.queue_reserve = cfg.max_clients + 16;
    rd.threads = cfg.threads; /* one pool for every room's sim thread */
    room_def def = room_default_def();
    if (!(dir = rooms_create(&rd, err, sizeof err)) || room_open(dir, &def, &home, err, sizeof err) != ROOM_OK) {
        log_error("%s", err);
        goto out;
    }
    hub *h = room_hub(home);
    n = net_create(&cfg, &st, dir, home);
    if (!n) goto out;
    if (relay) net_set_relay(n, relay_id);
    rooms_set_wake(dir, net_wake, n);
    if (!relay && !(keeper = room_keeper_create(dir, net_wake, n, cfg.net_nice, err, sizeof err))) {
        log_error("%s", err);
        goto out;
    }
    net_set_keeper(n, keeper);
    if (load_secret(&cfg, n, &secret, err, sizeof err)) {
        log_error("%s", err);
        goto out;
    }
    b = cfg.nats[0] ? bus_create(&cfg, dir, relay ? NULL : &secret, relay_id, err, sizeof err) : NULL;
    secret_wipe(&secret);
    if (cfg.nats[0] && !b) {
        log_error("%s", err);
        goto out;
    }
    if (cfg.fleet[0]) { /* the fleet's rooms are in its directory, not in --data-dir's rooms/ */
        char url[96];
        snprintf(url, sizeof url, "%s://%s:%d/", config_tls(&cfg) ? "https" : "http", cfg.bind, net_port(n));
        if (!(fl = fleet_create(&cfg, dir, h, url, err, sizeof err))) {
            log_error("%s", err);
            goto out;
        }
        if (keeper) room_keeper_set_placer(keeper, fleet_place, fl); /* a relay's fleet only mirrors its rooms */
    }
    if (room_start(home)) {
        log_error("cannot start the sim thread");
        goto out;
    }
    if (!fl) rooms_restore(dir); /* the other rooms kept in --data-dir */
    /* The simulation's tick has priority over streaming: on Linux a nice
     * value is per thread, so this lowers only the network thread (the
     * directory's pool and the sim thread were created above, at the default). */
    if (cfg.net_nice && setpriority(PRIO_PROCESS, 0, cfg.net_nice))
        log_info("cannot lower the network thread's priority (continuing)");
    announce(&cfg, n, h);
    net_run(n, &g_stop);
    log_info("stopping");
    status = 0;
out:
    room_keeper_destroy(
        keeper);       /* joins it (a placement it waits for is answered meanwhile): no room opens after this */
    fleet_destroy(fl); /* joins its threads and saves the rooms it holds to JetStream; they stay listed */
    bus_destroy(b);    /* joins its thread; the NATS library is closed after it (nats_Close): the fleet's before */
    if (dir) rooms_stop(dir); /* joins the sim threads and clears the hubs' wake: no lws_cancel_service after it */
    net_destroy(n);
    room_unref(home);
    rooms_destroy(dir); /* the hubs and queues */
    log_shutdown();
    return status;
}
