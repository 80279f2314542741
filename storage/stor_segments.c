/*
 * Segment files: where record batch bytes live for a database on disk (schema migration 8).
 *
 * SQLite keeps every batch's row (offsets, producer fields, size) and, for a batch in a
 * segment, where its bytes are: segment id and position. Each partition has its own segment
 * files, as in Kafka (DIR/<topic id>-<partition>/<id>.log), so retention of one topic never
 * waits for another's. A batch's bytes are appended to its partition's newest segment with one
 * pwrite and never copied again: SQLite's WAL would write them twice (the WAL, then the
 * checkpoint) and copy them through its pages each time, which measured as most of the
 * broker's CPU under produce (docs/design-storage.md).
 *
 * Order is what keeps kill -9 safe: a batch's bytes are written before the commit that holds
 * its row, so a committed row always points at written bytes (the page cache survives the
 * process). Bytes past the newest committed row of a segment (segments.used) belong to appends
 * whose commit never happened; stor_recover truncates them. A power cut is different: with
 * storage.sync=normal the WAL may keep a commit whose segment bytes never reached the disk.
 * So a segment's bytes up to segments.synced are known to be on disk (fdatasync before the mark
 * is committed: at every commit with storage.sync=full; with normal, for a segment closed for
 * the next one, by stor_seg_sync.c's thread some time after the close). Only a restart of the operating system can lose what the page cache held, so
 * stor_recover compares the kernel's boot id with the one the database last ran under: after a
 * reboot every batch past a segment's mark is read back and its CRC checked, and a batch that
 * fails is removed with everything after it in its partition, the way Kafka recovers a log
 * after an unclean shutdown (in the normal mode at most the newest segment of each partition and
 * the segments closed in stor_seg_sync.c's delay before the cut).
 * storage.sync=off promises nothing across a power cut and skips the check.
 *
 * segments.live counts the rows pointing into a segment and segments.used is the end of the
 * newest, both for the rows below partitions.bytes_end (schema migration 22: triggers for
 * removals and moves, the producer snapshot's commit for the rows appended since, a start for
 * what a kill -9 left); readers add the rows past it. A segment other than its partition's
 * newest with no row left is deleted after the commit that made it so, and a deleted topic's
 * directories go after the commit of the delete.
 * Rows written before migration 8, and every row of an in-memory database, keep their bytes in
 * batches.data (seg NULL); reads take either.
 */
#include "stor_int.h"

#include "kp_batch.h"
#include "kp_mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SEG_SETTING "segments.dir"
#define SEG_BOOT_SETTING "segments.boot_id"
/* segments.deleting.<topic id>: committed with a topic's deletion, cleared once its files are gone */
#define SEG_DELETING_SETTING "segments.deleting."
#define SEG_DEFAULT_BYTES (16 * 1024 * 1024)
/* Open segment files kept; more are closed least recently used first (a topic may have thousands of partitions). */
#define SEG_FD_CACHE 256
/* blocks allocated ahead of a partition's appends (seg_prealloc): 4 batches' worth, within these bounds */
#define SEG_PREALLOC_MIN ((int64_t)64 << 10)
#define SEG_PREALLOC_MAX ((int64_t)4 << 20)

struct stor_seg_part {
    int64_t topic_id;
    int32_t partition;
    bool used;    /* hash slot taken */
    bool dirty;   /* appended to in the open transaction */
    int64_t active; /* newest segment id; 0: none */
    int64_t wpos;   /* where its next batch goes */
    int64_t prealloc; /* the active segment's blocks are allocated up to here (seg_prealloc) */
};

struct stor_seg_fd {
    int64_t topic_id, id;
    int32_t partition;
    int fd;
    uint64_t last_use;
};

static void seg_path(const stor_segs *g, int64_t topic_id, int32_t partition, int64_t id, char *out, size_t n) {
    if (id > 0)
        snprintf(out, n, "%s/%" PRId64 "-%d/%020" PRId64 ".log", g->dir, topic_id, partition, id);
    else
        snprintf(out, n, "%s/%" PRId64 "-%d", g->dir, topic_id, partition);
}

void stor_seg_path(stor *s, int64_t topic_id, int32_t partition, int64_t id, char *out, size_t n) {
    seg_path(&s->segs, topic_id, partition, id, out, n);
}

/* sqlite3_mprintf formats (%Q quotes a string), so no printf format attribute. */
static int seg_exec(stor *s, const char *what, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    char *sql = sqlite3_vmprintf(fmt, ap);
    va_end(ap);
    int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
    sqlite3_free(sql);
    return rc == SQLITE_OK ? 0 : stor_fail(s, what);
}

static int seg_retire_rows(stor *s);
static void seg_retire_now(stor *s);

/* ---- file descriptors ---- */

static int seg_fd(stor *s, int64_t topic_id, int32_t partition, int64_t id) {
    stor_segs *g = &s->segs;
    g->clock++;
    int lru = -1;
    for (int i = 0; i < g->nfds; i++) {
        struct stor_seg_fd *f = &g->fds[i];
        if (f->id == id && f->topic_id == topic_id && f->partition == partition) {
            f->last_use = g->clock;
            return f->fd;
        }
        if (lru < 0 || f->last_use < g->fds[lru].last_use) lru = i;
    }
    char path[sizeof g->dir + 64];
    seg_path(g, topic_id, partition, id, path, sizeof path);
    int fd = open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) return stor_failf(s, "open segment %s: %s", path, strerror(errno));
    int at;
    if (g->nfds < SEG_FD_CACHE) {
        at = g->nfds++;
    } else {
        at = lru;
        close(g->fds[at].fd);
    }
    g->fds[at] = (struct stor_seg_fd){.topic_id = topic_id, .partition = partition, .id = id, .fd = fd,
                                      .last_use = g->clock};
    return fd;
}

/* Close the fds of one segment (id > 0), of a partition's (id 0), or of a topic's (partition < 0). */
static void seg_forget(stor_segs *g, int64_t topic_id, int32_t partition, int64_t id) {
    for (int i = 0; i < g->nfds;) {
        struct stor_seg_fd *f = &g->fds[i];
        if (f->topic_id == topic_id && (partition < 0 || f->partition == partition) && (id == 0 || f->id == id)) {
            close(f->fd);
            g->fds[i] = g->fds[--g->nfds];
        } else {
            i++;
        }
    }
}

static int pread_all(int fd, void *buf, size_t len, int64_t pos) {
    uint8_t *p = buf;
    while (len) {
        ssize_t n = pread(fd, p, len, (off_t)pos);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return n == 0 ? -2 : -1;
        p += n, len -= (size_t)n, pos += n;
    }
    return 0;
}

/*
 * An append is written in pieces that end at multiples of SEG_WRITE_PIECE of the file, one pwrite
 * each. ext4 caches files in large folios (Linux 6.16 on), sized by the write's length and
 * alignment (a 1 MiB write at a 1 MiB boundary can get a 1 MiB folio), and a new folio of high
 * order comes from the kernel's high-order free blocks. In a VM that hands free memory back to its
 * host (virtio-balloon free page reporting, as in the machine of docs/benchmarks.md, "At 1 GB per
 * phase") those are the blocks the host took back, and every first write to them faults in the
 * hypervisor, charged to the writer: writing 1 GiB into a new file cost 1.0-2.2 s of system CPU
 * there in 1 MiB writes against 0.25-0.33 s in 128 KiB pieces, which likely find the free
 * fragments of lower orders first (/proc/buddyinfo: ~3 GB of them beside the 4 MiB blocks); the
 * broker's CPU for a 1 GB produce phase at 8 partitions went from 1.2-1.4 s to 0.7-0.8 s. A piece
 * costs one more syscall per 128 KiB (~1 us), and a 128 KiB folio still spreads the page cache's
 * per-folio work over 32 pages.
 */
#define SEG_WRITE_PIECE ((int64_t)128 << 10)

static int pwrite_all(int fd, const void *buf, size_t len, int64_t pos) {
    const uint8_t *p = buf;
    while (len) {
        int64_t room = SEG_WRITE_PIECE - pos % SEG_WRITE_PIECE;
        ssize_t n = pwrite(fd, p, (int64_t)len < room ? len : (size_t)room, (off_t)pos);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        p += n, len -= (size_t)n, pos += n;
    }
    return 0;
}

int stor_seg_read(stor *s, int64_t topic_id, int32_t partition, int64_t seg, int64_t pos, void *buf, size_t len) {
    int fd = seg_fd(s, topic_id, partition, seg);
    if (fd < 0) return -1;
    int rc = pread_all(fd, buf, len, pos);
    if (rc == -2)
        return stor_failf(s, "segment %" PRId64 " of partition %d ends before position %" PRId64 " + %zu its batch "
                             "row names", seg, partition, pos, len);
    if (rc) return stor_failf(s, "read segment %" PRId64 " of partition %d: %s", seg, partition, strerror(errno));
    return 0;
}

/* ---- per-partition state, loaded from the segments table on first use ---- */

/*
 * The newest segment and its committed end: used counts the rows below bytes_end only (migration
 * 22), so the end of the rows past it in that segment too (at most the batches since the last
 * producer snapshot). After a rollback this is where the next append goes and where the lost
 * transaction's bytes are cut: a used short of a committed row would write over it.
 */
static int part_load(stor *s, struct stor_seg_part *p) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db,
                                "SELECT d.id, " STOR_SEG_USED("d") " FROM segments d WHERE d.topic_id = ?1"
                                " AND d.partition = ?2 ORDER BY d.id DESC LIMIT 1", -1, &st, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_bind_int64(st, 1, p->topic_id);
        sqlite3_bind_int(st, 2, p->partition);
        rc = sqlite3_step(st);
    }
    p->active = p->wpos = 0; /* no row: none */
    if (rc == SQLITE_ROW) {
        p->active = sqlite3_column_int64(st, 0);
        p->wpos = sqlite3_column_int64(st, 1);
        rc = SQLITE_OK;
    } else if (rc == SQLITE_DONE) {
        rc = SQLITE_OK;
    }
    sqlite3_finalize(st);
    return rc == SQLITE_OK ? 0 : stor_fail(s, "read segments");
}

static struct stor_seg_part *part_get(stor *s, int64_t topic_id, int32_t partition) {
    stor_segs *g = &s->segs;
    if ((g->nparts + 1) * 2 > g->capparts) {
        size_t cap = g->capparts ? g->capparts * 2 : 64;
        struct stor_seg_part *t = xcalloc(cap, sizeof *t);
        for (size_t i = 0; i < g->capparts; i++) {
            if (!g->parts[i].used) continue;
            size_t j = stor_part_hash(g->parts[i].topic_id, g->parts[i].partition) & (cap - 1);
            while (t[j].used) j = (j + 1) & (cap - 1);
            t[j] = g->parts[i];
        }
        free(g->parts);
        g->parts = t;
        g->capparts = cap;
    }
    size_t j = stor_part_hash(topic_id, partition) & (g->capparts - 1);
    while (g->parts[j].used) {
        if (g->parts[j].topic_id == topic_id && g->parts[j].partition == partition) return &g->parts[j];
        j = (j + 1) & (g->capparts - 1);
    }
    struct stor_seg_part *p = &g->parts[j];
    *p = (struct stor_seg_part){.topic_id = topic_id, .partition = partition, .used = true};
    if (part_load(s, p)) {
        p->used = false;
        return NULL;
    }
    g->nparts++;
    return p;
}

/* Forget every partition state (reloaded on next use): after a rollback, or a topic's deletion. */
static void parts_reset(stor_segs *g) {
    free(g->parts);
    g->parts = NULL;
    g->nparts = g->capparts = 0;
    g->ndirty = 0;
}

static int mark_dirty(stor *s, struct stor_seg_part *p) {
    stor_segs *g = &s->segs;
    if (p->dirty) return 0;
    XGROW(g->dirty, g->capdirty, g->ndirty + 1, 16);
    g->dirty[g->ndirty].topic_id = p->topic_id;
    g->dirty[g->ndirty].partition = p->partition;
    g->ndirty++;
    p->dirty = true;
    return 0;
}

/* ---- open and recovery ---- */

/* The directory's name relative to the database's, kept in settings so a salvaged copy next to it finds it. */
static int seg_resolve_dir(stor *s, const char *db_path) {
    stor_segs *g = &s->segs;
    char name[256];
    int got = stor_setting_get(s, SEG_SETTING, name, sizeof name);
    if (got < 0) return -1;
    char tmp[sizeof g->dir];
    snprintf(tmp, sizeof tmp, "%s", db_path);
    if (got == 0) {
        char base[sizeof g->dir];
        snprintf(base, sizeof base, "%s", db_path);
        snprintf(name, sizeof name, "%s.segments", basename(base));
        g->name_unsaved = true;
    }
    if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
        return stor_failf(s, "setting %s: '%s' is not a directory name", SEG_SETTING, name);
    int n = snprintf(g->dir, sizeof g->dir, "%s/%s", dirname(tmp), name);
    if (n < 0 || (size_t)n >= sizeof g->dir - 64) return stor_failf(s, "segment directory path too long");
    return 0;
}

int stor_seg_open(stor *s, const char *db_path, stor_sync sync) {
    stor_segs *g = &s->segs;
    g->bytes = SEG_DEFAULT_BYTES;
    g->sync = sync;
    g->sync_delay_ms = stor_seg_sync_default_delay_ms();
    g->fds = xcalloc(SEG_FD_CACHE, sizeof *g->fds);
    if (seg_resolve_dir(s, db_path)) return -1;
    g->enabled = true;
    return 0;
}

/* The kernel's boot id ("" when unknown); the same id means the page cache outlived whatever stopped us. */
static void boot_id(char *out, size_t n) {
    out[0] = 0;
    FILE *f = fopen("/proc/sys/kernel/random/boot_id", "r");
    if (!f) return;
    if (!fgets(out, (int)n, f)) out[0] = 0;
    fclose(f);
    out[strcspn(out, "\n")] = 0;
}

/*
 * The bytes of one segment's rows past its synced mark, read back: a row whose batch does not
 * parse, is not where its row says, or fails its CRC is removed with every later row of its partition.
 */
static int seg_verify(stor *s, int64_t topic_id, int32_t partition, int64_t id, int64_t from, int64_t *dropped) {
    sqlite3_stmt *st = NULL, *del = NULL;
    uint8_t *buf = NULL;
    size_t cap = 0;
    int ret = 0, fd = -1;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT base_offset, last_offset, pos, size FROM batches"
                           " WHERE topic_id = ?1 AND partition = ?2 AND seg = ?3 AND pos >= ?4 ORDER BY base_offset",
                           -1, &st, NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(s->db, "DELETE FROM batches WHERE topic_id = ?1 AND partition = ?2 AND base_offset >= ?3",
                           -1, &del, NULL) != SQLITE_OK) {
        ret = stor_fail(s, "verify segment");
        goto out;
    }
    sqlite3_bind_int64(st, 1, topic_id);
    sqlite3_bind_int(st, 2, partition);
    sqlite3_bind_int64(st, 3, id);
    sqlite3_bind_int64(st, 4, from);
    if ((fd = seg_fd(s, topic_id, partition, id)) < 0) {
        ret = -1;
        goto out;
    }
    int64_t bad = -1;
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t pos = sqlite3_column_int64(st, 2), size = sqlite3_column_int64(st, 3);
        if (size <= 0 || size > INT32_MAX) continue;
        if ((size_t)size > cap) {
            uint8_t *p = realloc(buf, (size_t)size);
            if (!p) {
                ret = stor_failf(s, "verify segment: out of memory");
                break;
            }
            buf = p, cap = (size_t)size;
        }
        char why[200];
        bool ok = pread_all(fd, buf, (size_t)size, pos) == 0 &&
                  !stor_batch_unsound(buf, (size_t)size, sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), why,
                                      sizeof why);
        if (!ok) {
            bad = sqlite3_column_int64(st, 0);
            break;
        }
    }
    if (ret == 0 && rc != SQLITE_DONE && rc != SQLITE_ROW) ret = stor_fail(s, "verify segment");
    sqlite3_reset(st);
    if (ret == 0 && bad >= 0) {
        sqlite3_bind_int64(del, 1, topic_id);
        sqlite3_bind_int(del, 2, partition);
        sqlite3_bind_int64(del, 3, bad);
        if (sqlite3_step(del) != SQLITE_DONE) ret = stor_fail(s, "verify segment: remove damaged batches");
        else *dropped += sqlite3_changes(s->db);
        /* these offsets are appended again, uncounted by partitions.bytes (schema migration 21) */
        char *sql = sqlite3_mprintf("UPDATE partitions SET bytes_end = min(bytes_end, %lld)"
                                    " WHERE topic_id = %lld AND partition = %d",
                                    (long long)bad, (long long)topic_id, partition);
        if (ret == 0 && (!sql || sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK))
            ret = stor_fail(s, "verify segment: lower the partition's counted end");
        sqlite3_free(sql);
    }
out:
    free(buf);
    sqlite3_finalize(st);
    sqlite3_finalize(del);
    return ret;
}

/* The recorded deletions of topics that are gone (the files are too, by then). */
static const char clear_deletions[] =
    "DELETE FROM settings WHERE key LIKE '" SEG_DELETING_SETTING "%' AND CAST(substr(key, length('"
    SEG_DELETING_SETTING "') + 1) AS INTEGER) NOT IN (SELECT id FROM topics)";

/* Delete a partition directory this broker deleted the topic of (its deletion was committed). */
static void seg_remove_dir(const char *dir) {
    DIR *pd = opendir(dir);
    struct dirent *f;
    while (pd && (f = readdir(pd))) {
        if (!strcmp(f->d_name, ".") || !strcmp(f->d_name, "..")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
        unlink(path);
    }
    if (pd) closedir(pd);
    rmdir(dir);
}

/*
 * In a directory this database named as its own: partitions it no longer has, segments past
 * its newest. Only what the broker recorded deleting (a committed DeleteTopics whose files a
 * kill interrupted) is deleted; the rest may be the last copy of records whose rows a salvage
 * lost, so it is moved aside and logged (stor_orphans.c). An empty segment past the newest is
 * one a transaction created and never committed: nothing is lost removing it.
 */
static void seg_remove_strays(stor *s) {
    stor_segs *g = &s->segs;
    DIR *d = opendir(g->dir);
    if (!d) return;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT (SELECT 1 FROM partitions WHERE topic_id = ?1 AND partition = ?2),"
                                  " (SELECT max(id) FROM segments WHERE topic_id = ?1 AND partition = ?2),"
                                  " (SELECT 1 FROM settings WHERE key = '" SEG_DELETING_SETTING "' || ?1)",
                           -1, &st, NULL) != SQLITE_OK) {
        closedir(d);
        return;
    }
    struct dirent *e;
    while ((e = readdir(d))) {
        long long tid;
        int part, len = 0;
        if (sscanf(e->d_name, "%lld-%d%n", &tid, &part, &len) != 2 || e->d_name[len]) continue;
        sqlite3_reset(st);
        sqlite3_bind_int64(st, 1, tid);
        sqlite3_bind_int(st, 2, part);
        if (sqlite3_step(st) != SQLITE_ROW) continue;
        bool exists = sqlite3_column_type(st, 0) != SQLITE_NULL;
        int64_t newest = sqlite3_column_int64(st, 1);
        bool deleted = sqlite3_column_type(st, 2) != SQLITE_NULL;
        char dir[sizeof g->dir + 64];
        seg_path(g, tid, part, 0, dir, sizeof dir);
        if (!exists) {
            if (deleted) seg_remove_dir(dir);
            else stor_seg_orphan_dir(s, dir, tid, part);
            continue;
        }
        stor_cleaning_leftovers(s, dir, newest);
        DIR *pd = opendir(dir);
        if (!pd) continue;
        struct dirent *f;
        while ((f = readdir(pd))) {
            char *end = NULL;
            long long id = strtoll(f->d_name, &end, 10);
            if (!end || strcmp(end, ".log") != 0 || id <= newest) continue;
            char path[sizeof dir + 300];
            snprintf(path, sizeof path, "%s/%s", dir, f->d_name);
            stor_seg_orphan_file(s, path, "is past the newest segment the database has for its partition (no commit "
                                          "made it, or a salvage lost its row)");
        }
        closedir(pd);
    }
    sqlite3_finalize(st);
    closedir(d);
    /* every deletion recorded is finished now */
    sqlite3_exec(s->db, clear_deletions, NULL, NULL, NULL);
}

/* Whether the system restarted since the database was last open (boot holds this boot's id, "" if unknown). */
static int seg_rebooted(stor *s, char *boot, size_t n, char *last, size_t nlast) {
    boot_id(boot, n);
    last[0] = 0;
    if (stor_setting_get(s, SEG_BOOT_SETTING, last, nlast) < 0) return -1;
    return !boot[0] || strcmp(boot, last) != 0;
}

int stor_seg_power_cut(stor *s) {
    char boot[64], last[64];
    int r = seg_rebooted(s, boot, sizeof boot, last, sizeof last);
    return r < 0 ? -1 : r && s->segs.sync != STOR_SYNC_OFF;
}

/*
 * Every partition's rows past bytes_end counted in (stor_part_fold), as the producer snapshot
 * would have at a clean stop: after a kill -9, up to 4,096 batches a partition. One commit.
 */
static int seg_fold_all(stor *s) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT p.topic_id, p.partition FROM partitions p WHERE EXISTS (SELECT 1 FROM"
                                  " batches b WHERE b.topic_id = p.topic_id AND b.partition = p.partition"
                                  " AND b.base_offset >= p.bytes_end)", -1, &st, NULL) != SQLITE_OK)
        return stor_fail(s, "read partitions to fold");
    int ret = seg_exec(s, "fold partitions", "SAVEPOINT seg_fold"), rc = SQLITE_DONE;
    while (ret == 0 && (rc = sqlite3_step(st)) == SQLITE_ROW)
        ret = stor_part_fold(s, sqlite3_column_int64(st, 0), sqlite3_column_int(st, 1));
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "read partitions to fold");
    sqlite3_finalize(st);
    if (ret != 0) seg_exec(s, "fold partitions", "ROLLBACK TO seg_fold");
    if (seg_exec(s, "fold partitions", "RELEASE seg_fold")) ret = -1;
    return ret;
}

/* An empty file at path, and the directories above it (as far as the segments directory) if they are gone too. */
static int seg_recreate_lost(const char *path) {
    char tmp[600], dir[600], up[600];
    snprintf(tmp, sizeof tmp, "%s", path);
    snprintf(dir, sizeof dir, "%s", dirname(tmp)); /* the partition's directory */
    snprintf(tmp, sizeof tmp, "%s", dir);
    snprintf(up, sizeof up, "%s", dirname(tmp)); /* the segments directory */
    if (mkdir(up, 0755) != 0 && errno != EEXIST) return -1;
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) return -1;
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    close(fd);
    /* the check below marks it synced: its name must be on disk by then */
    stor_fsync_dirs_above(path, STOR_SEG_DIR_LEVELS);
    return 0;
}

int stor_recover(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->enabled || g->recovered) return 0;
    g->recovered = true;
    char boot[64], last[64] = "";
    int rebooted = seg_rebooted(s, boot, sizeof boot, last, sizeof last);
    if (rebooted < 0) return -1;
    bool check = g->sync != STOR_SYNC_OFF && rebooted;
    if (boot[0] && strcmp(boot, last) != 0 &&
        seg_exec(s, "record boot id", "INSERT INTO settings (key, value) VALUES ('%s', %Q)"
                 " ON CONFLICT (key) DO UPDATE SET value = excluded.value", SEG_BOOT_SETTING, boot))
        return -1;
    /* used and live exact first: the cut below would take off what a kill -9 left unfolded */
    if (seg_fold_all(s)) return -1;
    /* Every segment: cut what no commit holds, check what a power cut may have lost. */
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT topic_id, partition, id, used, synced, live FROM segments", -1, &st, NULL) !=
        SQLITE_OK)
        return stor_fail(s, "read segments");
    int64_t dropped = 0, verified = 0;
    int ret = 0, rc;
    bool began = false;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
        int64_t tid = sqlite3_column_int64(st, 0), id = sqlite3_column_int64(st, 2);
        int32_t part = sqlite3_column_int(st, 1);
        int64_t used = sqlite3_column_int64(st, 3), synced = sqlite3_column_int64(st, 4);
        int64_t live = sqlite3_column_int64(st, 5);
        char path[sizeof g->dir + 64];
        seg_path(g, tid, part, id, path, sizeof path);
        struct stat sb;
        int missing = stat(path, &sb) != 0;
        /*
         * A segment never synced (storage.sync=normal fsyncs a new name only with the segment,
         * seg_create) may have lost its name in a power cut as it may have lost its bytes: it
         * comes back empty, and the check below removes its rows and every later one of the
         * partition, as for bytes that did not reach the disk.
         */
        if (missing && errno == ENOENT && check && synced == 0 && live > 0) {
            if (seg_recreate_lost(path) != 0) {
                ret = stor_failf(s, "recreate segment %s, lost in a restart of the system: %s", path, strerror(errno));
                break;
            }
            missing = stat(path, &sb) != 0;
        }
        if (missing) {
            if (live <= 0) continue; /* deleted after its last row went; its row goes at the next sweep */
            ret = stor_failf(s, "segment %s is missing: %lld batches have their bytes there; restore it, or salvage "
                                "what is left (mskmock --salvage)", path, (long long)live);
            break;
        }
        if (sb.st_size > used && truncate(path, (off_t)used) != 0) {
            ret = stor_failf(s, "truncate segment %s to %lld bytes: %s", path, (long long)used, strerror(errno));
            break;
        }
        if (check && synced < used && live > 0) {
            if (!began && (ret = seg_exec(s, "verify segments", "SAVEPOINT seg_verify")) != 0) break;
            began = true;
            verified += used - synced;
            if ((ret = seg_verify(s, tid, part, id, synced, &dropped)) != 0) break;
            stor_batch_last_forget(s, tid, part); /* it may have removed the partition's last rows */
        }
    }
    if (ret == 0 && rc != SQLITE_DONE) ret = stor_fail(s, "read segments");
    sqlite3_finalize(st);
    if (began) {
        /* the check's removals (if any) and the new marks commit together; nothing else is open yet */
        if (ret == 0) ret = seg_exec(s, "mark segments checked", "UPDATE segments SET synced = used");
        if (ret != 0) seg_exec(s, "verify segments", "ROLLBACK TO seg_verify");
        if (seg_exec(s, "verify segments", "RELEASE seg_verify")) ret = -1;
    }
    g->verified_bytes = verified;
    g->dropped_rows = dropped;
    /* only in a directory this database has named as its own: a fresh database (a salvage's) must not touch it */
    if (ret == 0 && !g->name_unsaved) seg_remove_strays(s);
    if (ret == 0) {
        g->maybe_dead = true;
        stor_seg_collect(s);
        seg_retire_now(s);
    }
    /* closed segments a stop left unsynced (stor_seg_sync.c) */
    if (ret == 0 && g->sync == STOR_SYNC_NORMAL) ret = stor_seg_sync_pending(s);
    return ret;
}

/* Retired rows deleted in a transaction of their own, outside any other (at open and close: no loop to hold). */
static void seg_retire_now(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->nretired || !s->db || !sqlite3_get_autocommit(s->db) ||
        sqlite3_exec(s->db, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
        return;
    if (seg_retire_rows(s) == 0 && sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK) g->nretired = 0;
    else sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

void stor_seg_close(stor *s) {
    stor_segs *g = &s->segs;
    seg_retire_now(s); /* stor_close rolled back what was open */
    free(g->retired);
    g->retired = NULL;
    g->nretired = g->capretired = 0;
    sqlite3_finalize(g->retire_st);
    sqlite3_finalize(g->dead_st);
    g->retire_st = g->dead_st = NULL;
    stor_seg_sync_stop(s);
    free(g->sealed);
    g->sealed = NULL;
    g->nsealed = g->capsealed = 0;
    for (int i = 0; i < g->nfds; i++) close(g->fds[i].fd);
    free(g->fds);
    g->fds = NULL;
    g->nfds = 0;
    parts_reset(g);
    free(g->dirty);
    g->dirty = NULL;
    g->capdirty = 0;
    free(g->gone_topics);
    g->gone_topics = NULL;
    stor_seg_notes_free(g);
}

/* ---- appends ---- */

void stor_fsync_dir(const char *dir) {
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

void stor_fsync_dirs_above(const char *path, int levels) {
    char dir[600], up[600];
    snprintf(dir, sizeof dir, "%s", path);
    for (int i = 0; i < levels; i++) {
        snprintf(up, sizeof up, "%s", dirname(dir));
        snprintf(dir, sizeof dir, "%s", up);
        stor_fsync_dir(dir);
    }
}

/* A partition's new newest segment, its row in the open transaction (the triggers need it). */
static int seg_create(stor *s, struct stor_seg_part *p) {
    stor_segs *g = &s->segs;
    if (g->name_unsaved) {
        char name[256];
        snprintf(name, sizeof name, "%s", strrchr(g->dir, '/') + 1);
        if (seg_exec(s, "record segment directory", "INSERT INTO settings (key, value) VALUES ('%s', %Q)",
                     SEG_SETTING, name))
            return -1;
        g->name_unsaved = false;
    }
    char path[sizeof g->dir + 64], pdir[sizeof g->dir + 64];
    /*
     * Only full makes a new name durable here: its commits fdatasync the bytes they acknowledge,
     * which a lost name would lose. With normal the bytes reach the disk later, and the name
     * with them: the syncer fsyncs a closed segment's directories before it marks the segment
     * synced (stor_seg_sync.c), and after a reboot a never-synced segment that is gone is
     * recovered as lost bytes are (stor_recover). Here, each fsync made the loop wait for a
     * commit of the file system's journal (0.8 ms the median, up to 4 ms), and produce to 8 new
     * partitions cost 0.119 s of broker CPU a phase with them against 0.100 without, medians of
     * 16 interleaved pairs (docs/benchmarks.md, "The directory fsyncs of new segments").
     */
    bool sync = g->sync == STOR_SYNC_FULL;
    if (mkdir(g->dir, 0755) == 0) {
        if (sync) { /* its name is in the data directory */
            stor_fsync_dir(g->dir);
            stor_fsync_dirs_above(g->dir, 1);
        }
    } else if (errno != EEXIST) {
        return stor_failf(s, "create segment directory %s: %s", g->dir, strerror(errno));
    }
    seg_path(g, p->topic_id, p->partition, 0, pdir, sizeof pdir);
    if (mkdir(pdir, 0755) == 0) {
        if (sync) stor_fsync_dir(g->dir);
    } else if (errno != EEXIST) {
        return stor_failf(s, "create segment directory %s: %s", pdir, strerror(errno));
    }
    int64_t id = p->active + 1;
    seg_path(g, p->topic_id, p->partition, id, path, sizeof path);
    /* never over a file: one there is none of this database's (its rows would name it), so it may be the last copy */
    int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    struct stat sb;
    /* a name whose file has another (a compaction's link made ahead of its swap, stor_compact.c) loses nothing going */
    if (fd < 0 && errno == EEXIST && lstat(path, &sb) == 0 && S_ISREG(sb.st_mode) && sb.st_nlink > 1 &&
        unlink(path) == 0)
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0 && errno == EEXIST &&
        stor_seg_orphan_file(s, path, "was in the way of a new segment of its partition and no row of the database "
                                      "names it") == 0)
        fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) return stor_failf(s, "create segment %s: %s", path, strerror(errno));
    close(fd);
    if (sync) stor_fsync_dir(pdir);
    if (seg_exec(s, "add segment", "INSERT INTO segments (topic_id, partition, id) VALUES (%lld, %d, %lld)",
                 (long long)p->topic_id, p->partition, (long long)id)) {
        unlink(path);
        return -1;
    }
    p->active = id;
    p->wpos = 0;
    p->prealloc = 0;
    return 0;
}

static int seg_seal(stor *s, struct stor_seg_part *p);

int stor_seg_adopt(stor *s, int64_t topic_id, int32_t partition, const char *path, int64_t size, bool synced,
                   int64_t *seg) {
    stor_segs *g = &s->segs;
    struct stor_seg_part *p = part_get(s, topic_id, partition);
    if (!p) return -1;
    /*
     * The segment the cleaned one supersedes is closed as a full one is (seg_seal): its blocks
     * allocated ahead go back, and it reaches the disk, now with storage.sync=full (the commit
     * syncs only the newest segment, and this transaction may have appended to it), after the
     * commit by the syncer with normal.
     */
    if (p->active && seg_seal(s, p)) return -1;
    if (mark_dirty(s, p)) return -1;
    int64_t id = p->active + 1;
    char to[sizeof g->dir + 64], pdir[sizeof g->dir + 64];
    seg_path(g, topic_id, partition, id, to, sizeof to);
    /* linked ahead by the pass's worker, the name already synced (stor_compact.c, clean_link_ahead) */
    struct stat ps, ts;
    bool ahead = stat(path, &ps) == 0 && stat(to, &ts) == 0 && ps.st_dev == ts.st_dev && ps.st_ino == ts.st_ino;
    int rc = ahead ? 0 : link(path, to);
    if (rc != 0 && errno == EEXIST &&
        stor_seg_orphan_file(s, to, "was in the way of a compacted segment of its partition and no row of the "
                                    "database names it") == 0)
        rc = link(path, to);
    if (rc != 0) return stor_failf(s, "link %s to %s: %s", path, to, strerror(errno));
    /* the name must outlive a power cut as the commit naming it does (not for storage.sync=off) */
    seg_path(g, topic_id, partition, 0, pdir, sizeof pdir);
    if (g->sync != STOR_SYNC_OFF && !ahead) stor_fsync_dir(pdir);
    if (seg_exec(s, "add compacted segment", "INSERT INTO segments (topic_id, partition, id, used, synced)"
                 " VALUES (%lld, %d, %lld, %lld, %lld)", (long long)topic_id, partition, (long long)id,
                 (long long)size, (long long)(synced ? size : 0))) {
        unlink(to);
        return -1;
    }
    p->active = id;
    p->wpos = size;
    p->prealloc = size;
    *seg = id;
    return 0;
}

/*
 * The partition's newest segment is full: what it holds goes to disk and is marked so (sync normal
 * and full). With full, now; with normal, by the syncer thread once the closing commit is in and
 * the kernel has had time to write the pages back itself (stor_seg_sync.c): the mark only bounds
 * what a restart after a power cut reads back, and no acknowledgement waits for it.
 */
static int seg_seal(stor *s, struct stor_seg_part *p) {
    stor_segs *g = &s->segs;
    int fd = seg_fd(s, p->topic_id, p->partition, p->active);
    if (fd < 0) return -1;
    /* the blocks allocated past its end (seg_prealloc) go back: ext4 frees them on a truncate to the same size */
    if (p->prealloc > p->wpos && p->prealloc != INT64_MAX && ftruncate(fd, (off_t)p->wpos) != 0)
        return stor_failf(s, "trim segment: %s", strerror(errno));
    p->prealloc = p->wpos;
    if (g->sync == STOR_SYNC_OFF) return 0;
    if (g->sync == STOR_SYNC_NORMAL) {
        XGROW(g->sealed, g->capsealed, g->nsealed + 1, 4);
        g->sealed[g->nsealed++] = (stor_seg_synced){.topic_id = p->topic_id, .partition = p->partition,
                                                    .id = p->active, .pos = p->wpos};
        return 0;
    }
    if (fdatasync(fd) != 0) return stor_failf(s, "fdatasync segment: %s", strerror(errno));
    return seg_exec(s, "mark segment synced",
                    "UPDATE segments SET synced = %lld WHERE topic_id = %lld AND partition = %d AND id = %lld",
                    (long long)p->wpos, (long long)p->topic_id, p->partition, (long long)p->active);
}

/*
 * Blocks for the bytes about to be written, allocated ahead (fallocate, the file's size
 * unchanged) by four times the batch, so a busy partition calls it every few batches and an
 * idle one holds at most 64 KiB unused; never past the segment's size, and what is left when
 * the segment is closed is given back (seg_seal). Without it every 4 KiB page a pwrite dirties
 * reserves its block for delayed allocation (ext4_da_get_block_prep: the extent status tree,
 * the quota, the free-block counters), measured at a quarter of the pwrite; with the blocks
 * there, the write finds them mapped. A file system without fallocate just goes without.
 */
static void seg_prealloc(stor_segs *g, int fd, struct stor_seg_part *p, int64_t len) {
    if (p->wpos + len <= p->prealloc) return;
    int64_t from = p->prealloc > p->wpos ? p->prealloc : p->wpos;
    int64_t ahead = 4 * len < SEG_PREALLOC_MIN ? SEG_PREALLOC_MIN : 4 * len > SEG_PREALLOC_MAX ? SEG_PREALLOC_MAX : 4 * len;
    int64_t to = p->wpos + len + ahead;
    if (to > g->bytes) to = g->bytes > p->wpos + len ? g->bytes : p->wpos + len;
    if (fallocate(fd, FALLOC_FL_KEEP_SIZE, (off_t)from, (off_t)(to - from)) == 0) p->prealloc = to;
    else p->prealloc = INT64_MAX; /* not supported here (or no room: the pwrite says so) */
}

int stor_seg_append(stor *s, int64_t topic_id, int32_t partition, const void *data, size_t len, int64_t *seg,
                    int64_t *pos) {
    stor_segs *g = &s->segs;
    struct stor_seg_part *p = part_get(s, topic_id, partition);
    if (!p || mark_dirty(s, p)) return -1;
    if (p->active == 0 || (p->wpos > 0 && p->wpos + (int64_t)len > g->bytes)) {
        if (p->active && seg_seal(s, p)) return -1;
        if (seg_create(s, p)) return -1;
    }
    int fd = seg_fd(s, topic_id, partition, p->active);
    if (fd < 0) return -1;
    seg_prealloc(g, fd, p, (int64_t)len);
    if (pwrite_all(fd, data, len, p->wpos) != 0)
        return stor_failf(s, "append to segment %lld: %s", (long long)p->active, strerror(errno));
    *seg = p->active;
    *pos = p->wpos;
    p->wpos += (int64_t)len;
    return 0;
}

/* ---- the transaction around them ---- */

int stor_seg_before_commit(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->enabled) return 0;
    if (seg_retire_rows(s)) return -1;
    if (g->sync == STOR_SYNC_NORMAL) return stor_seg_sync_marks(s);
    if (g->sync != STOR_SYNC_FULL) return 0;
    for (size_t i = 0; i < g->ndirty; i++) {
        struct stor_seg_part *p = part_get(s, g->dirty[i].topic_id, g->dirty[i].partition);
        if (!p || !p->active) continue;
        int fd = seg_fd(s, p->topic_id, p->partition, p->active);
        if (fd < 0) return -1;
        if (fdatasync(fd) != 0) return stor_failf(s, "fdatasync segment: %s", strerror(errno));
        if (seg_exec(s, "mark segment synced",
                     "UPDATE segments SET synced = %lld WHERE topic_id = %lld AND partition = %d AND id = %lld",
                     (long long)p->wpos, (long long)p->topic_id, p->partition, (long long)p->active))
            return -1;
    }
    return 0;
}

static void forget_gone_topics(stor *s) {
    stor_segs *g = &s->segs;
    for (size_t i = 0; i < g->ngone; i++) {
        int64_t tid = g->gone_topics[i];
        seg_forget(g, tid, -1, 0);
        /* its rows went with the commit (ON DELETE CASCADE): its files go now */
        DIR *d = opendir(g->dir);
        if (!d) continue;
        char prefix[32];
        int plen = snprintf(prefix, sizeof prefix, "%lld-", (long long)tid);
        struct dirent *e;
        while ((e = readdir(d))) {
            if (strncmp(e->d_name, prefix, (size_t)plen) != 0) continue;
            char dir[sizeof g->dir + 300];
            snprintf(dir, sizeof dir, "%s/%s", g->dir, e->d_name);
            seg_remove_dir(dir);
        }
        closedir(d);
    }
    /* done: a start after this has nothing of theirs to delete (an error leaves that start to delete them again) */
    if (g->ngone) sqlite3_exec(s->db, clear_deletions, NULL, NULL, NULL);
    if (g->ngone) parts_reset(g); /* the topic's partition states; the others reload on use */
    g->ngone = 0;
}

void stor_seg_after_commit(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->enabled) return;
    for (size_t i = 0; i < g->ndirty; i++) {
        struct stor_seg_part *p = part_get(s, g->dirty[i].topic_id, g->dirty[i].partition);
        if (p) p->dirty = false;
    }
    g->ndirty = 0;
    g->nretired = 0; /* their rows went with it */
    stor_seg_sync_committed(s);
    /* their successors are committed: the closed segments' bytes are final */
    for (size_t i = 0; i < g->nsealed; i++)
        stor_seg_sync_later(s, g->sealed[i].topic_id, g->sealed[i].partition, g->sealed[i].id, g->sealed[i].pos);
    g->nsealed = 0;
    forget_gone_topics(s);
    stor_seg_collect(s);
}

void stor_seg_after_rollback(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->enabled) return;
    g->ngone = 0;
    g->nsealed = 0; /* the segments it closed are open again (their successors went with it) */
    g->maybe_dead = false;
    /* the lost transaction may have been the one that named the directory in settings */
    char name[256];
    if (stor_setting_get(s, SEG_SETTING, name, sizeof name) == 0) g->name_unsaved = true;
    /* what the lost transaction wrote: segments it created, appends past the newest committed row */
    for (size_t i = 0; i < g->ndirty; i++) {
        int64_t tid = g->dirty[i].topic_id;
        int32_t part = g->dirty[i].partition;
        struct stor_seg_part now = {.topic_id = tid, .partition = part};
        if (part_load(s, &now)) continue;
        char path[sizeof g->dir + 64];
        DIR *d;
        seg_path(g, tid, part, 0, path, sizeof path);
        if ((d = opendir(path))) {
            struct dirent *e;
            while ((e = readdir(d))) {
                char *end = NULL;
                long long id = strtoll(e->d_name, &end, 10);
                if (!end || strcmp(end, ".log") != 0 || id <= now.active) continue;
                seg_forget(g, tid, part, id);
                char f[sizeof path + 300];
                snprintf(f, sizeof f, "%s/%s", path, e->d_name);
                unlink(f);
            }
            closedir(d);
        }
        if (now.active) {
            seg_path(g, tid, part, now.active, path, sizeof path);
            if (truncate(path, (off_t)now.wpos) != 0 && errno != ENOENT) {
                /* leave the bytes: the next append writes past them in a new segment */
            }
        }
    }
    parts_reset(g);
}

int stor_seg_topic_deleted(stor *s, int64_t topic_id) {
    stor_segs *g = &s->segs;
    if (!g->enabled) return 0;
    /* with the deletion's commit: a kill before its files go leaves them to the next start to delete, not keep */
    if (seg_exec(s, "record topic deletion", "INSERT OR IGNORE INTO settings (key, value) VALUES ('%s%lld', '')",
                 SEG_DELETING_SETTING, (long long)topic_id))
        return -1;
    XGROW(g->gone_topics, g->capgone, g->ngone + 1, 8);
    g->gone_topics[g->ngone++] = topic_id;
    return 0;
}

int stor_seg_topic_id(stor *s, int64_t *id) {
    stor_segs *g = &s->segs;
    *id = 0; /* 0: SQLite's next rowid */
    if (!g->enabled) return 0;
    sqlite3_stmt *st = NULL;
    int64_t max = -1;
    if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(id), 0) FROM topics", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW)
        max = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    if (max < 0) return stor_fail(s, "next topic id");
    /* an id whose directory exists (an orphan a salvage left, a deletion not finished) is never reused */
    int64_t on_disk = stor_seg_dir_max_topic(s);
    *id = (on_disk > max ? on_disk : max) + 1;
    /* a deletion of this id recorded and not cleared (the files went; the clearing failed) is over */
    return seg_exec(s, "next topic id", "DELETE FROM settings WHERE key = '%s%lld'", SEG_DELETING_SETTING,
                    (long long)*id);
}

void stor_seg_maybe_dead(stor *s) { s->segs.maybe_dead = true; }

void stor_set_unlinker(stor *s, stor_unlink_fn fn, void *ctx) {
    s->segs.unlink_fn = fn;
    s->segs.unlink_ctx = ctx;
}

static bool seg_retired(const stor_segs *g, int64_t topic_id, int32_t partition, int64_t id) {
    for (size_t i = 0; i < g->nretired; i++)
        if (g->retired[i].id == id && g->retired[i].topic_id == topic_id && g->retired[i].partition == partition)
            return true;
    return false;
}

/*
 * The rows of segments whose files stor_seg_collect removed, deleted in the open transaction
 * (before its commit). They used to go right after their files, one autocommit DELETE each: a
 * compaction's swap kills every old segment of its partition at once, and those commits held
 * the loop up to 2 ms after the swap's own. A row left until then (or by a kill) names a
 * segment with no batch and no file: stor_recover skips it and the next sweep deletes it.
 */
static int seg_retire_rows(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->nretired) return 0;
    if (!g->retire_st && sqlite3_prepare_v3(s->db, "DELETE FROM segments WHERE topic_id = ?1 AND partition = ?2"
                                            " AND id = ?3 AND live <= 0", -1, SQLITE_PREPARE_PERSISTENT,
                                            &g->retire_st, NULL) != SQLITE_OK)
        return stor_fail(s, "prepare drop segment");
    for (size_t i = 0; i < g->nretired; i++) {
        sqlite3_stmt *st = g->retire_st;
        sqlite3_bind_int64(st, 1, g->retired[i].topic_id);
        sqlite3_bind_int(st, 2, g->retired[i].partition);
        sqlite3_bind_int64(st, 3, g->retired[i].id);
        int rc = sqlite3_step(st);
        sqlite3_reset(st);
        if (rc != SQLITE_DONE) return stor_fail(s, "drop segment");
    }
    return 0;
}

void stor_seg_collect(stor *s) {
    stor_segs *g = &s->segs;
    if (!g->enabled || s->in_txn || !g->maybe_dead) return;
    g->maybe_dead = false;
    /*
     * segments with no row left that are not their partition's newest (the partial index finds
     * them); live counts the rows below bytes_end only (migration 22), so one the rows past it
     * still name (a segment filled since the last producer snapshot) is not dead
     */
    struct stor_seg_dead dead[128];
    int n = 0;
    if (g->dead_st || sqlite3_prepare_v3(s->db,
                           "SELECT topic_id, partition, id FROM segments d WHERE live <= 0 AND id <"
                           " (SELECT max(id) FROM segments n WHERE n.topic_id = d.topic_id AND n.partition = d.partition)"
                           " AND NOT EXISTS (SELECT 1 " STOR_SEG_UNFOLDED("d") ")"
                           " LIMIT 128", -1, SQLITE_PREPARE_PERSISTENT, &g->dead_st, NULL) == SQLITE_OK) {
        while (n < 128 && sqlite3_step(g->dead_st) == SQLITE_ROW) {
            dead[n].topic_id = sqlite3_column_int64(g->dead_st, 0);
            dead[n].partition = sqlite3_column_int(g->dead_st, 1);
            dead[n].id = sqlite3_column_int64(g->dead_st, 2);
            n++;
        }
        sqlite3_reset(g->dead_st);
    }
    /* the file first: a row left behind by a crash here is swept at the next start */
    for (int i = 0; i < n; i++) {
        if (seg_retired(g, dead[i].topic_id, dead[i].partition, dead[i].id)) continue; /* a rollback kept its row */
        seg_forget(g, dead[i].topic_id, dead[i].partition, dead[i].id);
        char path[sizeof g->dir + 64];
        seg_path(g, dead[i].topic_id, dead[i].partition, dead[i].id, path, sizeof path);
        char gone[sizeof path + 16];
        snprintf(gone, sizeof gone, "%s.deleted", path);
        if (g->unlink_fn && rename(path, gone) == 0) g->unlink_fn(g->unlink_ctx, gone);
        else unlink(path);
        XGROW(g->retired, g->capretired, g->nretired + 1, 8);
        g->retired[g->nretired++] = dead[i];
    }
    if (n == 128) g->maybe_dead = true; /* more at the next commit */
}

void stor_seg_set_bytes(stor *s, int64_t bytes) {
    if (bytes > 0) s->segs.bytes = bytes;
}

int64_t stor_seg_recovery(stor *s, int64_t *verified_bytes) {
    if (verified_bytes) *verified_bytes = s->segs.verified_bytes;
    return s->segs.dropped_rows;
}

int64_t stor_seg_bytes(stor *s, int64_t *count) {
    sqlite3_stmt *st = NULL;
    int64_t bytes = -1;
    *count = 0;
    /* used and the rows past bytes_end it does not count yet (migration 22): a scrape, not a hot path */
    if (sqlite3_prepare_v2(s->db, "SELECT coalesce(sum(" STOR_SEG_USED("d") "), 0), count(*) FROM segments d", -1, &st,
                           NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        bytes = sqlite3_column_int64(st, 0);
        *count = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return bytes;
}
