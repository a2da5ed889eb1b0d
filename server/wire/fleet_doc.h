/* fleet_doc.h - the values of a fleet's directory (docs/fleet.md, "Names"):
 * a node's record (key node.<id>) and a room's claim (key room.<name>) as
 * JSON, and the keys themselves.  Every value is read from the broker, where
 * any node (or a user with its permissions) may have written it: a value
 * longer than FLEET_DOC_MAX, not a JSON object, with a field missing, of the
 * wrong type or out of range, or a field twice, is refused with a reason,
 * never guessed at.  A fleet is updated node by node, so nodes of two
 * versions read each other's values (docs/fleet.md, "Versions of the
 * values"): a field added later is optional (a room's "ms": its absence
 * reads as 0, not measured), and a field this version does not know is
 * ignored (its name by the rule, at most FLEET_FIELDS_MAX fields a value).
 *
 * Pure; any thread. */
#ifndef SRV_FLEET_DOC_H
#define SRV_FLEET_DOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "roles.h"
#include "room_name.h"

#define FLEET_DOC_MAX 1024    /* bytes of a value: a longer one is refused unread */
#define FLEET_NODE_MAX 65535u /* node ids are 1 to this */
#define FLEET_URL_CAP 128
#define FLEET_SCENE_CAP 64
#define FLEET_ERROR_CAP 200
#define FLEET_MS_MAX 1e7        /* a budget or its use, in core-milliseconds a tick */
#define FLEET_COUNT_MAX 65536   /* rooms, clients */
#define FLEET_FIELDS_MAX 32     /* fields of a value, or of its snapshot's manifest, known or not */
#define FLEET_FIELD_NAME_MAX 32 /* characters of a field's name: a-z, 0-9, '_' */

#define FLEET_CHUNK_MAX (512u * 1024u) /* bytes of a snapshot's chunk (the broker's messages are at most 1 MiB) */
#define FLEET_CHUNKS_MAX 512           /* chunks of a snapshot: at most 256 MiB */
#define FLEET_SHA256_HEX 64

/* A room's snapshot in the stream FLUID_<fleet>_SNAP as its key names it
 * (docs/fleet.md, "Snapshots"): save 0 when it has none yet. */
typedef struct fleet_snap_manifest {
    uint64_t save;                     /* grows by one at each snapshot of the room, whoever holds it */
    int chunks;                        /* 1..FLEET_CHUNKS_MAX messages, fluid.<fleet>.snap.<room>.<k> */
    uint64_t bytes;                    /* the document's length: chunks of FLEET_CHUNK_MAX, the last shorter */
    char sha256[FLEET_SHA256_HEX + 1]; /* of the whole document, lower-case hex */
    uint64_t tick;                     /* the world's tick in it (informative) */
} fleet_snap_manifest;

/* key node.<id>: a node's load, put every second. */
typedef struct fleet_node_rec {
    uint32_t id;
    char url[FLEET_URL_CAP]; /* where its REST API is (informative) */
    double budget_ms;        /* core-ms of each tick its rooms may take (--step-budget of the tick, its threads) */
    double used_ms;          /* ... that its awake rooms take */
    int rooms, clients;
    int cap_rooms; /* most rooms it lists */
} fleet_node_rec;

/* key room.<name>: where a room is held. */
typedef struct fleet_room_rec {
    uint32_t node;  /* the node that holds it, or that is asked to make it (claim 0); 0: released by its holder
                       (a drain, a stop) at its last snapshot, for the next holder to claim at once */
    uint64_t claim; /* grows by one at each change of holder; 0: placed, not yet claimed */
    role public_role;
    unsigned key_gen;
    char scene[FLEET_SCENE_CAP]; /* its first scene ("": the node's --scene) */
    int particles;               /* its first scene's size (0: the node's --particles) */
    char error[FLEET_ERROR_CAP]; /* claim 0: why the node it was placed on refused it ("": none) */
    fleet_snap_manifest snap;    /* its last snapshot ("snap": null when save is 0) */
    double ms; /* core-ms of each tick it takes at its holder (0: not measured yet, or a key of a node older than
                  the field: unknown) */
} fleet_room_rec;

typedef enum fleet_key_kind { FLEET_KEY_OTHER, FLEET_KEY_NODE, FLEET_KEY_ROOM, FLEET_KEY_DRAIN } fleet_key_kind;

/* A key of the bucket: a node's record (id filled), a room's (name filled,
 * by the room-name rule), or a node's drain (drain.<id>: the node is asked
 * to move its rooms elsewhere; only the key's presence counts, its value is
 * not read); FLEET_KEY_OTHER for any other key (ignored). */
fleet_key_kind fleet_key_parse(const char *key, uint32_t *id, char name[ROOM_NAME_CAP]);

/* A value's text into out (cap bytes, terminated): its length, or -1 when
 * it does not fit. */
int fleet_node_write(const fleet_node_rec *r, char *out, size_t cap);
int fleet_room_write(const fleet_room_rec *r, char *out, size_t cap);
/* Reads n bytes: 0 and *r, or -1 with err saying why. */
int fleet_node_read(const void *p, size_t n, fleet_node_rec *r, char *err, size_t errlen);
int fleet_room_read(const void *p, size_t n, fleet_room_rec *r, char *err, size_t errlen);

/* One chunk of the snapshot m names, as read from the stream: chunk k of
 * len bytes whose headers Fluid-Save and Fluid-Chunks are save and chunks
 * (NULL: missing).  0 when it belongs (the same save, the same count, the
 * length its place in the document gives), or -1 with err. */
int fleet_chunk_check(const fleet_snap_manifest *m, int k, const char *save, const char *chunks, size_t len, char *err,
                      size_t errlen);
/* The length of chunk k of a document of n bytes. */
size_t fleet_chunk_len(uint64_t n, int k);

#endif
