/* dedupe.c - recent commands by (session id, request id): a bounded table,
 * allocated once, so a retried command is applied once. */
#include "dedupe.h"

#include <stdlib.h>
#include <string.h>

typedef struct session {
    char sid[CMD_SID_LEN]; /* "": free */
    uint64_t last_use;
    int next; /* ring position of the next entry */
    dedupe_entry e[DEDUPE_RIDS];
} session;

struct dedupe {
    uint64_t clock;
    session s[DEDUPE_SESSIONS];
};

dedupe *dedupe_create(void) {
    return calloc(1, sizeof(dedupe));
}

void dedupe_destroy(dedupe *d) {
    free(d);
}

static session *find_session(dedupe *d, const char *sid) {
    for (int i = 0; i < DEDUPE_SESSIONS; i++)
        if (d->s[i].sid[0] && !strcmp(d->s[i].sid, sid)) return &d->s[i];
    return NULL;
}

const dedupe_entry *dedupe_find(dedupe *d, const char *sid, uint32_t rid) {
    session *s = find_session(d, sid);
    if (!s) return NULL;
    s->last_use = ++d->clock;
    for (int i = 0; i < DEDUPE_RIDS; i++)
        if (s->e[i].used && s->e[i].rid == rid) return &s->e[i];
    return NULL;
}

dedupe_entry *dedupe_add(dedupe *d, const char *sid, uint32_t rid) {
    session *s = find_session(d, sid);
    if (!s) {
        s = &d->s[0];
        for (int i = 1; i < DEDUPE_SESSIONS && s->sid[0]; i++)
            if (!d->s[i].sid[0] || d->s[i].last_use < s->last_use) s = &d->s[i];
        memset(s, 0, sizeof *s);
        cmd_strlcpy(s->sid, sizeof s->sid, sid);
    }
    s->last_use = ++d->clock;
    dedupe_entry *e = &s->e[s->next];
    s->next = (s->next + 1) % DEDUPE_RIDS;
    memset(e, 0, sizeof *e);
    e->used = true;
    e->rid = rid;
    return e;
}

void dedupe_set_reply(dedupe_entry *e, const cmd_reply *r) {
    e->reply = *r;
    e->reply.snap = NULL;
    e->reply.bodies = NULL;
    e->reply.blob = NULL;
    e->replied = true;
}
