/* sim_thread.c - the sim thread: its life (create, start, destroy), the
 * fixed-rate step loop, frame encoding and the statistics it publishes.
 * Commands are applied by apply.c, the world saved by persist.c. */
#include "thread_name.h"
#include "sim_thread.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "apply.h"
#include "apply_record.h"
#include "apply_bodies.h"
#include "clock.h"
#include "log.h"
#include "persist.h"
#include "publish.h"
#include "publish_frame.h"
#include "rate.h"
#include "sim_state.h"

_Static_assert(CONFIG_MAX_THREADS == FS_MAX_WORKERS, "--threads is bounded by the core's worker limit");

static int pool_threads(const sim_thread *s) {
    return s->pool ? fs_pool_threads(s->pool) : 1;
}

/* The world's parallel_for: the shared pool, or this thread alone while the
 * world is small (pool_choice.c). */
static void sim_parallel_for(fs_task_fn *fn, void *ctx, int count, void *user) {
    sim_thread *s = user;
    if (s->pool_use.pooled)
        fs_pool_parallel_for(fn, ctx, count, s->pool);
    else
        fn(0, count, 0, ctx);
}

/* The world's definition from the options and the shared pool (main thread). */
static void world_def(sim_thread *s, fs_world_def *def) {
    const srv_config *cfg = s->cfg;
    *def = fs_default_world_def();
    int cap = cfg->capacity;
    if (cap <= 0) cap = cfg->particles * 2 > 65536 ? cfg->particles * 2 : 65536;
    def->capacity = cap;
    def->substeps = cfg->substeps > 0 ? cfg->substeps : 1;
    if (s->pool && fs_pool_threads(s->pool) > 1) {
        def->worker_count = fs_pool_threads(s->pool);
        def->parallel_for = sim_parallel_for;
        def->task_user = s;
    }
    /* one tick advances the world by one tick of wall time (the core accepts
     * steps up to 0.1 s; below 10 Hz the world runs slower than real time) */
    if (cfg->tick_hz >= 10) def->dt = (float)(1.0 / cfg->tick_hz);
}

/* The first world: the save in --data-dir, else the configured scene with
 * its own solver. */
/* The particle budget: without --particles, the first scene is stepped for
 * a moment (BUDGET_WARM ticks, then BUDGET_ALONE timed on one thread and,
 * if that is too slow for one, BUDGET_TIMED on the pool) and, when a tick
 * takes more than step_budget of the tick period, loaded again with as many
 * particles as that share allows (the cost grows about linearly with the
 * count); never more than the scene's own size.  Said in the log. */
#define BUDGET_WARM 20
#define BUDGET_TIMED 20
#define BUDGET_ALONE 10 /* timed on one thread first (the pool's choice, choose_pool) */
#define BUDGET_MIN 1000
/* The mean milliseconds of a tick of w: warm ticks, then timed ones. */
/* ... and in *cpu_ms (when not NULL) this thread's CPU time a tick: on one
 * thread, the core-milliseconds it costs whatever else holds the cores. */
static double tick_ms(fs_world *w, int warm, int timed, double *cpu_ms) {
    for (int t = 0; t < warm; t++) fs_world_step(w);
    const uint64_t t0 = clock_now_ns(), c0 = clock_thread_cpu_ns();
    for (int t = 0; t < timed; t++) fs_world_step(w);
    const uint64_t t1 = clock_now_ns(), c1 = clock_thread_cpu_ns();
    if (cpu_ms) *cpu_ms = timed > 0 ? (double)(c1 - c0) * 1e-6 / timed : 0;
    return timed > 0 ? (double)(t1 - t0) * 1e-6 / timed : 0;
}

static void size_to_budget(sim_thread *s, const char *scene) {
    const srv_config *cfg = s->cfg;
    const int n0 = fs_world_particle_count(s->world);
    const double period = 1e3 / cfg->tick_hz, allowed = cfg->step_budget * period;
    s->pool_use.pooled =
        pool_threads(s) > 1; /* warm on the pool, timed alone, then on the pool if one thread is too slow */
    tick_ms(s->world, BUDGET_WARM, 0, NULL);
    s->pool_use.pooled = false;
    double cpu;
    double ms = tick_ms(s->world, 0, BUDGET_ALONE, &cpu);
    pool_choice_learn(&s->pool_use, cpu, n0);
    if (pool_threads(s) > 1 && ms > POOL_ON * period) {
        s->pool_use.pooled = true;
        const double pooled = tick_ms(s->world, 0, BUDGET_TIMED, NULL);
        if (pooled < ms)
            ms = pooled;
        else
            s->pool_use.pooled = false;
    }
    int n = 0; /* fits: the scene's own size again (its count asked for would give a smaller world) */
    if (ms > allowed && n0 > BUDGET_MIN) {
        n = (int)((double)n0 * allowed / ms);
        n = n < BUDGET_MIN ? BUDGET_MIN : n;
    }
    fs_error e = {{0}};
    if (fs_world_load_scene(s->world, scene, n, &e) != FS_OK) { /* the smaller size failed: the scene as it was */
        log_warn("sim: particle budget: cannot load '%s' with %d particles (%s); keeping its own size", scene, n,
                 e.msg);
        fs_world_load_scene(s->world, scene, 0, &e);
        return;
    }
    log_info("sim: particle budget: a tick of '%s' with %d particles took %.1f ms on %d thread%s; the tick is %.1f ms, "
             "%.0f%% of it allows %d: starting with %d particles (--particles N to choose, --step-budget 0 for the "
             "scene's own size)",
             scene, n0, ms, s->pool_use.pooled ? cfg->threads : 1, s->pool_use.pooled && cfg->threads > 1 ? "s" : "",
             period, 100 * cfg->step_budget, ms > 0 ? (int)((double)n0 * allowed / ms) : n0,
             fs_world_particle_count(s->world));
}

static int first_world(sim_thread *s, char *err, size_t errlen) {
    const srv_config *cfg = s->cfg;
    const char *scene = cfg->scene[0] ? cfg->scene : (fs_scene_count() > 0 ? fs_scene_get(0)->name : "");
    persist_status ps = persist_load(cfg->data_dir, &s->save, s->world);
    if (ps == PERSIST_RESTORED) {
        sim_world_replaced(s, 0);
        return 0;
    }
    fs_error e = {{0}};
    int which = fs_scene_find(scene);
    if (which >= 0 && fs_world_set_solver(s->world, fs_scene_get(which)->solver, &e) != FS_OK) {
        snprintf(err, errlen, "cannot start solver for scene '%s': %s", scene, e.msg);
        return -1;
    }
    if (fs_world_load_scene(s->world, scene, cfg->particles, &e) != FS_OK) {
        snprintf(err, errlen, "cannot load scene '%s': %s", scene, e.msg);
        return -1;
    }
    if (cfg->particles == 0 && cfg->step_budget > 0) size_to_budget(s, scene);
    return 0;
}

static int init(sim_thread *s, char *err, size_t errlen) {
    const srv_config *cfg = s->cfg;
    s->cursor = calloc((size_t)cfg->max_clients, sizeof *s->cursor);
    s->dedupe = dedupe_create();
    s->rebuilds = rate_bucket_full(rate_rebuilds_burst(cfg->rebuilds_per_min), clock_now_ns());
    if (!s->cursor || !s->dedupe) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    s->encoder = encoder_create(s->hub, s->st, cfg->max_clients, cfg->frame_bands, cfg->room, err, errlen);
    if (!s->encoder) return -1;
    fs_world_def def;
    world_def(s, &def);
    int cap = def.capacity; /* as configured (a save may change it) */
    persist_open(cfg->data_dir, &s->save, &def);
    size_t saved_len = s->save.len;
    s->world = fs_world_create(&def);
    if (!s->world) {
        snprintf(err, errlen, "cannot create a world of %d particles", cap);
        return -1;
    }
    s->dt = fs_world_dt(s->world);
    if (first_world(s, err, errlen)) return -1;
    world_info wi;
    sim_publish_info(s, &wi);          /* before a recording starts: its first segment describes this world */
    sim_publish_obstacles(s, 0, true); /* what a first viewer is sent after its hello */
    s->save_bytes = saved_len;
    if (cfg->data_dir[0] && !s->save_bytes) s->save_bytes = fs_world_snapshot_size(s->world);
    sim_record_limits(s);
    sim_record_at_start(s);
    if (cfg->data_dir[0] && cfg->save_interval > 0)
        s->next_save_ns = clock_now_ns() + (uint64_t)(cfg->save_interval * 1e9);
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    sim_stats_of_world(s, &fst);
    s->stats.step_threads = s->pool_use.pooled ? pool_threads(s) : 1;
    hub_set_stats(s->hub, &s->stats);
    return 0;
}

sim_thread *sim_thread_create(const srv_config *cfg, const wire_static *st, fs_pool *pool, hub *h, cmd_queue *q,
                              char *err, size_t errlen) {
    sim_thread *s = calloc(1, sizeof *s);
    if (!s) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    s->cfg = cfg;
    s->st = st;
    s->pool = pool;
    s->hub = h;
    s->queue = q;
    atomic_init(&s->stop, false);
    atomic_init(&s->discard, false);
    atomic_init(&s->evicted, false);
    if (init(s, err, errlen)) {
        sim_thread_destroy(s);
        return NULL;
    }
    return s;
}

/* How many tick periods (100 ms at 60 Hz) a late schedule may make up. */
enum { TICK_DEBT_MAX = 6 };

static void sleep_until(uint64_t t) {
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

/* When the next frame is due. */
typedef struct frame_clock {
    uint64_t next, last, period;
} frame_clock;

/* The statistics window (about one second). */
typedef struct stats_window {
    uint64_t start, ticks, steps;
    double step_sum, cpu_sum, step_max, sim_start;
    bool have_sim;
} stats_window;

static bool heavy(const cmd *c) {
    return rate_cmd_heavy(c->kind);
}

/* Applies the queued commands (at most about 1024 a tick), in order; after a
 * command that rebuilds the world (rate_cmd_heavy) the rest wait for the
 * next tick: a tick rebuilds the world at most once, whoever queued what
 * (one refused for the world's bound on rebuilds rebuilt nothing).
 * Returns how many. */
static int apply_queued(sim_thread *s) {
    cmd batch[64];
    int n, total = 0;
    bool rebuilt = false;
    while (!rebuilt && total < 1024 && (n = cmd_queue_pop_through(s->queue, batch, 64, heavy)) > 0) {
        for (int i = 0; i < n; i++) {
            uint64_t refused = s->stats.rebuilds_refused;
            sim_apply(s, &batch[i]);
            rebuilt = heavy(&batch[i]) && s->stats.rebuilds_refused == refused;
        }
        total += n;
    }
    return total;
}

/* Counts one step of ms milliseconds (cpu_ms of them the sim thread's CPU time). */
static void count_step(sim_thread *s, stats_window *win, const fs_stats *fst, double ms, double cpu_ms) {
    s->stats.step_ms_last = ms;
    s->stats.step_count++;
    s->stats.step_ms_sum += ms;
    for (int k = 0; k < SIM_STEP_BUCKETS; k++)
        if (ms <= sim_step_bucket_ms[k]) s->stats.step_bucket[k]++;
    memcpy(s->stats.phase_ms, fst->phase_ms, sizeof s->stats.phase_ms);
    win->step_sum += ms;
    win->cpu_sum += cpu_ms;
    if (ms > win->step_max) win->step_max = ms;
    win->steps++;
}

/* Closes the window after a second (rates, means), and copies the world's
 * counters. */
static void update_stats(sim_thread *s, stats_window *win, const fs_stats *fst, uint64_t now) {
    if (now - win->start >= 1000000000ull) {
        double wall = (double)(now - win->start) / 1e9;
        s->stats.step_ms_mean = win->steps ? win->step_sum / (double)win->steps : 0;
        s->stats.step_cpu_ms_mean = win->steps ? win->cpu_sum / (double)win->steps : 0;
        s->stats.step_ms_max = win->step_max;
        if (win->steps)
            pool_choice_update(&s->pool_use, s->stats.step_ms_mean, s->stats.step_cpu_ms_mean, fst->particles,
                               1e3 / s->cfg->tick_hz, pool_threads(s));
        s->stats.realtime_ratio = (fst->sim_time - win->sim_start) / wall;
        s->stats.tick_hz_actual = (double)win->ticks / wall;
        win->start = now;
        win->ticks = win->steps = 0;
        win->step_sum = win->cpu_sum = win->step_max = 0;
        win->sim_start = fst->sim_time;
    } else if (s->stats.tick_hz_actual == 0 && win->steps) {
        s->stats.step_ms_mean = win->step_sum / (double)win->steps; /* first second */
        s->stats.step_cpu_ms_mean = win->cpu_sum / (double)win->steps;
    }
    sim_stats_of_world(s, fst);
    s->stats.step_threads = s->pool_use.pooled ? pool_threads(s) : 1;
    s->stats.nonfinite_repaired = fst->nonfinite_repaired;
    s->stats.escapes_clamped = fst->escapes_clamped;
    s->stats.lists_full = fst->lists_full;
    s->stats.emitted = fst->emitted;
    s->stats.drained = fst->drained;
    s->stats.bodies = fst->bodies;
    s->stats.solver_iterations = fst->solver_iterations;
    s->stats.solver_residual = fst->solver_residual;
}

/* Saves to --data-dir (if given), counted in the statistics. */
static void save(sim_thread *s) {
    if (!s->cfg->data_dir[0] || atomic_load(&s->discard)) return;
    persist_saved out;
    if (persist_save(s->cfg->data_dir, s->world, &out)) {
        s->stats.saves++;
        s->stats.save_bytes_last = out.bytes;
        s->stats.save_ms_last = out.ms;
        if (out.bytes != s->save_bytes) {
            s->save_bytes = out.bytes;
            sim_record_limits(s); /* the room the next save needs */
        }
    } else {
        s->stats.save_failures++;
    }
}

/* A fleet's room (one with a fence): its world as a snapshot document
 * handed to the fleet thread through the hub, which writes it to JetStream
 * (as GET /api/snapshot takes it: the document is made on this thread).
 * Taken when --fleet-save-s of simulated time, less FLEET_SAVE_LEAD, have
 * passed since the last (the lead leaves the fleet thread time to write it,
 * so that a node killed loses at most --fleet-save-s of simulated time), or
 * --fleet-save-s of wall time (a paused world); at once when the world was
 * paused or resumed since the last (a room taken over comes back as paused
 * as it was); when the fleet thread asks; and when it falls asleep
 * (now_anyway: its last one is the world as it sleeps).  The fleet
 * thread's last ask (the room moves to another node, or this node stops)
 * parks the room: this save is the world the next holder starts from, and
 * nothing is stepped or applied here after it. */
#define FLEET_SAVE_LEAD 0.1
static void fleet_save(sim_thread *s, uint64_t now, double sim_time, bool now_anyway) {
    if (!hub_fence(s->hub)) return;
    const double every = s->cfg->fleet_save_s;
    bool last = false;
    const bool asked = hub_fleet_save_asked(s->hub, &last) || now_anyway;
    const double lead = every > 2 * FLEET_SAVE_LEAD ? FLEET_SAVE_LEAD : every / 2;
    const bool paused = fs_world_paused(s->world);
    const bool due = every > 0 && (now >= s->next_fleet_save_ns || sim_time - s->fleet_saved_sim >= every - lead ||
                                   paused != s->fleet_saved_paused);
    if (!asked && !due) return;
    s->next_fleet_save_ns = now + (uint64_t)((every > 0 ? every : 1) * 1e9);
    s->fleet_saved_sim = sim_time;
    s->fleet_saved_paused = paused;
    msg_buf *m = persist_encode(s->world);
    if (m)
        hub_put_fleet_snap(s->hub, m, sim_world_tick(s), last);
    else
        s->stats.save_failures++;
    if (last) {
        s->parked = true;
        log_info("sim: room '%s' parked at tick %llu for its move (saved for the next holder)", s->cfg->room,
                 (unsigned long long)sim_world_tick(s));
    }
}

/* One tick: commands, one step (or none while paused), the frame when due,
 * statistics, the periodic save. */
static int tick(sim_thread *s, stats_window *win, frame_clock *fc) {
    /* 1. Commands, at the tick boundary. */
    int total = apply_queued(s);
    /* 2. One step (or none while paused). */
    uint64_t t0 = clock_now_ns(), c0 = clock_thread_cpu_ns();
    bool stepped = fs_world_advance(s->world);
    uint64_t t1 = clock_now_ns(), c1 = clock_thread_cpu_ns();
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    if (!win->have_sim) {
        win->sim_start = fst.sim_time;
        win->have_sim = true;
    }
    if (stepped) {
        sim_expire_heat(s);
        count_step(s, win, &fst, (double)(t1 - t0) / 1e6, (double)(c1 - c0) / 1e6);
    }
    win->ticks++;
    if (s->pending_count) sim_flush_pending_steps(s, false);
    if (s->rec_wait_count) sim_record_poll(s);
    /* 3. Frame at the frame rate; while nothing changes (paused, no
     * command, no cursor moved) only one a second, as a heartbeat. */
    if (stepped || total) s->dirty = true;
    if (t1 >= fc->next && (s->dirty || encoder_key_wanted(s->encoder) || t1 - fc->last >= 1000000000ull)) {
        sim_publish_frame(s);
        s->dirty = false;
        fc->last = t1;
        fc->next += fc->period;
        if (fc->next < t1) fc->next = t1 + fc->period; /* late: skip, never burst */
    }
    /* 4. Stats, and the periodic save. */
    update_stats(s, win, &fst, t1);
    if (s->next_save_ns && t1 >= s->next_save_ns) {
        save(s); /* on this thread: one late tick per interval (a few ms per MB) */
        s->next_save_ns = clock_now_ns() + (uint64_t)(s->cfg->save_interval * 1e9);
    }
    fleet_save(s, t1, fst.sim_time, false);
    hub_set_stats(s->hub, &s->stats);
    hub_wake(s->hub);
    return total;
}

/* An idle room sleeps (--room-idle-s): after that long with no viewer (the
 * frame wants' clients, relays' included), no command and no REST request
 * (hub_touch), it stops stepping and coding, saves, and polls every
 * IDLE_POLL_NS until one of them comes; then the schedule starts again from
 * now (no catch-up).  Returns true when it slept. */
#define IDLE_POLL_NS 100000000ull
typedef enum idle_outcome { IDLE_NO, IDLE_WOKE, IDLE_EVICT } idle_outcome;

/* Whether an asleep room is let go of: with a folder of its own to restore
 * from, after --room-evict-s asleep. */
static bool evictable(const sim_thread *s, uint64_t asleep_ns, uint64_t now) {
    return s->cfg->room_evict_s > 0 && s->cfg->data_dir[0] && s->cfg->room_idle_s > 0 &&
           now - asleep_ns >= (uint64_t)(s->cfg->room_evict_s * 1e9);
}

static idle_outcome sleep_if_idle(sim_thread *s, int applied) {
    if (s->cfg->room_idle_s <= 0) return IDLE_NO;
    uint64_t now = clock_now_ns();
    frame_wants w;
    hub_get_frame_wants(s->hub, &w);
    uint64_t touched = hub_touched(s->hub);
    if (!s->busy_ns || w.clients > 0 || applied) s->busy_ns = now;
    if (touched > s->busy_ns) s->busy_ns = touched;
    if (now - s->busy_ns < (uint64_t)(s->cfg->room_idle_s * 1e9)) return IDLE_NO;
    s->stats.asleep = true;
    hub_set_stats(s->hub, &s->stats);
    save(s);
    fleet_save(s, now, s->stats.sim_time, true);
    log_info("sim: no viewer, command or request for %.0f s: sleeping at tick %llu", s->cfg->room_idle_s,
             (unsigned long long)s->stats.tick);
    while (!atomic_load(&s->stop)) {
        sleep_until(clock_now_ns() + IDLE_POLL_NS);
        hub_get_frame_wants(s->hub, &w);
        if (w.clients > 0 || cmd_queue_count(s->queue) > 0 || hub_touched(s->hub) > s->busy_ns ||
            hub_fleet_save_pending(s->hub))
            break;
        if (evictable(s, now, clock_now_ns())) { /* saved above: its room lets the thread and the world go */
            log_info("sim: asleep for %.0f s: evicted at tick %llu (restored from %s when its room is opened)",
                     s->cfg->room_evict_s, (unsigned long long)s->stats.tick, s->cfg->data_dir);
            atomic_store(&s->evicted, true);
            return IDLE_EVICT;
        }
    }
    s->busy_ns = clock_now_ns();
    s->stats.asleep = false;
    hub_set_stats(s->hub, &s->stats);
    log_info("sim: awake at tick %llu", (unsigned long long)s->stats.tick);
    return IDLE_WOKE;
}

/* A fleet's room steps only before the fence its fleet thread sets
 * (hub_fence: the last renewal of its claim plus the lease, less a margin):
 * past it, another node may hold the room, so this thread neither applies
 * commands nor steps nor saves until the fence moves on (a renewal) or the
 * room is closed.  Returns whether it is fenced now. */
static bool fenced(sim_thread *s, uint64_t now) {
    const uint64_t fence = hub_fence(s->hub);
    const bool out = fence && now >= fence;
    if (out && !s->fence_told && fence > 1) { /* (1: a room made fenced, waiting for its first claim) */
        log_warn("sim: room '%s': its claim in the fleet is not renewed (past its fence): stepping stops at tick %llu",
                 s->cfg->room, (unsigned long long)s->stats.tick);
        s->fence_told = true;
    } else if (!out && s->fence_told) {
        log_info("sim: room '%s': its claim is renewed: stepping from tick %llu", s->cfg->room,
                 (unsigned long long)s->stats.tick);
        s->fence_told = false;
    }
    s->fenced = out;
    return out;
}

static void *sim_main(void *arg) {
    sim_thread *s = arg;
    thread_name_set("sim", s->cfg->room);
    const uint64_t period = (uint64_t)(1e9 / s->cfg->tick_hz);
    uint64_t next_tick = clock_now_ns();
    frame_clock fc = {.next = next_tick, .last = 0, .period = (uint64_t)(1e9 / s->cfg->frame_hz)};
    stats_window win = {.start = next_tick};
    while (!atomic_load(&s->stop)) {
        if (s->parked) { /* saved for its move: the next holder steps it from that save */
            s->fenced = true;
            sleep_until(clock_now_ns() + period);
            continue;
        }
        if (fenced(s, clock_now_ns())) { /* the schedule starts again from the fence's move */
            sleep_until(clock_now_ns() + period);
            next_tick = clock_now_ns();
            win = (stats_window){.start = next_tick};
            fc.next = next_tick;
            continue;
        }
        int applied = tick(s, &win, &fc);
        idle_outcome idle = sleep_if_idle(s, applied);
        if (idle == IDLE_EVICT) break;
        if (idle == IDLE_WOKE) { /* the schedule starts again from now */
            next_tick = clock_now_ns();
            win = (stats_window){.start = next_tick};
            fc.next = next_tick;
            continue;
        }
        /* 5. Fixed rate with a bounded catch-up: a tick that ran late (a
         * transient: another process took a core) is made up by running the
         * next ones at once while the schedule is at most TICK_DEBT_MAX
         * periods behind, so it costs no simulated time.  Past the bound the
         * schedule moves instead: an overloaded world slows down rather than
         * spiralling. */
        uint64_t now = clock_now_ns();
        next_tick = clock_next_tick(next_tick, now, period, TICK_DEBT_MAX);
        if (next_tick <= now)
            s->stats.overruns++;
        else
            sleep_until(next_tick);
    }
    /* Stopping (SIGTERM/SIGINT): commands already queued are dropped; the
     * world as it stands is saved (not a fenced one: another node may hold it). */
    if (!s->fenced) save(s);
    return NULL;
}

/* A room's admission measures fewer ticks than the server's start: it runs
 * while other rooms step, and a request waits for it. */
#define ADMIT_WARM 5
#define ADMIT_TIMED 10

double sim_thread_measure(sim_thread *s, int *particles) {
    char scene[64];
    snprintf(scene, sizeof scene, "%s", fs_world_scene_name(s->world));
    const int n = fs_world_particle_count(s->world), asked = fs_world_scene_size(s->world);
    s->pool_use.pooled = false;
    double ms;
    tick_ms(s->world, ADMIT_WARM, ADMIT_TIMED, &ms);
    pool_choice_learn(&s->pool_use, ms, n);
    s->pool_use.pooled = pool_threads(s) > 1 && ms > POOL_ON * 1e3 / s->cfg->tick_hz;
    fs_error e = {{0}};
    /* back to its first tick: loaded with the size it was loaded with, not the count it gave (a scene sized by
     * volume gives a smaller count, and that count a smaller tank) */
    if (fs_world_load_scene(s->world, scene, asked, &e) == FS_OK) sim_world_replaced(s, 0);
    *particles = fs_world_particle_count(s->world);
    return ms;
}

int sim_thread_resize(sim_thread *s, int n, char *err, size_t errlen) {
    char scene[64];
    snprintf(scene, sizeof scene, "%s", fs_world_scene_name(s->world));
    fs_error e = {{0}};
    if (fs_world_load_scene(s->world, scene, n, &e) != FS_OK) {
        snprintf(err, errlen, "cannot load '%s' with %d particles: %s", scene, n, e.msg);
        return -1;
    }
    sim_world_replaced(s, 0);
    world_info wi;
    sim_publish_info(s, &wi);
    fs_stats fst; /* its statistics say the new size before its first tick (POST /api/rooms answers it) */
    fs_world_stats(s->world, &fst);
    sim_stats_of_world(s, &fst);
    hub_set_stats(s->hub, &s->stats);
    return 0;
}

int sim_thread_restore(sim_thread *s, const uint8_t *p, size_t n, uint32_t epoch, char *err, size_t errlen) {
    int rc = 0;
    if (p && persist_restore(s->world, p, n, err, errlen)) rc = -1;
    sim_world_replaced(s, 0);
    s->epoch = epoch;
    fs_stats fst; /* its statistics say the restored tick before its first step */
    fs_world_stats(s->world, &fst);
    sim_stats_of_world(s, &fst);
    hub_set_stats(s->hub, &s->stats);
    return rc;
}

bool sim_thread_evicted(sim_thread *s) {
    return s && atomic_load(&s->evicted);
}

void sim_thread_discard(sim_thread *s) {
    if (s) atomic_store(&s->discard, true);
}

int sim_thread_start(sim_thread *s) {
    if (pthread_create(&s->thread, NULL, sim_main, s)) return -1;
    s->started = true;
    return 0;
}

void sim_thread_destroy(sim_thread *s) {
    if (!s) return;
    atomic_store(&s->stop, true);
    if (s->started) pthread_join(s->thread, NULL);
    if (s->world) fs_world_destroy(s->world);
    sim_obstacles_free(s);
    persist_close(&s->save);
    free(s->cursor);
    dedupe_destroy(s->dedupe);
    encoder_destroy(s->encoder);
    free(s);
}
