/* frame_bands.h - protocol v2's bands (kind 2 payloads, protocol/PROTOCOL.md
 * "Bands (kind 2)"): the band table at the start of a container's body,
 * read and written, and the split the server chooses for an epoch.  A
 * frame's particles split by id into K ranges, each coded as an ordinary
 * payload of its own, so that K decoders decode a frame side by side.
 * Pure functions on values and caller-owned buffers. */
#ifndef SRV_FRAME_BANDS_H
#define SRV_FRAME_BANDS_H

#include <stddef.h>
#include <stdint.h>

#define FC_MAX_BANDS 16
#define FC_BAND_SIZE 65536 /* the server's split: ceil(n / FC_BAND_SIZE) bands when n > FC_BAND_SIZE */

/* A container's band table.  A value. */
typedef struct fc_band_table {
    int k;                      /* bands, 2..FC_MAX_BANDS */
    uint32_t lo[FC_MAX_BANDS];  /* first id of each band: lo[0] = 0, increasing */
    uint32_t len[FC_MAX_BANDS]; /* each band payload's length, at least a header (56 bytes) */
    uint32_t off[FC_MAX_BANDS]; /* where each band payload starts in the body (read only) */
} fc_band_table;

/* Bytes of a table of k bands at the start of the body. */
size_t fc_bands_table_bytes(int k);
/* Reads and checks the table of a container body of body_len bytes: the
 * count, the first ids, and lengths that add up to the body exactly.
 * Returns 0, or -1 with a reason.  Never reads outside [body, body + body_len). */
int fc_bands_read(const uint8_t *body, size_t body_len, fc_band_table *t, char *err, size_t errlen);
/* Writes t's count, first ids and lengths at body (fc_bands_table_bytes(t->k) bytes). */
void fc_bands_write(uint8_t *body, const fc_band_table *t);
/* The server's split of an epoch whose first frame holds n particles with
 * ids id[0..n) increasing: forced > 0 asks for that many bands (1: none),
 * 0 for the default (ceil(n / FC_BAND_SIZE) when n > FC_BAND_SIZE).  Never
 * more bands than particles or FC_MAX_BANDS.  Fills lo[0..K) (band k starts
 * at the id of particle floor(k n / K)) and returns K; 1 means no bands. */
int fc_bands_choose(int n, const uint32_t *id, int forced, uint32_t *lo);
/* The particles of a frame (ids id[0..n), increasing) in band [lo, hi):
 * the first index with id >= lo, and the count.  hi_open: no upper bound
 * (the last band). */
int fc_bands_range(const uint32_t *id, int n, uint32_t lo, uint32_t hi, int hi_open, int *count);

#endif
