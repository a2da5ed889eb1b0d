/* rest_export.c - the particle exports over HTTP (see rest_export.h). */
#include "rest_export.h"

#include <stdio.h>
#include <string.h>

size_t rest_export_start(export_job *j, particles_snap *snap, int format, const world_info *wi) {
    j->snap = snap;
    j->done = false;
    int nm = wi->material_count < FS_MAX_MATERIALS ? wi->material_count : FS_MAX_MATERIALS;
    for (int m = 0; m < nm; m++) {
        snprintf(j->name_buf[m], sizeof j->name_buf[m], "%s", wi->material[m]);
        j->names[m] = j->name_buf[m];
    }
    export_begin(&j->gen, (export_format)format, snap, j->names, nm);
    snprintf(j->disposition, sizeof j->disposition, "attachment; filename=\"particles-%llu.%s\"",
             (unsigned long long)snap->tick, export_name((export_format)format));
    j->ctype = export_content_type((export_format)format);
    /* id, position, velocity, material, temperature per particle */
    size_t per = sizeof *snap->id + 6 * sizeof *snap->pos + sizeof *snap->material + sizeof *snap->temp;
    return sizeof *snap + (size_t)(snap->count > 0 ? snap->count : 0) * per;
}

size_t rest_export_chunk(export_job *j, uint8_t *out, size_t cap) {
    if (j->done) return 0;
    size_t n = export_next(&j->gen, out, cap);
    if (n < cap) j->done = true;
    return n;
}

void rest_export_free(export_job *j) {
    particles_snap_free(j->snap);
    j->snap = NULL;
}
