/* fluid_rec.c - the recording tool: replays a recording (a folder of
 * segments, protocol/PROTOCOL.md "Recordings") without a server, checks it,
 * and writes it as a numbered series of VTK PolyData files (.vtp) with a
 * ParaView time-series index (.pvd).  A damaged or truncated segment is
 * replayed up to the damage, which is reported with its byte offset.
 *
 *   fluid-rec check DIR             every frame decoded; frames, keyframes, damage
 *   fluid-rec vtp DIR OUT [EVERY]   OUT/frame_NNNNNN.vtp (every EVERY-th frame) and OUT/series.pvd
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "frame_codec.h"
#include "recfile.h"
#include "wire.h"

typedef struct replay {
    const char *out; /* NULL: check only */
    int every;
    fc_decoder *dec;
    int cap;
    long frames, keys, refused, written, damaged;
    FILE *pvd;
} replay;

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static unsigned char *slurp(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    unsigned char *buf = NULL;
    size_t cap = 0, len = 0;
    for (;;) {
        if (len == cap) {
            size_t nc = cap ? cap * 2 : 1 << 20;
            unsigned char *nb = nc > ((size_t)1 << 31) ? NULL : realloc(buf, nc);
            if (!nb) {
                free(buf);
                fclose(f);
                return NULL;
            }
            buf = nb, cap = nc;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (!got) break;
    }
    fclose(f);
    *n = len;
    return buf;
}

static void write_vtp(replay *r, const fc_frame *f, const wire_frame_view *v) {
    char path[2048];
    snprintf(path, sizeof path, "%s/frame_%06ld.vtp", r->out, r->written);
    FILE *o = fopen(path, "w");
    if (!o) {
        fprintf(stderr, "fluid-rec: cannot write %s: %s\n", path, strerror(errno));
        exit(1);
    }
    fprintf(o,
            "<?xml version=\"1.0\"?>\n<VTKFile type=\"PolyData\" version=\"0.1\" byte_order=\"LittleEndian\">\n"
            "<PolyData>\n<Piece NumberOfPoints=\"%d\" NumberOfVerts=\"0\" NumberOfLines=\"0\" NumberOfStrips=\"0\" "
            "NumberOfPolys=\"0\">\n<PointData Scalars=\"material\">\n",
            f->n);
    fprintf(o, "<DataArray type=\"UInt32\" Name=\"id\" format=\"ascii\">\n");
    for (int k = 0; k < f->n; k++) fprintf(o, "%u\n", f->id[k]);
    fprintf(o, "</DataArray>\n<DataArray type=\"UInt8\" Name=\"material\" format=\"ascii\">\n");
    for (int k = 0; k < f->n; k++) fprintf(o, "%u\n", f->mat[k]);
    fprintf(o, "</DataArray>\n<DataArray type=\"Float32\" Name=\"temperature\" format=\"ascii\">\n");
    for (int k = 0; k < f->n; k++) fprintf(o, "%d\n", -40 + f->temp[k]);
    fprintf(o, "</DataArray>\n</PointData>\n<Points>\n<DataArray type=\"Float32\" NumberOfComponents=\"3\" "
               "format=\"ascii\">\n");
    for (int k = 0; k < f->n; k++)
        fprintf(o, "%.6g %.6g %.6g\n", f->grid.origin[0] + f->q[3 * k] * f->grid.step,
                f->grid.origin[1] + f->q[3 * k + 1] * f->grid.step, f->grid.origin[2] + f->q[3 * k + 2] * f->grid.step);
    fprintf(o, "</DataArray>\n</Points>\n</Piece>\n</PolyData>\n</VTKFile>\n");
    if (fclose(o)) {
        fprintf(stderr, "fluid-rec: writing %s failed\n", path);
        exit(1);
    }
    fprintf(r->pvd, "  <DataSet timestep=\"%.6f\" part=\"0\" file=\"frame_%06ld.vtp\"/>\n", v->sim_time, r->written);
    r->written++;
}

/* One record of a segment. */
static void record(replay *r, int kind, const uint8_t *p, size_t n, const char *seg) {
    wire_frame_view v;
    char err[200];
    if (kind != REC_HEADER && kind != REC_FRAME) return;
    if (wire_read_message(p, n, &v, err, sizeof err)) {
        fprintf(stderr, "fluid-rec: %s: %s\n", seg, err);
        return;
    }
    if (kind == REC_HEADER) {
        int cap = v.capacity > 0 && v.capacity <= FC_MAX_PARTICLES ? (int)v.capacity : 0;
        if (cap > r->cap) {
            fc_decoder_destroy(r->dec);
            r->dec = fc_decoder_create(cap);
            r->cap = r->dec ? cap : 0;
        }
        return;
    }
    const fc_frame *f = r->dec ? fc_decode(r->dec, v.data, v.len, err, sizeof err) : NULL;
    if (!f) {
        r->refused++;
        fprintf(stderr, "fluid-rec: %s: frame %u refused: %s\n", seg, v.seq, r->dec ? err : "no header before it");
        return;
    }
    r->frames++;
    r->keys += v.key;
    if (r->out && (r->frames - 1) % r->every == 0) write_vtp(r, f, &v);
}

static void segment(replay *r, const char *dir, const char *name) {
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    size_t n = 0;
    unsigned char *bytes = slurp(path, &n);
    if (!bytes) {
        fprintf(stderr, "fluid-rec: cannot read %s\n", path);
        r->damaged++;
        return;
    }
    rec_reader rd;
    int kind;
    const uint8_t *p;
    size_t len;
    if (rec_reader_init(&rd, bytes, n))
        while (rec_reader_next(&rd, &kind, &p, &len)) record(r, kind, p, len, name);
    if (rd.damage[0]) {
        printf("%s: replayed up to the damage: %s\n", name, rd.damage);
        r->damaged++;
    } else if (!rd.ended) {
        printf("%s: no end mark (the recording was running, or the server stopped without closing it)\n", name);
    }
    free(bytes);
}

int main(int argc, char **argv) {
    if (argc < 3 || (strcmp(argv[1], "check") && strcmp(argv[1], "vtp")) || (!strcmp(argv[1], "vtp") && argc < 4)) {
        fprintf(stderr, "usage: fluid-rec check DIR | fluid-rec vtp DIR OUT [EVERY]\n");
        return 2;
    }
    replay r = {.out = !strcmp(argv[1], "vtp") ? argv[3] : NULL, .every = argc > 4 ? atoi(argv[4]) : 1};
    if (r.every < 1) r.every = 1;
    const char *dir = argv[2];
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "fluid-rec: cannot open %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char *names[8192];
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) && count < 8192;)
        if (!strncmp(e->d_name, "seg-", 4) && strstr(e->d_name, ".fsrec")) names[count++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)count, sizeof *names, by_name);
    if (r.out) {
        mkdir(r.out, 0755);
        char pvd[2048];
        snprintf(pvd, sizeof pvd, "%s/series.pvd", r.out);
        r.pvd = fopen(pvd, "w");
        if (!r.pvd) {
            fprintf(stderr, "fluid-rec: cannot write %s: %s\n", pvd, strerror(errno));
            return 1;
        }
        fprintf(r.pvd, "<?xml version=\"1.0\"?>\n<VTKFile type=\"Collection\" version=\"0.1\">\n<Collection>\n");
    }
    for (int i = 0; i < count; i++) {
        segment(&r, dir, names[i]);
        free(names[i]);
    }
    if (r.pvd) {
        fprintf(r.pvd, "</Collection>\n</VTKFile>\n");
        fclose(r.pvd);
    }
    fc_decoder_destroy(r.dec);
    printf("%d segments, %ld frames decoded (%ld keyframes), %ld refused, %ld damaged segments%s\n", count, r.frames,
           r.keys, r.refused, r.damaged, r.out ? "" : "");
    if (r.out) printf("wrote %ld .vtp files and series.pvd to %s\n", r.written, r.out);
    return r.refused || r.damaged ? 1 : 0;
}
