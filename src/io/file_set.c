/*
 * file_set.c — files written together, all or none (graphmem/io.h). Each file is staged beside
 * its target under a temporary name and flushed to disk; the commit renames them all into place.
 * rename() within one directory is atomic, so a crash or a failure leaves each target either as
 * it was or whole, and a command that stages all its outputs before committing writes nothing
 * when any step fails. gm_write_file is the set of one.
 */
/* realpath() is an XSI function: the build's _POSIX_C_SOURCE alone does not declare it.
 * O_DIRECT (Linux) is a GNU one. */
#define _XOPEN_SOURCE 700
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "graphmem/io.h"
#include "util/alloc.h"

typedef struct staged {
    char *path;   /* as the caller named it: messages use it */
    char *target; /* what the rename replaces (a symlink's target) */
    char *tmp;    /* the staged file; NULL for a device written at commit */
    void *bytes;  /* a device's bytes, kept until the commit */
    size_t len;
    bool done;
} staged;

struct gm_files {
    staged *v;
    size_t n, cap;
};

gm_files *gm_files_new(void) { return gm_calloc(1, sizeof(gm_files)); }

static int write_all(int fd, const char *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Big staged files bypass the page cache (O_DIRECT). A million-node plan is ~300 MB, and a
 * buffered write copies it into the cache, a second of CPU on the 2-core machine taken from the
 * verifier the plan is staged beside, only for fsync to send it to the disk anyway. A direct
 * write hands the disk user pages instead (0.03 s of CPU, 0.2-0.3 s of wall time for 294 MB).
 * It needs the bytes, the file offset and the length on block boundaries, and a caller's bytes
 * are seldom page-aligned (jemalloc offsets big blocks within their first page), so each stretch
 * is copied into an aligned bounce buffer first (a memcpy: 0.02 s for 294 MB). The tail
 * past the last block goes through the cache. Where no bounce buffer can be had or the file
 * system refuses (tmpfs: EINVAL), the rest is written as before. The bytes on disk are the same
 * either way. */
enum { DIRECT_FROM = 8 << 20, DIRECT_ALIGN = 4096, BOUNCE = 8 << 20 };

static int write_direct(int fd, const char *p, size_t n)
{
#ifdef O_DIRECT
    int fl = n >= DIRECT_FROM ? fcntl(fd, F_GETFL) : -1;
    char *mem = fl >= 0 ? gm_malloc(BOUNCE + DIRECT_ALIGN) : NULL;
    if (!mem || fcntl(fd, F_SETFL, fl | O_DIRECT) != 0) {
        gm_free(mem);
        return write_all(fd, p, n);
    }
    char *bounce = mem + (DIRECT_ALIGN - (uintptr_t)mem % DIRECT_ALIGN) % DIRECT_ALIGN;
    size_t bulk = n / DIRECT_ALIGN * DIRECT_ALIGN, done = 0;
    bool direct = true;
    while (direct && done < bulk) {
        size_t k = bulk - done < BOUNCE ? bulk - done : BOUNCE, put = 0;
        memcpy(bounce, p + done, k);
        while (put < k) {
            ssize_t w = write(fd, bounce + put, k - put);
            if (w < 0 && errno == EINTR) continue;
            if (w > 0) put += (size_t)w;
            /* refused, or a short write off the block grid: the rest through the cache, from
             * where the file now ends */
            if (w <= 0 || (size_t)w % DIRECT_ALIGN) {
                direct = false;
                break;
            }
        }
        done += put;
    }
    gm_free(mem);
    if (fcntl(fd, F_SETFL, fl) != 0) return -1;
    return write_all(fd, p + done, n - done);
#else
    return write_all(fd, p, n);
#endif
}

/* Devices, pipes and the like (/dev/stdout) cannot be replaced by a rename: written directly. */
static gm_status write_in_place(const char *path, const void *data, size_t len, gm_error *err)
{
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0) return gm_error_set(err, GM_ERR_IO, "%s: cannot open for writing: %s", path, strerror(errno));
    int rc = write_all(fd, data, len);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    return rc ? gm_error_set(err, GM_ERR_IO, "%s: cannot write: %s", path, strerror(e)) : GM_OK;
}

/* Creates a fresh temporary file beside `target` (same directory, so rename() is atomic);
 * *tmp receives its malloc'ed name. Mode 0666 lets the umask decide, like fopen would. */
static int create_temp(const char *target, char **tmp)
{
    const char *slash = strrchr(target, '/');
    size_t dirlen = slash ? (size_t)(slash - target) + 1 : 0;
    const char *base = target + dirlen;
    size_t cap = strlen(target) + 48;
    char *name = gm_malloc(cap);
    if (!name) {
        errno = ENOMEM;
        return -1;
    }
    static unsigned counter;
    for (int attempt = 0; attempt < 100; attempt++) {
        /* Only a prefix of the file name, so that a name near NAME_MAX still gets a temp file. */
        snprintf(name, cap, "%.*s.%.64s.tmp%ld.%u", (int)dirlen, target, base, (long)getpid(), counter++);
        int fd = open(name, O_WRONLY | O_CREAT | O_EXCL, 0666);
        if (fd >= 0) {
            *tmp = name;
            return fd;
        }
        if (errno != EEXIST) break;
    }
    int e = errno;
    gm_free(name);
    errno = e;
    return -1;
}

/* Why a file cannot be created at path, in the user's terms: a missing directory is named, and
 * a directory that exists but takes no new files (/proc) is not "No such file or directory". */
static gm_status create_failed(const char *path, int e, gm_error *err)
{
    if (e != ENOENT) return gm_error_set(err, GM_ERR_IO, "%s: cannot write: %s", path, strerror(e));
    const char *slash = strrchr(path, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - path) : 1, slash ? path : ".");
    if (!dir[0]) snprintf(dir, sizeof dir, "/");
    struct stat sb;
    if (stat(dir, &sb) != 0) return gm_error_set(err, GM_ERR_IO, "%s: cannot write: no directory '%s'", path, dir);
    if (!S_ISDIR(sb.st_mode)) return gm_error_set(err, GM_ERR_IO, "%s: cannot write: '%s' is not a directory", path, dir);
    return gm_error_set(err, GM_ERR_IO, "%s: cannot write: the file system of '%s' takes no new files", path, dir);
}

static void staged_free(staged *s, bool remove)
{
    if (remove && s->tmp && !s->done) unlink(s->tmp);
    gm_free(s->path);
    gm_free(s->target);
    gm_free(s->tmp);
    gm_free(s->bytes);
}

gm_status gm_files_add(gm_files *fs, const char *path, const void *data, size_t len, gm_error *err)
{
    if (gm_grow((void **)&fs->v, sizeof *fs->v, fs->n + 1, &fs->cap))
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
    staged s = {.path = gm_strdup(path)};
    if (!s.path) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
    struct stat sb;
    bool exists = stat(path, &sb) == 0;
    if (exists && S_ISDIR(sb.st_mode)) {
        staged_free(&s, true);
        return gm_error_set(err, GM_ERR_IO, "%s: cannot write: is a directory", path);
    }
    if (exists && !S_ISREG(sb.st_mode)) {
        s.bytes = gm_malloc(len ? len : 1);
        if (!s.bytes) {
            staged_free(&s, true);
            return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
        }
        if (len) memcpy(s.bytes, data, len);
        s.len = len;
        fs->v[fs->n++] = s;
        return GM_OK;
    }
    /* Replace what a symlink points to, not the link itself. */
    char *real = exists ? realpath(path, NULL) : NULL;
    s.target = gm_strdup(real ? real : path);
    free(real);
    if (!s.target) {
        staged_free(&s, true);
        return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
    }
    int fd = create_temp(s.target, &s.tmp);
    if (fd < 0) {
        int e = errno;
        staged_free(&s, true);
        return create_failed(path, e, err);
    }
    int rc = write_direct(fd, data, len);
    /* Keep an existing file's permission bits; flush to disk before the rename so that a crash
     * leaves either the old file or the whole new one. */
    if (rc == 0 && exists) rc = fchmod(fd, sb.st_mode & 07777);
    if (rc == 0) rc = fsync(fd);
    int e = errno;
    if (close(fd) != 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    fs->v[fs->n++] = s; /* freed with the set, and its temporary file removed, on failure too */
    return rc ? gm_error_set(err, GM_ERR_IO, "%s: cannot write: %s", path, strerror(e)) : GM_OK;
}

gm_status gm_files_commit(gm_files *fs, gm_error *err)
{
    /* Renames first: they cannot half-write anything; a device is written last. */
    for (size_t i = 0; i < fs->n; i++) {
        staged *s = &fs->v[i];
        if (!s->tmp || s->done) continue;
        if (rename(s->tmp, s->target) != 0)
            return gm_error_set(err, GM_ERR_IO, "%s: cannot write: %s", s->path, strerror(errno));
        s->done = true;
    }
    for (size_t i = 0; i < fs->n; i++) {
        staged *s = &fs->v[i];
        if (s->tmp || s->done) continue;
        gm_status st = write_in_place(s->path, s->bytes, s->len, err);
        if (st != GM_OK) return st;
        s->done = true;
    }
    return GM_OK;
}

void gm_files_drop_last(gm_files *fs)
{
    if (!fs || fs->n == 0) return;
    staged_free(&fs->v[--fs->n], true);
}

void gm_files_free(gm_files *fs)
{
    if (!fs) return;
    for (size_t i = 0; i < fs->n; i++) staged_free(&fs->v[i], true);
    gm_free(fs->v);
    gm_free(fs);
}

gm_status gm_write_file(const char *path, const void *data, size_t len, gm_error *err)
{
    gm_files *fs = gm_files_new();
    if (!fs) return gm_error_set(err, GM_ERR_NOMEM, "%s: out of memory", path);
    gm_status st = gm_files_add(fs, path, data, len, err);
    if (st == GM_OK) st = gm_files_commit(fs, err);
    gm_files_free(fs);
    return st;
}
