/* recfile.c - the recording file format (see recfile.h). */
#include "recfile.h"

#include <stdio.h>
#include <string.h>

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), bit by bit: a
 * record is checked once when read, so a table buys nothing measurable. */
uint32_t rec_crc32(uint32_t crc, const uint8_t *p, size_t n) {
    crc = ~crc;
    for (size_t i = 0; i < n; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++) crc = (crc >> 1) ^ (0xEDB88320u & (0u - (crc & 1u)));
    }
    return ~crc;
}

static void put32(uint8_t *o, uint32_t v) {
    for (int i = 0; i < 4; i++) o[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

void rec_record_head(uint8_t head[REC_RECORD_HEAD], int kind, const uint8_t *bytes, size_t len) {
    uint8_t k = (uint8_t)kind;
    put32(head, (uint32_t)len);
    head[4] = k;
    put32(head + 5, rec_crc32(rec_crc32(0, &k, 1), bytes, len));
}

bool rec_reader_init(rec_reader *r, const uint8_t *p, size_t n) {
    memset(r, 0, sizeof *r);
    r->p = p;
    r->n = n;
    if (n < REC_SIGNATURE_BYTES || memcmp(p, REC_SIGNATURE, REC_SIGNATURE_BYTES)) {
        snprintf(r->damage, sizeof r->damage, "not a recording segment (no FSREC version 1 signature)");
        return false;
    }
    r->off = REC_SIGNATURE_BYTES;
    return true;
}

bool rec_reader_next(rec_reader *r, int *kind, const uint8_t **bytes, size_t *len) {
    if (r->damage[0] || r->ended || r->off >= r->n) return false;
    size_t left = r->n - r->off;
    if (left < REC_RECORD_HEAD) {
        snprintf(r->damage, sizeof r->damage, "truncated record head at byte %zu", r->off);
        return false;
    }
    const uint8_t *h = r->p + r->off;
    uint32_t l = get32(h);
    int k = h[4];
    if (l > REC_MAX_RECORD || k < REC_HEADER || k > REC_END) {
        snprintf(r->damage, sizeof r->damage, "bad record (length %u, kind %d) at byte %zu", l, k, r->off);
        return false;
    }
    if ((size_t)l > left - REC_RECORD_HEAD) {
        snprintf(r->damage, sizeof r->damage, "record truncated at byte %zu (%u bytes declared, %zu present)", r->off,
                 l, left - REC_RECORD_HEAD);
        return false;
    }
    uint8_t kb = (uint8_t)k;
    if (rec_crc32(rec_crc32(0, &kb, 1), h + REC_RECORD_HEAD, l) != get32(h + 5)) {
        snprintf(r->damage, sizeof r->damage, "record damaged (CRC mismatch) at byte %zu", r->off);
        return false;
    }
    *kind = k;
    *bytes = h + REC_RECORD_HEAD;
    *len = l;
    r->off += REC_RECORD_HEAD + l;
    if (k == REC_END) r->ended = true;
    return true;
}
