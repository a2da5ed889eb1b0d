/* ws.h - the WebSocket stream protocol's lws callback (net.c registers it). */
#ifndef SRV_WS_H
#define SRV_WS_H

#include <libwebsockets.h>

int ws_callback(struct lws *wsi, enum lws_callback_reasons reason, void *user, void *in, size_t len);

#endif
