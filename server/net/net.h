/* net.h - the network thread: libwebsockets on one port serving static
 * files (/), the JSON REST API (/api) and the msgpack WebSocket stream. */
#ifndef SRV_NET_H
#define SRV_NET_H

#include <signal.h>
#include <stdbool.h>

#include "config.h"
#include "secret.h"
#include "wire.h" /* wire_static */

typedef struct net net;
typedef struct rooms rooms;             /* rooms.h */
typedef struct room room;               /* rooms.h */
typedef struct room_keeper room_keeper; /* room_keeper.h */

/* Creates the lws context and listens (main thread, before the sim threads
 * start), serving the rooms of dir; home is the default room (the view
 * takes a reference of its own).  NULL on failure, with a reason logged. */
net *net_create(const srv_config *cfg, const wire_static *st, rooms *dir, room *home);
/* The thread that opens rooms for POST /api/rooms (a sim node's; a relay
 * has none and refuses it).  Before net_run. */
void net_set_keeper(net *n, room_keeper *k);
/* The key that signs and checks the rooms' invites (copied).  Before net_run. */
void net_set_secret(net *n, const secret_key *k);
/* Makes this network thread a relay's (before it runs): its clients' ids
 * carry relay_id, their messages go to the bus thread (hub_forward), REST
 * writes are refused, and hellos wait for the sim node's description. */
void net_set_relay(net *n, uint32_t relay_id);
/* The port actually bound (useful with --port 0). */
int net_port(const net *n);
/* Services the network until *stop becomes non-zero (the network thread). */
void net_run(net *n, volatile sig_atomic_t *stop);
/* lws log level: errors and warnings, or errors only. */
void net_set_log_level(void); /* after log_set_level */
/* Any thread: wakes the network thread (lws_cancel_service). */
void net_wake(void *n);
/* Closes every connection and frees everything (after the sim threads and
 * the rooms' keeper were joined, so no lws_cancel_service can race with the
 * context's end). */
void net_destroy(net *n);

#endif
