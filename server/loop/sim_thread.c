/* sim_thread.c - the sim thread: fixed-rate stepping, frame encoding and the
 * snapshots it publishes (commands are applied by sim_apply.c). */
#include "sim_thread.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "clock.h"

static void fill_info(sim_thread *s, world_info *wi)
{
    fs_world *w = s->world;
    memset(wi, 0, sizeof *wi);
    wi->version = ++s->info_version;
    fs_domain d = fs_world_domain(w);
    wi->box_min = d.box_min;
    wi->box_max = d.box_max;
    wi->gravity = d.gravity;
    wi->h = d.h;
    wi->spacing = d.spacing;
    wi->dt = s->dt;
    const char *sc = fs_world_scene_name(w);
    snprintf(wi->scene, sizeof wi->scene, "%s", sc ? sc : "");
    snprintf(wi->solver, sizeof wi->solver, "%s", fs_solver_name(fs_world_solver(w)));
    wi->particles = fs_world_particle_count(w);
    wi->capacity = fs_world_capacity(w);
    wi->paused = fs_world_paused(w);
    int nm = fs_world_material_count(w);
    if (nm > FS_MAX_MATERIALS)
        nm = FS_MAX_MATERIALS;
    wi->material_count = nm;
    for (int m = 0; m < nm; m++) {
        const char *name = fs_world_material_name(w, m);
        snprintf(wi->material[m], CMD_NAME_LEN, "%s", name ? name : "?");
        for (int p = 0; p < FS_P_COUNT; p++)
            wi->param[m][p] = fs_world_get_param(w, m, (fs_param)p);
    }
}

void sim_publish_info(sim_thread *s, world_info *wi)
{
    fill_info(s, wi);
    hub_set_info(s->hub, wi);
}

int sim_thread_init(sim_thread *s, const srv_config *cfg, const wire_static *st, hub *h, cmd_queue *q,
                    char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    s->cfg = cfg;
    s->st = st;
    s->hub = h;
    s->queue = q;
    atomic_init(&s->stop, false);
    s->cursor = calloc((size_t)cfg->max_clients, sizeof *s->cursor);
    if (!s->cursor) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    fs_world_def def = fs_default_world_def();
    int cap = cfg->capacity;
    if (cap <= 0)
        cap = cfg->particles * 2 > 65536 ? cfg->particles * 2 : 65536;
    def.capacity = cap;
    def.substeps = cfg->substeps > 0 ? cfg->substeps : 1;
    if (cfg->threads > 1) {
        s->pool = fs_pool_create(cfg->threads);
        if (!s->pool) {
            snprintf(err, errlen, "cannot create a pool of %d threads", cfg->threads);
            return -1;
        }
        def.worker_count = fs_pool_threads(s->pool);
        def.parallel_for = fs_pool_parallel_for;
        def.task_user = s->pool;
    }
    /* one tick advances the world by one tick of wall time (the core accepts
     * steps up to 0.1 s; below 10 Hz the world runs slower than real time) */
    if (cfg->tick_hz >= 10) def.dt = (float)(1.0 / cfg->tick_hz);
    sim_open_saved(s, &def);
    s->world = fs_world_create(&def);
    if (s->world) def.dt = fs_world_dt(s->world);
    s->dt = def.dt;
    if (!s->world) {
        snprintf(err, errlen, "cannot create a world of %d particles", cap);
        return -1;
    }
    const char *scene = cfg->scene[0] ? cfg->scene : (fs_scene_count() > 0 ? fs_scene_get(0)->name : "");
    fs_error e = {{0}};
    if (sim_load_saved(s) <= 0) {
        int which = fs_scene_find(scene);
        if (which >= 0 && fs_world_set_solver(s->world, fs_scene_get(which)->solver, &e) != FS_OK) {
            snprintf(err, errlen, "cannot start solver for scene '%s': %s", scene, e.msg);
            return -1;
        }
        if (fs_world_load_scene(s->world, scene, cfg->particles, &e) != FS_OK) {
            snprintf(err, errlen, "cannot load scene '%s': %s", scene, e.msg);
            return -1;
        }
    }
    if (cfg->data_dir[0] && cfg->save_interval > 0)
        s->next_save_ns = clock_now_ns() + (uint64_t)(cfg->save_interval * 1e9);
    world_info wi;
    sim_publish_info(s, &wi);
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    s->stats.tick = fst.tick;
    s->stats.sim_time = fst.sim_time;
    s->stats.particles = fst.particles;
    s->stats.springs = fst.springs;
    s->stats.paused = fs_world_paused(s->world);
    hub_set_stats(h, &s->stats);
    return 0;
}

static void publish_frame(sim_thread *s, uint64_t now)
{
    fs_particles_view v;
    fs_world_view(s->world, &v);
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    fs_domain d = fs_world_domain(s->world);
    int nb = 0, total_b = fs_world_body_count(s->world);
    for (int i = 0; i < total_b && nb < FS_MAX_BODIES; i++) {
        fs_body_state b;
        if (!fs_world_body_at(s->world, i, &b))
            continue;
        wire_body *w = &s->body[nb++];
        w->id = b.id;
        w->shape = b.shape;
        w->is_static = b.is_static;
        w->grabbed_by = b.grabbed ? sim_grab_owner(s, b.id) : 0;
        w->size[0] = b.size.x, w->size[1] = b.size.y, w->size[2] = b.size.z;
        w->pos[0] = b.pos.x, w->pos[1] = b.pos.y, w->pos[2] = b.pos.z;
        w->rot[0] = b.rot.w, w->rot[1] = b.rot.x, w->rot[2] = b.rot.y, w->rot[3] = b.rot.z;
    }
    wire_frame_src src = {
        .tick = fst.tick, .sim_time = fst.sim_time, .paused = fs_world_paused(s->world),
        .box_min = d.box_min, .box_max = d.box_max, .count = v.count,
        .x = v.x, .y = v.y, .z = v.z, .material = v.material, .temp = v.temperature, .id = v.id, .order = v.by_id,
        .cursors = s->cursor, .cursor_count = s->cursor_count, .bodies = s->body, .body_count = nb,
    };
    uint64_t t0 = clock_now_ns();
    msg_buf *m = wire_encode_frame(&src);
    uint64_t t1 = clock_now_ns();
    if (!m) {
        log_once("frame-oom", "sim: cannot encode a frame (out of memory)");
        return;
    }
    double ms = (double)(t1 - t0) / 1e6;
    s->stats.encode_ms_last = ms;
    s->stats.encode_ms_mean = s->stats.frames_published ? 0.9 * s->stats.encode_ms_mean + 0.1 * ms : ms;
    s->stats.frame_bytes = m->len;
    s->stats.frames_published++;
    if (s->earliest_unshown_ns) {
        double lat = (double)(t1 - s->earliest_unshown_ns) / 1e6;
        s->stats.cmd_to_frame_ms_last = lat;
        s->stats.cmd_to_frame_ms_mean =
            s->stats.cmd_to_frame_ms_mean > 0 ? 0.8 * s->stats.cmd_to_frame_ms_mean + 0.2 * lat : lat;
        s->earliest_unshown_ns = 0;
    }
    (void)now;
    hub_publish_frame(s->hub, m);
}

static void sleep_until(uint64_t t)
{
    struct timespec ts = {(time_t)(t / 1000000000ull), (long)(t % 1000000000ull)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static void *sim_main(void *arg)
{
    sim_thread *s = arg;
    const uint64_t period = (uint64_t)(1e9 / s->cfg->tick_hz);
    const uint64_t fperiod = (uint64_t)(1e9 / s->cfg->frame_hz);
    uint64_t next_tick = clock_now_ns(), next_frame = next_tick, last_frame = 0;
    /* Stats window (about one second). */
    uint64_t win_start = next_tick, win_ticks = 0, win_steps = 0;
    double win_step_sum = 0, win_step_max = 0, win_sim_start = 0;
    bool have_win_sim = false;
    cmd batch[64];

    while (!atomic_load(&s->stop)) {
        /* 1. Commands, at the tick boundary. */
        int n, total = 0;
        while (total < 1024 && (n = cmd_queue_pop(s->queue, batch, 64)) > 0) {
            for (int i = 0; i < n; i++)
                sim_apply(s, &batch[i]);
            total += n;
        }
        /* 2. One step (or none while paused). */
        uint64_t t0 = clock_now_ns();
        bool stepped = fs_world_advance(s->world);
        uint64_t t1 = clock_now_ns();
        fs_stats fst;
        fs_world_stats(s->world, &fst);
        if (!have_win_sim) {
            win_sim_start = fst.sim_time;
            have_win_sim = true;
        }
        if (stepped) {
            double ms = (double)(t1 - t0) / 1e6;
            s->stats.step_ms_last = ms;
            s->stats.step_count++;
            s->stats.step_ms_sum += ms;
            for (int k = 0; k < SIM_STEP_BUCKETS; k++)
                if (ms <= sim_step_bucket_ms[k])
                    s->stats.step_bucket[k]++;
            sim_expire_heat(s);
            memcpy(s->stats.phase_ms, fst.phase_ms, sizeof s->stats.phase_ms);
            win_step_sum += ms;
            if (ms > win_step_max)
                win_step_max = ms;
            win_steps++;
        }
        win_ticks++;
        if (s->pending_count)
            sim_flush_pending_steps(s, false);
        /* 3. Frame at the frame rate; while nothing changes (paused, no
         * command, no cursor moved) only one a second, as a heartbeat. */
        if (stepped || total)
            s->dirty = true;
        if (t1 >= next_frame && (s->dirty || t1 - last_frame >= 1000000000ull)) {
            publish_frame(s, t1);
            s->dirty = false;
            last_frame = t1;
            next_frame += fperiod;
            if (next_frame < t1)
                next_frame = t1 + fperiod; /* late: skip, never burst */
        }
        /* 4. Stats. */
        if (t1 - win_start >= 1000000000ull) {
            double wall = (double)(t1 - win_start) / 1e9;
            s->stats.step_ms_mean = win_steps ? win_step_sum / (double)win_steps : 0;
            s->stats.step_ms_max = win_step_max;
            s->stats.realtime_ratio = (fst.sim_time - win_sim_start) / wall;
            s->stats.tick_hz_actual = (double)win_ticks / wall;
            win_start = t1;
            win_ticks = win_steps = 0;
            win_step_sum = win_step_max = 0;
            win_sim_start = fst.sim_time;
        } else if (s->stats.tick_hz_actual == 0 && win_steps) {
            s->stats.step_ms_mean = win_step_sum / (double)win_steps; /* first second */
        }
        s->stats.tick = fst.tick;
        s->stats.sim_time = fst.sim_time;
        s->stats.particles = fst.particles;
        s->stats.springs = fst.springs;
        s->stats.paused = fs_world_paused(s->world);
        s->stats.nonfinite_repaired = fst.nonfinite_repaired;
        s->stats.escapes_clamped = fst.escapes_clamped;
        s->stats.emitted = fst.emitted;
        s->stats.drained = fst.drained;
        s->stats.bodies = fst.bodies;
        s->stats.solver_iterations = fst.solver_iterations;
        s->stats.solver_residual = fst.solver_residual;
        if (s->next_save_ns && t1 >= s->next_save_ns) {
            sim_save(s); /* on this thread: one late tick per interval (a few ms per MB) */
            s->next_save_ns = clock_now_ns() + (uint64_t)(s->cfg->save_interval * 1e9);
        }
        hub_set_stats(s->hub, &s->stats);
        hub_wake(s->hub);
        /* 5. Fixed rate without a catch-up spiral: a late tick moves the
         * schedule instead of running extra steps, so simulated time slows. */
        next_tick += period;
        uint64_t now = clock_now_ns();
        if (now > next_tick) {
            s->stats.overruns++;
            next_tick = now;
        } else {
            sleep_until(next_tick);
        }
    }
    /* Stopping (SIGTERM/SIGINT): commands already queued are dropped; the
     * world as it stands is saved. */
    sim_save(s);
    return NULL;
}

int sim_thread_start(sim_thread *s)
{
    if (pthread_create(&s->thread, NULL, sim_main, s))
        return -1;
    s->started = true;
    return 0;
}

void sim_thread_destroy(sim_thread *s)
{
    atomic_store(&s->stop, true);
    if (s->started)
        pthread_join(s->thread, NULL);
    s->started = false;
    if (s->world)
        fs_world_destroy(s->world);
    if (s->pool)
        fs_pool_destroy(s->pool);
    free(s->cursor);
    free(s->save);
    s->save = NULL;
    s->world = NULL;
    s->pool = NULL;
    s->cursor = NULL;
}
