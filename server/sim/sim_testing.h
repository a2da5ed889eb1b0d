/* sim_testing.h - for tests and benchmarks only: the internal pieces of the
 * core they check directly (tests/sim, tests/bench).  The server never
 * includes it; everything else goes through fluid_sim.h.
 *   fs_material  the snapshot's material record (test_snapshot corrupts it)
 *   fs_csr, fs_pcg and their functions  (test_sparse)
 *   fs__unified_*  the unified solver's knobs and diagnostics (test_unified, bench_sim)
 *   fs__scan_point, fs__pack_lt  the packing scans (test_kernels)
 *   fs__mps_blocks_valid  the MPS rows' order for the two-thread sweeps (test_mps) */
#ifndef SIM_TESTING_H
#define SIM_TESTING_H

#include "kernels.h"
#include "material.h"
#include "sparse.h"
#include "unified.h"

/* mps_pressure.c (also in mps_internal.h) */
bool fs__mps_blocks_valid(const fs_world *w);

#endif
