/* rate.h - the command rate limit every party is held to: a token bucket
 * (so many commands a second, up to a burst) and what each command costs,
 * shared by the WebSocket edge (net/ws.c, a browser) and the sim node's bus
 * (bus/bus_node.c, a relay's clients).  Pure: the caller passes the clock. */
#ifndef SRV_RATE_H
#define SRV_RATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "command.h"

/* A bucket holding up to `burst` tokens, refilled at `per_s` a second.
 * A value; its owner's thread only. */
typedef struct rate_bucket {
    double tokens;
    uint64_t at_ns; /* when tokens was last brought up to date */
} rate_bucket;

/* A full bucket at now_ns. */
rate_bucket rate_bucket_full(double burst, uint64_t now_ns);
/* Refills b up to now_ns (a clock that went back refills nothing). */
void rate_bucket_fill(rate_bucket *b, double per_s, double burst, uint64_t now_ns);
/* Refills b, then takes cost tokens: false, taking none, when it holds fewer. */
bool rate_bucket_take(rate_bucket *b, double per_s, double burst, double cost, uint64_t now_ns);
/* Whether b, refilled to now_ns, is full again: such a bucket is the same as
 * a new one, so its owner's entry may be forgotten. */
bool rate_bucket_idle(const rate_bucket *b, double per_s, double burst, uint64_t now_ns);

/* What a command costs beyond the one every message costs: a scene load
 * rebuilds the world, a solver switch its solver's state, and a recording
 * start codes a keyframe and opens files (29 each: at most 4 a second at the
 * default 120), a body is allocated (4). */
double rate_extra_cost(cmd_kind k);
/* Commands that rebuild the world (a scene load, a restore): the sim thread
 * applies at most one of them a tick. */
bool rate_cmd_heavy(cmd_kind k);

/* Commands that rebuild the world or its solver's state (a scene load, a
 * restore, a solver switch: milliseconds of the sim thread each, and a
 * keyframe for every viewer): a world applies at most --rebuilds-per-min of
 * them, whoever asks (all parties and edges together), at most
 * RATE_REBUILDS_BURST at once (fewer when the minute's bound is smaller). */
#define RATE_REBUILDS_BURST 10
bool rate_cmd_rebuilds(cmd_kind k);
/* The world's bucket of rebuilds for --rebuilds-per-min per_min: its rate a
 * second and its burst. */
double rate_rebuilds_per_s(int per_min);
double rate_rebuilds_burst(int per_min);
/* The refusal's text for a command of kind k (CMD_NONE: a message not yet
 * decoded) that its bucket of per_s a second (burst) could not pay for. */
void rate_refusal(char *out, size_t n, cmd_kind k, int per_s, int burst);

#endif
