/* fuzz_config.c - libFuzzer harness: config_parse (server/base/config.c) with a
 * command line and an environment built from the input.
 *
 * Input layout: NUL-separated strings.  The first byte's low 3 bits say how
 * many of the strings (0-7) are environment assignments "NAME=VALUE"; only
 * names starting with FLUID_ are set (the sanitizers' own variables stay
 * untouched).  The other strings are argv[1..].  Every FLUID_ variable is
 * removed before each input, so inputs do not leak into each other.
 *
 * Checks, besides ASan/UBSan: an accepted configuration is inside every
 * documented range and its strings are terminated. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fuzz_check.h"
#include "log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

extern char **environ;

#define MAX_ARGS 64

static FILE *devnull(void) {
    static FILE *f;
    if (!f) f = fopen("/dev/null", "w");
    if (!f) abort();
    return f;
}

static void clear_fluid_env(void) {
    for (;;) {
        char *name = NULL;
        for (char **e = environ; e && *e && !name; e++)
            if (!strncmp(*e, "FLUID_", 6)) {
                const char *eq = strchr(*e, '=');
                name = strndup(*e, eq ? (size_t)(eq - *e) : strlen(*e));
                if (!name) abort();
            }
        if (!name) return;
        unsetenv(name); /* environ changes: start over */
        free(name);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 8192) return 0;
    int nenv = data[0] & 7;
    /* A terminated copy of the strings. */
    size_t n = size - 1;
    char *buf = malloc(n + 1);
    if (!buf) return 0;
    memcpy(buf, data + 1, n);
    buf[n] = 0;
    char *argv[MAX_ARGS + 2];
    int argc = 0;
    argv[argc++] = "fluid-server";
    clear_fluid_env();
    for (size_t at = 0; at < n;) {
        char *s = buf + at;
        size_t l = strlen(s);
        at += l + 1;
        if (nenv > 0) {
            nenv--;
            char *eq = strchr(s, '=');
            if (eq && !strncmp(s, "FLUID_", 6)) {
                *eq = 0;
                setenv(s, eq + 1, 1);
            }
        } else if (argc < MAX_ARGS + 1) {
            argv[argc++] = s;
        }
    }
    argv[argc] = NULL;

    srv_config c;
    config_defaults(&c);
    int rc = config_parse(&c, argc, argv, devnull(), devnull());
    FUZZ_REQUIRE(rc == 0 || rc == 1 || rc == -1);
    if (rc == 0) {
        FUZZ_REQUIRE(c.port >= 0 && c.port <= 65535);
        FUZZ_REQUIRE(c.particles >= 0 && c.particles <= 1 << 20);
        FUZZ_REQUIRE(c.capacity >= 0 && c.capacity <= 1 << 20);
        FUZZ_REQUIRE(isfinite(c.tick_hz) && c.tick_hz >= 1 && c.tick_hz <= 1000);
        FUZZ_REQUIRE(isfinite(c.frame_hz) && c.frame_hz >= 1 && c.frame_hz <= 240);
        FUZZ_REQUIRE(c.max_clients >= 1 && c.max_clients <= 1024);
        FUZZ_REQUIRE(c.threads >= 1 && c.threads <= 64);
        FUZZ_REQUIRE(c.substeps >= 1 && c.substeps <= 16);
        FUZZ_REQUIRE(c.rate_per_s >= 1 && c.rate_per_s <= 100000);
        FUZZ_REQUIRE(c.rate_burst >= 1 && c.rate_burst >= c.rate_per_s / 10);
        FUZZ_REQUIRE(c.net_nice >= 0 && c.net_nice <= 19);
        FUZZ_REQUIRE(isfinite(c.save_interval) && c.save_interval >= 0 && c.save_interval <= 86400);
        FUZZ_REQUIRE(fz_terminated(c.bind, sizeof c.bind) && fz_terminated(c.scene, sizeof c.scene));
        FUZZ_REQUIRE(fz_terminated(c.web_root, sizeof c.web_root) && fz_terminated(c.token, sizeof c.token));
        FUZZ_REQUIRE(fz_terminated(c.allow_origin, sizeof c.allow_origin));
        FUZZ_REQUIRE(fz_terminated(c.data_dir, sizeof c.data_dir));
        FUZZ_REQUIRE(fz_terminated(c.log_level, sizeof c.log_level) && log_level_parse(c.log_level) >= 0);
    }
    free(buf);
    return 0;
}
