/* fleet_snap.c - a fleet's room snapshots in JetStream (docs/fleet.md,
 * "Snapshots"): the stream FLUID_<fleet>_SNAP, one message per subject
 * fluid.<fleet>.snap.<room>.<slot>.<k>, where a save's chunks go to slot
 * save % 2 so that a save cut short (its node killed between its chunks and
 * its key) leaves the one the key names whole; a snapshot read back only
 * when every chunk is of the save the key names, of its length, and the
 * whole document's SHA-256 is the key's; the periodic saves written on the
 * saver's thread (fleet_link.h). */
#include "fleet_link.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

#define SNAP_WAIT_MS 2000 /* a chunk's publish or read waits at most this long for the broker */

static void stream_name(const fleet *f, char *out, size_t cap) {
    snprintf(out, cap, "FLUID_%s_SNAP", f->cfg->fleet);
}

static void chunk_subject(const fleet *f, const char *name, uint64_t save, int k, char *out, size_t cap) {
    snprintf(out, cap, "fluid.%s.snap.%s.%u.%d", f->cfg->fleet, name, (unsigned)(save % 2), k);
}

int fleet_snap_setup(fleet *f) {
    char name[64], subjects[96];
    stream_name(f, name, sizeof name);
    snprintf(subjects, sizeof subjects, "fluid.%s.snap.>", f->cfg->fleet);
    const char *subj[1] = {subjects};
    jsStreamConfig sc;
    jsStreamConfig_Init(&sc);
    sc.Name = name;
    sc.Subjects = subj;
    sc.SubjectsLen = 1;
    sc.MaxMsgsPerSubject = 1;
    sc.MaxMsgSize = (int32_t)FLEET_CHUNK_MAX + 4096; /* and its headers */
    sc.Storage = js_FileStorage;
    sc.Replicas = f->cfg->fleet_replicas;
    jsStreamInfo *si = NULL;
    jsErrCode jerr = 0;
    natsStatus s = js_AddStream(&si, f->js, &sc, NULL, &jerr); /* as it is when it exists with this configuration */
    jsStreamInfo_Destroy(si);
    if (s != NATS_OK) {
        const char *last = nats_GetLastError(NULL);
        log_once("fleet-stream", "fleet: cannot make the snapshots' stream %s: %s%s%s (logged once)", name,
                 natsStatus_GetText(s), last ? ": " : "", last ? last : "");
        return -1;
    }
    return 0;
}

static void sha256_hex(const uint8_t *p, size_t n, char out[FLEET_SHA256_HEX + 1]) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int len = 0;
    out[0] = 0;
    if (!EVP_Digest(p, n, md, &len, EVP_sha256(), NULL) || len != 32) return;
    for (unsigned i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int fleet_snap_write(fleet *f, const char *name, uint64_t claim, uint64_t save, const msg_buf *doc, uint64_t tick,
                     fleet_snap_manifest *out) {
    if (!doc->len || doc->len > (size_t)FLEET_CHUNKS_MAX * FLEET_CHUNK_MAX) {
        log_once("fleet-snap-size", "fleet: room '%s': a snapshot of %zu bytes is not saved (at most %u chunks of %u)",
                 name, doc->len, FLEET_CHUNKS_MAX, FLEET_CHUNK_MAX);
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->save = save;
    out->bytes = doc->len;
    out->chunks = (int)((doc->len + FLEET_CHUNK_MAX - 1) / FLEET_CHUNK_MAX);
    out->tick = tick;
    sha256_hex(doc->data, doc->len, out->sha256);
    if (!out->sha256[0]) return -1;
    char hc[24], hs[24], hn[16];
    snprintf(hc, sizeof hc, "%llu", (unsigned long long)claim);
    snprintf(hs, sizeof hs, "%llu", (unsigned long long)save);
    snprintf(hn, sizeof hn, "%d", out->chunks);
    jsPubOptions po;
    jsPubOptions_Init(&po);
    po.MaxWait = SNAP_WAIT_MS;
    for (int k = 0; k < out->chunks; k++) {
        char subj[160];
        chunk_subject(f, name, save, k, subj, sizeof subj);
        const size_t len = fleet_chunk_len(doc->len, k);
        natsMsg *m = NULL;
        natsStatus s = natsMsg_Create(&m, subj, NULL, (const char *)doc->data + (size_t)k * FLEET_CHUNK_MAX, (int)len);
        if (s == NATS_OK) s = natsMsgHeader_Set(m, "Fluid-Claim", hc);
        if (s == NATS_OK) s = natsMsgHeader_Set(m, "Fluid-Save", hs);
        if (s == NATS_OK) s = natsMsgHeader_Set(m, "Fluid-Chunks", hn);
        jsErrCode jerr = 0;
        if (s == NATS_OK) s = js_PublishMsg(NULL, f->js, m, &po, &jerr);
        natsMsg_Destroy(m);
        if (s != NATS_OK) {
            log_once("fleet-snap-pub", "fleet: room '%s': chunk %d of save %llu not published: %s (logged once)", name,
                     k, (unsigned long long)save, natsStatus_GetText(s));
            return -1;
        }
    }
    return 0;
}

msg_buf *fleet_snap_read(fleet *f, const char *name, const fleet_snap_manifest *man, bool *unread, char *why,
                         size_t cap) {
    *unread = false;
    char stream[64];
    stream_name(f, stream, sizeof stream);
    wbuf b;
    wbuf_init(&b, (size_t)man->bytes, (size_t)man->bytes);
    jsOptions jo;
    jsOptions_Init(&jo);
    jo.Wait = SNAP_WAIT_MS;
    for (int k = 0; k < man->chunks; k++) {
        char subj[160];
        chunk_subject(f, name, man->save, k, subj, sizeof subj);
        natsMsg *m = NULL;
        jsErrCode jerr = 0;
        natsStatus s = js_GetLastMsg(&m, f->js, stream, subj, &jo, &jerr);
        if (s != NATS_OK) {
            /* only a chunk the stream does not have is the snapshot's fault; a timeout, or a broker
             * that did not answer, is the broker's now */
            *unread = s != NATS_NOT_FOUND;
            snprintf(why, cap, "chunk %d of save %llu cannot be read: %s", k, (unsigned long long)man->save,
                     natsStatus_GetText(s));
            wbuf_free(&b);
            return NULL;
        }
        const char *hs = NULL, *hn = NULL;
        natsMsgHeader_Get(m, "Fluid-Save", &hs);
        natsMsgHeader_Get(m, "Fluid-Chunks", &hn);
        const int len = natsMsg_GetDataLength(m);
        int bad = fleet_chunk_check(man, k, hs, hn, len > 0 ? (size_t)len : 0, why, cap);
        if (!bad && wbuf_append(&b, natsMsg_GetData(m), (size_t)len)) {
            snprintf(why, cap, "out of memory");
            bad = -1;
        }
        natsMsg_Destroy(m);
        if (bad) {
            wbuf_free(&b);
            return NULL;
        }
    }
    char sha[FLEET_SHA256_HEX + 1];
    sha256_hex(b.data, b.len, sha);
    if (b.len != man->bytes || strcmp(sha, man->sha256)) {
        snprintf(why, cap, "its %zu bytes' SHA-256 is %.16s..., not the %.16s... its key names", b.len, sha,
                 man->sha256);
        wbuf_free(&b);
        return NULL;
    }
    msg_buf *doc = wbuf_finish(&b);
    if (!doc) snprintf(why, cap, "out of memory");
    return doc;
}

/* ---- The saver ---------------------------------------------------------------------- */

static void save_one(void *ctx, const void *job, void *answer) {
    const fleet_save_job *j = job;
    fleet_saved *res = answer;
    memcpy(res->name, j->name, sizeof res->name);
    res->seq = j->seq, res->claim = j->claim, res->save = j->save;
    res->ok = !fleet_snap_write(ctx, j->name, j->claim, j->save, j->doc, j->tick, &res->man);
    msg_buf_unref(j->doc);
}

static void drop_save(void *ctx, void *job) {
    (void)ctx;
    msg_buf_unref(((fleet_save_job *)job)->doc);
}

fleet_saver *fleet_saver_create(fleet *f, int nice, char *err, size_t errlen) {
    const job_thread_def def = {.name = "fleet-save",
                                .nice = nice,
                                .job_size = sizeof(fleet_save_job),
                                .answer_size = sizeof(fleet_saved),
                                .cap = FLEET_SAVER_JOBS,
                                .ctx = f,
                                .run = save_one,
                                .drop_job = drop_save};
    return job_thread_create(&def, err, errlen);
}
