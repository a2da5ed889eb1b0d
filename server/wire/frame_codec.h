/* frame_codec.h - protocol v2's particle payload (protocol/PROTOCOL.md,
 * "Frame payload, version 2"): quantized positions coded as residuals of a
 * temporal prediction from frames the client already holds (keyframes:
 * spatial prediction), materials and temperatures only where they changed,
 * particles added and removed by id.  A delta's residuals go through static
 * per-frame tables and rANS (table_coder.h), everything else through an
 * adaptive binary range coder (range_coder.h).  Measured in docs/wire-v2.md.
 *
 * The codec's files, one concept each: frame_header.c (the 56-byte header,
 * the quantization grid, the checksum), frame_walk.c (the walks both ends
 * share: ids, prediction, residuals, changes), frame_history.c (the frames
 * an encoder or decoder holds), frame_encoder.c and frame_decoder.c (this
 * API), frame_bands.c (kind 2 containers).
 *
 * Pure functions on caller-owned contexts: no sockets, no world, no threads,
 * no allocation after create.  An encoder keeps the last FC_HISTORY frames
 * as the decoder will hold them (quantized), so one encoded delta serves
 * every client that holds the same (base, prev) pair.  A decoder keeps the
 * last FC_DEC_HISTORY decoded frames.
 *
 * Threads: an fc_encoder belongs to the thread that encodes (the sim thread
 * or an encoder thread); an fc_decoder to the thread that decodes.  Neither
 * is shared.
 */
#ifndef SRV_FRAME_CODEC_H
#define SRV_FRAME_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FC_VERSION 2
#define FC_HEADER_BYTES 56
/* frames an encoder can code against: a delta 4 back with velocities from 8
 * back, and the newest frame a client held before it fell up to twice the
 * network thread's ring behind */
#define FC_HISTORY 16
#define FC_DEC_HISTORY 4 /* frames a decoder holds */
#define FC_NONE 0xffffffffu
#define FC_MAX_LEVELS 65535 /* quantization levels per axis (positions are uint16) */
#define FC_MAX_PARTICLES (1 << 24)

/* Predictor choices (the header records them; the decoder follows):
 * zero motion (the base's position) or constant velocity (base + (base -
 * prev)). */
enum { FC_PRED_ZERO = 0, FC_PRED_CV = 1 };

/* The quantization grid: q = round((p - origin) / step), clamped to
 * 0..levels-1; decoded p = origin + q * step (error <= step / 2 inside the
 * box).  A value. */
typedef struct fc_grid {
    float origin[3];
    float step;
    uint16_t levels[3];
} fc_grid;

/* The default step: at most 1/1024 of the box's longest side and at most
 * 1/10 of the particle spacing. */
float fc_default_step(const float box_min[3], const float box_max[3], float spacing);
/* Builds the grid over [box_min, box_max] at `step`.  Returns 0, or -1 with
 * a reason (step not positive, or more than FC_MAX_LEVELS levels). */
int fc_grid_make(fc_grid *g, const float box_min[3], const float box_max[3], float step, char *err, size_t errlen);

/* One frame as the simulation has it.  Threads: the encoding thread, for
 * the duration of fc_encoder_push (points at caller-owned arrays). */
typedef struct fc_input {
    int count;
    const uint32_t *id; /* strictly increasing in frame order */
    const float *x, *y, *z;
    const uint8_t *material;
    const float *temp;    /* deg C; NULL: all at the lowest temperature */
    const int32_t *order; /* order[k]: index of the k-th particle in id order; NULL: identity */
} fc_input;

/* One decoded frame: what both ends hold.  Arrays of `capacity` entries
 * owned by the context it came from. */
typedef struct fc_frame {
    uint32_t seq;
    int n;
    bool valid;
    fc_grid grid;
    uint32_t *id;  /* n, increasing */
    uint16_t *q;   /* 3n: x0 y0 z0 x1 ... */
    uint8_t *mat;  /* n */
    uint8_t *temp; /* n: deg C = -40 + byte, like v1 */
} fc_frame;

/* Joint symbols (PROTOCOL.md, "The table coder"): a table-coded delta can
 * start each particle with one symbol for its three residuals when they all
 * lie in [-2, 2].  It decodes in about two thirds of the time at 100k
 * particles for the same bits; its tables cost about 2% more bits at 20k,
 * and more in small frames, so the encoder's default uses it from
 * FC_JOINT_MIN particles on (docs/wire-v2.md, "Joint symbols").  The header
 * records the choice. */
#define FC_JOINT_OFF 0
#define FC_JOINT_ON 1
#define FC_JOINT_AUTO 2
#define FC_JOINT_MIN 16384

typedef struct fc_options {
    int predictor; /* FC_PRED_*: for a delta with a prev, FC_PRED_CV lets the encoder pick zero motion where that
                    * codes smaller (the header records the choice) */
    int joint;     /* FC_JOINT_*: whether the table coder starts each particle with a joint symbol */
    int bands;     /* the encoder's split of an epoch into bands (frame_bands.h): 0 the default (bands past
                    * 65536 particles), 1 none, K: K bands (at most 16); chosen at the epoch's first frame */
} fc_options;
fc_options fc_default_options(void);

typedef struct fc_encoder fc_encoder;
/* capacity: most particles a frame may hold.  epoch: names this stream
 * (a decoder refuses deltas of another epoch); NULL on allocation failure. */
fc_encoder *fc_encoder_create(int capacity, uint32_t epoch);
void fc_encoder_destroy(fc_encoder *e);
/* Forgets every stored frame and starts a new epoch (scene load: ids
 * restart, so nothing may be coded against an older frame). */
void fc_encoder_reset(fc_encoder *e, uint32_t epoch);
void fc_encoder_set_options(fc_encoder *e, const fc_options *o);
/* Quantizes a frame on `grid` and stores it as frame `seq` (replacing the
 * oldest).  seq must grow.  Returns 0, or -1 with a reason (too many
 * particles, ids not increasing, seq not growing). */
int fc_encoder_push(fc_encoder *e, uint32_t seq, const fc_grid *grid, const fc_input *in, char *err, size_t errlen);
/* The stored frame seq (NULL when not held). */
const fc_frame *fc_encoder_frame(const fc_encoder *e, uint32_t seq);
/* Upper bound of an encoded payload of n particles. */
size_t fc_max_payload(int n);
/* Encodes stored frame `seq` as a keyframe (base == FC_NONE) or as a delta
 * against stored frame `base`, with velocities from `prev` (FC_NONE: none;
 * prev < base < seq); as bands (kind 2) when the epoch is split.  Writes at most cap bytes to out; returns the payload
 * length, or 0 with a reason (a frame not held, cap too small). */
size_t fc_encode(fc_encoder *e, uint32_t seq, uint32_t base, uint32_t prev, uint8_t *out, size_t cap, char *err,
                 size_t errlen);
/* Residuals of the last delta (of its last band when in bands), in coding
 * order (3 per particle coded with a temporal prediction; for measurements). */
const int32_t *fc_encoder_residuals(const fc_encoder *e, int *count);

typedef struct fc_decoder fc_decoder;
fc_decoder *fc_decoder_create(int capacity);
void fc_decoder_destroy(fc_decoder *d);
void fc_decoder_reset(fc_decoder *d);
/* Decodes one payload (bands too: each band against the id range of the
 * frames held).  Returns the decoded frame (held until
 * FC_DEC_HISTORY - 2 further decodes), or NULL with a reason: truncated or
 * malformed payload, options of a coding this decoder does not read (an
 * earlier encoder's), another epoch, a base or prev frame not held, more
 * particles than capacity, a value outside the grid, a checksum mismatch.
 * Never reads outside [p, p + n); never allocates. */
const fc_frame *fc_decode(fc_decoder *d, const uint8_t *p, size_t n, char *err, size_t errlen);
const fc_frame *fc_decoder_frame(const fc_decoder *d, uint32_t seq);

/* The header fields a server or client needs without decoding the body.
 * Returns 0, or -1 when p is not a v2 payload header this decoder reads. */
typedef struct fc_header {
    int kind;           /* 0 keyframe, 1 delta, 2 bands (a keyframe when base is FC_NONE) */
    fc_options options; /* predictor and joint (0 or 1) as coded; bands 0 */
    uint32_t epoch, seq, base, prev, n, checksum, body_len;
    fc_grid grid;
} fc_header;
int fc_read_header(const uint8_t *p, size_t n, fc_header *h, char *err, size_t errlen);

#endif
