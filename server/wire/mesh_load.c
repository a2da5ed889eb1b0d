/* mesh_load.c - an uploaded triangle mesh: STL and binary glTF through
 * Assimp's C API (Assimp 5.2), OBJ through the server's own reader of its
 * geometry (obj_read.c: Assimp's OBJ reader read past its line blocks,
 * tests/fuzz/crashes/fuzz_mesh/obj-*); PLY's header is checked, then the
 * format refused (PLY_ENABLED).
 *
 * Only the STL and glTF 2 importers run: each format's first bytes are
 * checked here (STL's size or "solid", PLY's header against its grammar and
 * element counts, GLB's header, chunks and JSON as the glTF 2 importer's
 * probe accepts them (glb_check.c), OBJ's lack of NUL bytes) before a
 * reader sees the file.  Assimp is given it under a name with the format's
 * extension, so it picks that format's importer by extension and never
 * probes the others' signatures; the scene must then name that importer
 * (an OBJ never reaches Assimp, and a scene its OBJ importer read is
 * refused like any other importer's).  Assimp reads through an aiFileIO
 * that serves this one buffer and opens nothing else: a glTF's external
 * buffer cannot reach the file system.  The scene's node tree is walked
 * here (iteratively, the triangle bound checked before anything is copied)
 * rather than by aiProcess_PreTransformVertices, so a file that instances
 * one mesh many times is refused instead of expanded; polygons are cut
 * into triangles here too.  Both readers end the same way (collect): their
 * counts held to the limits, then room made and filled by a second pass,
 * the positions checked finite and identical ones welded.
 *
 * Assimp 5.2's importers leak what they have built when a file turns out
 * malformed part-way (tests/fuzz/fuzz_mesh found it in the ASCII STL and PLY
 * readers): mesh_load_isolated runs the import in a forked process of its
 * own, bounded in CPU time and memory, so a leak, a crash or a runaway
 * import ends with that process and the server's heap does not grow. */
#include <assimp/cfileio.h>
#include <assimp/cimport.h>
#include <assimp/commonMetaData.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "glb_check.h"
#include "mesh_load.h"
#include "obj_read.h"
#include "refusal.h"

static const struct {
    const char *type, *name; /* the Content-Type, and the name Assimp is given (NULL: not Assimp's) */
    const char *importer;    /* the name of the Assimp importer that must read it (its aiImporterDesc) */
} FORMATS[MESH_FORMAT_COUNT] = {
    [MESH_STL] = {"model/stl", "upload.stl", "Stereolithography (STL) Importer"},
    [MESH_OBJ] = {"model/obj", NULL, NULL}, /* obj_read.c */
    [MESH_PLY] = {"application/ply", "upload.ply", "Stanford Polygon Library (PLY) Importer"},
    [MESH_GLB] = {"model/gltf-binary", "upload.glb", "glTF2 Importer"},
};

int mesh_format_from_type(const char *t) {
    if (!t) return -1;
    while (*t == ' ') t++;
    size_t n = strcspn(t, "; ");
    for (int f = 0; f < MESH_FORMAT_COUNT; f++)
        if (strlen(FORMATS[f].type) == n && strncasecmp(t, FORMATS[f].type, n) == 0) return f;
    return -1;
}

const char *mesh_format_type(mesh_format f) {
    return (int)f >= 0 && f < MESH_FORMAT_COUNT ? FORMATS[f].type : NULL;
}

mesh_limits mesh_default_limits(void) {
    mesh_limits l = {MESH_LOAD_DEFAULT_MAX_BYTES, FS_MESH_MAX_TRIANGLES};
    return l;
}

void mesh_data_free(mesh_data *d) {
    free(d->vertices), free(d->triangles);
    memset(d, 0, sizeof *d);
}

/* ---- the formats' first bytes ------------------------------------------------ */
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static const char *sniff_stl(const uint8_t *b, size_t n) {
    if (n >= 84 && 84 + 50 * (uint64_t)le32(b + 80) == n) return NULL; /* binary */
    size_t i = 0;
    while (i < n && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n')) i++;
    if (n - i >= 5 && strncasecmp((const char *)b + i, "solid", 5) == 0 && !memchr(b, 0, n)) return NULL;
    return "an STL file is binary (84 bytes, then 50 a triangle, as its header counts) or text starting with \"solid\"";
}

/* the rest of an OBJ's text is checked line by line by its reader */
static const char *sniff_obj(const uint8_t *b, size_t n) {
    return memchr(b, 0, n) ? "an OBJ file is text (this one holds a NUL byte)" : NULL;
}

/* Assimp 5.2's PLY reader writes outside its heap blocks on some ASCII
 * bodies after a well-formed header (fuzz_mesh: a value run into the next
 * line, "0~0"), which no check of the header can see: PLY is refused, after
 * its header is held to the grammar, until a reader without it is in place.
 * (A reader process would contain a crash, but not a corrupted heap's
 * access to the server's memory image it was forked with.) */
#define PLY_ENABLED 0

/* A PLY scalar type's name. */
static bool ply_type(const char *t) {
    static const char *const T[] = {"char", "uchar", "short", "ushort", "int",   "uint",   "float",   "double",
                                    "int8", "uint8", "int16", "uint16", "int32", "uint32", "float32", "float64"};
    for (size_t k = 0; k < sizeof T / sizeof T[0]; k++)
        if (!strcmp(t, T[k])) return true;
    return false;
}

/* An element's or a property's name: a letter or '_', then letters,
 * digits and '_' (what Assimp's reader splits as the writers mean). */
static bool ply_name(const char *t) {
    if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || *t == '_')) return false;
    for (t++; *t; t++)
        if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || *t == '_'))
            return false;
    return true;
}

/* One header line of PLY's grammar; *format set by the format line. */
static const char *ply_line(char *line, bool *format, bool *element) {
    char *save = NULL, *w[6] = {0};
    int n = 0;
    for (char *t = strtok_r(line, " \t", &save); t && n < 6; t = strtok_r(NULL, " \t", &save)) w[n++] = t;
    if (n == 0) return "a PLY header has no blank lines";
    if (!strcmp(w[0], "comment") || !strcmp(w[0], "obj_info")) return NULL;
    if (!strcmp(w[0], "format")) {
        *format =
            n == 3 && !strcmp(w[2], "1.0") &&
            (!strcmp(w[1], "ascii") || !strcmp(w[1], "binary_little_endian") || !strcmp(w[1], "binary_big_endian"));
        return *format ? NULL : "a PLY file's format is ascii, binary_little_endian or binary_big_endian 1.0";
    }
    if (!strcmp(w[0], "element")) {
        char *stop;
        unsigned long long count = n == 3 ? strtoull(w[2], &stop, 10) : 0;
        if (n != 3 || !ply_name(w[1]) || *stop || w[2][0] < '0' || w[2][0] > '9' || count > FS_MESH_MAX_VERTICES)
            return "a PLY element line is \"element NAME COUNT\" with COUNT within the bound";
        *element = true;
        return NULL;
    }
    if (!strcmp(w[0], "property")) {
        bool ok = *element && ((n == 3 && ply_type(w[1]) && ply_name(w[2])) ||
                               (n == 5 && !strcmp(w[1], "list") && ply_type(w[2]) && ply_type(w[3]) && ply_name(w[4])));
        return ok ? NULL : "a PLY property line is \"property TYPE NAME\" or \"property list TYPE TYPE NAME\"";
    }
    return "a PLY header line starts with format, element, property, comment or obj_info";
}

/* The header held to PLY's grammar (printable text, known keywords and
 * types, element counts within the bound) before Assimp reads it. */
static const char *sniff_ply(const uint8_t *b, size_t n) {
    const size_t HEADER_MAX = 65536;
    if (n < 4 || memcmp(b, "ply", 3) != 0 || (b[3] != '\n' && b[3] != '\r')) return "a PLY file starts with \"ply\"";
    const size_t end = n < HEADER_MAX ? n : HEADER_MAX;
    bool format = false, element = false;
    size_t i = b[3] == '\r' && n > 4 && b[4] == '\n' ? 5 : 4;
    while (i < end) {
        size_t e = i;
        while (e < end && b[e] != '\n') e++;
        if (e == end) break;
        size_t L = e - i;
        if (L && b[e - 1] == '\r') L--;
        char line[256];
        if (L >= sizeof line) return "a PLY header line is longer than 255 bytes";
        for (size_t k = 0; k < L; k++)
            if ((b[i + k] < 0x20 || b[i + k] > 0x7e) && b[i + k] != '\t') return "a PLY header is printable text";
        memcpy(line, b + i, L);
        line[L] = 0;
        if (!strcmp(line, "end_header")) return format && element ? NULL : "a PLY header names its format and elements";
        const char *bad = ply_line(line, &format, &element);
        if (bad) return bad;
        i = e + 1;
    }
    return "a PLY header ends with \"end_header\" within 64 KiB";
}

/* glb_check.c: the header, the chunks and the JSON as the glTF 2 importer's
 * probe accepts them (else Assimp would probe all its importers) */
static const char *sniff_glb(const uint8_t *b, size_t n) {
    return glb_check(b, n);
}

/* ---- Assimp's file system: this one buffer --------------------------------- */
typedef struct mem_io {
    struct aiFileIO io; /* first: Assimp hands back its address */
    const char *name;
    const uint8_t *buf;
    size_t len;
} mem_io;

typedef struct mem_file {
    struct aiFile f; /* first */
    const uint8_t *buf;
    size_t len, pos;
} mem_file;

static size_t mf_read(struct aiFile *f, char *out, size_t size, size_t count) {
    mem_file *m = (mem_file *)f;
    if (!size || !count) return 0;
    size_t left = m->len - m->pos, want = count <= left / size ? count : left / size;
    memcpy(out, m->buf + m->pos, want * size);
    m->pos += want * size;
    return want;
}
static size_t mf_write(struct aiFile *f, const char *in, size_t size, size_t count) {
    (void)f, (void)in, (void)size, (void)count;
    return 0;
}
static size_t mf_tell(struct aiFile *f) {
    return ((mem_file *)f)->pos;
}
static size_t mf_size(struct aiFile *f) {
    return ((mem_file *)f)->len;
}
static void mf_flush(struct aiFile *f) {
    (void)f;
}
static enum aiReturn mf_seek(struct aiFile *f, size_t off, enum aiOrigin o) {
    mem_file *m = (mem_file *)f;
    size_t base = o == aiOrigin_SET ? 0 : (o == aiOrigin_CUR ? m->pos : m->len);
    if (o != aiOrigin_SET && o != aiOrigin_CUR && o != aiOrigin_END) return aiReturn_FAILURE;
    if (off > m->len - base) return aiReturn_FAILURE;
    m->pos = base + off;
    return aiReturn_SUCCESS;
}

static struct aiFile *io_open(struct aiFileIO *io, const char *name, const char *mode) {
    mem_io *mi = (mem_io *)io;
    if (!name || !mode || strchr(mode, 'w') || strchr(mode, 'a') || strcmp(name, mi->name) != 0) return NULL;
    mem_file *m = calloc(1, sizeof *m);
    if (!m) return NULL;
    m->f.ReadProc = mf_read, m->f.WriteProc = mf_write, m->f.TellProc = mf_tell, m->f.FileSizeProc = mf_size;
    m->f.SeekProc = mf_seek, m->f.FlushProc = mf_flush;
    m->buf = mi->buf, m->len = mi->len;
    return &m->f;
}
static void io_close(struct aiFileIO *io, struct aiFile *f) {
    (void)io;
    free(f);
}

/* ---- the scene's triangles ------------------------------------------------- */
typedef struct xform {
    double m[3][4]; /* rows of an affine map */
} xform;

static xform compose(const xform *p, const struct aiMatrix4x4 *c) {
    const double C[3][4] = {{c->a1, c->a2, c->a3, c->a4}, {c->b1, c->b2, c->b3, c->b4}, {c->c1, c->c2, c->c3, c->c4}};
    xform r;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 4; j++)
            r.m[i][j] = p->m[i][0] * C[0][j] + p->m[i][1] * C[1][j] + p->m[i][2] * C[2][j] + (j == 3 ? p->m[i][3] : 0);
    return r;
}

#define NODE_STACK 4096     /* deepest node tree walked */
#define NODE_VISITS 1000000 /* most nodes visited (a tree with a cycle never ends) */

typedef struct walk {
    const struct aiScene *sc;
    const struct aiNode *node[NODE_STACK];
    xform at[NODE_STACK];
    int top;
} walk;

/* Visits every (node, mesh) pair with its transform; fn returns false to
 * stop.  false when the tree is deeper than NODE_STACK or names a mesh the
 * scene does not have. */
static bool walk_scene(walk *w, bool (*fn)(void *ctx, const struct aiMesh *m, const xform *t), void *ctx,
                       const char **why) {
    const xform I = {{{1, 0, 0, 0}, {0, 1, 0, 0}, {0, 0, 1, 0}}};
    w->top = 0;
    long visits = 0;
    if (!w->sc->mRootNode) return true;
    w->node[w->top] = w->sc->mRootNode, w->at[w->top++] = compose(&I, &w->sc->mRootNode->mTransformation);
    while (w->top > 0) {
        const struct aiNode *n = w->node[--w->top];
        const xform t = w->at[w->top];
        if (++visits > NODE_VISITS) return *why = "the scene has too many nodes", false;
        for (unsigned k = 0; k < n->mNumMeshes; k++) {
            if (n->mMeshes[k] >= w->sc->mNumMeshes) return *why = "a node names a mesh the file does not hold", false;
            if (!fn(ctx, w->sc->mMeshes[n->mMeshes[k]], &t)) return true;
        }
        for (unsigned k = 0; k < n->mNumChildren; k++) {
            if (w->top >= NODE_STACK) return *why = "the scene's node tree is too deep", false;
            w->node[w->top] = n->mChildren[k], w->at[w->top++] = compose(&t, &n->mChildren[k]->mTransformation);
        }
    }
    return true;
}

typedef struct gather {
    mesh_data *d; /* NULL: only count */
    long tris, verts, max_tris, max_verts;
} gather;

/* Stops (its counts past the bounds) at the first mesh that would take
 * them past max_tris or max_verts. */
static bool gather_mesh(void *ctx, const struct aiMesh *m, const xform *t) {
    gather *g = ctx;
    long tris = 0;
    for (unsigned f = 0; f < m->mNumFaces; f++)
        tris += m->mFaces[f].mNumIndices >= 3 ? m->mFaces[f].mNumIndices - 2 : 0;
    if (g->tris + tris > g->max_tris || g->verts + (long)m->mNumVertices > g->max_verts) {
        g->tris += tris, g->verts += m->mNumVertices;
        return false;
    }
    if (g->d) {
        fs_vec3 *V = g->d->vertices + g->verts;
        for (unsigned i = 0; i < m->mNumVertices; i++) {
            const struct aiVector3D p = m->mVertices[i];
            const double(*M)[4] = t->m;
            V[i] = (fs_vec3){(float)(M[0][0] * p.x + M[0][1] * p.y + M[0][2] * p.z + M[0][3]),
                             (float)(M[1][0] * p.x + M[1][1] * p.y + M[1][2] * p.z + M[1][3]),
                             (float)(M[2][0] * p.x + M[2][1] * p.y + M[2][2] * p.z + M[2][3])};
        }
        uint32_t *T = g->d->triangles + 3 * g->tris;
        for (unsigned f = 0; f < m->mNumFaces; f++) {
            const struct aiFace *F = &m->mFaces[f];
            /* points and lines are left out; a polygon is cut into a fan
             * from its first corner (exact for convex polygons; a concave
             * one's fan overlaps itself, and a fan triangle on a line is
             * refused as degenerate) */
            for (unsigned c = 1; c + 1 < F->mNumIndices; c++) {
                const unsigned idx[3] = {F->mIndices[0], F->mIndices[c], F->mIndices[c + 1]};
                for (int k = 0; k < 3; k++) /* an index out of range stays out of range: fs_mesh_check refuses it */
                    *T++ = idx[k] < m->mNumVertices ? (uint32_t)g->verts + idx[k] : UINT32_MAX;
            }
        }
    }
    g->tris += tris, g->verts += m->mNumVertices;
    return true;
}

/* ---- welding identical positions ------------------------------------------------ */
typedef struct keyed {
    fs_vec3 v;
    int32_t i;
} keyed;

static int keyed_cmp(const void *pa, const void *pb) {
    const keyed *a = pa, *b = pb;
    if (a->v.x != b->v.x) return a->v.x < b->v.x ? -1 : 1;
    if (a->v.y != b->v.y) return a->v.y < b->v.y ? -1 : 1;
    if (a->v.z != b->v.z) return a->v.z < b->v.z ? -1 : 1;
    return a->i < b->i ? -1 : (a->i > b->i);
}

/* Merges the vertices at one position (the positions are finite) and drops
 * those no triangle uses. */
static int weld(mesh_data *d) {
    int n = d->vertex_count;
    keyed *k = malloc(sizeof *k * (size_t)n);
    int32_t *map = malloc(sizeof(int32_t) * (size_t)n);
    fs_vec3 *out = malloc(sizeof(fs_vec3) * (size_t)n);
    if (!k || !map || !out) return free(k), free(map), free(out), -1;
    for (int i = 0; i < n; i++) k[i] = (keyed){d->vertices[i], i};
    qsort(k, (size_t)n, sizeof *k, keyed_cmp);
    int u = 0;
    for (int q = 0; q < n; q++) {
        if (q == 0 || k[q].v.x != out[u - 1].x || k[q].v.y != out[u - 1].y || k[q].v.z != out[u - 1].z)
            out[u++] = k[q].v;
        map[k[q].i] = u - 1;
    }
    /* the welded vertices no triangle uses are dropped (map again: -1 unused) */
    for (int q = 0; q < u; q++) k[q].i = -1;
    for (long t = 0; t < 3L * d->triangle_count; t++)
        if (d->triangles[t] < (uint32_t)n) k[map[d->triangles[t]]].i = 0;
    int used = 0;
    for (int q = 0; q < u; q++)
        if (k[q].i == 0) k[q].i = used, out[used++] = out[q];
    for (long t = 0; t < 3L * d->triangle_count; t++)
        if (d->triangles[t] < (uint32_t)n) d->triangles[t] = (uint32_t)k[map[d->triangles[t]]].i;
    free(d->vertices), free(k), free(map);
    d->vertices = out, d->vertex_count = used;
    return 0;
}

/* ---- what both readers end with ------------------------------------------------ */
/* One pass of a reader over its file: with d NULL it counts the triangles
 * and the vertices (before welding) into *tris and *verts, stopping once
 * past the limits if it can; with d holding room for what it counted
 * (d->vertex_count, d->triangle_count) it fills that room.  0, or -1 with
 * a sentence in err. */
typedef int read_pass(void *src, mesh_data *d, const mesh_limits *lim, long *tris, long *verts, char *err,
                      size_t errlen);

/* The file's triangles into out: counted, held to the limits (over: what
 * the bound's sentence adds), room made, filled, checked finite, welded. */
static int collect(read_pass *pass, void *src, const char *over, const mesh_limits *lim, mesh_data *out, char *err,
                   size_t errlen) {
    long tris = 0, verts = 0;
    if (pass(src, NULL, lim, &tris, &verts, err, errlen) != 0) return -1;
    if (tris > lim->max_triangles || verts > FS_MESH_MAX_VERTICES)
        return wire_refuse(err, errlen, "mesh: more than %d triangles or %d vertices%s", lim->max_triangles,
                           FS_MESH_MAX_VERTICES, over);
    if (tris == 0) return wire_refuse(err, errlen, "mesh: the file holds no triangles");
    out->vertices = malloc(sizeof(fs_vec3) * (size_t)(verts ? verts : 1));
    out->triangles = malloc(sizeof(uint32_t) * 3 * (size_t)tris);
    if (!out->vertices || !out->triangles) return wire_refuse(err, errlen, "mesh: out of memory");
    out->vertex_count = (int)verts, out->triangle_count = (int)tris;
    long filled_tris = 0, filled_verts = 0;
    if (pass(src, out, lim, &filled_tris, &filled_verts, err, errlen) != 0) return -1;
    if (filled_tris != tris || filled_verts != verts)
        return wire_refuse(err, errlen, "mesh: the file read differently the second time");
    for (int i = 0; i < out->vertex_count; i++)
        if (!isfinite(out->vertices[i].x) || !isfinite(out->vertices[i].y) || !isfinite(out->vertices[i].z))
            return wire_refuse(err, errlen, "mesh: vertex %d is not finite", i);
    if (weld(out) != 0) return wire_refuse(err, errlen, "mesh: out of memory");
    return 0;
}

/* Assimp's scene (src: a walk holding it), walked for its triangles. */
static int scene_pass(void *src, mesh_data *d, const mesh_limits *lim, long *tris, long *verts, char *err,
                      size_t errlen) {
    walk *w = src;
    gather g = {d, 0, 0, d ? d->triangle_count : lim->max_triangles, d ? d->vertex_count : FS_MESH_MAX_VERTICES};
    const char *why = NULL;
    const bool ok = walk_scene(w, gather_mesh, &g, &why);
    *tris = g.tris, *verts = g.verts;
    return ok && !why ? 0 : wire_refuse(err, errlen, "mesh: %s", why ? why : "unreadable scene");
}

/* An OBJ's text (src: an obj_text), read by obj_read.c. */
typedef struct obj_text {
    const void *buf;
    size_t len;
} obj_text;

static int obj_pass(void *src, mesh_data *d, const mesh_limits *lim, long *tris, long *verts, char *err,
                    size_t errlen) {
    (void)lim; /* obj_read reads to the end: its counts are bounded by the file's size */
    const obj_text *t = src;
    obj_out o = {0};
    if (d) o.vertices = d->vertices, o.triangles = d->triangles, o.vertex_room = d->vertex_count;
    if (d) o.triangle_room = d->triangle_count;
    const int rc = obj_read(t->buf, t->len, &o, err, errlen);
    *tris = o.triangle_count, *verts = o.vertex_count;
    return rc;
}

/* What can be refused without Assimp: the format, the size, the bounds and
 * the format's first bytes. */
static int precheck(const void *buf, size_t len, mesh_format f, const mesh_limits *L, char *err, size_t errlen) {
    if ((int)f < 0 || f >= MESH_FORMAT_COUNT) return wire_refuse(err, errlen, "mesh: unknown format %d", (int)f);
    if (!buf || len == 0) return wire_refuse(err, errlen, "mesh: the file is empty");
    if (len > L->max_bytes)
        return wire_refuse(err, errlen, "mesh: %zu bytes, above the %zu allowed", len, L->max_bytes);
    if (L->max_triangles < 1 || L->max_triangles > FS_MESH_MAX_TRIANGLES)
        return wire_refuse(err, errlen, "mesh: a triangle bound of %d is outside 1..%d", L->max_triangles,
                           FS_MESH_MAX_TRIANGLES);
    static const char *(*const sniff[MESH_FORMAT_COUNT])(const uint8_t *, size_t) = {sniff_stl, sniff_obj, sniff_ply,
                                                                                     sniff_glb};
    const char *bad = sniff[f](buf, len);
    if (bad) return wire_refuse(err, errlen, "mesh: not %s: %s", FORMATS[f].type, bad);
    if (f == MESH_PLY && !PLY_ENABLED)
        return wire_refuse(err, errlen,
                           "mesh: PLY is off (Assimp 5.2's PLY reader corrupts its heap on some files): send "
                           "STL, OBJ or binary glTF");
    return 0;
}

/* Whether the format's own importer read the scene: Assimp records the
 * importer's name in the scene's metadata (AI_METADATA_SOURCE_FORMAT).  A
 * last word behind the first bytes' checks, which keep the file from every
 * other importer (glb_check.c says how one could reach them). */
static bool read_by(const struct aiScene *sc, mesh_format f) {
    const struct aiMetadata *md = sc->mMetaData;
    for (unsigned k = 0; md && md->mKeys && md->mValues && k < md->mNumProperties; k++) {
        const struct aiMetadataEntry *e = &md->mValues[k];
        if (strcmp(md->mKeys[k].data, AI_METADATA_SOURCE_FORMAT) != 0) continue;
        return e->mType == AI_AISTRING && e->mData &&
               strcmp(((const struct aiString *)e->mData)->data, FORMATS[f].importer) == 0;
    }
    return false;
}

static pthread_mutex_t loader_lock = PTHREAD_MUTEX_INITIALIZER;

/* Assimp's import (lock: take the loader's lock around it; a forked reader
 * is alone in its process and needs none) and the scene's triangles. */
static int assimp_import(const void *buf, size_t len, mesh_format f, const mesh_limits *L, mesh_data *out, char *err,
                         size_t errlen, bool lock) {
    if (!FORMATS[f].name) return wire_refuse(err, errlen, "mesh: %s is not read by Assimp", FORMATS[f].type);
    mem_io io = {{io_open, io_close, NULL}, FORMATS[f].name, buf, len};
    struct aiPropertyStore *props = aiCreatePropertyStore();
    if (!props) return wire_refuse(err, errlen, "mesh: out of memory");
    /* Assimp's own triangulation (aiProcess_Triangulate) is not run: on a
     * PLY face list fuzz_mesh found, it fails an assertion that aborts the
     * process; gather_mesh cuts polygons itself */
    const unsigned flags = aiProcess_ValidateDataStructure;
    if (lock) pthread_mutex_lock(&loader_lock);
    const struct aiScene *sc = aiImportFileExWithProperties(FORMATS[f].name, flags, &io.io, props);
    int rc;
    if (!sc) {
        /* Assimp's reason quotes the file: only its printable ASCII is kept */
        char why[101];
        const char *a = aiGetErrorString();
        size_t k = 0;
        for (; a && a[k] && k < sizeof why - 1; k++) why[k] = a[k] >= 0x20 && a[k] <= 0x7e ? a[k] : '?';
        why[k] = 0;
        rc = wire_refuse(err, errlen, "mesh: %s could not be read: %s", FORMATS[f].type, why);
    } else if (!read_by(sc, f)) {
        rc = wire_refuse(err, errlen, "mesh: %s was read by another of Assimp's importers", FORMATS[f].type);
    } else {
        walk *w = malloc(sizeof *w);
        if (w) w->sc = sc;
        rc = w ? collect(scene_pass, w, " (with every instance counted)", L, out, err, errlen)
               : wire_refuse(err, errlen, "mesh: out of memory");
        free(w);
    }
    if (sc) aiReleaseImport(sc);
    if (lock) pthread_mutex_unlock(&loader_lock);
    aiReleasePropertyStore(props);
    return rc;
}

/* The file's triangles: an OBJ through obj_read.c, the others through
 * Assimp. */
static int import(const void *buf, size_t len, mesh_format f, const mesh_limits *L, mesh_data *out, char *err,
                  size_t errlen, bool lock) {
    if (f == MESH_OBJ) {
        obj_text t = {buf, len};
        return collect(obj_pass, &t, "", L, out, err, errlen);
    }
    return assimp_import(buf, len, f, L, out, err, errlen, lock);
}

/* The last word on what comes back, from a reader or from a reader process. */
static int finish(int rc, mesh_data *out, char *err, size_t errlen) {
    if (rc == 0) {
        fs_error why = {{0}};
        fs_mesh m = mesh_data_view(out);
        if (fs_mesh_check(&m, &why) != FS_OK) rc = wire_refuse(err, errlen, "%s", why.msg);
    }
    if (rc != 0) mesh_data_free(out);
    return rc;
}

int mesh_load(const void *buf, size_t len, mesh_format f, const mesh_limits *lim, mesh_data *out, char *err,
              size_t errlen) {
    memset(out, 0, sizeof *out);
    const mesh_limits L = lim ? *lim : mesh_default_limits();
    if (precheck(buf, len, f, &L, err, errlen) != 0) return -1;
    return finish(import(buf, len, f, &L, out, err, errlen, true), out, err, errlen);
}

/* ---- the reader in a process of its own ---------------------------------------- */
/* What the reader writes to the pipe, then the vertices and triangles. */
typedef struct reply_head {
    int32_t rc, vertex_count, triangle_count;
    char err[200];
} reply_head;

static bool write_all(int fd, const void *p, size_t n) {
    const char *c = p;
    while (n) {
        ssize_t k = write(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k, n -= (size_t)k;
    }
    return true;
}

static bool read_all(int fd, void *p, size_t n) {
    char *c = p;
    while (n) {
        ssize_t k = read(fd, c, n);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return false;
        c += k, n -= (size_t)k;
    }
    return true;
}

/* The forked reader: bounded in CPU time (and, outside the sanitizers,
 * whose shadow memory needs the address space, in memory), it imports,
 * writes its reply and exits without running exit handlers. */
static void reader(int fd, const void *buf, size_t len, mesh_format f, const mesh_limits *L) __attribute__((noreturn));
static void reader(int fd, const void *buf, size_t len, mesh_format f, const mesh_limits *L) {
    struct rlimit cpu = {MESH_READER_CPU_S, MESH_READER_CPU_S};
    setrlimit(RLIMIT_CPU, &cpu);
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
    struct rlimit as = {MESH_READER_MEMORY, MESH_READER_MEMORY};
    setrlimit(RLIMIT_AS, &as);
#endif
    mesh_data d = {0};
    reply_head h = {0};
    h.rc = import(buf, len, f, L, &d, h.err, sizeof h.err, false);
    h.vertex_count = h.rc ? 0 : d.vertex_count, h.triangle_count = h.rc ? 0 : d.triangle_count;
    bool ok = write_all(fd, &h, sizeof h);
    if (ok && h.rc == 0)
        ok = write_all(fd, d.vertices, sizeof(fs_vec3) * (size_t)d.vertex_count) &&
             write_all(fd, d.triangles, sizeof(uint32_t) * 3 * (size_t)d.triangle_count);
    _exit(ok ? 0 : 1);
}

int mesh_load_isolated(const void *buf, size_t len, mesh_format f, const mesh_limits *lim, mesh_data *out, char *err,
                       size_t errlen) {
    memset(out, 0, sizeof *out);
    const mesh_limits L = lim ? *lim : mesh_default_limits();
    if (precheck(buf, len, f, &L, err, errlen) != 0) return -1;
    int fds[2];
    if (pipe(fds) != 0) return wire_refuse(err, errlen, "mesh: no pipe for the reader (%s)", strerror(errno));
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]), close(fds[1]);
        return wire_refuse(err, errlen, "mesh: no reader process (%s)", strerror(errno));
    }
    if (pid == 0) {
        close(fds[0]);
        reader(fds[1], buf, len, f, &L);
    }
    close(fds[1]);
    reply_head h;
    int rc = -1;
    if (!read_all(fds[0], &h, sizeof h)) {
        rc = wire_refuse(err, errlen, "mesh: the reader stopped on this %s file", FORMATS[f].type);
    } else if (h.rc != 0) {
        h.err[sizeof h.err - 1] = 0;
        rc = wire_refuse(err, errlen, "%s", h.err);
    } else if (h.vertex_count < 3 || h.vertex_count > FS_MESH_MAX_VERTICES || h.triangle_count < 1 ||
               h.triangle_count > L.max_triangles) {
        rc = wire_refuse(err, errlen, "mesh: the reader answered %d vertices and %d triangles", h.vertex_count,
                         h.triangle_count);
    } else {
        out->vertices = malloc(sizeof(fs_vec3) * (size_t)h.vertex_count);
        out->triangles = malloc(sizeof(uint32_t) * 3 * (size_t)h.triangle_count);
        out->vertex_count = h.vertex_count, out->triangle_count = h.triangle_count;
        if (!out->vertices || !out->triangles)
            rc = wire_refuse(err, errlen, "mesh: out of memory");
        else if (!read_all(fds[0], out->vertices, sizeof(fs_vec3) * (size_t)h.vertex_count) ||
                 !read_all(fds[0], out->triangles, sizeof(uint32_t) * 3 * (size_t)h.triangle_count))
            rc = wire_refuse(err, errlen, "mesh: the reader's answer was cut short");
        else
            rc = 0;
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (rc == 0 && !(WIFEXITED(status) && WEXITSTATUS(status) == 0))
        rc = wire_refuse(err, errlen, "mesh: the reader failed on this %s file", FORMATS[f].type);
    if (rc != 0 && WIFSIGNALED(status))
        wire_refuse(err, errlen, "mesh: the reader failed on this %s file (signal %d)", FORMATS[f].type,
                    WTERMSIG(status));
    return finish(rc, out, err, errlen);
}
