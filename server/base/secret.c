/* secret.c - reading and making the signing secret (see secret.h).  The file
 * is checked through the descriptor that reads it (fstat after open), so what
 * is checked is what is read. */
#include "secret.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

void secret_wipe(secret_key *k) {
    volatile unsigned char *p = k->bytes;
    for (size_t i = 0; i < sizeof k->bytes; i++) p[i] = 0;
    k->len = 0;
}

/* Reads up to cap bytes of fd; the count, or -1. */
static ssize_t read_all(int fd, unsigned char *buf, size_t cap) {
    size_t got = 0;
    while (got < cap) {
        ssize_t n = read(fd, buf + got, cap - got);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) break;
        got += (size_t)n;
    }
    return (ssize_t)got;
}

/* The descriptor's file must be a regular file without group/other bits. */
static int check_file(int fd, const char *path, char *err, size_t errlen) {
    struct stat st;
    if (fstat(fd, &st)) {
        snprintf(err, errlen, "secret file %s: %s", path, strerror(errno));
        return -1;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "secret file %s is not a regular file", path);
        return -1;
    }
    if (st.st_mode & (S_IRWXG | S_IRWXO)) {
        snprintf(err, errlen,
                 "secret file %s may be read or written by its group or others (mode %04o): "
                 "it must be 0600 or 0400 (chmod 600 %s)",
                 path, (unsigned)(st.st_mode & 07777), path);
        return -1;
    }
    return 0;
}

int secret_read_file(const char *path, secret_key *out, char *err, size_t errlen) {
    secret_wipe(out);
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK); /* a FIFO must not block the start */
    if (fd < 0) {
        snprintf(err, errlen, "secret file %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = check_file(fd, path, err, errlen);
    unsigned char buf[SECRET_MAX + 3]; /* the key, a final "\r\n", and one byte to see a longer file */
    ssize_t n = rc ? 0 : read_all(fd, buf, sizeof buf);
    if (!rc && n < 0) {
        snprintf(err, errlen, "secret file %s: %s", path, strerror(errno));
        rc = -1;
    }
    close(fd);
    size_t len = n > 0 ? (size_t)n : 0;
    if (len && buf[len - 1] == '\n' && --len && buf[len - 1] == '\r') len--; /* "\n" or "\r\n" */
    if (!rc && len < SECRET_MIN) {
        snprintf(err, errlen, "secret file %s holds %zu bytes: a secret has at least %d", path, len, SECRET_MIN);
        rc = -1;
    } else if (!rc && len > SECRET_MAX) {
        snprintf(err, errlen, "secret file %s is longer than %d bytes", path, SECRET_MAX);
        rc = -1;
    }
    if (!rc) {
        memcpy(out->bytes, buf, len);
        out->len = len;
    }
    volatile unsigned char *p = buf;
    for (size_t i = 0; i < sizeof buf; i++) p[i] = 0;
    return rc;
}

/* Fills buf with n bytes of getrandom(2) (blocking until the kernel's pool is
 * ready, as at early boot). */
static int random_bytes(unsigned char *buf, size_t n) {
    size_t got = 0;
    while (got < n) {
        ssize_t r = getrandom(buf + got, n - got, 0);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) return -1;
        got += (size_t)r;
    }
    return 0;
}

/* Writes a new secret to path (which does not exist), flushed to disk with
 * its folder.  0, or -1 with err (and no file left behind when it was made). */
static int create_secret(const char *dir, const char *path, char *err, size_t errlen) {
    unsigned char key[SECRET_NEW];
    int bad = random_bytes(key, sizeof key);
    /* a final '\n' would be read back as a newline, not the key's: draw that byte again */
    while (!bad && key[sizeof key - 1] == '\n') bad = random_bytes(key + sizeof key - 1, 1);
    if (bad) {
        snprintf(err, errlen, "secret: getrandom: %s", strerror(errno));
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        snprintf(err, errlen, "secret file %s: %s", path, strerror(errno));
        memset(key, 0, sizeof key);
        return errno == EEXIST ? 1 : -1;
    }
    size_t put = 0;
    int rc = 0;
    while (!rc && put < sizeof key) {
        ssize_t w = write(fd, key + put, sizeof key - put);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0)
            rc = -1;
        else
            put += (size_t)w;
    }
    volatile unsigned char *p = key;
    for (size_t i = 0; i < sizeof key; i++) p[i] = 0;
    if (!rc && fsync(fd)) rc = -1;
    if (rc) snprintf(err, errlen, "secret file %s: writing: %s", path, strerror(errno));
    if (close(fd) && !rc) {
        snprintf(err, errlen, "secret file %s: %s", path, strerror(errno));
        rc = -1;
    }
    if (rc) {
        unlink(path);
        return -1;
    }
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) { /* the new name survives a crash too */
        fsync(dfd);
        close(dfd);
    }
    return 0;
}

int secret_load_or_create(const char *dir, secret_key *out, bool *created, char *err, size_t errlen) {
    char path[4096];
    secret_wipe(out);
    *created = false;
    if (snprintf(path, sizeof path, "%s/%s", dir, SECRET_FILE) >= (int)sizeof path) {
        snprintf(err, errlen, "secret: the data folder's path is too long");
        return -1;
    }
    struct stat st;
    if (lstat(path, &st) && errno == ENOENT) {
        int rc = create_secret(dir, path, err, errlen);
        if (rc < 0) return -1;
        *created = rc == 0; /* 1: another process made it first; read theirs */
    }
    return secret_read_file(path, out, err, errlen);
}

int secret_random(secret_key *out, char *err, size_t errlen) {
    memset(out, 0, sizeof *out);
    if (random_bytes(out->bytes, SECRET_NEW)) {
        snprintf(err, errlen, "secret: getrandom: %s", strerror(errno));
        return -1;
    }
    out->len = SECRET_NEW;
    return 0;
}
