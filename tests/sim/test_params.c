/* test_params.c - each parameter names the solvers whose step reads it
 * (fs_param_info.solvers, fs_param_used_by): the mask is proven against the
 * steps themselves by the world's hash. */
#include <stdint.h>

#include "fluid_sim.h"
#include "sim_tests.h"
#include "testlib.h"

#if defined(__SANITIZE_ADDRESS__)
#define PARAM_STEPS 4
#else
#define PARAM_STEPS 8
#endif

/* A world of `solver` with `scene` loaded; when p >= 0, parameter p of every
 * material then moved to the other end of its range (a flag toggled).
 * Returns the hash after PARAM_STEPS steps. */
static uint64_t hash_after(int solver, const char *scene, int particles, int p) {
    fs_world_def d = fs_default_world_def();
    d.capacity = 2 * particles + 2000;
    fs_world *w = fs_world_create(&d);
    fs_error err;
    CHECK(w && fs_world_set_solver(w, (fs_solver)solver, &err) == FS_OK, "set_solver %d", solver);
    CHECK(fs_world_load_scene(w, scene, particles, &err) == FS_OK, "load %s: %s", scene, err.msg);
    if (p >= 0) {
        const fs_param_info *in = fs_param_get_info((fs_param)p);
        for (int m = 0; m < fs_world_material_count(w); m++) {
            float v = fs_world_get_param(w, m, (fs_param)p);
            float to = v == in->max ? in->min : in->max;
            CHECK(fs_world_set_param(w, m, (fs_param)p, to, &err) == FS_OK, "set %s: %s", in->name, err.msg);
        }
    }
    for (int t = 0; t < PARAM_STEPS; t++) fs_world_step(w);
    uint64_t h = fs_world_hash(w);
    fs_world_destroy(w);
    return h;
}

/* For each solver, on a scene made for it: every parameter the mask says the
 * solver does not read leaves its steps bit-identical at the other end of
 * its range; the one named here, which it reads (its own where there is
 * one), changes them.  (The world itself, not a solver, reads phase_change
 * and solid_point when it adds a particle or sets the temperature: the
 * particle's frozen flag, which the Clavet solver's freezing reads.  The
 * scenes here add none while stepping.) */
void test_params_per_solver(void) {
    static const struct {
        int solver;
        const char *scene;
        int particles;
        fs_param reads;
    } cases[] = {
        {FS_SOLVER_CLAVET, "gallery", 1500, FS_P_STIFFNESS},
        {FS_SOLVER_UNIFIED, "chocolate_bunny", 1500, FS_P_KIN_VISCOSITY},
        {FS_SOLVER_MPS, "mps_dam_break", 1000, FS_P_SURFACE_TENSION},
    };
    for (int k = 0; k < (int)(sizeof cases / sizeof cases[0]); k++) {
        const int s = cases[k].solver;
        const uint64_t base = hash_after(s, cases[k].scene, cases[k].particles, -1);
        int unread = 0, same = 0, read = 0;
        for (int p = 0; p < FS_P_COUNT; p++) {
            if (fs_param_used_by((fs_param)p, s)) {
                read++;
                continue;
            }
            unread++;
            const uint64_t h = hash_after(s, cases[k].scene, cases[k].particles, p);
            same += h == base;
            CHECK(h == base, "solver %s changed with %s, which its mask says it does not read",
                  fs_solver_name((fs_solver)s), fs_param_get_info((fs_param)p)->name);
        }
        CHECK(fs_param_used_by(cases[k].reads, s), "the mask says %s does not read %s", fs_solver_name((fs_solver)s),
              fs_param_get_info(cases[k].reads)->name);
        const uint64_t h = hash_after(s, cases[k].scene, cases[k].particles, (int)cases[k].reads);
        REPORT("%-7s on %-15s: reads %2d parameters, %2d/%2d others leave %d steps bit-identical (%016llx); "
               "%s moved: %016llx",
               fs_solver_name((fs_solver)s), cases[k].scene, read, same, unread, PARAM_STEPS, (unsigned long long)base,
               fs_param_get_info(cases[k].reads)->name, (unsigned long long)h);
        CHECK(h != base, "solver %s did not change with %s, which it reads", fs_solver_name((fs_solver)s),
              fs_param_get_info(cases[k].reads)->name);
    }
}
