/* pump.h - takes what the sim thread published from the hub and hands it to
 * the connections (network thread, on lws_cancel_service's wake-up). */
#ifndef SRV_PUMP_H
#define SRV_PUMP_H

typedef struct net net; /* net_internal.h */

void net_pump(net *n);

#endif
