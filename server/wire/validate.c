/* validate.c - untrusted command fields -> a checked cmd: the schema of each
 * command kind and the range of each field (both edges use it). */
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const cmd_field_names[CF_COUNT] = {
    [CF_TYPE] = "type",       [CF_RID] = "rid",           [CF_POINT] = "point",
    [CF_DIRECTION] = "direction", [CF_RADIUS] = "radius", [CF_STRENGTH] = "strength",
    [CF_MATERIAL] = "material", [CF_PARAM] = "param",     [CF_VALUE] = "value",
    [CF_PARAMS] = "params",   [CF_NAME] = "name",         [CF_PARTICLES] = "particles",
    [CF_STEPS] = "steps",     [CF_SLOT] = "slot",         [CF_ENABLED] = "enabled",
    [CF_POS] = "pos",         [CF_SPEED] = "speed",       [CF_RATE] = "rate",
    [CF_CAP] = "cap",         [CF_VISIBLE] = "visible",   [CF_TOKEN] = "token",
    [CF_OFFSET] = "offset",   [CF_LIMIT] = "limit",           [CF_ID] = "id",
    [CF_SHAPE] = "shape",     [CF_SIZE] = "size",             [CF_ROT] = "rot",
    [CF_VEL] = "vel",         [CF_ANG_VEL] = "ang_vel",       [CF_DENSITY] = "density",
    [CF_STATIC] = "static",   [CF_FRICTION] = "friction",     [CF_IMPULSE] = "impulse",
    [CF_TARGET] = "target",   [CF_SOLVER] = "solver",         [CF_DURATION] = "duration",
    [CF_KIND] = "kind",       [CF_TEMPERATURE] = "temperature",
};

const cmd_ftype cmd_field_types[CF_COUNT] = {
    [CF_TYPE] = CFT_STR,   [CF_RID] = CFT_UINT,     [CF_POINT] = CFT_VEC3,  [CF_DIRECTION] = CFT_VEC3,
    [CF_RADIUS] = CFT_NUM, [CF_STRENGTH] = CFT_NUM, [CF_MATERIAL] = CFT_STR, [CF_PARAM] = CFT_STR,
    [CF_VALUE] = CFT_NUM,  [CF_PARAMS] = CFT_PARAMS, [CF_NAME] = CFT_STR,   [CF_PARTICLES] = CFT_INT,
    [CF_STEPS] = CFT_INT,  [CF_SLOT] = CFT_INT,     [CF_ENABLED] = CFT_BOOL, [CF_POS] = CFT_VEC3,
    [CF_SPEED] = CFT_NUM,  [CF_RATE] = CFT_NUM,     [CF_CAP] = CFT_INT,     [CF_VISIBLE] = CFT_BOOL,
    [CF_TOKEN] = CFT_STR,  [CF_OFFSET] = CFT_INT,   [CF_LIMIT] = CFT_INT,   [CF_ID] = CFT_UINT,
    [CF_SHAPE] = CFT_STR,  [CF_SIZE] = CFT_VEC3,    [CF_ROT] = CFT_VEC4,    [CF_VEL] = CFT_VEC3,
    [CF_ANG_VEL] = CFT_VEC3, [CF_DENSITY] = CFT_NUM, [CF_STATIC] = CFT_BOOL, [CF_FRICTION] = CFT_NUM,
    [CF_IMPULSE] = CFT_VEC3, [CF_TARGET] = CFT_VEC3, [CF_SOLVER] = CFT_STR, [CF_DURATION] = CFT_NUM,
    [CF_KIND] = CFT_STR,   [CF_TEMPERATURE] = CFT_NUM,
};

char *cmd_field_str(cmd_fields *f, int field, size_t *cap)
{
    *cap = CMD_NAME_LEN;
    switch (field) {
    case CF_TYPE: return f->type;
    case CF_MATERIAL: return f->material;
    case CF_PARAM: return f->param;
    case CF_NAME: return f->name;
    case CF_SHAPE: return f->shape;
    case CF_SOLVER: return f->solver;
    case CF_KIND: return f->kind;
    case CF_TOKEN: *cap = sizeof f->token; return f->token;
    default: return NULL;
    }
}

double *cmd_field_num(cmd_fields *f, int field)
{
    switch (field) {
    case CF_RID: return &f->rid;
    case CF_RADIUS: return &f->radius;
    case CF_STRENGTH: return &f->strength;
    case CF_VALUE: return &f->value;
    case CF_SPEED: return &f->speed;
    case CF_RATE: return &f->rate;
    case CF_PARTICLES: return &f->particles;
    case CF_STEPS: return &f->steps;
    case CF_SLOT: return &f->slot;
    case CF_CAP: return &f->cap;
    case CF_OFFSET: return &f->offset;
    case CF_LIMIT: return &f->limit;
    case CF_ID: return &f->id;
    case CF_DENSITY: return &f->density;
    case CF_FRICTION: return &f->friction;
    case CF_DURATION: return &f->duration;
    case CF_TEMPERATURE: return &f->temperature;
    default: return NULL;
    }
}

double *cmd_field_vec(cmd_fields *f, int field)
{
    switch (field) {
    case CF_POINT: return f->point;
    case CF_DIRECTION: return f->direction;
    case CF_POS: return f->pos;
    case CF_SIZE: return f->size;
    case CF_ROT: return f->rot;
    case CF_VEL: return f->vel;
    case CF_ANG_VEL: return f->ang_vel;
    case CF_IMPULSE: return f->impulse;
    case CF_TARGET: return f->target;
    default: return NULL;
    }
}

bool *cmd_field_bool(cmd_fields *f, int field)
{
    switch (field) {
    case CF_ENABLED: return &f->enabled;
    case CF_VISIBLE: return &f->visible;
    case CF_STATIC: return &f->is_static;
    default: return NULL;
    }
}

int cmd_field_find(const char *name, size_t len)
{
    for (int i = 0; i < CF_COUNT; i++)
        if (strlen(cmd_field_names[i]) == len && !memcmp(cmd_field_names[i], name, len))
            return i;
    return -1;
}

#define B(f) CF_BIT(f)
#define COMMON (B(CF_TYPE) | B(CF_RID))

/* Which client-facing kinds exist, and which fields each requires/allows.
 * Constant data (any thread). */
static const struct kind_schema {
    cmd_kind kind;
    uint64_t required, allowed;
} schemas[] = {
    {CMD_PUSH, B(CF_POINT) | B(CF_RADIUS) | B(CF_STRENGTH) | B(CF_DIRECTION),
     B(CF_POINT) | B(CF_RADIUS) | B(CF_STRENGTH) | B(CF_DIRECTION)},
    {CMD_SET_PARAM, B(CF_MATERIAL), B(CF_MATERIAL) | B(CF_PARAM) | B(CF_VALUE) | B(CF_PARAMS)},
    {CMD_LOAD_SCENE, B(CF_NAME), B(CF_NAME) | B(CF_PARTICLES) | B(CF_SOLVER)},
    {CMD_SET_SOLVER, B(CF_NAME), B(CF_NAME)},
    {CMD_HEAT, B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE), B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_DURATION)},
    {CMD_GET_SNAPSHOT, 0, 0},
    {CMD_HEATER, B(CF_SLOT),
     B(CF_SLOT) | B(CF_KIND) | B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_TEMPERATURE) | B(CF_ENABLED)},
    {CMD_PAUSE, 0, 0},
    {CMD_RESUME, 0, 0},
    {CMD_STEP, 0, B(CF_STEPS)},
    {CMD_EMITTER, B(CF_SLOT),
     B(CF_SLOT) | B(CF_ENABLED) | B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) |
         B(CF_RATE) | B(CF_CAP) | B(CF_MATERIAL)},
    {CMD_CURSOR, B(CF_POS), B(CF_POS) | B(CF_VISIBLE)},
    {CMD_AUTH, B(CF_TOKEN), B(CF_TOKEN)},
    {CMD_GET_PARTICLES, 0, B(CF_OFFSET) | B(CF_LIMIT)},
    {CMD_BODY_CREATE, B(CF_SHAPE) | B(CF_SIZE) | B(CF_POS),
     B(CF_SHAPE) | B(CF_SIZE) | B(CF_POS) | B(CF_ROT) | B(CF_VEL) | B(CF_ANG_VEL) | B(CF_DENSITY) | B(CF_STATIC) |
         B(CF_FRICTION)},
    {CMD_BODY_DESTROY, B(CF_ID), B(CF_ID)},
    {CMD_BODY_IMPULSE, B(CF_ID) | B(CF_POINT) | B(CF_IMPULSE), B(CF_ID) | B(CF_POINT) | B(CF_IMPULSE)},
    {CMD_BODY_GRAB, B(CF_ID) | B(CF_POINT) | B(CF_TARGET), B(CF_ID) | B(CF_POINT) | B(CF_TARGET)},
    {CMD_BODY_DRAG, B(CF_ID) | B(CF_TARGET), B(CF_ID) | B(CF_TARGET)},
    {CMD_BODY_RELEASE, B(CF_ID), B(CF_ID)},
    {CMD_GET_BODIES, 0, 0},
};

static bool finite3(const double v[3], double lim)
{
    for (int i = 0; i < 3; i++)
        if (!isfinite(v[i]) || fabs(v[i]) > lim)
            return false;
    return true;
}

static bool in_range(double v, double lo, double hi)
{
    return isfinite(v) && v >= lo && v <= hi;
}

/* In (0, hi], also as the float the command carries: a double such as 1e-300
 * is positive but becomes 0 (found by fuzz_ws_command). */
static bool positive(double v, double hi)
{
    return in_range(v, 0, hi) && (float)v > 0;
}

static bool is_int(double v, double lo, double hi)
{
    return in_range(v, lo, hi) && v == floor(v);
}

int cmd_from_fields(const cmd_fields *f, cmd *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (f->present & B(CF_RID)) {
        if (!is_int(f->rid, 0, 4294967295.0)) {
            snprintf(err, errlen, "'rid' must be an integer in [0, 4294967295]");
            return -1;
        }
        out->rid = (uint32_t)f->rid;
    }
    if (!(f->present & B(CF_TYPE))) {
        snprintf(err, errlen, "missing field 'type'");
        return -1;
    }
    const struct kind_schema *s = NULL;
    for (size_t i = 0; i < sizeof schemas / sizeof schemas[0]; i++)
        if (!strcmp(cmd_kind_name(schemas[i].kind), f->type))
            s = &schemas[i];
    if (!s) {
        snprintf(err, errlen, "unknown command '%.32s'", f->type);
        return -1;
    }
    const char *k = f->type;
    uint64_t extra = f->present & ~(s->allowed | COMMON);
    for (int i = 0; i < CF_COUNT; i++)
        if (extra & B(i)) {
            snprintf(err, errlen, "%s: unexpected field '%s'", k, cmd_field_names[i]);
            return -1;
        }
    for (int i = 0; i < CF_COUNT; i++)
        if ((s->required & ~f->present) & B(i)) {
            snprintf(err, errlen, "%s: missing field '%s'", k, cmd_field_names[i]);
            return -1;
        }
    out->kind = s->kind;
    switch (s->kind) {
    case CMD_PUSH: {
        if (!finite3(f->point, CMD_MAX_COORD)) {
            snprintf(err, errlen, "push: 'point' must be 3 finite numbers within +-%g", CMD_MAX_COORD);
            return -1;
        }
        if (!finite3(f->direction, CMD_MAX_COORD)) {
            snprintf(err, errlen, "push: 'direction' must be 3 finite numbers");
            return -1;
        }
        double n2 = f->direction[0] * f->direction[0] + f->direction[1] * f->direction[1] +
                    f->direction[2] * f->direction[2];
        if (!(n2 > 1e-12)) {
            snprintf(err, errlen, "push: 'direction' must not be zero");
            return -1;
        }
        if (!positive(f->radius, CMD_MAX_RADIUS)) {
            snprintf(err, errlen, "push: 'radius' must be in (0, %g]", CMD_MAX_RADIUS);
            return -1;
        }
        if (!in_range(f->strength, -CMD_MAX_STRENGTH, CMD_MAX_STRENGTH)) {
            snprintf(err, errlen, "push: 'strength' must be in [-%g, %g] m/s", CMD_MAX_STRENGTH,
                     CMD_MAX_STRENGTH);
            return -1;
        }
        double inv = 1.0 / sqrt(n2);
        for (int i = 0; i < 3; i++) {
            out->u.push.point[i] = (float)f->point[i];
            out->u.push.dir[i] = (float)(f->direction[i] * inv);
        }
        out->u.push.radius = (float)f->radius;
        out->u.push.strength = (float)f->strength;
        break;
    }
    case CMD_SET_PARAM: {
        bool single = f->present & (B(CF_PARAM) | B(CF_VALUE));
        bool multi = f->present & B(CF_PARAMS);
        if (single == multi) {
            snprintf(err, errlen, "set_param: give either 'param' and 'value' or 'params'");
            return -1;
        }
        snprintf(out->u.set_param.material, CMD_NAME_LEN, "%s", f->material);
        if (single) {
            if ((f->present & (B(CF_PARAM) | B(CF_VALUE))) != (B(CF_PARAM) | B(CF_VALUE))) {
                snprintf(err, errlen, "set_param: 'param' and 'value' go together");
                return -1;
            }
            if (!isfinite(f->value) || fabs(f->value) > 3.0e38) { /* also within float's range */
                snprintf(err, errlen, "set_param: 'value' must be finite");
                return -1;
            }
            out->u.set_param.count = 1;
            snprintf(out->u.set_param.param[0], CMD_NAME_LEN, "%s", f->param);
            out->u.set_param.value[0] = (float)f->value;
        } else {
            if (f->n_params < 1) {
                snprintf(err, errlen, "set_param: 'params' is empty");
                return -1;
            }
            if (f->n_params > FS_P_COUNT) { /* the decoders stop at FS_P_COUNT; never trusted */
                snprintf(err, errlen, "set_param: 'params' holds at most %d entries", FS_P_COUNT);
                return -1;
            }
            for (int i = 0; i < f->n_params; i++) {
                if (!isfinite(f->pvalue[i]) || fabs(f->pvalue[i]) > 3.0e38) {
                    snprintf(err, errlen, "set_param: value of '%.32s' must be finite", f->pname[i]);
                    return -1;
                }
                for (int j = 0; j < i; j++)
                    if (!strcmp(f->pname[i], f->pname[j])) {
                        snprintf(err, errlen, "set_param: '%.32s' given twice", f->pname[i]);
                        return -1;
                    }
                snprintf(out->u.set_param.param[i], CMD_NAME_LEN, "%s", f->pname[i]);
                out->u.set_param.value[i] = (float)f->pvalue[i];
            }
            out->u.set_param.count = f->n_params;
        }
        break;
    }
    case CMD_SET_SOLVER:
        out->u.solver.solver = fs_solver_find(f->name);
        if (out->u.solver.solver < 0) {
            snprintf(err, errlen, "set_solver: unknown solver '%.32s' (GET /api/solvers lists them)", f->name);
            return -1;
        }
        break;
    case CMD_HEAT:
        if (!finite3(f->point, CMD_MAX_COORD)) {
            snprintf(err, errlen, "heat: 'point' must be 3 finite numbers within +-%g", CMD_MAX_COORD);
            return -1;
        }
        if (!positive(f->radius, CMD_MAX_HEAT_RADIUS)) {
            snprintf(err, errlen, "heat: 'radius' must be in (0, %g] m", CMD_MAX_HEAT_RADIUS);
            return -1;
        }
        if (!in_range(f->rate, -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE)) {
            snprintf(err, errlen, "heat: 'rate' must be in [-%g, %g] K/s", CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE);
            return -1;
        }
        out->u.heat.duration = CMD_DEFAULT_HEAT_S;
        if (f->present & B(CF_DURATION)) {
            if (!positive(f->duration, CMD_MAX_HEAT_S)) {
                snprintf(err, errlen, "heat: 'duration' must be in (0, %g] s", CMD_MAX_HEAT_S);
                return -1;
            }
            out->u.heat.duration = (float)f->duration;
        }
        for (int i = 0; i < 3; i++)
            out->u.heat.point[i] = (float)f->point[i];
        out->u.heat.radius = (float)f->radius;
        out->u.heat.rate = (float)f->rate;
        break;
    case CMD_GET_SNAPSHOT:
        break;
    case CMD_HEATER: {
        if (!is_int(f->slot, 0, CMD_HEATER_SLOTS - 1)) {
            snprintf(err, errlen, "heater: 'slot' must be an integer in [0, %d]", CMD_HEATER_SLOTS - 1);
            return -1;
        }
        out->u.heater.slot = (int)f->slot;
        out->u.heater.enabled = (f->present & B(CF_ENABLED)) ? f->enabled : true;
        uint64_t defmask = B(CF_KIND) | B(CF_POINT) | B(CF_RADIUS) | B(CF_RATE) | B(CF_TEMPERATURE);
        if (!(f->present & defmask)) {
            if (!(f->present & B(CF_ENABLED))) {
                snprintf(err, errlen, "heater: give 'enabled' or a definition");
                return -1;
            }
            break;
        }
        bool floor = !strcmp(f->kind, "floor");
        if (!(f->present & B(CF_KIND)) || (!floor && strcmp(f->kind, "sphere"))) {
            snprintf(err, errlen, "heater: 'kind' must be 'floor' or 'sphere'");
            return -1;
        }
        uint64_t need = B(CF_RADIUS) | B(CF_RATE) | (floor ? B(CF_TEMPERATURE) : B(CF_POINT));
        for (int i = 0; i < CF_COUNT; i++)
            if ((need & ~f->present) & B(i)) {
                snprintf(err, errlen, "heater: a %s heater needs '%s'", f->kind, cmd_field_names[i]);
                return -1;
            }
        if ((f->present & B(CF_POINT)) && !finite3(f->point, CMD_MAX_COORD)) {
            snprintf(err, errlen, "heater: 'point' must be 3 finite numbers");
            return -1;
        }
        if (!positive(f->radius, CMD_MAX_HEAT_RADIUS) ||
            !in_range(f->rate, -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE) ||
            ((f->present & B(CF_TEMPERATURE)) && !in_range(f->temperature, CMD_MIN_TEMPERATURE, CMD_MAX_TEMPERATURE))) {
            snprintf(err, errlen, "heater: radius in (0, %g] m, rate in [-%g, %g], temperature in [%g, %g] C",
                     CMD_MAX_HEAT_RADIUS, CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE, CMD_MIN_TEMPERATURE,
                     CMD_MAX_TEMPERATURE);
            return -1;
        }
        if (floor && f->rate < 0) {
            snprintf(err, errlen, "heater: a floor's 'rate' (how fast it pulls towards its temperature, 1/s) must be >= 0");
            return -1;
        }
        out->u.heater.has_def = true;
        out->u.heater.kind = floor ? FS_HEAT_FLOOR : FS_HEAT_SPHERE;
        for (int i = 0; i < 3; i++)
            out->u.heater.point[i] = (float)f->point[i];
        out->u.heater.radius = (float)f->radius;
        out->u.heater.rate = (float)f->rate;
        out->u.heater.temperature = (float)f->temperature;
        break;
    }
    case CMD_LOAD_SCENE:
        out->u.scene.solver = -1;
        if (f->present & B(CF_SOLVER)) {
            out->u.scene.solver = fs_solver_find(f->solver);
            if (out->u.scene.solver < 0) {
                snprintf(err, errlen, "load_scene: unknown solver '%.32s' (GET /api/solvers lists them)",
                         f->solver);
                return -1;
            }
        }
        snprintf(out->u.scene.name, CMD_NAME_LEN, "%s", f->name);
        if (f->present & B(CF_PARTICLES)) {
            if (!is_int(f->particles, 0, CMD_MAX_PARTICLES)) {
                snprintf(err, errlen, "load_scene: 'particles' must be an integer in [0, %d]",
                         CMD_MAX_PARTICLES);
                return -1;
            }
            out->u.scene.particles = (int)f->particles;
        }
        break;
    case CMD_PAUSE:
    case CMD_RESUME:
        break;
    case CMD_STEP:
        out->u.step.steps = 1;
        if (f->present & B(CF_STEPS)) {
            if (!is_int(f->steps, 1, CMD_MAX_STEPS)) {
                snprintf(err, errlen, "step: 'steps' must be an integer in [1, %d]", CMD_MAX_STEPS);
                return -1;
            }
            out->u.step.steps = (int)f->steps;
        }
        break;
    case CMD_EMITTER: {
        if (!is_int(f->slot, 0, FS_MAX_EMITTERS - 1)) {
            snprintf(err, errlen, "emitter: 'slot' must be an integer in [0, %d]", FS_MAX_EMITTERS - 1);
            return -1;
        }
        out->u.emitter.slot = (int)f->slot;
        out->u.emitter.enabled = (f->present & B(CF_ENABLED)) ? f->enabled : true;
        uint64_t defmask = B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) | B(CF_RATE) |
                           B(CF_CAP) | B(CF_MATERIAL);
        if (!(f->present & defmask)) {
            if (!(f->present & B(CF_ENABLED))) {
                snprintf(err, errlen, "emitter: give 'enabled' or a definition");
                return -1;
            }
            break;
        }
        uint64_t need = B(CF_POS) | B(CF_DIRECTION) | B(CF_SPEED) | B(CF_RADIUS) | B(CF_RATE);
        for (int i = 0; i < CF_COUNT; i++)
            if ((need & ~f->present) & B(i)) {
                snprintf(err, errlen, "emitter: a definition needs '%s'", cmd_field_names[i]);
                return -1;
            }
        if (f->pos_nil || !finite3(f->pos, CMD_MAX_COORD) || !finite3(f->direction, CMD_MAX_COORD)) {
            snprintf(err, errlen, "emitter: 'pos' and 'direction' must be 3 finite numbers");
            return -1;
        }
        double n2 = f->direction[0] * f->direction[0] + f->direction[1] * f->direction[1] +
                    f->direction[2] * f->direction[2];
        if (!(n2 > 1e-12)) {
            snprintf(err, errlen, "emitter: 'direction' must not be zero");
            return -1;
        }
        if (!in_range(f->speed, 0, CMD_MAX_SPEED) || !positive(f->radius, CMD_MAX_RADIUS) ||
            !in_range(f->rate, 0, CMD_MAX_RATE)) {
            snprintf(err, errlen, "emitter: speed in [0, %g], radius in (0, %g], rate in [0, %g]",
                     CMD_MAX_SPEED, CMD_MAX_RADIUS, CMD_MAX_RATE);
            return -1;
        }
        if ((f->present & B(CF_CAP)) && !is_int(f->cap, 0, CMD_MAX_PARTICLES)) {
            snprintf(err, errlen, "emitter: 'cap' must be an integer in [0, %d]", CMD_MAX_PARTICLES);
            return -1;
        }
        double inv = 1.0 / sqrt(n2);
        out->u.emitter.has_def = true;
        for (int i = 0; i < 3; i++) {
            out->u.emitter.pos[i] = (float)f->pos[i];
            out->u.emitter.dir[i] = (float)(f->direction[i] * inv);
        }
        out->u.emitter.speed = (float)f->speed;
        out->u.emitter.radius = (float)f->radius;
        out->u.emitter.rate = (float)f->rate;
        out->u.emitter.cap = (f->present & B(CF_CAP)) ? (int)f->cap : 0;
        snprintf(out->u.emitter.material, CMD_NAME_LEN, "%s",
                 (f->present & B(CF_MATERIAL)) ? f->material : "water");
        break;
    }
    case CMD_CURSOR:
        out->u.cursor.visible = !f->pos_nil && (!(f->present & B(CF_VISIBLE)) || f->visible);
        if (!f->pos_nil) {
            if (!finite3(f->pos, CMD_MAX_COORD)) {
                snprintf(err, errlen, "cursor: 'pos' must be 3 finite numbers or nil");
                return -1;
            }
            for (int i = 0; i < 3; i++)
                out->u.cursor.pos[i] = (float)f->pos[i];
        }
        break;
    case CMD_AUTH:
        snprintf(out->u.auth.token, sizeof out->u.auth.token, "%s", f->token);
        break;
    case CMD_GET_PARTICLES:
        out->u.particles.offset = 0;
        out->u.particles.limit = 1000;
        if (f->present & B(CF_OFFSET)) {
            if (!is_int(f->offset, 0, CMD_MAX_PARTICLES)) {
                snprintf(err, errlen, "'offset' must be an integer in [0, %d]", CMD_MAX_PARTICLES);
                return -1;
            }
            out->u.particles.offset = (int)f->offset;
        }
        if (f->present & B(CF_LIMIT)) {
            if (!is_int(f->limit, 1, 10000)) {
                snprintf(err, errlen, "'limit' must be an integer in [1, 10000]");
                return -1;
            }
            out->u.particles.limit = (int)f->limit;
        }
        break;
    case CMD_BODY_CREATE: {
        static const char *const shapes[] = {"sphere", "box", "capsule"};
        int sh = -1;
        for (int i = 0; i < 3; i++)
            if (!strcmp(f->shape, shapes[i]))
                sh = i;
        if (sh < 0) {
            snprintf(err, errlen, "body_create: 'shape' must be sphere, box or capsule");
            return -1;
        }
        out->u.body_create.shape = sh == 0 ? FS_SHAPE_SPHERE : sh == 1 ? FS_SHAPE_BOX : FS_SHAPE_CAPSULE;
        int need = sh == 1 ? 3 : sh == 2 ? 2 : 1; /* components of size that matter */
        for (int i = 0; i < 3; i++) {
            if (!in_range(f->size[i], 0, CMD_MAX_BODY_SIZE) || (i < need && !positive(f->size[i], CMD_MAX_BODY_SIZE))) {
                snprintf(err, errlen, "body_create: 'size' components must be in (0, %g] m", CMD_MAX_BODY_SIZE);
                return -1;
            }
            out->u.body_create.size[i] = (float)f->size[i];
        }
        if (!finite3(f->pos, CMD_MAX_COORD)) {
            snprintf(err, errlen, "body_create: 'pos' must be 3 finite numbers");
            return -1;
        }
        double q[4] = {1, 0, 0, 0};
        if (f->present & B(CF_ROT)) {
            double n2 = 0;
            for (int i = 0; i < 4; i++) {
                if (!isfinite(f->rot[i]) || fabs(f->rot[i]) > 1e6) {
                    snprintf(err, errlen, "body_create: 'rot' must be 4 finite numbers (w, x, y, z)");
                    return -1;
                }
                n2 += f->rot[i] * f->rot[i];
            }
            if (!(n2 > 1e-12)) {
                snprintf(err, errlen, "body_create: 'rot' must not be zero");
                return -1;
            }
            for (int i = 0; i < 4; i++)
                q[i] = f->rot[i] / sqrt(n2);
        }
        for (int i = 0; i < 4; i++)
            out->u.body_create.rot[i] = (float)q[i];
        if (((f->present & B(CF_VEL)) && !finite3(f->vel, CMD_MAX_SPEED)) ||
            ((f->present & B(CF_ANG_VEL)) && !finite3(f->ang_vel, CMD_MAX_SPEED))) {
            snprintf(err, errlen, "body_create: 'vel' and 'ang_vel' must be 3 numbers within +-%g", CMD_MAX_SPEED);
            return -1;
        }
        for (int i = 0; i < 3; i++) {
            out->u.body_create.pos[i] = (float)f->pos[i];
            out->u.body_create.vel[i] = (f->present & B(CF_VEL)) ? (float)f->vel[i] : 0.0f;
            out->u.body_create.ang_vel[i] = (f->present & B(CF_ANG_VEL)) ? (float)f->ang_vel[i] : 0.0f;
        }
        if (f->present & B(CF_DENSITY)) {
            if (!positive(f->density, CMD_MAX_DENSITY)) {
                snprintf(err, errlen, "body_create: 'density' must be in (0, %g] kg/m^3", CMD_MAX_DENSITY);
                return -1;
            }
            out->u.body_create.has_density = true;
            out->u.body_create.density = (float)f->density;
        }
        if (f->present & B(CF_FRICTION)) {
            if (!in_range(f->friction, 0, 2)) {
                snprintf(err, errlen, "body_create: 'friction' must be in [0, 2]");
                return -1;
            }
            out->u.body_create.has_friction = true;
            out->u.body_create.friction = (float)f->friction;
        }
        out->u.body_create.is_static = (f->present & B(CF_STATIC)) && f->is_static;
        break;
    }
    case CMD_BODY_DESTROY:
    case CMD_BODY_IMPULSE:
    case CMD_BODY_GRAB:
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE: {
        if (!is_int(f->id, 0, 4294967295.0)) {
            snprintf(err, errlen, "%s: 'id' must be an integer in [0, 4294967295]", k);
            return -1;
        }
        out->u.body.id = (uint32_t)f->id;
        if ((f->present & B(CF_POINT)) && !finite3(f->point, CMD_MAX_COORD)) {
            snprintf(err, errlen, "%s: 'point' must be 3 finite numbers", k);
            return -1;
        }
        if ((f->present & B(CF_TARGET)) && !finite3(f->target, CMD_MAX_COORD)) {
            snprintf(err, errlen, "%s: 'target' must be 3 finite numbers", k);
            return -1;
        }
        if ((f->present & B(CF_IMPULSE)) && !finite3(f->impulse, CMD_MAX_IMPULSE)) {
            snprintf(err, errlen, "%s: 'impulse' must be 3 numbers within +-%g N s", k, CMD_MAX_IMPULSE);
            return -1;
        }
        for (int i = 0; i < 3; i++) {
            out->u.body.point[i] = (float)f->point[i];
            out->u.body.vec[i] = (float)((f->present & B(CF_IMPULSE)) ? f->impulse[i] : f->target[i]);
        }
        break;
    }
    case CMD_GET_BODIES:
        break;
    default:
        snprintf(err, errlen, "unknown command");
        return -1;
    }
    /* Every command carries a request id, except the fire-and-forget ones
     * that get no reply on success. */
    if (!(f->present & B(CF_RID)) && s->kind != CMD_CURSOR && s->kind != CMD_BODY_DRAG) {
        snprintf(err, errlen, "%s: missing field 'rid' (the request id the reply echoes)", k);
        return -1;
    }
    return 0;
}
