/* relay_rate.h - the sim node's rate limits on what relays forward: each
 * relay client is held to a browser's limit (rate.h: --rate a second, burst
 * --burst, the same costs), and each relay as a whole to RELAY_RATE_SHARE
 * clients' worth of messages and one client's worth of the extra cost of
 * costly commands (scene loads, bodies), whatever client ids it names.  A
 * relay's REST requests (one id each) count against their relay only.
 * Pure: the caller passes the clock. */
#ifndef SRV_RELAY_RATE_H
#define SRV_RELAY_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "rate_table.h"
#include "reply_code.h"

#define RELAY_RATE_SHARE 16     /* a relay's messages: as many as this many clients may send */
#define RELAY_RATE_CLIENTS 4096 /* relays' clients whose buckets are kept at once */
#define RELAY_RATE_RELAYS 64    /* relays whose buckets are kept at once */

/* Threads: its owner's only (the sim node's bus, under its lock). */
typedef struct relay_rate {
    int per_s, burst;         /* a client's (--rate, --burst) */
    rate_table clients;       /* per relay client: per_s, burst */
    rate_table relays;        /* per relay, every message: RELAY_RATE_SHARE x */
    rate_table relays_costly; /* per relay, the extra costs only: per_s, burst */
    rate_table answers;       /* per relay, its refusals for the rate that are answered: RELAY_RATE_SHARE x */
    uint64_t limited, full;   /* refused: over a limit; a new client with the table full */
    uint64_t unanswered;      /* refusals for the rate dropped without an answer (relay_rate_answer) */
} relay_rate;

/* 0, or -1 (out of memory, or per_s or burst below 1). */
int relay_rate_init(relay_rate *r, int per_s, int burst);
void relay_rate_free(relay_rate *r);
/* Charges one message of kind k (CMD_NONE: one that did not decode) from
 * `client` of `relay` (rest: a REST request, charged to the relay only):
 * RC_OK, or, taking nothing, RC_RATE_LIMITED (over a limit) or RC_BUSY (the
 * tables full), with the refusal for the client in why. */
reply_code relay_rate_take(relay_rate *r, uint32_t relay, uint32_t client, bool rest, cmd_kind k, uint64_t now_ns,
                           char *why, size_t n);
/* Whether the relay's own bucket is empty at now_ns (its clients together
 * have sent their share): its next message is refused before it is read.
 * Takes nothing. */
bool relay_rate_spent(relay_rate *r, uint32_t relay, uint64_t now_ns);
/* Whether a refusal for the rate to a client of relay is answered: at most
 * as many a second as the relay may send messages (RELAY_RATE_SHARE
 * clients' worth, the same burst), so a relay's burst is answered whole but
 * a relay that floods the node is not answered each message, which would
 * double the traffic it caused; false counts it in `unanswered`. */
bool relay_rate_answer(relay_rate *r, uint32_t relay, uint64_t now_ns);
/* The client left: its bucket is forgotten. */
void relay_rate_left(relay_rate *r, uint32_t client);

#endif
