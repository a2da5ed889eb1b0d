/* frame_history.c - the frames the frame codec's encoder or decoder holds:
 * see frame_history.h. */
#include "frame_history.h"

#include <stdlib.h>
#include <string.h>

#include "frame_bands.h"

static bool frame_alloc(fc_frame *f, int cap) {
    size_t c = (size_t)(cap > 0 ? cap : 1);
    memset(f, 0, sizeof *f);
    f->id = malloc(c * 4), f->q = malloc(c * 6), f->mat = malloc(c), f->temp = malloc(c);
    return f->id && f->q && f->mat && f->temp;
}

static void frame_free(fc_frame *f) {
    free(f->id), free(f->q), free(f->mat), free(f->temp);
}

void *fc__codec_alloc(int capacity, size_t size) {
    if (capacity < 0 || capacity > FC_MAX_PARTICLES) return NULL;
    return calloc(1, size);
}

bool fc__buffers_alloc(fc_scratch *s, fc_frame *hist, int n, int cap) {
    bool ok = fc__scratch_alloc(s, cap);
    for (int i = 0; i < n; i++) ok = frame_alloc(&hist[i], cap) && ok;
    return ok;
}

void fc__buffers_free(fc_scratch *s, fc_frame *hist, int n) {
    for (int i = 0; i < n; i++) frame_free(&hist[i]);
    fc__scratch_free(s);
}

const fc_frame *fc__history_find(const fc_frame *hist, int n, uint32_t seq) {
    if (seq == FC_NONE) return NULL;
    for (int i = 0; i < n; i++)
        if (hist[i].valid && hist[i].seq == seq) return &hist[i];
    return NULL;
}

void fc__history_clear(fc_frame *hist, int n) {
    for (int i = 0; i < n; i++) hist[i].valid = false;
}

fc_frame fc__band_view(const fc_frame *f, const uint32_t *lo, int k, int i) {
    fc_frame v = *f;
    int count;
    int at = fc_bands_range(f->id, f->n, lo[i], i + 1 < k ? lo[i + 1] : 0, i + 1 == k, &count);
    v.n = count;
    v.id = f->id + at;
    v.q = f->q + 3 * at;
    v.mat = f->mat + at;
    v.temp = f->temp + at;
    return v;
}
