/* bus_codec.h - the messages a sim node and its relays exchange over the
 * message bus (bus/, NATS): framesets (every coding of a frame, as the
 * stream sends them), frame wants, replies to relays' clients, relays'
 * client messages, the world's description and the statistics.  Binary,
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
#include "sim_stats.h"
#include "world_info.h"

#define BUS_MAX_MSG (64u << 20) /* a larger bus message is refused */

msg_buf *bus_encode_frameset(const frameset *fs);
/* Fills *out with new messages (references the caller owns). */
int bus_decode_frameset(const uint8_t *p, size_t n, frameset *out, char *err, size_t errlen);

msg_buf *bus_encode_wants(uint32_t relay, const frame_wants *w);
int bus_decode_wants(const uint8_t *p, size_t n, uint32_t *relay, frame_wants *w, char *err, size_t errlen);

/* A reply's values (never what it carries: relays serve no snapshots). */
msg_buf *bus_encode_reply(const cmd_reply *r);
int bus_decode_reply(const uint8_t *p, size_t n, cmd_reply *r, char *err, size_t errlen);

/* A relay's client message: a WebSocket client's bytes as it sent them,
 * that it left, or a REST request (bus_pack_rest). */
enum { BUS_FWD_WS = 0, BUS_FWD_LEFT = 1, BUS_FWD_REST = 2 };
msg_buf *bus_encode_forward(uint32_t relay, uint32_t client, int kind, const uint8_t *bytes, size_t len);
int bus_decode_forward(const uint8_t *p, size_t n, uint32_t *relay, uint32_t *client, int *kind, const uint8_t **bytes,
                       size_t *len, char *err, size_t errlen);
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

msg_buf *bus_encode_info(const world_info *wi);
int bus_decode_info(const uint8_t *p, size_t n, world_info *wi, char *err, size_t errlen);
msg_buf *bus_encode_stats(const sim_stats *s);
int bus_decode_stats(const uint8_t *p, size_t n, sim_stats *s, char *err, size_t errlen);

#endif
