/* glb_check.c - a binary glTF's header and JSON chunk held to what Assimp
 * 5.2's glTF 2 importer accepts when it probes a file.
 *
 * Why: two of Assimp's importers claim ".glb" (glTF 1 and glTF 2), so
 * Assimp asks each whether it can read the file; when neither can, it
 * probes every importer it has by signature and hands the file to the
 * first that says yes (an OBJ body in the JSON chunk was read as OBJ, and
 * Collada or X would take theirs).  The glTF 2 importer's probe
 * (glTF2::Asset::CanRead) reads the header, the JSON chunk with rapidjson
 * and the "asset" object, and says yes when the header is version 2, the
 * chunks are laid out as it reads them, the JSON parses to an object and
 * asset.version starts with "2".  This check accepts a subset of that:
 * strict JSON (glb_json_strict: no NUL, valid UTF-8, paired surrogates,
 * finite numbers, bounded depth), so a file it passes is the glTF 2
 * importer's and no other importer ever probes it. */
#include <cJSON.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "glb_check.h"

/* ---- strict JSON ------------------------------------------------------------ */
typedef struct jscan {
    const unsigned char *s;
    size_t n, i;
} jscan;

static void skip_ws(jscan *j) {
    while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\n' || j->s[j->i] == '\r')) j->i++;
}

static int hex4(jscan *j) {
    if (j->n - j->i < 4) return -1;
    int v = 0;
    for (int k = 0; k < 4; k++) {
        const unsigned char c = j->s[j->i + (size_t)k];
        const int d = c >= '0' && c <= '9'
                          ? c - '0'
                          : (c >= 'a' && c <= 'f' ? c - 'a' + 10 : (c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1));
        if (d < 0) return -1;
        v = v * 16 + d;
    }
    j->i += 4;
    return v;
}

/* One UTF-8 sequence starting at a byte >= 0x80 (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF). */
static bool utf8_seq(jscan *j) {
    const unsigned char c = j->s[j->i];
    int more;
    unsigned char lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF)
        more = 1;
    else if (c == 0xE0)
        more = 2, lo = 0xA0;
    else if (c >= 0xE1 && c <= 0xEC)
        more = 2;
    else if (c == 0xED)
        more = 2, hi = 0x9F;
    else if (c >= 0xEE && c <= 0xEF)
        more = 2;
    else if (c == 0xF0)
        more = 3, lo = 0x90;
    else if (c >= 0xF1 && c <= 0xF3)
        more = 3;
    else if (c == 0xF4)
        more = 3, hi = 0x8F;
    else
        return false;
    if (j->n - j->i <= (size_t)more) return false;
    for (int k = 1; k <= more; k++) {
        const unsigned char t = j->s[j->i + (size_t)k];
        if (t < (k == 1 ? lo : 0x80) || t > (k == 1 ? hi : 0xBF)) return false;
    }
    j->i += (size_t)more + 1;
    return true;
}

static const char *string_at(jscan *j) {
    j->i++; /* the opening quote */
    for (;;) {
        if (j->i >= j->n) return "a JSON string is not closed";
        const unsigned char c = j->s[j->i];
        if (c == '"') {
            j->i++;
            return NULL;
        }
        if (c < 0x20) return "a JSON string holds a control character";
        if (c >= 0x80) {
            if (!utf8_seq(j)) return "the JSON is not valid UTF-8";
            continue;
        }
        j->i++;
        if (c != '\\') continue;
        if (j->i >= j->n) return "a JSON escape is cut short";
        const unsigned char e = j->s[j->i++];
        if (e && strchr("\"\\/bfnrt", e)) continue;
        if (e != 'u') return "a JSON string holds an unknown escape";
        const int u = hex4(j);
        if (u < 0) return "a JSON \\u escape is not four hex digits";
        if (u >= 0xDC00 && u <= 0xDFFF) return "a JSON string holds a lone low surrogate";
        if (u >= 0xD800 && u <= 0xDBFF) {
            if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u') return "a JSON high surrogate is alone";
            j->i += 2;
            const int l = hex4(j);
            if (l < 0xDC00 || l > 0xDFFF) return "a JSON high surrogate is alone";
        }
    }
}

static bool digits(jscan *j) {
    const size_t at = j->i;
    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9') j->i++;
    return j->i > at;
}

static const char *number_at(jscan *j) {
    const size_t at = j->i;
    if (j->s[j->i] == '-') j->i++;
    if (j->i < j->n && j->s[j->i] == '0')
        j->i++;
    else if (!digits(j))
        return "a JSON number has no digits";
    if (j->i < j->n && j->s[j->i] == '.') {
        j->i++;
        if (!digits(j)) return "a JSON number has no digits after its point";
    }
    if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
        j->i++;
        if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-')) j->i++;
        if (!digits(j)) return "a JSON number has no digits in its exponent";
    }
    char tmp[512];
    const size_t len = j->i - at;
    if (len >= sizeof tmp) return "a JSON number is longer than 511 characters";
    memcpy(tmp, j->s + at, len);
    tmp[len] = 0;
    if (!isfinite(strtod(tmp, NULL))) return "a JSON number is beyond a double's range";
    return NULL;
}

static const char *literal_at(jscan *j) {
    static const char *const L[] = {"true", "false", "null"};
    for (int k = 0; k < 3; k++) {
        const size_t len = strlen(L[k]);
        if (j->n - j->i >= len && memcmp(j->s + j->i, L[k], len) == 0) {
            j->i += len;
            return NULL;
        }
    }
    return "the JSON holds a value that is not one";
}

/* A key, its colon, and the value's first byte after it. */
static const char *key_at(jscan *j) {
    if (j->i >= j->n || j->s[j->i] != '"') return "a JSON object's key is not a string";
    const char *bad = string_at(j);
    if (bad) return bad;
    skip_ws(j);
    if (j->i >= j->n || j->s[j->i] != ':') return "a JSON object's key has no colon";
    j->i++;
    return NULL;
}

const char *glb_json_strict(const char *text, size_t n) {
    jscan j = {(const unsigned char *)text, n, 0};
    char stack[GLB_JSON_MAX_DEPTH]; /* '{' or '[' of each open container */
    int depth = 0;
    for (;;) {
        /* a value */
        skip_ws(&j);
        if (j.i >= j.n) return "the JSON ends where a value belongs";
        const unsigned char c = j.s[j.i];
        const char *bad = NULL;
        if (c == '{' || c == '[') {
            if (depth == GLB_JSON_MAX_DEPTH) return "the JSON nests deeper than 64 levels";
            stack[depth++] = (char)c;
            j.i++;
            skip_ws(&j);
            if (j.i < j.n && j.s[j.i] == (c == '{' ? '}' : ']')) {
                depth--, j.i++;
            } else {
                if (c == '{' && (bad = key_at(&j)) != NULL) return bad;
                continue; /* the first value inside */
            }
        } else if (c == '"') {
            bad = string_at(&j);
        } else if (c == '-' || (c >= '0' && c <= '9')) {
            bad = number_at(&j);
        } else {
            bad = literal_at(&j);
        }
        if (bad) return bad;
        /* after a value: the next one, or the ends of containers */
        for (;;) {
            skip_ws(&j);
            if (depth == 0) return j.i == j.n ? NULL : "the JSON has more after its value";
            if (j.i >= j.n) return "the JSON ends inside an array or object";
            const unsigned char d = j.s[j.i++];
            const char top = stack[depth - 1];
            if (d == (top == '{' ? '}' : ']')) {
                depth--;
                continue;
            }
            if (d != ',') return "the JSON lacks a comma or closing bracket";
            if (top == '{') {
                skip_ws(&j);
                if ((bad = key_at(&j)) != NULL) return bad;
            }
            break;
        }
    }
}

/* ---- the file --------------------------------------------------------------- */
static uint32_t le32(const uint8_t *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

#define CHUNK_JSON 0x4E4F534Au /* "JSON" */
#define CHUNK_BIN 0x004E4942u  /* "BIN\0" */

/* The members of "asset" the probe reads (AssetMetadata::Read), of the
 * types it reads them as: version a string starting with "2"; copyright
 * and generator strings; profile an object of string api and version. */
static const char *asset_check(const cJSON *root) {
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(root, "asset");
    if (!cJSON_IsObject(a)) return "a binary glTF's JSON has no \"asset\" object";
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(a, "version");
    if (!cJSON_IsString(v) || v->valuestring[0] != '2') return "a binary glTF's asset.version is not a 2.x string";
    const char *strings[] = {"copyright", "generator"};
    for (int k = 0; k < 2; k++) {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(a, strings[k]);
        if (s && !cJSON_IsString(s)) return "a binary glTF's asset.copyright and asset.generator are strings";
    }
    const cJSON *p = cJSON_GetObjectItemCaseSensitive(a, "profile");
    if (p) {
        const cJSON *api = cJSON_GetObjectItemCaseSensitive(p, "api");
        const cJSON *pv = cJSON_GetObjectItemCaseSensitive(p, "version");
        if (!cJSON_IsObject(p) || (api && !cJSON_IsString(api)) || (pv && !cJSON_IsString(pv)))
            return "a binary glTF's asset.profile is an object of strings";
    }
    return NULL;
}

const char *glb_check(const uint8_t *b, size_t n) {
    if (n < 20 || memcmp(b, "glTF", 4) != 0) return "a binary glTF file starts with \"glTF\"";
    if (le32(b + 4) != 2) return "only binary glTF version 2 is read";
    if (le32(b + 8) != n) return "a binary glTF file's length field is its size";
    const size_t json = le32(b + 12);
    if (json > n - 20 || le32(b + 16) != CHUNK_JSON) return "a binary glTF file opens with its JSON chunk";
    if (json < 2) return "a binary glTF's JSON chunk is empty";
    /* where the probe looks for the BIN chunk: after the JSON chunk padded
     * to 4 bytes, when the file has room for its header */
    const size_t bin = 20 + ((json + 3) & ~(size_t)3);
    if (n >= bin + 8 && le32(b + bin + 4) != CHUNK_BIN) return "a binary glTF's second chunk is not its BIN chunk";
    const char *bad = glb_json_strict((const char *)b + 20, json);
    if (bad) return bad;
    cJSON *root = cJSON_ParseWithLength((const char *)b + 20, json);
    bad = !cJSON_IsObject(root) ? "a binary glTF's JSON is not an object" : asset_check(root);
    cJSON_Delete(root);
    return bad;
}
