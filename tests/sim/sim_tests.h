/* sim_tests.h - tests defined outside test_sim.c */
#ifndef SIM_TESTS_H
#define SIM_TESTS_H
void test_bodies_stack(void);
void test_bodies_buoyancy(void);
void test_bodies_momentum(void);
void test_bodies_validation(void);
void test_bodies_grab(void);
void test_bodies_rough_handling(void);
void test_snapshot_roundtrip(void);
void test_bodies_stickiness(void);
void test_heat_diffusion_erf(void);
void test_heat_conserved(void);
void test_heaters(void);
void test_sparse_iccg(void);
void test_phase_jelly(void);
void test_phase_water_freezes(void);
void test_unified_phase_block(void);
void test_unified_merge_split(void);
void test_unified_rigid(void);
void test_unified_heat_conserved(void);
void test_unified_density_pool(void);
void test_unified_beam(void);
void test_unified_diffusion_erf(void);
void test_unified_layers(void);
void test_unified_determinism(void);
void test_unified_scenes(void);
#endif
