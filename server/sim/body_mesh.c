/* body_mesh.c - rigid bodies of a closed triangle mesh (FS_SHAPE_MESH):
 * the mesh copied into the body's frame at its centre of mass along the
 * principal axes of its inertia tensor (the tensor of
 * fs_mesh_mass_properties, diagonalised by Jacobi rotations), the signed
 * distance field in that frame (sdf.c, as an obstacle's), the sample points
 * body contacts test (vertices, edge midpoints and triangle centroids,
 * spread by farthest-point sampling), and the public view of the mesh.
 * Everything is made when the body is created; the step only reads it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bodies.h"
#include "body_internal.h"

struct fs_mesh_body {
    fs_vec3 *verts; /* body frame */
    uint32_t *tris;
    int nv, nt;
    fs_sdf sdf;      /* body frame */
    fs_vec3 lo, hi;  /* the body-frame mesh's box */
    fs_vec3 half;    /* half extents of the box about the centre that holds it */
    float bound;     /* farthest vertex from the centre */
    double volume;   /* m^3 */
    fs_vec3 moments; /* principal moments at unit density, m^5 */
    v3 samples[FS_BODY_MESH_SAMPLES];
    int nsamples;
};

/* ---- the principal axes ------------------------------------------------------- */
/* Eigenvectors (the columns of V, a rotation) and eigenvalues (d) of the
 * symmetric 3 x 3 matrix A, by cyclic Jacobi rotations (Golub & Van Loan,
 * Alg. 8.5.3). */
static void jacobi3(double A[3][3], double V[3][3], double d[3]) {
    double a[3][3];
    memcpy(a, A, sizeof a);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) V[i][j] = i == j;
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = fabs(a[0][1]) + fabs(a[0][2]) + fabs(a[1][2]);
        double scale = fabs(a[0][0]) + fabs(a[1][1]) + fabs(a[2][2]);
        if (off <= 1e-15 * scale) break;
        for (int p = 0; p < 2; p++)
            for (int q = p + 1; q < 3; q++) {
                if (a[p][q] == 0) continue;
                double theta = (a[q][q] - a[p][p]) / (2 * a[p][q]);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1));
                double c = 1 / sqrt(t * t + 1), s = t * c;
                for (int k = 0; k < 3; k++) { /* A <- J^T A J */
                    double akp = a[k][p], akq = a[k][q];
                    a[k][p] = c * akp - s * akq, a[k][q] = s * akp + c * akq;
                }
                for (int k = 0; k < 3; k++) {
                    double apk = a[p][k], aqk = a[q][k];
                    a[p][k] = c * apk - s * aqk, a[q][k] = s * apk + c * aqk;
                }
                for (int k = 0; k < 3; k++) { /* V <- V J */
                    double vkp = V[k][p], vkq = V[k][q];
                    V[k][p] = c * vkp - s * vkq, V[k][q] = s * vkp + c * vkq;
                }
            }
    }
    for (int i = 0; i < 3; i++) d[i] = a[i][i];
    double det = V[0][0] * (V[1][1] * V[2][2] - V[1][2] * V[2][1]) - V[0][1] * (V[1][0] * V[2][2] - V[1][2] * V[2][0]) +
                 V[0][2] * (V[1][0] * V[2][1] - V[1][1] * V[2][0]);
    if (det < 0)
        for (int k = 0; k < 3; k++) V[k][2] = -V[k][2]; /* a rotation, not a reflection */
}

/* The unit quaternion of rotation matrix R (Shoemake 1985). */
static fs_quat quat_of(double R[3][3]) {
    double tr = R[0][0] + R[1][1] + R[2][2], w, x, y, z;
    if (tr > 0) {
        double s = 2 * sqrt(tr + 1);
        w = 0.25 * s, x = (R[2][1] - R[1][2]) / s, y = (R[0][2] - R[2][0]) / s, z = (R[1][0] - R[0][1]) / s;
    } else if (R[0][0] > R[1][1] && R[0][0] > R[2][2]) {
        double s = 2 * sqrt(1 + R[0][0] - R[1][1] - R[2][2]);
        w = (R[2][1] - R[1][2]) / s, x = 0.25 * s, y = (R[0][1] + R[1][0]) / s, z = (R[0][2] + R[2][0]) / s;
    } else if (R[1][1] > R[2][2]) {
        double s = 2 * sqrt(1 + R[1][1] - R[0][0] - R[2][2]);
        w = (R[0][2] - R[2][0]) / s, x = (R[0][1] + R[1][0]) / s, y = 0.25 * s, z = (R[1][2] + R[2][1]) / s;
    } else {
        double s = 2 * sqrt(1 + R[2][2] - R[0][0] - R[1][1]);
        w = (R[1][0] - R[0][1]) / s, x = (R[0][2] + R[2][0]) / s, y = (R[1][2] + R[2][1]) / s, z = 0.25 * s;
    }
    return qnorm((fs_quat){(float)w, (float)x, (float)y, (float)z});
}

static fs_quat qmul(fs_quat a, fs_quat b) {
    return (fs_quat){a.w * b.w - a.x * b.x - a.y * b.y - a.z * b.z, a.w * b.x + a.x * b.w + a.y * b.z - a.z * b.y,
                     a.w * b.y - a.x * b.z + a.y * b.w + a.z * b.x, a.w * b.z + a.x * b.y - a.y * b.x + a.z * b.w};
}

/* ---- the contact samples -------------------------------------------------------- */
/* Candidates (vertices, edge midpoints, triangle centroids; the last two only
 * while they number fewer than 4 times the samples: a fine mesh's vertices
 * cover it) thinned to at most FS_BODY_MESH_SAMPLES by farthest-point
 * sampling from the vertex farthest from the centre, then pulled 1% towards
 * the centre, as the box's samples are (body_shapes.c).  Allocates scratch. */
static bool make_samples(fs_mesh_body *m) {
    const bool fine = m->nv > 4 * FS_BODY_MESH_SAMPLES;
    const size_t nc = (size_t)m->nv + (fine ? 0 : 4 * (size_t)m->nt);
    v3 *c = malloc(sizeof(v3) * nc);
    float *dist = malloc(sizeof(float) * nc);
    if (!c || !dist) {
        free(c), free(dist);
        return false;
    }
    size_t n = 0;
    for (int i = 0; i < m->nv; i++) c[n++] = m->verts[i];
    for (int t = 0; !fine && t < m->nt; t++) {
        v3 a = m->verts[m->tris[3 * t]], b = m->verts[m->tris[3 * t + 1]], d = m->verts[m->tris[3 * t + 2]];
        c[n++] = mul(add(a, b), 0.5f), c[n++] = mul(add(b, d), 0.5f), c[n++] = mul(add(d, a), 0.5f);
        c[n++] = mul(add(add(a, b), d), 1.0f / 3.0f);
    }
    size_t first = 0;
    for (size_t k = 0; k < n; k++) {
        dist[k] = INFINITY;
        if (dot(c[k], c[k]) > dot(c[first], c[first])) first = k;
    }
    m->nsamples = 0;
    for (size_t pick = first; m->nsamples < FS_BODY_MESH_SAMPLES;) {
        m->samples[m->nsamples++] = mul(c[pick], 0.99f);
        float best = 0;
        size_t next = 0;
        for (size_t k = 0; k < n; k++) {
            v3 e = sub(c[k], c[pick]);
            dist[k] = fminf(dist[k], dot(e, e));
            if (dist[k] > best) best = dist[k], next = k;
        }
        if (!(best > 0)) break; /* every candidate taken */
        pick = next;
    }
    free(c), free(dist);
    return true;
}

/* ---- making and freeing ------------------------------------------------------- */
void fs__mesh_body_free(fs_mesh_body *m) {
    if (!m) return;
    free(m->verts), free(m->tris);
    fs__sdf_free(&m->sdf);
    free(m);
}

/* The distance grid in the body's frame: its box grown by 2 h, cells half
 * the particle spacing, coarser until it holds FS_BODY_MESH_MAX_NODES. */
static fs_status build_field(float h, float spacing, fs_mesh_body *m, fs_error *err) {
    const float grow = 2.0f * h;
    const fs_vec3 o = {m->lo.x - grow, m->lo.y - grow, m->lo.z - grow};
    const float ext[3] = {m->hi.x - m->lo.x + 2 * grow, m->hi.y - m->lo.y + 2 * grow, m->hi.z - m->lo.z + 2 * grow};
    float cell = 0.5f * spacing;
    int n[3];
    for (;;) {
        double nodes = 1;
        for (int a = 0; a < 3; a++) n[a] = (int)fmin(ceil(ext[a] / cell) + 1, 1e6), nodes *= n[a];
        if (nodes <= FS_BODY_MESH_MAX_NODES) break;
        cell *= 1.125f;
    }
    fs_error why = {{0}};
    fs_status st = fs__sdf_build(&m->sdf, m->verts, m->tris, m->nt, true, 0, o, cell, n[0], n[1], n[2], &why);
    if (st != FS_OK) /* sdf.c names it an obstacle */
        SETERR(err, "body: %.140s", why.msg + (strncmp(why.msg, "obstacle: ", 10) ? 0 : 10));
    return st;
}

/* Room for a mesh of src's counts, its triangles copied. */
static fs_status take_room(fs_mesh_body *m, const fs_mesh *src, fs_error *err) {
    m->nv = src->vertex_count, m->nt = src->triangle_count;
    m->verts = malloc(sizeof(fs_vec3) * (size_t)m->nv);
    m->tris = malloc(sizeof(uint32_t) * 3 * (size_t)m->nt);
    if (!m->verts || !m->tris) {
        SETERR(err, "body: out of memory for a mesh of %d triangles", m->nt);
        return FS_ERR_NOMEM;
    }
    memcpy(m->tris, src->triangles, sizeof(uint32_t) * 3 * (size_t)m->nt);
    return FS_OK;
}

/* The mesh in the body's frame: x_b = V^T (scale x - centre), V the
 * principal axes. */
static fs_status place(fs_mesh_body *m, const fs_mesh *src, float scale, fs_vec3 centre, double V[3][3],
                       fs_error *err) {
    fs_status st = take_room(m, src, err);
    if (st != FS_OK) return st;
    for (int i = 0; i < m->nv; i++) {
        const fs_vec3 p = src->vertices[i];
        const double d[3] = {(double)p.x * scale - centre.x, (double)p.y * scale - centre.y,
                             (double)p.z * scale - centre.z};
        double b[3];
        for (int a = 0; a < 3; a++) b[a] = V[0][a] * d[0] + V[1][a] * d[1] + V[2][a] * d[2];
        m->verts[i] = (fs_vec3){(float)b[0], (float)b[1], (float)b[2]};
    }
    return FS_OK;
}

/* What follows from the body-frame mesh alone: its bound and boxes (the
 * placed half extents held to the bodies' range), the distance field and
 * the contact samples.  The same for a new body and a restored one, so a
 * restore rebuilds it bit for bit. */
static fs_status finish(fs_mesh_body *m, float h, float spacing, fs_error *err) {
    m->bound = 0;
    for (int i = 0; i < m->nv; i++) m->bound = fmaxf(m->bound, len(m->verts[i]));
    fs_mesh placed = {m->verts, m->nv, m->tris, m->nt};
    fs_error why = {{0}};
    if (fs_mesh_check(&placed, &why) != FS_OK) {
        SETERR(err, "body: placed, the %.120s", why.msg + (strncmp(why.msg, "mesh: ", 6) ? 0 : 6));
        return FS_ERR_RANGE;
    }
    m->lo = fs_mesh_bounds_min(&placed), m->hi = fs_mesh_bounds_max(&placed);
    m->half = (fs_vec3){fmaxf(-m->lo.x, m->hi.x), fmaxf(-m->lo.y, m->hi.y), fmaxf(-m->lo.z, m->hi.z)};
    if (fminf(m->half.x, fminf(m->half.y, m->half.z)) < FS_BODY_MIN_SIZE ||
        fmaxf(m->half.x, fmaxf(m->half.y, m->half.z)) > FS_BODY_MAX_HALF_EXTENT) {
        SETERR(err, "body: the placed mesh's half extents (%g, %g, %g) m must be within %g..%g m", m->half.x, m->half.y,
               m->half.z, FS_BODY_MIN_SIZE, FS_BODY_MAX_HALF_EXTENT);
        return FS_ERR_RANGE;
    }
    fs_status st = build_field(h, spacing, m, err);
    if (st == FS_OK && !make_samples(m)) {
        SETERR(err, "body: out of memory for its contact samples");
        st = FS_ERR_NOMEM;
    }
    return st;
}

/* The mesh body's data for b (its mesh and scale from d, placed with d's pos
 * and rot): b's pos, rot and size are set, mass and inertia then follow
 * from fs__body_set_mass.  Nothing is kept on a refusal. */
static fs_status make(fs_world *w, const fs_body_def *d, fs_body *b, fs_mesh_body **out, fs_error *err) {
    if (!(d->scale >= FS_OBSTACLE_MIN_SCALE && d->scale <= FS_OBSTACLE_MAX_SCALE)) {
        SETERR(err, "body: scale %g outside %g..%g", d->scale, FS_OBSTACLE_MIN_SCALE, FS_OBSTACLE_MAX_SCALE);
        return FS_ERR_RANGE;
    }
    fs_mass_props mp;
    fs_error why = {{0}};
    fs_status st = fs_mesh_mass_properties(d->mesh, &mp, &why);
    if (st != FS_OK) {
        SETERR(err, "body: %.150s", why.msg);
        return st;
    }
    const double s = d->scale, s5 = s * s * s * s * s;
    double I[3][3], V[3][3], ev[3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I[i][j] = mp.inertia[i][j] * s5;
    jacobi3(I, V, ev);
    fs_mesh_body *m = calloc(1, sizeof *m);
    if (!m) {
        SETERR(err, "body: out of memory for its mesh");
        return FS_ERR_NOMEM;
    }
    m->volume = mp.volume * s * s * s;
    m->moments = (fs_vec3){(float)ev[0], (float)ev[1], (float)ev[2]};
    const fs_vec3 centre = {(float)(mp.centre.x * s), (float)(mp.centre.y * s), (float)(mp.centre.z * s)};
    st = place(m, d->mesh, d->scale, centre, V, err);
    if (st == FS_OK) st = finish(m, w->h, w->dom.spacing, err);
    if (st != FS_OK) {
        fs__mesh_body_free(m);
        return st;
    }
    const fs_quat r = qnorm(d->rot);
    b->pos = add(d->pos, qrot(r, centre));
    b->rot = qnorm(qmul(r, quat_of(V)));
    b->size = m->half;
    *out = m;
    return FS_OK;
}

/* Frees the slots no live body names (bodies a snapshot's restore
 * replaced). */
static void collect(fs_world *w) {
    bool used[FS_MAX_BODIES] = {false};
    for (int k = 0; k < w->nbodies; k++)
        if (w->bodies[k].shape == FS_SHAPE_MESH && w->bodies[k].mesh_slot) used[w->bodies[k].mesh_slot - 1] = true;
    for (int k = 0; k < FS_MAX_BODIES; k++)
        if (!used[k] && w->body_meshes[k]) fs__mesh_body_free(w->body_meshes[k]), w->body_meshes[k] = NULL;
}

fs_status fs__body_mesh_make(fs_world *w, const fs_body_def *d, fs_body *b, fs_error *err) {
    collect(w);
    int slot = 0;
    while (slot < FS_MAX_BODIES && w->body_meshes[slot]) slot++;
    if (slot == FS_MAX_BODIES) { /* not reached: a slot per body */
        SETERR(err, "body: no room for another mesh");
        return FS_ERR_FULL;
    }
    fs_mesh_body *m;
    fs_status st = make(w, d, b, &m, err);
    if (st != FS_OK) return st;
    w->body_meshes[slot] = m;
    b->mesh_slot = (uint8_t)(slot + 1);
    return FS_OK;
}

void fs__body_mesh_release(fs_world *w, fs_body *b) {
    if (b->shape != FS_SHAPE_MESH || !b->mesh_slot) return;
    fs__mesh_body_free(w->body_meshes[b->mesh_slot - 1]);
    w->body_meshes[b->mesh_slot - 1] = NULL;
    b->mesh_slot = 0;
}

void fs__body_meshes_clear(fs_world *w) {
    for (int k = 0; k < FS_MAX_BODIES; k++) fs__mesh_body_free(w->body_meshes[k]), w->body_meshes[k] = NULL;
    for (int k = 0; k < w->nbodies; k++) w->bodies[k].mesh_slot = 0;
}

/* ---- a snapshot's mesh bodies ------------------------------------------------------ */
fs_status fs__mesh_body_restore(float h, float spacing, const fs_mesh *framed, double volume, fs_vec3 moments,
                                fs_mesh_body **out, fs_error *err) {
    *out = NULL;
    /* the saved mass properties are used as they are (bit-identical
     * steps), but only where the mesh's own agree with them: a closed mesh,
     * its centre of volume at the origin and its inertia diagonal there */
    fs_mass_props mp;
    fs_error why = {{0}};
    if (fs_mesh_mass_properties(framed, &mp, &why) != FS_OK) {
        SETERR(err, "body: %.150s", why.msg);
        return FS_ERR_ARG;
    }
    const double mo[3] = {moments.x, moments.y, moments.z};
    const double tr = mp.inertia[0][0] + mp.inertia[1][1] + mp.inertia[2][2], r = cbrt(mp.volume);
    bool ok = isfinite(volume) && fabs(volume - mp.volume) <= 1e-3 * mp.volume && len(mp.centre) <= 1e-3f * (float)r &&
              tr > 0;
    for (int a = 0; a < 3 && ok; a++) {
        ok = isfinite(mo[a]) && mo[a] > 0 && fabs(mo[a] - mp.inertia[a][a]) <= 1e-3 * tr;
        for (int b = a + 1; b < 3 && ok; b++) ok = fabs(mp.inertia[a][b]) <= 1e-3 * tr;
    }
    if (!ok) {
        SETERR(err, "body: its mass properties (volume %g m^3, moments %g %g %g) are not its mesh's in its frame",
               volume, mo[0], mo[1], mo[2]);
        return FS_ERR_ARG;
    }
    fs_mesh_body *m = calloc(1, sizeof *m);
    if (!m) {
        SETERR(err, "body: out of memory for its mesh");
        return FS_ERR_NOMEM;
    }
    m->volume = volume, m->moments = moments;
    fs_status st = take_room(m, framed, err);
    if (st == FS_OK) memcpy(m->verts, framed->vertices, sizeof(fs_vec3) * (size_t)m->nv);
    if (st == FS_OK) st = finish(m, h, spacing, err);
    if (st != FS_OK) {
        fs__mesh_body_free(m);
        return st;
    }
    *out = m;
    return FS_OK;
}

void fs__body_mesh_adopt(fs_world *w, fs_body *b, fs_mesh_body *m) {
    int slot = 0;
    while (w->body_meshes[slot]) slot++; /* a slot per body: one is free */
    w->body_meshes[slot] = m;
    b->mesh_slot = (uint8_t)(slot + 1);
    b->size = m->half;
    b->bound = m->bound;
}

/* ---- what the step reads -------------------------------------------------------- */
float fs__mesh_body_sdf(const fs_mesh_body *m, v3 p, v3 *n) {
    float phi, g[3];
    if (fs__sdf_sample(&m->sdf, p.x, p.y, p.z, &phi, g)) {
        const float l = sqrtf(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
        *n = l > 1e-6f ? (v3){g[0] / l, g[1] / l, g[2] / l} : (v3){0, 1, 0};
        return phi;
    }
    /* beyond the grid (2 h past the mesh's box): the distance to that box, which the mesh's can only exceed */
    const v3 q = {fminf(fmaxf(p.x, m->lo.x), m->hi.x), fminf(fmaxf(p.y, m->lo.y), m->hi.y),
                  fminf(fmaxf(p.z, m->lo.z), m->hi.z)};
    const v3 e = sub(p, q);
    const float d = len(e);
    *n = d > 1e-9f ? mul(e, 1.0f / d) : (v3){0, 1, 0};
    return d;
}

float fs__mesh_body_bound(const fs_mesh_body *m) {
    return m->bound;
}

v3 fs__mesh_body_half(const fs_mesh_body *m) {
    return m->half;
}

int fs__mesh_body_samples(const fs_mesh_body *m, v3 *c, float *r) {
    for (int k = 0; k < m->nsamples; k++) c[k] = m->samples[k], r[k] = 0.0f;
    return m->nsamples;
}

void fs__mesh_body_unit_mass(const fs_mesh_body *m, double *volume, v3 *moments) {
    *volume = m->volume, *moments = m->moments;
}

bool fs_world_body_mesh(const fs_world *w, int index, fs_mesh *out) {
    if (index < 0 || index >= w->nbodies) return false;
    const fs_body *b = &w->bodies[index];
    if (b->shape != FS_SHAPE_MESH || !b->mesh_slot) return false;
    const fs_mesh_body *m = w->body_meshes[b->mesh_slot - 1];
    *out = (fs_mesh){m->verts, m->nv, m->tris, m->nt};
    return true;
}
