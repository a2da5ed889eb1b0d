/* fuzz_mesh.c - libFuzzer harness: mesh_load (server/wire/mesh_load.c, through
 * Assimp, which is linked uninstrumented: its own memory errors show only as
 * crashes) on any bytes as any of its four formats.
 *
 * Input layout: the first byte's low 2 bits pick the format (STL, OBJ, PLY,
 * binary glTF; PLY is refused after its header); the rest is the file.  Limits: 1 MiB and 20,000 triangles.
 *
 * Checks, besides ASan/UBSan: an accepted mesh passes fs_mesh_check, is
 * within the limits, and its closedness check and (when closed) its mass
 * properties run and give a finite positive volume. */
#include <math.h>
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
