/* scenes.c - scenes built in code.  Particles are laid out at a fixed
 * spacing s = 8 cm, h = 2.1 s (32 lattice neighbours within h), wall radius
 * s / 2, and each scene sizes its tank from the requested particle count.
 * A fixed spacing keeps g dt^2 / h (gravity's pull per step against the
 * relaxation, 0.016 at 60 Hz) in the range where one relaxation sweep per
 * 1/60 s step holds a pool at rest; finer spacings need substeps. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grid.h"
#include "particles.h"
#include "scene_meshes.h"
#include "scene_spheric2.h"
#include "sim_util.h"
#include "solver_table.h"

#define H_OVER_S 2.1f

/* What a scene is asked for: about n particles, the fluid volume they fill
 * at the spacing. */
typedef struct scene_size {
    int n;
    float vol;
} scene_size;

/* A row of the table: what GET /api/scenes lists, and the builder, which
 * resets the world to the scene's domain and fills it. */
typedef struct scene_row {
    fs_scene_info info;
    fs_status (*build)(fs_world *w, const scene_size *z, fs_error *err);
} scene_row;

#define SPACING 0.08f

static fs_status setup_h(fs_world *w, fs_vec3 box, float h_over_s, fs_error *err) {
    float s = SPACING;
    fs_domain d = {{0, 0, 0}, box, {0, -9.81f, 0}, h_over_s * s, s, 0.5f * s};
    return fs_world_reset(w, &d, err);
}

static fs_status setup(fs_world *w, fs_vec3 box, fs_error *err) {
    return setup_h(w, box, H_OVER_S, err);
}

/* MPS scenes: h is the Laplacian's radius, 3.1 spacings (mps.c) */
#define MPS_H_OVER_S 3.1f

/* Particles on the lattice of the domain spacing inside the union of
 * spheres (each lattice point once), at temperature `temp`. */
typedef struct ball {
    float x, y, z, r;
} ball;

static int add_balls(fs_world *w, const ball *b, int nb, int material, float temp) {
    float s = w->dom.spacing, lo[3] = {1e30f, 1e30f, 1e30f}, hi[3] = {-1e30f, -1e30f, -1e30f};
    for (int k = 0; k < nb; k++) {
        const float c[3] = {b[k].x, b[k].y, b[k].z};
        for (int a = 0; a < 3; a++) lo[a] = fminf(lo[a], c[a] - b[k].r), hi[a] = fmaxf(hi[a], c[a] + b[k].r);
    }
    float old = w->ambient;
    w->ambient = temp;
    int added = 0;
    for (float z = lo[2] + 0.5f * s; z <= hi[2]; z += s)
        for (float y = lo[1] + 0.5f * s; y <= hi[1]; y += s)
            for (float x = lo[0] + 0.5f * s; x <= hi[0]; x += s) {
                bool in = false;
                for (int k = 0; k < nb && !in; k++) {
                    float dx = x - b[k].x, dy = y - b[k].y, dz = z - b[k].z;
                    in = dx * dx + dy * dy + dz * dz <= b[k].r * b[k].r;
                }
                if (in && fs__alloc_particle(w, x, y, z, 0, 0, 0, material) >= 0) added++;
            }
    w->ambient = old;
    return added;
}

static int add_block_at(fs_world *w, fs_vec3 lo, fs_vec3 hi, int material, float jitter, float temp) {
    float old = w->ambient;
    w->ambient = temp;
    int n = fs_world_add_block(w, lo, hi, material, jitter);
    w->ambient = old;
    return n;
}

/* a column a x 2a x a in a 4a x 2.4a x a tank */
static fs_status build_dam_break(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float a = cbrtf(z->vol / 2.0f);
    if ((st = setup(w, (fs_vec3){4 * a, 2.4f * a, a}, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){a, 2 * a, a}, FS_MAT_WATER, 0.1f);
    return FS_OK;
}

/* a pool L x L/4 x L holding 90%, a ball with 10% */
static fs_status build_drop(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(0.9f * z->vol * 4.0f), r = cbrtf(0.1f * z->vol / 4.18879f);
    if ((st = setup(w, (fs_vec3){L, L, L}, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.25f * L, L}, FS_MAT_WATER, 0.1f);
    fs_world_add_sphere(w, (fs_vec3){0.5f * L, 0.7f * L, 0.5f * L}, r, FS_MAT_WATER, 0.1f);
    return FS_OK;
}

/* n particles would make a pool L/5 deep; it starts
 * with 40% of that and a jet refills it while a drain empties
 * a corner, so the count cycles below n */
static fs_status build_fountain(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    const float s = SPACING;
    float L = cbrtf(z->vol * 5.0f);
    if ((st = setup(w, (fs_vec3){L, 1.5f * L, L}, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.08f * L, L}, FS_MAT_WATER, 0.1f);
    float speed = sqrtf(2.0f * 9.81f * 0.9f * L); /* rises to about 0.9 L */
    fs_emitter_def e = {
        {0.5f * L, 0.5f * s, 0.5f * L}, {0, 1, 0}, speed, 2.5f * s, (float)z->n / 6.0f, z->n, FS_MAT_WATER, true};
    fs_world_set_emitter(w, -1, &e, NULL);
    fs_drain_def d = {{L, 0.0f, L}, 0.12f * L, true};
    fs_world_set_drain(w, -1, &d, NULL);
    return FS_OK;
}

/* five cubes of side b, one per preset, raised b/3 */
static fs_status build_gallery(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float b = cbrtf(z->vol / 5.0f), gap = 0.4f * b;
    if ((st = setup(w, (fs_vec3){5 * b + 6 * gap, 2.5f * b, 2 * b}, err)) != FS_OK) return st;
    const int order[5] = {FS_MAT_WATER, FS_MAT_GOO, FS_MAT_JELLY, FS_MAT_CLAY, FS_MAT_HONEY};
    for (int k = 0; k < 5; k++) {
        float x0 = gap + (float)k * (b + gap);
        fs_world_add_block(w, (fs_vec3){x0, b / 3, 0.5f * b}, (fs_vec3){x0 + b, b / 3 + b, 1.5f * b}, order[k], 0.05f);
    }
    fs_world_make_springs(w); /* the mold of Fig. 12 */
    return FS_OK;
}

/* a pool L x L/4 x L and six bodies above it */
static fs_status build_floating(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(z->vol * 4.0f), y = 0.25f * L + 0.15f * L;
    if ((st = setup(w, (fs_vec3){L, L, L}, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.25f * L, L}, FS_MAT_WATER, 0.1f);
    const struct {
        fs_shape shape;
        float sx, sy, sz, density, x, z;
    } B[6] = {
        {FS_SHAPE_BOX, 0.08f, 0.05f, 0.08f, 300, 0.25f, 0.25f}, {FS_SHAPE_BOX, 0.07f, 0.07f, 0.07f, 600, 0.75f, 0.25f},
        {FS_SHAPE_SPHERE, 0.07f, 0, 0, 200, 0.5f, 0.5f},        {FS_SHAPE_SPHERE, 0.06f, 0, 0, 850, 0.25f, 0.75f},
        {FS_SHAPE_CAPSULE, 0.04f, 0.08f, 0, 500, 0.75f, 0.75f}, {FS_SHAPE_BOX, 0.05f, 0.05f, 0.05f, 2500, 0.5f, 0.2f}};
    for (int k = 0; k < 6; k++) {
        fs_body_def b = fs_default_body_def();
        b.shape = B[k].shape;
        b.size = (fs_vec3){B[k].sx * L, B[k].sy * L, B[k].sz * L};
        b.density = B[k].density;
        b.pos = (fs_vec3){B[k].x * L, y + 0.05f * L * (float)(k % 3), B[k].z * L};
        if (b.shape == FS_SHAPE_CAPSULE) b.rot = (fs_quat){0.7071068f, 0, 0, 0.7071068f}; /* lying */
        fs_world_create_body(w, &b, NULL);
    }
    return FS_OK;
}

/* a tank L x 0.4 L x L/2 of water and a box of
 * 3000 kg/m^3 falling into it from above */
static fs_status build_heavy_object(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(z->vol / 0.2f);
    if ((st = setup(w, (fs_vec3){L, L, 0.5f * L}, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.4f * L, 0.5f * L}, FS_MAT_WATER, 0.1f);
    fs_body_def b = fs_default_body_def();
    b.size = (fs_vec3){0.1f * L, 0.1f * L, 0.1f * L};
    b.density = 3000;
    b.pos = (fs_vec3){0.5f * L, 0.8f * L, 0.25f * L};
    b.rot = (fs_quat){0.9659258f, 0.1294095f, 0, 0.2241439f}; /* tilted, so it lands on an edge */
    fs_world_create_body(w, &b, NULL);
    return FS_OK;
}

/* a pool L x 0.3 L x L holding 80% of liquid
 * chocolate at 45 C; a bunny (body, head, ears, tail: spheres)
 * with ~20% at 20 C, solid, above it */
static fs_status build_chocolate_bunny(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(0.8f * z->vol / 0.3f), R = cbrtf(0.2f * z->vol / 6.3f);
    if ((st = setup(w, (fs_vec3){L, 1.5f * L, L}, err)) != FS_OK) return st; /* room for the ears */
    add_block_at(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.3f * L, L}, FS_MAT_CHOCOLATE, 0.1f, 45.0f);
    float cx = 0.5f * L, cy = 0.3f * L + 1.4f * R, cz = 0.5f * L;
    const ball bunny[] = {
        {cx, cy, cz, R},                                           /* body */
        {cx + 0.85f * R, cy + 0.9f * R, cz, 0.62f * R},            /* head */
        {cx + 0.75f * R, cy + 1.7f * R, cz - 0.25f * R, 0.2f * R}, /* ears: three balls each */
        {cx + 0.7f * R, cy + 2.05f * R, cz - 0.3f * R, 0.2f * R},
        {cx + 0.65f * R, cy + 2.4f * R, cz - 0.35f * R, 0.18f * R},
        {cx + 0.75f * R, cy + 1.7f * R, cz + 0.25f * R, 0.2f * R},
        {cx + 0.7f * R, cy + 2.05f * R, cz + 0.3f * R, 0.2f * R},
        {cx + 0.65f * R, cy + 2.4f * R, cz + 0.35f * R, 0.18f * R},
        {cx - 1.0f * R, cy + 0.1f * R, cz, 0.3f * R},              /* tail */
        {cx + 0.5f * R, cy - 0.75f * R, cz - 0.45f * R, 0.3f * R}, /* feet */
        {cx + 0.5f * R, cy - 0.75f * R, cz + 0.45f * R, 0.3f * R},
    };
    add_balls(w, bunny, (int)(sizeof bunny / sizeof bunny[0]), FS_MAT_CHOCOLATE, 20.0f);
    return FS_OK;
}

/* a pool L x 0.3 L x L of honey at 5 C (85%), a ball of
 * liquid chocolate at 45 C (15%) falling into it */
static fs_status build_shell(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(0.85f * z->vol / 0.3f), r = cbrtf(0.15f * z->vol / 4.18879f);
    if ((st = setup(w, (fs_vec3){L, 1.2f * L, L}, err)) != FS_OK) return st;
    add_block_at(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.3f * L, L}, FS_MAT_HONEY, 0.1f, 5.0f);
    const ball drop[] = {{0.5f * L, 0.3f * L + 1.6f * r, 0.5f * L, r}}; /* top 0.3 L + 2.6 r < 0.9 L */
    add_balls(w, drop, 1, FS_MAT_CHOCOLATE, 45.0f);
    return FS_OK;
}

/* two chocolate blocks a x a x a side by side at 20 C,
 * the centres of their facing layers 2.2 spacings apart (just
 * beyond h = 2.1 spacings, so they start as two bodies; their
 * particles' surfaces are 1.2 spacings apart), on a plate at
 * 45 C (2 spacings deep) */
static fs_status build_merge(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    const float s = SPACING;
    float a = s * floorf(cbrtf(0.5f * z->vol) / s + 0.5f); /* whole layers */
    if ((st = setup(w, (fs_vec3){3.0f * a, 1.6f * a, 1.6f * a}, err)) != FS_OK) return st;
    float x0 = 0.5f * a, z0 = 0.3f * a, gap = 1.2f * s;
    add_block_at(w, (fs_vec3){x0, 0, z0}, (fs_vec3){x0 + a, a, z0 + a}, FS_MAT_CHOCOLATE, 0.0f, 20.0f);
    add_block_at(w, (fs_vec3){x0 + a + gap, 0, z0}, (fs_vec3){x0 + 2 * a + gap, a, z0 + a}, FS_MAT_CHOCOLATE, 0.0f,
                 20.0f);
    fs_heater_def plate = {FS_HEAT_FLOOR, {0, 0, 0}, 2.0f * s, 2.0f, 45.0f, true};
    fs_world_set_heater(w, -1, &plate, NULL);
    return FS_OK;
}

/* as dam_break, for the MPS solver */
static fs_status build_mps_dam_break(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float a = cbrtf(z->vol / 2.0f);
    if ((st = setup_h(w, (fs_vec3){4 * a, 2.4f * a, a}, MPS_H_OVER_S, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){a, 2 * a, a}, FS_MAT_WATER, 0.0f);
    return FS_OK;
}

/* a tank L x 0.7 L x L/2, oil (40%) below water (60%) */
static fs_status build_oil_water(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    float L = cbrtf(z->vol / 0.25f), H = 0.5f * L;
    if ((st = setup_h(w, (fs_vec3){L, 0.7f * L, 0.5f * L}, MPS_H_OVER_S, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){L, 0.4f * H, 0.5f * L}, FS_MAT_OIL, 0.0f);
    fs_world_add_block(w, (fs_vec3){0, 0.4f * H, 0}, (fs_vec3){L, H, 0.5f * L}, FS_MAT_WATER, 0.0f);
    return FS_OK;
}

/* a tank L x L x L/2 with a box on its floor; a jet
 * from the upper left lands on it; a drain in the far corner */
static fs_status build_mps_obstacle(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    const float s = SPACING;
    float L = cbrtf(z->vol / 0.12f);
    if ((st = setup_h(w, (fs_vec3){L, 0.8f * L, 0.5f * L}, MPS_H_OVER_S, err)) != FS_OK) return st;
    /* only the mps solver has obstacles: elsewhere the scene runs without */
    fs_world_mps_add_obstacle(w, (fs_vec3){0.35f * L, 0, 0.1f * L}, (fs_vec3){0.6f * L, 0.25f * L, 0.4f * L}, NULL);
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){0.3f * L, 0.1f * L, 0.5f * L}, FS_MAT_WATER, 0.0f);
    fs_emitter_def e = {
        {0.45f * L, 0.65f * L, 0.25f * L}, {0.3f, -1, 0}, 2.0f, 2.0f * s, (float)z->n / 4.0f, z->n, FS_MAT_WATER, true};
    fs_world_set_emitter(w, -1, &e, NULL);
    fs_drain_def d = {{L, 0.0f, 0.25f * L}, 0.12f * L, true};
    fs_world_set_drain(w, -1, &d, NULL);
    return FS_OK;
}

/* ---- scenes with meshes (scene_meshes.c, made by scripts/make_scene_meshes.py) ---------- */
static fs_status add_scene_mesh(fs_world *w, const fs_mesh *m, fs_vec3 pos, float scale, fs_error *err) {
    return fs_world_add_obstacle(w, m, pos, (fs_quat){1, 0, 0, 0}, scale, err) >= 0 ? FS_OK : FS_ERR_ARG;
}

/* an open funnel (a thin shell) over an open glass on the floor of an
 * L x L x L tank, the glass holding half the water asked for; a jet just
 * above the funnel's mouth, off its axis, pours it all in (none at the
 * start) */
#define GLASS_VOLUME 0.040212f /* pi 0.2^2 0.32: the glass mesh's, in tank widths cubed */
static fs_status build_funnel(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    const float s = SPACING, L = cbrtf(0.5f * z->vol / GLASS_VOLUME);
    if ((st = setup(w, (fs_vec3){L, L, L}, err)) != FS_OK) return st;
    if ((st = add_scene_mesh(w, &fs__scene_mesh_glass, (fs_vec3){0.5f * L, 0, 0.5f * L}, L, err)) != FS_OK) return st;
    if ((st = add_scene_mesh(w, &fs__scene_mesh_funnel, (fs_vec3){0.5f * L, 0.38f * L, 0.5f * L}, L, err)) != FS_OK)
        return st;
    fs_emitter_def e = {
        {0.6f * L, 0.74f * L, 0.5f * L}, {0, -1, 0}, 1.5f, 3.0f * s, (float)z->n / 10.0f, z->n, FS_MAT_WATER, true};
    fs_world_set_emitter(w, -1, &e, NULL);
    return FS_OK;
}

/* a dam break against a breakwater: a column a x 2a x 1.5a at one end of a
 * 4a x 2.2a x 1.5a tank, and across 1.1a of its width, 1.3a beyond the
 * column, a closed breakwater 0.6a high whose seaward face curves back into
 * a wave-return lip; the gap at the far side is the harbour's mouth */
static fs_status build_harbour(fs_world *w, const scene_size *z, fs_error *err) {
    fs_status st;
    const float a = cbrtf(z->vol / 3.0f);
    if ((st = setup(w, (fs_vec3){4 * a, 2.2f * a, 1.5f * a}, err)) != FS_OK) return st;
    if ((st = add_scene_mesh(w, &fs__scene_mesh_breakwater, (fs_vec3){2.3f * a, 0, 0}, a, err)) != FS_OK) return st;
    fs_world_add_block(w, (fs_vec3){0, 0, 0}, (fs_vec3){a, 2 * a, 1.5f * a}, FS_MAT_WATER, 0.1f);
    return FS_OK;
}

/* SPHERIC Test 2 (scene_spheric2.c): its own spacing, from n and the
 * fixed geometry; h as the solver's scenes use */
static fs_status build_spheric2(fs_world *w, const scene_size *z, fs_error *err) {
    return fs__build_spheric2(w, z->n, w->solver == FS_SOLVER_MPS ? MPS_H_OVER_S : H_OVER_S, err);
}

static const scene_row SCENES[] = {
    {{"dam_break", "a water column (width a, height 2a) collapsing along a tank", 20000, FS_SOLVER_CLAVET},
     build_dam_break},
    {{"drop", "a ball of water falling into a pool", 20000, FS_SOLVER_CLAVET}, build_drop},
    {{"fountain", "a jet from the floor of a shallow pool, drained in a corner", 15000, FS_SOLVER_CLAVET},
     build_fountain},
    {{"gallery", "water, goo, jelly, clay and honey blocks dropped side by side", 15000, FS_SOLVER_CLAVET},
     build_gallery},
    {{"floating", "boxes, balls and a capsule of several densities dropped on a pool", 20000, FS_SOLVER_CLAVET},
     build_floating},
    {{"heavy_object", "a heavy box falling into a tank of liquid (the paper's Fig. 9)", 20000, FS_SOLVER_CLAVET},
     build_heavy_object},
    {{"funnel", "water poured into a funnel (an open mesh, a thin shell) over a glass (an open cup mesh)", 12000,
      FS_SOLVER_CLAVET},
     build_funnel},
    {{"harbour", "a dam-break wave against a breakwater (a closed mesh) with a curved, wave-return seaward face", 20000,
      FS_SOLVER_CLAVET},
     build_harbour},
    /* Solenthaler 2007 (the unified solver: 6-9x Clavet's cost per particle, so
     * fewer particles by default to stay interactive on one sim thread) */
    {{"chocolate_bunny",
      "a solid chocolate bunny at 20 C dropped into a pool of liquid chocolate at 45 C: it melts "
      "(Solenthaler 2007, Fig. 11, 14)",
      8000, FS_SOLVER_UNIFIED},
     build_chocolate_bunny},
    {{"shell",
      "hot liquid chocolate (45 C) dropped into a cold viscous pool (honey, 5 C): it sets into a shell "
      "(Solenthaler 2007, Fig. 12)",
      8000, FS_SOLVER_UNIFIED},
     build_shell},
    {{"merge",
      "two chocolate blocks side by side on a 45 C plate melt at the bottom and flow together; set the "
      "plate cold (heater slot 0: POST /api/heater) and they set into one body (Solenthaler 2007, Fig. 1, 9)",
      6000, FS_SOLVER_UNIFIED},
     build_merge},
    /* Premoze 2003 (the MPS solver: a linear solve in each of ~10 sub-steps
     * per tick, about 0.1 s per step at 3000 particles on one core) */
    {{"mps_dam_break", "MPS: a water column (width a, height 2a) collapsing along a tank (Martin & Moyce)", 3000,
      FS_SOLVER_MPS},
     build_mps_dam_break},
    {{"oil_water", "MPS: a layer of oil under a layer of water; the oil rises through it (Sec. 3.4)", 3000,
      FS_SOLVER_MPS},
     build_oil_water},
    {{"mps_obstacle", "MPS: a jet poured onto a box obstacle of wall particles, drained in a corner", 2500,
      FS_SOLVER_MPS},
     build_mps_obstacle},
    {{"spheric2",
      "SPHERIC Test 2: a dam break on a box (MARIN, Kleefsman et al. 2005), 3.22 x 1 x 1 m, with its four height "
      "probes and eight pressure sensors; the spacing follows from the particle count",
      20000, FS_SOLVER_CLAVET},
     build_spheric2},
};
#define NSCENES ((int)(sizeof SCENES / sizeof SCENES[0]))

int fs_scene_count(void) {
    return NSCENES;
}
const fs_scene_info *fs_scene_get(int i) {
    return (i >= 0 && i < NSCENES) ? &SCENES[i].info : NULL;
}
int fs_scene_find(const char *name) {
    for (int i = 0; i < NSCENES && name; i++)
        if (strcmp(SCENES[i].info.name, name) == 0) return i;
    return -1;
}

fs_status fs_world_load_scene(fs_world *w, const char *name, int n, fs_error *err) {
    int which = fs_scene_find(name);
    if (which < 0) {
        SETERR(err, "unknown scene '%s'", name ? name : "(null)");
        return FS_ERR_UNKNOWN;
    }
    if (n == 0) n = SCENES[which].info.default_particles;
    if (n < SCENE_MIN_PARTICLES || n > w->cap) {
        SETERR(err, "particles %d outside %d..%d", n, SCENE_MIN_PARTICLES, w->cap);
        return FS_ERR_RANGE;
    }
    const float s = SPACING;
    const scene_size z = {n, (float)n * s * s * s}; /* fluid volume */
    fs_status st = SCENES[which].build(w, &z, err);
    if (st != FS_OK) return st;
    snprintf(w->scene, sizeof w->scene, "%s", SCENES[which].info.name);
    w->scene_size = n;
    fs__grid_build(w);
    if (w->ops->prepare) w->ops->prepare(w);
    return FS_OK;
}
