/* rest_budget.h - how much of the server's heavy work each REST party may
 * ask for: an export (GET /api/particles?format=...) or a snapshot (GET
 * /api/snapshot) has the sim thread copy the whole world and holds a
 * document on the network thread until its reader has taken it.  A party
 * may have REST_PARTY_HEAVY of them under way at once, REST_EXPORTS_PER_MIN
 * exports and REST_SNAPSHOTS_PER_MIN snapshots a minute (token buckets that
 * refill continuously, holding a small burst), and all parties together
 * REST_HEAVY_MAX at once.  Recording starts, and reads of the recordings
 * (the listing, a recording's files), are paid for from buckets of their
 * own.  A party refused for its own budget more than REST_REFUSALS_BURST
 * times in a row (REST_REFUSALS_PER_MIN refill it) has its next refusals
 * held for a moment before they are sent (rest_budget_refusal_held): a
 * client that does not wait for Retry-After then costs the server one
 * request a hold per connection, not as many as it can send.
 * A party is the peer address (an IPv6 address by its /64, which one host
 * is given whole), apart for requests that carry the server's token.  The
 * table of parties is bounded: a new party takes the place of the one least
 * recently seen among those with nothing under way.  Pure (the caller gives
 * the time); network thread only. */
#ifndef SRV_REST_BUDGET_H
#define SRV_REST_BUDGET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REST_PARTIES 256        /* parties remembered */
#define REST_PARTY_HEAVY 2      /* exports and snapshots under way at once, per party */
#define REST_HEAVY_MAX 8        /* ... and for all parties together */
#define REST_EXPORTS_PER_MIN 12 /* exports a party may start a minute (--exports-per-min sets it) */
#define REST_EXPORTS_BURST 8    /* ... and at once, after a pause */
#define REST_SNAPSHOTS_PER_MIN 6
#define REST_SNAPSHOTS_BURST 2
#define REST_RECORD_STARTS_PER_MIN 30 /* recording starts (each codes a keyframe and opens files) */
#define REST_RECORD_STARTS_BURST 10
#define REST_REC_READS_PER_MIN 1800 /* the recordings' listing (a page of 100) and files */
#define REST_REC_READS_BURST 100
#define REST_REFUSALS_PER_MIN 600 /* refusals for a party's own budget answered at once ... */
#define REST_REFUSALS_BURST 10
#define REST_HOLD_MS 1000 /* ... and beyond them, each held this long before it is sent */
#define REST_HELD_MAX 256 /* refusals held at once, all parties together (then sent at once) */
#define REST_PARTY_KEY 64 /* a party's name: an address, and "+token" */

/* What a party's buckets count: the heavy answers (exports, snapshots:
 * admitted, under way, released) and the light ones only paid for
 * (rest_budget_take: recording starts, reads of the recordings; and the
 * refusals answered at once, rest_budget_refusal_held). */
typedef enum rest_heavy {
    REST_HEAVY_EXPORT,
    REST_HEAVY_SNAPSHOT,
    REST_RECORD_START,
    REST_REC_READ,
    REST_REFUSAL,
    REST_HEAVY_KINDS
} rest_heavy;

/* What rest_budget_admit decided. */
typedef enum rest_verdict {
    REST_ADMITTED,
    REST_PARTY_RATE,  /* the party's bucket of this kind is empty (429) */
    REST_PARTY_BUSY,  /* the party has REST_PARTY_HEAVY under way (429) */
    REST_SERVER_BUSY, /* REST_HEAVY_MAX under way, all parties together (503) */
} rest_verdict;

typedef struct rest_party {
    char key[REST_PARTY_KEY]; /* "": a free place */
    uint64_t seen_ns;         /* last admitted or refused */
    uint64_t filled_ns;       /* when the buckets were last topped up */
    double tokens[REST_HEAVY_KINDS];
    int under_way;
} rest_party;

/* Threads: network thread only (a value inside struct net). */
typedef struct rest_budget {
    rest_party party[REST_PARTIES];
    int under_way;                      /* all parties together */
    uint64_t refused[REST_HEAVY_KINDS]; /* by a party's own budget (429) */
    uint64_t refused_busy;              /* by REST_HEAVY_MAX (503) */
    uint64_t parties_forgotten;         /* places taken over by a new party */
    int exports_per_min;                /* --exports-per-min (0: REST_EXPORTS_PER_MIN, burst REST_EXPORTS_BURST) */
} rest_budget;

/* The party name of a peer address as lws prints it ("127.0.0.1",
 * "::ffff:127.0.0.1", "2001:db8::1"): IPv4 as it is, IPv6 by its /64; with
 * the server's token, "+token" after it. */
void rest_party_key(const char *peer, bool token, char *key, size_t cap);

/* One heavy answer of `kind` for party `key` at now_ns.  Admitted: returns
 * the party's place + 1 (to give back with rest_budget_release when the
 * answer ends, sent or cut), and the party's bucket paid one token.
 * Refused: returns 0, *why says by what, *retry_after_s when to try again
 * (at least 1 s). */
int rest_budget_admit(rest_budget *b, const char *key, rest_heavy kind, uint64_t now_ns, rest_verdict *why,
                      int *retry_after_s);
/* One light request of `kind` (REST_RECORD_START, REST_REC_READ) for party
 * `key`: true when its bucket paid a token; false, with *retry_after_s, when
 * the bucket is empty (or no place is free for a new party). */
bool rest_budget_take(rest_budget *b, const char *key, rest_heavy kind, uint64_t now_ns, int *retry_after_s);
/* The same for a request that costs `cost` tokens (1 to the kind's burst):
 * a listing's larger page. */
bool rest_budget_pay(rest_budget *b, const char *key, rest_heavy kind, double cost, uint64_t now_ns,
                     int *retry_after_s);
/* Party `key` was refused for its own budget: true when the refusal is to
 * be held REST_HOLD_MS before it is sent (its bucket of refusals answered
 * at once is empty; counted in refused[REST_REFUSAL]). */
bool rest_budget_refusal_held(rest_budget *b, const char *key, uint64_t now_ns);
/* The limits of kind, for messages. */
int rest_budget_per_minute(const rest_budget *b, rest_heavy kind);
/* The answer admitted as `place` ended. */
void rest_budget_release(rest_budget *b, int place);
/* The answer admitted as `place` was never started (the server refused it
 * for another reason): released, and its token given back. */
void rest_budget_cancel(rest_budget *b, int place, rest_heavy kind);

#endif
