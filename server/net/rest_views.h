/* rest_views.h - JSON documents of the REST API (network thread only). */
#ifndef SRV_REST_VIEWS_H
#define SRV_REST_VIEWS_H

#include <cJSON.h>
#include <stdbool.h>
#include <stdint.h>

#include "snapshots.h"
#include "world_info.h"

typedef struct net net;           /* net_internal.h */
typedef struct net_room net_room; /* net_room.h */

/* A float as its shortest faithful decimal (so 0.3f reads 0.3 in JSON). */
double rest_tidy(float f);
cJSON *rest_vec3_json(const float *v);
cJSON *rest_material_json(const net *n, const world_info *wi, int m, bool with_meta);
/* GET /api: every route (rest_route.c's table) as "METHOD /path". */
cJSON *rest_index_json(void);
cJSON *rest_stats_json(const net *n, const net_room *v);
/* GET /api/probes: each probe's name, kind, position, normal, radius (0:
 * the default), latest value (m or Pa) and the tick it was measured at. */
cJSON *rest_probes_json(const net_room *v);
cJSON *rest_scenes_json(const net_room *v);
cJSON *rest_materials_json(const net *n, const net_room *v);
cJSON *rest_particles_json(const particles_snap *s, const world_info *wi);
cJSON *rest_bodies_json(const bodies_snap *bs, uint64_t tick);
/* Connected WebSocket clients and their counters (network thread data). */
cJSON *rest_clients_json(const net *n, const net_room *v);
/* The solvers built in and which one runs. */
cJSON *rest_solvers_json(const net_room *v);

#endif
