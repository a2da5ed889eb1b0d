/* http_req.h - one REST request's state (lws per-session data of the http
 * protocol) and the bounds on requests and answers, shared by the files that
 * route, answer and stream them (rest.c, rest_answer.c, rest_rooms.c).
 * Network thread only. */
#ifndef SRV_HTTP_REQ_H
#define SRV_HTTP_REQ_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "http_mail.h"
#include "msgbuf.h"
#include "net_internal.h"
#include "rest_export.h"
#include "room_name.h"

#define NET_MAX_BODY 16384                        /* largest REST request body */
#define NET_MAX_SNAPSHOT_BODY ((size_t)256 << 20) /* largest POST /api/snapshot body */
/* Request bodies being received, all connections together (their declared
 * lengths, reserved when the headers arrive): one largest snapshot and room
 * for the small ones.  Beyond it a request gets 503 before its body is read. */
#define NET_MAX_BODY_BYTES_IN_FLIGHT (NET_MAX_SNAPSHOT_BODY + ((size_t)64 << 20))
#define NET_BODY_CHUNK ((size_t)64 << 10) /* a body buffer starts at this and doubles as bytes arrive */
#define NET_REST_TIMEOUT_S 10             /* a REST command must be answered within this */
#define NET_ROOM_OPEN_TIMEOUT_S 120       /* ... and POST /api/rooms (a world made and measured) within this */
/* An answer being sent is cut when its reader has taken nothing for this
 * long; a reader that keeps reading, however slowly, gets the whole answer. */
#define NET_REST_STALL_S 10
/* An idle HTTP/1.1 keep-alive connection is closed after this: well above
 * the time a client's pool reuses one (undici 4 s), so a request sent on a
 * pooled connection does not cross the server's close on a loaded host
 * (lws's default, 5 s, did: "other side closed" with no answer). */
#define NET_HTTP_IDLE_S 30
/* A request whose wait ran out is answered 504 (rest_timed_out); a
 * connection that still has not taken it this long after is closed. */
#define NET_REST_ANSWER_GRACE_S 5
#define NET_MAX_PENDING_REST 64        /* REST requests waiting for the sim at once (bounds snapshot memory) */
#define NET_MAX_RESP_BYTES (64u << 20) /* REST answers held for slow readers, all together */
/* The most of an answer one writable callback copies or writes out: a large
 * export or snapshot costs the network thread many small slices, between
 * which it sends frames and answers other requests. */
#define NET_REST_SLICE 16384

/* One REST request (lws per-session data of the http protocol).
 * Threads: network only. */
struct http_req {
    struct lws *wsi;
    struct http_req *next;
    net_room *room; /* the room addressed (a user of its view while the request lasts) */
    uint8_t role;   /* its role there (roles.h): its credential's, else the room's public role */
    bool granted;   /* a credential gave the role */
    msg_buf *cred;  /* a relay's: the request's credential (Authorization: Bearer), sent on with it */
    bool rooms_op;  /* /api/rooms, /api/rooms/{name} or one of its actions (rest_rooms.c); rooms_name: which */
    char rooms_name[ROOM_NAME_CAP];
    int rooms_action;      /* rest_rooms.c: 0 the room itself, or invites, rotate-key, a client's kick */
    uint32_t rooms_client; /* the client of a kick */
    uint32_t id;           /* without CMD_REST_BIT */
    bool active, linked, waiting, ready, headers_sent, close_after;
    int method;
    char path[160];
    bool metrics; /* GET /metrics (its own mount) */
    char *body;   /* grows as bytes arrive (body_alloc), never past body_cap + 1 */
    size_t body_len, body_cap, body_max, body_alloc;
    size_t body_reserved; /* this request's share of net.body_bytes */
    bool body_too_large;
    uint32_t pending_kind;
    int wait_s; /* how long it waits (rest_wait): then answered timeout (504) */
    char pending_name[CMD_NAME_LEN];
    int status;
    const char *ctype; /* NULL: application/json */
    msg_buf *resp_msg; /* the answer as an immutable buffer (one reference), else resp */
    char *resp;
    size_t resp_len, resp_off; /* resp_len: an export's is not known until its last byte (resp_off counts) */
    /* GET /api/particles?format=: the document is written from the snapshot as it is sent (rest_export.c) */
    export_job exp;
    size_t exp_held; /* the export's share of net.resp_bytes: its snapshot's memory */
    bool chunked;    /* the export goes in HTTP/1.1 chunks; else (HTTP/1.0) the connection's close ends it */
    int retry_after; /* > 0: a Retry-After header (seconds) with the answer */
    int heavy_place; /* > 0: an export or snapshot admitted by net.budget (rest_budget.h), given back at the end */
    int heavy_kind;  /* rest_heavy of heavy_place */
    bool held;       /* a refusal held before it is sent (rest_budget_refusal_held): its timer releases it */
    /* a relay: a route only its sim node serves, waiting for the role the node gives its credential (rest_relay.c) */
    bool role_check;
    uint8_t check_need;    /* the route's role (roles.h) */
    char check_action[64]; /* "METHOD /api/..." as the role table names it */
    /* a fleet (rest_proxy.c): a write sent to its room's holder over the bus, whose answer is this one's */
    bool proxy;
    uint8_t proxy_view;  /* where the room was in this server's view of the fleet when it was sent (rest_proxy.c) */
    uint8_t proxy_tries; /* sends no node answered (none read the room's subject yet) */
    bool proxy_again;    /* waiting to be sent again (its timer) */
    /* a fleet's holder: a request a relay or another node sent over the bus (no connection: wsi NULL); its
     * answer goes back on reply (rest.c, rest_bus_pump), and its wait ends at deadline_ns */
    bool from_bus;
    char reply[HTTP_MAIL_REPLY];
    uint64_t deadline_ns;
};

#endif
