/* rest_meshes.c - POST /api/meshes and GET /api/meshes, and the answer of
 * GET /api/obstacles (see rest_meshes.h).
 *
 * An upload's body goes whole to a reader thread of its own (at most
 * NET_MESH_LOADS at once), which reads it with mesh_load_isolated (Assimp in
 * a forked process bounded in CPU and memory, so neither a slow nor a
 * hostile file holds the network thread or the sim thread), puts the mesh in
 * the room's store (hub.meshes) and posts a CMD_MESH_UPLOAD reply to the
 * room's hub as the sim thread posts its replies.  The reader holds a
 * reference to the room while it runs. */
#include "rest_meshes.h"

#include <stdlib.h>
#include <string.h>

#include "hub.h"
#include "log.h"
#include "mesh_load.h"
#include "net_room.h"
#include "rest_answer.h"
#include "rooms.h"

/* Threads: made by the network thread, then the reader's alone. */
typedef struct mesh_job {
    room *room; /* one reference, dropped by the reader */
    hub *hub;
    uint32_t client; /* CMD_REST_BIT | the request's id */
    mesh_format format;
    mesh_limits lim;
    char *body;
    size_t len;
    atomic_bool *done;
} mesh_job;

/* Failures of the server rather than of the file (mesh_load.c's sentences). */
static bool server_fault(const char *why) {
    return strstr(why, "out of memory") || strstr(why, "no pipe") || strstr(why, "no reader process");
}

static void *reader_main(void *arg) {
    mesh_job *j = arg;
    mesh_data d;
    char err[FS_ERROR_LEN];
    cmd_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.client = j->client;
    rep.kind = CMD_MESH_UPLOAD;
    if (mesh_load_isolated(j->body, j->len, j->format, &j->lim, &d, err, sizeof err) != 0) {
        cmd_reply_refuse(&rep, server_fault(err) ? RC_INTERNAL : RC_BAD_REQUEST, "%s", err);
    } else {
        hub_mesh *m = hub_mesh_make(d.vertices, d.vertex_count, d.triangles, d.triangle_count, (int)j->format);
        uint32_t id = m ? mesh_store_put(&j->hub->meshes, m) : 0;
        if (!id) {
            cmd_reply_refuse(&rep, RC_INTERNAL, "mesh: out of memory");
        } else {
            rep.ok = true;
            rep.value = id;
        }
    }
    free(j->body);
    hub_post_reply(j->hub, &rep);
    hub_wake(j->hub);
    room_unref(j->room);
    atomic_store(j->done, true);
    free(j);
    return NULL;
}

/* A free reader slot (one whose reader has ended is joined first), or NULL. */
static net_mesh_load *free_slot(net *n) {
    for (int i = 0; i < NET_MESH_LOADS; i++) {
        net_mesh_load *l = &n->mesh_load[i];
        if (l->used && atomic_load(&l->done)) {
            pthread_join(l->thread, NULL);
            l->used = false;
        }
        if (!l->used) return l;
    }
    return NULL;
}

void rest_mesh_join_all(net *n) {
    for (int i = 0; i < NET_MESH_LOADS; i++)
        if (n->mesh_load[i].used) {
            pthread_join(n->mesh_load[i].thread, NULL);
            n->mesh_load[i].used = false;
        }
}

/* The format the Content-Type names, or -1 after answering the refusal. */
static int upload_format(net *n, http_req *r) {
    char ct[128] = "";
    if (lws_hdr_copy(r->wsi, ct, sizeof ct, WSI_TOKEN_HTTP_CONTENT_TYPE) < 0) ct[0] = 0;
    int f = mesh_format_from_type(ct);
    if (f == MESH_PLY) {
        rest_respond_error(n, r, RC_BAD_REQUEST,
                           "PLY is off on this server: fuzzing found heap corruption in Assimp 5.2's PLY reader on "
                           "malformed files; send the mesh as model/stl, model/obj or model/gltf-binary");
        return -1;
    }
    if (f < 0) {
        rest_respond_error(n, r, RC_BAD_REQUEST,
                           "Content-Type '%.60s' is not a mesh this server reads: model/stl (binary or ASCII), "
                           "model/obj or model/gltf-binary (.glb)",
                           ct);
        return -1;
    }
    return f;
}

void rest_mesh_upload(net *n, http_req *r) {
    if (n->relay_id) {
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED, "this is a relay: upload meshes to the sim node");
        return;
    }
    int f = upload_format(n, r);
    if (f < 0) return;
    if (!r->body_len) {
        rest_respond_error(n, r, RC_BAD_REQUEST, "POST the mesh file as the body (with a Content-Length)");
        return;
    }
    net_mesh_load *slot = free_slot(n);
    if (!slot || n->npending >= NET_MAX_PENDING_REST) {
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: %d mesh files are being read, try again", NET_MESH_LOADS);
        return;
    }
    mesh_job *j = calloc(1, sizeof *j);
    if (!j) {
        rest_respond_error(n, r, RC_INTERNAL, "out of memory");
        return;
    }
    *j = (mesh_job){.room = r->room->room,
                    .hub = r->room->hub,
                    .client = CMD_REST_BIT | r->id,
                    .format = (mesh_format)f,
                    .lim = {.max_bytes = (size_t)n->cfg->mesh_max_mb << 20, .max_triangles = FS_MESH_MAX_TRIANGLES},
                    .body = r->body,
                    .len = r->body_len,
                    .done = &slot->done};
    room_ref(j->room);
    atomic_store(&slot->done, false);
    if (pthread_create(&slot->thread, NULL, reader_main, j) != 0) {
        room_unref(j->room);
        free(j);
        n->queue_busy++;
        rest_respond_error(n, r, RC_BUSY, "busy: no thread to read the mesh, try again");
        return;
    }
    slot->used = true;
    r->body = NULL; /* the reader's now */
    r->body_alloc = 0;
    r->pending_kind = CMD_MESH_UPLOAD;
    rest_wait(n, r, REST_MESH_WAIT_S);
}

static cJSON *vec3_json(fs_vec3 v) {
    const double a[3] = {v.x, v.y, v.z};
    return cJSON_CreateDoubleArray(a, 3);
}

static cJSON *bounds_json(fs_vec3 lo, fs_vec3 hi) {
    cJSON *b = cJSON_CreateObject();
    cJSON_AddItemToObject(b, "min", vec3_json(lo));
    cJSON_AddItemToObject(b, "max", vec3_json(hi));
    return b;
}

static cJSON *mesh_json(const hub_mesh *m) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "id", m->id);
    cJSON_AddStringToObject(j, "format", mesh_format_type((mesh_format)m->format));
    cJSON_AddNumberToObject(j, "triangles", m->triangle_count);
    cJSON_AddNumberToObject(j, "vertices", m->vertex_count);
    cJSON_AddItemToObject(j, "bounds", bounds_json(m->lo, m->hi));
    cJSON_AddBoolToObject(j, "closed", m->closed);
    return j;
}

cJSON *rest_mesh_uploaded_json(net_room *v, uint32_t id) {
    hub_mesh *m = mesh_store_get(&v->hub->meshes, id);
    cJSON *j;
    if (m) {
        j = mesh_json(m);
        hub_mesh_unref(m);
    } else { /* forgotten already: uploads after it made room */
        j = cJSON_CreateObject();
        cJSON_AddNumberToObject(j, "id", id);
    }
    return j;
}

cJSON *rest_meshes_json(net *n, net_room *v) {
    hub_mesh *m[MESH_STORE_MAX];
    int k = mesh_store_list(&v->hub->meshes, m, MESH_STORE_MAX);
    cJSON *j = cJSON_CreateObject();
    cJSON *a = cJSON_AddArrayToObject(j, "meshes");
    for (int i = 0; i < k; i++) {
        cJSON_AddItemToArray(a, mesh_json(m[i]));
        hub_mesh_unref(m[i]);
    }
    cJSON_AddNumberToObject(j, "max_meshes", MESH_STORE_MAX);
    cJSON_AddNumberToObject(j, "max_bytes", (double)MESH_STORE_MAX_BYTES);
    cJSON_AddNumberToObject(j, "max_file_bytes", (double)((size_t)n->cfg->mesh_max_mb << 20));
    cJSON_AddNumberToObject(j, "max_triangles", FS_MESH_MAX_TRIANGLES);
    return j;
}

cJSON *rest_obstacles_json(const obstacles_snap *o) {
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "tick", (double)o->tick);
    cJSON *a = cJSON_AddArrayToObject(j, "obstacles");
    for (int i = 0; i < o->count; i++) {
        const fs_obstacle_state *s = &o->obstacle[i];
        cJSON *e = cJSON_CreateObject();
        cJSON_AddNumberToObject(e, "id", s->id);
        cJSON_AddItemToObject(e, "pos", vec3_json(s->pos));
        const double q[4] = {s->rot.w, s->rot.x, s->rot.y, s->rot.z};
        cJSON_AddItemToObject(e, "rot", cJSON_CreateDoubleArray(q, 4));
        cJSON_AddNumberToObject(e, "scale", s->scale);
        cJSON_AddBoolToObject(e, "closed", s->closed);
        cJSON_AddNumberToObject(e, "triangles", s->triangles);
        cJSON_AddNumberToObject(e, "vertices", s->vertices);
        cJSON_AddItemToObject(e, "bounds", bounds_json(s->lo, s->hi));
        const double nodes[3] = {s->nodes[0], s->nodes[1], s->nodes[2]};
        cJSON_AddItemToObject(e, "grid", cJSON_CreateDoubleArray(nodes, 3));
        cJSON_AddNumberToObject(e, "cell", s->cell);
        cJSON_AddItemToArray(a, e);
    }
    return j;
}
