/* frame_walk.c - the walks of the frame codec's payload bodies (see
 * frame_walk.h; protocol/PROTOCOL.md, "Keyframe body", "Delta body", "The
 * table coder"): a keyframe's ids as runs and its particles by spatial
 * prediction; a delta's ids removed and added, its kept particles' residuals
 * against a prediction from the base and prev frames (zero motion or
 * constant velocity, in id order) through the table coder, its new
 * particles by spatial prediction, and the materials and temperatures that
 * changed.  Integers go through the range coder (a spatial residual in a
 * context of its neighbours' magnitude classes), a delta's residuals through
 * the table coder (in a context of the particle's speed). */
#include "frame_walk.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Models and contexts ----------------------------------------------------- */

static void models_reset(fc_models *m) {
    uint16_t *p = (uint16_t *)m;
    size_t k = sizeof *m / sizeof *p;
    for (size_t i = 0; i < k; i++) p[i] = RC_PROB_ONE / 2;
}

/* The speed context of a particle whose largest velocity component has
 * magnitude m (levels per frame). */
static inline int speed_of(int32_t m) {
    return (m > 1) + (m > 4) + (m > 12);
}

static int speed_ctx(int32_t vx, int32_t vy, int32_t vz) {
    int32_t s = abs(vx);
    if (abs(vy) > s) s = abs(vy);
    if (abs(vz) > s) s = abs(vz);
    return speed_of(s);
}

/* The context of a spatial residual from two magnitude classes: the
 * previous particle's on this axis, and this particle's on the axis before
 * (on x, the previous particle's again). */
static int nb_ctx(int prev_cls, int this_prev_axis_cls) {
    int a = prev_cls + this_prev_axis_cls;
    return a == 0 ? 0 : a <= 2 ? 1 : a <= 4 ? 2 : 3;
}

/* ---- Scratch ------------------------------------------------------------------- */

void fc__scratch_free(fc_scratch *s) {
    free(s->removed), free(s->added), free(s->bidx), free(s->pidx), free(s->res);
    free(s->tab), free(s->tsym), free(s->tctx), free(s->tst), free(s->tbuf), free(s->rbuf);
}

bool fc__scratch_alloc(fc_scratch *s, int cap) {
    memset(s, 0, sizeof *s);
    size_t c = (size_t)(cap > 0 ? cap : 1);
    s->cap = cap;
    s->removed = malloc(c * 4), s->added = malloc(c * 4), s->bidx = malloc(c * 4), s->pidx = malloc(c * 4);
    s->res = malloc(c * 12);
    /* at most 4 symbols a particle (a joint one, then 3), each at most 12
     * bits of the rANS stream; at most 3 x 17 raw bits.  The tables are
     * zeroed: a decoder may read a context without a table before it
     * refuses the payload (table_triple). */
    s->tab = calloc(1, sizeof *s->tab), s->tsym = malloc(c * 4), s->tctx = malloc(c * 4), s->tst = malloc(c * 4);
    s->tbuf_cap = c * 7 + 64, s->tbuf = malloc(s->tbuf_cap), s->rbuf = malloc(s->tbuf_cap);
    return s->removed && s->added && s->bidx && s->pidx && s->res && s->tab && s->tsym && s->tctx && s->tst &&
           s->tbuf && s->rbuf;
}

/* ---- The walks ----------------------------------------------------------------- */

#define FAIL(...)                                                                                                      \
    do {                                                                                                               \
        snprintf(err, errlen, __VA_ARGS__);                                                                            \
        return -1;                                                                                                     \
    } while (0)

/* Positions, materials and temperatures of one particle from a spatial
 * prediction (keyframes, new particles).  *last is the previous particle so
 * coded (its q, mat, temp; classes). */
typedef struct spatial_state {
    int32_t q[3];
    int32_t mat, temp;
    int cls[3];
} spatial_state;

static int code_spatial(rc *r, fc_models *m, fc_frame *f, int k, spatial_state *st, char *err, size_t errlen) {
    for (int a = 0; a < 3; a++) {
        int ctx = nb_ctx(st->cls[a], a ? st->cls[a - 1] : st->cls[a]);
        int64_t e = r->dec ? 0 : (int64_t)f->q[3 * k + a] - st->q[a];
        int c;
        e = rc_code_int(r, &m->spat[a][ctx], e, &c);
        int64_t q = st->q[a] + e;
        if (q < 0 || q >= f->grid.levels[a]) FAIL("frame payload: particle %d lies outside the grid on axis %d", k, a);
        f->q[3 * k + a] = (uint16_t)q;
        st->q[a] = (int32_t)q;
        st->cls[a] = c;
    }
    int c;
    int64_t v = rc_code_int(r, &m->mat, r->dec ? 0 : (int64_t)f->mat[k] - st->mat, &c) + st->mat;
    if (v < 0 || v > 255) FAIL("frame payload: material out of range");
    f->mat[k] = (uint8_t)v;
    st->mat = (int32_t)v;
    v = rc_code_int(r, &m->temp, r->dec ? 0 : (int64_t)f->temp[k] - st->temp, &c) + st->temp;
    if (v < 0 || v > 255) FAIL("frame payload: temperature out of range");
    f->temp[k] = (uint8_t)v;
    st->temp = (int32_t)v;
    return 0;
}

/* A keyframe's body: its ids as runs, then every particle spatially coded. */
static int walk_key(rc *r, fc_scratch *s, fc_frame *f, char *err, size_t errlen) {
    fc_models *m = &s->m;
    int n = f->n;
    /* ids as runs: (gap from the previous run's end, length - 1) */
    uint32_t runs = 0;
    if (!r->dec)
        for (int k = 0; k < n; k++) runs += k == 0 || f->id[k] != f->id[k - 1] + 1;
    runs = rc_code_u(r, &m->count, runs);
    if (runs > (uint32_t)n || (n && !runs)) FAIL("frame payload: %u id runs for %d particles", runs, n);
    uint64_t next = 0;
    int k = 0;
    for (uint32_t i = 0; i < runs; i++) {
        uint32_t gap = 0, len = 0;
        if (!r->dec) {
            int e = k + 1;
            while (e < n && f->id[e] == f->id[e - 1] + 1) e++;
            gap = (uint32_t)(f->id[k] - next);
            len = (uint32_t)(e - k - 1);
        }
        gap = rc_code_u(r, &m->gap, gap);
        len = rc_code_u(r, &m->runlen, len) + 1;
        uint64_t start = next + gap;
        if (len > (uint32_t)(n - k) || start + len - 1 > 0xffffffffu)
            FAIL("frame payload: id runs exceed the declared count or the id range");
        for (uint32_t j = 0; j < len; j++) f->id[k++] = (uint32_t)(start + j);
        next = start + len;
    }
    if (k != n) FAIL("frame payload: id runs hold %d ids, %d declared", k, n);
    spatial_state st;
    memset(&st, 0, sizeof st);
    for (int a = 0; a < 3; a++) st.q[a] = f->grid.levels[a] / 2;
    for (k = 0; k < n; k++)
        if (code_spatial(r, m, f, k, &st, err, errlen)) return -1;
    return 0;
}

/* Whether two frames hold the same ids: a loop without an exit, which
 * vectorises (the WebAssembly build's C library compares byte by byte). */
static bool same_ids(const fc_frame *a, const fc_frame *b) {
    if (a->n != b->n) return false;
    uint32_t d = 0;
    for (int i = 0; i < a->n; i++) d |= a->id[i] ^ b->id[i];
    return !d;
}

/* For each particle of a (ids increasing) its index in b, or -1.  True
 * when the two hold the same ids (idx is then the identity). */
static bool match_ids(const fc_frame *a, const fc_frame *b, int32_t *idx) {
    if (same_ids(a, b)) {
        for (int i = 0; i < a->n; i++) idx[i] = i;
        return true;
    }
    int j = 0;
    for (int i = 0; i < a->n; i++) {
        while (j < b->n && b->id[j] < a->id[i]) j++;
        idx[i] = j < b->n && b->id[j] == a->id[i] ? j : -1;
    }
    return false;
}

/* Steps 1-2 of a delta: the ids removed from the base (indices into it) and
 * added, then the frame's ids and each particle's base index (s->bidx). */
static int delta_ids(rc *r, fc_scratch *s, fc_frame *f, const fc_frame *base, char *err, size_t errlen) {
    fc_models *m = &s->m;
    int n = f->n;
    uint32_t nrem = 0, nadd = 0;
    if (!r->dec) {
        int i = 0, j = 0;
        while (i < base->n || j < n) {
            if (j >= n || (i < base->n && base->id[i] < f->id[j]))
                s->removed[nrem++] = (uint32_t)i++;
            else if (i >= base->n || f->id[j] < base->id[i])
                s->added[nadd++] = f->id[j++];
            else
                i++, j++;
        }
    }
    nrem = rc_code_u(r, &m->count, nrem);
    if (nrem > (uint32_t)base->n) FAIL("frame payload: removes %u of the base's %d particles", nrem, base->n);
    uint32_t last = FC_NONE;
    for (uint32_t i = 0; i < nrem; i++) {
        uint32_t g = rc_code_u(r, &m->gap, r->dec ? 0 : s->removed[i] - last - 1);
        uint64_t at = (uint64_t)last + 1 + g;
        if (last == FC_NONE) at = g;
        if (at >= (uint64_t)base->n)
            FAIL("frame payload: removes particle %llu of a base of %d", (unsigned long long)at, base->n);
        s->removed[i] = last = (uint32_t)at;
        if (r->overrun) FAIL("frame payload truncated");
    }
    nadd = rc_code_u(r, &m->count, nadd);
    if ((uint64_t)base->n - nrem + nadd != (uint64_t)n)
        FAIL("frame payload: %d - %u + %u particles, %d declared", base->n, nrem, nadd, n);
    int64_t ref = base->n ? (int64_t)base->id[base->n - 1] + 1 : 0;
    for (uint32_t i = 0; i < nadd; i++) {
        int64_t id;
        if (i == 0) {
            int c;
            id = ref + rc_code_int(r, &m->idfirst, r->dec ? 0 : (int64_t)s->added[0] - ref, &c);
        } else {
            id = (int64_t)s->added[i - 1] + 1 + rc_code_u(r, &m->gap, r->dec ? 0 : s->added[i] - s->added[i - 1] - 1);
        }
        if (id < 0 || id > 0xffffffffLL) FAIL("frame payload: added id out of range");
        s->added[i] = (uint32_t)id;
        if (r->overrun) FAIL("frame payload truncated");
    }
    /* Merge: the frame's ids and each particle's base index (nothing to
     * merge when no particle came or went). */
    s->ident = !nrem && !nadd;
    if (s->ident) {
        memcpy(f->id, base->id, (size_t)n * sizeof *f->id);
        for (int k = 0; k < n; k++) s->bidx[k] = k;
        return 0;
    }
    {
        uint32_t ri = 0, ai = 0;
        int k = 0;
        for (int i = 0; i <= base->n; i++) {
            bool keep = i < base->n;
            if (keep && ri < nrem && s->removed[ri] == (uint32_t)i) {
                keep = false;
                ri++;
            }
            while (ai < nadd && (i == base->n || s->added[ai] < base->id[i]) && (keep || i == base->n)) {
                if (k && s->added[ai] <= f->id[k - 1]) FAIL("frame payload: added ids not increasing");
                f->id[k] = s->added[ai++];
                s->bidx[k++] = -1;
            }
            if (keep) {
                if (k && base->id[i] <= f->id[k - 1]) FAIL("frame payload: added id %u already present", f->id[k - 1]);
                f->id[k] = base->id[i];
                s->bidx[k++] = i;
            }
        }
        if (ai != nadd || k != n) FAIL("frame payload: ids do not merge");
    }
    return 0;
}

/* Step 6 of a delta: materials and temperatures of kept particles: only
 * the changes. */
static int delta_changes(rc *r, fc_scratch *s, fc_frame *f, const fc_frame *base, char *err, size_t errlen) {
    fc_models *m = &s->m;
    int n = f->n;
    for (int which = 0; which < 2; which++) {
        uint8_t *dst = which ? f->temp : f->mat;
        const uint8_t *src = which ? base->temp : base->mat;
        uint32_t nch = 0;
        if (!r->dec)
            for (int k = 0; k < n; k++) nch += s->bidx[k] >= 0 && dst[k] != src[s->bidx[k]];
        nch = rc_code_u(r, &m->count, nch);
        if (nch > (uint32_t)n) FAIL("frame payload: %u changes for %d particles", nch, n);
        int k = 0;
        for (uint32_t i = 0; i < nch; i++) {
            uint32_t g = 0;
            if (!r->dec) {
                int e = k;
                while (s->bidx[e] < 0 || dst[e] == src[s->bidx[e]]) e++;
                g = (uint32_t)(e - k);
            }
            g = rc_code_u(r, &m->gap, g);
            if ((uint64_t)k + g >= (uint64_t)n) FAIL("frame payload: a change past the last particle");
            int kk = k + (int)g;
            if (s->bidx[kk] < 0) FAIL("frame payload: a change on a new particle");
            if (r->dec) /* the unchanged ones up to here */
                for (int t = k; t < kk; t++)
                    if (s->bidx[t] >= 0) dst[t] = src[s->bidx[t]];
            int c;
            int64_t old = src[s->bidx[kk]];
            int64_t v = old + rc_code_int(r, which ? &m->tempchg : &m->matchg, r->dec ? 0 : (int64_t)dst[kk] - old, &c);
            if (v < 0 || v > 255 || v == old) FAIL("frame payload: bad %s change", which ? "temperature" : "material");
            dst[kk] = (uint8_t)v;
            k = kk + 1;
            if (r->overrun) FAIL("frame payload truncated");
        }
        if (r->dec && s->ident)
            memcpy(dst + k, src + k, (size_t)(n - k));
        else if (r->dec)
            for (int t = k; t < n; t++)
                if (s->bidx[t] >= 0) dst[t] = src[s->bidx[t]];
    }
    return 0;
}

/* One particle's three residuals with the table coder, in speed context sc
 * (the encoder codes e, the decoder fills it).  With joint symbols (options
 * bit 6) the particle's first symbol is joint: its three values when all lie
 * in [-2, 2], else the escape, on state js (the particle's coding position
 * modulo 2, so that consecutive particles decode on different states), in
 * context TC_AXIS_CTX + sc; an escape is followed by the three values as
 * without: one symbol per axis on the axis's state, in context
 * axis * FC_SPEED_CTX + sc, and its raw bits.  *used collects the contexts
 * decoded from (each must have a table; checked by the caller, after the
 * loop: the tables are zeroed at creation, so a context without one reads
 * in bounds).  The encoder records symbols, contexts and states (coded once
 * the tables are known) and writes the raw bits. */
static inline __attribute__((always_inline)) void table_triple(rc *r, fc_scratch *s, tc_rans_dec *rd, tc_bit_reader *br,
                                                               int32_t e[3], int sc, bool joint, int js, bool room,
                                                               uint32_t *used) {
    if (r->dec) {
        if (joint) {
            *used |= 1u << (TC_AXIS_CTX + sc);
            int j = tc_rans_get(rd, s->tab, js, TC_AXIS_CTX + sc, room);
            if (j < TC_JOINT_ESC) {
                e[0] = tc_joint_val[j][0], e[1] = tc_joint_val[j][1], e[2] = tc_joint_val[j][2];
                return;
            }
        }
        *used |= 0x111u << sc;
        tc_bitr_fill(br);
        for (int a = 0; a < 3; a++) {
            int sym = tc_rans_get(rd, s->tab, a, a * FC_SPEED_CTX + sc, room);
            e[a] = tc_join(sym, tc_bitr_take(br, tc_sym_nraw[sym]));
        }
        return;
    }
    for (int a = 0; a < 3; a++) s->res[s->nres++] = e[a];
    if (joint) {
        int j = tc_joint_sym(e[0], e[1], e[2]), ctx = TC_AXIS_CTX + sc;
        s->tsym[s->tn] = (uint8_t)j, s->tctx[s->tn] = (uint8_t)ctx, s->tst[s->tn++] = (uint8_t)js;
        s->tcount[ctx][j]++;
        if (j < TC_JOINT_ESC) return;
    }
    for (int a = 0; a < 3; a++) {
        tc_split sp = tc_split_value(e[a]);
        int ctx = a * FC_SPEED_CTX + sc;
        s->tsym[s->tn] = sp.sym, s->tctx[s->tn] = (uint8_t)ctx, s->tst[s->tn++] = (uint8_t)a;
        s->tcount[ctx][sp.sym]++;
        tc_bits_put(&s->bw, sp.raw, sp.nraw);
    }
}

/* The decoder's check after a table-coded walk: every context decoded from
 * has a table, and the streams did not run out. */
static int table_end(fc_scratch *s, uint32_t used, char *err, size_t errlen) {
    for (int c = 0; c < TC_MAX_CTX; c++)
        if ((used >> c & 1) && !s->tab->nsym[c]) FAIL("frame payload: a value in context %d, which has no table", c);
    if (s->rd.overrun || tc_bitr_left(&s->br) < 0) FAIL("frame payload truncated");
    return 0;
}

/* At most 4 rANS words (8 bytes) and 48 raw bits a particle. */
#define TABLE_ROOM 8

static inline int32_t clamp_level(int32_t p, int32_t levels) {
    return p < 0 ? 0 : p >= levels ? levels - 1 : p;
}

/* Steps 3-4 of a delta (PROTOCOL.md, "Delta body") with the table coder:
 * each kept particle's velocity from prev (same id), its speed context, its
 * prediction (zero motion or constant velocity, clamped to the grid) and
 * its residuals, in one pass in id order (memory order), with no array
 * between the steps.  A decoder then walks its frames in sequence. */
static int table_by_id(rc *r, fc_scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base,
                       const fc_frame *prev, char *err, size_t errlen) {
    const int32_t *bidx = s->bidx, *pidx = s->pidx;
    const int32_t lv[3] = {f->grid.levels[0], f->grid.levels[1], f->grid.levels[2]};
    const int32_t cv = o->predictor == FC_PRED_CV;
    const bool joint = o->joint;
    int n = f->n, j = 0;
    uint32_t used = 0;
    tc_rans_dec rd = s->rd; /* locals, so that the states live in registers */
    tc_bit_reader br = s->br;
    s->nres = 0, s->tn = 0;
    for (int k = 0; k < n; k++) {
        int b = bidx[k];
        if (b < 0) continue;
        const uint16_t *bq = &base->q[3 * b];
        int pi = prev ? pidx[b] : -1;
        int32_t v[3] = {0, 0, 0}, p[3], e[3];
        if (pi >= 0) {
            const uint16_t *pq = &prev->q[3 * pi];
            v[0] = bq[0] - pq[0], v[1] = bq[1] - pq[1], v[2] = bq[2] - pq[2];
        }
        int sc = speed_ctx(v[0], v[1], v[2]);
        uint16_t *q = &f->q[3 * k];
        for (int a = 0; a < 3; a++)
            p[a] = clamp_level(bq[a] + cv * v[a], lv[a]), e[a] = r->dec ? 0 : (int32_t)q[a] - p[a];
        bool room = r->dec && rd.end - rd.p >= TABLE_ROOM;
        table_triple(r, s, &rd, &br, e, sc, joint, j++ & 1, room, &used);
        if (r->dec) {
            int32_t x = p[0] + e[0], y = p[1] + e[1], z = p[2] + e[2];
            if (x < 0 || x >= lv[0] || y < 0 || y >= lv[1] || z < 0 || z >= lv[2])
                FAIL("frame payload: particle %d lies outside the grid", k);
            q[0] = (uint16_t)x, q[1] = (uint16_t)y, q[2] = (uint16_t)z;
        }
    }
    s->rd = rd, s->br = br;
    return r->dec ? table_end(s, used, err, errlen) : 0;
}

/* The decoder's path for a delta whose particles are those of its base and
 * of the previous frame, in the same order (no particle added or removed
 * over the two frames: most frames).  The same values as table_by_id's, in
 * three loops instead of one, over blocks of KEPT_BLOCK particles: the
 * contexts, the residuals (the only serial loop: the rANS states and the
 * raw bits), then the predictions and sums.  The first and last run over
 * the frames' flat arrays of levels and vectorise; the serial loop holds
 * only the entropy decoder's state in its registers; and a block's base,
 * prev and residuals are still in the first-level cache when the last loop
 * reads them again (docs/wire-v2.md, "Decoding speed"). */
#define KEPT_BLOCK 256
static int table_kept(rc *r, fc_scratch *s, const fc_options *o, fc_frame *f, const fc_frame *base,
                      const fc_frame *prev, char *err, size_t errlen) {
    const int n = f->n;
    const int32_t cv = o->predictor == FC_PRED_CV;
    const bool joint = o->joint;
    tc_rans_dec rd = s->rd; /* locals, so that the states live in registers */
    tc_bit_reader br = s->br;
    int32_t e[3 * KEPT_BLOCK];
    uint16_t av[3 * KEPT_BLOCK], pr[3 * KEPT_BLOCK];
    uint8_t cx[KEPT_BLOCK];
    int32_t top[24]; /* the top level of each lane of a group of 8 particles */
    for (int j = 0; j < 24; j++) top[j] = (int32_t)f->grid.levels[j % 3] - 1;
    uint32_t used = 0, bad = 0;
    for (int k0 = 0; k0 < n; k0 += KEPT_BLOCK) {
        const int m = n - k0 < KEPT_BLOCK ? n - k0 : KEPT_BLOCK, mv = 3 * m;
        const uint16_t *restrict bq = base->q + 3 * k0, *restrict pq = prev->q + 3 * k0;
        uint16_t *restrict q = f->q + 3 * k0;
        int i = 0;
        for (; i + 24 <= mv; i += 24) /* |v| and the clamped prediction */
            for (int j = 0; j < 24; j++) {
                int32_t b = bq[i + j], d = b - (int32_t)pq[i + j], p = b + cv * d;
                av[i + j] = (uint16_t)(d < 0 ? -d : d);
                p = p < 0 ? 0 : p;
                pr[i + j] = (uint16_t)(p < top[j] ? p : top[j]);
            }
        for (int j = 0; i < mv; i++, j++) {
            int32_t b = bq[i], d = b - (int32_t)pq[i], p = b + cv * d;
            av[i] = (uint16_t)(d < 0 ? -d : d);
            p = p < 0 ? 0 : p;
            pr[i] = (uint16_t)(p < top[j] ? p : top[j]);
        }
        for (int k = 0; k < m; k++) {
            uint16_t v = av[3 * k] > av[3 * k + 1] ? av[3 * k] : av[3 * k + 1];
            v = v > av[3 * k + 2] ? v : av[3 * k + 2];
            cx[k] = (uint8_t)speed_of(v);
        }
        int k = 0;
        if (rd.end - rd.p >= (ptrdiff_t)m * TABLE_ROOM) /* two particles a turn: the joint states are constants */
            for (; k + 1 < m; k += 2) {
                table_triple(r, s, &rd, &br, &e[3 * k], cx[k], joint, 0, true, &used);
                table_triple(r, s, &rd, &br, &e[3 * k + 3], cx[k + 1], joint, 1, true, &used);
            }
        for (; k < m; k++) table_triple(r, s, &rd, &br, &e[3 * k], cx[k], joint, (k0 + k) & 1, false, &used);
        /* q = the prediction + e, in groups of 8 particles (24 values, so
         * that each lane keeps its axis's top level) */
        for (i = 0; i + 24 <= mv; i += 24)
            for (int j = 0; j < 24; j++) {
                uint32_t v = (uint32_t)((int32_t)pr[i + j] + e[i + j]);
                bad |= v > (uint32_t)top[j]; /* below 0 or past the top */
                q[i + j] = (uint16_t)v;
            }
        for (int j = 0; i < mv; i++, j++) {
            uint32_t v = (uint32_t)((int32_t)pr[i] + e[i]);
            bad |= v > (uint32_t)top[j];
            q[i] = (uint16_t)v;
        }
    }
    s->rd = rd, s->br = br;
    if (table_end(s, used, err, errlen)) return -1;
    if (bad) FAIL("frame payload: a particle lies outside the grid");
    return 0;
}

/* The table coder's frequency tables, range coded: per context its symbol
 * count, then each symbol's frequency (0: unused).  The decoder checks
 * them and builds its lookups. */
static int code_tables(rc *r, fc_scratch *s, char *err, size_t errlen) {
    fc_models *m = &s->m;
    tc_tables *t = s->tab;
    for (int c = 0; c < TC_MAX_CTX; c++) {
        uint32_t nsym = rc_code_u(r, &m->tabn, t->nsym[c]);
        if (nsym > (uint32_t)tc_ctx_nsym(c))
            FAIL("frame payload: a table of %u symbols in context %d (at most %d)", nsym, c, tc_ctx_nsym(c));
        uint16_t fr[TC_SYM_MAX];
        for (uint32_t k = 0; k < nsym; k++) {
            uint32_t v = rc_code_u(r, &m->tabf, r->dec ? 0 : t->freq[c][k]);
            if (v > TC_SCALE) FAIL("frame payload: a table frequency of %u", v);
            fr[k] = (uint16_t)v;
        }
        if (r->overrun) FAIL("frame payload truncated");
        if (r->dec && !tc_build_context(t, c, (int)nsym, fr))
            FAIL("frame payload: table %d does not sum to %u", c, TC_SCALE);
    }
    return 0;
}

/* Constant velocity, or zero motion where that codes smaller: a pool at
 * rest jitters by a step or so a frame, and extrapolating the jitter doubles
 * it (docs/wire-v2.md, "Prediction").  The estimate of each is the sum of
 * the residuals' bit lengths over the particles kept from the base (twice
 * the length, plus one, is about what a value costs), over every 4th
 * particle in id order, through the walk's own id matches (s->bidx: f to
 * base, s->pidx: base to prev).  The encoder's only. */
static int pick_predictor(const fc_scratch *s, const fc_frame *f, const fc_frame *base, const fc_frame *prev) {
    const int32_t *bi = s->bidx, *pi = s->pidx;
    uint64_t cost[2] = {0, 0};
    for (int k = 0; k < f->n; k += 4) { /* every 4th particle: an estimate */
        int b = bi[k];
        if (b < 0 || pi[b] < 0) continue;
        for (int a = 0; a < 3; a++) {
            int32_t q = f->q[3 * k + a], bq = base->q[3 * b + a], v = bq - (int32_t)prev->q[3 * pi[b] + a];
            int32_t p = clamp_level(bq + v, f->grid.levels[a]);
            cost[0] += (uint64_t)rc_mag_class((uint32_t)abs(q - bq));
            cost[1] += (uint64_t)rc_mag_class((uint32_t)abs(q - p));
        }
    }
    return cost[0] < cost[1] ? FC_PRED_ZERO : FC_PRED_CV;
}

/* Steps 3-4 of a delta (PROTOCOL.md, "Delta body"): the table coder's
 * tables first in the range-coded stream (the encoder codes them after the
 * walk, once it has counted the symbols, into the same place), then the
 * kept particles' residuals.  The encoder may switch o's constant velocity
 * to zero motion for this payload (pick_predictor; the header records it). */
static int code_residuals(rc *r, fc_scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                          char *err, size_t errlen) {
    s->pident = prev && match_ids(base, prev, s->pidx);
    if (!r->dec && prev && o->predictor == FC_PRED_CV) o->predictor = pick_predictor(s, f, base, prev);
    if (r->dec && code_tables(r, s, err, errlen)) return -1;
    if (!r->dec) memset(s->tcount, 0, sizeof s->tcount);
    if (r->dec && s->ident && s->pident) { /* pident: prev is held, with the base's ids */
        if (table_kept(r, s, o, f, base, prev, err, errlen)) return -1;
    } else if (table_by_id(r, s, o, f, base, prev, err, errlen))
        return -1;
    if (r->dec) return 0;
    for (int c = 0; c < TC_MAX_CTX; c++) tc_normalize(s->tab, c, s->tcount[c]);
    return code_tables(r, s, err, errlen);
}

/* A delta's body: steps 1-6 (PROTOCOL.md, "Delta body"). */
static int walk_delta(rc *r, fc_scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev,
                      char *err, size_t errlen) {
    fc_models *m = &s->m;
    int n = f->n;
    if (delta_ids(r, s, f, base, err, errlen)) return -1;
    if (code_residuals(r, s, o, f, base, prev, err, errlen)) return -1;
    /* 5. New particles, in id order, from the previous new one. */
    spatial_state st;
    memset(&st, 0, sizeof st);
    for (int a = 0; a < 3; a++) st.q[a] = f->grid.levels[a] / 2;
    for (int k = 0; k < n && !s->ident; k++)
        if (s->bidx[k] < 0) {
            if (code_spatial(r, m, f, k, &st, err, errlen)) return -1;
            if (r->overrun) FAIL("frame payload truncated");
        }
    return delta_changes(r, s, f, base, err, errlen);
}

int fc__walk(rc *r, fc_scratch *s, fc_options *o, fc_frame *f, const fc_frame *base, const fc_frame *prev, char *err,
             size_t errlen) {
    models_reset(&s->m);
    s->nres = 0;
    return base ? walk_delta(r, s, o, f, base, prev, err, errlen) : walk_key(r, s, f, err, errlen);
}

#undef FAIL
