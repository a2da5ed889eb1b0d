/* snapshots.c - freeing a particle snapshot. */
#include "snapshots.h"

#include <stdlib.h>

void particles_snap_free(particles_snap *s) {
    if (!s) return;
    free(s->id);
    free(s->pos);
    free(s->vel);
    free(s->material);
    free(s->temp);
    free(s);
}
