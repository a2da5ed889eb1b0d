/* rest_budget.c - the heavy-work budget of each REST party (see
 * rest_budget.h). */
#include "rest_budget.h"

#include <arpa/inet.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define MINUTE_NS 60e9

static const double per_minute[REST_HEAVY_KINDS] = {
    [REST_HEAVY_EXPORT] = REST_EXPORTS_PER_MIN,       [REST_HEAVY_SNAPSHOT] = REST_SNAPSHOTS_PER_MIN,
    [REST_RECORD_START] = REST_RECORD_STARTS_PER_MIN, [REST_REC_READ] = REST_REC_READS_PER_MIN,
    [REST_REFUSAL] = REST_REFUSALS_PER_MIN,
};
static const double burst[REST_HEAVY_KINDS] = {
    [REST_HEAVY_EXPORT] = REST_EXPORTS_BURST,       [REST_HEAVY_SNAPSHOT] = REST_SNAPSHOTS_BURST,
    [REST_RECORD_START] = REST_RECORD_STARTS_BURST, [REST_REC_READ] = REST_REC_READS_BURST,
    [REST_REFUSAL] = REST_REFUSALS_BURST,
};

/* A kind's rate and burst: the defaults, but for exports when
 * b->exports_per_min is set (--exports-per-min: a burst of two thirds). */
static double rate_of(const rest_budget *b, rest_heavy k) {
    return k == REST_HEAVY_EXPORT && b->exports_per_min > 0 ? b->exports_per_min : per_minute[k];
}
static double burst_of(const rest_budget *b, rest_heavy k) {
    if (k != REST_HEAVY_EXPORT || b->exports_per_min <= 0) return burst[k];
    double x = floor(b->exports_per_min * 2.0 / 3.0);
    return x < 1 ? 1 : x;
}

int rest_budget_per_minute(const rest_budget *b, rest_heavy kind) {
    return (int)rate_of(b, kind);
}

void rest_party_key(const char *peer, bool token, char *key, size_t cap) {
    const char *tail = token ? "+token" : "";
    unsigned char a[16];
    if (!*peer) peer = "?";                                               /* (an empty name marks a free place) */
    if (!strncmp(peer, "::ffff:", 7) && strchr(peer + 7, '.')) peer += 7; /* IPv4 on a dual-stack socket */
    if (strchr(peer, ':') && inet_pton(AF_INET6, peer, a) == 1) {
        char net64[INET6_ADDRSTRLEN];
        memset(a + 8, 0, 8);
        if (inet_ntop(AF_INET6, a, net64, sizeof net64)) {
            snprintf(key, cap, "%s/64%s", net64, tail);
            return;
        }
    }
    snprintf(key, cap, "%.47s%s", peer, tail);
}

/* Refills p's buckets for the time since they were last filled. */
static void refill(const rest_budget *b, rest_party *p, uint64_t now_ns) {
    double dt = now_ns > p->filled_ns ? (double)(now_ns - p->filled_ns) : 0;
    for (int k = 0; k < REST_HEAVY_KINDS; k++) {
        p->tokens[k] += dt * rate_of(b, (rest_heavy)k) / MINUTE_NS;
        if (p->tokens[k] > burst_of(b, (rest_heavy)k)) p->tokens[k] = burst_of(b, (rest_heavy)k);
    }
    p->filled_ns = now_ns;
}

/* Nothing under way and both buckets full: forgetting it changes nothing. */
static bool idle(const rest_budget *b, rest_party *p, uint64_t now_ns) {
    if (p->under_way) return false;
    refill(b, p, now_ns);
    for (int k = 0; k < REST_HEAVY_KINDS; k++)
        if (p->tokens[k] < burst_of(b, (rest_heavy)k)) return false;
    return true;
}

/* The party's place: found, a free one, else the place of an idle party or
 * of the one least recently seen with nothing under way; NULL when every
 * place has an answer under way. */
static rest_party *find(rest_budget *b, const char *key, uint64_t now_ns) {
    rest_party *free_place = NULL, *oldest = NULL;
    for (int i = 0; i < REST_PARTIES; i++) {
        rest_party *p = &b->party[i];
        if (!p->key[0]) {
            if (!free_place) free_place = p;
            continue;
        }
        if (!strcmp(p->key, key)) return p;
        if (!p->under_way && (!oldest || p->seen_ns < oldest->seen_ns)) oldest = p;
    }
    rest_party *p = free_place;
    if (!p) {
        for (int i = 0; i < REST_PARTIES && !p; i++)
            if (idle(b, &b->party[i], now_ns)) p = &b->party[i];
        if (!p) p = oldest;
        if (!p) return NULL;
        b->parties_forgotten++;
    }
    memset(p, 0, sizeof *p);
    snprintf(p->key, sizeof p->key, "%s", key);
    for (int k = 0; k < REST_HEAVY_KINDS; k++) p->tokens[k] = burst_of(b, (rest_heavy)k);
    p->filled_ns = now_ns;
    return p;
}

int rest_budget_admit(rest_budget *b, const char *key, rest_heavy kind, uint64_t now_ns, rest_verdict *why,
                      int *retry_after_s) {
    *retry_after_s = 1;
    rest_party *p = find(b, key, now_ns);
    if (!p) {
        *why = REST_SERVER_BUSY;
        b->refused_busy++;
        return 0;
    }
    p->seen_ns = now_ns;
    refill(b, p, now_ns);
    if (p->tokens[kind] < 1) {
        /* until the bucket holds one token again */
        double s = ceil((1 - p->tokens[kind]) * 60 / rate_of(b, kind) - 1e-9); /* (0.1 * 10 is not 1 in binary) */
        *retry_after_s = s < 1 ? 1 : (int)s;
        *why = REST_PARTY_RATE;
        b->refused[kind]++;
        return 0;
    }
    if (p->under_way >= REST_PARTY_HEAVY) {
        *why = REST_PARTY_BUSY;
        b->refused[kind]++;
        return 0;
    }
    if (b->under_way >= REST_HEAVY_MAX) {
        *why = REST_SERVER_BUSY;
        b->refused_busy++;
        return 0;
    }
    p->tokens[kind] -= 1;
    p->under_way++;
    b->under_way++;
    *why = REST_ADMITTED;
    return (int)(p - b->party) + 1;
}

bool rest_budget_pay(rest_budget *b, const char *key, rest_heavy kind, double cost, uint64_t now_ns,
                     int *retry_after_s) {
    *retry_after_s = 1;
    if (cost > burst_of(b, kind)) cost = burst_of(b, kind); /* (else never paid for) */
    rest_party *p = find(b, key, now_ns);
    if (!p) {
        b->refused_busy++;
        return false;
    }
    p->seen_ns = now_ns;
    refill(b, p, now_ns);
    if (p->tokens[kind] < cost) {
        double s = ceil((cost - p->tokens[kind]) * 60 / rate_of(b, kind) - 1e-9); /* (0.1 * 10 is not 1 in binary) */
        *retry_after_s = s < 1 ? 1 : (int)s;
        b->refused[kind]++;
        return false;
    }
    p->tokens[kind] -= cost;
    return true;
}

bool rest_budget_take(rest_budget *b, const char *key, rest_heavy kind, uint64_t now_ns, int *retry_after_s) {
    return rest_budget_pay(b, key, kind, 1, now_ns, retry_after_s);
}

bool rest_budget_refusal_held(rest_budget *b, const char *key, uint64_t now_ns) {
    int after;
    return !rest_budget_take(b, key, REST_REFUSAL, now_ns, &after);
}

void rest_budget_release(rest_budget *b, int place) {
    if (place < 1 || place > REST_PARTIES) return;
    rest_party *p = &b->party[place - 1];
    if (p->under_way > 0) p->under_way--;
    if (b->under_way > 0) b->under_way--;
}

void rest_budget_cancel(rest_budget *b, int place, rest_heavy kind) {
    if (place < 1 || place > REST_PARTIES) return;
    rest_party *p = &b->party[place - 1];
    double cap = burst_of(b, kind);
    p->tokens[kind] = p->tokens[kind] + 1 < cap ? p->tokens[kind] + 1 : cap;
    rest_budget_release(b, place);
}
