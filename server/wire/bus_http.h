/* bus_http.h - a REST request carried over the bus to the node that holds its
 * room, and that node's answer (docs/fleet.md, "REST through the fleet"):
 * a relay or a node of a fleet that does not hold a room sends the request
 * (HREQ) on the room's subject r.<room>.rest, or a relay's POST /api/rooms
 * on rooms.new, with a reply subject; the node runs it through its own REST
 * edge and answers the status, Retry-After and JSON body (HANS); a read
 * whose answer is not a JSON object within BUS_HTTP_ANSWER is answered
 * 421 misdirected instead, and the asker names the holder.  Both are
 * untrusted input: bounded, checked, fuzzed (fuzz_bus). */
#ifndef SRV_BUS_HTTP_H
#define SRV_BUS_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "msgbuf.h"
#include "room_name.h"

#define BUS_HTTP_PATH 160            /* a path below /api, its NUL included (http_req.path) */
#define BUS_HTTP_BODY 16384          /* a request's body (NET_MAX_BODY) */
#define BUS_HTTP_CRED 4096           /* its credential (BUS_MAX_CRED) */
#define BUS_HTTP_ANSWER (256u << 10) /* an answer's body */
#define BUS_HTTP_RETRY_MAX 3600      /* an answer's Retry-After, seconds */

/* A request: method (HM_GET, HM_POST, HM_PATCH or HM_DELETE), path below /api
 * (/rooms, or /rooms/<room> and what follows), the credential of its
 * Authorization: Bearer (0 bytes: none), its body (none for a GET). */
typedef struct bus_http_req {
    int method;
    char path[BUS_HTTP_PATH];
    char room[ROOM_NAME_CAP]; /* decoded: the room the path names ("" for /rooms) */
    const uint8_t *cred;      /* decoded: pointing into the message */
    size_t cred_len;
    const char *body; /* decoded: pointing into the message */
    size_t body_len;
} bus_http_req;
msg_buf *bus_encode_http_req(const bus_http_req *q);
/* 0, or -1 with the reason: a method other than those four, a GET with a
 * body, a path not under /rooms or with a byte outside printable ASCII, a
 * room name that breaks the rule, /rooms with a method other than POST, a
 * credential or body past its bound, a NUL in the credential. */
int bus_decode_http_req(const uint8_t *p, size_t n, bus_http_req *q, char *err, size_t errlen);

/* An answer: the HTTP status (200-599), Retry-After (0: none), a JSON
 * object's text. */
typedef struct bus_http_answer {
    int status;
    int retry_after;
    const char *body; /* decoded: pointing into the message */
    size_t body_len;
} bus_http_answer;
msg_buf *bus_encode_http_answer(const bus_http_answer *a);
/* 0, or -1 with the reason: a status or Retry-After out of range, a body
 * past its bound or that is not a JSON object. */
int bus_decode_http_answer(const uint8_t *p, size_t n, bus_http_answer *a, char *err, size_t errlen);

#endif
