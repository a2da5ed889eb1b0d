/* net.c - the network thread's libwebsockets context: the vhost on one port
 * (TLS or not), its mounts (static files at /, the REST API at /api,
 * /metrics), the two protocols (rest.c's http, ws.c's stream), the service
 * loop and the shutdown.  Everything here runs on the network thread,
 * except net_wake. */
#define _XOPEN_SOURCE 700 /* realpath */
#include "net.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "command.h"
#include "hub.h"
#include "log.h"
#include "net_internal.h"
#include "net_room.h"
#include "room_keeper.h"
#include "rooms.h"
#include "ws_frames.h"
#include "rest.h"
#include "rest_meshes.h"
#include "rest_recordings.h"
#include "ws.h"
#include "ws_client.h"

void net_wake(void *arg) {
    net *n = arg;
    if (n && n->ctx) lws_cancel_service(n->ctx);
}

/* libwebsockets' own lines go through log.c, so every line has one format. */
static void lws_emit(int level, const char *line) {
    size_t n = strlen(line);
    while (n && (line[n - 1] == '\n' || line[n - 1] == '\r')) n--;
    log_msg(level & LLL_ERR                   ? LOG_ERROR
            : level & LLL_WARN                ? LOG_WARN
            : level & (LLL_NOTICE | LLL_INFO) ? LOG_INFO
                                              : LOG_DEBUG,
            "lws: %.*s", (int)n, line);
}

void net_set_log_level(void) {
    const char *dbg = getenv("FLUID_LWS_LOG");
    log_level l = log_get_level();
    int lv = LLL_ERR | (l >= LOG_WARN ? LLL_WARN : 0) | (l >= LOG_DEBUG ? LLL_NOTICE : 0);
    lws_set_log_level(dbg ? atoi(dbg) : lv, lws_emit);
}

void net_set_relay(net *n, uint32_t relay_id) {
    n->relay_id = relay_id;
    n->next_client_id = relay_id << CMD_RELAY_SHIFT;
}

void net_set_secret(net *n, const secret_key *k) {
    n->secret = *k;
}

void net_set_keeper(net *n, room_keeper *k) {
    n->keeper = k;
}

int net_port(const net *n) {
    return n->vhost ? lws_get_vhost_listen_port(n->vhost) : -1;
}

/* ---- Context --------------------------------------------------------------- */

/* A mount point, before the next one in the vhost's list. */
static void mount(struct lws_http_mount *m, const char *point, const struct lws_http_mount *next) {
    memset(m, 0, sizeof *m);
    m->mount_next = next;
    m->mountpoint = point;
    m->mountpoint_len = (unsigned char)strlen(point);
}

net *net_create(const srv_config *cfg, const wire_static *st, rooms *dir, room *home) {
    net *n = calloc(1, sizeof *n);
    if (!n) return NULL;
    n->cfg = cfg;
    n->budget.exports_per_min = cfg->exports_per_min;
    n->st = st;
    n->dir = dir;
    room_ref(home);
    if (!(n->home = net_room_hold(n, home))) {
        free(n);
        return NULL;
    }
    n->home->home = true;
    if (!realpath(cfg->web_root, n->web_root)) {
        log_error("web root '%s' not found; static files will 404", cfg->web_root);
        snprintf(n->web_root, sizeof n->web_root, "%s", cfg->web_root);
    }

    n->protocols[0] = (struct lws_protocols){"http", rest_callback, sizeof(http_req), 0, 0, NULL, 0};
    n->protocols[1] =
        (struct lws_protocols){WIRE_SUBPROTOCOL, ws_callback, sizeof(ws_client), WIRE_MAX_MSG, 0, NULL, 0};
    /* Version 1 clients are told, in the close reason, to reload. */
    n->protocols[2] = (struct lws_protocols){WIRE_SUBPROTOCOL_V1, ws_v1_callback, 0, 0, 0, NULL, 0};
    /* A WebSocket upgrade that names no subprotocol gets fluid.v2 too. */
    n->pvo_default = (struct lws_protocol_vhost_options){NULL, NULL, "default", "1"};
    n->pvo = (struct lws_protocol_vhost_options){NULL, &n->pvo_default, WIRE_SUBPROTOCOL, ""};

    static const char *const mimes[][2] = {
        {".mjs", "text/javascript"}, {".wasm", "application/wasm"}, {".map", "application/json"},
        {".webp", "image/webp"},     {".md", "text/markdown"},      {".msgpack", "application/msgpack"},
    };
    for (int i = 0; i < 6; i++) {
        n->mime[i].next = i < 5 ? &n->mime[i + 1] : NULL;
        n->mime[i].name = mimes[i][0];
        n->mime[i].value = mimes[i][1];
    }
    mount(&n->mount_metrics, "/metrics", NULL);
    n->mount_metrics.protocol = "http";
    n->mount_metrics.origin_protocol = LWSMPRO_CALLBACK;
    mount(&n->mount_rooms, "/r", &n->mount_metrics); /* a room's page (room_page.c) */
    n->mount_rooms.protocol = "http";
    n->mount_rooms.origin_protocol = LWSMPRO_CALLBACK;
    mount(&n->mount_api, "/api", &n->mount_rooms);
    n->mount_api.protocol = "http";
    n->mount_api.origin_protocol = LWSMPRO_CALLBACK;
    mount(&n->mount_root, "/", &n->mount_api);
    n->mount_root.origin = n->web_root;
    n->mount_root.def = "index.html";
    n->mount_root.origin_protocol = LWSMPRO_FILE;
    n->mount_root.extra_mimetypes = &n->mime[0];

    memset(&n->retry, 0, sizeof n->retry);
    n->retry.secs_since_valid_ping = 20;   /* ping an idle WebSocket */
    n->retry.secs_since_valid_hangup = 45; /* and drop a dead one */

    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = cfg->port;
    info.iface = cfg->bind;
    info.protocols = n->protocols;
    info.pvo = &n->pvo;
    info.mounts = &n->mount_root;
    info.user = n;
    info.vhost_name = "fluid";
    info.server_string = "fluid-server";
    /* the headers of one request: an invite of up to INVITE_MAX_TOKEN bytes
     * (and one past it, refused with a reason) fits beside the others */
    info.max_http_header_data = 8192;
    info.keepalive_timeout = NET_HTTP_IDLE_S;
    info.retry_and_idle_policy = &n->retry;
    info.options = LWS_SERVER_OPTION_EXPLICIT_VHOSTS;
    if (config_tls(cfg)) {
        /* https and wss on the same port (minimal-http-server-tls): OpenSSL
         * is set up with the context, the certificate with the vhost.  ALPN
         * offers http/1.1 only: Debian's libwebsockets is built with HTTP/2,
         * which browsers would pick, and this server's request, body and
         * stream handling is the HTTP/1.1 path the tests cover. */
        info.options |= LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
        info.ssl_cert_filepath = cfg->tls_cert;
        info.ssl_private_key_filepath = cfg->tls_key;
        info.alpn = "http/1.1";
        /* libwebsockets 4.1.6 spins forever in its WebSocket read loop when
         * a connection is rx-flow-controlled (rx_pressure) while OpenSSL
         * still holds decrypted bytes of the record it last read: it loops
         * on SSL_pending() over a buflist it may not consume.  Reading with
         * a buffer that holds a whole TLS record (2^14 bytes of plaintext)
         * leaves nothing pending in OpenSSL, so that state cannot arise;
         * the service buffer must be at least as large. */
        n->protocols[1].rx_buffer_size = NET_TLS_RX_READ;
        info.pt_serv_buf_size = 2 * NET_TLS_RX_READ;
    }
    n->ctx = lws_create_context(&info);
    if (!n->ctx) {
        log_error("cannot create the libwebsockets context");
        net_room_free(n->home);
        free(n);
        return NULL;
    }
    n->vhost = lws_create_vhost(n->ctx, &info);
    if (!n->vhost) {
        if (config_tls(cfg))
            log_error("cannot listen on %s:%d over TLS with the certificate '%s' and the key '%s' "
                      "(libwebsockets' reason is logged above)",
                      cfg->bind, cfg->port, cfg->tls_cert, cfg->tls_key);
        else
            log_error("cannot listen on %s:%d", cfg->bind, cfg->port);
        lws_context_destroy(n->ctx);
        net_room_free(n->home);
        free(n);
        return NULL;
    }
    return n;
}

void net_run(net *n, volatile sig_atomic_t *stop) {
    while (!*stop)
        if (lws_service(n->ctx, 0) < 0) return;
    /* Shutdown: every WebSocket gets a close frame with a reason (1001,
     * "server shutting down"); wait for them to go, 500 ms at most. */
    n->closing = true;
    for (int i = 0; i < n->nrooms; i++)
        for (ws_client *c = n->room[i]->clients; c; c = c->next) lws_callback_on_writable(c->wsi);
    uint64_t until = clock_now_ns() + 500000000ull;
    while (n->nclients > 0 && clock_now_ns() < until)
        if (lws_service(n->ctx, 50) < 0) break;
    log_info("closed %s WebSocket connections", n->nclients ? "some" : "all");
    rest_mesh_join_all(n); /* before the rooms' hubs stop waking this thread */
}

void net_destroy(net *n) {
    if (!n) return;
    rest_abandon_all(n);
    lws_context_destroy(n->ctx); /* closes every connection (CLOSED frees per-client state) */
    memset(&n->secret, 0, sizeof n->secret);
    n->ctx = NULL;
    /* every view, with the replies nobody will read */
    for (int i = 0; i < n->nrooms; i++) net_room_free(n->room[i]);
    free(n);
}
