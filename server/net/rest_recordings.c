/* rest_recordings.c - the recordings over REST (see rest_recordings.h). */
#include "rest_recordings.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hub.h"

#define REC_INDEX_MAX (4u << 20)  /* an index.json larger than this is not read */
#define REC_FILE_MAX (256u << 20) /* nor a segment larger than this */
#define REC_LIST_MAX 1000         /* recordings listed */

/* The file's bytes, at most max (NULL: missing, unreadable or too large). */
static char *read_all(const char *path, size_t max, size_t *len, int *err_no) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        *err_no = errno;
        return NULL;
    }
    char *buf = NULL;
    long sz = -1;
    if (!fseek(f, 0, SEEK_END)) sz = ftell(f);
    if (sz >= 0 && (size_t)sz <= max && !fseek(f, 0, SEEK_SET)) {
        buf = malloc((size_t)sz + 1);
        if (buf && fread(buf, 1, (size_t)sz, f) != (size_t)sz) {
            free(buf);
            buf = NULL;
        }
        if (buf) buf[sz] = 0, *len = (size_t)sz;
    }
    *err_no = sz >= 0 && (size_t)sz > max ? EFBIG : EIO;
    fclose(f);
    return buf;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

cJSON *rest_recordings_json(net *n) {
    cJSON *j = cJSON_CreateObject();
    char dir[1100];
    bool have = config_record_dir(n->cfg, dir, sizeof dir);
    cJSON_AddBoolToObject(j, "enabled", have);
    rec_status rs;
    hub_get_rec_status(n->hub, &rs);
    cJSON *a = cJSON_AddObjectToObject(j, "recording");
    cJSON_AddBoolToObject(a, "active", rs.active);
    cJSON_AddStringToObject(a, "name", rs.name);
    cJSON_AddNumberToObject(a, "bytes", (double)rs.bytes);
    cJSON_AddNumberToObject(a, "frames", (double)rs.frames);
    cJSON_AddNumberToObject(a, "segments", (double)rs.segments);
    cJSON_AddNumberToObject(a, "segments_dropped", (double)rs.segments_dropped);
    cJSON_AddNumberToObject(a, "seconds", rs.seconds);
    cJSON_AddStringToObject(a, "stopped", rs.stopped);
    cJSON *list = cJSON_AddArrayToObject(j, "recordings");
    DIR *d = have ? opendir(dir) : NULL;
    if (!d) return j;
    char *names[REC_LIST_MAX];
    int count = 0;
    for (struct dirent *e; (e = readdir(d)) && count < REC_LIST_MAX;)
        if (e->d_name[0] != '.' && strlen(e->d_name) < 64) names[count++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)count, sizeof *names, by_name);
    for (int i = 0; i < count; i++) {
        if (!names[i]) continue;
        char path[1200];
        snprintf(path, sizeof path, "%s/%s/index.json", dir, names[i]);
        size_t len = 0;
        int e = 0;
        char *text = read_all(path, REC_INDEX_MAX, &len, &e);
        cJSON *idx = text ? cJSON_Parse(text) : NULL;
        free(text);
        if (idx) cJSON_AddItemToArray(list, idx);
        free(names[i]);
    }
    return j;
}

char *rest_recfile_read(const net *n, const char *file, size_t *len, const char **ctype, int *status, char *err,
                        size_t errlen) {
    char dir[1100], path[1300];
    if (!config_record_dir(n->cfg, dir, sizeof dir)) {
        *status = 404;
        snprintf(err, errlen, "this server keeps no recordings (--record-dir)");
        return NULL;
    }
    snprintf(path, sizeof path, "%s/%s", dir, file);
    int e = 0;
    char *buf = read_all(path, REC_FILE_MAX, len, &e);
    if (!buf) {
        *status = e == ENOENT ? 404 : e == EFBIG ? 413 : 500;
        snprintf(err, errlen, "%s: %s", file, e == ENOENT ? "no such recording file" : strerror(e));
        return NULL;
    }
    *ctype = strstr(file, ".json") ? "application/json" : "application/octet-stream";
    return buf;
}
