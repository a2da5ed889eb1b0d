/* rest.h - the REST API's HTTP side (lws protocol "http", mounted at /api and
 * /metrics): one request's state, the callback net.c registers, and the
 * delivery of the sim thread's replies.  Network thread only. */
#ifndef SRV_REST_H
#define SRV_REST_H

#include <cJSON.h>
#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "msgbuf.h"
#include "http_req.h"
#include "net_internal.h"
#include "rest_export.h"
#include "rest_route.h" /* HM_* */
#include "snapshots.h"
#include "reply.h"

int rest_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);
/* A reply for a REST request (client has CMD_REST_BIT): answers it if it
 * still waits. */
void rest_deliver(net *n, cmd_reply *r);
/* A fleet's REST writes over the bus (rest_proxy.h): the answers to those
 * this server sent, and the requests sent to this holder, run and answered. */
void rest_bus_pump(net *n);
/* Shutdown: no waiting request will be answered. */
void rest_abandon_all(net *n);

#endif
