/* room_page.h - a room's page, /r/{name}/: the web client's files served
 * from the web root under the room's path (so the page's relative URLs stay
 * in the room), /r/{name} redirected to /r/{name}/, 404 for a room that is
 * not listed.  Network thread only. */
#ifndef SRV_ROOM_PAGE_H
#define SRV_ROOM_PAGE_H

#include <libwebsockets.h>

#include "net_internal.h"

/* Whether uri (the request's path) is under /r. */
int room_page_is(const char *uri);
/* Answers the request for uri; the lws callback's return value. */
int room_page_serve(net *n, struct lws *wsi, const char *uri);

#endif
