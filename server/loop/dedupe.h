/* dedupe.h - the sim thread's memory of recent commands by page session and
 * request id, so that a command a page sends again after a failover (the
 * same sid and rid, through another relay or a new connection) is applied
 * once and answered with the first answer.  Sim thread only. */
#ifndef SRV_DEDUPE_H
#define SRV_DEDUPE_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "reply.h"

/* Bounds: sessions are forgotten least recently used first, and each keeps
 * its last DEDUPE_RIDS request ids (a page has far fewer in flight). */
#define DEDUPE_SESSIONS 256
#define DEDUPE_RIDS 32

/* One remembered command: its answer once posted (replied false while a
 * reply is held back, e.g. `step` until its steps are done). */
typedef struct dedupe_entry {
    uint32_t rid;
    bool used, replied;
    cmd_reply reply; /* values only: what it carries (snapshots) is never kept */
} dedupe_entry;

typedef struct dedupe dedupe;

dedupe *dedupe_create(void);
void dedupe_destroy(dedupe *d);
/* The entry of (sid, rid), or NULL when not remembered. */
const dedupe_entry *dedupe_find(dedupe *d, const char *sid, uint32_t rid);
/* Remembers (sid, rid) as applied, replacing the session's oldest entry (and
 * the least recently used session when the table is full). */
dedupe_entry *dedupe_add(dedupe *d, const char *sid, uint32_t rid);
/* Keeps r's values as e's answer. */
void dedupe_set_reply(dedupe_entry *e, const cmd_reply *r);

#endif
