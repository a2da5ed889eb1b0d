/* bench_meshes.c - what a large mesh obstacle costs: the Clavet dam break of
 * 20k particles (the dam_break scene) with a closed obstacle of 100,000
 * triangles (a UV sphere of 400 x 126 segments, made here, sunk into the
 * floor across the surge's path) against the same scene without it, in
 * alternated rounds of one run (ABBA order, so a drift of the machine's
 * load falls on both), each a fresh world: ms per step (the core's own
 * step time, and the wall clock) and their ratio, the bar being
 * <= 1.10.  Also the cost of adding the obstacle (its distance field built
 * once), for the record.  The load average is printed before and after:
 * the figures are only as good as the machine was quiet.
 * Usage: bench_meshes; BENCH_ROUNDS (default 4, each two of each), BENCH_WARM
 * (60 steps), BENCH_STEPS (120), BENCH_THREADS (1), BENCH_N (20000). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fluid_sim.h"

#define PI 3.14159265358979323846

/* A UV sphere of unit radius: nu segments around y, nv rings pole to pole,
 * 2 nu (nv - 1) triangles, outward. */
typedef struct sphere {
    fs_vec3 *v;
    uint32_t *t;
    int nv, nt;
} sphere;

static sphere make_sphere(int nu, int nv) {
    sphere s = {malloc(sizeof(fs_vec3) * (size_t)(nu * (nv - 1) + 2)), malloc(sizeof(uint32_t) * 6 * (size_t)nu * nv),
                0, 0};
    if (!s.v || !s.t) exit(1);
    s.v[s.nv++] = (fs_vec3){0, 1, 0};
    for (int i = 1; i < nv; i++)
        for (int j = 0; j < nu; j++) {
            double th = PI * i / nv, ph = 2 * PI * j / nu;
            s.v[s.nv++] = (fs_vec3){(float)(sin(th) * cos(ph)), (float)cos(th), (float)(sin(th) * sin(ph))};
        }
    s.v[s.nv++] = (fs_vec3){0, -1, 0};
    const uint32_t south = (uint32_t)s.nv - 1;
#define RING(i, j) ((uint32_t)(1 + ((i)-1) * nu + ((j) % nu)))
#define TRI(a, b, c) (s.t[3 * s.nt] = (a), s.t[3 * s.nt + 1] = (b), s.t[3 * s.nt + 2] = (c), s.nt++)
    for (int j = 0; j < nu; j++) {
        TRI(0, RING(1, j + 1), RING(1, j));
        for (int i = 1; i < nv - 1; i++) {
            TRI(RING(i, j), RING(i, j + 1), RING(i + 1, j + 1));
            TRI(RING(i, j), RING(i + 1, j + 1), RING(i + 1, j));
        }
        TRI(RING(nv - 1, j), RING(nv - 1, j + 1), south);
    }
#undef RING
#undef TRI
    return s;
}

typedef struct result {
    double step_ms, wall_ms, cpu_ms, add_ms;
    int particles, near;
} result;

/* One world: the dam break, with the obstacle or not, warmed, then timed. */
static result run(const sphere *sp, bool obstacle, fs_pool *pool, int threads, int n, int warm, int steps) {
    fs_world_def d = fs_default_world_def();
    d.capacity = n + n / 4;
    d.worker_count = threads;
    d.parallel_for = fs_pool_parallel_for;
    d.task_user = pool;
    fs_world *w = fs_world_create(&d);
    fs_error err = {{0}};
    if (!w || fs_world_load_scene(w, "dam_break", n, &err) != FS_OK) {
        printf("cannot load: %s\n", w ? err.msg : "out of memory");
        exit(1);
    }
    result r = {0};
    const fs_domain dom = fs_world_domain(w);
    const float a = dom.box_max.z; /* the column's width */
    if (obstacle) {
        const fs_mesh m = {sp->v, sp->nv, sp->t, sp->nt};
        const double t0 = now_ms();
        if (fs_world_add_obstacle(w, &m, (fs_vec3){2.2f * a, 0.1f * a, 0.5f * a}, (fs_quat){1, 0, 0, 0}, 0.4f * a,
                                  &err) < 0) {
            printf("cannot add the obstacle: %s\n", err.msg);
            exit(1);
        }
        r.add_ms = now_ms() - t0;
    }
    for (int t = 0; t < warm; t++) fs_world_step(w);
    const double t0 = now_ms(), c0 = cpu_ms();
    for (int t = 0; t < steps; t++) {
        fs_world_step(w);
        fs_stats st;
        fs_world_stats(w, &st);
        r.step_ms += st.step_ms;
    }
    r.wall_ms = (now_ms() - t0) / steps;
    r.cpu_ms = (cpu_ms() - c0) / steps;
    r.step_ms /= steps;
    r.particles = fs_world_particle_count(w);
    if (obstacle) {
        fs_particles_view v;
        fs_world_view(w, &v);
        for (int i = 0; i < v.count; i++)
            r.near += fs_world_obstacle_distance(w, (fs_vec3){v.x[i], v.y[i], v.z[i]}) < 2 * dom.spacing;
    }
    fs_world_destroy(w);
    return r;
}

int main(void) {
    const int rounds = env_int("BENCH_ROUNDS", 4), warm = env_int("BENCH_WARM", 60),
              steps = env_int("BENCH_STEPS", 120), threads = env_int("BENCH_THREADS", 1), n = env_int("BENCH_N", 20000);
    sphere sp = make_sphere(400, 126);
    fs_mesh m = {sp.v, sp.nv, sp.t, sp.nt};
    fs_error err = {{0}};
    if (fs_mesh_check_closed(&m, &err) != FS_OK) {
        printf("the sphere is not closed: %s\n", err.msg);
        return 1;
    }
    printf("Mesh obstacle cost: the Clavet dam break of %d particles (dam_break), with and without a closed sphere of "
           "%d triangles (radius 0.4 a, sunk 0.3 a into the floor, 2.2 a from the column's wall); %d threads; "
           "%d rounds of ABBA (fresh worlds), each %d warm-up steps then %d timed\n",
           n, sp.nt, threads, rounds, warm, steps);
    load_average("before");
    fs_pool *pool = fs_pool_create(threads);
    double sum[2] = {0, 0}, cpu[2] = {0, 0}, add = 0, ratio[64] = {0};
    int near = 0, nratio = 0;
    printf("round |  without: ms/step (CPU) |  with: ms/step (CPU) | ratio (CPU) | adding it, ms\n");
    for (int k = 0; k < rounds; k++) {
        result r[2][2];
        int nr[2] = {0, 0};
        for (int q = 0; q < 4; q++) { /* A B B A */
            const int with = q == 1 || q == 2;
            r[with][nr[with]++] = run(&sp, with, pool, threads, n, warm, steps);
        }
        double s[2] = {0, 0}, c[2] = {0, 0};
        for (int with = 0; with < 2; with++)
            for (int i = 0; i < 2; i++) s[with] += r[with][i].step_ms / 2, c[with] += r[with][i].cpu_ms / 2;
        for (int i = 0; i < 2; i++) add += r[1][i].add_ms, near = r[1][i].near > near ? r[1][i].near : near;
        for (int with = 0; with < 2; with++) sum[with] += s[with], cpu[with] += c[with];
        if (nratio < 64) ratio[nratio++] = c[1] / c[0];
        printf("%5d |  %7.2f (%7.2f)       | %7.2f (%7.2f)     | %5.3f (%5.3f) | %.0f, %.0f\n", k + 1, s[0], c[0], s[1],
               c[1], s[1] / s[0], c[1] / c[0], r[1][0].add_ms, r[1][1].add_ms);
        fflush(stdout);
    }
    fs_pool_destroy(pool);
    for (int i = 1; i < nratio; i++) /* sorted, for the median */
        for (int j = i; j > 0 && ratio[j] < ratio[j - 1]; j--) {
            double t = ratio[j];
            ratio[j] = ratio[j - 1], ratio[j - 1] = t;
        }
    const double med = nratio % 2 ? ratio[nratio / 2] : 0.5 * (ratio[nratio / 2 - 1] + ratio[nratio / 2]);
    printf("mean: without %.2f ms/step (CPU %.2f), with %.2f (CPU %.2f): ratio %.3f (CPU %.3f, median of the rounds' "
           "CPU ratios %.3f); bar <= 1.10 (CPU): %s\n",
           sum[0] / rounds, cpu[0] / rounds, sum[1] / rounds, cpu[1] / rounds, sum[1] / sum[0], cpu[1] / cpu[0], med,
           cpu[1] / cpu[0] <= 1.10 ? "met" : "NOT met");
    printf("adding the obstacle (its distance field): %.0f ms on average; up to %d particles within 2 spacings of it "
           "after the timed steps\n",
           add / (2 * rounds), near);
    load_average("after");
    free(sp.v), free(sp.t);
    return 0;
}
