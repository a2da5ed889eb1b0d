/* gen_snapshot_corpus.c - writes the seed corpus of the snapshot harness:
 * real snapshot documents (as GET /api/snapshot returns them) of small
 * scenes on each solver, with springs, bodies, emitters, drains, heaters and
 * MPS obstacles, made for the harness's world (fuzz_snapshot.h), plus one for
 * another capacity (the save file path sizes its world from the document).
 * Each holds 30-60 particles (fuzz_snapshot.h says why).
 *
 * Build and run (from the repository root):
 *   clang -std=c11 -D_POSIX_C_SOURCE=200809L -O1 $(pkg-config --cflags msgpack libcjson) -Iserver/base -Iserver/hub
 * -Iserver/wire -Iserver/sim \
 *     -Itests/fuzz tests/fuzz/gen_snapshot_corpus.c server/wire/wire.c server/wire/validate.c server/base/msgbuf.c \
 *     server/hub/*.c server/base/log.c server/sim/[a-z]*.c $(pkg-config --libs msgpack libcjson) -lm -lpthread \
 *     -o build/fuzz/gen_snapshot_corpus
 *   build/fuzz/gen_snapshot_corpus tests/fuzz/corpus/fuzz_snapshot
 * The output is the same on every run of one build but for the step-time
 * statistics the snapshot carries (wall-clock milliseconds).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_snapshot.h"
#include "wire.h"

static bool fill(void *dst, size_t n, void *ctx) {
    return fs_world_snapshot_write(ctx, dst, n) == n;
}

static int write_doc(const char *dir, const char *name, fs_world *w) {
    fs_stats st;
    fs_world_stats(w, &st);
    wire_snapshot_meta m = {
        .tick = st.tick,
        .sim_time = st.sim_time,
        .scene = fs_world_scene_name(w),
        .solver = fs_solver_name(fs_world_solver(w)),
        .particles = st.particles,
        .springs = st.springs,
        .bodies = st.bodies,
        .paused = fs_world_paused(w),
    };
    msg_buf *doc = wire_encode_snapshot(&m, fs_world_snapshot_size(w), fill, w);
    char path[512];
    snprintf(path, sizeof path, "%s/%s.msgpack", dir, name);
    FILE *f = fopen(path, "wb");
    if (!doc || !f || fwrite(doc->data, 1, doc->len, f) != doc->len) {
        fprintf(stderr, "cannot write %s\n", path);
        return 1;
    }
    fclose(f);
    printf("%-28s %7zu bytes, %3d particles, %4d springs, %d bodies, solver %s\n", name, doc->len, st.particles,
           st.springs, st.bodies, fs_solver_name(fs_world_solver(w)));
    msg_buf_unref(doc);
    return 0;
}

typedef struct seed {
    const char *name, *scene;
    int particles, steps; /* particles kept (the scene loads 100, is stepped, then thinned) */
    fs_solver solver;
    bool extras; /* an emitter, a drain, a heater, a body, paused with steps queued */
} seed;

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    static const seed seeds[] = {
        {"clavet_dam_break", "dam_break", 40, 5, FS_SOLVER_CLAVET, false},
        {"clavet_gallery_springs", "gallery", 60, 10, FS_SOLVER_CLAVET, false},
        {"clavet_floating_bodies", "floating", 50, 10, FS_SOLVER_CLAVET, false},
        {"clavet_fountain_emitter", "fountain", 30, 8, FS_SOLVER_CLAVET, true},
        {"clavet_drop_extras", "drop", 30, 4, FS_SOLVER_CLAVET, true},
        {"unified_merge_heater", "merge", 40, 4, FS_SOLVER_UNIFIED, false},
        {"unified_bunny", "chocolate_bunny", 40, 3, FS_SOLVER_UNIFIED, true},
        {"unified_shell", "shell", 40, 3, FS_SOLVER_UNIFIED, false},
        {"mps_dam_break", "mps_dam_break", 40, 2, FS_SOLVER_MPS, false},
        {"mps_obstacle_emitter", "mps_obstacle", 30, 2, FS_SOLVER_MPS, true},
        {"mps_oil_water", "oil_water", 40, 1, FS_SOLVER_MPS, false},
    };
    int bad = 0;
    for (size_t k = 0; k < sizeof seeds / sizeof seeds[0]; k++) {
        const seed *s = &seeds[k];
        fs_world_def d = fuzz_snapshot_def(FUZZ_SNAP_CAPACITY);
        fs_world *w = fs_world_create(&d);
        fs_error e = {{0}};
        if (!w || fs_world_set_solver(w, s->solver, &e) != FS_OK ||
            fs_world_load_scene(w, s->scene, FUZZ_SNAP_MIN_SCENE, &e) != FS_OK) {
            fprintf(stderr, "%s: %s\n", s->name, e.msg);
            return 1;
        }
        for (int i = 0; i < s->steps; i++) fs_world_step(w);
        fuzz_snapshot_thin(w, s->particles);
        fs_world_step(w);
        if (s->extras) {
            fs_domain dom = fs_world_domain(w);
            fs_vec3 mid = {0.5f * (dom.box_min.x + dom.box_max.x), 0.7f * dom.box_max.y,
                           0.5f * (dom.box_min.z + dom.box_max.z)};
            fs_emitter_def em = {mid, {0, -1, 0}, 2.0f, 0.1f, 120.0f, 0, 0, true};
            fs_drain_def dr = {{dom.box_min.x, dom.box_min.y, dom.box_min.z}, 0.2f, true};
            fs_heater_def ht = {FS_HEAT_SPHERE, mid, 0.5f, 200.0f, 0.0f, true};
            fs_body_def bd = fs_default_body_def();
            bd.shape = FS_SHAPE_CAPSULE;
            bd.size = (fs_vec3){0.05f, 0.08f, 0.05f};
            bd.pos = mid;
            bd.density = 500;
            if (fs_world_set_emitter(w, -1, &em, &e) < 0 || fs_world_set_drain(w, -1, &dr, &e) < 0 ||
                fs_world_set_heater(w, -1, &ht, &e) < 0 || fs_world_create_body(w, &bd, &e) < 0) {
                fprintf(stderr, "%s: %s\n", s->name, e.msg);
                return 1;
            }
            fs_world_step(w);
            fs_world_step(w);
            fs_world_set_paused(w, true);
            fs_world_request_steps(w, 3);
        }
        bad |= write_doc(argv[1], s->name, w);
        fs_world_destroy(w);
    }
    /* the save file path: a document for another capacity */
    fs_world_def d = fuzz_snapshot_def(200);
    fs_world *w = fs_world_create(&d);
    if (!w || fs_world_load_scene(w, "drop", 150, NULL) != FS_OK) return 1;
    fs_world_step(w);
    fuzz_snapshot_thin(w, 50);
    fs_world_step(w);
    bad |= write_doc(argv[1], "file_capacity_200", w);
    fs_world_destroy(w);
    return bad;
}
