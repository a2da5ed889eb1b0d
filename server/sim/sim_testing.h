/* sim_testing.h - for tests and benchmarks only: the internal pieces of the
 * core they check directly (tests/sim, tests/bench).  The server never
 * includes it; everything else goes through fluid_sim.h.
 *   fs_material  the snapshot's material record (test_snapshot corrupts it)
 *   fs_csr, fs_pcg and their functions  (test_sparse)
 *   fs__unified_*  the unified solver's knobs and diagnostics (test_unified, bench_sim)
 *   fs__scan_point, fs__pack_lt  the packing scans (test_kernels)
 *   fs__mps_blocks_valid  the MPS rows' order for the two-thread sweeps (test_mps)
 *   fs__mps_check_lists  the MPS lists checked against brute force (test_mps)
 *   fs__mps_far  MPS sub-steps kept with a particle moved past the lists' reach (test_mps)
 *   fs__mps_wall_builds  how often the MPS walls were built (test_mps) */
#ifndef SIM_TESTING_H
#define SIM_TESTING_H

#include "kernels.h"
#include "material.h"
#include "sparse.h"
#include "unified.h"

/* mps_pressure.c (also in mps_internal.h) */
bool fs__mps_blocks_valid(const fs_world *w);

/* mps.c: from now on every sub-step of an MPS world compares its lists with
 * every particle and wall particle within r_e of each particle at r* (after
 * the collisions), by brute force, and counts the pairs they miss; with
 * unchecked, the sub-steps are no longer cut for the lists' reach (the check
 * this verifies).  Returns the pairs missed so far (0 for another solver). */
uint64_t fs__mps_check_lists(fs_world *w, bool on, bool unchecked);

/* mps_reach.c: the sub-steps of an MPS world kept with a particle clear of obstacles moved past the lists' reach
 * by r^{n+1}, the pressure's correction included (0 for another solver). */
uint64_t fs__mps_far(const fs_world *w);

/* mps_walls.c: how many times an MPS world's wall particles and their grid
 * were built (0 for another solver): once per domain, reset or change of
 * the obstacles, never by a step of an unchanged world. */
uint32_t fs__mps_wall_builds(const fs_world *w);

#endif
