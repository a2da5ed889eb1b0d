/* frame_walk.h - the walks of the frame codec's payload bodies
 * (protocol/PROTOCOL.md, "Keyframe body", "Delta body", "The table coder"),
 * shared by its encoder and decoder: one function per frame kind visits the
 * particles in the same order on both ends, and the range coder's flag
 * (range_coder.h) says whether it encodes (values in, bits out) or decodes
 * (bits in, values out), so the two cannot disagree.
 *
 * The walk's state (fc_scratch) is sized by capacity at create and part of
 * an encoder or decoder: one thread. */
#ifndef SRV_FRAME_WALK_H
#define SRV_FRAME_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame_codec.h"
#include "range_coder.h"
#include "table_coder.h"

#define FC_SPEED_CTX 4 /* speed contexts of a delta's residuals */
#define FC_NB_CTX 4    /* contexts of a spatial residual by its neighbours' classes */

/* Every adaptive probability of one payload; reset at the start of each. */
typedef struct fc_models {
    int_model spat[3][FC_NB_CTX]; /* spatial residuals (keyframes, new particles): axis, neighbour classes */
    int_model count, gap, idfirst, runlen;
    int_model mat, temp, matchg, tempchg;
    int_model tabn, tabf; /* the table coder's tables */
} fc_models;

/* Scratch of one coding walk, sized by capacity at create.  Part of an
 * encoder or decoder. */
typedef struct fc_scratch {
    int cap;
    fc_models m;
    uint32_t *removed, *added;
    int32_t *bidx, *pidx, *res;
    int nres;
    bool ident;  /* this delta keeps the base's particles as they are: bidx[k] = k */
    bool pident; /* ... and the base keeps the previous frame's: pidx[k] = k */
    /* the table coder: its tables; the encoder's symbols, contexts, states,
     * counts and raw bits (tn symbols), the decoder's streams (set up by
     * the caller before a delta's walk) */
    tc_tables *tab;
    uint8_t *tsym, *tctx, *tst, *tbuf, *rbuf; /* tst: each symbol's rANS state */
    size_t tbuf_cap;
    uint32_t tcount[TC_MAX_CTX][TC_SYM_MAX];
    int tn;
    tc_bit_writer bw;
    tc_rans_dec rd;
    tc_bit_reader br;
} fc_scratch;

/* Allocates s's arrays for cap particles; false when memory is short
 * (what was allocated stays for fc__scratch_free). */
bool fc__scratch_alloc(fc_scratch *s, int cap);
void fc__scratch_free(fc_scratch *s);

/* Codes frame f: a keyframe when base is NULL, else a delta against base
 * with velocities from prev (NULL: none).  The models start afresh.  The
 * encoder may switch o's constant velocity to zero motion for this payload
 * (the header records o).  A decoder's table streams (s->rd, s->br) are set
 * up before a delta.  Returns 0, or -1 with a reason (decoding: a malformed
 * or truncated body). */
int fc__walk(rc *r, fc_scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev, char *err,
             size_t errlen);

#endif
