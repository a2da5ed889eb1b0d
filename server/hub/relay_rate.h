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

/* A relay that floods (refused for the rate more often than it may send:
 * over twice its share) is shed: the node stops reading its subject, so
 * that the broker drops its messages instead of delivering them, for
 * RELAY_RATE_SHED_NS, doubled at each shed that follows within
 * RELAY_RATE_STRIKES_NS of the last one's end, up to RELAY_RATE_SHED_MAX_NS. */
#define RELAY_RATE_SHED_NS 5000000000ull
#define RELAY_RATE_SHED_MAX_NS 80000000000ull
#define RELAY_RATE_STRIKES_NS 60000000000ull
#define RELAY_RATE_KNOWN_NS 10000000000ull /* a relay heard within this long is read while another is shed */
#define RELAY_RATE_NOTED 32                /* relays noted at once (heard, shed) */

typedef struct relay_note {
    uint32_t relay;                       /* 0: a free slot */
    uint64_t heard_ns;                    /* last heard (a command or its wants) */
    uint64_t shed_from_ns, shed_until_ns; /* its last shed (0, 0: none) */
    uint64_t shed_len_ns;                 /* how long it was */
} relay_note;

/* Threads: its owner's only (the sim node's bus, under its lock). */
typedef struct relay_rate {
    int per_s, burst;         /* a client's (--rate, --burst) */
    rate_table clients;       /* per relay client: per_s, burst */
    rate_table relays;        /* per relay, every message: RELAY_RATE_SHARE x */
    rate_table relays_costly; /* per relay, the extra costs only: per_s, burst */
    rate_table answers;       /* per relay, its refusals for the rate that are answered: RELAY_RATE_SHARE x */
    uint64_t limited, full;   /* refused: over a limit; a new client with the table full */
    uint64_t unanswered;      /* refusals for the rate dropped without an answer (relay_rate_answer) */
    relay_note note[RELAY_RATE_NOTED];
    uint64_t sheds; /* relays shed (relay_rate_flooding) */
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
/* The relay was heard (a command, or its frame wants): it is read while
 * another relay is shed, for RELAY_RATE_KNOWN_NS from now. */
void relay_rate_heard(relay_rate *r, uint32_t relay, uint64_t now_ns);
/* A refusal relay_rate_answer did not answer: the relay sends over twice
 * its share.  It is shed from now (see RELAY_RATE_SHED_NS): the length of
 * the shed, or 0 when it is shed already (or no slot is free to note it:
 * the oldest heard relay not shed is forgotten first). */
uint64_t relay_rate_flooding(relay_rate *r, uint32_t relay, uint64_t now_ns);
/* A refusal for the rate to a client of relay: whether it is answered
 * (relay_rate_answer); one that is not sheds the relay (relay_rate_flooding),
 * the shed's length in *shed_ns (0: no new shed). */
bool relay_rate_refused(relay_rate *r, uint32_t relay, uint64_t now_ns, uint64_t *shed_ns);
/* Whether the relay is shed at now_ns. */
bool relay_rate_is_shed(const relay_rate *r, uint32_t relay, uint64_t now_ns);
/* The relays to read at now_ns: with none shed, 0 (read every relay, a
 * wildcard); else the count of relays heard within RELAY_RATE_KNOWN_NS and
 * not shed (the first cap of them in out), and *shedding true. */
int relay_rate_readable(const relay_rate *r, uint64_t now_ns, uint32_t *out, int cap, bool *shedding);
/* The client left: its bucket is forgotten. */
void relay_rate_left(relay_rate *r, uint32_t client);

#endif
