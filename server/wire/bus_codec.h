/* bus_codec.h - the messages a sim node and its relays exchange over the
 * message bus (bus/, NATS): framesets (every coding of a frame, as the
 * stream sends them), frame wants, replies to relays' clients, relays'
 * client messages, the rooms, a room's description and statistics.  Binary,
 * little-endian, each opening with a 4-byte tag and a format version; the
 * decoders treat the bytes as untrusted (a bus delivers anything its
 * permissions allow): every length is checked, strings are terminated,
 * counts clamped, booleans normalised.  Pure functions. */
#ifndef SRV_BUS_CODEC_H
#define SRV_BUS_CODEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frameset.h"
#include "msgbuf.h"
#include "reply.h"
#include "roles.h"
#include "room_name.h"
#include "sim_stats.h"
#include "world_info.h"

#define BUS_MAX_MSG (64u << 20) /* a larger bus message is refused */
#define BUS_MAX_ROOMS 256       /* rooms named in one rooms or wants message (a node's --max-rooms at most) */
#define BUS_MAX_CRED 4096       /* a forwarded credential's bytes (an invite's limit, INVITE_MAX_TOKEN) */

/* A frameset's codings of the tiers in the mask `tiers` (bit t: tier t),
 * each with its tier. */
msg_buf *bus_encode_frameset(const frameset *fs, unsigned tiers);
/* Fills *out with new messages (references the caller owns). */
int bus_decode_frameset(const uint8_t *p, size_t n, frameset *out, char *err, size_t errlen);

/* One room's frame wants in a relay's wants message. */
typedef struct bus_room_wants {
    char room[ROOM_NAME_CAP];
    frame_wants w;
} bus_room_wants;
/* A relay's wants: those of k rooms (at most BUS_MAX_ROOMS). */
msg_buf *bus_encode_wants(uint32_t relay, const bus_room_wants *rw, int k);
/* Reads up to cap rooms' wants into out (more is refused), each room's name
 * checked (room_name_ok); *k: how many. */
int bus_decode_wants(const uint8_t *p, size_t n, uint32_t *relay, bus_room_wants *out, int cap, int *k, char *err,
                     size_t errlen);

/* A reply's values (never what it carries: relays serve no snapshots), and
 * the room of the client it answers. */
msg_buf *bus_encode_reply(const cmd_reply *r, const char *room);
int bus_decode_reply(const uint8_t *p, size_t n, cmd_reply *r, char room[ROOM_NAME_CAP], char *err, size_t errlen);

/* A relay's client message: a WebSocket client's bytes as it sent them,
 * that it left, a REST request (bus_pack_rest), or a credential alone to be
 * checked (the sim node answers with the role it grants, as an auth
 * command's reply).  Each names the client's room and carries the
 * credential the relay holds for it (none: 0 bytes), never a role. */
enum { BUS_FWD_WS = 0, BUS_FWD_LEFT = 1, BUS_FWD_REST = 2, BUS_FWD_AUTH = 3 };
typedef struct bus_forward {
    uint32_t relay, client;
    int kind;
    char room[ROOM_NAME_CAP];
    const uint8_t *cred; /* 0 to BUS_MAX_CRED bytes, no NUL among them (decoded: pointing into the message) */
    size_t cred_len;
    const uint8_t *bytes; /* the client's message (decoded: pointing into the message) */
    size_t len;
} bus_forward;
msg_buf *bus_encode_forward(const bus_forward *f);
int bus_decode_forward(const uint8_t *p, size_t n, bus_forward *f, char *err, size_t errlen);

/* The node's rooms, each with the role a connection without a credential
 * has there (admin: the node has no --token). */
typedef struct bus_room_entry {
    char name[ROOM_NAME_CAP];
    role public_role;
} bus_room_entry;
msg_buf *bus_encode_rooms(const bus_room_entry *e, int k);
/* Reads up to cap entries (more is refused); names checked, roles known. */
int bus_decode_rooms(const uint8_t *p, size_t n, bus_room_entry *out, int cap, int *k, char *err, size_t errlen);
/* A REST request as a forward's bytes: method, path below /api, body. */
msg_buf *bus_pack_rest(int method, const char *path, const char *body, size_t body_len);
/* Reads it back: path copied (terminated) into path[cap], body pointing
 * into p.  Returns 0, or -1 with a reason. */
int bus_unpack_rest(const uint8_t *p, size_t n, int *method, char *path, size_t cap, const char **body,
                    size_t *body_len, char *err, size_t errlen);

/* The relay a message came from, as its subject names it: subject must be
 * base.<id> with id 1..CMD_RELAY_MAX in plain decimal.  A relay publishes
 * its clients' messages and its wants on its own subjects, so the broker's
 * per-user publish permissions bind what a relay can claim; the node takes
 * the relay from the subject and refuses a message whose body names
 * another.  Returns 0, or -1 with a reason. */
int bus_subject_relay(const char *subject, const char *base, uint32_t *relay, char *err, size_t errlen);
/* The room a room's subject names: subject must be base.<room>.<leaf> with
 * a room name of the rule (room_name_ok).  Returns 0, or -1 with a reason. */
int bus_subject_room(const char *subject, const char *base, const char *leaf, char room[ROOM_NAME_CAP], char *err,
                     size_t errlen);

/* A room's obstacles (the node's, on r.<room>.obst): the `obstacles`
 * message viewers get after their hello (passed on as it is), and each
 * obstacle's id, its mesh's content hash and encoded size (obstacle_mesh.h).
 * At most FS_MAX_OBSTACLES; sizes within the encoding's bound; the list
 * at most BUS_MAX_OBST_LIST bytes. */
#define BUS_MAX_OBST_LIST (64u << 10)
typedef struct bus_obstacles {
    int count;
    uint32_t id[FS_MAX_OBSTACLES];
    uint64_t hash[FS_MAX_OBSTACLES];
    uint32_t bytes[FS_MAX_OBSTACLES];
    const uint8_t *list; /* decoded: pointing into the message */
    size_t list_len;
} bus_obstacles;
msg_buf *bus_encode_obstacles(const bus_obstacles *o);
int bus_decode_obstacles(const uint8_t *p, size_t n, bus_obstacles *o, char *err, size_t errlen);
/* One obstacle's encoded mesh (the node's, on r.<room>.omesh, when a relay
 * asks): its id and the encoding, which must pass obstacle_mesh_check
 * (*hash: its hash; *mesh pointing into the message). */
msg_buf *bus_encode_obstacle_mesh(uint32_t id, const msg_buf *mesh);
int bus_decode_obstacle_mesh(const uint8_t *p, size_t n, uint32_t *id, uint64_t *hash, const uint8_t **mesh,
                             size_t *len, char *err, size_t errlen);
/* A relay's request for obstacles' meshes (on omesh.<relay>): a room and
 * up to FS_MAX_OBSTACLES obstacle ids. */
msg_buf *bus_encode_mesh_wants(uint32_t relay, const char *room, const uint32_t *ids, int k);
int bus_decode_mesh_wants(const uint8_t *p, size_t n, uint32_t *relay, char room[ROOM_NAME_CAP],
                          uint32_t ids[FS_MAX_OBSTACLES], int *k, char *err, size_t errlen);

msg_buf *bus_encode_info(const world_info *wi);
int bus_decode_info(const uint8_t *p, size_t n, world_info *wi, char *err, size_t errlen);
msg_buf *bus_encode_stats(const sim_stats *s);
int bus_decode_stats(const uint8_t *p, size_t n, sim_stats *s, char *err, size_t errlen);

#endif
