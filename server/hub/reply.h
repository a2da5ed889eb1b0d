/* reply.h - the answer to one command, moved from the sim thread to the
 * network thread (with the snapshot it carries, if any). */
#ifndef SRV_REPLY_H
#define SRV_REPLY_H

#include <stdbool.h>
#include <stdint.h>

#include "command.h"
#include "fluid_sim.h"
#include "msgbuf.h"
#include "reply_code.h"
#include "snapshots.h"

/* Threads: built by the sim thread, moved through the hub to the network
 * thread.  What it carries (snap, bodies or blob) is handed over with it. */
typedef struct cmd_reply {
    uint32_t client, rid;
    cmd_kind kind;
    bool ok;
    reply_code code; /* RC_OK when ok; else why it was refused (set with the error, by cmd_reply_refuse) */
    bool duplicate;  /* a retried command (same sid and rid): not applied again; the first answer */
    char error[FS_ERROR_LEN];
    uint64_t tick;           /* tick at which the command took effect */
    int64_t value;           /* push: touched; load_scene: particles; step: steps; set_param: material; emitter: slot */
    char name[CMD_NAME_LEN]; /* record_start: the recording's name */
    particles_snap *snap;    /* GET_PARTICLES */
    bodies_snap *bodies;     /* GET_BODIES */
    obstacles_snap *obstacles; /* GET_OBSTACLES */
    msg_buf *blob;             /* GET_SNAPSHOT: the encoded snapshot (one reference) */
} cmd_reply;

/* Makes r a refusal: not ok, its code, and the reason (printf's format). */
void cmd_reply_refuse(cmd_reply *r, reply_code code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The code a reply carries: RC_OK when ok; a refusal that names no code (or
 * one outside the table) reads as RC_INTERNAL. */
reply_code cmd_reply_code(const cmd_reply *r);

/* Frees what a reply carries (snapshots) and clears the pointers. */
void cmd_reply_free_payload(cmd_reply *r);

#endif
