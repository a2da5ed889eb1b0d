/* solvers.c - the table of solvers and switching between them.
 * Each solver file defines its fs_solver_ops; a solver missing from this
 * table is not built in (its name is refused). */
#include <stdio.h>
#include <string.h>

#include "sim_internal.h"

static const fs_solver_ops *const SOLVERS[FS_SOLVER_COUNT] = {
    [FS_SOLVER_CLAVET] = &fs__clavet_ops,
    [FS_SOLVER_UNIFIED] = &fs__unified_ops,
    [FS_SOLVER_MPS] = &fs__mps_ops,
};

const fs_solver_ops *fs__solver_ops(fs_solver s) {
    return ((int)s >= 0 && s < FS_SOLVER_COUNT) ? SOLVERS[s] : NULL;
}

const char *fs_solver_name(fs_solver s) {
    const fs_solver_ops *o = fs__solver_ops(s);
    return o ? o->name : NULL;
}

const char *fs_solver_doc(fs_solver s) {
    const fs_solver_ops *o = fs__solver_ops(s);
    return o ? o->doc : NULL;
}

int fs_solver_find(const char *name) {
    for (int s = 0; s < FS_SOLVER_COUNT && name; s++)
        if (SOLVERS[s] && strcmp(SOLVERS[s]->name, name) == 0) return s;
    return -1;
}

fs_solver fs_world_solver(const fs_world *w) { return w->solver; }

void fs__solver_detach(fs_world *w) {
    const fs_solver_ops *o = fs__solver_ops(w->solver);
    if (o && o->detach) o->detach(w);
    w->solver_state = NULL;
}

fs_status fs_world_set_solver(fs_world *w, fs_solver s, fs_error *err) {
    const fs_solver_ops *o = fs__solver_ops(s);
    if (!o) {
        if (err) snprintf(err->msg, sizeof err->msg, "solver %d is not built in", (int)s);
        return FS_ERR_UNKNOWN;
    }
    if (s != w->solver || !w->solver_state) {
        fs__solver_detach(w);
        w->solver = FS_SOLVER_CLAVET;
        if (o->attach) {
            fs_status st = o->attach(w, err);
            if (st != FS_OK) return st; /* stays on Clavet, which has no state */
        }
        w->solver = s;
    }
    if (o->prepare) o->prepare(w);
    return FS_OK;
}
