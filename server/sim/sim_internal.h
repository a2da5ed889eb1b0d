/* sim_internal.h - every internal header of the core at once, for files not
 * yet converted to the per-concept headers (world_internal.h, grid.h,
 * kernels.h, tasks.h, heat.h, sources.h, particles.h, springs.h, bodies.h,
 * sparse.h, solver_table.h, unified.h, sim_util.h).  New code includes
 * the ones it uses.  Nothing outside server/sim/ includes this. */
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
#include "tasks.h"
#include "unified.h"
#include "world.h"
#include "world_internal.h"

#endif
