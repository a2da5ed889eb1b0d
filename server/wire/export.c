/* export.c - particles as PLY, VTP, VTU and CSV (see export.h). */
#include "export.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "fmt_num.h"

static const struct {
    const char *name, *ctype;
} formats[EXPORT_COUNT] = {
    [EXPORT_JSON] = {"json", "application/json"},
    [EXPORT_PLY] = {"ply", "application/x-ply"},
    [EXPORT_VTP] = {"vtp", "application/x-vtk-vtp+xml"},
    [EXPORT_VTU] = {"vtu", "application/x-vtk-vtu+xml"},
    [EXPORT_CSV] = {"csv", "text/csv"},
};

const char *export_name(export_format f) {
    return f >= 0 && f < EXPORT_COUNT ? formats[f].name : "?";
}

const char *export_content_type(export_format f) {
    return f >= 0 && f < EXPORT_COUNT ? formats[f].ctype : "application/octet-stream";
}

int export_find(const char *name) {
    for (int f = 0; f < EXPORT_COUNT; f++)
        if (!strcasecmp(name, formats[f].name)) return f;
    return -1;
}

int export_from_accept(const char *accept) {
    if (!accept || !*accept) return EXPORT_JSON;
    const char *p = accept;
    while (*p) { /* each media range, in the order given (quality values are not weighed) */
        while (*p == ' ' || *p == ',') p++;
        size_t len = strcspn(p, ",;");
        if (!len) break;
        if ((len == 3 && !strncmp(p, "*/*", 3)) || (len == 13 && !strncmp(p, "application/*", 13))) return EXPORT_JSON;
        for (int f = 0; f < EXPORT_COUNT; f++)
            if (strlen(formats[f].ctype) == len && !strncasecmp(p, formats[f].ctype, len)) return f;
        p += len;
        p += strcspn(p, ","); /* skip parameters */
    }
    return -1;
}

const char *export_list(void) {
    return "json, ply, vtp, vtu, csv";
}

/* ---- The documents: a list of steps, each fixed text or one line or record
 * per particle ------------------------------------------------------------- */

enum item { T_TEXT, P_PLY, P_CSV, P_POS, P_VEL, P_MAT, P_TEMP, P_ID, P_INDEX, P_OFFSET, P_TYPE };

typedef struct step {
    int item;
    const char *text; /* T_TEXT: may hold %1$d (the particle count) */
} step;

#define VTK_ARRAY(type, name, comps)                                                                                   \
    "<DataArray type=\"" type "\" Name=\"" name "\" NumberOfComponents=\"" comps "\" format=\"ascii\">\n"
#define VTK_HEAD(kind, piece)                                                                                          \
    "<?xml version=\"1.0\"?>\n<VTKFile type=\"" kind "\" version=\"1.0\" byte_order=\"LittleEndian\" "                 \
    "header_type=\"UInt64\">\n<" kind ">\n" piece                                                                      \
    "\n<PointData Scalars=\"material\" Vectors=\"velocity\">\n" VTK_ARRAY("Float32", "velocity", "3")
#define VTK_POINT_DATA_REST                                                                                            \
    {T_TEXT, "</DataArray>\n" VTK_ARRAY("UInt8", "material", "1")}, {P_MAT, NULL},                                     \
        {T_TEXT, "</DataArray>\n" VTK_ARRAY("Float32", "temperature", "1")}, {P_TEMP, NULL},                           \
        {T_TEXT, "</DataArray>\n" VTK_ARRAY("UInt32", "id", "1")}, {P_ID, NULL},                                       \
        {T_TEXT, "</DataArray>\n</PointData>\n<Points>\n" VTK_ARRAY("Float32", "Points", "3")}, {                      \
        P_POS, NULL                                                                                                    \
    }

static const step ply[] = {
    {T_TEXT, "ply\nformat binary_little_endian 1.0\ncomment fluid-server particles\nelement vertex %1$d\n"
             "property float x\nproperty float y\nproperty float z\nproperty float vx\nproperty float vy\n"
             "property float vz\nproperty uchar material\nproperty float temperature\nproperty uint id\nend_header\n"},
    {P_PLY, NULL},
    {-1, NULL},
};
static const step csv[] = {
    {T_TEXT, "id,x,y,z,vx,vy,vz,material,material_name,temperature\n"},
    {P_CSV, NULL},
    {-1, NULL},
};
static const step vtp[] = {
    {T_TEXT, VTK_HEAD("PolyData", "<Piece NumberOfPoints=\"%1$d\" NumberOfVerts=\"%1$d\" NumberOfLines=\"0\" "
                                  "NumberOfStrips=\"0\" NumberOfPolys=\"0\">")},
    {P_VEL, NULL},
    VTK_POINT_DATA_REST,
    {T_TEXT, "</DataArray>\n</Points>\n<Verts>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n"},
    {P_INDEX, NULL},
    {T_TEXT, "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n"},
    {P_OFFSET, NULL},
    {T_TEXT, "</DataArray>\n</Verts>\n</Piece>\n</PolyData>\n</VTKFile>\n"},
    {-1, NULL},
};
static const step vtu[] = {
    {T_TEXT, VTK_HEAD("UnstructuredGrid", "<Piece NumberOfPoints=\"%1$d\" NumberOfCells=\"%1$d\">")},
    {P_VEL, NULL},
    VTK_POINT_DATA_REST,
    {T_TEXT, "</DataArray>\n</Points>\n<Cells>\n<DataArray type=\"Int64\" Name=\"connectivity\" format=\"ascii\">\n"},
    {P_INDEX, NULL},
    {T_TEXT, "</DataArray>\n<DataArray type=\"Int64\" Name=\"offsets\" format=\"ascii\">\n"},
    {P_OFFSET, NULL},
    {T_TEXT, "</DataArray>\n<DataArray type=\"UInt8\" Name=\"types\" format=\"ascii\">\n"},
    {P_TYPE, NULL},
    {T_TEXT, "</DataArray>\n</Cells>\n</Piece>\n</UnstructuredGrid>\n</VTKFile>\n"},
    {-1, NULL},
};

static const step *steps_of(export_format f) {
    return f == EXPORT_PLY ? ply : f == EXPORT_CSV ? csv : f == EXPORT_VTP ? vtp : f == EXPORT_VTU ? vtu : NULL;
}

void export_begin(export_gen *g, export_format f, const particles_snap *s, const char *const *material, int materials) {
    memset(g, 0, sizeof *g);
    g->fmt = f;
    g->s = s;
    g->material = material;
    g->materials = materials;
}

static void put_f32(char *o, float v) {
    memcpy(o, &v, 4); /* every platform this builds on is little-endian, as PLY says */
}

/* Floats separated by sep, each as "%.9g" writes it (fmt_num.h), then
 * `end`; returns the length. */
static size_t put_g9s(char *o, const float *v, int n, char sep, char end) {
    size_t l = 0;
    for (int i = 0; i < n; i++) {
        l += fmt_g9(v[i], o + l);
        o[l++] = i + 1 < n ? sep : end;
    }
    return l;
}

static size_t put_line_u32(char *o, uint32_t v) {
    size_t l = fmt_u32(v, o);
    o[l++] = '\n';
    return l;
}

/* Formats particle k of an item into o (cap bytes: the pending buffer,
 * which one line of at most 10 numbers and a material's name fits). */
static size_t particle(const export_gen *g, int item, int k, char *o, size_t cap) {
    const particles_snap *s = g->s;
    const float *p = &s->pos[3 * k], *v = &s->vel[3 * k];
    switch (item) {
    case P_PLY: {
        for (int a = 0; a < 3; a++) put_f32(o + 4 * a, p[a]);
        for (int a = 0; a < 3; a++) put_f32(o + 12 + 4 * a, v[a]);
        o[24] = (char)s->material[k];
        put_f32(o + 25, s->temp[k]);
        uint32_t id = s->id[k];
        memcpy(o + 29, &id, 4);
        return 33;
    }
    case P_CSV: {
        /* id,x,y,z,vx,vy,vz,material,material_name,temperature */
        const char *name = g->material && s->material[k] < g->materials ? g->material[s->material[k]] : "";
        size_t l = fmt_u32(s->id[k], o);
        o[l++] = ',';
        l += put_g9s(o + l, p, 3, ',', ',');
        l += put_g9s(o + l, v, 3, ',', ',');
        l += fmt_u32(s->material[k], o + l);
        o[l++] = ',';
        size_t room = cap - l - FMT_NUM_MAX - 2, nl = strlen(name); /* (cap: 1024, the numbers take at most 300) */
        if (nl > room) nl = room;
        memcpy(o + l, name, nl);
        l += nl;
        o[l++] = ',';
        return l + put_g9s(o + l, &s->temp[k], 1, '\n', '\n');
    }
    case P_POS:
        return put_g9s(o, p, 3, ' ', '\n');
    case P_VEL:
        return put_g9s(o, v, 3, ' ', '\n');
    case P_MAT:
        return put_line_u32(o, s->material[k]);
    case P_TEMP:
        return put_g9s(o, &s->temp[k], 1, '\n', '\n');
    case P_ID:
        return put_line_u32(o, s->id[k]);
    case P_INDEX:
        return put_line_u32(o, (uint32_t)k);
    case P_OFFSET:
        return put_line_u32(o, (uint32_t)k + 1);
    default:
        memcpy(o, "1\n", 2); /* P_TYPE: VTK_VERTEX */
        return 2;
    }
}

/* Fills g->pending with the next item; false at the end. */
static bool refill(export_gen *g) {
    const step *st = steps_of(g->fmt);
    if (!st) return false;
    for (;;) {
        const step *cur = &st[g->section];
        if (cur->item < 0) return false;
        if (cur->item == T_TEXT) {
            int l = snprintf(g->pending, sizeof g->pending, cur->text, g->s->count);
            g->pend_len = l < 0 ? 0 : (size_t)l >= sizeof g->pending ? sizeof g->pending - 1 : (size_t)l;
            g->section++;
            g->k = 0;
            return true;
        }
        if (g->k < g->s->count) {
            size_t l = particle(g, cur->item, g->k++, g->pending, sizeof g->pending);
            g->pend_len = l >= sizeof g->pending ? sizeof g->pending - 1 : l;
            return true;
        }
        g->section++;
        g->k = 0;
    }
}

size_t export_next(export_gen *g, uint8_t *out, size_t cap) {
    size_t n = 0;
    while (n < cap) {
        if (g->pend_off == g->pend_len) {
            g->pend_off = g->pend_len = 0;
            if (!refill(g)) break;
        }
        size_t c = g->pend_len - g->pend_off;
        if (c > cap - n) c = cap - n;
        memcpy(out + n, g->pending + g->pend_off, c);
        g->pend_off += c;
        n += c;
    }
    return n;
}
