/* secret.h - the server's signing secret (the key of the invite tokens):
 * read from --secret-file, or made at first start inside the data folder
 * from getrandom(2).  Its bytes are never logged or served: no function here
 * prints them, and the errors name only the file, its size and its mode.
 *
 * A secret file holds the key's bytes as they are (binary or text), at least
 * SECRET_MIN and at most SECRET_MAX of them; one final newline ("\n" or
 * "\r\n") is not part of the key, so `openssl rand -hex 32 > FILE` makes a
 * good one.  It must be a regular file that neither its group nor others may
 * read or write (mode 0600 or 0400): anything else is refused with a message.
 *
 * Threads: called at start by the main thread; a secret_key is a value.
 */
#ifndef SRV_SECRET_H
#define SRV_SECRET_H

#include <stdbool.h>
#include <stddef.h>

#define SECRET_MIN 32            /* bytes: HS256's own key size */
#define SECRET_MAX 1024          /* bytes */
#define SECRET_NEW 32            /* bytes a new secret has */
#define SECRET_FILE "secret.key" /* its name inside the data folder */

typedef struct secret_key {
    unsigned char bytes[SECRET_MAX];
    size_t len;
} secret_key;

/* Reads the secret file at path into *out.  0, or -1 with err (errlen bytes)
 * saying why (missing, not a regular file, group/other permissions, too short
 * or too long); *out is then wiped. */
int secret_read_file(const char *path, secret_key *out, char *err, size_t errlen);

/* DIR/secret.key: read when it exists; otherwise made (SECRET_NEW bytes of
 * getrandom(2), the last never '\n', written with O_CREAT|O_EXCL and mode
 * 0600, flushed with fsync together with the folder) and read.  *created says which.  0, or -1 with
 * err. */
int secret_load_or_create(const char *dir, secret_key *out, bool *created, char *err, size_t errlen);

/* SECRET_NEW bytes of getrandom(2), kept nowhere: for a server with neither a
 * secret file nor a data folder (its invites end with it).  0, or -1 with err. */
int secret_random(secret_key *out, char *err, size_t errlen);

/* Overwrites the key's bytes (in a way the compiler does not drop). */
void secret_wipe(secret_key *k);

#endif
