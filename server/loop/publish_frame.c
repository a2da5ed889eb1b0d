/* publish_frame.c - a frame of the world handed to the encoder thread (see
 * publish_frame.h): the frame's bodies, probes and head, the codec's input
 * and grid, the hand-over, and the statistics it leaves. */
#include "publish_frame.h"

#include "apply_bodies.h"
#include "clock.h"
#include "encoder.h"
#include "log.h"
#include "stream.h"

#include <string.h>

/* The world's bodies as the frame message carries them, into s->body;
 * returns how many. */
static int frame_bodies(sim_thread *s) {
    int nb = 0, total = fs_world_body_count(s->world);
    for (int i = 0; i < total && nb < FS_MAX_BODIES; i++) {
        fs_body_state b;
        if (!fs_world_body_at(s->world, i, &b)) continue;
        wire_body *w = &s->body[nb++];
        w->id = b.id;
        w->shape = b.shape;
        w->is_static = b.is_static;
        w->grabbed_by = b.grabbed ? sim_grab_owner(s, b.id) : 0;
        w->size[0] = b.size.x, w->size[1] = b.size.y, w->size[2] = b.size.z;
        w->pos[0] = b.pos.x, w->pos[1] = b.pos.y, w->pos[2] = b.pos.z;
        w->rot[0] = b.rot.w, w->rot[1] = b.rot.x, w->rot[2] = b.rot.y, w->rot[3] = b.rot.z;
    }
    return nb;
}

/* The world's probes and their latest values (measured after the step this
 * frame shows) as the frame message carries them, into s->probe; returns
 * how many. */
static int frame_probes(sim_thread *s) {
    int np = fs_world_probe_count(s->world);
    np = np < FS_MAX_PROBES ? np : FS_MAX_PROBES;
    for (int k = 0; k < np; k++) {
        fs_probe_def d;
        fs_world_probe_get(s->world, k, &d, &s->probe[k].value, NULL);
        memcpy(s->probe[k].name, d.name, sizeof s->probe[k].name);
    }
    return np;
}

/* What the encoder reported of the frame before (it codes this one now),
 * and the hand-over's own cost (t0..t1), into the statistics. */
static void count_frame(sim_thread *s, int count, uint64_t t0, uint64_t t1) {
    stream_stats ss;
    encoder_stats(s->encoder, &ss, &s->stats.frames_skipped);
    double ms = ss.encode_ms;
    s->stats.encode_ms_last = ms;
    s->stats.encode_ms_mean = s->stats.frames_published ? 0.9 * s->stats.encode_ms_mean + 0.1 * ms : ms;
    s->stats.handoff_ms = (double)(t1 - t0) / 1e6;
    if (ss.delta_bytes) s->stats.frame_bytes = ss.delta_bytes;
    if (ss.delta_bytes && count > 0) s->stats.frame_bits_per_particle = 8.0 * (double)ss.delta_bytes / count;
    if (ss.key_bytes) s->stats.key_bytes = ss.key_bytes;
    s->stats.keyframes = ss.keyframes;
    s->stats.frames_published++;
    /* command to frame: from the oldest command applied since the last frame */
    if (s->earliest_unshown_ns) {
        double lat = (double)(t1 - s->earliest_unshown_ns) / 1e6;
        s->stats.cmd_to_frame_ms_last = lat;
        s->stats.cmd_to_frame_ms_mean =
            s->stats.cmd_to_frame_ms_mean > 0 ? 0.8 * s->stats.cmd_to_frame_ms_mean + 0.2 * lat : lat;
        s->earliest_unshown_ns = 0;
    }
}

void sim_publish_frame(sim_thread *s) {
    fs_particles_view v;
    fs_world_view(s->world, &v);
    fs_stats fst;
    fs_world_stats(s->world, &fst);
    fs_domain d = fs_world_domain(s->world);
    wire_frame_head head = {
        .tick = fst.tick,
        .sim_time = fst.sim_time,
        .paused = fs_world_paused(s->world),
        .box_min = d.box_min,
        .box_max = d.box_max,
        .count = v.count,
        .cursors = s->cursor,
        .cursor_count = s->cursor_count,
        .bodies = s->body,
        .body_count = frame_bodies(s),
        .probes = s->probe,
        .probe_count = frame_probes(s),
    };
    fc_input in = {.count = v.count,
                   .id = v.id,
                   .x = v.x,
                   .y = v.y,
                   .z = v.z,
                   .material = v.material,
                   .temp = v.temperature,
                   .order = v.by_id};
    float lo[3] = {d.box_min.x, d.box_min.y, d.box_min.z}, hi[3] = {d.box_max.x, d.box_max.y, d.box_max.z};
    fc_grid grid;
    char why[160];
    if (stream_grid(&grid, lo, hi, d.spacing, s->cfg->frame_bits, why, sizeof why)) {
        log_once("frame-grid", "sim: no quantization grid for frames: %s (logged once)", why);
        return;
    }
    uint64_t t0 = clock_now_ns();
    int rc = encoder_submit(s->encoder, &head, &in, fs_world_capacity(s->world), s->epoch, &grid, why, sizeof why);
    if (rc < 0) log_once("frame-submit", "sim: cannot hand a frame to the encoder: %s (logged once)", why);
    if (rc <= 0) return;
    count_frame(s, v.count, t0, clock_now_ns());
}
