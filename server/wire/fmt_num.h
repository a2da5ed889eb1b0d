/* fmt_num.h - numbers as text for the exports, byte for byte what printf's
 * "%.9g" (a float: nine significant digits, enough to read it back exactly)
 * and "%u" write, at a fraction of printf's cost: a 20,000-particle VTU
 * export is about 160,000 of them, written on the network thread. */
#ifndef SRV_FMT_NUM_H
#define SRV_FMT_NUM_H

#include <stddef.h>
#include <stdint.h>

#define FMT_NUM_MAX 32 /* the most either writes, with its terminating NUL */

/* v as printf("%.9g", (double)v) writes it, NUL-terminated, into o (at
 * least FMT_NUM_MAX bytes); returns its length.  A value whose rounding the
 * fast path cannot decide for certain (within a few parts in 10^16 of a
 * halfway point), or outside [1e-14, 1e14), goes through snprintf. */
size_t fmt_g9(float v, char *o);
/* v as printf("%u") writes it; returns its length. */
size_t fmt_u32(uint32_t v, char *o);

#endif
