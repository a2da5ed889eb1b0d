/* ws.h - the WebSocket stream protocol's lws callback (net.c registers it). */
#ifndef SRV_WS_H
#define SRV_WS_H

#include <libwebsockets.h>

int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);
/* The retired protocol fluid.v1: closes every connection with code 4001 and
 * a reason that says what the server speaks. */
int ws_v1_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);

#endif
