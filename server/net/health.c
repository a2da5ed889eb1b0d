/* health.c - `fluid-server --health-check`: one GET /api/health against the
 * server the same options describe (its port, its bind address, https when
 * it has a certificate), for a container's HEALTHCHECK.  It needs no shell,
 * curl or openssl in the image, and works the same with TLS on or off.
 *
 * It checks that the local process answers, not who it is: over TLS it does
 * not verify the certificate (issued for a public name, not for 127.0.0.1),
 * and it sends nothing secret.  Runs in its own short-lived process, on one
 * thread; nothing here is shared with the server's threads. */
#include "health.h"

#include <libwebsockets.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net.h"

/* Within a container health check's usual 5 s timeout: 3 s to connect,
 * 4 s in all. */
#define HEALTH_CONNECT_S 3
#define HEALTH_TOTAL_S 4

typedef struct health_state {
    int status;     /* HTTP status, 0 until the headers came */
    bool done;      /* completed, closed or failed */
    char err[160];  /* why the connection failed */
    char body[128]; /* the start of the answer, for the log */
    size_t body_len;
    lws_sorted_usec_list_t deadline; /* ends the wait after HEALTH_TOTAL_S */
    struct lws_context *ctx;
} health_state;

static void health_deadline(lws_sorted_usec_list_t *sul) {
    health_state *h = lws_container_of(sul, health_state, deadline);
    if (!h->done) snprintf(h->err, sizeof h->err, "no answer within %d s", HEALTH_TOTAL_S);
    h->done = true;
    lws_cancel_service(h->ctx); /* lws_service returns now, not at its next timer */
}

static int health_cb(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len) {
    health_state *h = lws_context_user(lws_get_context(wsi));
    (void)user;
    switch (reason) {
    case LWS_CALLBACK_CLIENT_CONNECTION_ERROR:
        snprintf(h->err, sizeof h->err, "%s", in ? (const char *)in : "connection failed");
        h->done = true;
        return 0;
    case LWS_CALLBACK_ESTABLISHED_CLIENT_HTTP:
        h->status = (int)lws_http_client_http_response(wsi);
        break;
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP_READ: {
        size_t space = sizeof h->body - 1 - h->body_len;
        size_t k = len < space ? len : space;
        memcpy(h->body + h->body_len, in, k);
        h->body_len += k;
        h->body[h->body_len] = 0;
        return 0;
    }
    case LWS_CALLBACK_RECEIVE_CLIENT_HTTP: {
        char buf[LWS_PRE + 1024];
        char *p = buf + LWS_PRE;
        int l = (int)sizeof buf - LWS_PRE;
        return lws_http_client_read(wsi, &p, &l) < 0 ? -1 : 0;
    }
    case LWS_CALLBACK_COMPLETED_CLIENT_HTTP:
    case LWS_CALLBACK_CLOSED_CLIENT_HTTP:
        h->done = true;
        lws_cancel_service(lws_get_context(wsi));
        break;
    default:
        break;
    }
    return lws_callback_http_dummy(wsi, reason, user, in, len);
}

int health_check(const srv_config *cfg) {
    if (cfg->port == 0) {
        fprintf(stderr, "fluid-server: --health-check needs the server's port (--port or FLUID_PORT), not 0\n");
        return 2;
    }
    /* A server bound to every interface is reached on loopback. */
    const char *addr = cfg->bind;
    if (!addr[0] || !strcmp(addr, "0.0.0.0"))
        addr = "127.0.0.1";
    else if (!strcmp(addr, "::"))
        addr = "::1";
    log_set_level(LOG_ERROR);
    net_set_log_level();

    health_state h;
    memset(&h, 0, sizeof h);
    static const struct lws_protocols protocols[] = {{"http", health_cb, 0, 0, 0, NULL, 0},
                                                     {NULL, NULL, 0, 0, 0, NULL, 0}};
    struct lws_context_creation_info info;
    memset(&info, 0, sizeof info);
    info.port = CONTEXT_PORT_NO_LISTEN;
    info.protocols = protocols;
    info.user = &h;
    info.connect_timeout_secs = HEALTH_CONNECT_S;
    info.fd_limit_per_thread = 3;
    if (config_tls(cfg)) info.options = LWS_SERVER_OPTION_DO_SSL_GLOBAL_INIT;
    struct lws_context *ctx = lws_create_context(&info);
    if (!ctx) {
        fprintf(stderr, "fluid-server: health check: cannot create the libwebsockets context\n");
        return 1;
    }

    h.ctx = ctx;
    struct lws_client_connect_info ci;
    memset(&ci, 0, sizeof ci);
    ci.context = ctx;
    ci.address = addr;
    ci.port = cfg->port;
    ci.path = "/api/health";
    ci.host = "localhost";
    ci.method = "GET";
    ci.protocol = protocols[0].name;
    ci.alpn = "http/1.1";
    if (config_tls(cfg))
        ci.ssl_connection = LCCSCF_USE_SSL | LCCSCF_ALLOW_SELFSIGNED | LCCSCF_SKIP_SERVER_CERT_HOSTNAME_CHECK |
                            LCCSCF_ALLOW_EXPIRED | LCCSCF_ALLOW_INSECURE;
    struct lws *wsi = NULL;
    ci.pwsi = &wsi;
    if (!lws_client_connect_via_info(&ci) && !h.done)
        snprintf(h.err, sizeof h.err, "cannot start the request");
    else {
        lws_sul_schedule(ctx, 0, &h.deadline, health_deadline, (lws_usec_t)HEALTH_TOTAL_S * LWS_US_PER_SEC);
        while (!h.done)
            if (lws_service(ctx, 0) < 0) break;
        lws_sul_cancel(&h.deadline);
    }
    lws_context_destroy(ctx);

    const char *url_scheme = config_tls(cfg) ? "https" : "http";
    if (h.status == 200) {
        printf("fluid-server: health: %s://%s:%d/api/health answered 200 %s\n", url_scheme, addr, cfg->port, h.body);
        return 0;
    }
    if (h.status)
        fprintf(stderr, "fluid-server: health: %s://%s:%d/api/health answered %d %s\n", url_scheme, addr, cfg->port,
                h.status, h.body);
    else
        fprintf(stderr, "fluid-server: health: %s://%s:%d/api/health: %s\n", url_scheme, addr, cfg->port,
                h.err[0] ? h.err : "no answer");
    return 1;
}
