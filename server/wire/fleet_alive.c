/* fleet_alive.c - a fleet's heartbeats and acknowledgements as text (see
 * fleet_alive.h). */
#include "fleet_alive.h"

#include <stdio.h>
#include <string.h>

#define ROUND_MAX 9223372036854775807ull

/* The decimal number that fills p[0..n): 1 to ROUND_MAX, no sign, no
 * leading zero.  0 when it is not one. */
static uint64_t round_of(const char *p, size_t n) {
    if (!n || n > 19 || p[0] == '0') return 0;
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (p[i] < '0' || p[i] > '9') return 0;
        v = v * 10 + (uint64_t)(p[i] - '0'); /* 19 digits fit in 64 bits */
    }
    return v <= ROUND_MAX ? v : 0;
}

int fleet_alive_write(const fleet_alive_msg *m, char *out, size_t cap) {
    if (!m->round || m->round > ROUND_MAX || m->nrooms < 0 || m->nrooms > FLEET_ALIVE_ROOMS) return -1;
    int len = snprintf(out, cap, "%llu\n", (unsigned long long)m->round);
    if (len < 0 || (size_t)len >= cap) return -1;
    for (int i = 0; i < m->nrooms; i++) {
        const size_t k = strnlen(m->rooms[i], ROOM_NAME_CAP);
        if (!room_name_ok(m->rooms[i], k, NULL, 0) || (size_t)len + k + 1 >= cap) return -1;
        memcpy(out + len, m->rooms[i], k);
        len += (int)k;
        out[len++] = '\n';
    }
    out[len] = 0;
    return len;
}

int fleet_alive_read(const void *p, size_t n, fleet_alive_msg *m, char *err, size_t errlen) {
    const char *s = p;
    memset(m, 0, sizeof *m);
    if (n > FLEET_ALIVE_MAX) {
        snprintf(err, errlen, "a heartbeat of %zu bytes (at most %d)", n, FLEET_ALIVE_MAX);
        return -1;
    }
    const char *nl = memchr(s, '\n', n);
    if (!nl || !(m->round = round_of(s, (size_t)(nl - s)))) {
        snprintf(err, errlen, "a heartbeat begins with its round, 1 to 2^63-1 in decimal, and a newline");
        return -1;
    }
    size_t at = (size_t)(nl - s) + 1;
    while (at < n) {
        const char *end = memchr(s + at, '\n', n - at);
        if (!end) {
            snprintf(err, errlen, "a heartbeat's line %d has no newline", m->nrooms + 2);
            return -1;
        }
        const size_t k = (size_t)(end - (s + at));
        char why[96];
        if (!room_name_ok(s + at, k, why, sizeof why)) {
            snprintf(err, errlen, "a heartbeat's line %d: %s", m->nrooms + 2, why);
            return -1;
        }
        if (m->nrooms == FLEET_ALIVE_ROOMS) {
            snprintf(err, errlen, "a heartbeat of more than %d rooms", FLEET_ALIVE_ROOMS);
            return -1;
        }
        char *name = m->rooms[m->nrooms];
        memcpy(name, s + at, k);
        name[k] = 0;
        for (int i = 0; i < m->nrooms; i++)
            if (!strcmp(m->rooms[i], name)) {
                snprintf(err, errlen, "a heartbeat lists room '%s' twice", name);
                return -1;
            }
        m->nrooms++;
        at += k + 1;
    }
    return 0;
}

int fleet_ack_write(uint64_t round, char *out, size_t cap) {
    int len = snprintf(out, cap, "%llu", (unsigned long long)round);
    return len >= 0 && (size_t)len < cap ? len : -1;
}

int fleet_ack_read(const void *p, size_t n, uint64_t *round, char *err, size_t errlen) {
    *round = round_of(p, n);
    if (*round) return 0;
    snprintf(err, errlen, "an acknowledgement is a round, 1 to 2^63-1 in decimal, alone");
    return -1;
}
