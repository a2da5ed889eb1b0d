/* bus_options.c - the NATS client's options this server's connections share
 * (see bus_options.h).  One URL is the client's URL; several are its pool,
 * which it tries in turn at the start and at every reconnection (a
 * cluster's servers also tell the client of each other once it is
 * connected). */
#include "bus_options.h"

#include <stdio.h>
#include <string.h>

int bus_set_servers(natsOptions *o, const char *list, char *err, size_t errlen) {
    char buf[512], *url[BUS_MAX_SERVERS];
    if (strlen(list) >= sizeof buf) {
        snprintf(err, errlen, "--nats: longer than %zu characters", sizeof buf - 1);
        return -1;
    }
    snprintf(buf, sizeof buf, "%s", list);
    int n = 0;
    for (char *p = buf;; n++) {
        char *comma = strchr(p, ',');
        if (comma) *comma = 0;
        while (*p == ' ') p++;
        for (char *e = p + strlen(p); e > p && e[-1] == ' ';) *--e = 0;
        if (!*p) {
            snprintf(err, errlen, "--nats '%s': an empty URL in the list", list);
            return -1;
        }
        if (n == BUS_MAX_SERVERS) {
            snprintf(err, errlen, "--nats: more than %d servers", BUS_MAX_SERVERS);
            return -1;
        }
        url[n] = p;
        if (!comma) break;
        p = comma + 1;
    }
    n++;
    natsStatus s = n == 1 ? natsOptions_SetURL(o, url[0]) : natsOptions_SetServers(o, (const char **)url, n);
    if (s != NATS_OK) {
        snprintf(err, errlen, "--nats %s: %s", list, natsStatus_GetText(s));
        return -1;
    }
    return 0;
}

bool bus_user_scope(const srv_config *cfg, char out[BUS_SCOPE_MAX + 1]) {
    size_t n = strlen(cfg->nats_user);
    if (!cfg->fleet[0] || !n || n > BUS_SCOPE_MAX) return false;
    for (size_t i = 0; i < n; i++) {
        char c = cfg->nats_user[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-'))
            return false;
    }
    memcpy(out, cfg->nats_user, n + 1);
    return true;
}

int bus_options_make(natsOptions **out, const srv_config *cfg, natsConnectionHandler on_up,
                     natsConnectionHandler on_down, void *closure, char *err, size_t errlen) {
    natsOptions *o = NULL;
    natsStatus s = natsOptions_Create(&o);
    if (s != NATS_OK) {
        snprintf(err, errlen, "--nats %s: %s", cfg->nats, natsStatus_GetText(s));
        *out = NULL;
        return -1;
    }
    if (bus_set_servers(o, cfg->nats, err, errlen)) {
        natsOptions_Destroy(o);
        *out = NULL;
        return -1;
    }
    if (cfg->nats_token[0]) s = natsOptions_SetToken(o, cfg->nats_token);
    if (s == NATS_OK && cfg->nats_user[0]) s = natsOptions_SetUserInfo(o, cfg->nats_user, cfg->nats_pass);
    char scope[BUS_SCOPE_MAX + 1], prefix[BUS_SCOPE_MAX + 8];
    if (s == NATS_OK && bus_user_scope(cfg, scope)) {
        snprintf(prefix, sizeof prefix, "_INBOX.%s", scope);
        s = natsOptions_SetCustomInboxPrefix(o, prefix);
    }
    if (s == NATS_OK) s = natsOptions_SetMaxReconnect(o, -1); /* for ever */
    if (s == NATS_OK) s = natsOptions_SetReconnectWait(o, 250);
    if (s == NATS_OK) s = natsOptions_SetRetryOnFailedConnect(o, true, on_up, closure);
    if (s == NATS_OK) s = natsOptions_SetDisconnectedCB(o, on_down, closure);
    if (s == NATS_OK) s = natsOptions_SetReconnectedCB(o, on_up, closure);
    if (s != NATS_OK) {
        snprintf(err, errlen, "--nats %s: %s", cfg->nats, natsStatus_GetText(s));
        natsOptions_Destroy(o);
        *out = NULL;
        return -1;
    }
    *out = o;
    return 0;
}
