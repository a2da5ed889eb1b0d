/* fleet_maker.c - the thread that makes a fleet's rooms (see fleet_maker.h),
 * a job thread (job_thread.h). */
#include "fleet_maker.h"

#include <stdio.h>
#include <string.h>

/* Opens the job's room, fenced, its sim thread started. */
static void open_one(rooms *d, const fleet_make *j, fleet_made *out) {
    memcpy(out->name, j->name, sizeof out->name);
    out->claim = j->claim;
    room_def def = room_default_def();
    def.name = j->name;
    def.scene = j->rec.scene[0] ? j->rec.scene : NULL;
    def.particles = j->rec.particles;
    def.public_role = j->rec.public_role;
    def.key_gen = j->rec.key_gen;
    def.restore = j->claim > 0;
    def.snapshot = j->snap;
    def.epoch = (uint32_t)(((j->claim ? j->claim : 1) & 0xffffu) << 16);
    out->status = room_open(d, &def, &out->room, out->err, sizeof out->err);
    if (out->status != ROOM_OK) return;
    hub_set_fence(room_hub(out->room), 1); /* nothing is stepped before the claim */
    if (room_start(out->room)) {
        snprintf(out->err, sizeof out->err, "room '%s': cannot start its sim thread", j->name);
        room_close(d, j->name);
        room_unref(out->room);
        out->room = NULL;
        out->status = ROOM_FAILED;
    }
}

/* Makes the job's room (its snapshot dropped once read). */
static void make_one(void *ctx, const void *job, void *answer) {
    const fleet_make *j = job;
    open_one(ctx, j, answer);
    msg_buf_unref(j->snap);
}

static void drop_job(void *ctx, void *job) {
    (void)ctx;
    msg_buf_unref(((fleet_make *)job)->snap);
}

/* A room made and not taken back: closed. */
static void drop_made(void *ctx, void *answer) {
    fleet_made *m = answer;
    if (!m->room) return;
    room_close(ctx, m->name);
    room_unref(m->room);
}

fleet_maker *fleet_maker_create(rooms *d, int nice, char *err, size_t errlen) {
    const job_thread_def def = {.name = "fleet-make",
                                .nice = nice,
                                .job_size = sizeof(fleet_make),
                                .answer_size = sizeof(fleet_made),
                                .cap = FLEET_MAKER_JOBS,
                                .ctx = d,
                                .run = make_one,
                                .drop_job = drop_job,
                                .drop_answer = drop_made};
    return job_thread_create(&def, err, errlen);
}
