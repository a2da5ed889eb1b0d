/* frame_held.c - the server's mirror of what a client's v2 decoder holds
 * (the slot rule of fc_decode in frame_decoder.c). */
#include "frame_held.h"

#include <string.h>

void fc_held_reset(fc_held *h) {
    memset(h, 0, sizeof *h);
}

static int slot_of(const fc_held *h, uint32_t seq) {
    for (int i = 0; i < FC_DEC_HISTORY; i++)
        if (h->stamp[i] && h->seq[i] == seq) return i;
    return -1;
}

bool fc_held_has(const fc_held *h, uint32_t epoch, uint32_t seq) {
    return h->any && h->epoch == epoch && seq != FC_NONE && slot_of(h, seq) >= 0;
}

bool fc_held_can_decode(const fc_held *h, uint32_t epoch, uint32_t base, uint32_t prev) {
    if (base == FC_NONE) return true;
    return fc_held_has(h, epoch, base) && (prev == FC_NONE || fc_held_has(h, epoch, prev));
}

void fc_held_note(fc_held *h, uint32_t epoch, uint32_t seq, uint32_t base, uint32_t prev) {
    if (base == FC_NONE && (!h->any || h->epoch != epoch)) {
        /* A keyframe of a new stream: the decoder drops every other frame.
         * (A keyframe of the same stream keeps them, as fc_decode does.) */
        memset(h->stamp, 0, sizeof h->stamp);
    }
    int b = base == FC_NONE ? -1 : slot_of(h, base), p = prev == FC_NONE ? -1 : slot_of(h, prev);
    int slot = -1; /* an empty slot, else the least recently decoded; never base or prev */
    for (int i = 0; i < FC_DEC_HISTORY; i++) {
        if (i == b || i == p) continue;
        if (slot < 0 || (h->stamp[slot] && (!h->stamp[i] || h->stamp[i] < h->stamp[slot]))) slot = i;
    }
    h->seq[slot] = seq;
    h->stamp[slot] = ++h->clock;
    h->epoch = epoch;
    h->any = true;
}

uint32_t fc_held_newest(const fc_held *h) {
    int best = -1;
    for (int i = 0; i < FC_DEC_HISTORY; i++)
        if (h->stamp[i] && (best < 0 || h->stamp[i] > h->stamp[best])) best = i;
    return best < 0 || !h->any ? FC_NONE : h->seq[best];
}
