/* params.c - the materials table: each parameter's metadata, documented
 * range, units and the solvers whose step reads it, and the seven presets.
 * Three parameter sets share one flat list: Clavet et al. 2005's (the
 * double density relaxation, springs and plasticity; its stiffnesses are
 * per step and its lengths in units of the interaction radius h, so that a
 * material behaves alike at any resolution: Eq. 3/6 displacements are
 * k * h * ...), the unified solver's (Solenthaler et al. 2007: viscosities,
 * elasticity, rigidity, fracture) and the MPS solver's (Premoze et al.
 * 2003: surface tension), and the physical ones several read (mass density,
 * heat, friction and stickiness at bodies, the phase change points). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "params.h"
#include "world_internal.h"
#include "sim_util.h"

/* Which solver's step reads which parameter (each solver's parameter set),
 * checked against the steps by tests/sim/test_params.c: Clavet reads its 12
 * and mass density (bodies), friction, stickiness, heat diffusivity and the
 * phase change (its freezing); the unified solver its 7 and the same shared
 * ones plus the liquid viscosity; MPS mass density, viscosity, heat
 * diffusivity and surface tension.  (The world itself reads phase_change
 * and solid_point when it adds a particle or sets the temperature: the
 * frozen flag, which only the Clavet solver's freezing uses.) */
#define CL FS_SOLVER_BIT(FS_SOLVER_CLAVET)
#define UN FS_SOLVER_BIT(FS_SOLVER_UNIFIED)
#define MP FS_SOLVER_BIT(FS_SOLVER_MPS)

static const fs_param_info PARAMS[FS_P_COUNT] = {
    [FS_P_REST_DENSITY] = {"rest_density", "kernel sum", "rho0 of Eq. 2; 3.19 is a cubic lattice at h = 2.1 spacings",
                           0.5f, 20.0f, false, CL},
    [FS_P_STIFFNESS] = {"stiffness", "h/step", "k dt^2 of Eq. 2-3 (pressure), per step", 0.0f, 0.05f, false, CL},
    [FS_P_NEAR_STIFFNESS] = {"near_stiffness", "h/step",
                             "k_near dt^2 of Eq. 5-6 (anti-clustering, surface tension), per step", 0.0f, 0.2f, false,
                             CL},
    [FS_P_VISC_SIGMA] = {"viscosity_linear", "1/s", "sigma of Algorithm 5", 0.0f, 60.0f, false, CL},
    [FS_P_VISC_BETA] = {"viscosity_quadratic", "s/h", "beta of Algorithm 5", 0.0f, 10.0f, false, CL},
    [FS_P_SPRINGS] = {"springs", "flag", "the material carries springs (Sec. 5.1)", 0.0f, 1.0f, true, CL},
    [FS_P_SPRING_ADD] = {"spring_add", "flag", "Algorithm 4 inserts springs between new neighbours", 0.0f, 1.0f, true,
                         CL},
    [FS_P_SPRING_STIFFNESS] = {"spring_stiffness", "1/step", "k_spring dt^2 of Algorithm 3, per step", 0.0f, 0.3f,
                               false, CL},
    [FS_P_PLASTICITY] = {"plasticity", "1/s", "alpha of Eq. 7-8 (rest-length change rate)", 0.0f, 100.0f, false, CL},
    [FS_P_YIELD_STRETCH] = {"yield_stretch", "ratio", "gamma of Eq. 8 when stretched", 0.0f, 1.0f, false, CL},
    [FS_P_YIELD_COMPRESS] = {"yield_compress", "ratio", "gamma of Eq. 8 when compressed", 0.0f, 1.0f, false, CL},
    [FS_P_SPRING_BREAK] = {"spring_break", "h",
                           "a spring is removed when stretched beyond this many h (not in the paper)", 1.0f, 10.0f,
                           false, CL},
    [FS_P_FRICTION] = {"friction", "ratio", "mu of Eq. 11 at walls and bodies: 0 slip, 1 no-slip", 0.0f, 1.0f, false,
                       CL | UN},
    [FS_P_MASS_DENSITY] = {"mass_density", "kg/m^3", "a particle's mass is this times the spacing cubed (buoyancy)",
                           100.0f, 20000.0f, false, CL | UN | MP},
    [FS_P_STICK_DISTANCE] = {"stick_distance", "h", "d_stick of Eq. 12: reach of the attraction to bodies", 0.0f, 0.5f,
                             false, CL | UN},
    [FS_P_STICK_STRENGTH] = {"stick_strength", "1/s^2", "k_stick of Eq. 12: strength of the attraction to bodies", 0.0f,
                             20000.0f, false, CL | UN},
    [FS_P_HEAT_DIFFUSIVITY] = {"heat_diffusivity", "m^2/s", "c of Solenthaler Eq. 21", 0.0f, 0.05f, false,
                               CL | UN | MP},
    [FS_P_PHASE_CHANGE] = {"phase_change", "flag", "temperature moves it between solid and liquid", 0.0f, 1.0f, true,
                           CL | UN},
    [FS_P_SOLID_POINT] = {"solid_point", "C", "fully solid at or below this temperature", -100.0f, 1000.0f, false,
                          CL | UN},
    [FS_P_MELT_POINT] = {"melt_point", "C", "liquid at or above this temperature", -100.0f, 1000.0f, false, CL | UN},
    [FS_P_KIN_VISCOSITY] = {"kinematic_viscosity", "m^2/s", "nu of the liquid (unified and MPS solvers)", 0.0f, 10.0f,
                            false, UN | MP},
    [FS_P_SURFACE_TENSION] = {"surface_tension", "N/m", "surface tension coefficient (MPS solver, Appendix A)", 0.0f,
                              10.0f, false, MP},
    [FS_P_YOUNG] = {"young_modulus", "Pa", "E of the solid (unified solver, Eq. 13)", 0.0f, 1e9f, false, UN},
    [FS_P_POISSON] = {"poisson_ratio", "ratio", "nu of the solid (unified solver, Eq. 13)", 0.0f, 0.49f, false, UN},
    [FS_P_SOLID_VISCOSITY] = {"solid_viscosity", "m^2/s",
                              "kinematic viscosity of the fully solid state (unified solver; between the "
                              "solidification and melting points it is interpolated, Fig. 5)",
                              0.0f, 10.0f, false, UN},
    [FS_P_RIGID] = {"rigid", "flag",
                    "the fully solid state is a rigid body (unified solver, Eq. 18-20) instead of an elastic one", 0.0f,
                    1.0f, true, UN},
    [FS_P_ELASTIC_LIMIT] = {"elastic_limit", "strain",
                            "von Mises elastic limit: deviatoric elastic strain beyond it flows plastically "
                            "(unified solver)",
                            0.0f, 10.0f, false, UN},
    [FS_P_PLASTIC_LIMIT] = {"plastic_limit", "strain",
                            "largest plastic strain a particle takes (unified solver); 0: perfectly elastic", 0.0f,
                            10.0f, false, UN},
    [FS_P_FRACTURE] = {"fracture_stretch", "ratio",
                       "two body neighbours part when their distance exceeds this times their reference distance "
                       "(unified solver)",
                       1.0f, 10.0f, false, UN},
};

#undef CL
#undef UN
#undef MP

const fs_param_info *fs_param_get_info(fs_param p) {
    if ((int)p < 0 || p >= FS_P_COUNT) return NULL;
    return &PARAMS[p];
}

bool fs_param_used_by(fs_param p, int solver) {
    if ((int)p < 0 || p >= FS_P_COUNT || solver < 0 || solver >= FS_SOLVER_COUNT) return false;
    return (PARAMS[p].solvers & FS_SOLVER_BIT(solver)) != 0;
}

int fs_param_find(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < FS_P_COUNT; i++)
        if (strcmp(PARAMS[i].name, name) == 0) return i;
    return -1;
}

/* Presets.  The three stiffnesses are per step (k dt^2, as the paper's own
 * values are given with dt = 1): the prediction-relaxation scheme is stable
 * for k dt^2 up to about 0.02 at h = 2.1 spacings whatever dt is, so the
 * ranges stay stable at any dt, and smaller steps (substeps) make the
 * same material stiffer in physical terms, i.e. less compressible.
 * Viscosities are physical (1/s, s/h). */
static void preset(fs_material *m, const char *name, float rho0, float k, float kn, float sigma, float beta,
                   bool springs, bool add, float ks, float alpha, float ys, float yc, float brk, float mu) {
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "%s", name);
    m->p[FS_P_REST_DENSITY] = rho0;
    m->p[FS_P_STIFFNESS] = k;
    m->p[FS_P_NEAR_STIFFNESS] = kn;
    m->p[FS_P_VISC_SIGMA] = sigma;
    m->p[FS_P_VISC_BETA] = beta;
    m->p[FS_P_SPRINGS] = springs ? 1.0f : 0.0f;
    m->p[FS_P_SPRING_ADD] = add ? 1.0f : 0.0f;
    m->p[FS_P_SPRING_STIFFNESS] = ks;
    m->p[FS_P_PLASTICITY] = alpha;
    m->p[FS_P_YIELD_STRETCH] = ys;
    m->p[FS_P_YIELD_COMPRESS] = yc;
    m->p[FS_P_SPRING_BREAK] = brk;
    m->p[FS_P_FRICTION] = mu;
}

void fs__materials_init(fs_world *w) {
    /*                                   rho0  k      kn      sigma beta springs add   ks    alpha ys    yc    break mu
     */
    /* water and honey carry no springs, but the spring values below are what
     * holds them together once frozen */
    preset(&w->mat[FS_MAT_WATER], "water", 3.2f, 0.01f, 0.005f, 0.0f, 0.3f, false, false, 0.1f, 0, 0.2f, 0.2f, 1.6f,
           0.05f);
    preset(&w->mat[FS_MAT_GOO], "goo", 3.2f, 0.01f, 0.005f, 1.0f, 0.3f, true, true, 0.02f, 4.0f, 0.1f, 0.1f, 3.0f,
           0.3f);
    preset(&w->mat[FS_MAT_JELLY], "jelly", 3.2f, 0.01f, 0.005f, 1.0f, 0.3f, true, false, 0.1f, 0.0f, 0.2f, 0.2f, 1.6f,
           0.5f);
    preset(&w->mat[FS_MAT_CLAY], "clay", 3.2f, 0.01f, 0.005f, 2.0f, 0.3f, true, false, 0.1f, 20.0f, 0.05f, 0.05f, 1.6f,
           0.8f);
    preset(&w->mat[FS_MAT_HONEY], "honey", 3.2f, 0.01f, 0.005f, 30.0f, 1.0f, false, false, 0.05f, 2.0f, 0.1f, 0.1f,
           1.6f, 0.6f);
    preset(&w->mat[FS_MAT_CHOCOLATE], "chocolate", 3.2f, 0.01f, 0.005f, 10.0f, 0.5f, false, false, 0.1f, 2.0f, 0.1f,
           0.1f, 1.6f, 0.6f);
    preset(&w->mat[FS_MAT_OIL], "oil", 3.2f, 0.01f, 0.005f, 2.0f, 0.5f, false, false, 0.05f, 2.0f, 0.1f, 0.1f, 1.6f,
           0.3f);
    const float dens[FS_MAT_PRESETS] = {1000, 1100, 1050, 1800, 1400, 1250, 900};
    /* water freezes below 0 C; jelly melts like gelatine; clay softens like
     * wax; honey crystallises in deep cold; cocoa butter sets below about
     * 28 C and is liquid above about 34 C; oil clouds and sets below -5 C */
    const float tsolid[FS_MAT_PRESETS] = {-0.5f, -100, 30, 50, -20, 28, -10},
                tmelt[FS_MAT_PRESETS] = {0.5f, -99, 45, 90, -5, 34, -5};
    const float stick[FS_MAT_PRESETS] = {0.25f, 0.3f, 0.3f, 0.3f, 0.35f, 0.3f, 0.3f};
    /* The unified solver (Solenthaler 2007).  Liquid kinematic viscosities
     * are physical (water 1e-6, honey ~10 Pa s / 1400 kg/m^3, molten
     * chocolate ~5 Pa s / 1250 kg/m^3; goo is a thick paste and never
     * solid: Young's modulus 0).  Young's moduli are those an explicit step
     * at 8 cm spacing can carry (elastic wave speed sqrt(E/rho) of 5-15 m/s
     * next to the liquid's 25 m/s sound speed), far below real ice or
     * chocolate (GPa): those solids are rigid bodies instead (rigid = 1),
     * and E only acts in the soft state between the two points (Fig. 5).
     * Jelly is elastic, clay plastic (small elastic limit, large plastic
     * limit), honey crystallises elastic. */
    const float nu_l[FS_MAT_PRESETS] = {1e-6f, 0.05f, 1e-3f, 0.01f, 0.007f, 0.004f, 5e-5f};
    const float nu_s[FS_MAT_PRESETS] = {0.02f, 0.05f, 0.02f, 0.05f, 0.05f, 0.05f, 0.05f};
    const float young[FS_MAT_PRESETS] = {2e5f, 0.0f, 1e5f, 1e5f, 1e5f, 2e5f, 2e5f};
    const float poisson[FS_MAT_PRESETS] = {0.3f, 0.3f, 0.4f, 0.3f, 0.3f, 0.3f, 0.3f};
    const float rigid[FS_MAT_PRESETS] = {1, 0, 0, 0, 0, 1, 1};
    const float elim[FS_MAT_PRESETS] = {0.05f, 0.05f, 0.1f, 0.01f, 0.05f, 0.05f, 0.05f};
    const float plim[FS_MAT_PRESETS] = {0, 0, 0, 1.0f, 0, 0, 0};
    const float frac[FS_MAT_PRESETS] = {1.5f, 1.5f, 2.0f, 3.0f, 1.5f, 1.5f, 1.5f};
    for (int m = 0; m < FS_MAT_PRESETS; m++) {
        float *p = w->mat[m].p;
        p[FS_P_MASS_DENSITY] = dens[m];
        p[FS_P_STICK_DISTANCE] = stick[m];
        p[FS_P_STICK_STRENGTH] = 0.0f;
        p[FS_P_HEAT_DIFFUSIVITY] = 0.01f; /* m^2/s: visible in seconds at 8 cm spacing */
        p[FS_P_PHASE_CHANGE] = m != FS_MAT_GOO;
        p[FS_P_SOLID_POINT] = tsolid[m], p[FS_P_MELT_POINT] = tmelt[m];
        p[FS_P_KIN_VISCOSITY] = nu_l[m];
        p[FS_P_SOLID_VISCOSITY] = nu_s[m];
        p[FS_P_YOUNG] = young[m];
        p[FS_P_POISSON] = poisson[m];
        p[FS_P_RIGID] = rigid[m];
        p[FS_P_ELASTIC_LIMIT] = elim[m];
        p[FS_P_PLASTIC_LIMIT] = plim[m];
        p[FS_P_FRACTURE] = frac[m];
    }
    /* physical values read by the MPS solver: water at 20 C; a light oil
     * (olive oil is 910 kg/m^3, ~8e-5 m^2/s, 0.032 N/m) */
    w->mat[FS_MAT_WATER].p[FS_P_KIN_VISCOSITY] = 1.0e-6f;
    w->mat[FS_MAT_WATER].p[FS_P_SURFACE_TENSION] = 0.0728f;
    w->mat[FS_MAT_OIL].p[FS_P_KIN_VISCOSITY] = 5.0e-5f;
    w->mat[FS_MAT_OIL].p[FS_P_SURFACE_TENSION] = 0.032f;
    w->nmat = FS_MAT_PRESETS;
}

int fs_world_material_count(const fs_world *w) {
    return w->nmat;
}

const char *fs_world_material_name(const fs_world *w, int m) {
    return (m >= 0 && m < w->nmat) ? w->mat[m].name : NULL;
}

int fs_world_material_find(const fs_world *w, const char *name) {
    if (!name) return -1;
    for (int i = 0; i < w->nmat; i++)
        if (strcmp(w->mat[i].name, name) == 0) return i;
    return -1;
}

float fs_world_get_param(const fs_world *w, int m, fs_param p) {
    if (m < 0 || m >= w->nmat || (int)p < 0 || p >= FS_P_COUNT) return NAN;
    return w->mat[m].p[p];
}

static void seterr(fs_error *err, const char *fmt, const char *a, double x, double lo, double hi) {
    SETERR(err, fmt, a, x, lo, hi);
}

fs_status fs_world_set_param(fs_world *w, int m, fs_param p, float v, fs_error *err) {
    if (m < 0 || m >= w->nmat) {
        SETERR(err, "unknown material %d", m);
        return FS_ERR_UNKNOWN;
    }
    if ((int)p < 0 || p >= FS_P_COUNT) {
        SETERR(err, "unknown parameter %d", (int)p);
        return FS_ERR_UNKNOWN;
    }
    const fs_param_info *in = &PARAMS[p];
    if (!isfinite(v)) {
        seterr(err, "%s must be a finite number (got %g; range %g..%g)", in->name, v, in->min, in->max);
        return FS_ERR_ARG;
    }
    if (v < in->min || v > in->max) {
        seterr(err, "%s = %g is outside %g..%g", in->name, v, in->min, in->max);
        return FS_ERR_RANGE;
    }
    if (in->is_flag && v != 0.0f && v != 1.0f) {
        seterr(err, "%s is a flag: 0 or 1 (got %g; %g..%g)", in->name, v, 0, 1);
        return FS_ERR_RANGE;
    }
    w->mat[m].p[p] = v;
    return FS_OK;
}
