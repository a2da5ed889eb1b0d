/* fuzz_room_doc.c - libFuzzer harness: room_doc_read (server/wire/room_doc.c),
 * a room's settings read back from <data-dir>/rooms/<name>/room.json at
 * start, with the input as the file's bytes.
 *
 * Checks, besides ASan/UBSan: an accepted document has a room's public role
 * (viewer to owner), and writing it and reading it back gives the same. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_check.h"
#include "room_doc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    room_doc d;
    char err[200];
    if (room_doc_read((const char *)data, size, &d, err, sizeof err)) {
        FUZZ_REQUIRE(fz_terminated(err, sizeof err) && err[0]);
        return 0;
    }
    FUZZ_REQUIRE(d.public_role >= ROLE_VIEWER && d.public_role <= ROLE_OWNER);
    char text[256];
    int n = room_doc_write(&d, text, sizeof text);
    FUZZ_REQUIRE(n > 0);
    room_doc back;
    FUZZ_REQUIRE(!room_doc_read(text, (size_t)n, &back, err, sizeof err));
    FUZZ_REQUIRE(back.public_role == d.public_role && back.key_gen == d.key_gen);
    return 0;
}
