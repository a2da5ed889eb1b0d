/* rest_fleet.c - a drain asked or cancelled through the REST API (see rest_fleet.h). */
#include "rest_fleet.h"

#include <cJSON.h>
#include <stdio.h>

#include "hub.h"
#include "net_room.h"
#include "rest_answer.h"

/* Node id's entry in the fleet's view (a JSON document), or NULL. */
static const cJSON *node_in(const cJSON *doc, uint32_t id) {
    const cJSON *o;
    cJSON_ArrayForEach(o, cJSON_GetObjectItemCaseSensitive(doc, "nodes")) {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(o, "id");
        if (cJSON_IsNumber(k) && k->valuedouble == (double)id) return o;
    }
    return NULL;
}

/* The fleet's view, or NULL answered (a relay 501; no fleet, or its
 * directory not read yet, 409). */
static cJSON *view_or_answer(net *n, http_req *r) {
    if (rest_refuse_origin(n, r)) return NULL;
    if (n->relay_id) {
        rest_respond_error(n, r, RC_NOT_IMPLEMENTED,
                           "this is a relay: it reads the fleet's directory and never writes it; ask a sim node of "
                           "the fleet");
        return NULL;
    }
    msg_buf *m = hub_get_fleet_doc(n->home->hub);
    cJSON *doc = m ? cJSON_ParseWithLength((const char *)m->data, m->len) : NULL;
    msg_buf_unref(m);
    if (!doc)
        rest_respond_error(n, r, RC_CONFLICT,
                           "this server is in no fleet (--fleet), or has not read its directory yet");
    return doc;
}

/* Passes a drain (or its cancel) of node id to the fleet thread and
 * answers 202 {"node", "draining", "rooms" (a drain's: the rooms it held;
 * held < 0: none)}, or 503 when too many wait to be written. */
static void ask(net *n, http_req *r, uint32_t id, bool drain, int held) {
    if (!hub_ask_drain(n->home->hub, id, drain, true)) {
        rest_respond_error(n, r, RC_BUSY, "busy: %d drains are waiting to be written, try again", HUB_DRAIN_ASKS);
        return;
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddNumberToObject(j, "node", id);
    cJSON_AddBoolToObject(j, "draining", drain);
    if (held >= 0) cJSON_AddNumberToObject(j, "rooms", held);
    rest_respond_json(n, r, 202, j);
}

void rest_fleet_drain(net *n, http_req *r, uint32_t id) {
    cJSON *doc = view_or_answer(n, r);
    if (!doc) return;
    const cJSON *node = node_in(doc, id);
    const cJSON *live = cJSON_GetObjectItemCaseSensitive(node, "live");
    const cJSON *held = cJSON_GetObjectItemCaseSensitive(node, "held");
    const int nrooms = cJSON_IsNumber(held) ? held->valueint : 0;
    const bool up = cJSON_IsTrue(live);
    cJSON_Delete(doc);
    if (!node) {
        rest_respond_error(n, r, RC_NOT_FOUND, "no node %u in the fleet (GET /api/fleet lists its nodes)",
                           (unsigned)id);
        return;
    }
    if (!up) {
        rest_respond_error(n, r, RC_CONFLICT,
                           "node %u is not live (its record stopped): its rooms are taken over as it stands, there is "
                           "nothing to drain",
                           (unsigned)id);
        return;
    }
    ask(n, r, id, true, nrooms);
}

void rest_fleet_undrain(net *n, http_req *r, uint32_t id) {
    cJSON *doc = view_or_answer(n, r);
    if (!doc) return;
    const cJSON *node = node_in(doc, id);
    const bool listed = node != NULL, draining = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(node, "draining"));
    cJSON_Delete(doc);
    if (!listed || !draining) {
        rest_respond_error(n, r, RC_NOT_FOUND,
                           listed ? "node %u is not draining (or its drain is not written yet): there is no drain to "
                                    "cancel (GET /api/fleet shows each node's draining)"
                                  : "no node %u in the fleet (GET /api/fleet lists its nodes)",
                           (unsigned)id);
        return;
    }
    ask(n, r, id, false, -1);
}
