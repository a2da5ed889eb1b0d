/* b64url.h - base64url without padding (RFC 4648 section 5), as JWTs spell
 * their parts: the invite tests and the invite fuzz harness build tokens by
 * hand with it.  Header only, for tests. */
#ifndef TESTS_B64URL_H
#define TESTS_B64URL_H

#include <stddef.h>

/* Writes the n bytes of s to out (room for 4 * (n + 2) / 3 + 1 bytes),
 * terminated; returns the characters written. */
static inline size_t b64url(const unsigned char *s, size_t n, char *out) {
    static const char a[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    size_t o = 0;
    for (size_t i = 0; i < n; i += 3) {
        unsigned v = (unsigned)s[i] << 16 | (i + 1 < n ? (unsigned)s[i + 1] << 8 : 0) | (i + 2 < n ? s[i + 2] : 0);
        out[o++] = a[v >> 18 & 63];
        out[o++] = a[v >> 12 & 63];
        if (i + 1 < n) out[o++] = a[v >> 6 & 63];
        if (i + 2 < n) out[o++] = a[v & 63];
    }
    out[o] = 0;
    return o;
}

#endif
