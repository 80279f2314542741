/*
 * One process per data directory: an exclusive lock on DIR/.lock, taken before anything in the
 * directory is opened or written, held for the process's life.
 *
 * Nothing else stops a second mskmock from opening a running broker's directory, and two
 * processes appending to the same segment files and the same database lose records. Kafka
 * refuses the same way at start: LogManager.lockLogDirs takes a java.nio FileLock on each log
 * directory's .lock and fails with "Failed to acquire lock on file .lock in <dir>. A Kafka
 * instance in another process or thread is using this directory."
 * (core/src/main/scala/kafka/log/LogManager.scala).
 *
 * flock(2) rather than a lock file that exists or not: the kernel drops the lock when the last
 * descriptor of it closes, so a broker killed with kill -9 (or a container that stopped) leaves
 * nothing to clean up, and the next start just works. The file keeps the holder's pid (written
 * after locking) only to name it in the refusal. Readers that open mskmock.db read-only (sqlite3)
 * never touch .lock, so they keep working beside a running broker.
 */
#include "stor.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

/* The pid the holder wrote, or 0 when the file holds none (yet: it writes it just after locking). */
static long holder_pid(int fd) {
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0) return 0;
    buf[n] = 0;
    char *end;
    long pid = strtol(buf, &end, 10);
    return pid > 0 && (*end == '\n' || *end == 0) ? pid : 0;
}

int stor_dir_lock(const char *dir, bool create, int *fd_out, char *err, size_t errlen) {
    *fd_out = -1;
    if (strcmp(dir, ":memory:") == 0) return 0;
    if (create && mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(err, errlen, "data.dir %s: cannot create the directory: %s", dir, strerror(errno));
        return -1;
    }
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/.lock", dir) >= sizeof path) {
        snprintf(err, errlen, "data.dir %.200s...: path too long", dir);
        return -1;
    }
    /* O_CLOEXEC: a program the broker runs must not keep the directory locked after it exits */
    int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        snprintf(err, errlen, "data.dir %s: cannot open %s: %s", dir, path, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        int e = errno;
        if (e == EWOULDBLOCK) {
            long pid = holder_pid(fd);
            char who[48] = "another process";
            if (pid) snprintf(who, sizeof who, "another process (pid %ld)", pid);
            snprintf(err, errlen,
                     "data.dir %s is in use by %s: it holds the lock on %s. One broker per data directory: "
                     "stop that one first (its lock goes with it, even after kill -9), or give this one another "
                     "--data-dir (or data.dir=:memory:)", dir, who, path);
            close(fd);
            return 1;
        }
        /* a file system without flock (some network or FUSE mounts): run unlocked, as before */
        snprintf(err, errlen, "data.dir %s: cannot lock %s (%s): nothing stops a second broker on this directory",
                 dir, path, strerror(e));
        close(fd);
        return 2;
    }
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    /* best effort: the pid only names the holder in another process's refusal */
    bool written = ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) == n;
    (void)written;
    *fd_out = fd;
    return 0;
}

void stor_dir_unlock(int fd) {
    if (fd >= 0) close(fd); /* closing the one descriptor releases the flock */
}
