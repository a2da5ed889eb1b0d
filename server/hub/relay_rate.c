/* relay_rate.c - the sim node's rate limits on relays (see relay_rate.h). */
#include "relay_rate.h"

#include <stdio.h>
#include <string.h>

int relay_rate_init(relay_rate *r, int per_s, int burst) {
    memset(r, 0, sizeof *r);
    if (per_s < 1 || burst < 1) return -1;
    r->per_s = per_s;
    r->burst = burst;
    if (rate_table_init(&r->clients, RELAY_RATE_CLIENTS, per_s, burst) ||
        rate_table_init(&r->relays, RELAY_RATE_RELAYS, (double)per_s * RELAY_RATE_SHARE,
                        (double)burst * RELAY_RATE_SHARE) ||
        rate_table_init(&r->relays_costly, RELAY_RATE_RELAYS, per_s, burst) ||
        rate_table_init(&r->answers, RELAY_RATE_RELAYS, (double)per_s * RELAY_RATE_SHARE,
                        (double)burst * RELAY_RATE_SHARE)) {
        relay_rate_free(r);
        return -1;
    }
    return 0;
}

void relay_rate_free(relay_rate *r) {
    rate_table_free(&r->clients);
    rate_table_free(&r->relays);
    rate_table_free(&r->relays_costly);
    rate_table_free(&r->answers);
}

bool relay_rate_spent(relay_rate *r, uint32_t relay, uint64_t now_ns) {
    rate_bucket *rb = rate_table_get(&r->relays, relay, now_ns);
    if (!rb) return false; /* the table full: relay_rate_take says so */
    rate_bucket_fill(rb, r->relays.per_s, r->relays.burst, now_ns);
    return rb->tokens < 1;
}

bool relay_rate_answer(relay_rate *r, uint32_t relay, uint64_t now_ns) {
    rate_bucket *ab = rate_table_get(&r->answers, relay, now_ns);
    if (ab) {
        rate_bucket_fill(ab, r->answers.per_s, r->answers.burst, now_ns);
        if (ab->tokens >= 1) {
            ab->tokens -= 1;
            return true;
        }
    }
    r->unanswered++;
    return false;
}

reply_code relay_rate_take(relay_rate *r, uint32_t relay, uint32_t client, bool rest, cmd_kind k, uint64_t now_ns,
                           char *why, size_t n) {
    rate_bucket *rb = rate_table_get(&r->relays, relay, now_ns);
    rate_bucket *cb = rb ? rate_table_get(&r->relays_costly, relay, now_ns) : NULL;
    rate_bucket *kb = rest || !cb ? NULL : rate_table_get(&r->clients, client, now_ns);
    if (!cb || (!rest && !kb)) {
        r->full++;
        if (!cb)
            snprintf(why, n, "busy: the sim node keeps the rate limits of at most %d relays at once, all in use",
                     RELAY_RATE_RELAYS);
        else
            snprintf(why, n, "busy: the sim node keeps the rate limits of at most %d relay clients at once, all in use",
                     RELAY_RATE_CLIENTS);
        return RC_BUSY;
    }
    double extra = rate_extra_cost(k), cost = 1 + extra;
    rate_bucket_fill(rb, r->relays.per_s, r->relays.burst, now_ns);
    rate_bucket_fill(cb, r->relays_costly.per_s, r->relays_costly.burst, now_ns);
    if (kb) rate_bucket_fill(kb, r->per_s, r->burst, now_ns);
    if (kb && kb->tokens < cost) {
        rate_refusal(why, n, kb->tokens >= 1 ? k : CMD_NONE, r->per_s, r->burst);
    } else if (rb->tokens < 1) {
        snprintf(why, n,
                 "rate limited: the clients of relay %u together send at most %d commands per second (burst %d)",
                 (unsigned)relay, r->per_s * RELAY_RATE_SHARE, r->burst * RELAY_RATE_SHARE);
    } else if (cb->tokens < extra) {
        snprintf(why, n,
                 "rate limited: %s costs %g of the %d per second that the clients of relay %u share for costly "
                 "commands",
                 cmd_kind_name(k), extra, r->per_s, (unsigned)relay);
    } else {
        if (kb) kb->tokens -= cost;
        rb->tokens -= 1;
        cb->tokens -= extra;
        return RC_OK;
    }
    r->limited++;
    return RC_RATE_LIMITED;
}

void relay_rate_left(relay_rate *r, uint32_t client) {
    rate_table_drop(&r->clients, client);
}

/* The relay's note, made when missing (replacing a free slot, else the
 * longest unheard relay that is not shed now), or NULL. */
static relay_note *note_of(relay_rate *r, uint32_t relay, uint64_t now_ns) {
    relay_note *free_slot = NULL, *oldest = NULL;
    for (int i = 0; i < RELAY_RATE_NOTED; i++) {
        relay_note *n = &r->note[i];
        if (n->relay == relay) return n;
        if (!n->relay) {
            if (!free_slot) free_slot = n;
        } else if (now_ns >= n->shed_until_ns && (!oldest || n->heard_ns < oldest->heard_ns)) {
            oldest = n;
        }
    }
    relay_note *n = free_slot ? free_slot : oldest;
    if (n) *n = (relay_note){.relay = relay};
    return n;
}

void relay_rate_heard(relay_rate *r, uint32_t relay, uint64_t now_ns) {
    relay_note *n = note_of(r, relay, now_ns);
    if (n) n->heard_ns = now_ns;
}

uint64_t relay_rate_flooding(relay_rate *r, uint32_t relay, uint64_t now_ns) {
    relay_note *n = note_of(r, relay, now_ns);
    if (!n || now_ns < n->shed_until_ns) return 0;
    uint64_t len = RELAY_RATE_SHED_NS;
    if (n->shed_len_ns && n->shed_until_ns + RELAY_RATE_STRIKES_NS > now_ns) /* again soon after its last */
        len = n->shed_len_ns * 2 < RELAY_RATE_SHED_MAX_NS ? n->shed_len_ns * 2 : RELAY_RATE_SHED_MAX_NS;
    n->heard_ns = now_ns;
    n->shed_from_ns = now_ns;
    n->shed_until_ns = now_ns + len;
    n->shed_len_ns = len;
    r->sheds++;
    return len;
}

bool relay_rate_refused(relay_rate *r, uint32_t relay, uint64_t now_ns, uint64_t *shed_ns) {
    const bool answer = relay_rate_answer(r, relay, now_ns);
    *shed_ns = answer ? 0 : relay_rate_flooding(r, relay, now_ns);
    return answer;
}

bool relay_rate_is_shed(const relay_rate *r, uint32_t relay, uint64_t now_ns) {
    for (int i = 0; i < RELAY_RATE_NOTED; i++)
        if (r->note[i].relay == relay) return now_ns < r->note[i].shed_until_ns;
    return false;
}

int relay_rate_readable(const relay_rate *r, uint64_t now_ns, uint32_t *out, int cap, bool *shedding) {
    *shedding = false;
    for (int i = 0; i < RELAY_RATE_NOTED; i++)
        if (r->note[i].relay && now_ns < r->note[i].shed_until_ns) *shedding = true;
    if (!*shedding) return 0;
    int k = 0;
    for (int i = 0; i < RELAY_RATE_NOTED; i++) {
        const relay_note *n = &r->note[i];
        if (n->relay && now_ns >= n->shed_until_ns && n->heard_ns + RELAY_RATE_KNOWN_NS > now_ns) {
            if (k < cap) out[k] = n->relay;
            k++;
        }
    }
    return k;
}
