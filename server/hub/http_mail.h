/* http_mail.h - the REST writes that cross between the network thread and
 * the bus thread of a fleet's server (docs/fleet.md, "REST through the
 * fleet"), in four small rings: a request this server sends to the room's
 * holder and the answer it gets back, and a request a relay or another
 * node sent this holder and the answer it gives.  Each entry is a value and
 * one reference to an immutable encoded message (bus_http.h). */
#ifndef SRV_HTTP_MAIL_H
#define SRV_HTTP_MAIL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "msgbuf.h"
#include "room_name.h"

#define HTTP_MAIL_RING 16  /* entries waiting in each ring */
#define HTTP_MAIL_REPLY 96 /* a reply subject's bytes, its NUL included */

typedef enum http_mail_box {
    HTTP_OUT,    /* network -> bus: a request for the holder of `room` (or, `create`, for any node) */
    HTTP_BACK,   /* bus -> network: its answer, by `id` (status 0: no node holds the room now; -1: unreadable) */
    HTTP_IN,     /* bus -> network: a request for a room held here, answered on `reply` */
    HTTP_ANSWER, /* network -> bus: that answer, published on `reply` */
    HTTP_BOXES
} http_mail_box;

typedef struct http_mail_msg {
    uint32_t id; /* HTTP_OUT, HTTP_BACK: the waiting request's */
    bool create; /* HTTP_OUT: POST /api/rooms, for any node of the fleet */
    char room[ROOM_NAME_CAP];
    char reply[HTTP_MAIL_REPLY]; /* HTTP_IN, HTTP_ANSWER */
    int status;                  /* HTTP_BACK */
    msg_buf *msg;                /* the encoded request or answer (one reference), or NULL */
} http_mail_msg;

/* Threads: the network thread puts OUT and ANSWER and takes BACK and IN;
 * the bus thread the reverse; every field under mtx. */
typedef struct http_mail {
    pthread_mutex_t mtx;
    http_mail_msg ring[HTTP_BOXES][HTTP_MAIL_RING];
    int head[HTTP_BOXES], count[HTTP_BOXES];
} http_mail;

void http_mail_init(http_mail *m);
void http_mail_destroy(http_mail *m); /* drops the references still waiting */
/* Puts a copy of *e in box (its msg reference passes to the ring): false
 * when the box is full (the caller keeps the reference). */
bool http_mail_put(http_mail *m, http_mail_box box, const http_mail_msg *e);
/* Takes up to max entries of box, oldest first (their references pass to the caller). */
int http_mail_take(http_mail *m, http_mail_box box, http_mail_msg *out, int max);
/* How many entries wait in box now. */
int http_mail_count(http_mail *m, http_mail_box box);

#endif
