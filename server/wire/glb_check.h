/* glb_check.h - a binary glTF's header and JSON chunk held to what Assimp
 * 5.2's glTF 2 importer accepts when it probes a file (glb_check.c), so that
 * Assimp never falls back to probing its other importers. */
#ifndef GLB_CHECK_H
#define GLB_CHECK_H

#include <stddef.h>
#include <stdint.h>

/* The deepest nesting of arrays and objects the JSON chunk may have. */
#define GLB_JSON_MAX_DEPTH 64

/* NULL when b[0..n) is a binary glTF 2.0 file whose header, chunk layout and
 * JSON chunk the glTF 2 importer's probe accepts; else a sentence saying
 * what is wrong. */
const char *glb_check(const uint8_t *b, size_t n);

/* NULL when s[0..n) is one JSON value (RFC 8259) that any conforming parser
 * reads: no NUL, valid UTF-8, escapes complete and surrogates paired,
 * numbers finite as doubles, at most GLB_JSON_MAX_DEPTH levels, nothing
 * after the value but whitespace; else a sentence. */
const char *glb_json_strict(const char *s, size_t n);

#endif
