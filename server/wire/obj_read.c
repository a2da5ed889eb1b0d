/* obj_read.c - the server's own reader of an uploaded OBJ's geometry (in
 * place of Assimp's OBJ reader, which fuzz_mesh found reading past its
 * line blocks, tests/fuzz/crashes/fuzz_mesh/obj-*).  Its rules:
 *
 * - Text: a control byte other than tab, CR and LF is refused with its
 *   line (bytes from 0x80, UTF-8 in names and comments, pass).
 * - Lines end at LF; CR is white space, so CRLF line ends read as LF ones.
 *   A line holds at most OBJ_LINE_MAX bytes.  A backslash line
 *   continuation is not read: a `v` or `f` line ending with one is refused.
 * - `#` starts a comment, to the line's end, anywhere on a line.  Words are
 *   separated by spaces, tabs and CRs.
 * - `v x y z`: three decimal numbers (digits, sign, point and exponent;
 *   no hex, inf or nan), each within a float's range; a fourth (w) or three
 *   more (a colour: r g b) are checked as numbers and ignored.
 * - `f a b c ...`: three or more vertex references, each `v`, `v/vt`,
 *   `v//vn` or `v/vt/vn` (whole numbers); only v is used.  v counts from 1
 *   (the first `v` line) and names a vertex above the face line; a
 *   negative v counts back from the last vertex above it (-1 is that
 *   vertex).  0, or a vertex not (yet) read, is refused.  vt and vn are not
 *   checked against `vt` and `vn` lines.  A polygon is cut into a fan from
 *   its first corner, as the loader cuts Assimp's polygons (gather_mesh in
 *   mesh_load.c).
 * - Every other statement (`vt`, `vn`, `vp`, `o`, `g`, `s`, `usemtl`,
 *   `mtllib`, `l`, `p`, curves, and any unknown word) is ignored: nothing
 *   is opened, points and lines make no triangles.
 *
 * A refusal is a sentence "mesh: model/obj line N: ..." that quotes at
 * most a few bytes of the file, printable ASCII only. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "obj_read.h"
#include "refusal.h"

static const char WS[] = " \t\r";

/* Up to 20 bytes of a word for a refusal: printable ASCII, others as '?'. */
typedef struct shown {
    char s[28];
} shown;

static shown show(const char *w) {
    shown r;
    size_t k = 0;
    for (; w[k] && k < 20; k++) r.s[k] = w[k] >= 0x20 && w[k] <= 0x7e ? w[k] : '?';
    if (w[k]) memcpy(r.s + k, "...", 3), k += 3;
    r.s[k] = 0;
    return r;
}

/* A coordinate: a decimal number (strtod's whole word, of digits, signs,
 * a point and an exponent only) that a float holds. */
static int number(const char *w, size_t line, float *out, char *err, size_t errlen) {
    char *end = NULL;
    double d = 0;
    if (*w && strspn(w, "0123456789+-.eE") == strlen(w)) d = strtod(w, &end);
    if (!end || *end)
        return wire_refuse(err, errlen, "mesh: model/obj line %zu: \"%s\" is not a decimal number", line, show(w).s);
    if (!isfinite(d) || fabs(d) > FLT_MAX)
        return wire_refuse(err, errlen, "mesh: model/obj line %zu: %s is beyond a float's range", line, show(w).s);
    *out = (float)d;
    return 0;
}

/* A whole number of a vertex reference ("-"? digits); false if not. */
static bool whole(const char *p, long *out) {
    const char *q = p + (*p == '-');
    if (!*q || strspn(q, "0123456789") != strlen(q)) return false;
    char *end;
    errno = 0;
    *out = strtol(p, &end, 10);
    if (errno == ERANGE) *out = *p == '-' ? LONG_MIN : LONG_MAX; /* names no vertex either way */
    return true;
}

/* One vertex reference of a face: the 0-based index of its position among
 * the `have` vertices read so far. */
static int reference(char *w, long have, size_t line, long *index, char *err, size_t errlen) {
    const shown as = show(w);
    char *s1 = strchr(w, '/'), *s2 = s1 ? strchr(s1 + 1, '/') : NULL;
    bool ok = !(s2 && strchr(s2 + 1, '/'));
    if (s1) *s1 = 0;
    if (s2) *s2 = 0;
    long v = 0, other;
    ok = ok && whole(w, &v);
    if (ok && s1 && !s2) ok = whole(s1 + 1, &other);                               /* v/vt */
    if (ok && s2) ok = (!s1[1] || whole(s1 + 1, &other)) && whole(s2 + 1, &other); /* v//vn, v/vt/vn */
    if (!ok)
        return wire_refuse(err, errlen,
                           "mesh: model/obj line %zu: \"%s\" is not a vertex reference (v, v/vt, v//vn or v/vt/vn, "
                           "whole numbers)",
                           line, as.s);
    if (v == 0)
        return wire_refuse(err, errlen, "mesh: model/obj line %zu: vertex index 0 (they count from 1, or back from -1)",
                           line);
    if (v > 0 ? v > have : v < -have)
        return wire_refuse(err, errlen, "mesh: model/obj line %zu: the reference \"%s\" names no vertex (%ld above it)",
                           line, as.s, have);
    *index = v > 0 ? v - 1 : have + v;
    return 0;
}

static int vertex(char **save, size_t line, obj_out *o, char *err, size_t errlen) {
    float x[6];
    int n = 0;
    for (char *w = strtok_r(NULL, WS, save); w; w = strtok_r(NULL, WS, save)) {
        if (n == 6) return wire_refuse(err, errlen, "mesh: model/obj line %zu: a vertex has more than 6 numbers", line);
        if (number(w, line, &x[n++], err, errlen)) return -1;
    }
    if (n != 3 && n != 4 && n != 6)
        return wire_refuse(err, errlen,
                           "mesh: model/obj line %zu: a vertex is 3 numbers (x y z), 4 (x y z w) or 6 (x y z r g b), "
                           "not %d",
                           line, n);
    if (o->vertices) {
        if (o->vertex_count >= o->vertex_room)
            return wire_refuse(err, errlen, "mesh: model/obj line %zu: more vertices than counted", line);
        o->vertices[o->vertex_count] = (fs_vec3){x[0], x[1], x[2]};
    }
    o->vertex_count++;
    return 0;
}

/* A face: its polygon as a fan from the first corner, (0, c, c + 1). */
static int face(char **save, size_t line, obj_out *o, char *err, size_t errlen) {
    long first = 0, prev = 0, n = 0;
    for (char *w = strtok_r(NULL, WS, save); w; w = strtok_r(NULL, WS, save), n++) {
        long at = 0;
        if (reference(w, o->vertex_count, line, &at, err, errlen)) return -1;
        if (n == 0) first = at;
        if (n >= 2) {
            if (o->triangles) {
                if (o->triangle_count >= o->triangle_room)
                    return wire_refuse(err, errlen, "mesh: model/obj line %zu: more triangles than counted", line);
                uint32_t *t = o->triangles + 3 * o->triangle_count;
                t[0] = (uint32_t)first, t[1] = (uint32_t)prev, t[2] = (uint32_t)at;
            }
            o->triangle_count++;
        }
        prev = at;
    }
    if (n < 3)
        return wire_refuse(err, errlen, "mesh: model/obj line %zu: a face names 3 or more vertices, this one %ld", line,
                           n);
    return 0;
}

/* One line (NUL-terminated, no LF). */
static int statement(char *s, size_t line, obj_out *o, char *err, size_t errlen) {
    size_t end = strlen(s);
    while (end && strchr(WS, s[end - 1])) end--;
    const bool continued = end && s[end - 1] == '\\';
    char *hash = strchr(s, '#');
    if (hash) *hash = 0;
    char *save = NULL, *w = strtok_r(s, WS, &save);
    const bool v = w && !strcmp(w, "v"), f = w && !strcmp(w, "f");
    if (!v && !f) return 0;
    if (continued)
        return wire_refuse(err, errlen,
                           "mesh: model/obj line %zu ends with a backslash: line continuations are not read", line);
    return v ? vertex(&save, line, o, err, errlen) : face(&save, line, o, err, errlen);
}

int obj_read(const void *buf, size_t len, obj_out *o, char *err, size_t errlen) {
    const uint8_t *b = buf;
    char s[OBJ_LINE_MAX + 1];
    o->vertex_count = o->triangle_count = 0;
    size_t line = 0;
    for (size_t i = 0; i < len; i++) { /* i: the line's first byte, then its LF */
        line++;
        const size_t start = i;
        for (; i < len && b[i] != '\n'; i++) {
            if ((b[i] < 0x20 && b[i] != '\t' && b[i] != '\r') || b[i] == 0x7f)
                return wire_refuse(err, errlen,
                                   "mesh: model/obj is text: byte 0x%02x on line %zu is a control character",
                                   (unsigned)b[i], line);
            if (i - start == OBJ_LINE_MAX)
                return wire_refuse(err, errlen, "mesh: model/obj line %zu is longer than %d bytes", line, OBJ_LINE_MAX);
        }
        memcpy(s, b + start, i - start);
        s[i - start] = 0;
        if (statement(s, line, o, err, errlen)) return -1;
    }
    return 0;
}
