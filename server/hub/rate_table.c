/* rate_table.c - a bounded table of token buckets by id (see rate_table.h). */
#include "rate_table.h"

#include <stdlib.h>
#include <string.h>

static uint32_t hash(uint32_t k) {
    k ^= k >> 16;
    k *= 0x7feb352du;
    k ^= k >> 15;
    k *= 0x846ca68bu;
    k ^= k >> 16;
    return k;
}

int rate_table_init(rate_table *t, int max, double per_s, double burst) {
    memset(t, 0, sizeof *t);
    if (max < 1 || max > (1 << 24)) return -1;
    uint32_t slots = 2;
    while (slots < 2u * (uint32_t)max) slots *= 2;
    t->slot = calloc(slots, sizeof *t->slot);
    t->spare = calloc(slots, sizeof *t->spare);
    if (!t->slot || !t->spare) {
        rate_table_free(t);
        return -1;
    }
    t->mask = slots - 1;
    t->max = max;
    t->per_s = per_s;
    t->burst = burst;
    return 0;
}

void rate_table_free(rate_table *t) {
    free(t->slot);
    free(t->spare);
    memset(t, 0, sizeof *t);
}

/* The slot holding key, or the empty slot where it would go. */
static uint32_t probe(const rate_slot *s, uint32_t mask, uint32_t key) {
    uint32_t i = hash(key) & mask;
    while (s[i].key && s[i].key != key) i = (i + 1) & mask;
    return i;
}

int rate_table_forget_idle(rate_table *t, uint64_t now_ns) {
    /* rebuilt into the spare slots: no tombstones, probes stay short */
    memset(t->spare, 0, (size_t)(t->mask + 1) * sizeof *t->spare);
    int kept = 0, before = t->count;
    for (uint32_t i = 0; i <= t->mask; i++) {
        const rate_slot *s = &t->slot[i];
        if (!s->key || rate_bucket_idle(&s->b, t->per_s, t->burst, now_ns)) continue;
        t->spare[probe(t->spare, t->mask, s->key)] = *s;
        kept++;
    }
    rate_slot *old = t->slot;
    t->slot = t->spare;
    t->spare = old;
    t->count = kept;
    return before - kept;
}

rate_bucket *rate_table_get(rate_table *t, uint32_t key, uint64_t now_ns) {
    if (!key || !t->slot) return NULL;
    uint32_t i = probe(t->slot, t->mask, key);
    if (t->slot[i].key) return &t->slot[i].b;
    if (t->count >= t->max) {
        if (!rate_table_forget_idle(t, now_ns)) return NULL;
        i = probe(t->slot, t->mask, key);
    }
    t->slot[i].key = key;
    t->slot[i].b = rate_bucket_full(t->burst, now_ns);
    t->count++;
    return &t->slot[i].b;
}

void rate_table_drop(rate_table *t, uint32_t key) {
    if (!key || !t->slot) return;
    uint32_t i = probe(t->slot, t->mask, key);
    if (!t->slot[i].key) return;
    /* backward-shift deletion: move up every later entry of the run that
     * would no longer be found past the hole */
    t->slot[i].key = 0;
    t->count--;
    for (uint32_t j = (i + 1) & t->mask; t->slot[j].key; j = (j + 1) & t->mask) {
        uint32_t home = hash(t->slot[j].key) & t->mask;
        /* j's entry may stay unless the hole lies cyclically within [home, j) */
        bool stays = i <= j ? (home > i && home <= j) : (home > i || home <= j);
        if (stays) continue;
        t->slot[i] = t->slot[j];
        t->slot[j].key = 0;
        i = j;
    }
}
