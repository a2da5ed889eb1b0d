/* health.h - `fluid-server --health-check`: ask a running server for /api/health. */
#ifndef SRV_HEALTH_H
#define SRV_HEALTH_H

#include "config.h"

/* One GET /api/health on the server cfg describes (loopback when it binds
 * every interface; https without verifying the certificate when cfg has
 * one).  Returns the process exit status: 0 when it answered 200. */
int health_check(const srv_config *cfg);

#endif
