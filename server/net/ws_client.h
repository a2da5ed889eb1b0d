/* ws_client.h - one WebSocket client (lws per-session data): what is being
 * sent to it, its queue of replies, what it sent, its rate limit and its
 * counters.  Network thread only. */
#ifndef SRV_WS_CLIENT_H
#define SRV_WS_CLIENT_H

#include <libwebsockets.h>
#include <stdbool.h>
#include <stdint.h>

#include "frame_held.h"
#include "link_rule.h"
#include "msgbuf.h"
#include "net_internal.h"
#include "rate.h"
#include "wire.h"

typedef struct net net;           /* net_internal.h */
typedef struct net_room net_room; /* net_room.h */

#define NET_FRAGMENT 16384     /* bytes per WebSocket fragment sent */
#define NET_NOTSENT_LOWAT 8192 /* a socket is writable again once fewer bytes than this wait unsent */
#define NET_NOTSENT_LOWAT_SLOW                                                                                         \
    2048 /* ... on a link given a coarser tier or fewer frames (a push's frame waits less)                             \
          */
#define NET_RATE_MAX_NS 1000000000ull  /* a link's rate is the highest sample of this long */
#define NET_REPLY_RING 256             /* queued control messages per client */
#define NET_RX_PAUSE_AT 64             /* stop reading a client with this many unsent replies */
#define NET_SEND_TIMEOUT_S 30          /* a message must drain within this */
#define NET_AUTH_WAIT_NS 5000000000ull /* a relay's hello waits this long, at most, for its sim node's role */
#define NET_MAX_BAD_IN_A_ROW 32
#define NET_DRAIN_LEFT 4096            /* a backlog this small is drained: a frame waits behind no more */
#define NET_DRAIN_MAX_NS 2000000000ull /* a backlog's hold ends after this whatever it left */
/* a held client's socket is looked at this often (a paused world sends no frame to wake it) */
#define NET_HOLD_POLL_US 10000
#define NET_KEY_GAP_NS 1000000000ull        /* at most one keyframe coded for a client a second */
#define NET_CLOSE_OLD_VERSION 4001          /* close code: the client speaks a retired protocol version */
#define NET_CLOSE_ROOM_GONE 4004            /* close code: its room was deleted, or never was */
#define NET_CLOSE_KICKED 4003               /* close code: its room's owner closed it */
#define NET_CLOSE_QUIET_US 200000           /* before closing a bad client: 200 ms of quiet */
#define NET_CLOSE_MAX_WAIT_NS 2000000000ull /* but no more than 2 s */

/* One WebSocket connection (lws per-session data).  Threads: network only. */
struct ws_client {
    struct lws *wsi;
    struct ws_client *next;
    net_room *room; /* the room it watches (a user of the view while linked) */
    uint32_t id;
    char close_reason[96]; /* set: closed with close_code (0: NET_CLOSE_ROOM_GONE) and this reason */
    uint16_t close_code;
    bool linked, authed, reject, hello_pending, rx_paused, close_bad, close_ready;
    bool granted; /* a credential (the server's token, an invite) gave it role; else its room's public role */
    uint8_t role; /* roles.h */
    /* a relay's: the credential the sim node accepted (or is checking) for it, sent with each of its
     * messages; one sent in an auth command, until the node answers; its hello waits for the first answer */
    msg_buf *cred, *cred_pending;
    bool auth_wait;
    uint64_t close_bad_ns;
    msg_buf *ctl[NET_REPLY_RING]; /* replies and errors, oldest first */
    int ctl_head, ctl_count;
    uint64_t bcast_next; /* next broadcast seq to send */
    /* the frame stream (ws_frames.c) */
    fc_held held;             /* what its decoder holds */
    uint32_t last_seq;        /* the last frame sent */
    uint32_t dropped_through; /* frames up to this one not sent are counted in frames_dropped */
    uint32_t last_epoch;      /* ... and its epoch (sent_any: a frame was sent) */
    bool sent_any;
    bool need_key, key_asked, key_deferred;
    int key_tier;          /* the tier its pending keyframe request is for */
    uint64_t key_asked_at; /* net.frames_next when the keyframe was asked for */
    uint64_t key_sent_ns;  /* when it was last picked a keyframe (0: never) */
    /* its stride (1, 2 or 4: it is sent about every stride-th frame), its
     * decoder's pace (stride >= pace) and its tier of detail (link_rule.h) */
    link_state link;
    int held_tier; /* the tier of the frames its decoder holds (held.any) */
    /* a frame it holds without the one before it, that it asked the encoder
     * to code the next frames against (frameset.h, bases): 0 for none; it
     * counts while its decoder holds it */
    uint32_t base_want;
    uint64_t window_ns, busy_ns, pick_ns;
    int late; /* picks in this window that found it a stride behind */
    /* its link's measured rate (link_meter.h): the newest delivery rate the
     * kernel sampled while the link was full, bytes a second, the highest of
     * NET_RATE_MAX_NS (and when), and when the newest came */
    double rate_max;
    uint64_t rate_max_ns, rate_ns;
    uint64_t rwnd_us; /* the kernel's receive-window-limited time when last read */
    bool reader_slow; /* it grew in the window being judged (link_rule.h, link_window.reader) */
    int lowat;        /* its socket's TCP_NOTSENT_LOWAT */
    /* nothing more is picked until its link has delivered what it holds, or
     * hold_until has passed (ws_frames.c, hold_over): a try's keyframe
     * (proving: not delivered by then, the try failed; link_rule.h), or the
     * backlog a move to a coarser tier left queued */
    bool holding, proving;
    uint64_t hold_until;
    msg_buf *cur; /* message being sent, fragment by fragment */
    size_t cur_off;
    bool cur_is_frame;
    uint8_t *scratch; /* LWS_PRE + NET_FRAGMENT */
    uint8_t rx[WIRE_MAX_MSG];
    size_t rx_len;
    bool rx_in_msg, rx_overflow, rx_text;
    rate_bucket bucket; /* its command rate limit (rate.h) */
    int bad_in_a_row;
    int inflight; /* commands queued that will get a reply */
    char url_token[128];
    char peer[64];
    uint64_t connected_ns;
    uint64_t frames_sent, frames_dropped, keyframes_sent, key_requests, keys_deferred, bytes_sent, commands,
        bad; /* this client's share of the counters */
};

/* Queues a reply or error for c (takes the reference; m may be NULL); a full
 * queue drops it (counted). */
void ws_ctl_push(net *n, ws_client *c, msg_buf *m);
/* The oldest queued message (the caller's reference), NULL when none. */
msg_buf *ws_ctl_pop(ws_client *c);
/* Pauses reading c while it owes NET_RX_PAUSE_AT replies, resumes at half. */
void ws_rx_pressure(ws_client *c);
/* The room was deleted: every client of its view is closed with reason
 * (NET_CLOSE_ROOM_GONE), and the view marked closed. */
void ws_close_room(net_room *v, const char *reason);
/* The client of that id on the room's view, or NULL. */
ws_client *ws_find_client(net_room *v, uint32_t id);
/* Queues an error message with its code (rid may be 0, cmd_name NULL). */
void ws_reply_error(net *n, ws_client *c, reply_code code, uint32_t rid, const char *cmd_name, const char *reason);
/* A relay: the sim node's answer to c's credential (an auth reply), taken
 * in (its role, or its credential dropped); returns whether the reply goes
 * on to the client. */
bool ws_auth_answered(net *n, ws_client *c, const cmd_reply *r);
/* Takes cost tokens from c's bucket (--rate per second up to --burst);
 * false, taking none, when it holds fewer. */
bool ws_take_tokens(net *n, ws_client *c, double cost);

#endif
