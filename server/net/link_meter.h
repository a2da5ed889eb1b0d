/* link_meter.h - what the kernel measured of a TCP connection's link: its
 * delivery rate (bytes a second acknowledged, sampled per ACK) and whether
 * the sender, not the link, was the limit when it was sampled (then the
 * rate says only that the link passed what it was given), read with
 * getsockopt(TCP_INFO); and the bytes a socket lets wait unsent
 * (TCP_NOTSENT_LOWAT).  A token bucket below its rate passes everything at
 * once, so only a sample taken while the link was full measures it. */
#ifndef SRV_LINK_METER_H
#define SRV_LINK_METER_H

#include <stdbool.h>
#include <stdint.h>

typedef struct link_sample {
    double rate;         /* bytes a second, the kernel's latest delivery-rate sample */
    bool app_limited;    /* the sender had nothing more to send: the rate is a lower bound only */
    uint64_t acked;      /* bytes acknowledged so far */
    uint32_t notsent;    /* bytes written and not yet sent */
    uint32_t unacked;    /* segments sent and not yet acknowledged */
    uint32_t mss;        /* bytes a segment carries (the sender's MSS) */
    uint32_t min_rtt_us; /* the least round trip seen on the connection (UINT32_MAX: none yet) */
    /* microseconds the receiver's window held the sender back (the reader,
     * not the link, was the limit), in all; 0 where the kernel does not say */
    uint64_t rwnd_limited_us;
} link_sample;

/* Reads fd's sample; false where the kernel has none (not TCP, too old). */
bool link_meter_read(int fd, link_sample *out);
/* Lets at most bytes wait unsent on fd before it reports writable; false
 * (errno set) if the kernel refused. */
bool link_meter_set_lowat(int fd, int bytes);

#endif
