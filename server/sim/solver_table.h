/* solver_table.h - the solver contract (fs_solver_ops) and the table of
 * solvers (solver_table.c).  The world owns the particles and everything
 * shared; a solver owns only the state it alone reads, behind
 * w->solver_state, and keeps any per-particle part of it by storage slot
 * (p.slot) so the grid's reorders never move it.  The world reaches its
 * current solver through w->ops, which only solver_table.c sets. */
#ifndef SIM_SOLVER_TABLE_H
#define SIM_SOLVER_TABLE_H

#include <stdlib.h>

#include "world_internal.h"

typedef struct fs__restore_ctx {
    const fs_domain *dom; /* the snapshot's domain */
    int particles;        /* and its particle count */
    bool apply;
} fs__restore_ctx;

typedef struct fs_solver_ops {
    const char *name, *doc;
    /* Allocates the state for the world's capacity (may be NULL). */
    fs_status (*attach)(fs_world *w, fs_error *err);
    void (*detach)(fs_world *w); /* frees it (may be NULL) */
    /* Derives the state from the current particles: after a switch, after
     * a scene is built and after fs_world_reset.  No allocation (may be NULL). */
    void (*prepare)(fs_world *w);
    void (*step)(fs_world *w); /* one sub-step of w->dt */
    /* The particle in storage slot `slot` is being removed (may be NULL). */
    void (*removed)(fs_world *w, int slot);
    /* Snapshot section: write the state (buf NULL: count only) and read it
     * back.  read with rc->apply false only checks (against the snapshot's
     * domain and particle count, not yet the world's); with apply true it is
     * called after a successful check and after the particles were restored. */
    size_t (*state_write)(const fs_world *w, void *buf, size_t cap);
    fs_status (*state_read)(fs_world *w, const void *buf, size_t n, const fs__restore_ctx *rc, fs_error *err);
    /* The world's mesh obstacles changed (one added or removed): a solver
     * whose boundary is made from them rebuilds it now, outside the step,
     * and on FS_ERR_NOMEM the caller undoes the change (may be NULL). */
    fs_status (*obstacles_changed)(fs_world *w, fs_error *err);
} fs_solver_ops;
extern const fs_solver_ops fs__clavet_ops;  /* clavet.c */
extern const fs_solver_ops fs__unified_ops; /* unified.c */
extern const fs_solver_ops fs__mps_ops;     /* mps.c */

/* A solver's operations table from its functions PREFIX_attach,
 * PREFIX_detach, PREFIX_prepare, PREFIX_step, PREFIX_removed,
 * PREFIX_state_write and PREFIX_state_read (FS_SOLVER_OPS_FIELDS: the same
 * fields, for a table that sets more). */
#define FS_SOLVER_OPS_FIELDS(prefix, name_, doc_)                                                                      \
    .name = name_, .doc = doc_, .attach = prefix##_attach, .detach = prefix##_detach, .prepare = prefix##_prepare,     \
    .step = prefix##_step, .removed = prefix##_removed, .state_write = prefix##_state_write,                           \
    .state_read = prefix##_state_read
#define FS_SOLVER_OPS(prefix, name_, doc_)                                                                             \
    { FS_SOLVER_OPS_FIELDS(prefix, name_, doc_) }

/* A solver's zeroed state of `size` bytes, set behind w->solver_state
 * (NULL there and returned when out of memory). */
static inline void *fs__solver_state_new(fs_world *w, size_t size) {
    w->solver_state = calloc(1, size);
    return w->solver_state;
}

/* Frees the state behind w->solver_state (its arrays freed already). */
static inline void fs__solver_state_free(fs_world *w) {
    free(w->solver_state);
    w->solver_state = NULL;
}

const fs_solver_ops *fs__solver_ops(fs_solver s); /* NULL when not built in */
/* Makes s the world's solver with a fresh state: the new state is attached
 * beside the old one, which is freed only once the new one exists; on a
 * refusal (out of memory) the world keeps its solver and state.  Does not
 * call prepare. */
fs_status fs__solver_switch(fs_world *w, fs_solver s, fs_error *err);
void fs__solver_detach(fs_world *w); /* frees the current solver's state */

#endif
