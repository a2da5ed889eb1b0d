/* link_meter.c - a TCP connection's measured delivery rate, read from the
 * kernel's TCP_INFO (see link_meter.h). */
#include "link_meter.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>

/* Offsets in Linux's struct tcp_info (linux/tcp.h; the kernel only appends
 * to it).  glibc's netinet/tcp.h stops before the delivery rate, and the
 * kernel's header declares bit-fields of __u8 that -Wpedantic refuses, so
 * the fields are read from the bytes. */
enum {
    TI_FLAGS = 7, /* tcpi_delivery_rate_app_limited:1, then tcpi_fastopen_client_fail:2 */
    TI_SND_MSS = 16,
    TI_UNACKED = 24,
    TI_BYTES_ACKED = 120,
    TI_NOTSENT = 144,
    TI_MIN_RTT = 148,
    TI_DELIVERY_RATE = 160,
    TI_NEEDED = 168,
    TI_RWND_LIMITED = 176, /* tcpi_rwnd_limited, after tcpi_busy_time */
    TI_WITH_RWND = 184
};

bool link_meter_read(int fd, link_sample *out) {
#if defined(__linux__) && defined(TCP_INFO)
    uint8_t b[256];
    socklen_t len = sizeof b;
    if (fd < 0 || getsockopt(fd, IPPROTO_TCP, TCP_INFO, b, &len) || len < TI_NEEDED) return false;
    uint64_t rate, acked;
    uint32_t notsent, unacked, min_rtt, mss;
    memcpy(&mss, b + TI_SND_MSS, sizeof mss);
    memcpy(&rate, b + TI_DELIVERY_RATE, sizeof rate);
    memcpy(&unacked, b + TI_UNACKED, sizeof unacked);
    memcpy(&min_rtt, b + TI_MIN_RTT, sizeof min_rtt);
    memcpy(&acked, b + TI_BYTES_ACKED, sizeof acked);
    memcpy(&notsent, b + TI_NOTSENT, sizeof notsent);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    out->app_limited = (b[TI_FLAGS] & 0x80) != 0;
#else
    out->app_limited = (b[TI_FLAGS] & 0x01) != 0;
#endif
    out->rate = (double)rate;
    out->acked = acked;
    out->notsent = notsent;
    out->unacked = unacked;
    out->mss = mss;
    out->min_rtt_us = min_rtt;
    out->rwnd_limited_us = 0;
    if (len >= TI_WITH_RWND) memcpy(&out->rwnd_limited_us, b + TI_RWND_LIMITED, sizeof out->rwnd_limited_us);
    return true;
#else
    (void)fd;
    (void)out;
    return false;
#endif
}

bool link_meter_set_lowat(int fd, int bytes) {
#ifdef TCP_NOTSENT_LOWAT
    return fd >= 0 && setsockopt(fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &bytes, sizeof bytes) == 0;
#else
    (void)fd;
    (void)bytes;
    return true;
#endif
}
