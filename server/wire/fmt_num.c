/* fmt_num.c - "%.9g" and "%u" without printf (see fmt_num.h).
 *
 * "%.9g" of a float: N, the value scaled by 10^(8-k) and rounded to an
 * integer of nine digits, k its decimal exponent; then printf's %g layout
 * (fixed for -4 <= k < 9, else d.dddddddde+XX; trailing zeros dropped).
 * The scaling is one multiplication or division by an exact power of ten
 * (10^0..10^22 are doubles), so it errs by at most half an ulp of a number
 * below 2^30: 1.2e-7.  When the scaled value's fraction lies that close to
 * one half, the rounding is left to snprintf, which decides it exactly. */
#include "fmt_num.h"

#include <math.h>
#include <stdio.h>

static const double pow10_tab[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                     1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

/* a * 10^p, |p| <= 22, with one rounding. */
static double scale(double a, int p) {
    return p >= 0 ? a * pow10_tab[p] : a / pow10_tab[-p];
}

size_t fmt_u32(uint32_t v, char *o) {
    char t[10];
    int n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (int i = 0; i < n; i++) o[i] = t[n - 1 - i];
    o[n] = 0;
    return (size_t)n;
}

/* The fallback: printf itself. */
static size_t slow(float v, char *o) {
    int l = snprintf(o, FMT_NUM_MAX, "%.9g", (double)v);
    return l < 0 ? 0 : (size_t)l;
}

size_t fmt_g9(float v, char *o) {
    const double a = fabs((double)v);
    if (!(a >= 1e-14 && a < 1e14)) return slow(v, o); /* 0, -0, tiny, huge, inf, nan */
    int e2;
    frexp(a, &e2);                                   /* a in [2^(e2-1), 2^e2) */
    int k = (int)floor((e2 - 1) * 0.30102999566398); /* log10(2^(e2-1)): a guess, off by one at most */
    uint32_t n = 0;
    for (int tries = 0;; tries++) {
        if (tries == 3 || 8 - k > 22 || 8 - k < -22) return slow(v, o);
        const double d = scale(a, 8 - k);
        if (d < 99999999.5) { /* k too large: fewer than nine digits */
            k--;
            continue;
        }
        if (d >= 999999999.5) { /* k too small: ten digits (or nine that round up to ten) */
            k++;
            continue;
        }
        const double f = d - floor(d);
        if (fabs(f - 0.5) < 4e-7) return slow(v, o); /* too close to halfway to decide here */
        n = (uint32_t)(d + 0.5);
        break;
    }
    char dig[9];
    for (int i = 8; i >= 0; i--) {
        dig[i] = (char)('0' + n % 10);
        n /= 10;
    }
    int last = 8; /* the last digit kept: trailing zeros go */
    while (last > 0 && dig[last] == '0') last--;
    char *p = o;
    if (v < 0) *p++ = '-';
    if (k < -4 || k >= 9) {
        *p++ = dig[0];
        if (last > 0) {
            *p++ = '.';
            for (int i = 1; i <= last; i++) *p++ = dig[i];
        }
        *p++ = 'e';
        *p++ = k < 0 ? '-' : '+';
        int e = k < 0 ? -k : k;
        *p++ = (char)('0' + e / 10);
        *p++ = (char)('0' + e % 10);
    } else if (k >= 0) {
        for (int i = 0; i <= k; i++) *p++ = dig[i];
        if (last > k) {
            *p++ = '.';
            for (int i = k + 1; i <= last; i++) *p++ = dig[i];
        }
    } else {
        *p++ = '0';
        *p++ = '.';
        for (int i = 0; i < -k - 1; i++) *p++ = '0';
        for (int i = 0; i <= last; i++) *p++ = dig[i];
    }
    *p = 0;
    return (size_t)(p - o);
}
