/* fuzz_check.h - what the edges promise about a command they accepted
 * (commands.h: "every field has already been checked for type, finiteness
 * and coarse range at the edge").  The harnesses check every accepted cmd
 * against it and abort on a broken promise, so the fuzzer finds validation
 * holes as well as memory errors.  Header-only, for the harnesses. */
#ifndef FUZZ_CHECK_H
#define FUZZ_CHECK_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"

#define FUZZ_REQUIRE(cond)                                                                                             \
    do {                                                                                                               \
        if (!(cond)) {                                                                                                 \
            fprintf(stderr, "fuzz: broken promise at %s:%d: %s\n", __FILE__, __LINE__, #cond);                         \
            abort();                                                                                                   \
        }                                                                                                              \
    } while (0)

static inline int fz_terminated(const char *s, size_t cap) {
    return memchr(s, 0, cap) != NULL;
}

static inline int fz_in(float v, float lo, float hi) {
    return isfinite(v) && v >= lo && v <= hi;
}

static inline int fz_vec(const float *v, int n, float lim) {
    for (int i = 0; i < n; i++)
        if (!fz_in(v[i], -lim, lim)) return 0;
    return 1;
}

static inline int fz_unit(const float *v, int n) {
    double s = 0;
    for (int i = 0; i < n; i++) {
        if (!isfinite(v[i])) return 0;
        s += (double)v[i] * v[i];
    }
    return fabs(sqrt(s) - 1.0) < 1e-4;
}

/* An error text: terminated inside its buffer, not empty. */
static inline void fz_check_error(const char *err, size_t cap) {
    FUZZ_REQUIRE(fz_terminated(err, cap));
    FUZZ_REQUIRE(err[0] != 0);
}

/* A command an edge (WebSocket or REST) accepted. */
static inline void fz_check_cmd(const cmd *c) {
    switch (c->kind) {
    case CMD_PUSH:
        FUZZ_REQUIRE(fz_vec(c->u.push.point, 3, CMD_MAX_COORD));
        FUZZ_REQUIRE(fz_unit(c->u.push.dir, 3));
        FUZZ_REQUIRE(fz_in(c->u.push.radius, 0, CMD_MAX_RADIUS) && c->u.push.radius > 0);
        FUZZ_REQUIRE(fz_in(c->u.push.strength, -CMD_MAX_STRENGTH, CMD_MAX_STRENGTH));
        break;
    case CMD_SET_PARAM:
        FUZZ_REQUIRE(fz_terminated(c->u.set_param.material, CMD_NAME_LEN));
        FUZZ_REQUIRE(c->u.set_param.count >= 1 && c->u.set_param.count <= FS_P_COUNT);
        for (int i = 0; i < c->u.set_param.count; i++) {
            FUZZ_REQUIRE(fz_terminated(c->u.set_param.param[i], CMD_NAME_LEN));
            FUZZ_REQUIRE(isfinite(c->u.set_param.value[i]));
            for (int j = 0; j < i; j++) FUZZ_REQUIRE(strcmp(c->u.set_param.param[i], c->u.set_param.param[j]) != 0);
        }
        break;
    case CMD_LOAD_SCENE:
        FUZZ_REQUIRE(fz_terminated(c->u.scene.name, CMD_NAME_LEN));
        FUZZ_REQUIRE(c->u.scene.particles >= 0 && c->u.scene.particles <= CMD_MAX_PARTICLES);
        FUZZ_REQUIRE(c->u.scene.solver >= -1 && c->u.scene.solver < FS_SOLVER_COUNT);
        break;
    case CMD_SET_SOLVER:
        FUZZ_REQUIRE(c->u.solver.solver >= 0 && c->u.solver.solver < FS_SOLVER_COUNT);
        break;
    case CMD_STEP:
        FUZZ_REQUIRE(c->u.step.steps >= 1 && c->u.step.steps <= CMD_MAX_STEPS);
        break;
    case CMD_EMITTER:
        FUZZ_REQUIRE(c->u.emitter.slot >= 0 && c->u.emitter.slot < FS_MAX_EMITTERS);
        if (c->u.emitter.has_def) {
            FUZZ_REQUIRE(fz_vec(c->u.emitter.pos, 3, CMD_MAX_COORD));
            FUZZ_REQUIRE(fz_unit(c->u.emitter.dir, 3));
            FUZZ_REQUIRE(fz_in(c->u.emitter.speed, 0, CMD_MAX_SPEED));
            FUZZ_REQUIRE(fz_in(c->u.emitter.radius, 0, CMD_MAX_RADIUS) && c->u.emitter.radius > 0);
            FUZZ_REQUIRE(fz_in(c->u.emitter.rate, 0, CMD_MAX_RATE));
            FUZZ_REQUIRE(c->u.emitter.cap >= 0 && c->u.emitter.cap <= CMD_MAX_PARTICLES);
            FUZZ_REQUIRE(fz_terminated(c->u.emitter.material, CMD_NAME_LEN));
        }
        break;
    case CMD_CURSOR:
        if (c->u.cursor.visible) FUZZ_REQUIRE(fz_vec(c->u.cursor.pos, 3, CMD_MAX_COORD));
        break;
    case CMD_AUTH:
        FUZZ_REQUIRE(fz_terminated(c->u.auth.token, sizeof c->u.auth.token));
        break;
    case CMD_GET_PARTICLES:
        FUZZ_REQUIRE(c->u.particles.offset >= 0 && c->u.particles.offset <= CMD_MAX_PARTICLES);
        FUZZ_REQUIRE(c->u.particles.limit >= 1 && c->u.particles.limit <= 10000);
        break;
    case CMD_BODY_CREATE:
        FUZZ_REQUIRE(c->u.body_create.shape == FS_SHAPE_SPHERE || c->u.body_create.shape == FS_SHAPE_BOX ||
                     c->u.body_create.shape == FS_SHAPE_CAPSULE);
        for (int i = 0; i < 3; i++) FUZZ_REQUIRE(fz_in(c->u.body_create.size[i], 0, CMD_MAX_BODY_SIZE));
        FUZZ_REQUIRE(c->u.body_create.size[0] >= CMD_MIN_BODY_SIZE);
        FUZZ_REQUIRE(fz_vec(c->u.body_create.pos, 3, CMD_MAX_COORD));
        FUZZ_REQUIRE(fz_unit(c->u.body_create.rot, 4));
        FUZZ_REQUIRE(fz_vec(c->u.body_create.vel, 3, CMD_MAX_SPEED));
        FUZZ_REQUIRE(fz_vec(c->u.body_create.ang_vel, 3, CMD_MAX_SPEED));
        if (c->u.body_create.has_density)
            FUZZ_REQUIRE(fz_in(c->u.body_create.density, CMD_MIN_DENSITY, CMD_MAX_DENSITY));
        if (c->u.body_create.has_friction) FUZZ_REQUIRE(fz_in(c->u.body_create.friction, 0, CMD_MAX_FRICTION));
        break;
    case CMD_BODY_DESTROY:
    case CMD_BODY_IMPULSE:
    case CMD_BODY_GRAB:
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE:
        FUZZ_REQUIRE(fz_vec(c->u.body.point, 3, CMD_MAX_COORD));
        FUZZ_REQUIRE(fz_vec(c->u.body.vec, 3, c->kind == CMD_BODY_IMPULSE ? CMD_MAX_IMPULSE : CMD_MAX_COORD));
        break;
    case CMD_HEAT:
        FUZZ_REQUIRE(fz_vec(c->u.heat.point, 3, CMD_MAX_COORD));
        FUZZ_REQUIRE(fz_in(c->u.heat.radius, 0, CMD_MAX_HEAT_RADIUS) && c->u.heat.radius > 0);
        FUZZ_REQUIRE(fz_in(c->u.heat.rate, -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE));
        FUZZ_REQUIRE(fz_in(c->u.heat.duration, 0, CMD_MAX_HEAT_S) && c->u.heat.duration > 0);
        break;
    case CMD_HEATER:
        FUZZ_REQUIRE(c->u.heater.slot >= 0 && c->u.heater.slot < CMD_HEATER_SLOTS);
        if (c->u.heater.has_def) {
            FUZZ_REQUIRE(c->u.heater.kind == FS_HEAT_FLOOR || c->u.heater.kind == FS_HEAT_SPHERE);
            FUZZ_REQUIRE(fz_vec(c->u.heater.point, 3, CMD_MAX_COORD));
            FUZZ_REQUIRE(fz_in(c->u.heater.radius, 0, CMD_MAX_HEAT_RADIUS) && c->u.heater.radius > 0);
            FUZZ_REQUIRE(
                fz_in(c->u.heater.rate, c->u.heater.kind == FS_HEAT_FLOOR ? 0 : -CMD_MAX_HEAT_RATE, CMD_MAX_HEAT_RATE));
            FUZZ_REQUIRE(fz_in(c->u.heater.temperature, CMD_MIN_TEMPERATURE, CMD_MAX_TEMPERATURE));
        }
        break;
    case CMD_PACE:
        FUZZ_REQUIRE(c->u.pace.stride == 1 || c->u.pace.stride == 2 || c->u.pace.stride == 4);
        break;
    case CMD_RECORD_START:
        FUZZ_REQUIRE(fz_terminated(c->u.record.name, sizeof c->u.record.name));
        /* 0: not given; else within the edge's bounds */
        FUZZ_REQUIRE(c->u.record.max_mb == 0 || fz_in(c->u.record.max_mb, CMD_MIN_RECORD_MB, CMD_MAX_RECORD_MB));
        FUZZ_REQUIRE(c->u.record.max_seconds == 0 ||
                     fz_in(c->u.record.max_seconds, CMD_MIN_RECORD_S, CMD_MAX_RECORD_S));
        break;
    case CMD_PAUSE:
    case CMD_RESUME:
    case CMD_GET_BODIES:
    case CMD_GET_SNAPSHOT:
    case CMD_KEYFRAME:
    case CMD_RECORD_STOP:
        break;
    default: /* CMD_NONE, CMD_CLIENT_LEFT, CMD_RESTORE: never built from client bytes */
        FUZZ_REQUIRE(!"an edge built an internal command kind");
    }
}

#endif
