/* heat.h - temperature (Solenthaler 2007, "Temperature Effects"): heaters,
 * Eq. 21's normalisation and the per-particle update any solver calls. */
#ifndef SIM_HEAT_H
#define SIM_HEAT_H

#include "fluid_sim.h"

/* The heater's documented ranges (fs_world_set_heater), also a snapshot's. */
fs_status fs__heater_check(const fs_heater_def *d, fs_error *err);
/* Eq. 21 on the rest lattice of the domain: the kernel normalisation that
 * makes the diffusivity the physical one at this resolution. */
float fs__heat_lap_norm(const fs_domain *dom);
/* Temperature T after dt: Eq. 21's rate dTdt (when diffuse) by explicit
 * Euler, then every heater of w->heat at (x, y, z). */
float fs__heat_update(const fs_world *w, float T, bool diffuse, float dTdt, float x, float y, float z, float dt);
/* Eq. 21's pair coefficient of material m: the diffusivity times the rest
 * lattice normalisation times h, so that dT_i/dt = sum_j (c_i + c_j)/2
 * (1 - r_ij/h) (T_j - T_i). */
float fs__heat_coef(const fs_world *w, int m);

#endif
