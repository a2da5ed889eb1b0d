/* solver_table.c - the table of solvers (Clavet, unified, MPS) and
 * switching a world between them.  Each solver file defines its
 * fs_solver_ops; a solver missing from this table is not built in (its name
 * is refused). */
#include <string.h>

#include "sim_util.h"
#include "solver_table.h"
#include "world_internal.h"

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

fs_solver fs_world_solver(const fs_world *w) {
    return w->solver;
}

void fs__solver_detach(fs_world *w) {
    if (w->ops && w->ops->detach) w->ops->detach(w);
    w->solver_state = NULL;
}

fs_status fs__solver_switch(fs_world *w, fs_solver s, fs_error *err) {
    const fs_solver_ops *o = fs__solver_ops(s);
    if (!o) {
        SETERR(err, "solver %d is not built in", (int)s);
        return FS_ERR_UNKNOWN;
    }
    /* the new solver's state is made beside the old one, which goes only once it exists */
    void *old_state = w->solver_state;
    w->solver_state = NULL;
    if (o->attach) {
        fs_status st = o->attach(w, err);
        if (st != FS_OK) {
            w->solver_state = old_state;
            return st;
        }
    }
    void *new_state = w->solver_state;
    w->solver_state = old_state;
    fs__solver_detach(w);
    w->solver_state = new_state;
    w->solver = s;
    w->ops = o;
    return FS_OK;
}

fs_status fs_world_set_solver(fs_world *w, fs_solver s, fs_error *err) {
    if (s != w->solver || !w->solver_state || !w->ops) {
        fs_status st = fs__solver_switch(w, s, err);
        if (st != FS_OK) return st; /* the world keeps its solver */
    }
    const fs_solver_ops *o = w->ops;
    if (o->prepare) o->prepare(w);
    return FS_OK;
}
