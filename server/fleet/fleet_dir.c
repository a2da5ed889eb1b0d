/* fleet_dir.c - the fleet's directory as this node sees it: the watch's
 * entries checked and kept (node records, room keys, each key's revision
 * timed on this node's clock), where a new room goes, and the view as GET
 * /api/fleet and /metrics show it. */
#include "fleet_link.h"

#include <cJSON.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "log.h"

static fleet_node_view *node_of(fleet *f, uint32_t id) {
    for (int i = 0; i < f->nnode; i++)
        if (f->node[i].rec.id == id) return &f->node[i];
    return NULL;
}

fleet_room_view *fleet_dir_room(fleet *f, const char *name) {
    for (int i = 0; i < f->nroom; i++)
        if (!strcmp(f->room[i].name, name)) return &f->room[i];
    return NULL;
}

void fleet_lose(fleet *f, fleet_room_view *v, const char *why) {
    if (v->hold == HOLD_TAKING) { /* being made: closed when the maker hands it back */
        log_warn("fleet: lost room '%s' while making it: %s", v->name, why);
        v->hold = HOLD_NONE;
        f->st.lost++;
        return;
    }
    if (v->hold != HOLD_HELD && v->hold != HOLD_MOVING) return;
    fleet_move_drop(v);
    v->over_budget = false;
    hub_set_fence(room_hub(v->r), 1);
    log_warn("fleet: lost room '%s': %s; it stops here, unsaved", v->name, why);
    room_close(f->dir, v->name);
    room_unref(v->r);
    v->r = NULL;
    v->hold = HOLD_NONE;
    f->st.lost++;
}

/* A value refused: counted, and logged once per kind of key. */
static void refused(fleet *f, const char *key, const char *why) {
    f->st.refused++;
    char once[32];
    snprintf(once, sizeof once, "fleet-bad-%.4s", key);
    log_once(once, "fleet: refused the value of %.60s in %s: %s (counted in fluid_fleet_refused_total; logged once)",
             key, f->bucket, why);
}

static void take_node(fleet *f, const char *key, uint32_t id, kvEntry *e, uint64_t now) {
    fleet_node_view *v = node_of(f, id);
    if (kvEntry_Operation(e) != kvOp_Put) { /* deleted or purged */
        if (v) *v = f->node[--f->nnode];
        return;
    }
    fleet_node_rec rec;
    char why[200];
    int len = kvEntry_ValueLen(e);
    if (fleet_node_read(kvEntry_Value(e), len > 0 ? (size_t)len : 0, &rec, why, sizeof why)) {
        refused(f, key, why);
        return;
    }
    if (rec.id != id) {
        snprintf(why, sizeof why, "its id %u is not its key's", (unsigned)rec.id);
        refused(f, key, why);
        return;
    }
    if (!v) {
        if (f->nnode >= FLEET_NODES) {
            refused(f, key, "this node keeps the records of at most 64 nodes");
            return;
        }
        v = &f->node[f->nnode++];
        memset(v, 0, sizeof *v);
    }
    v->rec = rec;
    if (v->watch.revision != kvEntry_Revision(e)) f->stale_ns = FLEET_WATCH_STALE_NS; /* a record moves */
    lease_seen(&v->watch, kvEntry_Revision(e), now);
    if (id == f->id && kvEntry_Revision(e) >= f->put_rev) f->unseen_ns = 0;
}

static void take_room(fleet *f, const char *key, const char *name, kvEntry *e, uint64_t now) {
    fleet_room_view *v = fleet_dir_room(f, name);
    if (kvEntry_Operation(e) != kvOp_Put) {
        if (!v) return;
        if (fleet_holds(v->hold)) fleet_lose(f, v, "its key was deleted from the directory");
        *v = f->room[--f->nroom];
        return;
    }
    fleet_room_rec rec;
    char why[200];
    int len = kvEntry_ValueLen(e);
    if (fleet_room_read(kvEntry_Value(e), len > 0 ? (size_t)len : 0, &rec, why, sizeof why)) {
        refused(f, key, why);
        return;
    }
    if (!v) {
        if (f->nroom >= FLEET_ROOMS) {
            refused(f, key, "this node keeps at most 256 rooms of the directory");
            return;
        }
        v = &f->room[f->nroom++];
        memset(v, 0, sizeof *v);
        memcpy(v->name, name, sizeof v->name);
    }
    const uint64_t rev = kvEntry_Revision(e);
    if (rev < v->rev) return; /* older than what this node wrote itself */
    if (fleet_holds(v->hold) && (rec.node != f->id || rec.claim != v->rec.claim)) {
        char by[96];
        snprintf(by, sizeof by, "node %u claimed it (claim %llu)", (unsigned)rec.node, (unsigned long long)rec.claim);
        fleet_lose(f, v, by);
    }
    v->rec = rec;
    v->rev = rev;
    lease_seen(&v->watch, rev, now);
}

bool fleet_dir_draining(const fleet *f, uint32_t id) {
    for (int i = 0; i < f->ndrained; i++)
        if (f->drained[i] == id) return true;
    return false;
}

/* drain.<id> put (the node is to move its rooms elsewhere) or deleted. */
static void take_drain(fleet *f, uint32_t id, kvEntry *e) {
    const bool put = kvEntry_Operation(e) == kvOp_Put;
    int at = -1;
    for (int i = 0; i < f->ndrained; i++)
        if (f->drained[i] == id) at = i;
    if (put && at < 0 && f->ndrained < FLEET_NODES) f->drained[f->ndrained++] = id;
    if (!put && at >= 0) f->drained[at] = f->drained[--f->ndrained];
    if (id != f->id || put == f->draining) return;
    f->draining = put;
    f->st.draining = put;
    if (put)
        log_info("fleet: node %u is draining: it takes no new room, and each room it holds moves to another node",
                 (unsigned)f->id);
    else
        log_info("fleet: node %u is no longer draining", (unsigned)f->id);
}

void fleet_dir_drain(fleet *f, int wait_ms) {
    for (int n = 0; n < 4096; n++) { /* bounded: the thread's other work comes round */
        kvEntry *e = NULL;
        natsStatus s = kvWatcher_Next(&e, f->watch, n ? 1 : wait_ms);
        if (s != NATS_OK) return; /* NATS_TIMEOUT: nothing more now */
        if (!e) continue;         /* the end of the values that were there when the watch began */
        const uint64_t now = clock_now_ns();
        f->heard_ns = now;
        const char *key = kvEntry_Key(e);
        uint32_t id = 0;
        char name[ROOM_NAME_CAP];
        switch (fleet_key_parse(key, &id, name)) {
        case FLEET_KEY_NODE:
            take_node(f, key, id, e, now);
            break;
        case FLEET_KEY_ROOM:
            take_room(f, key, name, e, now);
            break;
        case FLEET_KEY_DRAIN:
            take_drain(f, id, e);
            break;
        default:
            refused(f, key ? key : "?", "not a key of a fleet's directory (node.<id>, room.<name>)");
            break;
        }
        kvEntry_Destroy(e);
    }
}

bool fleet_dir_stale(const fleet *f, uint64_t now) {
    if (now - f->watch_begun_ns < f->stale_ns) return false;
    if (f->relay) return f->nnode > 0 && now - f->heard_ns >= f->stale_ns;
    return f->unseen_ns && now - f->unseen_ns >= f->stale_ns;
}

static bool live(const fleet_node_view *v, uint64_t now) {
    return v->watch.moved_ns && lease_age(&v->watch, now) < FLEET_LIVE_NS;
}

/* Live and not draining: a node that may be given rooms. */
static bool usable(const fleet *f, const fleet_node_view *v, uint64_t now) {
    return live(v, now) && !fleet_dir_draining(f, v->rec.id);
}

/* The rooms the directory says a node holds or is making. */
static int rooms_named(const fleet *f, uint32_t id) {
    int k = 0;
    for (int i = 0; i < f->nroom; i++) k += f->room[i].rec.node == id;
    return k;
}

/* A node's free budget: its record's, less the rooms the directory gave it
 * since (each at the mean its record shows, at least 0.5 ms): records are a
 * second old, rooms are placed faster. */
static double free_ms(const fleet *f, const fleet_node_rec *r) {
    const int listed = r->rooms > 1 ? r->rooms - 1 : 0; /* the record counts its default room */
    const int unseen = rooms_named(f, r->id) - listed;
    double per = listed ? r->used_ms / (listed + 1) : 0;
    if (per < 0.5) per = 0.5;
    return r->budget_ms - r->used_ms - (unseen > 0 ? unseen * per : 0);
}

uint32_t fleet_dir_place(fleet *f, uint64_t now) {
    const fleet_node_view *best = NULL;
    double best_free = 0;
    int best_rooms = 0;
    for (int i = 0; i < f->nnode; i++) {
        const fleet_node_view *v = &f->node[i];
        if (!usable(f, v, now)) continue;
        const double fr = free_ms(f, &v->rec);
        const int held = rooms_named(f, v->rec.id);
        if (!best || fr > best_free || (fr == best_free && held < best_rooms) ||
            (fr == best_free && held == best_rooms && v->rec.id < best->rec.id))
            best = v, best_free = fr, best_rooms = held;
    }
    return best ? best->rec.id : f->draining ? 0 : f->id;
}

bool fleet_dir_fits(fleet *f, uint32_t id, double ms, uint64_t now) {
    const fleet_node_view *v = node_of(f, id);
    if (!v || !live(v, now)) return id == f->id; /* this node before its record is seen: as placement assumes */
    return v->rec.budget_ms <= 0 || free_ms(f, &v->rec) >= ms;
}

bool fleet_dir_fits_elsewhere(fleet *f, uint32_t holder, double ms, uint64_t now) {
    for (int i = 0; i < f->nnode; i++) {
        const fleet_node_view *v = &f->node[i];
        if (v->rec.id != f->id && v->rec.id != holder && usable(f, v, now) && fleet_dir_fits(f, v->rec.id, ms, now))
            return true;
    }
    return false;
}

bool fleet_dir_other_live(fleet *f, uint64_t now) {
    for (int i = 0; i < f->nnode; i++)
        if (f->node[i].rec.id != f->id && usable(f, &f->node[i], now)) return true;
    return false;
}

int fleet_dir_rank(fleet *f, uint64_t now) {
    double fr[FLEET_NODES];
    uint32_t id[FLEET_NODES];
    double mine = 0;
    int n = 0;
    for (int i = 0; i < f->nnode; i++) {
        const fleet_node_view *v = &f->node[i];
        if (!usable(f, v, now)) continue;
        fr[n] = free_ms(f, &v->rec);
        id[n] = v->rec.id;
        if (v->rec.id == f->id) mine = fr[n];
        n++;
    }
    return lease_rank(mine, f->id, fr, id, n);
}

static cJSON *nodes_json(fleet *f, uint64_t now) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < f->nnode; i++) {
        const fleet_node_view *v = &f->node[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "id", v->rec.id);
        cJSON_AddStringToObject(o, "url", v->rec.url);
        cJSON_AddNumberToObject(o, "budget_ms", v->rec.budget_ms);
        cJSON_AddNumberToObject(o, "used_ms", v->rec.used_ms);
        cJSON_AddNumberToObject(o, "free_ms", free_ms(f, &v->rec));
        cJSON_AddNumberToObject(o, "rooms", v->rec.rooms);
        cJSON_AddNumberToObject(o, "clients", v->rec.clients);
        cJSON_AddNumberToObject(o, "held", rooms_named(f, v->rec.id));
        cJSON_AddNumberToObject(o, "age_s", (double)lease_age(&v->watch, now) / 1e9);
        cJSON_AddBoolToObject(o, "live", live(v, now));
        cJSON_AddBoolToObject(o, "draining", fleet_dir_draining(f, v->rec.id));
        cJSON_AddBoolToObject(o, "over_budget", v->rec.budget_ms > 0 && v->rec.used_ms > v->rec.budget_ms);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

static cJSON *rooms_json(fleet *f, uint64_t now) {
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < f->nroom; i++) {
        const fleet_room_view *v = &f->room[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", v->name);
        cJSON_AddNumberToObject(o, "node", v->rec.node);
        cJSON_AddNumberToObject(o, "claim", (double)v->rec.claim);
        cJSON_AddNumberToObject(o, "age_s", (double)lease_age(&v->watch, now) / 1e9);
        cJSON_AddBoolToObject(o, "orphaned", lease_orphaned(&v->watch, &f->rule, now));
        cJSON_AddBoolToObject(o, "here", v->hold == HOLD_HELD || v->hold == HOLD_MOVING);
        cJSON_AddBoolToObject(o, "released", !v->rec.node);
        cJSON_AddBoolToObject(o, "over_budget", v->over_budget && fleet_holds(v->hold));
        cJSON_AddNumberToObject(o, "ms", v->rec.ms);
        cJSON *sn = cJSON_AddObjectToObject(o, "snap"); /* its last snapshot: save 0 before the first */
        cJSON_AddNumberToObject(sn, "save", (double)v->rec.snap.save);
        cJSON_AddNumberToObject(sn, "chunks", v->rec.snap.chunks);
        cJSON_AddNumberToObject(sn, "bytes", (double)v->rec.snap.bytes);
        cJSON_AddNumberToObject(sn, "tick", (double)v->rec.snap.tick);
        cJSON_AddItemToArray(a, o);
    }
    return a;
}

void fleet_dir_publish(fleet *f, uint64_t now) {
    f->st.nodes = 0;
    for (int i = 0; i < f->nnode; i++) f->st.nodes += live(&f->node[i], now);
    f->st.rooms = f->nroom;
    f->st.rooms_held = f->st.orphaned = 0;
    for (int i = 0; i < f->nroom; i++) {
        f->st.rooms_held += f->room[i].hold == HOLD_HELD || f->room[i].hold == HOLD_MOVING;
        f->st.orphaned += lease_orphaned(&f->room[i].watch, &f->rule, now);
    }
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "fleet", f->cfg->fleet);
    cJSON_AddNumberToObject(j, "node", f->id);
    cJSON_AddNumberToObject(j, "lease_s", (double)f->rule.lease_ns / 1e9);
    cJSON_AddBoolToObject(j, "connected", f->watch && atomic_load(&f->connected));
    cJSON_AddBoolToObject(j, "draining", f->draining);
    cJSON_AddItemToObject(j, "nodes", nodes_json(f, now));
    cJSON_AddItemToObject(j, "rooms", rooms_json(f, now));
    char *text = cJSON_PrintUnformatted(j);
    cJSON_Delete(j);
    msg_buf *m = text ? msg_buf_from_bytes(text, strlen(text)) : NULL;
    cJSON_free(text);
    hub_set_fleet(f->home, &f->st, m);
}
