/* frame_ffi.h - the v2 frame decoder (frame_codec.h) behind a small, stable
 * C entry point for foreign callers (Python's ctypes, clients/python/): an
 * opaque handle, plain integer and pointer arguments, no structs crossing the
 * boundary, and the decoded frame copied out into the caller's arrays (the
 * decoder's own frames are overwritten by later decodes): its quantized
 * positions as decoded, turned into metres by fc_ffi_positions when the
 * caller needs them.  Built with the
 * decoder's files into build/libfluidcodec.so (clients/python/python.mk).
 *
 * Threads: a handle belongs to the thread that decodes with it. */
#ifndef SRV_FRAME_FFI_H
#define SRV_FRAME_FFI_H

#include <stddef.h>
#include <stdint.h>

/* The entry point's version: a caller checks it before using the rest
 * (grows whenever a signature below changes). */
#define FC_FFI_ABI 2

typedef struct fc_ffi fc_ffi;

int fc_ffi_abi(void);
/* The protocol payload version this decoder reads (FC_VERSION). */
int fc_ffi_payload_version(void);
/* A decoder for frames of at most capacity particles (1..FC_MAX_PARTICLES);
 * NULL when capacity is out of range or memory is short. */
fc_ffi *fc_ffi_create(int capacity);
void fc_ffi_destroy(fc_ffi *h);
/* Forgets every frame held (a new hello, a new recording segment). */
void fc_ffi_reset(fc_ffi *h);
/* Decodes one payload (a frame message's `data`): the particle count, or -1
 * with the reason at fc_ffi_error.  A refused payload leaves the frames held
 * intact and the last decoded frame unchanged. */
int fc_ffi_decode(fc_ffi *h, const uint8_t *p, size_t n);
/* The last refusal's reason (an empty string before any). */
const char *fc_ffi_error(const fc_ffi *h);
/* The last decoded frame's seq, its grid (origin x y z, step) and levels per
 * axis; any pointer may be NULL.  Returns its particle count, -1 when no
 * frame has been decoded since create or reset. */
int fc_ffi_info(const fc_ffi *h, uint32_t *seq, float origin_step[4], uint16_t levels[3]);
/* Copies the last decoded frame into the caller's arrays, each of at least
 * its particle count (times 3 for pos and q); any pointer may be NULL.
 * ids: increasing; pos: metres, as fc_ffi_positions makes them; q: the
 * quantized grid positions, x y z per particle; mat: material indices;
 * temp: temperature bytes (deg C = -40 + byte).  Returns the particle
 * count, -1 without a frame. */
int fc_ffi_copy(const fc_ffi *h, uint32_t *ids, float *pos, uint16_t *q, uint8_t *mat, uint8_t *temp);
/* Metres from n quantized positions q (3n, x y z per particle) on the grid
 * origin_step (origin x y z, step, as fc_ffi_info gives it): pos[i] =
 * origin[axis] + q[i] * step, computed in double, stored as float, into
 * pos (3n).  Needs no decoder: a caller keeps q and makes metres when they
 * are read.  Returns n, -1 when n is negative or a pointer is NULL (with n
 * above 0). */
int fc_ffi_positions(const uint16_t *q, int n, const float origin_step[4], float *pos);

#endif
