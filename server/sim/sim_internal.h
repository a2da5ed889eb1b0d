/* sim_internal.h - every internal header of the core at once, for the
 * solver files (mps*, unified*, bodies.c, params.c) until they include the
 * per-concept headers they use (world_internal.h, grid.h, kernels.h,
 * tasks.h, heat.h, sources.h, particles.h, springs.h, bodies.h, sparse.h,
 * solver_table.h, step.h, unified.h, sim_util.h).  Nothing outside
 * server/sim/ includes this. */
#ifndef SIM_INTERNAL_H
#define SIM_INTERNAL_H

#include "bodies.h"
#include "grid.h"
#include "heat.h"
#include "kernels.h"
#include "params.h"
#include "particles.h"
#include "sim_util.h"
#include "solver_table.h"
#include "sources.h"
#include "sparse.h"
#include "springs.h"
#include "step.h"
#include "tasks.h"
#include "unified.h"
#include "world.h"
#include "world_internal.h"

#endif
