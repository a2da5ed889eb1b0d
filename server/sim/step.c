/* step.c - stepping the world: pause, queued single steps, and one
 * fs_world_step of def.substeps sub-steps of the current solver (w->ops),
 * with the phases' times summed over them; and the start every solver's
 * sub-step shares. */
#include "grid.h"
#include "solver_table.h"
#include "sources.h"
#include "step.h"
#include "tasks.h"

void fs_world_set_paused(fs_world *w, bool paused) {
    w->paused = paused;
    if (!paused) w->pending_steps = 0;
}
bool fs_world_paused(const fs_world *w) {
    return w->paused;
}
void fs_world_request_steps(fs_world *w, int n) {
    if (n > 0) w->pending_steps = (w->pending_steps + n > 100000) ? 100000 : w->pending_steps + n;
}

bool fs_world_advance(fs_world *w) {
    if (w->paused) {
        if (w->pending_steps <= 0) return false;
        w->pending_steps--;
    }
    fs_world_step(w);
    return true;
}

void fs_world_step(fs_world *w) {
    double t0 = fs__now_ms();
    double ph[FS_PHASE_COUNT] = {0};
    for (int k = 0; k < w->def.substeps; k++) {
        w->ops->step(w);
        for (int q = 0; q < FS_PHASE_COUNT; q++) ph[q] += w->st.phase_ms[q];
    }
    for (int q = 0; q < FS_PHASE_COUNT; q++) w->st.phase_ms[q] = ph[q];
    w->st.tick++;
    fs_world_probes_measure(w);
    w->st.step_ms = fs__now_ms() - t0;
}

void fs__grid_build_timed(fs_world *w) {
    double t = fs__now_ms();
    fs__grid_build(w);
    w->st.phase_ms[FS_PHASE_GRID] += fs__now_ms() - t;
}

void fs__step_begin(fs_world *w, bool grid) {
    for (int k = 0; k < FS_PHASE_COUNT; k++) w->st.phase_ms[k] = 0;
    fs__emit_and_drain(w);
    if (grid) fs__grid_build_timed(w);
}
