/* world_info.h - what the network side knows of the world (scene, domain,
 * materials and their parameters): a value the sim thread publishes. */
#ifndef SRV_WORLD_INFO_H
#define SRV_WORLD_INFO_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "fluid_sim.h"

/* Threads: built by the sim thread, copied out under the hub mutex by the
 * network thread.  A value. */
typedef struct world_info {
    uint64_t version;
    fs_vec3 box_min, box_max, gravity;
    float h, spacing, dt;
    float frame_step; /* metres: frames' position quantization step (stream_grid) */
    char scene[CMD_NAME_LEN];
    char solver[CMD_NAME_LEN];
    int particles, capacity;
    int scene_particles; /* the particles the scene was loaded with (fs_world_scene_size); 0: none */
    bool paused;
    int material_count;
    char material[FS_MAX_MATERIALS][CMD_NAME_LEN];
    float param[FS_MAX_MATERIALS][FS_P_COUNT];
} world_info;

#endif
