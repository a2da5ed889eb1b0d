/* config.h - command line and environment options of fluid-server. */
#ifndef SRV_CONFIG_H
#define SRV_CONFIG_H

/* The core's FS_MAX_WORKERS (base/ does not include the core; loop/sim_thread.c
 * asserts the two agree). */
#define CONFIG_MAX_THREADS 64

#include <stdbool.h>
#include <stdio.h>

/* Threads: filled by main before any thread starts, then read-only. */
typedef struct srv_config {
    int port;
    char bind[64];
    char scene[32];
    int particles; /* 0: the scene's default */
    int capacity;  /* most particles the world can hold */
    double tick_hz;
    double frame_hz;
    int frame_bits;  /* 0: the default step (stream.c) */
    int frame_bands; /* 0: the codec's split (bands past 65536 particles), 1: none, K: K bands */
    int max_clients;
    char web_root[1024];
    char token[128];        /* the administrator's; empty: every caller is administrator */
    char secret_file[1024]; /* the invites' signing key (base/secret.h); empty: see --secret-file */
    char allow_origin[512]; /* extra browser origins allowed to connect and change the world; "*": any */
    int threads;            /* sim worker threads, including the sim thread (at most CONFIG_MAX_THREADS) */
    int substeps;           /* simulation steps per tick (each of 1/(tick_hz * substeps) s) */
    double step_budget;     /* share of a tick the first scene's tick may take when sized at start (0: off) */
    int rate_per_s;         /* per-client command rate limit */
    int rate_burst;
    int net_nice;            /* nice value of the network thread (Linux: per thread) */
    char log_level[16];      /* error, warn, info, debug */
    char data_dir[1024];     /* empty: no persistence */
    char record_dir[1024];   /* the recordings folder; empty: <data_dir>/recordings, or none */
    char record_start[1024]; /* --record DIR: that folder, and record from the start */
    double record_max_mb, record_max_s;
    /* all recordings together, MB; 0: from the free space at start (loop/rec_disk.h) */
    double record_total_mb;
    int mesh_max_mb;      /* largest mesh file POST /api/meshes takes, MB */
    int exports_per_min;  /* REST exports a party may start a minute (net/rest_budget.h) */
    int rebuilds_per_min; /* scene loads, solver switches, restores a world applies a minute (hub/rate.h) */
    double save_interval; /* seconds between saves while running (0: only at shutdown) */
    double room_idle_s;   /* a room without viewers, commands or REST requests this long sleeps (0: never) */
    double room_evict_s;  /* ... and asleep this long, with a folder, its world is freed until wanted (0: never) */
    char room[32];        /* a room's own copy: its name (rooms.c); empty in the server's */
    char tls_cert[1024];  /* PEM certificate (chain) file; empty: plain http/ws */
    char tls_key[1024];   /* PEM private key file; given together with tls_cert */
    bool quiet;
    /* relays over NATS (bus/) */
    char nats[512];       /* broker URL; empty: no NATS */
    char nats_token[256]; /* the broker's token auth */
    char nats_user[128], nats_pass[256];
    char world[64]; /* subjects are fluid.<world>.* */
    int relay;      /* 1: this node is a relay (no simulation) */
    int relay_id;   /* 1..2047: a relay's clients' ids carry it (0: from the process id) */
    char fleet[32]; /* a sim node of this fleet (fleet/): its rooms are the fleet's, in the KV bucket fluid_<fleet> */
    int node_id;    /* 1..65535: this node's id in its fleet */
    double fleet_save_s; /* seconds between a fleet room's snapshots to JetStream (0: only when it stops) */
    int fleet_replicas;  /* copies the broker cluster keeps of the fleet's bucket and snapshots (1-5) */
    char relays[1024];   /* the relays' page URLs, comma-separated: hello.relays, where a page reconnects */
    bool health_check;   /* --health-check: ask the running server's /api/health and exit */
} srv_config;

void config_defaults(srv_config *c);
/* Applies environment variables, then argv.  Returns 0 to run, 1 when
 * --help was printed, -1 on a bad option (message printed to err).
 * --tls-cert and --tls-key come together, and both files must be readable. */
int config_parse(srv_config *c, int argc, char **argv, FILE *out, FILE *err);
void config_usage(FILE *out);
/* True when the server serves https and wss (a certificate was given). */
bool config_tls(const srv_config *c);

/* The recordings folder the options give (--record, --record-dir, or
 * <data-dir>/recordings); false when there is none. */
bool config_record_dir(const srv_config *cfg, char *out, size_t n);

#endif
