/* metrics.c - GET /metrics: the Prometheus text exposition format (0.0.4)
 * of the sim thread's statistics and the network thread's counters.
 * Network thread only. */
#include "metrics.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hub.h"
#include "log.h"
#include "net_internal.h"
#include "net_room.h"
#include "rooms.h"

/* A growing text buffer (network thread, one request). */
typedef struct mtext {
    char *p;
    size_t n, cap;
    bool failed;
} mtext;

static void mt_printf(mtext *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mt_printf(mtext *t, const char *fmt, ...) {
    if (t->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int k = vsnprintf(t->p + t->n, t->cap - t->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            t->failed = true;
            return;
        }
        if ((size_t)k < t->cap - t->n) {
            t->n += (size_t)k;
            return;
        }
        size_t cap = t->cap * 2 + (size_t)k;
        char *q = realloc(t->p, cap);
        if (!q) {
            t->failed = true;
            return;
        }
        t->p = q;
        t->cap = cap;
    }
}

static void mt_head(mtext *t, const char *name, const char *type, const char *help) {
    mt_printf(t, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static void mt_one(mtext *t, const char *name, const char *type, const char *help, double v) {
    mt_head(t, name, type, help);
    mt_printf(t, "%s %.17g\n", name, v);
}

/* A fleet (--fleet): its nodes and rooms as this node sees them, and this
 * node's claims. */
static void metrics_fleet(mtext *t, const net *n) {
    fleet_state f;
    hub_get_fleet_state(n->home->hub, &f);
    if (!f.enabled) return;
    mt_one(t, "fluid_fleet_nodes", "gauge", "Nodes of the fleet whose record moved in the last 3 s.", f.nodes);
    mt_one(t, "fluid_fleet_rooms", "gauge", "Rooms in the fleet's directory.", f.rooms);
    mt_one(t, "fluid_fleet_rooms_held", "gauge", "Rooms of the fleet this node holds.", f.rooms_held);
    mt_one(t, "fluid_fleet_rooms_orphaned", "gauge", "Rooms whose claim has not been renewed for a lease.", f.orphaned);
    mt_head(t, "fluid_fleet_claims_total", "counter", "This node's claims of rooms, by result.");
    mt_printf(t, "fluid_fleet_claims_total{result=\"ok\"} %llu\n", (unsigned long long)f.claims);
    mt_printf(t, "fluid_fleet_claims_total{result=\"failed\"} %llu\n", (unsigned long long)f.claims_failed);
    mt_head(t, "fluid_fleet_renewals_total", "counter", "This node's renewals of its claims, by result.");
    mt_printf(t, "fluid_fleet_renewals_total{result=\"ok\"} %llu\n", (unsigned long long)f.renewals);
    mt_printf(t, "fluid_fleet_renewals_total{result=\"failed\"} %llu\n", (unsigned long long)f.renewals_failed);
    mt_one(t, "fluid_fleet_rooms_lost_total", "counter",
           "Rooms this node stopped holding: a renewal failed, or its lease ran out first.", (double)f.lost);
    mt_one(t, "fluid_fleet_refused_total", "counter", "Values of the fleet's directory refused as malformed.",
           (double)f.refused);
    mt_head(t, "fluid_fleet_saves_total", "counter", "Snapshots of held rooms written to JetStream, by result.");
    mt_printf(t, "fluid_fleet_saves_total{result=\"ok\"} %llu\n", (unsigned long long)f.saves);
    mt_printf(t, "fluid_fleet_saves_total{result=\"failed\"} %llu\n", (unsigned long long)f.saves_failed);
    mt_one(t, "fluid_fleet_takeovers_total", "counter", "Orphaned or released rooms this node claimed.",
           (double)f.takeovers);
    mt_one(t, "fluid_fleet_snapshots_refused_total", "counter",
           "Snapshots read back from JetStream that did not check (the room started from its scene).",
           (double)f.snaps_refused);
    mt_one(t, "fluid_fleet_draining", "gauge", "1 while this node is drained (its rooms move to other nodes).",
           f.draining ? 1 : 0);
    mt_one(t, "fluid_fleet_rooms_released_total", "counter",
           "Rooms this node saved at a tick boundary and released for the next holder (a drain, a stop).",
           (double)f.handed);
    mt_one(t, "fluid_fleet_takeovers_over_budget_total", "counter",
           "Rooms this node took over past its step budget (no live node of the fleet had room for them).",
           (double)f.over_budget);
    mt_one(t, "fluid_fleet_fences_kept_total", "counter",
           "Heartbeat rounds, acknowledged by every other node, that kept this node's rooms stepping while the "
           "directory's bucket took no write (its stream electing a leader).",
           (double)f.fences_kept);
    mt_one(t, "fluid_fleet_rewatches_total", "counter",
           "Times this server's watch of the fleet's directory fell behind (its broker server died) and was made anew.",
           (double)f.rewatches);
}

/* The message bus (--nats): its connection, its traffic, and on a sim node
 * the viewers of each relay heard from in the last 3 s. */
static void metrics_bus(mtext *t, const net *n) {
    bus_state b;
    hub_get_bus_state(n->home->hub, &b);
    if (!b.enabled) return;
    mt_one(t, "fluid_bus_connected", "gauge", "1 while the NATS broker is connected.", b.connected ? 1 : 0);
    mt_head(t, "fluid_bus_messages_total", "counter", "Messages on the bus, by what happened to them.");
    mt_printf(t, "fluid_bus_messages_total{what=\"published\"} %llu\n", (unsigned long long)b.published);
    mt_printf(t, "fluid_bus_messages_total{what=\"publish_failed\"} %llu\n", (unsigned long long)b.publish_failed);
    mt_printf(t, "fluid_bus_messages_total{what=\"received\"} %llu\n", (unsigned long long)b.received);
    mt_printf(t, "fluid_bus_messages_total{what=\"refused\"} %llu\n", (unsigned long long)b.bad);
    if (!b.relay)
        mt_printf(t, "fluid_bus_messages_total{what=\"rate_limited\"} %llu\n", (unsigned long long)b.rate_limited);
    mt_printf(t, "fluid_bus_messages_total{what=\"unanswered\"} %llu\n", (unsigned long long)b.unanswered);
    mt_one(t, "fluid_bus_connects_total", "counter", "Connections (and reconnections) to the broker.",
           (double)b.reconnects);
    if (b.relay) return;
    mt_one(t, "fluid_bus_relays_shed_total", "counter",
           "Relays shed for flooding: over twice their share, their subject not read for a while.", (double)b.shed);
    uint32_t relay[HUB_RELAYS];
    int viewers[HUB_RELAYS];
    int k = hub_get_relays(n->home->hub, relay, viewers, HUB_RELAYS);
    mt_head(t, "fluid_relay_viewers", "gauge", "Viewers of each relay heard from in the last 3 s.");
    for (int i = 0; i < k; i++) mt_printf(t, "fluid_relay_viewers{relay=\"%u\"} %d\n", relay[i], viewers[i]);
}

/* The recordings: what they keep of their budget, and the ones that
 * stopped on their own, by cause. */
static void metrics_recordings(mtext *t, const net *n) {
    rec_status rs;
    hub_get_rec_status(n->home->hub, &rs);
    mt_one(t, "fluid_recording_active", "gauge", "1 while a recording runs.", rs.active ? 1 : 0);
    mt_one(t, "fluid_recordings_bytes", "gauge", "Bytes all recordings keep (the running one included).",
           (double)rs.used_bytes);
    mt_one(t, "fluid_recordings_budget_bytes", "gauge", "Bytes all recordings may keep (--record-total-mb).",
           (double)rs.budget_bytes);
    mt_head(t, "fluid_recordings_stopped_total", "counter",
            "Recordings stopped on their own: the budget used up, the disk's reserve for the saves reached (or a "
            "full disk), another write error.");
    mt_printf(t, "fluid_recordings_stopped_total{reason=\"budget\"} %llu\n", (unsigned long long)rs.stopped_budget);
    mt_printf(t, "fluid_recordings_stopped_total{reason=\"disk\"} %llu\n", (unsigned long long)rs.stopped_disk);
    mt_printf(t, "fluid_recordings_stopped_total{reason=\"error\"} %llu\n", (unsigned long long)rs.stopped_error);
}

/* Each listed room's statistics, taken once per request (network thread:
 * a static table). */
typedef struct room_sample {
    char name[ROOM_NAME_CAP];
    sim_stats s;
    char scene[CMD_NAME_LEN], solver[CMD_NAME_LEN];
    bool evicted;
} room_sample;
static room_sample sample[NET_ROOMS_MAX];

static int take_samples(const net *n) {
    static room_entry e[NET_ROOMS_MAX];
    int k = rooms_list(n->dir, e, NET_ROOMS_MAX), got = 0;
    for (int i = 0; i < k && i < NET_ROOMS_MAX; i++) {
        room *r = room_find(n->dir, e[i].name);
        if (!r) continue;
        room_sample *x = &sample[got++];
        _Static_assert(sizeof x->name == sizeof e[i].name, "a room's name, as listed");
        memcpy(x->name, e[i].name, sizeof x->name);
        x->name[sizeof x->name - 1] = 0;
        x->evicted = e[i].evicted;
        hub_get_stats(room_hub(r), &x->s);
        world_info wi;
        hub_get_info(room_hub(r), &wi);
        snprintf(x->scene, sizeof x->scene, "%s", wi.scene);
        snprintf(x->solver, sizeof x->solver, "%s", wi.solver);
        room_unref(r);
    }
    return got;
}

/* One gauge or counter with a sample per room: {room="name"}. */
#define PER_ROOM(t, k, metric_, type, help, expr)                                                                      \
    do {                                                                                                               \
        mt_head(t, metric_, type, help);                                                                               \
        for (int i_ = 0; i_ < (k); i_++) {                                                                             \
            const sim_stats *s = &sample[i_].s;                                                                        \
            mt_printf(t, "%s{room=\"%s\"} %.17g\n", metric_, sample[i_].name, (double)(expr));                         \
        }                                                                                                              \
    } while (0)

/* The worlds: one sample per room of each. */
static void metrics_worlds(mtext *t, int k) {
    mt_head(t, "fluid_rooms", "gauge",
            "Rooms listed, by state (asleep: an idle room that stopped stepping; evicted: its world freed until "
            "wanted).");
    int asleep = 0, evicted = 0;
    for (int i = 0; i < k; i++) evicted += sample[i].evicted, asleep += !sample[i].evicted && sample[i].s.asleep;
    mt_printf(t,
              "fluid_rooms{state=\"awake\"} %d\nfluid_rooms{state=\"asleep\"} %d\nfluid_rooms{state=\"evicted\"} %d\n",
              k - asleep - evicted, asleep, evicted);
    mt_head(t, "fluid_step_duration_seconds", "histogram", "Wall time of one simulation step (all its substeps).");
    for (int i = 0; i < k; i++) {
        const sim_stats *s = &sample[i].s;
        const char *r = sample[i].name;
        for (int b = 0; b < SIM_STEP_BUCKETS; b++)
            mt_printf(t, "fluid_step_duration_seconds_bucket{room=\"%s\",le=\"%g\"} %llu\n", r,
                      sim_step_bucket_ms[b] / 1000.0, (unsigned long long)s->step_bucket[b]);
        mt_printf(t, "fluid_step_duration_seconds_bucket{room=\"%s\",le=\"+Inf\"} %llu\n", r,
                  (unsigned long long)s->step_count);
        mt_printf(t, "fluid_step_duration_seconds_sum{room=\"%s\"} %.9g\n", r, s->step_ms_sum / 1000.0);
        mt_printf(t, "fluid_step_duration_seconds_count{room=\"%s\"} %llu\n", r, (unsigned long long)s->step_count);
    }
    PER_ROOM(t, k, "fluid_tick", "gauge", "Steps taken since the world was loaded.", s->tick);
    PER_ROOM(t, k, "fluid_sim_time_seconds", "gauge", "Simulated seconds since the world was loaded.", s->sim_time);
    PER_ROOM(t, k, "fluid_realtime_ratio", "gauge", "Simulated seconds per wall second over the last second.",
             s->realtime_ratio);
    PER_ROOM(t, k, "fluid_tick_overruns_total", "counter",
             "Ticks that ended after the next tick was due (late, or catching up).", s->overruns);
    PER_ROOM(t, k, "fluid_particles", "gauge", "Particles in the world.", s->particles);
    PER_ROOM(t, k, "fluid_bodies", "gauge", "Rigid bodies in the world.", s->bodies);
    PER_ROOM(t, k, "fluid_springs", "gauge", "Viscoelastic springs in the world.", s->springs);
    PER_ROOM(t, k, "fluid_paused", "gauge", "1 while the world is paused.", s->paused ? 1 : 0);
    mt_head(t, "fluid_solver_info", "gauge", "The solver that steps the world and its scene (labels), always 1.");
    for (int i = 0; i < k; i++)
        mt_printf(t, "fluid_solver_info{room=\"%s\",solver=\"%s\",scene=\"%s\"} 1\n", sample[i].name, sample[i].solver,
                  sample[i].scene);
    PER_ROOM(t, k, "fluid_solver_iterations", "gauge",
             "Iterations of the last implicit solve (0 for explicit solvers).", s->solver_iterations);
    PER_ROOM(t, k, "fluid_frames_published_total", "counter", "Frames encoded (once each, for every client).",
             s->frames_published);
    PER_ROOM(t, k, "fluid_frame_bytes", "gauge", "Size of the newest frame.", s->frame_bytes);
    mt_head(t, "fluid_commands_total", "counter", "Commands the simulation ran, by kind and result.");
    for (int i = 0; i < k; i++)
        for (int c = 1; c < CMD_KIND_COUNT; c++) {
            if (c == CMD_AUTH || c == CMD_CLIENT_LEFT) continue;
            for (int ok = 1; ok >= 0; ok--)
                mt_printf(t, "fluid_commands_total{room=\"%s\",kind=\"%s\",result=\"%s\"} %llu\n", sample[i].name,
                          cmd_kind_name((cmd_kind)c), ok ? "ok" : "failed",
                          (unsigned long long)(ok ? sample[i].s.cmd_ok[c] : sample[i].s.cmd_failed[c]));
        }
    PER_ROOM(t, k, "fluid_commands_forbidden_total", "counter",
             "Commands refused by the simulation because the connection's role does not allow them.",
             s->commands_forbidden);
    PER_ROOM(t, k, "fluid_commands_duplicate_total", "counter",
             "Retried commands (a session and request id seen before) answered without applying them again.",
             s->commands_duplicate);
    PER_ROOM(t, k, "fluid_rebuilds_refused_total", "counter",
             "Scene loads, solver switches and restores refused: the world had applied --rebuilds-per-min.",
             s->rebuilds_refused);
    PER_ROOM(t, k, "fluid_saves_total", "counter", "Worlds saved to the data directory.", s->saves);
    mt_head(t, "fluid_probe", "gauge",
            "Each probe's latest value: a height probe's water height (m), a pressure sensor's pressure (Pa, the mean "
            "over the step).");
    for (int i = 0; i < k; i++)
        for (int p = 0; p < sample[i].s.probe_count && p < FS_MAX_PROBES; p++) {
            const char *kind = fs_probe_kind_name(sample[i].s.probe[p].kind);
            mt_printf(t, "fluid_probe{room=\"%s\",name=\"%s\",kind=\"%s\"} %.9g\n", sample[i].name,
                      sample[i].s.probe[p].name, kind ? kind : "height", (double)sample[i].s.probe_value[p]);
        }
}

char *rest_metrics_text(const net *n, size_t *len) {
    mtext t = {malloc(8192), 0, 8192, false};
    if (!t.p) return NULL;
    t.p[0] = 0;
    int k = take_samples(n);
    metrics_worlds(&t, k);
    /* the server's own counters, and its errors summed over the rooms */
    sim_stats s;
    memset(&s, 0, sizeof s);
    for (int i = 0; i < k; i++) {
        s.nonfinite_repaired += sample[i].s.nonfinite_repaired;
        s.escapes_clamped += sample[i].s.escapes_clamped;
        s.lists_full += sample[i].s.lists_full;
        s.replies_dropped += sample[i].s.replies_dropped;
        s.save_failures += sample[i].s.save_failures;
    }
    mt_one(&t, "fluid_clients", "gauge", "Connected WebSocket clients.", n->nclients);
    mt_one(&t, "fluid_frames_sent_total", "counter", "Frames sent, summed over clients.", (double)n->frames_sent);
    mt_one(&t, "fluid_frames_dropped_total", "counter", "Frames a slow client skipped (it got a newer one).",
           (double)n->frames_dropped);
    mt_head(&t, "fluid_keyframe_requests_total", "counter",
            "Keyframe requests: received from clients; merged (the client already waited for one); deferred (a "
            "client, or a relay at the sim node, had one less than a second before).");
    mt_printf(&t, "fluid_keyframe_requests_total{what=\"received\"} %llu\n", (unsigned long long)n->key_requests);
    mt_printf(&t, "fluid_keyframe_requests_total{what=\"merged\"} %llu\n", (unsigned long long)n->key_merged);
    mt_printf(&t, "fluid_keyframe_requests_total{what=\"deferred\"} %llu\n", (unsigned long long)n->key_deferred);
    mt_printf(&t, "fluid_keyframe_requests_total{what=\"relay_deferred\"} %llu\n",
              (unsigned long long)hub_remote_keys_deferred(n->home->hub));
    mt_one(&t, "fluid_bytes_sent_total", "counter", "WebSocket bytes sent, summed over clients.",
           (double)n->bytes_sent);
    mt_one(&t, "fluid_http_requests_total", "counter", "HTTP requests to /api and /metrics.", (double)n->http_requests);
    mt_one(&t, "fluid_http_answers_cut_total", "counter",
           "HTTP answers closed unfinished: the reader took nothing for the stall timeout, or left.",
           (double)n->http_answers_cut);
    mt_one(&t, "fluid_http_timeouts_total", "counter",
           "REST requests answered 504: the world did not answer within their wait (they may still be applied).",
           (double)n->rest_timeouts);
    mt_head(&t, "fluid_commands_refused_total", "counter", "Commands refused at the edge, before the simulation.");
    mt_printf(&t, "fluid_commands_refused_total{reason=\"bad_message\"} %llu\n", (unsigned long long)n->bad_messages);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"rate_limited\"} %llu\n", (unsigned long long)n->rate_limited);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"busy\"} %llu\n", (unsigned long long)n->queue_busy);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"origin\"} %llu\n", (unsigned long long)n->origin_refused);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"export_budget\"} %llu\n",
              (unsigned long long)n->budget.refused[REST_HEAVY_EXPORT]);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"snapshot_budget\"} %llu\n",
              (unsigned long long)n->budget.refused[REST_HEAVY_SNAPSHOT]);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"record_start_budget\"} %llu\n",
              (unsigned long long)n->budget.refused[REST_RECORD_START]);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"recordings_budget\"} %llu\n",
              (unsigned long long)n->budget.refused[REST_REC_READ]);
    mt_printf(&t, "fluid_commands_refused_total{reason=\"heavy_busy\"} %llu\n",
              (unsigned long long)n->budget.refused_busy);
    mt_one(&t, "fluid_http_refusals_held_total", "counter",
           "Refusals for a party's own budget held a moment before they were sent (the party kept asking).",
           (double)n->refusals_held);
    mt_one(&t, "fluid_http_heavy_answers", "gauge",
           "Exports and snapshots under way (asked of the simulation, or being sent), all parties together.",
           n->budget.under_way);
    mt_head(&t, "fluid_errors_total", "counter", "Errors by kind.");
    mt_printf(&t, "fluid_errors_total{kind=\"log_error\"} %lu\n", log_count(LOG_ERROR));
    mt_printf(&t, "fluid_errors_total{kind=\"log_warn\"} %lu\n", log_count(LOG_WARN));
    mt_printf(&t, "fluid_errors_total{kind=\"nonfinite_repaired\"} %llu\n", (unsigned long long)s.nonfinite_repaired);
    mt_printf(&t, "fluid_errors_total{kind=\"escapes_clamped\"} %llu\n", (unsigned long long)s.escapes_clamped);
    mt_printf(&t, "fluid_errors_total{kind=\"lists_full\"} %llu\n", (unsigned long long)s.lists_full);
    mt_printf(&t, "fluid_errors_total{kind=\"replies_dropped\"} %llu\n",
              (unsigned long long)(n->replies_dropped + s.replies_dropped));
    mt_printf(&t, "fluid_errors_total{kind=\"clients_refused\"} %llu\n", (unsigned long long)n->ws_rejected);
    mt_printf(&t, "fluid_errors_total{kind=\"save_failed\"} %llu\n", (unsigned long long)s.save_failures);
    metrics_recordings(&t, n);
    metrics_bus(&t, n);
    metrics_fleet(&t, n);
    if (t.failed) {
        free(t.p);
        return NULL;
    }
    *len = t.n;
    return t.p;
}
