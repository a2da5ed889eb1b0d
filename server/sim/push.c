/* push.c - the push command: a velocity kick to the particles within a
 * radius of a point (the browser's drag on the fluid). */
#include <math.h>

#include "sim_util.h"
#include "world_internal.h"

fs_status fs_world_push(fs_world *w, fs_vec3 c, float radius, fs_vec3 dir, float strength, int *touched,
                        fs_error *err) {
    if (touched) *touched = 0;
    if (!fs__vec_finite(c) || !fs__vec_finite(dir) || !isfinite(radius) || !isfinite(strength)) {
        SETERR(err, "push: point, direction, radius and strength must be finite");
        return FS_ERR_ARG;
    }
    if (radius <= 0 || radius > 100.0f) {
        SETERR(err, "push: radius %g outside (0, 100] m", radius);
        return FS_ERR_RANGE;
    }
    if (fabsf(strength) > 50.0f) { /* negative: against dir */
        SETERR(err, "push: strength %g outside -50..50 m/s", strength);
        return FS_ERR_RANGE;
    }
    float len = sqrtf(dir.x * dir.x + dir.y * dir.y + dir.z * dir.z);
    if (!(len > 1e-6f)) {
        SETERR(err, "push: direction must be non-zero");
        return FS_ERR_ARG;
    }
    float ux = dir.x / len, uy = dir.y / len, uz = dir.z / len, r2 = radius * radius;
    int t = 0;
    for (int i = 0; i < w->n; i++) {
        float dx = w->p.x[i] - c.x, dy = w->p.y[i] - c.y, dz = w->p.z[i] - c.z;
        float d2 = dx * dx + dy * dy + dz * dz;
        if (d2 >= r2) continue;
        float f = strength * (1.0f - d2 / r2);
        w->p.vx[i] += f * ux, w->p.vy[i] += f * uy, w->p.vz[i] += f * uz;
        t++;
    }
    if (touched) *touched = t;
    return FS_OK;
}
