/* recfile.h - the recording file format (protocol/PROTOCOL.md,
 * "Recordings"): a segment file is an 8-byte signature and a sequence of
 * records, each a length, a kind, a CRC-32 and the bytes: a header (msgpack
 * map), `frame` messages exactly as the stream sends them (the first a
 * keyframe), broadcasts, and an end mark when the segment was closed
 * cleanly.  Pure functions on caller buffers: the writer frames a record,
 * the reader walks a segment's bytes and stops at the first damage, saying
 * where. */
#ifndef SRV_RECFILE_H
#define SRV_RECFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define REC_SIGNATURE "FSREC\0\1\0" /* "FSREC", 0, format version 1 (uint16 LE) */
#define REC_SIGNATURE_BYTES 8
#define REC_RECORD_HEAD 9          /* uint32 length, uint8 kind, uint32 CRC-32 of kind and bytes */
#define REC_MAX_RECORD (64u << 20) /* larger lengths are damage */

enum { REC_HEADER = 1, REC_FRAME = 2, REC_BCAST = 3, REC_END = 4 };

uint32_t rec_crc32(uint32_t crc, const uint8_t *p, size_t n);
/* Writes a record's 9-byte head for `len` bytes of `kind` into head. */
void rec_record_head(uint8_t head[REC_RECORD_HEAD], int kind, const uint8_t *bytes, size_t len);

/* A reader over one segment's bytes (caller-owned).  A value. */
typedef struct rec_reader {
    const uint8_t *p;
    size_t n, off;
    bool ended;       /* an end record was read */
    char damage[128]; /* why reading stopped early ("" at a clean end of the bytes) */
} rec_reader;

/* Returns false (and damage says why, unless the bytes simply ended) when
 * the signature is wrong. */
bool rec_reader_init(rec_reader *r, const uint8_t *p, size_t n);
/* The next record: its kind, bytes and length; false at the end or at the
 * first damage (a truncated record, a bad length or kind, a CRC mismatch:
 * r->damage names it and its offset). */
bool rec_reader_next(rec_reader *r, int *kind, const uint8_t **bytes, size_t *len);

#endif
