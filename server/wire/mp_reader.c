/* mp_reader.c - a small bounds-checked msgpack reader (mp_reader.h). */
#include "mp_reader.h"

#include <string.h>

size_t mp_left(const mp_rd *r) {
    return (size_t)(r->end - r->p);
}

static bool mp_take(mp_rd *r, size_t n, const uint8_t **at) {
    if (mp_left(r) < n) return false;
    *at = r->p;
    r->p += n;
    return true;
}

static uint64_t be(const uint8_t *p, int n) {
    uint64_t v = 0;
    for (int i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

/* Reads one object header.  str/bin/ext payloads are consumed and checked
 * against the bytes present; array/map counts are checked against the
 * minimum bytes their elements need (one per element, two per pair). */
bool mp_next(mp_rd *r, mp_obj *o) {
    const uint8_t *q;
    if (!mp_take(r, 1, &q)) return false;
    uint8_t t = q[0];
    memset(o, 0, sizeof *o);
    uint64_t len = 0;
    int lb = 0; /* bytes of length field */
    if (t <= 0x7f) {
        o->type = MP_INT;
        o->num = t;
        return true;
    }
    if (t >= 0xe0) {
        o->type = MP_INT;
        o->num = (int8_t)t;
        return true;
    }
    if ((t & 0xf0) == 0x80) {
        o->type = MP_MAP;
        len = t & 0x0f;
        goto container;
    }
    if ((t & 0xf0) == 0x90) {
        o->type = MP_ARRAY;
        len = t & 0x0f;
        goto container;
    }
    if ((t & 0xe0) == 0xa0) {
        o->type = MP_STR;
        len = t & 0x1f;
        goto payload;
    }
    switch (t) {
    case 0xc0:
        o->type = MP_NIL;
        return true;
    case 0xc2:
        o->type = MP_BOOL;
        o->b = false;
        return true;
    case 0xc3:
        o->type = MP_BOOL;
        o->b = true;
        return true;
    case 0xc4:
    case 0xc5:
    case 0xc6:
        o->type = MP_BIN;
        lb = 1 << (t - 0xc4);
        break;
    case 0xd9:
    case 0xda:
    case 0xdb:
        o->type = MP_STR;
        lb = 1 << (t - 0xd9);
        break;
    case 0xc7:
    case 0xc8:
    case 0xc9: /* ext 8/16/32: length, type, data */
        o->type = MP_EXT;
        lb = 1 << (t - 0xc7);
        if (!mp_take(r, (size_t)lb, &q)) return false;
        len = be(q, lb) + 1;
        goto payload;
    case 0xd4:
    case 0xd5:
    case 0xd6:
    case 0xd7:
    case 0xd8: /* fixext */
        o->type = MP_EXT;
        len = 1 + (1u << (t - 0xd4));
        goto payload;
    case 0xca: {
        if (!mp_take(r, 4, &q)) return false;
        uint32_t u = (uint32_t)be(q, 4);
        float f;
        memcpy(&f, &u, 4);
        o->type = MP_FLOAT;
        o->num = f;
        return true;
    }
    case 0xcb: {
        if (!mp_take(r, 8, &q)) return false;
        uint64_t u = be(q, 8);
        double d;
        memcpy(&d, &u, 8);
        o->type = MP_FLOAT;
        o->num = d;
        return true;
    }
    case 0xcc:
    case 0xcd:
    case 0xce:
    case 0xcf: {
        int nb = 1 << (t - 0xcc);
        if (!mp_take(r, (size_t)nb, &q)) return false;
        o->type = MP_INT;
        o->num = (double)be(q, nb);
        return true;
    }
    case 0xd0:
    case 0xd1:
    case 0xd2:
    case 0xd3: {
        int nb = 1 << (t - 0xd0);
        if (!mp_take(r, (size_t)nb, &q)) return false;
        uint64_t u = be(q, nb);
        int64_t v;
        if (nb == 1)
            v = (int8_t)u;
        else if (nb == 2)
            v = (int16_t)u;
        else if (nb == 4)
            v = (int32_t)u;
        else
            memcpy(&v, &u, 8);
        o->type = MP_INT;
        o->num = (double)v;
        return true;
    }
    case 0xdc:
    case 0xdd:
    case 0xde:
    case 0xdf: /* array 16, array 32, map 16, map 32 */
        o->type = t <= 0xdd ? MP_ARRAY : MP_MAP;
        lb = t & 1 ? 4 : 2;
        if (!mp_take(r, (size_t)lb, &q)) return false;
        len = be(q, lb);
        goto container;
    default: /* 0xc1 is never used */
        return false;
    }
    if (!mp_take(r, (size_t)lb, &q)) return false;
    len = be(q, lb);
payload:
    if (len > mp_left(r)) return false;
    o->s = r->p;
    o->n = (uint32_t)len;
    r->p += len;
    return true;
container:
    if (len > mp_left(r) / (o->type == MP_MAP ? 2 : 1)) return false;
    o->n = (uint32_t)len;
    return true;
}

/* Skips the body of o (already read), bounded in depth. */
bool mp_skip_body(mp_rd *r, const mp_obj *o, int depth) {
    if (o->type != MP_ARRAY && o->type != MP_MAP) return true;
    if (depth >= MP_MAX_DEPTH) return false;
    uint64_t items = (uint64_t)o->n * (o->type == MP_MAP ? 2 : 1);
    for (uint64_t i = 0; i < items; i++) {
        mp_obj c;
        if (!mp_next(r, &c) || !mp_skip_body(r, &c, depth + 1)) return false;
    }
    return true;
}

/* A number: any msgpack int or float, as a double.  Never fails on the
 * value itself (NaN and infinities pass through): cmd_from_fields checks
 * every number for finiteness and range before it is converted. */
bool mp_read_num(const mp_obj *o, double *v) {
    if (o->type != MP_INT && o->type != MP_FLOAT) return false;
    *v = o->num;
    return true;
}

bool mp_copy_str(const mp_obj *o, char *dst, size_t cap) {
    if (o->type != MP_STR || o->n >= cap || memchr(o->s, 0, o->n)) return false;
    memcpy(dst, o->s, o->n);
    dst[o->n] = 0;
    return true;
}

bool mp_is_container(const mp_obj *o) {
    return o->type == MP_ARRAY || o->type == MP_MAP;
}
