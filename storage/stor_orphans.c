/*
 * Segment files the database does not account for: moved aside, never deleted.
 *
 * Record bytes are the only copy of what producers were acknowledged for; the database is an
 * index over them that can be damaged and salvaged (stor_salvage.c) with rows lost. So a
 * partition directory or a segment file with no row is not garbage by default: it may be the
 * last copy of records whose rows a salvage dropped. It goes to DATA/orphaned/<stamp>/ under
 * its path relative to the data directory, with a line in the log (stor_set_notice), and is
 * deleted only when the broker itself recorded that it deleted it (a DeleteTopics: a
 * 'segments.deleting.<topic id>' setting in the commit that removed the topic, cleared once
 * its files are gone) or when it is empty. Kafka does the same with a log directory it cannot
 * place: it renames it with a "-delete" or "-stray" suffix rather than removing its bytes
 * (core/src/main/scala/kafka/log/LogManager.scala, KIP-866's stray logs).
 */
#include "stor_int.h"

#include "kp_mem.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define ORPHAN_DIR "orphaned"

void stor_set_notice(stor *s, stor_notice_fn fn, void *ctx) {
    stor_segs *g = &s->segs;
    g->notice = fn;
    g->notice_ctx = ctx;
    /* lines made before anyone listened (stor_recover runs before the broker's log is set up for it) */
    for (size_t i = 0; i < g->nnotes; i++) {
        if (fn) fn(ctx, g->notes[i]);
        free(g->notes[i]);
    }
    free(g->notes);
    g->notes = NULL;
    g->nnotes = g->capnotes = 0;
}

void stor_seg_notice(stor *s, const char *fmt, ...) {
    stor_segs *g = &s->segs;
    char line[1600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (g->notice) {
        g->notice(g->notice_ctx, line);
        return;
    }
    XGROW(g->notes, g->capnotes, g->nnotes + 1, 8);
    g->notes[g->nnotes++] = xstrdup(line);
}

void stor_seg_notes_free(stor_segs *g) {
    for (size_t i = 0; i < g->nnotes; i++) free(g->notes[i]);
    free(g->notes);
    g->notes = NULL;
    g->nnotes = g->capnotes = 0;
}

/* mkdir -p of path's directories (path itself excluded). */
static int mkdirs_for(char *path) {
    for (char *p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
        *p = 0;
        int rc = mkdir(path, 0755);
        int e = errno;
        *p = '/';
        if (rc != 0 && e != EEXIST) return -1;
    }
    return 0;
}

/* The data directory: the one holding the segment directory (the database's own). */
static size_t data_dir_len(const stor_segs *g) {
    const char *slash = strrchr(g->dir, '/');
    return slash ? (size_t)(slash - g->dir) : 0;
}

int stor_seg_move_aside(stor *s, const char *path, char *to, size_t n) {
    stor_segs *g = &s->segs;
    size_t dl = data_dir_len(g);
    if (!g->orphan_stamp[0]) {
        /* one folder per start (and pid): two starts never mix what they moved */
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        char when[32];
        strftime(when, sizeof when, "%Y%m%dT%H%M%SZ", &tm);
        snprintf(g->orphan_stamp, sizeof g->orphan_stamp, "%s-%ld", when, (long)getpid());
    }
    const char *rel = strncmp(path, g->dir, dl) == 0 && path[dl] == '/' ? path + dl + 1 : path;
    for (int k = 0; k < 1000; k++) {
        char suffix[16] = "";
        if (k) snprintf(suffix, sizeof suffix, ".%d", k);
        int w = snprintf(to, n, "%.*s/%s/%s/%s%s", (int)dl, g->dir, ORPHAN_DIR, g->orphan_stamp, rel, suffix);
        if (w < 0 || (size_t)w >= n) return stor_failf(s, "move %s aside: path too long", path);
        struct stat sb;
        if (lstat(to, &sb) == 0) continue; /* never over something moved before */
        if (mkdirs_for(to) != 0)
            return stor_failf(s, "move %s aside: create directories for %s: %s", path, to, strerror(errno));
        if (rename(path, to) != 0) return stor_failf(s, "move %s aside to %s: %s", path, to, strerror(errno));
        return 0;
    }
    return stor_failf(s, "move %s aside: too many earlier copies under %s", path, to);
}

/* Files and bytes in a directory (not recursive: partition directories hold only segment files). */
static void dir_usage(const char *dir, int *files, int64_t *bytes) {
    *files = 0;
    *bytes = 0;
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        char p[1400];
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat sb;
        if (lstat(p, &sb) != 0) continue;
        (*files)++;
        *bytes += sb.st_size;
    }
    closedir(d);
}

int stor_seg_orphan_dir(stor *s, const char *dir, int64_t topic_id, int32_t partition) {
    int files;
    int64_t bytes;
    dir_usage(dir, &files, &bytes);
    if (files == 0) {
        rmdir(dir); /* nothing in it to lose */
        return 0;
    }
    char to[1400];
    if (stor_seg_move_aside(s, dir, to, sizeof to) != 0) {
        stor_seg_notice(s, "storage: partition directory %s (%d files, %" PRId64 " bytes) is not in the database and "
                           "could not be moved aside (%s); left where it is, not served", dir, files, bytes,
                        stor_errmsg(s));
        return -1;
    }
    stor_seg_notice(s, "storage: partition directory %s (topic id %" PRId64 " partition %d: %d files, %" PRId64
                       " bytes) is not in the database and was not deleted by this broker: moved aside to %s, "
                       "nothing deleted (a salvage may have lost its rows; its records are not served from there)",
                    dir, topic_id, partition, files, bytes, to);
    return 0;
}

int stor_seg_orphan_file(stor *s, const char *path, const char *why) {
    struct stat sb;
    if (lstat(path, &sb) != 0) return 0;
    if (S_ISREG(sb.st_mode) && sb.st_size == 0) {
        unlink(path); /* empty: nothing to lose */
        return 0;
    }
    char to[1400];
    if (stor_seg_move_aside(s, path, to, sizeof to) != 0) {
        stor_seg_notice(s, "storage: segment %s (%lld bytes, %s) could not be moved aside (%s); left where it is",
                        path, (long long)sb.st_size, why, stor_errmsg(s));
        return -1;
    }
    stor_seg_notice(s, "storage: segment %s (%lld bytes) %s: moved aside to %s, nothing deleted", path,
                    (long long)sb.st_size, why, to);
    return 0;
}

int64_t stor_seg_dir_max_topic(stor *s) {
    /* read each time (topics are created rarely): a directory put there while running counts too */
    int64_t max = 0;
    DIR *d = opendir(s->segs.dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            /* any name a partition directory had, with or without a suffix someone gave it */
            long long tid;
            if (sscanf(e->d_name, "%lld-", &tid) == 1 && tid > max) max = tid;
        }
        closedir(d);
    }
    return max;
}
