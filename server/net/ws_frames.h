/* ws_frames.h - which frame each WebSocket client is sent next, and how
 * often: the coding its decoder can use (frame_held.h), the newest one
 * it can take, a keyframe when it holds nothing usable, and its stride (every
 * frame, every 2nd, every 4th) from how fast its link drains.  What the
 * clients need becomes the encoder's wants (frameset.h).  Network thread
 * only. */
#ifndef SRV_WS_FRAMES_H
#define SRV_WS_FRAMES_H

#include <stdbool.h>

#include "msgbuf.h"

typedef struct net_room net_room;   /* net_room.h */
typedef struct ws_client ws_client; /* ws_client.h */

/* Takes the framesets the encoder published into the network thread's ring;
 * true when there was a new one. */
bool ws_frames_take(net_room *v);
/* The frame message to send c now (a new reference), or NULL: nothing newer
 * that it can decode (then a keyframe is requested). */
msg_buf *ws_frames_pick(net_room *v, ws_client *c);
/* Whether a frame is waiting for c (for the writable loop). */
bool ws_frames_pending(const net_room *v, const ws_client *c);
/* Reads what the kernel measured of c's link (link_meter.h) and, when it
 * sampled the link full, judges c's tier by that rate at once. */
void ws_frames_measure(net_room *v, ws_client *c);
/* c finished sending the frame it picked. */
void ws_frames_sent(net_room *v, ws_client *c);
/* c needs a keyframe (its decoder refused a payload, it just joined, or it
 * holds nothing usable): one request to the encoder at a time, and none
 * within NET_KEY_GAP_NS of the last keyframe it was sent (the request waits
 * until then: ws_frames_release_keys). */
void ws_frames_want_key(net_room *v, ws_client *c);
/* Passes on the requests that waited out their second. */
void ws_frames_release_keys(net_room *v);
/* The client's decoder takes at most every stride-th frame (a pace
 * command): slower at once, faster through the link's own judgement. */
void ws_frames_set_pace(net_room *v, ws_client *c, int stride);
/* The client pins the full world (full), or lets its link choose its tier
 * again (a detail command). */
void ws_frames_set_detail(net_room *v, ws_client *c, bool full);
/* Recomputes what the clients need and tells the encoder when it changed. */
void ws_frames_update_wants(net_room *v);

#endif
