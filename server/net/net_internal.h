/* net_internal.h - state shared by net.c (WebSocket, routing) and rest.c
 * (HTTP).  Everything here is touched by the network thread only. */
#ifndef SRV_NET_INTERNAL_H
#define SRV_NET_INTERNAL_H

#include <libwebsockets.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include "net.h"
#include "rest_route.h" /* HM_* */

#define NET_FRAGMENT 32768     /* bytes per WebSocket fragment sent */
#define NET_REPLY_RING 256     /* queued control messages per client */
#define NET_TLS_RX_READ 16384 /* over TLS, bytes read at once: one whole TLS record (see net_create) */
#define NET_RX_PAUSE_AT 64     /* stop reading a client with this many unsent replies */
#define NET_MAX_BODY 16384     /* largest REST request body */
#define NET_MAX_SNAPSHOT_BODY ((size_t)256 << 20) /* largest POST /api/snapshot body */
/* Request bodies being received, all connections together (their declared
 * lengths, reserved when the headers arrive): one largest snapshot and room
 * for the small ones.  Beyond it a request gets 503 before its body is read. */
#define NET_MAX_BODY_BYTES_IN_FLIGHT (NET_MAX_SNAPSHOT_BODY + ((size_t)64 << 20))
#define NET_BODY_CHUNK ((size_t)64 << 10) /* a body buffer starts at this and doubles as bytes arrive */
#define NET_SEND_TIMEOUT_S 30  /* a message must drain within this */
#define NET_REST_TIMEOUT_S 10  /* a REST command must be answered within this */
#define NET_MAX_PENDING_REST 64 /* REST requests waiting for the sim at once (bounds snapshot memory) */
#define NET_MAX_RESP_BYTES (64u << 20) /* REST answers held for slow readers, all together */
#define NET_MAX_BAD_IN_A_ROW 32
#define NET_CLOSE_QUIET_US 200000               /* before closing a bad client: 200 ms of quiet */
#define NET_CLOSE_MAX_WAIT_NS 2000000000ull     /* but no more than 2 s */

/* One WebSocket connection (lws per-session data).  Threads: network only. */
typedef struct ws_client {
    struct lws *wsi;
    struct ws_client *next;
    uint32_t id;
    bool linked, authed, reject, hello_pending, rx_paused, close_bad, close_ready;
    uint64_t close_bad_ns;
    msg_buf *ctl[NET_REPLY_RING]; /* replies and errors, oldest first */
    int ctl_head, ctl_count;
    uint64_t bcast_next;   /* next broadcast seq to send */
    uint64_t frame_seq;    /* seq of the last frame started */
    msg_buf *cur;          /* message being sent, fragment by fragment */
    size_t cur_off;
    bool cur_is_frame;
    uint8_t *scratch;      /* LWS_PRE + NET_FRAGMENT */
    uint8_t rx[WIRE_MAX_MSG];
    size_t rx_len;
    bool rx_in_msg, rx_overflow, rx_text;
    double tokens;
    uint64_t tokens_ns;
    int bad_in_a_row;
    int inflight;          /* commands queued that will get a reply */
    char url_token[128];
    char peer[64];
    uint64_t connected_ns;
    uint64_t frames_sent, frames_dropped, bytes_sent, commands, bad; /* this client's share of the counters */
} ws_client;

/* One REST request (lws per-session data of the http protocol).
 * Threads: network only. */
typedef struct http_req {
    struct lws *wsi;
    struct http_req *next;
    uint32_t id;           /* without CMD_REST_BIT */
    bool active, linked, waiting, ready, headers_sent, close_after;
    int method;
    char path[160];
    bool metrics;          /* GET /metrics (its own mount) */
    char *body;            /* grows as bytes arrive (body_alloc), never past body_cap + 1 */
    size_t body_len, body_cap, body_max, body_alloc;
    size_t body_reserved;  /* this request's share of net.body_bytes */
    bool body_too_large;
    uint32_t pending_kind;
    char pending_name[CMD_NAME_LEN];
    int status;
    const char *ctype;     /* NULL: application/json */
    msg_buf *resp_msg;     /* the answer as an immutable buffer (one reference), else resp */
    char *resp;
    size_t resp_len, resp_off;
} http_req;

/* Threads: network thread only (the sim thread reaches only `ctx`, through
 * lws_cancel_service). */
struct net {
    const srv_config *cfg;
    const wire_static *st;
    hub *hub;
    cmd_queue *queue;
    struct lws_context *ctx;
    struct lws_vhost *vhost;
    char web_root[PATH_MAX];
    struct lws_http_mount mount_root, mount_api, mount_metrics;
    bool closing; /* shutting down: every WebSocket gets a close frame */
    struct lws_protocol_vhost_options mime[6], pvo_default, pvo;
    struct lws_protocols protocols[3];
    lws_retry_bo_t retry;
    ws_client *clients;
    int nclients;
    uint32_t next_client_id;
    http_req *pending; /* REST requests waiting for a reply from the sim thread */
    int npending;
    size_t resp_bytes; /* REST answer bytes held (until written or the connection goes) */
    size_t body_bytes; /* request body bytes reserved (NET_MAX_BODY_BYTES_IN_FLIGHT) */
    uint32_t next_http_id;
    msg_buf *frame;
    uint64_t frame_seq;
    msg_buf *bcast[HUB_BCAST_RING];
    uint64_t bcast_next; /* seq after the newest broadcast held */
    /* counters */
    uint64_t frames_sent, frames_dropped, bytes_sent, messages_sent;
    uint64_t bad_messages, rate_limited, queue_busy, replies_dropped, http_requests, ws_rejected, origin_refused;
};

/* net.c */
bool net_enqueue(net *n, cmd *c, bool internal);
bool net_token_ok(const net *n, const char *token);
/* A request without an Origin header (not a browser), from this server's own
 * origin, or from one in --allow-origin. */
bool net_origin_ok(const net *n, struct lws *wsi);
/* rest.c */
int rest_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);
void rest_deliver(net *n, cmd_reply *r);
void rest_abandon_all(net *n);

#endif
