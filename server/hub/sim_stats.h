/* sim_stats.h - the sim thread's statistics (step times, rates, command
 * counts, persistence): a value it publishes for /api/stats and /metrics. */
#ifndef SRV_SIM_STATS_H
#define SRV_SIM_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"
#include "fluid_sim.h"

/* Threads: built by the sim thread, copied by the network thread.  A value. */
typedef struct sim_stats {
    uint64_t tick;
    double sim_time;
    int particles, springs;
    int scene_particles; /* the particles the scene was loaded with (fs_world_scene_size); 0: none */
    bool paused;
    double step_ms_last, step_ms_mean, step_ms_max; /* mean/max over the last second */
    int step_threads;        /* the threads a step runs on: the pool's, or 1 while the world is small (sim_thread.c) */
    double step_cpu_ms_mean; /* the sim thread's CPU time a step over the last second: its work, not its waits */
    double phase_ms[FS_PHASE_COUNT];
    double realtime_ratio; /* simulated s per wall s over the last second */
    double tick_hz_actual; /* ticks (stepped or not) per wall second */
    uint64_t overruns;     /* ticks that ended after the next was due (late, or catching up) */
    double encode_ms_last, encode_ms_mean;
    uint64_t frames_published;
    size_t frame_bytes;             /* the last delta against the frame before, message bytes */
    double frame_bits_per_particle; /* of that delta */
    size_t key_bytes;               /* the last keyframe, message bytes */
    uint64_t keyframes;
    uint64_t frames_skipped; /* frames not coded: the encoder thread was still coding the one before */
    double handoff_ms;       /* the sim thread's cost of a frame: copying it for the encoder thread */
    uint64_t commands_applied, commands_failed;
    bool asleep;                 /* an idle room's sim thread sleeps: no step, no frame (sim_thread.c) */
    uint64_t commands_forbidden; /* refused: the connection's role does not allow them (apply.c) */
    uint64_t commands_duplicate; /* retried commands answered from memory, not applied again */
    uint64_t rebuilds_refused;   /* scene loads, solver switches, restores past --rebuilds-per-min (apply.c) */
    double cmd_to_frame_ms_last, cmd_to_frame_ms_mean; /* command arrival -> frame published */
    uint64_t nonfinite_repaired, escapes_clamped, emitted, drained;
    uint64_t lists_full; /* MPS: particle sub-steps whose neighbour list was full */
    uint64_t replies_dropped;
    /* the solver's implicit solve (or internal steps), last step; which
     * solver runs is in world_info */
    int solver_iterations;
    double solver_residual;
    int bodies;
    /* step time histogram (Prometheus): counts of steps at or under each bound */
#define SIM_STEP_BUCKETS 12
    uint64_t step_bucket[SIM_STEP_BUCKETS]; /* cumulative, le = sim_step_bucket_ms[k] */
    uint64_t step_count;
    double step_ms_sum;
    /* commands by kind and result */
    uint64_t cmd_ok[CMD_KIND_COUNT], cmd_failed[CMD_KIND_COUNT];
    /* persistence */
    uint64_t saves, save_failures;
    double save_ms_last;
    size_t save_bytes_last;
    /* the world's probes (fluid_sim.h, "Probes"): each one's definition,
     * latest value (m or Pa) and the tick it was measured at */
    int probe_count;
    fs_probe_def probe[FS_MAX_PROBES];
    float probe_value[FS_MAX_PROBES];
    uint64_t probe_tick[FS_MAX_PROBES];
} sim_stats;
extern const double sim_step_bucket_ms[SIM_STEP_BUCKETS];

#endif
