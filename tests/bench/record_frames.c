/* record_frames.c - records what the frame codec is measured on: runs a
 * scene headless at the server's rate (dt = 1/60 s, one step per tick) and
 * dumps every `every`-th tick (2: 30 frames/s) from tick `skip` on, in id
 * order (the order frames use).
 *
 * Usage: record_frames OUT SCENE PARTICLES SECONDS [SKIP_SECONDS] [THREADS]
 *
 * File (little-endian): "FSRECv1\0", u32 frames, f32 box_min[3], box_max[3],
 * spacing; then per frame: u64 tick, u32 n, u32 id[n], f32 x[n], y[n], z[n],
 * u8 mat[n], f32 temp[n].  Recordings live in build/ (not committed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fluid_sim.h"

static void put(FILE *f, const void *p, size_t n) {
    if (n && fwrite(p, 1, n, f) != n) {
        perror("write");
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s OUT SCENE PARTICLES SECONDS [SKIP_SECONDS] [THREADS]\n", argv[0]);
        return 2;
    }
    const char *out = argv[1], *scene = argv[2];
    int n = atoi(argv[3]);
    double seconds = atof(argv[4]), skip = argc > 5 ? atof(argv[5]) : 0;
    int threads = argc > 6 ? atoi(argv[6]) : 2, every = 2;
    fs_pool *pool = fs_pool_create(threads);
    fs_world_def d = fs_default_world_def();
    d.capacity = n * 2 > 65536 ? n * 2 : 65536;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    if (!w || fs_world_load_scene(w, scene, n, &err) != FS_OK) {
        fprintf(stderr, "cannot load %s: %s\n", scene, w ? err.msg : "out of memory");
        return 1;
    }
    fs_domain dom = fs_world_domain(w);
    FILE *f = fopen(out, "wb");
    if (!f) {
        perror(out);
        return 1;
    }
    int skip_ticks = (int)(skip * 60 + 0.5), ticks = (int)(seconds * 60 + 0.5);
    uint32_t frames = (uint32_t)((ticks + every - 1) / every);
    put(f, "FSRECv1", 8);
    put(f, &frames, 4);
    float hdr[7] = {dom.box_min.x, dom.box_min.y, dom.box_min.z, dom.box_max.x,
                    dom.box_max.y, dom.box_max.z, dom.spacing};
    put(f, hdr, sizeof hdr);
    for (int t = 0; t < skip_ticks; t++) fs_world_step(w);
    size_t cap = 0;
    uint32_t *id = NULL;
    float *buf = NULL;
    uint8_t *mat = NULL;
    for (int t = 0; t < ticks; t++) {
        if (t % every == 0) {
            fs_particles_view v;
            fs_world_view(w, &v);
            size_t m = (size_t)v.count;
            if (m > cap) {
                cap = m;
                id = realloc(id, cap * 4);
                buf = realloc(buf, cap * 4 * 4);
                mat = realloc(mat, cap);
                if (!id || !buf || !mat) return 1;
            }
            for (size_t k = 0; k < m; k++) {
                int i = v.by_id[k];
                id[k] = v.id[i];
                buf[k] = v.x[i], buf[m + k] = v.y[i], buf[2 * m + k] = v.z[i], buf[3 * m + k] = v.temperature[i];
                mat[k] = v.material[i];
            }
            uint64_t tick = (uint64_t)(skip_ticks + t);
            uint32_t n32 = (uint32_t)m;
            put(f, &tick, 8);
            put(f, &n32, 4);
            put(f, id, m * 4);
            put(f, buf, m * 12);
            put(f, mat, m);
            put(f, buf + 3 * m, m * 4);
        }
        fs_world_step(w);
    }
    fclose(f);
    printf("%s: %s %d particles, box %.3f x %.3f x %.3f m, spacing %.3f m, %u frames\n", out, scene,
           fs_world_particle_count(w), (double)(dom.box_max.x - dom.box_min.x), (double)(dom.box_max.y - dom.box_min.y),
           (double)(dom.box_max.z - dom.box_min.z), (double)dom.spacing, frames);
    free(id), free(buf), free(mat);
    fs_world_destroy(w);
    fs_pool_destroy(pool);
    return 0;
}
