/* rest_export.c - the particle exports over HTTP (see rest_export.h). */
#include "rest_export.h"

#include <stdio.h>
#include <string.h>

void rest_export_start(net *n, http_req *r, particles_snap *snap, int format, const world_info *wi) {
    r->exp_snap = snap;
    int nm = wi->material_count < FS_MAX_MATERIALS ? wi->material_count : FS_MAX_MATERIALS;
    for (int m = 0; m < nm; m++) {
        snprintf(r->exp_name_buf[m], sizeof r->exp_name_buf[m], "%s", wi->material[m]);
        r->exp_names[m] = r->exp_name_buf[m];
    }
    /* one counting pass for Content-Length, then the document as it is sent */
    size_t len = export_length((export_format)format, snap, r->exp_names, nm);
    export_begin(&r->exp_gen, (export_format)format, snap, r->exp_names, nm);
    snprintf(r->exp_disposition, sizeof r->exp_disposition, "attachment; filename=\"particles-%llu.%s\"",
             (unsigned long long)snap->tick, export_name((export_format)format));
    r->status = 200;
    r->ctype = export_content_type((export_format)format);
    r->resp_len = len;
    r->resp_off = 0;
    /* what a slow reader holds: the snapshot's arrays */
    n->resp_bytes += len;
    r->ready = true;
    r->waiting = false;
    lws_set_timeout(r->wsi, PENDING_TIMEOUT_HTTP_CONTENT, NET_REST_TIMEOUT_S);
    lws_callback_on_writable(r->wsi);
}

size_t rest_export_chunk(http_req *r, uint8_t *out, size_t cap) {
    return export_next(&r->exp_gen, out, cap);
}

void rest_export_free(http_req *r) {
    particles_snap_free(r->exp_snap);
    r->exp_snap = NULL;
}
