/* metrics.h - GET /metrics as Prometheus text (network thread only). */
#ifndef SRV_METRICS_H
#define SRV_METRICS_H

#include <stddef.h>

typedef struct net net; /* net_internal.h */

/* The whole exposition, malloc'd (len bytes); NULL when out of memory. */
char *rest_metrics_text(const net *n, size_t *len);

#endif
