/* obstacle_mesh.c - the quantized encoding of an obstacle's placed mesh
 * (see obstacle_mesh.h; the layout is PROTOCOL.md's "Obstacles on the
 * page"): little-endian, a 48-byte head, then 16-bit positions, padding to
 * 4 bytes, then the indices. */
#include "obstacle_mesh.h"

#include <math.h>
#include <string.h>

static size_t index_bytes(int v) {
    return v > 65536 ? 4 : 2;
}

size_t obstacle_mesh_size(int v, int t) {
    size_t pos = OBSTACLE_MESH_HEAD + 6 * (size_t)v;
    pos = (pos + 3) & ~(size_t)3;
    return pos + 3 * (size_t)t * index_bytes(v);
}

uint64_t obstacle_mesh_hash(const uint8_t *p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        if (i >= OBSTACLE_MESH_HASH_AT && i < OBSTACLE_MESH_HASH_AT + 8) continue;
        h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

static void put_u16(uint8_t *o, uint16_t v) {
    o[0] = (uint8_t)v, o[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *o, uint32_t v) {
    for (int k = 0; k < 4; k++) o[k] = (uint8_t)(v >> (8 * k));
}
static void put_f32(uint8_t *o, float f) {
    uint32_t v;
    memcpy(&v, &f, 4);
    put_u32(o, v);
}

/* q = round((x - lo) / (hi - lo) * QMAX), in double, half away from zero. */
static uint16_t quantize(float x, float lo, float hi) {
    if (!(hi > lo)) return 0;
    double q = ((double)x - (double)lo) / ((double)hi - (double)lo) * OBSTACLE_MESH_QMAX;
    long r = lround(q);
    return (uint16_t)(r < 0 ? 0 : r > OBSTACLE_MESH_QMAX ? OBSTACLE_MESH_QMAX : r);
}

msg_buf *obstacle_mesh_encode(const fs_mesh *m, uint64_t *hash) {
    const int nv = m->vertex_count, nt = m->triangle_count;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int i = 0; i < nv; i++) {
        const float p[3] = {m->vertices[i].x, m->vertices[i].y, m->vertices[i].z};
        for (int k = 0; k < 3; k++) lo[k] = fminf(lo[k], p[k]), hi[k] = fmaxf(hi[k], p[k]);
    }
    if (nv == 0)
        for (int k = 0; k < 3; k++) lo[k] = hi[k] = 0;
    const size_t len = obstacle_mesh_size(nv, nt), ib = index_bytes(nv);
    wbuf b;
    wbuf_init(&b, len, 0);
    uint8_t *o = wbuf_grow(&b, len);
    if (!o) {
        wbuf_free(&b);
        return NULL;
    }
    memset(o, 0, len);
    memcpy(o, OBSTACLE_MESH_MAGIC, 4);
    put_u16(o + 4, OBSTACLE_MESH_VERSION);
    put_u16(o + 6, ib == 4 ? OBSTACLE_MESH_WIDE : 0);
    put_u32(o + 8, (uint32_t)nv);
    put_u32(o + 12, (uint32_t)nt);
    for (int k = 0; k < 3; k++) put_f32(o + 16 + 4 * k, lo[k]), put_f32(o + 28 + 4 * k, hi[k]);
    uint8_t *q = o + OBSTACLE_MESH_HEAD;
    for (int i = 0; i < nv; i++) {
        const float p[3] = {m->vertices[i].x, m->vertices[i].y, m->vertices[i].z};
        for (int k = 0; k < 3; k++, q += 2) put_u16(q, quantize(p[k], lo[k], hi[k]));
    }
    uint8_t *ix = o + len - 3 * (size_t)nt * ib;
    for (size_t i = 0; i < 3 * (size_t)nt; i++) {
        if (ib == 4)
            put_u32(ix + 4 * i, m->triangles[i]);
        else
            put_u16(ix + 2 * i, (uint16_t)m->triangles[i]);
    }
    uint64_t h = obstacle_mesh_hash(o, len);
    put_u32(o + OBSTACLE_MESH_HASH_AT, (uint32_t)h);
    put_u32(o + OBSTACLE_MESH_HASH_AT + 4, (uint32_t)(h >> 32));
    if (hash) *hash = h;
    return wbuf_finish(&b);
}

static uint32_t get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

int obstacle_mesh_check(const uint8_t *p, size_t n, uint64_t *hash) {
    if (n < OBSTACLE_MESH_HEAD || memcmp(p, OBSTACLE_MESH_MAGIC, 4) != 0) return -1;
    if ((p[4] | p[5] << 8) != OBSTACLE_MESH_VERSION) return -1;
    const uint32_t v = get_u32(p + 8), t = get_u32(p + 12);
    if (v < 3 || v > FS_MESH_MAX_VERTICES || t < 1 || t > FS_MESH_MAX_TRIANGLES) return -1;
    const size_t ib = index_bytes((int)v);
    if ((p[6] | p[7] << 8) != (ib == 4 ? OBSTACLE_MESH_WIDE : 0) || n != obstacle_mesh_size((int)v, (int)t)) return -1;
    for (int k = 0; k < 6; k++) {
        float f;
        uint32_t u = get_u32(p + 16 + 4 * k);
        memcpy(&f, &u, 4);
        if (!isfinite(f)) return -1;
    }
    const uint8_t *ix = p + n - 3 * (size_t)t * ib;
    for (size_t i = 0; i < 3 * (size_t)t; i++)
        if ((ib == 4 ? get_u32(ix + 4 * i) : (uint32_t)(ix[2 * i] | ix[2 * i + 1] << 8)) >= v) return -1;
    const uint64_t h = (uint64_t)get_u32(p + OBSTACLE_MESH_HASH_AT) | (uint64_t)get_u32(p + OBSTACLE_MESH_HASH_AT + 4)
                                                                          << 32;
    if (h != obstacle_mesh_hash(p, n)) return -1;
    if (hash) *hash = h;
    return 0;
}
