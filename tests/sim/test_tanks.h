/* test_tanks.h - the world and the water tank the body tests float things
 * in (test_bodies.c, test_body_mesh.c), and the tank's water level away
 * from what floats in it. */
#ifndef TEST_TANKS_H
#define TEST_TANKS_H

#include <math.h>
#include <string.h>

#include "fluid_sim.h"

/* A world of the given capacity and sub-steps on a pool of two workers
 * (*pool: the caller destroys it after the world). */
static inline fs_world *world(int capacity, int substeps, fs_pool **pool) {
    fs_world_def d = fs_default_world_def();
    d.capacity = capacity;
    d.substeps = substeps;
    *pool = fs_pool_create(2);
    d.worker_count = 2;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = *pool;
    return fs_world_create(&d);
}

/* A square tank L wide and 2 m tall, water depth deep, particles 8 cm apart. */
static inline fs_world *water_tank(int capacity, int substeps, float L, float depth, fs_pool **pool) {
    fs_world *w = world(capacity, substeps, pool);
    const float s = 0.08f;
    fs_domain dom = {{0, 0, 0}, {L, 2.0f, L}, {0, -9.81f, 0}, 2.1f * s, s, 0.5f * s};
    fs_world_reset(w, &dom, NULL);
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, depth, L}, FS_MAT_WATER, 0.1f);
    return w;
}

/* The water level of a tank L = 1.6 m wide: the mean height of the top
 * particle centres in each 0.2 m column farther than 0.5 m (along x or z)
 * from its middle, where a floating body is not (and where the relaxation's
 * pressure vanishes: the top layer carries no weight). */
static inline double water_level(const fs_world *w, float L) {
    fs_particles_view v;
    fs_world_view(w, &v);
    float top[8][8];
    memset(top, 0, sizeof top);
    for (int i = 0; i < v.count; i++) {
        int cx = (int)(v.x[i] / 0.2f), cz = (int)(v.z[i] / 0.2f);
        cx = cx > 7 ? 7 : cx, cz = cz > 7 ? 7 : cz;
        top[cx][cz] = fmaxf(top[cx][cz], v.y[i]);
    }
    double level = 0;
    int nl = 0;
    for (int a = 0; a < 8; a++)
        for (int c = 0; c < 8; c++) {
            float x = (a + 0.5f) * 0.2f, z = (c + 0.5f) * 0.2f;
            if (fabsf(x - L / 2) < 0.5f && fabsf(z - L / 2) < 0.5f) continue;
            level += top[a][c], nl++;
        }
    return level / nl;
}

#endif
