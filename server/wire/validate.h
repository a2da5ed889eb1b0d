/* validate.h - edge validation of untrusted commands, shared by the msgpack
 * (WebSocket) and JSON (REST) decoders.
 * A decoder fills a cmd_fields with what the message said (types already
 * checked), then cmd_from_fields checks presence, allowed fields and ranges
 * and builds the cmd.  Both edges therefore accept exactly the same commands. */
#ifndef SRV_VALIDATE_H
#define SRV_VALIDATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"

enum cmd_field {
    CF_TYPE,
    CF_RID,
    CF_POINT,
    CF_DIRECTION,
    CF_RADIUS,
    CF_STRENGTH,
    CF_MATERIAL,
    CF_PARAM,
    CF_VALUE,
    CF_PARAMS,
    CF_NAME,
    CF_PARTICLES,
    CF_STEPS,
    CF_SLOT,
    CF_ENABLED,
    CF_POS,
    CF_SPEED,
    CF_RATE,
    CF_CAP,
    CF_VISIBLE,
    CF_TOKEN,
    CF_OFFSET,
    CF_LIMIT,
    CF_ID,
    CF_SHAPE,
    CF_SIZE,
    CF_ROT,
    CF_VEL,
    CF_ANG_VEL,
    CF_DENSITY,
    CF_STATIC,
    CF_FRICTION,
    CF_IMPULSE,
    CF_TARGET,
    CF_SOLVER,
    CF_DURATION,
    CF_KIND,
    CF_TEMPERATURE,
    CF_MAX_MB,
    CF_MAX_SECONDS,
    CF_SID,
    CF_STRIDE,
    CF_MESH,
    CF_SCALE,
    CF_FIT,
    CF_NORMAL,
    CF_FULL,
    CF_COUNT
};
typedef enum cmd_ftype { CFT_STR, CFT_UINT, CFT_INT, CFT_NUM, CFT_VEC3, CFT_BOOL, CFT_PARAMS, CFT_VEC4 } cmd_ftype;

/* A field's name on the wire, its type, and its place in a cmd_fields. */
typedef struct cmd_field_def {
    const char *name;
    cmd_ftype type;
    size_t offset;
} cmd_field_def;
extern const cmd_field_def cmd_field_defs[CF_COUNT];
int cmd_field_find(const char *name, size_t len); /* -1 when unknown */
/* What a field of this type must be, for error texts ("a number", ...);
 * `json` names a parameters field as the JSON edge calls it ("an object"),
 * else as the msgpack edge does ("a map of parameter names to numbers"). */
const char *cmd_ftype_text(cmd_ftype t, bool json);

/* Threads: the network thread (a decoder's scratch). */
typedef struct cmd_fields {
    uint64_t present; /* 1ull << CF_x */
    char type[CMD_NAME_LEN];
    char material[CMD_NAME_LEN], param[CMD_NAME_LEN], name[CMD_NAME_LEN], shape[CMD_NAME_LEN];
    char solver[CMD_NAME_LEN], kind[CMD_NAME_LEN], sid[CMD_SID_LEN];
    char token[512]; /* the server's token or an invite (invite.h) */
    double rid, radius, strength, value, speed, rate, particles, steps, slot, cap, offset, limit;
    double id, density, friction, duration, temperature, max_mb, max_seconds, stride, mesh, scale;
    double point[3], direction[3], normal[3], pos[3], size[3], vel[3], ang_vel[3], impulse[3], target[3];
    double rot[4];
    bool pos_nil; /* cursor: pos = nil hides the cursor */
    bool enabled, visible, is_static, fit, full;
    int n_params;
    char pname[FS_P_COUNT][CMD_NAME_LEN];
    double pvalue[FS_P_COUNT];
} cmd_fields;

#define CF_BIT(f) (1ull << (f))
/* Where a decoder stores a field of each type (NULL when the type differs). */
char *cmd_field_str(cmd_fields *f, int field, size_t *cap);
double *cmd_field_num(cmd_fields *f, int field);
double *cmd_field_vec(cmd_fields *f, int field); /* 3 or 4 doubles */
bool *cmd_field_bool(cmd_fields *f, int field);

/* Returns 0 and fills *out, or -1 with a reason in err.  out->rid is set
 * whenever the fields carried a valid rid, even on error. */
int cmd_from_fields(const cmd_fields *f, cmd *out, char *err, size_t errlen);

#endif
