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
void test_mps_hydrostatic(void);
void test_mps_dam_break(void);
void test_mps_oil_water(void);
void test_mps_heat(void);
void test_mps_cg_20k(void);
void test_mps_determinism(void);
#endif
