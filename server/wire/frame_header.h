/* frame_header.h - what the frame codec's encoder and decoder share about a
 * payload's 56-byte header (protocol/PROTOCOL.md, "Header"): writing it, its
 * options byte, the grid comparison and the frame checksum it carries, and
 * the little-endian words of the format.  Reading it is public
 * (fc_read_header, frame_codec.h).  Pure functions on values. */
#ifndef SRV_FRAME_HEADER_H
#define SRV_FRAME_HEADER_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "frame_codec.h"

/* The options byte: bits 0-1 the predictor, bit 5 the table coder (set in
 * every payload this codec writes), bit 6 joint symbols.  Bits 2-4, and
 * bit 5 clear, named codings of earlier encoders (a neighbour residual, the
 * cell order, the adaptive residual coder; predictors 2 and 3 the cell mean
 * and a mix): decoders refuse them, naming them (FC_OPT_RETIRED). */
#define FC_OPT_PREDICTOR 0x03u
#define FC_OPT_RETIRED 0x1cu /* bits 2-4 */
#define FC_OPT_TABLE 0x20u
#define FC_OPT_JOINT 0x40u

static inline void fc__put32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static inline uint32_t fc__get32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Writes h at p (FC_HEADER_BYTES); the options byte from h->options
 * (kind 2: zero). */
void fc__write_header(uint8_t *p, const fc_header *h);
/* The checksum of a decoded frame, as PROTOCOL.md defines it. */
uint32_t fc__checksum(const fc_frame *f);
/* Whether two grids are equal bit for bit. */
bool fc__grid_equal(const fc_grid *a, const fc_grid *b);

#endif
