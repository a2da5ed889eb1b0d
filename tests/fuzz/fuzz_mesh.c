/* fuzz_mesh.c - libFuzzer harness: mesh_load (server/wire/mesh_load.c) on any
 * bytes as any of its four formats: OBJ through the project's own reader
 * (server/wire/obj_read.c, instrumented), STL and glTF through Assimp, which
 * is linked uninstrumented (its own memory errors show only as crashes).
 *
 * Input layout: the first byte's low 2 bits pick the format (STL, OBJ, PLY,
 * binary glTF; PLY is refused after its header); the rest is the file.
 * Limits: 1 MiB and 20,000 triangles.
 *
 * Checks, besides ASan/UBSan: an accepted mesh passes fs_mesh_check, is
 * within the limits, and its closedness check and (when closed) its mass
 * properties run and give a finite positive volume. */
#include <math.h>
#include <sanitizer/allocator_interface.h>
#include <sanitizer/asan_interface.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fluid_sim.h"
#include "fuzz_check.h"
#include "mesh_load.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Assimp 5.2 leaks on malformed files (tests/fuzz/crashes/fuzz_mesh/README.md;
 * the server contains it with a reader process): this in-process harness
 * looks for crashes and broken promises, and LeakSanitizer is off for it,
 * at exit too (libFuzzer's -detect_leaks=0 covers only each input). */
const char *__asan_default_options(void);
const char *__asan_default_options(void) {
    return "detect_leaks=0";
}

#define REQUIRE FUZZ_REQUIRE

/* Assimp's OBJ importer allocated a 16 MiB line cache for every file
 * (IOStreamBuffer's default size) and filled it twice.  ASan serves a block
 * that large from a fresh mapping and unmaps it when its quarantine lets it
 * go, so each OBJ input cost 4,096 page faults and most of the harness's
 * time (about 40 ms of CPU an input against 1 ms for an STL).  The harness
 * replaces the global operator new and delete (the replaceable C++
 * allocation functions, by their mangled names: libassimp and libstdc++
 * call them) for blocks of BIG_BLOCK bytes or more: a deleted one is kept
 * (up to KEPT of them), poisoned whole, and handed out again for a request
 * between half its size and its size, poisoned past the request.  ASan
 * still reports a read or write past the requested end or into a deleted
 * block (use-after-poison), and a second delete (free twice); what Assimp
 * is fed is unchanged.  Smaller blocks go to malloc and free as before.
 * OBJ no longer reaches Assimp (obj_read.c reads it); the replacement stays
 * for a block that large another importer may ask for. */
#define BIG_BLOCK (4u << 20)
#define KEPT 4
static struct {
    void *p;
    size_t cap;
} kept[KEPT];
static int nkept;

void *_Znwm(size_t n);           /* operator new(std::size_t) */
void _ZdlPv(void *p);            /* operator delete(void *) */
void _ZdlPvm(void *p, size_t n); /* operator delete(void *, std::size_t) */

void *_Znwm(size_t n) {
    for (int k = 0; n >= BIG_BLOCK && k < nkept; k++) {
        if (kept[k].cap < n || kept[k].cap / 2 > n) continue;
        void *p = kept[k].p;
        kept[k] = kept[--nkept];
        ASAN_UNPOISON_MEMORY_REGION(p, n);
        return p;
    }
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "fuzz_mesh: operator new of %zu bytes failed\n", n);
        abort();
    }
    return p;
}

void _ZdlPv(void *p) {
    if (!p) return;
    for (int k = 0; k < nkept; k++)
        if (kept[k].p == p) { /* deleted twice: let ASan report it */
            kept[k] = kept[--nkept];
            free(p);
            free(p);
            return;
        }
    const size_t cap = __sanitizer_get_ownership(p) ? __sanitizer_get_allocated_size(p) : 0;
    if (cap >= BIG_BLOCK && nkept < KEPT) {
        ASAN_POISON_MEMORY_REGION(p, cap);
        kept[nkept].p = p, kept[nkept++].cap = cap;
        return;
    }
    free(p);
}

void _ZdlPvm(void *p, size_t n) {
    (void)n;
    _ZdlPv(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const mesh_format f = (mesh_format)(data[0] & 3);
    const mesh_limits lim = {1u << 20, 20000};
    mesh_data d;
    char err[200];
    if (mesh_load(data + 1, size - 1, f, &lim, &d, err, sizeof err) != 0) {
        REQUIRE(d.vertices == NULL && d.triangles == NULL && memchr(err, 0, sizeof err));
        return 0;
    }
    fs_mesh m = mesh_data_view(&d);
    fs_error e;
    REQUIRE(fs_mesh_check(&m, &e) == FS_OK);
    REQUIRE(d.triangle_count >= 1 && d.triangle_count <= lim.max_triangles);
    REQUIRE(d.vertex_count >= 3 && d.vertex_count <= 3 * d.triangle_count);
    if (fs_mesh_check_closed(&m, &e) == FS_OK) {
        fs_mass_props mp;
        if (fs_mesh_mass_properties(&m, &mp, &e) == FS_OK) REQUIRE(isfinite(mp.volume) && mp.volume > 0);
    }
    mesh_data_free(&d);
    return 0;
}
