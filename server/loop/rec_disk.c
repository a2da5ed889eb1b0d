/* rec_disk.c - the recordings folder's disk (see rec_disk.h). */
#include "rec_disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* The bytes of the regular files directly in the folder name of parent. */
static uint64_t folder_bytes(int parent, const char *name) {
    int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return 0;
    DIR *d = fdopendir(fd);
    if (!d) {
        close(fd);
        return 0;
    }
    uint64_t sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2]))) continue;
        if (!fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) && S_ISREG(st.st_mode)) sum += (uint64_t)st.st_size;
    }
    closedir(d);
    return sum;
}

uint64_t rec_disk_kept(const char *dir, const char *except, int *folders) {
    *folders = 0;
    DIR *d = opendir(dir);
    if (!d) return 0;
    uint64_t sum = 0;
    for (struct dirent *e; (e = readdir(d));) {
        struct stat st;
        if (e->d_name[0] == '.' || (except && !strcmp(e->d_name, except))) continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) || !S_ISDIR(st.st_mode)) continue;
        sum += folder_bytes(dirfd(d), e->d_name);
        (*folders)++;
    }
    closedir(d);
    return sum;
}

bool rec_disk_free(const char *path, uint64_t *out) {
    char p[1200];
    snprintf(p, sizeof p, "%s", path[0] ? path : ".");
    for (int up = 0; up < 64; up++) { /* a parent at a time, as far as one that exists */
        struct statvfs v;
        if (!statvfs(p, &v)) {
            *out = (uint64_t)v.f_bavail * (uint64_t)(v.f_frsize ? v.f_frsize : v.f_bsize);
            return true;
        }
        if (errno != ENOENT) return false;
        char *slash = strrchr(p, '/');
        if (!slash)
            snprintf(p, sizeof p, ".");
        else
            slash[slash == p] = 0; /* "/a" -> "/", "a/b" -> "a" */
    }
    return false;
}

uint64_t rec_disk_budget(double total_mb, uint64_t kept, uint64_t free_bytes) {
    if (total_mb > 0) return (uint64_t)(total_mb * 1e6);
    uint64_t share = free_bytes / 2;
    return kept + (share < REC_AUTO_BUDGET_MAX ? share : REC_AUTO_BUDGET_MAX);
}
