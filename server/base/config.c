/* config.c - options: defaults < environment variables < command line. */
#include "config.h"
#include "log.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum opt_type { OT_INT, OT_DOUBLE, OT_STR };

/* The option table: constant data, read by main only. */

static const struct opt {
    const char *name, *env;
    enum opt_type type;
    size_t off, size;
    double lo, hi;
    const char *help;
} opts[] = {
#define O(f) offsetof(srv_config, f), sizeof(((srv_config *)0)->f)
    {"port", "FLUID_PORT", OT_INT, O(port), 0, 65535, "TCP port for HTTP, REST and WebSocket (0: any free port)"},
    {"bind", "FLUID_BIND", OT_STR, O(bind), 0, 0, "address to listen on (0.0.0.0 for every interface)"},
    {"scene", "FLUID_SCENE", OT_STR, O(scene), 0, 0, "scene loaded at start (GET /api/scenes lists them)"},
    {"particles", "FLUID_PARTICLES", OT_INT, O(particles), 0, 1 << 20,
     "particle count of the first scene (0: its default)"},
    {"capacity", "FLUID_CAPACITY", OT_INT, O(capacity), 0, 1 << 20,
     "most particles the world holds (0: max(65536, 2 x particles))"},
    {"tick-hz", "FLUID_TICK_HZ", OT_DOUBLE, O(tick_hz), 1, 1000, "simulation steps per wall-clock second"},
    {"frame-hz", "FLUID_FRAME_HZ", OT_DOUBLE, O(frame_hz), 1, 240, "frames broadcast per second"},
    {"frame-bits", "FLUID_FRAME_BITS", OT_INT, O(frame_bits), 0, 16,
     "position precision of frames: the quantization step is the box's longest side / 2^N (0: the default, the "
     "smaller of 1/1024 of the box's longest side and 1/10 of the particle spacing)"},
    {"frame-bands", "FLUID_FRAME_BANDS", OT_INT, O(frame_bands), 0, 16,
     "frames split by particle id into this many bands, each coded on its own so that a page decodes them on "
     "several cores (0: the default, one band per 65536 particles; 1: never)"},
    {"max-clients", "FLUID_MAX_CLIENTS", OT_INT, O(max_clients), 1, 1024, "most WebSocket clients at once"},
    {"web-root", "FLUID_WEB_ROOT", OT_STR, O(web_root), 0, 0, "directory served at / (static files)"},
    {"token", "FLUID_TOKEN", OT_STR, O(token), 0, 0,
     "the administrator's token ('Authorization: Bearer TOKEN', ?token=): every room and making rooms; with it, a "
     "connection without it has its room's public role or its invite's (without it every caller is administrator)"},
    {"secret-file", "FLUID_SECRET_FILE", OT_STR, O(secret_file), 0, 0,
     "the key that signs invites (32 to 1024 bytes, mode 0600); default: secret.key in --data-dir, made at first "
     "start, else a random key for this run"},
    {"allow-origin", "FLUID_ALLOW_ORIGIN", OT_STR, O(allow_origin), 0, 0,
     "comma-separated browser origins, besides this server's own, allowed to open the stream and change the world "
     "('*': any)"},
    {"threads", "FLUID_THREADS", OT_INT, O(threads), 0, CONFIG_MAX_THREADS,
     "simulation worker threads (fs_pool), including the sim thread (0: one per core; the network and encoder "
     "threads need a few percent of one, and --step-budget leaves 30% of each tick free)"},
    {"room-idle-s", "FLUID_ROOM_IDLE_S", OT_DOUBLE, O(room_idle_s), 0, 1e6,
     "a room (other than the default) with no viewer, command or REST request for this long stops stepping until "
     "one comes (0: never)"},
    {"room-evict-s", "FLUID_ROOM_EVICT_S", OT_DOUBLE, O(room_evict_s), 0, 1e7,
     "with --data-dir, a room asleep this long is saved and its world freed, restored at the same tick when "
     "someone opens it again (0: never)"},
    {"step-budget", "FLUID_STEP_BUDGET", OT_DOUBLE, O(step_budget), 0, 1,
     "without --particles, the first scene is sized at start so that a tick's steps take at most this share of "
     "the tick, measured on this machine (never above the scene's own size; 0: the scene's own size)"},
    {"substeps", "FLUID_SUBSTEPS", OT_INT, O(substeps), 1, 16,
     "solver steps per tick: more is less compressible water and stiffer jelly, at that many times the cost"},
    {"rate", "FLUID_RATE", OT_INT, O(rate_per_s), 1, 100000, "commands per second allowed per WebSocket client"},
    {"burst", "FLUID_BURST", OT_INT, O(rate_burst), 1, 100000, "command burst allowed per WebSocket client"},
    {"net-nice", "FLUID_NET_NICE", OT_INT, O(net_nice), 0, 19,
     "nice value of the network thread, so the simulation's tick comes first"},
    {"log-level", "FLUID_LOG_LEVEL", OT_STR, O(log_level), 0, 0, "error, warn, info or debug"},
    {"data-dir", "FLUID_DATA_DIR", OT_STR, O(data_dir), 0, 0,
     "directory of the saved world: restored at start, saved at SIGTERM/SIGINT and every --save-interval s (empty: "
     "none)"},
    {"save-interval", "FLUID_SAVE_INTERVAL", OT_DOUBLE, O(save_interval), 0, 86400,
     "seconds between saves while running, with --data-dir (0: only at shutdown)"},
    {"record-dir", "FLUID_RECORD_DIR", OT_STR, O(record_dir), 0, 0,
     "folder of recordings (POST /api/recordings starts one; empty: <data-dir>/recordings, or none without "
     "--data-dir)"},
    {"record", "FLUID_RECORD", OT_STR, O(record_start), 0, 0,
     "record from the start into this folder (it becomes the recordings folder)"},
    {"record-max-mb", "FLUID_RECORD_MAX_MB", OT_DOUBLE, O(record_max_mb), 0, 1e6,
     "a recording's disk bound in MB: its oldest 5 s segments are deleted past it (0: none)"},
    {"record-max-s", "FLUID_RECORD_MAX_S", OT_DOUBLE, O(record_max_s), 0, 1e7,
     "a recording's bound in simulated seconds kept (0: none)"},
    {"record-total-mb", "FLUID_RECORD_TOTAL_MB", OT_DOUBLE, O(record_total_mb), 0, 1e9,
     "all recordings together keep at most this many MB: a recording that reaches it stops, a start past it is "
     "refused (0: what the recordings folder keeps at start plus half the free space of its disk, that half at "
     "most 100000 MB)"},
    {"exports-per-min", "FLUID_EXPORTS_PER_MIN", OT_INT, O(exports_per_min), 1, 100000,
     "exports (GET /api/particles?format=...) one address may start a minute, two thirds of them at once"},
    {"rebuilds-per-min", "FLUID_REBUILDS_PER_MIN", OT_INT, O(rebuilds_per_min), 1, 100000,
     "scene loads, solver switches and snapshot restores a world applies a minute, whoever asks (10 at once at "
     "most)"},
    {"mesh-max-mb", "FLUID_MESH_MAX_MB", OT_INT, O(mesh_max_mb), 1, 256,
     "largest mesh file POST /api/meshes takes, MB (STL, OBJ or binary glTF; at most 200000 triangles)"},
    {"nats", "FLUID_NATS", OT_STR, O(nats), 0, 0,
     "NATS broker URL (nats://host:4222), or a comma-separated list of a cluster's servers, tried in turn: a sim "
     "node publishes its frames there, a relay (--relay) serves them"},
    {"nats-token", "FLUID_NATS_TOKEN", OT_STR, O(nats_token), 0, 0, "the broker's token"},
    {"nats-user", "FLUID_NATS_USER", OT_STR, O(nats_user), 0, 0, "the broker's user name (with --nats-pass)"},
    {"nats-pass", "FLUID_NATS_PASS", OT_STR, O(nats_pass), 0, 0, "the broker's password"},
    {"world", "FLUID_WORLD", OT_STR, O(world), 0, 0, "the world's name on the broker: subjects fluid.<world>.*"},
    {"relay", "FLUID_RELAY", OT_INT, O(relay), 0, 1,
     "1: be a relay: no simulation; serve the web client, WebSockets and REST views from the sim node on --nats"},
    {"relays", "FLUID_RELAYS", OT_STR, O(relays), 0, 0,
     "comma-separated URLs of the relays (http://host:8081/,...): a page reconnects to the next when its own goes "
     "(give every node the same list, and each relay --allow-origin for the others)"},
    {"relay-id", "FLUID_RELAY_ID", OT_INT, O(relay_id), 0, 2047,
     "this relay's id, unique among the relays of a world (0: from the process id)"},
    {"fleet", "FLUID_FLEET", OT_STR, O(fleet), 0, 0,
     "join this fleet of sim nodes (with --nats and --node-id): its rooms are placed across the nodes, held "
     "through the broker's JetStream key-value bucket fluid_<fleet>; with --relay, serve every room of the fleet"},
    {"node-id", "FLUID_NODE_ID", OT_INT, O(node_id), 0, 65535, "this sim node's id, unique in its --fleet (1-65535)"},
    {"fleet-save-s", "FLUID_FLEET_SAVE_S", OT_DOUBLE, O(fleet_save_s), 0, 3600,
     "seconds between the snapshots a fleet's node writes of each room it holds to the broker's JetStream "
     "(FLUID_<fleet>_SNAP), from which another node takes the room over; 0: only when it stops"},
    {"fleet-replicas", "FLUID_FLEET_REPLICAS", OT_INT, O(fleet_replicas), 1, 5,
     "copies a NATS cluster keeps of the fleet's bucket and snapshots' stream when a node makes them (3 on a "
     "3-server cluster: one server may die with nothing lost); they are made once, by the first node"},
    {"tls-cert", "FLUID_TLS_CERT", OT_STR, O(tls_cert), 0, 0,
     "PEM certificate file (the chain, leaf first): serve https and wss on the port (needs --tls-key)"},
    {"tls-key", "FLUID_TLS_KEY", OT_STR, O(tls_key), 0, 0, "PEM private key file of --tls-cert"},
#undef O
};
#define NOPTS (sizeof opts / sizeof opts[0])

void config_defaults(srv_config *c) {
    memset(c, 0, sizeof *c);
    c->port = 8080;
    strcpy(c->bind, "127.0.0.1");
    strcpy(c->scene, "");
    c->tick_hz = 60;
    c->record_max_mb = 1024;
    c->mesh_max_mb = 16;
    snprintf(c->world, sizeof c->world, "default");
    c->frame_hz = 30;
    c->max_clients = 64;
    strcpy(c->web_root, "web-client");
    c->threads = 0;
    c->substeps = 1;
    c->step_budget = 0.7;
    c->room_idle_s = 60;
    c->room_evict_s = 600;
    c->rate_per_s = 120;
    strcpy(c->log_level, "info");
    c->save_interval = 300;
    c->fleet_save_s = 2;
    c->fleet_replicas = 1;
    c->rate_burst = 240;
    c->exports_per_min = 12;
    c->rebuilds_per_min = 120;
    c->net_nice = 5;
}

void config_usage(FILE *out) {
    fprintf(out, "usage: fluid-server [options]\n"
                 "Steps one particle-fluid world at a fixed rate and serves it on one port:\n"
                 "static files at /, a JSON REST API under /api and a msgpack WebSocket stream\n"
                 "(subprotocol \"fluid.v2\"; see protocol/PROTOCOL.md).\n\noptions (each also read from "
                 "the environment variable shown; the command line wins):\n");
    for (size_t i = 0; i < NOPTS; i++) fprintf(out, "  --%-12s %-18s %s\n", opts[i].name, opts[i].env, opts[i].help);
    fprintf(out, "  --quiet                         log errors only (--log-level error)\n"
                 "  --health-check                  ask the server these options describe for /api/health\n"
                 "                                  (https with --tls-cert, without verifying it) and exit\n"
                 "                                  0 if it answers 200 (a container's health check)\n"
                 "  --help                          this text\n"
                 "defaults: --port 8080 --bind 127.0.0.1 --tick-hz 60 --frame-hz 30 --max-clients 64\n"
                 "          --web-root web-client --threads 0 --substeps 1 --step-budget 0.7 --rate 120\n"
                 "          --burst 240 --net-nice 5 --log-level info --save-interval 300\n");
}

static int set_opt(srv_config *c, const struct opt *o, const char *v, const char *from, FILE *err) {
    char *end;
    void *dst = (char *)c + o->off;
    switch (o->type) {
    case OT_INT: {
        errno = 0;
        long l = strtol(v, &end, 10);
        if (errno || end == v || *end || l < o->lo || l > o->hi) {
            fprintf(err, "fluid-server: %s: --%s wants an integer in [%g, %g], got '%s'\n", from, o->name, o->lo, o->hi,
                    v);
            return -1;
        }
        *(int *)dst = (int)l;
        return 0;
    }
    case OT_DOUBLE: {
        errno = 0;
        double d = strtod(v, &end);
        if (errno || end == v || *end || !isfinite(d) || d < o->lo || d > o->hi) {
            fprintf(err, "fluid-server: %s: --%s wants a number in [%g, %g], got '%s'\n", from, o->name, o->lo, o->hi,
                    v);
            return -1;
        }
        *(double *)dst = d;
        return 0;
    }
    case OT_STR:
        if (strlen(v) >= o->size) {
            fprintf(err, "fluid-server: %s: --%s is too long (at most %zu bytes)\n", from, o->name, o->size - 1);
            return -1;
        }
        strcpy((char *)dst, v);
        return 0;
    }
    return -1;
}

bool config_tls(const srv_config *c) {
    return c->tls_cert[0] != 0;
}

/* A TLS file that cannot be read is refused here, with its name and the
 * reason, before anything starts (libwebsockets would only say that the
 * vhost failed). */
static int readable(const char *path, const char *opt, FILE *err) {
    if (!path[0]) return 0;
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(err, "fluid-server: %s: cannot read '%s': %s\n", opt, path, strerror(errno));
        return -1;
    }
    int ch = fgetc(f);
    bool bad = ferror(f), empty = ch == EOF && !bad;
    int e = errno;
    fclose(f);
    if (bad || empty) {
        fprintf(err, "fluid-server: %s: cannot read '%s': %s\n", opt, path, bad ? strerror(e) : "the file is empty");
        return -1;
    }
    return 0;
}

/* --fleet's name is a subject token and a bucket name's part (letters,
 * digits, '-' and '_'); a fleet's node needs the broker and an id; a relay
 * of a fleet needs the broker and no node id. */
static int fleet_options(const srv_config *c, FILE *err) {
    if (!c->fleet[0]) {
        if (c->node_id) fprintf(err, "fluid-server: --node-id is a fleet's: give --fleet NAME too\n");
        return c->node_id ? -1 : 0;
    }
    for (const char *p = c->fleet; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') || *p == '-' ||
              *p == '_')) {
            fprintf(err, "fluid-server: --fleet '%s': letters, digits, '-' and '_' only\n", c->fleet);
            return -1;
        }
    const char *missing = !c->nats[0]                ? "--nats URL (the broker with JetStream on)"
                          : !c->node_id && !c->relay ? "--node-id 1-65535 (unique in the fleet)"
                                                     : NULL;
    if (missing) {
        fprintf(err, "fluid-server: --fleet needs %s\n", missing);
        return -1;
    }
    if (c->relay && c->node_id) {
        fprintf(err, "fluid-server: --node-id is a sim node's: a relay of a fleet is named by --relay-id\n");
        return -1;
    }
    return 0;
}

int config_parse(srv_config *c, int argc, char **argv, FILE *out, FILE *err) {
    for (size_t i = 0; i < NOPTS; i++) {
        const char *v = getenv(opts[i].env);
        if (v && *v && set_opt(c, &opts[i], v, opts[i].env, err)) return -1;
    }
    for (int a = 1; a < argc; a++) {
        const char *arg = argv[a];
        if (!strcmp(arg, "--help") || !strcmp(arg, "-h")) {
            config_usage(out);
            return 1;
        }
        if (!strcmp(arg, "--quiet")) {
            c->quiet = true;
            continue;
        }
        if (!strcmp(arg, "--health-check")) {
            c->health_check = true;
            continue;
        }
        if (strncmp(arg, "--", 2)) {
            fprintf(err, "fluid-server: unexpected argument '%s' (try --help)\n", arg);
            return -1;
        }
        const char *name = arg + 2, *eq = strchr(name, '=');
        size_t nl = eq ? (size_t)(eq - name) : strlen(name);
        const struct opt *o = NULL;
        for (size_t i = 0; i < NOPTS; i++)
            if (strlen(opts[i].name) == nl && !strncmp(opts[i].name, name, nl)) o = &opts[i];
        if (!o) {
            fprintf(err, "fluid-server: unknown option '%s' (try --help)\n", arg);
            return -1;
        }
        const char *v = eq ? eq + 1 : NULL;
        if (!v) {
            if (a + 1 >= argc) {
                fprintf(err, "fluid-server: --%s needs a value\n", o->name);
                return -1;
            }
            v = argv[++a];
        }
        if (set_opt(c, o, v, "command line", err)) return -1;
    }
    if (log_level_parse(c->log_level) < 0) {
        fprintf(err, "fluid-server: --log-level wants error, warn, info or debug, got '%s'\n", c->log_level);
        return -1;
    }
    if (!c->tls_cert[0] != !c->tls_key[0]) {
        bool cert = c->tls_cert[0] != 0;
        const char *set = cert ? "--tls-cert" : "--tls-key", *unset = cert ? "--tls-key" : "--tls-cert";
        fprintf(err,
                "fluid-server: --tls-cert and --tls-key (FLUID_TLS_CERT, FLUID_TLS_KEY) go together: %s is set, "
                "%s is not\n",
                set, unset);
        return -1;
    }
    if (!c->health_check && (readable(c->tls_cert, "--tls-cert", err) || readable(c->tls_key, "--tls-key", err)))
        return -1;
    if (fleet_options(c, err)) return -1;
    if (c->rate_burst < c->rate_per_s / 10) c->rate_burst = c->rate_per_s / 10 + 1;
    if (c->threads == 0) { /* auto: one per core (BENCHMARKS.md, "Threads by default") */
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        c->threads = cores > 1 ? (int)cores : 1;
        if (c->threads > CONFIG_MAX_THREADS) c->threads = CONFIG_MAX_THREADS;
    }
    return 0;
}

bool config_record_dir(const srv_config *cfg, char *out, size_t n) {
    if (cfg->record_start[0])
        snprintf(out, n, "%s", cfg->record_start);
    else if (cfg->record_dir[0])
        snprintf(out, n, "%s", cfg->record_dir);
    else if (cfg->data_dir[0])
        snprintf(out, n, "%.1000s/recordings", cfg->data_dir);
    else
        return false;
    return true;
}
