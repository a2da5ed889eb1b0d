/* rest_answer.h - how a REST request is answered: a JSON document, a
 * refusal with its code, the origin and token check before a request may
 * change a world, and the wait for an answer another thread posts.
 * Network thread only. */
#ifndef SRV_REST_ANSWER_H
#define SRV_REST_ANSWER_H

#include <cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "http_req.h"
#include "msgbuf.h"
#include "net_internal.h"
#include "reply_code.h"
#include "roles.h"

/* Answers r with text (taken, malloc'd, NUL-terminated; NULL: empty). */
void rest_respond_text(net *n, http_req *r, int status, char *text);
/* Any other content: takes ownership of data (malloc'd, len bytes). */
void rest_respond_bytes(net *n, http_req *r, int status, const char *ctype, char *data, size_t len);
/* An immutable buffer (takes one reference; no copy). */
void rest_respond_msg(net *n, http_req *r, int status, const char *ctype, msg_buf *m);
/* Answers r with j (taken; NULL: out of memory). */
void rest_respond_json(net *n, http_req *r, int status, cJSON *j);
/* A refusal: the code's HTTP status (reply_code.h's table, the only place a
 * status of an error is chosen), and {"error": reason, "code": name}; a
 * code that asks for a wait says how long (Retry-After: 1 s unless the
 * caller set it). */
void rest_respond_error(net *n, http_req *r, reply_code code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* A request that would change a world from another site's page: answers
 * forbidden and returns true (headers only: before any body is read). */
bool rest_refuse_origin(net *n, http_req *r);
/* Sets r->role from its credential (Authorization: Bearer, the server's
 * token or an invite of r->room), or the room's public role without one.
 * False when it answered r: a credential that is wrong or refused (401). */
bool rest_grant(net *n, http_req *r);
/* A request whose role is below need: answers forbidden naming the role
 * needed ("'POST /api/pause' needs the editor role; ...") and returns true. */
bool rest_refuse_role(net *n, http_req *r, role need, const char *action);
/* r waits for an answer that another thread will post (a reply, a room
 * opened): on the pending list; after timeout_s its timer answers it
 * (rest_timed_out). */
void rest_wait(net *n, http_req *r, int timeout_s);
/* r's wait ran out: off the pending list (an answer that comes later is
 * dropped) and answered timeout (504), saying it may still be applied. */
void rest_timed_out(net *n, http_req *r);
/* The waiting request of that id taken off the pending list, or NULL. */
http_req *rest_take_pending(net *n, uint32_t id);

#endif
