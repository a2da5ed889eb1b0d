/* fuzz_snapshot.c - libFuzzer harness: a snapshot document into a world, the
 * two ways the server takes one.
 *   REST (POST /api/snapshot): wire_decode_snapshot + fs_world_restore into
 *     the running world, whose capacity is fixed (persist_doc_restore);
 *   the save file (--data-dir, read at start): persist_doc_peek sizes a new
 *     world from the document, then persist_doc_restore.
 * A restored world is stepped a few times, so that bad state shows (the
 * sanitizers: ASan, UBSan with float-cast-overflow).  Two properties are
 * checked on every input, beyond "no report":
 *   - a refused document leaves the world exactly as it was (its snapshot
 *     bytes are unchanged);
 *   - after stepping, the world's own snapshot is accepted again (what the
 *     server saves, it restores at the next start).
 *
 * Built and run by tests/fuzz/fuzz.mk (`make fuzz FUZZ=fuzz_snapshot`, and
 * `make test`'s smoke run): the step's hot loops ($(FUZZ_SIM_HOT): solver, mps,
 * unified, kernels, sparse, pool) are built with the sanitizers but without
 * coverage instrumentation: their coverage says little about the decoder and
 * the checks, which is what the fuzzer explores, and only slows each
 * execution (docs/fuzzing-snapshot.md has the measurement).  Seeds:
 * tests/fuzz/corpus/fuzz_snapshot (made by gen_snapshot_corpus.c, see there);
 * past reproducers: tests/fuzz/crashes/fuzz_snapshot.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_snapshot.h"
#include "log.h"
#include "persist_doc.h"

#define STEPS 2

/* The running world an upload lands in, kept across inputs as the server
 * keeps its one world: a small dam break (thinned to BASE_PARTICLES, see
 * fuzz_snapshot.h), stepped, so that "left as it was" is checked against a
 * world with particles in it.  base_bytes is its snapshot; after an accepted
 * input (only then) the world is put back from it. */
#define BASE_PARTICLES 40
static fs_world *g_rest;
static bool g_dirty;
static uint8_t *base_bytes;
static size_t base_len;
static uint8_t *g_buf; /* scratch for the snapshots the checks take */
static size_t g_buf_cap;

/* The world's snapshot into g_buf (grown as needed, never shrunk). */
static size_t snap_of(const fs_world *w) {
    size_t n = fs_world_snapshot_size(w);
    if (n > g_buf_cap) {
        free(g_buf);
        g_buf = malloc(n);
        g_buf_cap = n;
    }
    if (!g_buf || fs_world_snapshot_write(w, g_buf, n) != n) abort();
    return n;
}

static void make_rest_world(void) {
    fs_world_def d = fuzz_snapshot_def(FUZZ_SNAP_CAPACITY);
    g_rest = fs_world_create(&d);
    if (!g_rest || fs_world_load_scene(g_rest, "dam_break", FUZZ_SNAP_MIN_SCENE, NULL) != FS_OK) abort();
    fs_world_step(g_rest);
    fuzz_snapshot_thin(g_rest, BASE_PARTICLES);
    fs_world_step(g_rest);
    base_len = snap_of(g_rest);
    base_bytes = malloc(base_len);
    if (!base_bytes) abort();
    memcpy(base_bytes, g_buf, base_len);
}

/* The world as the last input left it, put back to the base if that input
 * changed it. */
static fs_world *rest_world(void) {
    if (!g_rest) make_rest_world();
    if (g_dirty) {
        fs_error e = {{0}};
        if (fs_world_restore(g_rest, base_bytes, base_len, &e) != FS_OK) {
            fprintf(stderr, "fuzz_snapshot: the base snapshot is refused: %s\n", e.msg);
            abort();
        }
        g_dirty = false;
    }
    return g_rest;
}

/* Exact: the world's snapshot, byte for byte, is the base's. */
static void same_as_base(const fs_world *w, const char *why) {
    size_t n = snap_of(w);
    if (n != base_len || memcmp(g_buf, base_bytes, n)) {
        fprintf(stderr, "fuzz_snapshot: a refused snapshot changed the world (%s)\n", why);
        abort();
    }
}

/* Steps, then checks that the world's own snapshot restores into a new
 * world of its capacity (what the server saves, it restores at the next
 * start). */
static void step_and_resave(fs_world *w) {
    for (int k = 0; k < STEPS; k++) fs_world_step(w);
    size_t n = snap_of(w);
    fs_world_def d = fuzz_snapshot_def(fs_world_capacity(w));
    fs_world *again = fs_world_create(&d);
    fs_error e = {{0}};
    if (!again || fs_world_restore(again, g_buf, n, &e) != FS_OK) {
        fprintf(stderr, "fuzz_snapshot: a stepped world's own snapshot is refused: %s\n", e.msg);
        abort();
    }
    fs_world_destroy(again);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc, (void)argv;
    log_set_level(LOG_ERROR);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char err[256];
    /* REST: into the running world */
    fs_world *w = rest_world();
    if (persist_doc_restore(w, data, size, err, sizeof err) == 0) {
        g_dirty = true;
        step_and_resave(w);
    } else {
        same_as_base(w, err);
    }

    /* the save file: a world sized from the document */
    fs_snapshot_info info;
    if (persist_doc_peek(data, size, &info, err, sizeof err) == 0 && info.capacity != FUZZ_SNAP_CAPACITY &&
        info.capacity <= FUZZ_SNAP_MAX_FILE_CAP) {
        fs_world_def d = fuzz_snapshot_def(info.capacity);
        fs_world *f = fs_world_create(&d);
        if (!f) abort();
        if (persist_doc_restore(f, data, size, err, sizeof err) == 0) step_and_resave(f);
        fs_world_destroy(f);
    }
    return 0;
}
