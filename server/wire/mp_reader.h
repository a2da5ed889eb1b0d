/* mp_reader.h - a small bounds-checked msgpack reader: the command
 * decoder's (wire.c) and the snapshot upload's, over bytes from the edge.
 * Every read is checked against the bytes present; nesting is bounded by
 * MP_MAX_DEPTH.  Locals of the decoding thread. */
#ifndef SRV_MP_READER_H
#define SRV_MP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MP_MAX_DEPTH 4 /* nesting accepted in a client message (wire.h's WIRE_MAX_DEPTH) */

/* Decoder state: the bytes left to read. */
typedef struct mp_rd {
    const uint8_t *p, *end;
} mp_rd;

typedef enum mp_type { MP_NIL, MP_BOOL, MP_INT, MP_FLOAT, MP_STR, MP_BIN, MP_ARRAY, MP_MAP, MP_EXT } mp_type;

/* One decoded msgpack header: a local of the decoder (network thread). */
typedef struct mp_obj {
    mp_type type;
    bool b;
    double num;       /* MP_INT and MP_FLOAT */
    const uint8_t *s; /* MP_STR / MP_BIN payload */
    uint32_t n;       /* str/bin length, array/map count */
} mp_obj;

size_t mp_left(const mp_rd *r);
/* Reads one object header.  str/bin/ext payloads are consumed and checked
 * against the bytes present; array/map counts are checked against the
 * minimum bytes their elements need (one per element, two per pair). */
bool mp_next(mp_rd *r, mp_obj *o);
/* Skips the body of o (already read), bounded in depth. */
bool mp_skip_body(mp_rd *r, const mp_obj *o, int depth);
/* A number: any msgpack int or float, as a double.  Never fails on the
 * value itself (NaN and infinities pass through): the caller checks every
 * number for finiteness and range before it is converted. */
bool mp_read_num(const mp_obj *o, double *v);
/* A string without NUL, shorter than cap, copied and terminated. */
bool mp_copy_str(const mp_obj *o, char *dst, size_t cap);
bool mp_is_container(const mp_obj *o);

#endif
