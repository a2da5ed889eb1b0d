/* mesh_store.c - a room's uploaded meshes: refcounted immutable meshes in a
 * bounded list, oldest forgotten first (see mesh_store.h). */
#include "mesh_store.h"

#include <stdlib.h>
#include <string.h>

hub_mesh *hub_mesh_make(fs_vec3 *vertices, int vertex_count, uint32_t *triangles, int triangle_count, int format) {
    hub_mesh *m = calloc(1, sizeof *m);
    if (!m) {
        free(vertices), free(triangles);
        return NULL;
    }
    atomic_init(&m->refs, 1);
    m->format = format;
    m->vertices = vertices, m->vertex_count = vertex_count;
    m->triangles = triangles, m->triangle_count = triangle_count;
    m->bytes = sizeof(fs_vec3) * (size_t)vertex_count + sizeof(uint32_t) * 3 * (size_t)triangle_count;
    fs_mesh v = hub_mesh_view(m);
    m->lo = fs_mesh_bounds_min(&v), m->hi = fs_mesh_bounds_max(&v);
    m->closed = fs_mesh_check_closed(&v, NULL) == FS_OK;
    return m;
}

void hub_mesh_unref(hub_mesh *m) {
    if (!m || atomic_fetch_sub(&m->refs, 1) != 1) return;
    free(m->vertices), free(m->triangles), free(m);
}

void mesh_store_init(mesh_store *s) {
    memset(s, 0, sizeof *s);
    pthread_mutex_init(&s->mtx, NULL);
    s->next_id = 1;
}

void mesh_store_destroy(mesh_store *s) {
    for (int i = 0; i < s->count; i++) hub_mesh_unref(s->mesh[i]);
    pthread_mutex_destroy(&s->mtx);
    memset(s, 0, sizeof *s);
}

/* Forgets the oldest mesh (under mtx). */
static void drop_oldest(mesh_store *s) {
    hub_mesh *m = s->mesh[0];
    s->bytes -= m->bytes;
    memmove(&s->mesh[0], &s->mesh[1], sizeof s->mesh[0] * (size_t)(s->count - 1));
    s->mesh[--s->count] = NULL;
    hub_mesh_unref(m);
}

uint32_t mesh_store_put(mesh_store *s, hub_mesh *m) {
    if (m->bytes > MESH_STORE_MAX_BYTES) {
        hub_mesh_unref(m);
        return 0;
    }
    pthread_mutex_lock(&s->mtx);
    while (s->count && (s->count >= MESH_STORE_MAX || s->bytes + m->bytes > MESH_STORE_MAX_BYTES)) drop_oldest(s);
    m->id = s->next_id++;
    if (!s->next_id) s->next_id = 1;
    s->mesh[s->count++] = m;
    s->bytes += m->bytes;
    uint32_t id = m->id;
    pthread_mutex_unlock(&s->mtx);
    return id;
}

hub_mesh *mesh_store_get(mesh_store *s, uint32_t id) {
    hub_mesh *m = NULL;
    pthread_mutex_lock(&s->mtx);
    for (int i = 0; i < s->count && !m; i++)
        if (s->mesh[i]->id == id) {
            m = s->mesh[i];
            atomic_fetch_add(&m->refs, 1);
        }
    pthread_mutex_unlock(&s->mtx);
    return m;
}

int mesh_store_list(mesh_store *s, hub_mesh **out, int max) {
    pthread_mutex_lock(&s->mtx);
    int n = s->count < max ? s->count : max;
    for (int i = 0; i < n; i++) {
        out[i] = s->mesh[i];
        atomic_fetch_add(&out[i]->refs, 1);
    }
    pthread_mutex_unlock(&s->mtx);
    return n;
}
