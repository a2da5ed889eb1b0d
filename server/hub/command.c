/* command.c - command kinds: their names and which of them change the world. */
#include "command.h"

#include <stdlib.h>
#include <string.h>

static const char *const kind_names[CMD_KIND_COUNT] = {
    [CMD_NONE] = "none",
    [CMD_PUSH] = "push",
    [CMD_SET_PARAM] = "set_param",
    [CMD_LOAD_SCENE] = "load_scene",
    [CMD_PAUSE] = "pause",
    [CMD_RESUME] = "resume",
    [CMD_STEP] = "step",
    [CMD_EMITTER] = "emitter",
    [CMD_CURSOR] = "cursor",
    [CMD_AUTH] = "auth",
    [CMD_GET_PARTICLES] = "get_particles",
    [CMD_CLIENT_LEFT] = "client_left",
    [CMD_BODY_CREATE] = "body_create",
    [CMD_BODY_DESTROY] = "body_destroy",
    [CMD_BODY_IMPULSE] = "body_impulse",
    [CMD_BODY_GRAB] = "body_grab",
    [CMD_BODY_DRAG] = "body_drag",
    [CMD_BODY_RELEASE] = "body_release",
    [CMD_GET_BODIES] = "get_bodies",
    [CMD_SET_SOLVER] = "set_solver",
    [CMD_HEAT] = "heat",
    [CMD_GET_SNAPSHOT] = "get_snapshot",
    [CMD_RESTORE] = "restore",
    [CMD_KEYFRAME] = "keyframe",
    [CMD_RECORD_START] = "record_start",
    [CMD_RECORD_STOP] = "record_stop",
    [CMD_HEATER] = "heater",
    [CMD_PACE] = "pace",
    [CMD_MESH_UPLOAD] = "mesh_upload",
    [CMD_OBSTACLE_ADD] = "obstacle_add",
    [CMD_OBSTACLE_REMOVE] = "obstacle_remove",
    [CMD_GET_OBSTACLES] = "get_obstacles",
    [CMD_PROBE_ADD] = "probe_add",
    [CMD_PROBE_REMOVE] = "probe_remove",
    [CMD_DETAIL] = "detail",
};

const char *cmd_kind_name(cmd_kind k) {
    return (k >= 0 && k < CMD_KIND_COUNT) ? kind_names[k] : "unknown";
}

bool cmd_kind_mutates(cmd_kind k) {
    switch (k) {
    case CMD_PUSH:
    case CMD_RECORD_START:
    case CMD_RECORD_STOP:
    case CMD_SET_PARAM:
    case CMD_LOAD_SCENE:
    case CMD_PAUSE:
    case CMD_RESUME:
    case CMD_STEP:
    case CMD_EMITTER:
    case CMD_BODY_CREATE:
    case CMD_BODY_DESTROY:
    case CMD_BODY_IMPULSE:
    case CMD_BODY_GRAB:
    case CMD_BODY_DRAG:
    case CMD_BODY_RELEASE:
    case CMD_SET_SOLVER:
    case CMD_HEAT:
    case CMD_RESTORE:
    case CMD_HEATER:
    case CMD_MESH_UPLOAD:
    case CMD_OBSTACLE_ADD:
    case CMD_OBSTACLE_REMOVE:
    case CMD_PROBE_ADD:
    case CMD_PROBE_REMOVE:
        return true;
    default:
        return false;
    }
}
