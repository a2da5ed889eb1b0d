/* fuzz_ws_command.c - libFuzzer harness: one WebSocket message (the bytes a
 * client sends) through wire_decode_command, which decodes it and runs the
 * command validator (cmd_from_fields); then the reply the server would send.
 *
 * Checks, besides ASan/UBSan: an accepted command keeps every promise of
 * commands.h (fuzz_check.h); a refusal has a terminated, non-empty reason. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fuzz_check.h"
#include "wire.h"
#include "validate.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    cmd c;
    char err[FS_ERROR_LEN];
    memset(err, 0x5a, sizeof err); /* a missing terminator shows */
    int rc = wire_decode_command(data, size, &c, err, sizeof err);
    FUZZ_REQUIRE(rc == 0 || rc == -1);
    msg_buf *reply;
    if (rc == 0) {
        fz_check_cmd(&c);
        cmd_reply r;
        memset(&r, 0, sizeof r);
        r.kind = c.kind;
        r.rid = c.rid;
        r.ok = true;
        reply = wire_encode_reply(&r);
    } else {
        fz_check_error(err, sizeof err);
        reply = wire_encode_error(RC_BAD_REQUEST, c.rid, NULL, err); /* what the server sends back */
    }
    FUZZ_REQUIRE(reply && reply->len > 0);
    msg_buf_unref(reply);
    return 0;
}
