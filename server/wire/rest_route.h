/* rest_route.h - the REST API's request -> command translation, without a
 * socket: method, path, query and body in; a checked command, a view to
 * answer, or an error (code and reason) out.
 *
 * Pure: no libwebsockets, no world, no threads, no allocation that outlives
 * the call.  rest.c calls it on the network thread for every /api request;
 * the fuzz harness tests/fuzz/fuzz_rest.c calls it directly.
 */
#ifndef SRV_REST_ROUTE_H
#define SRV_REST_ROUTE_H

#include <stdbool.h>
#include <stddef.h>

#include "command.h"
#include "reply_code.h"
#include "validate.h"

enum { HM_OTHER, HM_GET, HM_POST, HM_PATCH, HM_PUT, HM_DELETE, HM_OPTIONS, HM_HEAD };

typedef enum rest_outcome {
    REST_ERROR,    /* answer code + error */
    REST_COMMAND,  /* submit c to the sim thread (origin and token checks first) */
    REST_VIEW,     /* answer view from the network thread's snapshots */
    REST_SNAPSHOT, /* /api/snapshot: rest.c's route_snapshot (the body is a msgpack document) */
    REST_MESH,     /* POST /api/meshes: net/rest_meshes.c reads the body (a mesh file) */
    REST_OMESH,    /* GET /api/obstacles/{id}/mesh: the obstacle's encoded placed mesh (id in `id`) */
    REST_RECFILE,  /* a recording's file: `file` ("NAME/index.json" or "NAME/seg-NNNNNN.fsrec"), checked */
    REST_DRAIN,    /* POST /api/fleet/nodes/{id}/drain: node `id` (1..65535) of the fleet is to be drained */
    REST_UNDRAIN,  /* DELETE /api/fleet/nodes/{id}/drain: node `id`'s drain is cancelled */
} rest_outcome;

typedef enum rest_view {
    RV_INDEX,
    RV_HEALTH,
    RV_STATS,
    RV_SCENES,
    RV_MATERIALS,
    RV_CLIENTS,
    RV_SOLVERS,
    RV_METRICS,
    RV_RECORDINGS,
    RV_MESHES,
    RV_PROBES,
    RV_FLEET
} rest_view;

/* A query argument by name ("offset="), with lws_get_urlarg_by_name's
 * contract: the value (pointing into buf, len bytes) or NULL. */
typedef const char *(*rest_arg_fn)(void *ctx, const char *name, char *buf, int len);

/* One request.  Threads: the caller's (network thread, or a fuzz harness). */
typedef struct rest_request {
    int method;       /* HM_* */
    const char *path; /* below /api ("/stats"), without a trailing '/'; "/" for /api itself */
    bool metrics;     /* the request came through the /metrics mount */
    rest_arg_fn arg;  /* query arguments */
    void *arg_ctx;
    const char *body; /* body_len bytes (need not be terminated); NULL when empty */
    size_t body_len;
    const char *accept; /* the Accept header, or NULL */
} rest_request;

/* The translation's result.  A value. */
typedef struct rest_action {
    rest_outcome outcome;
    reply_code code;   /* REST_ERROR: why (its HTTP status: reply_code_http) */
    bool close_after;  /* REST_ERROR: close the connection after the answer */
    char error[256];   /* REST_ERROR: the reason */
    rest_view view;    /* REST_VIEW */
    cmd c;             /* REST_COMMAND: checked (cmd_from_fields), client and rid not set */
    char file[96];     /* REST_RECFILE: relative to the recordings folder; never leaves it */
    int offset, limit; /* REST_VIEW of RV_RECORDINGS: the page of the listing (?offset=&limit=) */
    uint32_t id;       /* REST_OMESH: the obstacle; REST_DRAIN: the node */
} rest_action;

#define REST_REC_PAGE_MAX 1000    /* recordings in one page of GET /api/recordings, at most */
#define REST_REC_PAGE_DEFAULT 100 /* ... when the request gives no limit (a page of ~20 kB) */

void rest_translate(const rest_request *q, rest_action *a);
/* The pattern of the route a request of method (HM_*) on path (below /api,
 * as rest_request.path) matches, spelled as the table spells it
 * ("/api/bodies/{id}"), or NULL: the role table (roles.h) is looked up by it. */
const char *rest_route_pattern(int method, const char *path, bool metrics);

/* What answers a route. */
typedef enum rest_handler {
    RH_VIEW,     /* a view (network thread's snapshots) */
    RH_COMMAND,  /* a command of the route's kind; its fields are the JSON body's (and the path's {id}) */
    RH_QUERY,    /* a command from the query (GET /api/particles?offset=&limit=) */
    RH_BARE,     /* a command of the route's kind without fields */
    RH_MATERIAL, /* PATCH /api/materials/{name}: set_param, the body naming the parameters */
    RH_SNAPSHOT, /* the snapshot document: rest.c's route_snapshot (REST_SNAPSHOT) */
    RH_RECFILE,  /* GET /api/recordings/{name}: a recording's file (REST_RECFILE) */
    RH_MESH,     /* POST /api/meshes: a mesh file (REST_MESH) */
    RH_OMESH,    /* GET /api/obstacles/{id}/mesh: an obstacle's placed mesh (REST_OMESH) */
    RH_DRAIN,    /* POST or DELETE /api/fleet/nodes/{id}/drain: a node's drain asked or cancelled (REST_DRAIN,
                    REST_UNDRAIN) */
} rest_handler;

/* One route: the table (rest_route.c) is what rest_translate matches and
 * what GET /api lists.  Constant data (any thread). */
typedef struct rest_route_def {
    int method;        /* HM_* */
    const char *path;  /* the whole path: "/api/stats", "/api/bodies/{id}", "/metrics" */
    const char *query; /* shown after the path in the listing ("?offset=&limit="), or NULL */
    rest_handler handler;
    rest_view view;     /* RH_VIEW */
    cmd_kind kind;      /* the command (its kind decides whether the token is needed: cmd_kind_mutates) */
    bool body_optional; /* RH_COMMAND: no body is {} */
} rest_route_def;

extern const rest_route_def rest_routes[];
extern const int rest_route_count;
const char *rest_method_name(int method); /* "GET" for HM_GET */

#endif
