/* validate.c - untrusted command fields -> a checked cmd: the schema of each
 * command kind (required and allowed fields, a checker per field) and the
 * builder of each kind's cmd (both edges use it). */
#include "validate.h"

#include <math.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Every field a command may carry: its name on the wire (msgpack and JSON),
 * its type, and where a cmd_fields stores it (the 'params' list in pname
 * and pvalue).  Constant data (any thread). */
#define FIELD(id, name, member, type) [id] = {name, type, offsetof(cmd_fields, member)}
const cmd_field_def cmd_field_defs[CF_COUNT] = {
    FIELD(CF_TYPE, "type", type, CFT_STR),
    FIELD(CF_RID, "rid", rid, CFT_UINT),
    FIELD(CF_POINT, "point", point, CFT_VEC3),
    FIELD(CF_DIRECTION, "direction", direction, CFT_VEC3),
    FIELD(CF_RADIUS, "radius", radius, CFT_NUM),
    FIELD(CF_STRENGTH, "strength", strength, CFT_NUM),
    FIELD(CF_MATERIAL, "material", material, CFT_STR),
    FIELD(CF_PARAM, "param", param, CFT_STR),
    FIELD(CF_VALUE, "value", value, CFT_NUM),
    FIELD(CF_PARAMS, "params", pname, CFT_PARAMS),
    FIELD(CF_NAME, "name", name, CFT_STR),
    FIELD(CF_PARTICLES, "particles", particles, CFT_INT),
    FIELD(CF_STEPS, "steps", steps, CFT_INT),
    FIELD(CF_SLOT, "slot", slot, CFT_INT),
    FIELD(CF_ENABLED, "enabled", enabled, CFT_BOOL),
    FIELD(CF_POS, "pos", pos, CFT_VEC3),
    FIELD(CF_SPEED, "speed", speed, CFT_NUM),
    FIELD(CF_RATE, "rate", rate, CFT_NUM),
    FIELD(CF_CAP, "cap", cap, CFT_INT),
    FIELD(CF_VISIBLE, "visible", visible, CFT_BOOL),
    FIELD(CF_TOKEN, "token", token, CFT_STR),
    FIELD(CF_OFFSET, "offset", offset, CFT_INT),
    FIELD(CF_LIMIT, "limit", limit, CFT_INT),
    FIELD(CF_ID, "id", id, CFT_UINT),
    FIELD(CF_SHAPE, "shape", shape, CFT_STR),
    FIELD(CF_SIZE, "size", size, CFT_VEC3),
    FIELD(CF_ROT, "rot", rot, CFT_VEC4),
    FIELD(CF_VEL, "vel", vel, CFT_VEC3),
    FIELD(CF_ANG_VEL, "ang_vel", ang_vel, CFT_VEC3),
    FIELD(CF_DENSITY, "density", density, CFT_NUM),
    FIELD(CF_STATIC, "static", is_static, CFT_BOOL),
    FIELD(CF_FRICTION, "friction", friction, CFT_NUM),
    FIELD(CF_IMPULSE, "impulse", impulse, CFT_VEC3),
    FIELD(CF_TARGET, "target", target, CFT_VEC3),
    FIELD(CF_SOLVER, "solver", solver, CFT_STR),
    FIELD(CF_DURATION, "duration", duration, CFT_NUM),
    FIELD(CF_KIND, "kind", kind, CFT_STR),
    FIELD(CF_TEMPERATURE, "temperature", temperature, CFT_NUM),
    FIELD(CF_MAX_MB, "max_mb", max_mb, CFT_NUM),
    FIELD(CF_MAX_SECONDS, "max_seconds", max_seconds, CFT_NUM),
    FIELD(CF_SID, "sid", sid, CFT_STR),
    FIELD(CF_STRIDE, "stride", stride, CFT_INT),
    FIELD(CF_MESH, "mesh", mesh, CFT_UINT),
    FIELD(CF_SCALE, "scale", scale, CFT_NUM),
    FIELD(CF_FIT, "fit", fit, CFT_BOOL),
    FIELD(CF_NORMAL, "normal", normal, CFT_VEC3),
    FIELD(CF_FULL, "full", full, CFT_BOOL),
};
#undef FIELD

/* The field's storage when its type is one of want's, else NULL. */
static void *field_at(cmd_fields *f, int field, uint32_t want) {
    if (field < 0 || field >= CF_COUNT || !(want & (1u << cmd_field_defs[field].type))) return NULL;
    return (char *)f + cmd_field_defs[field].offset;
}

char *cmd_field_str(cmd_fields *f, int field, size_t *cap) {
    *cap = field == CF_TOKEN ? sizeof f->token : field == CF_SID ? sizeof f->sid : CMD_NAME_LEN;
    return field_at(f, field, 1u << CFT_STR);
}

double *cmd_field_num(cmd_fields *f, int field) {
    return field_at(f, field, (1u << CFT_UINT) | (1u << CFT_INT) | (1u << CFT_NUM));
}

double *cmd_field_vec(cmd_fields *f, int field) {
    return field_at(f, field, (1u << CFT_VEC3) | (1u << CFT_VEC4));
}

bool *cmd_field_bool(cmd_fields *f, int field) {
    return field_at(f, field, 1u << CFT_BOOL);
}

const char *cmd_ftype_text(cmd_ftype t, bool json) {
    static const char *const text[] = {[CFT_STR] = "a string (under 32 bytes)",
                                       [CFT_UINT] = "a non-negative integer",
                                       [CFT_INT] = "an integer",
                                       [CFT_NUM] = "a number",
                                       [CFT_VEC3] = "an array of 3 numbers",
                                       [CFT_BOOL] = "a boolean",
                                       [CFT_PARAMS] = "a map of parameter names to numbers",
                                       [CFT_VEC4] = "an array of 4 numbers"};
    if (t == CFT_PARAMS && json) return "an object";
    return (unsigned)t < sizeof text / sizeof text[0] ? text[t] : "?";
}

int cmd_field_find(const char *name, size_t len) {
    for (int i = 0; i < CF_COUNT; i++)
        if (strlen(cmd_field_defs[i].name) == len && !memcmp(cmd_field_defs[i].name, name, len)) return i;
    return -1;
}

#define B(f) CF_BIT(f)
#define K(k) (1ull << (k))
#define COMMON (B(CF_TYPE) | B(CF_RID) | B(CF_SID))
#define BODY_OPS (K(CMD_BODY_DESTROY) | K(CMD_BODY_IMPULSE) | K(CMD_BODY_GRAB) | K(CMD_BODY_DRAG) | K(CMD_BODY_RELEASE))

/* ---- Checkers ---------------------------------------------------------------- */

static bool in_range(double v, double lo, double hi) {
    return isfinite(v) && v >= lo && v <= hi;
}

/* In (0, hi], also as the float the command carries: a double such as 1e-300
 * is positive but becomes 0 (found by fuzz_ws_command). */
static bool positive(double v, double hi) {
    return in_range(v, 0, hi) && (float)v > 0;
}

static bool is_int(double v, double lo, double hi) {
    return in_range(v, lo, hi) && v == floor(v);
}

/* n components, each finite and within +-lim. */
static bool finite_n(const double *v, int n, double lim) {
    for (int i = 0; i < n; i++)
        if (!isfinite(v[i]) || fabs(v[i]) > lim) return false;
    return true;
}

static double norm2(const double *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) s += v[i] * v[i];
    return s;
}

static const char *const shape_names[] = {"sphere", "box", "capsule", "mesh"};
static const fs_shape shape_kinds[] = {FS_SHAPE_SPHERE, FS_SHAPE_BOX, FS_SHAPE_CAPSULE, FS_SHAPE_MESH};
#define SHAPE_MESH 3 /* shape_names' index of "mesh" */

static int shape_of(const char *name) /* -1 when unknown */
{
    for (int i = 0; i < 4; i++)
        if (!strcmp(name, shape_names[i])) return i;
    return -1;
}

/* The components of 'size' that matter: a sphere's radius and a box's three
 * half extents in [lo, hi], a capsule's radius in [lo, hi] and its half
 * length in (0, hi]; the others in [0, hi].  A mesh takes no size (its
 * builder refuses one). */
static bool size_ok(const double *size, const char *shape, double lo, double hi) {
    int sh = shape_of(shape);
    if (sh == SHAPE_MESH) return true;
    int need = sh == 1 ? 3 : sh == 2 ? 2 : 1;
    for (int i = 0; i < 3; i++) {
        const bool radius = i == 0 || sh == 1;
        if (!in_range(size[i], 0, hi) || (i < need && !positive(size[i], hi)) || (radius && size[i] < lo)) return false;
    }
    return true;
}

/* How a field's value is checked. */
typedef enum checker {
    CHK_VEC,      /* every component finite and within +-hi */
    CHK_NONZERO,  /* a vector whose length is not (nearly) zero */
    CHK_POSITIVE, /* in (0, hi] */
    CHK_RANGE,    /* in [lo, hi] */
    CHK_INT,      /* an integer in [lo, hi] */
    CHK_SOLVER,   /* a solver's name (fs_solver_find) */
    CHK_SHAPE,    /* a body shape's name */
    CHK_SIZE,     /* a body's size for its shape (size_ok); the message is given lo and hi */
    CHK_SPAN,     /* in [lo, hi]; the message is given lo and hi */
} checker;

/* One field's check in the kinds that carry it, run when the field is
 * present (required fields always are), in the order of this table.  The
 * message is a format given the kind's name as prefix (unless bare) and
 * hi twice (the field's string for CHK_SOLVER).  Constant data (any thread). */
static const struct field_check {
    uint64_t kinds; /* K(CMD_x) */
    int field;
    checker chk;
    double lo, hi;
    const char *msg;
    bool bare; /* no "kind: " before the message */
} checks[] = {
    {K(CMD_PUSH) | K(CMD_HEAT), CF_POINT, CHK_VEC, 0, CMD_MAX_COORD, "'point' must be 3 finite numbers within +-%g", 0},
    {K(CMD_PUSH), CF_DIRECTION, CHK_VEC, 0, CMD_MAX_COORD, "'direction' must be 3 finite numbers", 0},
    {K(CMD_PUSH), CF_DIRECTION, CHK_NONZERO, 0, 0, "'direction' must not be zero", 0},
    {K(CMD_PUSH), CF_RADIUS, CHK_POSITIVE, 0, CMD_MAX_RADIUS, "'radius' must be in (0, %g]", 0},
    {K(CMD_PUSH), CF_STRENGTH, CHK_RANGE, -CMD_MAX_STRENGTH, CMD_MAX_STRENGTH, "'strength' must be in [-%g, %g] m/s",
     0},
    {K(CMD_HEAT), CF_RADIUS, CHK_POSITIVE, 0, CMD_MAX_HEAT_RADIUS, "'radius' must be in (0, %g] m", 0},
    {K(CMD_HEAT), CF_RATE, CHK_RANGE, -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE, "'rate' must be in [-%g, %g] K/s", 0},
    {K(CMD_HEAT), CF_DURATION, CHK_POSITIVE, 0, CMD_MAX_HEAT_S, "'duration' must be in (0, %g] s", 0},
    {K(CMD_SET_SOLVER), CF_NAME, CHK_SOLVER, 0, 0, "unknown solver '%.32s' (GET /api/solvers lists them)", 0},
    {K(CMD_LOAD_SCENE), CF_SOLVER, CHK_SOLVER, 0, 0, "unknown solver '%.32s' (GET /api/solvers lists them)", 0},
    {K(CMD_LOAD_SCENE), CF_PARTICLES, CHK_INT, 0, CMD_MAX_PARTICLES, "'particles' must be an integer in [0, %.0f]", 0},
    {K(CMD_HEATER), CF_SLOT, CHK_INT, 0, CMD_HEATER_SLOTS - 1, "'slot' must be an integer in [0, %.0f]", 0},
    {K(CMD_STEP), CF_STEPS, CHK_INT, 1, CMD_MAX_STEPS, "'steps' must be an integer in [1, %.0f]", 0},
    {K(CMD_PACE), CF_STRIDE, CHK_INT, 1, 4, "'stride' must be 1, 2 or 4", 0},
    {K(CMD_EMITTER), CF_SLOT, CHK_INT, 0, FS_MAX_EMITTERS - 1, "'slot' must be an integer in [0, %.0f]", 0},
    {K(CMD_GET_PARTICLES), CF_OFFSET, CHK_INT, 0, CMD_MAX_PARTICLES, "'offset' must be an integer in [0, %.0f]", 1},
    {K(CMD_GET_PARTICLES), CF_LIMIT, CHK_INT, 1, 10000, "'limit' must be an integer in [1, %.0f]", 1},
    {K(CMD_BODY_CREATE), CF_SHAPE, CHK_SHAPE, 0, 0, "'shape' must be sphere, box, capsule or mesh", 0},
    {K(CMD_BODY_CREATE), CF_SIZE, CHK_SIZE, CMD_MIN_BODY_SIZE, CMD_MAX_BODY_SIZE,
     "'size' components must be in [%g, %g] m (a capsule's half length above 0)", 0},
    {K(CMD_BODY_CREATE), CF_POS, CHK_VEC, 0, CMD_MAX_COORD, "'pos' must be 3 finite numbers", 0},
    {K(CMD_BODY_CREATE), CF_ROT, CHK_VEC, 0, 1e6, "'rot' must be 4 finite numbers (w, x, y, z)", 0},
    {K(CMD_BODY_CREATE), CF_ROT, CHK_NONZERO, 0, 0, "'rot' must not be zero", 0},
    {K(CMD_BODY_CREATE), CF_VEL, CHK_VEC, 0, CMD_MAX_SPEED, "'vel' and 'ang_vel' must be 3 numbers within +-%g", 0},
    {K(CMD_BODY_CREATE), CF_ANG_VEL, CHK_VEC, 0, CMD_MAX_SPEED, "'vel' and 'ang_vel' must be 3 numbers within +-%g", 0},
    {K(CMD_BODY_CREATE), CF_DENSITY, CHK_SPAN, CMD_MIN_DENSITY, CMD_MAX_DENSITY, "'density' must be in [%g, %g] kg/m^3",
     0},
    {K(CMD_BODY_CREATE), CF_FRICTION, CHK_RANGE, 0, CMD_MAX_FRICTION, "'friction' must be in [0, %g]", 0},
    {K(CMD_BODY_CREATE) | K(CMD_OBSTACLE_ADD), CF_MESH, CHK_INT, 1, 4294967295.0,
     "'mesh' must be a mesh id (POST /api/meshes answers one)", 0},
    {K(CMD_BODY_CREATE), CF_SCALE, CHK_SPAN, FS_OBSTACLE_MIN_SCALE, FS_OBSTACLE_MAX_SCALE,
     "'scale' must be in [%g, %g]", 0},
    {BODY_OPS, CF_ID, CHK_INT, 0, 4294967295.0, "'id' must be an integer in [0, %.0f]", 0},
    {BODY_OPS, CF_POINT, CHK_VEC, 0, CMD_MAX_COORD, "'point' must be 3 finite numbers", 0},
    {BODY_OPS, CF_TARGET, CHK_VEC, 0, CMD_MAX_COORD, "'target' must be 3 finite numbers", 0},
    {BODY_OPS, CF_IMPULSE, CHK_VEC, 0, CMD_MAX_IMPULSE, "'impulse' must be 3 numbers within +-%g N s", 0},
    {K(CMD_OBSTACLE_ADD), CF_POS, CHK_VEC, 0, CMD_MAX_COORD, "'pos' must be 3 finite numbers within +-%g m", 0},
    {K(CMD_OBSTACLE_ADD), CF_ROT, CHK_VEC, 0, 1e6, "'rot' must be 4 finite numbers (w, x, y, z)", 0},
    {K(CMD_OBSTACLE_ADD), CF_ROT, CHK_NONZERO, 0, 0, "'rot' must not be zero", 0},
    {K(CMD_OBSTACLE_ADD), CF_SCALE, CHK_SPAN, FS_OBSTACLE_MIN_SCALE, FS_OBSTACLE_MAX_SCALE,
     "'scale' must be in [%g, %g]", 0},
    {K(CMD_PROBE_ADD), CF_POS, CHK_VEC, 0, CMD_MAX_COORD, "'pos' must be 3 finite numbers within +-%g m", 0},
    {K(CMD_PROBE_ADD), CF_NORMAL, CHK_VEC, 0, CMD_MAX_COORD, "'normal' must be 3 finite numbers", 0},
    {K(CMD_PROBE_ADD), CF_NORMAL, CHK_NONZERO, 0, 0, "'normal' must not be zero", 0},
    {K(CMD_PROBE_ADD), CF_RADIUS, CHK_RANGE, 0, CMD_MAX_COORD, "'radius' must be a number in [0, %g] m", 0},
    {K(CMD_OBSTACLE_REMOVE), CF_ID, CHK_INT, 0, 4294967295.0, "'id' must be an integer in [0, %.0f]", 0},
    {K(CMD_RECORD_START), CF_MAX_MB, CHK_RANGE, CMD_MIN_RECORD_MB, CMD_MAX_RECORD_MB,
     "'max_mb' must be a number in [0.1, %g] (MB kept; leave it out for the server's --record-max-mb)", 0},
    {K(CMD_RECORD_START), CF_MAX_SECONDS, CHK_RANGE, CMD_MIN_RECORD_S, CMD_MAX_RECORD_S,
     "'max_seconds' must be a number in [0.1, %g] (simulated seconds kept; leave it out for the server's "
     "--record-max-s)",
     0},
};

/* The decoders' accessors, for reading (nothing is written through them). */
static const double *num_of(const cmd_fields *f, int field) {
    return cmd_field_num((cmd_fields *)f, field);
}

static const double *vec_of(const cmd_fields *f, int field) {
    return cmd_field_vec((cmd_fields *)f, field);
}

static int vec_len(int field) {
    return cmd_field_defs[field].type == CFT_VEC4 ? 4 : 3;
}

static bool check_ok(const struct field_check *c, const cmd_fields *f) {
    size_t cap;
    switch (c->chk) {
    case CHK_VEC:
        return finite_n(vec_of(f, c->field), vec_len(c->field), c->hi);
    case CHK_NONZERO:
        return norm2(vec_of(f, c->field), vec_len(c->field)) > 1e-12;
    case CHK_POSITIVE:
        return positive(*num_of(f, c->field), c->hi);
    case CHK_RANGE:
    case CHK_SPAN:
        return in_range(*num_of(f, c->field), c->lo, c->hi);
    case CHK_INT:
        return is_int(*num_of(f, c->field), c->lo, c->hi);
    case CHK_SOLVER:
        return fs_solver_find(cmd_field_str((cmd_fields *)f, c->field, &cap)) >= 0;
    case CHK_SHAPE:
        return shape_of(f->shape) >= 0;
    case CHK_SIZE:
        return size_ok(f->size, f->shape, c->lo, c->hi);
    }
    return false;
}

/* Writes every error text: "<kind>: " (unless kind is NULL), then the
 * message.  Returns -1. */
static int fail(char *err, size_t errlen, const char *kind, const char *fmt, ...) {
    size_t at = 0;
    if (kind) {
        int w = snprintf(err, errlen, "%s: ", kind);
        at = w > 0 ? (size_t)w : 0;
    }
    if (at < errlen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err + at, errlen - at, fmt, ap);
        va_end(ap);
    }
    return -1;
}

static int check_fail(const struct field_check *c, const cmd_fields *f, const char *k, char *err, size_t errlen) {
    size_t cap;
    if (c->chk == CHK_SOLVER) return fail(err, errlen, k, c->msg, cmd_field_str((cmd_fields *)f, c->field, &cap));
    if (c->chk == CHK_SIZE || c->chk == CHK_SPAN) return fail(err, errlen, c->bare ? NULL : k, c->msg, c->lo, c->hi);
    return fail(err, errlen, c->bare ? NULL : k, c->msg, c->hi, c->hi);
}

/* The lowest field in mask, -1 when none. */
static int first_field(uint64_t mask) {
    for (int i = 0; i < CF_COUNT; i++)
        if (mask & B(i)) return i;
    return -1;
}

static bool has(const cmd_fields *f, int field) {
    return (f->present & B(field)) != 0;
}

static void to_float(float *dst, const double *src, int n) {
    for (int i = 0; i < n; i++) dst[i] = (float)src[i];
}

/* src scaled to unit length (its length is known not to be zero). */
static void to_unit(float dst[3], const double src[3]) {
    double inv = 1.0 / sqrt(norm2(src, 3));
    for (int i = 0; i < 3; i++) dst[i] = (float)(src[i] * inv);
}

/* ---- Builders: checked fields -> the kind's cmd, with the checks that tie
 * fields together ------------------------------------------------------------- */

typedef int (*cmd_builder)(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen);

static int build_push(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    to_float(out->u.push.point, f->point, 3);
    to_unit(out->u.push.dir, f->direction);
    out->u.push.radius = (float)f->radius;
    out->u.push.strength = (float)f->strength;
    return 0;
}

static int build_set_param(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    bool single = f->present & (B(CF_PARAM) | B(CF_VALUE));
    if (single == has(f, CF_PARAMS)) return fail(err, errlen, k, "give either 'param' and 'value' or 'params'");
    snprintf(out->u.set_param.material, CMD_NAME_LEN, "%s", f->material);
    if (single) {
        if (!has(f, CF_PARAM) || !has(f, CF_VALUE)) return fail(err, errlen, k, "'param' and 'value' go together");
        if (!isfinite(f->value) || fabs(f->value) > 3.0e38) /* also within float's range */
            return fail(err, errlen, k, "'value' must be finite");
        out->u.set_param.count = 1;
        snprintf(out->u.set_param.param[0], CMD_NAME_LEN, "%s", f->param);
        out->u.set_param.value[0] = (float)f->value;
        return 0;
    }
    if (f->n_params < 1) return fail(err, errlen, k, "'params' is empty");
    if (f->n_params > FS_P_COUNT) /* the decoders stop at FS_P_COUNT; never trusted */
        return fail(err, errlen, k, "'params' holds at most %d entries", FS_P_COUNT);
    for (int i = 0; i < f->n_params; i++) {
        if (!isfinite(f->pvalue[i]) || fabs(f->pvalue[i]) > 3.0e38)
            return fail(err, errlen, k, "value of '%.32s' must be finite", f->pname[i]);
        for (int j = 0; j < i; j++)
            if (!strcmp(f->pname[i], f->pname[j])) return fail(err, errlen, k, "'%.32s' given twice", f->pname[i]);
        snprintf(out->u.set_param.param[i], CMD_NAME_LEN, "%s", f->pname[i]);
        out->u.set_param.value[i] = (float)f->pvalue[i];
    }
    out->u.set_param.count = f->n_params;
    return 0;
}

static int build_load_scene(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.scene.solver = has(f, CF_SOLVER) ? fs_solver_find(f->solver) : -1;
    snprintf(out->u.scene.name, CMD_NAME_LEN, "%s", f->name);
    if (has(f, CF_PARTICLES)) out->u.scene.particles = (int)f->particles;
    return 0;
}

static int build_set_solver(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.solver.solver = fs_solver_find(f->name);
    return 0;
}

/* A recording's name is a folder in the recordings folder: letters, digits,
 * '-', '_' and '.', not starting with '.', so no path leaves the folder. */
static int build_record_start(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    if (has(f, CF_NAME)) {
        size_t n = strlen(f->name);
        bool ok = n > 0 && f->name[0] != '.';
        for (size_t i = 0; i < n && ok; i++) {
            char c = f->name[i];
            ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_' ||
                 c == '.';
        }
        if (!ok)
            return fail(err, errlen, k, "'name' must be 1-31 letters, digits, '-', '_' or '.', not starting with '.'");
        snprintf(out->u.record.name, sizeof out->u.record.name, "%s", f->name);
    }
    out->u.record.max_mb = has(f, CF_MAX_MB) ? f->max_mb : 0;
    out->u.record.max_seconds = has(f, CF_MAX_SECONDS) ? f->max_seconds : 0;
    return 0;
}

static int build_heat(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.heat.duration = has(f, CF_DURATION) ? (float)f->duration : CMD_DEFAULT_HEAT_S;
    to_float(out->u.heat.point, f->point, 3);
    out->u.heat.radius = (float)f->radius;
    out->u.heat.rate = (float)f->rate;
    return 0;
}

static int build_heater(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    out->u.heater.slot = (int)f->slot;
    out->u.heater.enabled = has(f, CF_ENABLED) ? f->enabled : true;
    uint64_t defmask = B(CF_KIND) | B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_TEMPERATURE);
    if (!(f->present & defmask)) return has(f, CF_ENABLED) ? 0 : fail(err, errlen, k, "give 'enabled' or a definition");
    bool floor = !strcmp(f->kind, "floor");
    if (!has(f, CF_KIND) || (!floor && strcmp(f->kind, "sphere")))
        return fail(err, errlen, k, "'kind' must be 'floor' or 'sphere'");
    int miss = first_field((B(CF_RADIUS) | B(CF_RATE) | (floor ? B(CF_TEMPERATURE) : B(CF_POINT))) & ~f->present);
    if (miss >= 0) return fail(err, errlen, k, "a %s heater needs '%s'", f->kind, cmd_field_defs[miss].name);
    if (has(f, CF_POINT) && !finite_n(f->point, 3, CMD_MAX_COORD))
        return fail(err, errlen, k, "'point' must be 3 finite numbers");
    if (!positive(f->radius, CMD_MAX_HEAT_RADIUS) || !in_range(f->rate, -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE) ||
        (has(f, CF_TEMPERATURE) && !in_range(f->temperature, CMD_MIN_TEMPERATURE, CMD_MAX_TEMPERATURE)))
        return fail(err, errlen, k, "radius in (0, %g] m, rate in [-%g, %g], temperature in [%g, %g] C",
                    CMD_MAX_HEAT_RADIUS, CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE, CMD_MIN_TEMPERATURE,
                    CMD_MAX_TEMPERATURE);
    if (floor && f->rate < 0)
        return fail(err, errlen, k, "a floor's 'rate' (how fast it pulls towards its temperature, 1/s) must be >= 0");
    out->u.heater.has_def = true;
    out->u.heater.kind = floor ? FS_HEAT_FLOOR : FS_HEAT_SPHERE;
    to_float(out->u.heater.point, f->point, 3);
    out->u.heater.radius = (float)f->radius;
    out->u.heater.rate = (float)f->rate;
    out->u.heater.temperature = (float)f->temperature;
    return 0;
}

static int build_step(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.step.steps = has(f, CF_STEPS) ? (int)f->steps : 1;
    return 0;
}

static int build_pace(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    if (f->stride == 3) return fail(err, errlen, k, "'stride' must be 1, 2 or 4");
    out->u.pace.stride = (int)f->stride;
    return 0;
}

static int build_detail(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.detail.full = f->full;
    return 0;
}

static int build_emitter(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    out->u.emitter.slot = (int)f->slot;
    out->u.emitter.enabled = has(f, CF_ENABLED) ? f->enabled : true;
    uint64_t defmask =
        B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) | B(CF_RATE) | B(CF_CAP) | B(CF_MATERIAL);
    if (!(f->present & defmask)) return has(f, CF_ENABLED) ? 0 : fail(err, errlen, k, "give 'enabled' or a definition");
    int miss = first_field((B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) | B(CF_RATE)) & ~f->present);
    if (miss >= 0) return fail(err, errlen, k, "a definition needs '%s'", cmd_field_defs[miss].name);
    if (f->pos_nil || !finite_n(f->pos, 3, CMD_MAX_COORD) || !finite_n(f->direction, 3, CMD_MAX_COORD))
        return fail(err, errlen, k, "'pos' and 'direction' must be 3 finite numbers");
    if (!(norm2(f->direction, 3) > 1e-12)) return fail(err, errlen, k, "'direction' must not be zero");
    if (!in_range(f->speed, 0, CMD_MAX_SPEED) || !positive(f->radius, CMD_MAX_RADIUS) ||
        !in_range(f->rate, 0, CMD_MAX_RATE))
        return fail(err, errlen, k, "speed in [0, %g], radius in (0, %g], rate in [0, %g]", CMD_MAX_SPEED,
                    CMD_MAX_RADIUS, CMD_MAX_RATE);
    if (has(f, CF_CAP) && !is_int(f->cap, 0, CMD_MAX_PARTICLES))
        return fail(err, errlen, k, "'cap' must be an integer in [0, %d]", CMD_MAX_PARTICLES);
    out->u.emitter.has_def = true;
    to_float(out->u.emitter.pos, f->pos, 3);
    to_unit(out->u.emitter.dir, f->direction);
    out->u.emitter.speed = (float)f->speed;
    out->u.emitter.radius = (float)f->radius;
    out->u.emitter.rate = (float)f->rate;
    out->u.emitter.cap = has(f, CF_CAP) ? (int)f->cap : 0;
    snprintf(out->u.emitter.material, CMD_NAME_LEN, "%s", has(f, CF_MATERIAL) ? f->material : "water");
    return 0;
}

static int build_cursor(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    out->u.cursor.visible = !f->pos_nil && (!has(f, CF_VISIBLE) || f->visible);
    if (f->pos_nil) return 0;
    if (!finite_n(f->pos, 3, CMD_MAX_COORD)) return fail(err, errlen, k, "'pos' must be 3 finite numbers or nil");
    to_float(out->u.cursor.pos, f->pos, 3);
    return 0;
}

static int build_auth(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    snprintf(out->u.auth.token, sizeof out->u.auth.token, "%s", f->token);
    return 0;
}

static int build_get_particles(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.particles.offset = has(f, CF_OFFSET) ? (int)f->offset : 0;
    out->u.particles.limit = has(f, CF_LIMIT) ? (int)f->limit : 1000;
    return 0;
}

/* A body: a mesh body names a stored mesh (and may scale it) and takes no
 * size; the other shapes take a size and no mesh. */
static int build_body_create(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    const bool mesh = shape_of(f->shape) == SHAPE_MESH;
    if (mesh && !has(f, CF_MESH)) return fail(err, errlen, k, "missing field 'mesh' (a mesh body names a stored mesh)");
    if (mesh && has(f, CF_SIZE))
        return fail(err, errlen, k, "a mesh body takes no 'size' (its mesh and 'scale' give it)");
    if (!mesh && !has(f, CF_SIZE)) return fail(err, errlen, k, "missing field 'size'");
    if (!mesh && (has(f, CF_MESH) || has(f, CF_SCALE)))
        return fail(err, errlen, k, "'mesh' and 'scale' are a mesh body's (\"shape\": \"mesh\")");
    out->u.body_create.shape = shape_kinds[shape_of(f->shape)];
    out->u.body_create.mesh = mesh ? (uint32_t)f->mesh : 0;
    out->u.body_create.scale = has(f, CF_SCALE) ? (float)f->scale : 1.0f;
    to_float(out->u.body_create.size, f->size, 3);
    double q[4] = {1, 0, 0, 0};
    if (has(f, CF_ROT)) {
        double len = sqrt(norm2(f->rot, 4));
        for (int i = 0; i < 4; i++) q[i] = f->rot[i] / len;
    }
    to_float(out->u.body_create.rot, q, 4);
    to_float(out->u.body_create.pos, f->pos, 3);
    static const double zero[3] = {0, 0, 0};
    to_float(out->u.body_create.vel, has(f, CF_VEL) ? f->vel : zero, 3);
    to_float(out->u.body_create.ang_vel, has(f, CF_ANG_VEL) ? f->ang_vel : zero, 3);
    out->u.body_create.has_density = has(f, CF_DENSITY);
    out->u.body_create.density = has(f, CF_DENSITY) ? (float)f->density : 0.0f;
    out->u.body_create.has_friction = has(f, CF_FRICTION);
    out->u.body_create.friction = has(f, CF_FRICTION) ? (float)f->friction : 0.0f;
    out->u.body_create.is_static = has(f, CF_STATIC) && f->is_static;
    return 0;
}

static int build_body(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.body.id = (uint32_t)f->id;
    to_float(out->u.body.point, f->point, 3);
    to_float(out->u.body.vec, has(f, CF_IMPULSE) ? f->impulse : f->target, 3);
    return 0;
}

/* An obstacle: a stored mesh, its rotation (normalised), and either a
 * placement (pos, scale) or fit (scaled and centred into the domain's box
 * on the sim thread, pos then naming the centre). */
static int build_obstacle_add(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    bool fit = has(f, CF_FIT) && f->fit;
    if (fit && has(f, CF_SCALE))
        return fail(err, errlen, k, "give 'scale' or 'fit': true, not both (fit chooses the scale)");
    if (!fit && !has(f, CF_POS)) return fail(err, errlen, k, "missing field 'pos' (or 'fit': true)");
    out->u.obstacle.mesh = (uint32_t)f->mesh;
    out->u.obstacle.fit = fit;
    out->u.obstacle.has_pos = has(f, CF_POS);
    static const double zero[3] = {0, 0, 0};
    to_float(out->u.obstacle.pos, has(f, CF_POS) ? f->pos : zero, 3);
    double q[4] = {1, 0, 0, 0};
    if (has(f, CF_ROT)) {
        double len = sqrt(norm2(f->rot, 4));
        for (int i = 0; i < 4; i++) q[i] = f->rot[i] / len;
    }
    to_float(out->u.obstacle.rot, q, 4);
    out->u.obstacle.scale = has(f, CF_SCALE) ? (float)f->scale : 1.0f;
    return 0;
}

static int build_obstacle_remove(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    (void)k, (void)err, (void)errlen;
    out->u.obstacle.id = (uint32_t)f->id;
    return 0;
}

/* A probe: its name (checked again by the world: characters, uniqueness),
 * kind "height" or "pressure" (which needs a normal), position, radius. */
static int build_probe_add(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    int kind = !strcmp(f->kind, "height") ? FS_PROBE_HEIGHT : !strcmp(f->kind, "pressure") ? FS_PROBE_PRESSURE : -1;
    if (kind < 0) return fail(err, errlen, k, "'kind' must be \"height\" or \"pressure\"");
    if (kind == FS_PROBE_PRESSURE && !has(f, CF_NORMAL))
        return fail(err, errlen, k, "a pressure probe needs 'normal' (the face's, pointing into the fluid)");
    if (!f->name[0] || strlen(f->name) >= FS_PROBE_NAME_LEN)
        return fail(err, errlen, k, "'name' must be 1 to %d characters", FS_PROBE_NAME_LEN - 1);
    snprintf(out->u.probe.name, sizeof out->u.probe.name, "%s", f->name);
    out->u.probe.kind = kind;
    to_float(out->u.probe.pos, f->pos, 3);
    static const double up[3] = {0, 1, 0};
    to_float(out->u.probe.normal, has(f, CF_NORMAL) ? f->normal : up, 3);
    out->u.probe.radius = has(f, CF_RADIUS) ? (float)f->radius : 0.0f;
    return 0;
}

static int build_probe_remove(const cmd_fields *f, cmd *out, const char *k, char *err, size_t errlen) {
    if (!f->name[0] || strlen(f->name) >= FS_PROBE_NAME_LEN)
        return fail(err, errlen, k, "'name' must be 1 to %d characters", FS_PROBE_NAME_LEN - 1);
    snprintf(out->u.probe.name, sizeof out->u.probe.name, "%s", f->name);
    return 0;
}

/* Which client-facing kinds exist, which fields each requires and allows,
 * and what builds its cmd (NULL: the kind alone).  Constant data (any thread). */
static const struct kind_schema {
    cmd_kind kind;
    uint64_t required, allowed;
    cmd_builder build;
} schemas[] = {
    {CMD_PUSH, B(CF_POINT) | B(CF_RADIUS) | B(CF_STRENGTH) | B(CF_DIRECTION),
     B(CF_POINT) | B(CF_RADIUS) | B(CF_STRENGTH) | B(CF_DIRECTION), build_push},
    {CMD_SET_PARAM, B(CF_MATERIAL), B(CF_MATERIAL) | B(CF_PARAM) | B(CF_VALUE) | B(CF_PARAMS), build_set_param},
    {CMD_LOAD_SCENE, B(CF_NAME), B(CF_NAME) | B(CF_PARTICLES) | B(CF_SOLVER), build_load_scene},
    {CMD_SET_SOLVER, B(CF_NAME), B(CF_NAME), build_set_solver},
    {CMD_HEAT, B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE), B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_DURATION),
     build_heat},
    {CMD_GET_SNAPSHOT, 0, 0, NULL},
    {CMD_HEATER, B(CF_SLOT),
     B(CF_SLOT) | B(CF_KIND) | B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_TEMPERATURE) | B(CF_ENABLED),
     build_heater},
    {CMD_PAUSE, 0, 0, NULL},
    {CMD_RESUME, 0, 0, NULL},
    {CMD_STEP, 0, B(CF_STEPS), build_step},
    {CMD_EMITTER, B(CF_SLOT),
     B(CF_SLOT) | B(CF_ENABLED) | B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) | B(CF_RATE) | B(CF_CAP) |
         B(CF_MATERIAL),
     build_emitter},
    {CMD_CURSOR, B(CF_POS), B(CF_POS) | B(CF_VISIBLE), build_cursor},
    {CMD_AUTH, B(CF_TOKEN), B(CF_TOKEN), build_auth},
    {CMD_GET_PARTICLES, 0, B(CF_OFFSET) | B(CF_LIMIT), build_get_particles},
    {CMD_BODY_CREATE, B(CF_SHAPE) | B(CF_POS),
     B(CF_SHAPE) | B(CF_SIZE) | B(CF_POS) | B(CF_ROT) | B(CF_VEL) | B(CF_ANG_VEL) | B(CF_DENSITY) | B(CF_STATIC) |
         B(CF_FRICTION) | B(CF_MESH) | B(CF_SCALE),
     build_body_create},
    {CMD_BODY_DESTROY, B(CF_ID), B(CF_ID), build_body},
    {CMD_BODY_IMPULSE, B(CF_ID) | B(CF_POINT) | B(CF_IMPULSE), B(CF_ID) | B(CF_POINT) | B(CF_IMPULSE), build_body},
    {CMD_BODY_GRAB, B(CF_ID) | B(CF_POINT) | B(CF_TARGET), B(CF_ID) | B(CF_POINT) | B(CF_TARGET), build_body},
    {CMD_BODY_DRAG, B(CF_ID) | B(CF_TARGET), B(CF_ID) | B(CF_TARGET), build_body},
    {CMD_BODY_RELEASE, B(CF_ID), B(CF_ID), build_body},
    {CMD_GET_BODIES, 0, 0, NULL},
    {CMD_KEYFRAME, 0, 0, NULL},
    {CMD_RECORD_START, 0, B(CF_NAME) | B(CF_MAX_MB) | B(CF_MAX_SECONDS), build_record_start},
    {CMD_RECORD_STOP, 0, 0, NULL},
    {CMD_PACE, B(CF_STRIDE), B(CF_STRIDE), build_pace},
    {CMD_OBSTACLE_ADD, B(CF_MESH), B(CF_MESH) | B(CF_POS) | B(CF_ROT) | B(CF_SCALE) | B(CF_FIT), build_obstacle_add},
    {CMD_OBSTACLE_REMOVE, B(CF_ID), B(CF_ID), build_obstacle_remove},
    {CMD_GET_OBSTACLES, 0, 0, NULL},
    {CMD_PROBE_ADD, B(CF_NAME) | B(CF_KIND) | B(CF_POS),
     B(CF_NAME) | B(CF_KIND) | B(CF_POS) | B(CF_NORMAL) | B(CF_RADIUS), build_probe_add},
    {CMD_PROBE_REMOVE, B(CF_NAME), B(CF_NAME), build_probe_remove},
    {CMD_DETAIL, B(CF_FULL), B(CF_FULL), build_detail},
};

/* A page's session id: CMD_SID_MIN.. characters of the URL-safe base64
 * alphabet (the decoder already bounded its length). */
static bool sid_ok(const char *sid) {
    size_t n = 0;
    for (; sid[n]; n++) {
        char ch = sid[n];
        if (!((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_' ||
              ch == '-'))
            return false;
    }
    return n >= CMD_SID_MIN;
}

/* ---- The generic check ----------------------------------------------------------- */

int cmd_from_fields(const cmd_fields *f, cmd *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (has(f, CF_RID)) {
        if (!is_int(f->rid, 0, 4294967295.0))
            return fail(err, errlen, NULL, "'rid' must be an integer in [0, 4294967295]");
        out->rid = (uint32_t)f->rid;
    }
    if (has(f, CF_SID)) {
        if (!sid_ok(f->sid))
            return fail(err, errlen, NULL, "'sid' must be %d to %d characters of A-Z a-z 0-9 _ -", CMD_SID_MIN,
                        CMD_SID_LEN - 1);
        cmd_strlcpy(out->sid, sizeof out->sid, f->sid);
    }
    if (!has(f, CF_TYPE)) return fail(err, errlen, NULL, "missing field 'type'");
    const struct kind_schema *s = NULL;
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
        if (!strcmp(cmd_kind_name(schemas[i].kind), f->type)) s = &schemas[i];
    if (!s) return fail(err, errlen, NULL, "unknown command '%.32s'", f->type);
    const char *k = f->type;
    int bad = first_field(f->present & ~(s->allowed | COMMON));
    if (bad >= 0) return fail(err, errlen, k, "unexpected field '%s'", cmd_field_defs[bad].name);
    bad = first_field(s->required & ~f->present);
    if (bad >= 0) return fail(err, errlen, k, "missing field '%s'", cmd_field_defs[bad].name);
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        const struct field_check *c = &checks[i];
        if ((c->kinds & K(s->kind)) && has(f, c->field) && !check_ok(c, f)) return check_fail(c, f, k, err, errlen);
    }
    out->kind = s->kind;
    if (s->build && s->build(f, out, k, err, errlen)) return -1;
    /* Every command carries a request id, except the fire-and-forget ones
     * that get no reply on success. */
    if (!has(f, CF_RID) && s->kind != CMD_CURSOR && s->kind != CMD_BODY_DRAG && s->kind != CMD_KEYFRAME &&
        s->kind != CMD_PACE && s->kind != CMD_DETAIL)
        return fail(err, errlen, k, "missing field 'rid' (the request id the reply echoes)");
    return 0;
}
