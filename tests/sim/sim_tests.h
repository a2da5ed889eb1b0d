/* sim_tests.h - the sim tests, in the order test_sim runs them: one list
 * (name, function), from which the test files' declarations and
 * test_sim.c's table are both made.  A new test is one line here. */
#ifndef SIM_TESTS_H
#define SIM_TESTS_H

#define SIM_TESTS(X)                                                                                                   \
    X(params_validation, test_param_validation)                                                                        \
    X(pause_and_step, test_pause_and_step)                                                                             \
    X(emitter_drain_counts_and_ids, test_emitter_drain_counts)                                                         \
    X(linear_momentum, test_linear_momentum)                                                                           \
    X(angular_momentum_relaxation, test_angular_momentum_relaxation)                                                   \
    X(density_pool, test_density_pool)                                                                                 \
    X(density_pool_default, test_density_pool_default)                                                                 \
    X(density_column_fine, test_density_column_fine)                                                                   \
    X(dam_break_column_height, test_dam_break_column_height)                                                           \
    X(sequential_vs_jacobi, test_sequential_vs_jacobi)                                                                 \
    X(determinism_threads, test_determinism_threads)                                                                   \
    X(threads_every_scene, test_threads_every_scene)                                                                   \
    X(shared_pool_two_worlds, test_shared_pool_two_worlds)                                                             \
    X(pool_every_item_once, test_pool_every_item_once)                                                                 \
    X(stress_extreme, test_stress_extreme)                                                                             \
    X(jelly_and_clay, test_jelly_and_clay)                                                                             \
    X(jelly_holds_height, test_jelly_holds_height)                                                                     \
    X(goo_filaments, test_goo_filaments)                                                                               \
    X(scenes, test_scenes)                                                                                             \
    X(bodies_validation, test_bodies_validation)                                                                       \
    X(bodies_stack, test_bodies_stack)                                                                                 \
    X(bodies_grab, test_bodies_grab)                                                                                   \
    X(bodies_rough_handling, test_bodies_rough_handling)                                                               \
    X(bodies_impulse_report, test_bodies_impulse_report)                                                               \
    X(bodies_momentum, test_bodies_momentum)                                                                           \
    X(bodies_momentum_unified, test_bodies_momentum_unified)                                                           \
    X(bodies_buoyancy, test_bodies_buoyancy)                                                                           \
    X(bodies_stickiness, test_bodies_stickiness)                                                                       \
    X(snapshot_roundtrip, test_snapshot_roundtrip)                                                                     \
    X(snapshot_refusals, test_snapshot_refusals)                                                                       \
    X(snapshot_obstacles, test_snapshot_obstacles)                                                                     \
    X(snapshot_mesh_bodies, test_snapshot_mesh_bodies)                                                                 \
    X(snapshot_probes, test_snapshot_probes)                                                                           \
    X(snapshot_scene_size, test_snapshot_scene_size)                                                                   \
    X(scene_meshes, test_scene_meshes)                                                                                 \
    X(domain_ranges, test_domain_ranges)                                                                               \
    X(state_bounds, test_state_bounds)                                                                                 \
    X(body_rails, test_body_rails)                                                                                     \
    X(heat_diffusion_erf, test_heat_diffusion_erf)                                                                     \
    X(heat_conserved, test_heat_conserved)                                                                             \
    X(heaters, test_heaters)                                                                                           \
    X(sparse_pcg, test_sparse_pcg)                                                                                     \
    X(sparse_blocks, test_sparse_blocks)                                                                               \
    X(kernels_pack, test_kernels_pack)                                                                                 \
    X(phase_jelly, test_phase_jelly)                                                                                   \
    X(phase_water_freezes, test_phase_water_freezes)                                                                   \
    X(unified_phase_block, test_unified_phase_block)                                                                   \
    X(unified_merge_split, test_unified_merge_split)                                                                   \
    X(unified_rigid, test_unified_rigid)                                                                               \
    X(unified_heat_conserved, test_unified_heat_conserved)                                                             \
    X(unified_density_pool, test_unified_density_pool)                                                                 \
    X(unified_beam, test_unified_beam)                                                                                 \
    X(unified_diffusion_erf, test_unified_diffusion_erf)                                                               \
    X(unified_layers, test_unified_layers)                                                                             \
    X(unified_determinism, test_unified_determinism)                                                                   \
    X(unified_scenes, test_unified_scenes)                                                                             \
    X(unified_stress, test_unified_stress)                                                                             \
    X(mps_hydrostatic, test_mps_hydrostatic)                                                                           \
    X(mps_free_surface, test_mps_free_surface)                                                                         \
    X(mps_dam_break, test_mps_dam_break)                                                                               \
    X(mps_oil_water, test_mps_oil_water)                                                                               \
    X(mps_heat, test_mps_heat)                                                                                         \
    X(mps_surface_tension, test_mps_surface_tension)                                                                   \
    X(mps_inflow_outflow, test_mps_inflow_outflow)                                                                     \
    X(mps_cg_20k, test_mps_cg_20k)                                                                                     \
    X(mps_determinism, test_mps_determinism)                                                                           \
    X(mps_reach, test_mps_reach)                                                                                       \
    X(mps_thin_obstacle, test_mps_thin_obstacle)                                                                       \
    X(params_per_solver, test_params_per_solver)                                                                       \
    X(mesh_validation, test_mesh_validation)                                                                           \
    X(mesh_mass_properties, test_mesh_mass_properties)                                                                 \
    X(obstacle_api, test_obstacle_api)                                                                                 \
    X(obstacle_dam_break_clavet, test_obstacle_dam_break_clavet)                                                       \
    X(obstacle_dam_break_unified, test_obstacle_dam_break_unified)                                                     \
    X(obstacle_cube_vs_box_clavet, test_obstacle_cube_vs_box_clavet)                                                   \
    X(obstacle_cube_vs_box_unified, test_obstacle_cube_vs_box_unified)                                                 \
    X(obstacle_dam_break_mps, test_obstacle_dam_break_mps)                                                             \
    X(obstacle_cube_vs_box_mps, test_obstacle_cube_vs_box_mps)                                                         \
    X(obstacle_mps_tank, test_obstacle_mps_tank)                                                                       \
    X(body_mesh_mass, test_body_mesh_mass)                                                                             \
    X(body_mesh_floats, test_body_mesh_floats)                                                                         \
    X(body_mesh_contacts, test_body_mesh_contacts)                                                                     \
    X(probes_api, test_probes_api)                                                                                     \
    X(probes_face_side, test_probes_face_side)                                                                         \
    X(probes_still_tank, test_probes_still_tank)                                                                       \
    X(probes_grid_walk, test_probes_grid_walk)                                                                         \
    X(probes_pressure_step_mean, test_probes_pressure_step_mean)                                                       \
    X(spheric2_scene, test_spheric2_scene)                                                                             \
    X(spheric2_box_holds, test_spheric2_box_holds)

/* Counts the heap's bytes with glibc's mallinfo2, which AddressSanitizer's
 * allocator does not keep. */
#if defined(__GLIBC__) && !defined(__SANITIZE_ADDRESS__)
#define SIM_TESTS_HEAP(X)                                                                                              \
    X(no_allocation_in_step, test_no_allocation_in_step)                                                               \
    X(obstacle_no_allocation, test_obstacle_no_allocation) X(body_mesh_no_allocation, test_body_mesh_no_allocation)
#else
#define SIM_TESTS_HEAP(X)
#endif

#define SIM_TEST_DECLARE(name, fn) void fn(void);
SIM_TESTS(SIM_TEST_DECLARE)
SIM_TESTS_HEAP(SIM_TEST_DECLARE)
#undef SIM_TEST_DECLARE

#endif
