/* snapshots.h - copies of particles and bodies the sim thread hands to the
 * network thread with a reply (GET /api/particles, GET /api/bodies,
 * GET /api/obstacles). */
#ifndef SRV_SNAPSHOTS_H
#define SRV_SNAPSHOTS_H

#include <stdint.h>

#include "fluid_sim.h"

/* Threads: allocated and filled by the sim thread, then owned (read-only) by
 * the network thread, which frees it. */
typedef struct particles_snap {
    uint64_t tick;
    int total, offset, count;
    uint32_t *id;
    float *pos; /* 3 per particle */
    float *vel; /* 3 per particle */
    uint8_t *material;
    float *temp; /* deg C */
} particles_snap;

void particles_snap_free(particles_snap *s);

/* Threads: allocated and filled by the sim thread, then owned (read-only) by
 * the network thread, which frees it. */
typedef struct bodies_snap {
    uint64_t tick;
    int count;
    fs_body_state body[FS_MAX_BODIES];
    uint32_t grabbed_by[FS_MAX_BODIES];
} bodies_snap;

/* The obstacles (GET /api/obstacles).  Threads: as bodies_snap. */
typedef struct obstacles_snap {
    uint64_t tick;
    int count;
    fs_obstacle_state obstacle[FS_MAX_OBSTACLES];
} obstacles_snap;

#endif
