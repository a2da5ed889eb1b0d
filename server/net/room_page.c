/* room_page.c - a room's page under /r/{name}/ (room_page.h). */
#define _XOPEN_SOURCE 700 /* realpath */
#include "room_page.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "room_name.h"
#include "rooms.h"

int room_page_is(const char *uri) {
    return !strncmp(uri, "/r/", 3) || !strcmp(uri, "/r");
}

/* A short answer with no body but its status line and text. */
static int answer(struct lws *wsi, unsigned status, const char *text) {
    return lws_return_http_status(wsi, status, text) || lws_http_transaction_completed(wsi) ? -1 : 0;
}

static int redirect(struct lws *wsi, const char *to) {
    uint8_t buf[LWS_PRE + 512], *start = buf + LWS_PRE, *p = start, *end = buf + sizeof buf - 1;
    if (lws_http_redirect(wsi, HTTP_STATUS_MOVED_PERMANENTLY, (const unsigned char *)to, (int)strlen(to), &p, end) < 0)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

int room_page_serve(net *n, struct lws *wsi, const char *uri) {
    const char *name = uri[2] ? uri + 3 : "";
    const char *slash = strchr(name, '/');
    size_t nl = slash ? (size_t)(slash - name) : strlen(name);
    char why[160], room_nm[ROOM_NAME_CAP];
    if (!room_name_ok(name, nl, why, sizeof why)) return answer(wsi, HTTP_STATUS_NOT_FOUND, why);
    memcpy(room_nm, name, nl);
    room_nm[nl] = 0;
    room *rm = room_find(n->dir, room_nm);
    if (!rm) {
        snprintf(why, sizeof why, "no room named '%s'", room_nm);
        return answer(wsi, HTTP_STATUS_NOT_FOUND, why);
    }
    room_unref(rm);
    if (!slash) { /* /r/{name}: the page's relative URLs need the slash */
        char to[ROOM_NAME_CAP + 8];
        snprintf(to, sizeof to, "/r/%s/", room_nm);
        return redirect(wsi, to);
    }
    const char *rel = slash[1] ? slash + 1 : "index.html";
    if (strstr(rel, "..") || strchr(rel, '\\')) return answer(wsi, HTTP_STATUS_NOT_FOUND, "no such file");
    char want[PATH_MAX], real[PATH_MAX];
    if (snprintf(want, sizeof want, "%s/%s", n->web_root, rel) >= (int)sizeof want || !realpath(want, real))
        return answer(wsi, HTTP_STATUS_NOT_FOUND, "no such file");
    size_t rl = strlen(n->web_root);
    if (strncmp(real, n->web_root, rl) || real[rl] != '/') /* a link out of the web root */
        return answer(wsi, HTTP_STATUS_NOT_FOUND, "no such file");
    const char *mime = lws_get_mimetype(real, &n->mount_root);
    int k = lws_serve_http_file(wsi, real, mime ? mime : "application/octet-stream", NULL, 0);
    return k < 0 || (k > 0 && lws_http_transaction_completed(wsi)) ? -1 : 0;
}
