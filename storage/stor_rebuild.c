/*
 * The index rebuilt from the segment files, inside a salvage (stor_salvage.c): the record bytes
 * are the truth and the database is an index over them, so rows a damaged database lost are
 * derived again from what the segments hold (stor_scan.c).
 *
 * First the topics: every topic id that a partition directory or a copied row names but whose
 * topics row is gone gets one again, named from the damaged database's index on topic names
 * when that is still readable (SQLite keeps it on pages of its own, with the id), else
 * recovered-topic-<id>; with a new uuid and as many partitions as its highest partition
 * (directory or row) + 1. Its copied configs stay; lost ones are the defaults, and the report
 * says so. Then the partitions whose rows cannot be trusted (all of them when the batches or
 * segments table was damaged or lost, or a copied batch was unsound; else those with no
 * segments row) are rebuilt: their batch and segment rows from the scan, the log start moved up
 * to the first batch kept, and the transaction index (open transactions, aborted ones) replayed
 * from the transactional batches and markers, as Kafka's ProducerStateManager does on recovery.
 * Idempotent producer state needs no table: the broker derives it at start from the batch rows'
 * producer fields. Not rebuilt: the cleaner's checkpoint (partition_cleaned: a rebuilt partition
 * is cleaned again from its start), leader moves, and what lives only in the database (committed
 * offsets, groups, transaction coordinator state, ACL-like settings): those are copied when
 * readable and lost otherwise.
 *
 * The bytes of a segment from its first damaged batch on (damage, a torn tail) are copied to
 * DATA/orphaned/salvage-<time>-<pid>/ before anything else: the first start on the new database truncates each segment to the
 * end of its last row, and those bytes may be all that is left of records a person can still read.
 */
#include "stor_int.h"

#include "kp_batch.h"
#include "kp_mem.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct rb_part {
    int64_t topic_id;
    int32_t partition;
} rb_part;

typedef struct rebuild {
    sqlite3 *fresh, *old;
    const char *seg_dir;
    char orphan_dir[700];
    bool all, configs_damaged;
    stor_salvage_report fn;
    void *ctx;
    rb_part *parts; /* partition directories */
    size_t nparts;
    long long rebuilt;
    char *err;
    size_t errlen;
} rebuild;

static void say(rebuild *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(rebuild *r, const char *fmt, ...) {
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (r->fn) r->fn(r->ctx, line);
}

/* One SQL statement with integer arguments bound in order (?1, ?2, ...); 0 or -1 with err. */
static int exec_ints(rebuild *r, const char *sql, int n, const int64_t *v) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(r->fresh, sql, -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) rc = sqlite3_bind_int64(st, i + 1, v[i]);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc == SQLITE_DONE || rc == SQLITE_ROW) return 0;
    stor_errf(r->err, r->errlen, "rebuilding the index: %.80s: %s", sql, sqlite3_errmsg(r->fresh));
    return -1;
}

/* The first column of the first row of sql with integer arguments, or dflt. */
static int64_t query_int(sqlite3 *db, const char *sql, int n, const int64_t *v, int64_t dflt) {
    sqlite3_stmt *st = NULL;
    int64_t out = dflt;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    for (int i = 0; rc == SQLITE_OK && i < n; i++) rc = sqlite3_bind_int64(st, i + 1, v[i]);
    if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
        out = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return out;
}

/* The partition directories (<topic id>-<partition>) of the segment directory, but a deleted topic's. */
static void list_parts(rebuild *r) {
    DIR *d = opendir(r->seg_dir);
    if (!d) return;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        long long tid;
        int part, len = 0;
        if (sscanf(e->d_name, "%lld-%d%n", &tid, &part, &len) != 2 || e->d_name[len] || tid <= 0 || part < 0) continue;
        /* a DeleteTopics whose files a kill interrupted: deleted, not lost (stor_segments.c) */
        char key[64];
        snprintf(key, sizeof key, "segments.deleting.%lld", tid);
        sqlite3_stmt *st = NULL;
        bool deleting = sqlite3_prepare_v2(r->fresh, "SELECT 1 FROM settings WHERE key = ?", -1, &st, NULL) == SQLITE_OK &&
                        sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW;
        sqlite3_finalize(st);
        if (deleting) continue;
        XGROW(r->parts, cap, r->nparts + 1, 16);
        r->parts[r->nparts++] = (rb_part){tid, part};
    }
    closedir(d);
}

/* The name the damaged database's index on topics.name still holds for id, into out ("" when none). */
static void old_name(rebuild *r, int64_t id, char *out, size_t n) {
    out[0] = 0;
    static const char *const tries[] = {
        "SELECT name FROM topics INDEXED BY sqlite_autoindex_topics_1 WHERE name >= '' AND id = ?",
        "SELECT name FROM topics WHERE id = ?",
    };
    for (size_t i = 0; i < 2 && !out[0] && r->old; i++) {
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->old, tries[i], -1, &st, NULL) == SQLITE_OK && sqlite3_bind_int64(st, 1, id) == SQLITE_OK &&
            sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
            snprintf(out, n, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
    }
    /* a legal Kafka topic name only ([a-zA-Z0-9._-], at most 249): the page may be half damaged */
    size_t len = strlen(out);
    bool ok = len > 0 && len <= 249;
    for (size_t i = 0; ok && i < len; i++)
        ok = (out[i] >= 'a' && out[i] <= 'z') || (out[i] >= 'A' && out[i] <= 'Z') || (out[i] >= '0' && out[i] <= '9') ||
             out[i] == '.' || out[i] == '_' || out[i] == '-';
    if (!ok) out[0] = 0;
}

static const char topic_ids[] =
    "SELECT topic_id FROM partitions UNION SELECT topic_id FROM batches UNION SELECT topic_id FROM segments"
    " UNION SELECT topic_id FROM topic_configs EXCEPT SELECT id FROM topics";

/* A topics row for topic id, whose own was lost. */
static int recover_topic(rebuild *r, int64_t id) {
    int32_t nparts = 0;
    for (size_t i = 0; i < r->nparts; i++)
        if (r->parts[i].topic_id == id && r->parts[i].partition + 1 > nparts) nparts = r->parts[i].partition + 1;
    int64_t rows = query_int(r->fresh,
                             "SELECT max(partition) + 1 FROM (SELECT partition FROM partitions WHERE topic_id = ?1"
                             " UNION ALL SELECT partition FROM batches WHERE topic_id = ?1"
                             " UNION ALL SELECT partition FROM segments WHERE topic_id = ?1)", 1, &id, 0);
    if (rows > nparts) nparts = (int32_t)rows;
    char name[256], from_index[256];
    old_name(r, id, from_index, sizeof from_index);
    /* a name another topic has now gets the id appended (the INSERT below), as does a taken placeholder */
    if (from_index[0]) snprintf(name, sizeof name, "%s", from_index);
    else snprintf(name, sizeof name, "recovered-topic-%lld", (long long)id);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(r->fresh, "INSERT INTO topics (id, name, uuid, partitions, created_ms)"
                                          " VALUES (?1, ?2 || CASE WHEN EXISTS (SELECT 1 FROM topics WHERE name = ?2)"
                                          " THEN '-' || ?1 ELSE '' END, randomblob(16), ?3,"
                                          " CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER))",
                                -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int64(st, 1, id);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 2, name, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_bind_int(st, 3, nparts);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) {
        stor_errf(r->err, r->errlen, "recreating topic %lld: %s", (long long)id, sqlite3_errmsg(r->fresh));
        return -1;
    }
    int64_t configs = query_int(r->fresh, "SELECT count(*) FROM topic_configs WHERE topic_id = ?", 1, &id, 0);
    char policy[64] = "";
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(r->fresh, "SELECT value FROM topic_configs WHERE topic_id = ? AND key = 'cleanup.policy'", -1,
                           &q, NULL) == SQLITE_OK &&
        sqlite3_bind_int64(q, 1, id) == SQLITE_OK && sqlite3_step(q) == SQLITE_ROW)
        snprintf(policy, sizeof policy, ", cleanup.policy=%s", (const char *)sqlite3_column_text(q, 0));
    sqlite3_finalize(q);
    say(r, "salvage: topic id %lld: its topics row was lost; recreated as '%s' (%s), %d partitions, a new topic uuid; "
           "%lld config overrides copied%s%s",
        (long long)id, name, from_index[0] ? "its name read from the index on topic names" : "a placeholder name",
        nparts, (long long)configs, policy,
        r->configs_damaged ? "; topic_configs was damaged: overrides it lost (cleanup.policy, retention.ms, ...) "
                             "are the defaults now, set them again"
                           : "");
    for (int32_t p = 0; p < nparts; p++) {
        int64_t v[2] = {id, p};
        if (exec_ints(r, "INSERT OR IGNORE INTO partitions (topic_id, partition, log_start, bytes) VALUES (?1, ?2, 0, 0)",
                      2, v))
            return -1;
    }
    return 0;
}

static int recover_topics(rebuild *r) {
    /* a directory with no row at all names a topic too */
    for (size_t i = 0; i < r->nparts; i++) {
        int64_t v[2] = {r->parts[i].topic_id, r->parts[i].partition};
        if (!query_int(r->fresh, "SELECT 1 FROM topics WHERE id = ?1", 1, v, 0) &&
            exec_ints(r, "INSERT OR IGNORE INTO partitions (topic_id, partition, log_start, bytes) VALUES (?1, ?2, 0, 0)",
                      2, v))
            return -1;
    }
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->fresh, topic_ids, -1, &st, NULL) != SQLITE_OK) {
        stor_errf(r->err, r->errlen, "listing lost topics: %s", sqlite3_errmsg(r->fresh));
        return -1;
    }
    while (sqlite3_step(st) == SQLITE_ROW) {
        XGROW(ids, cap, n + 1, 16);
        ids[n++] = sqlite3_column_int64(st, 0);
    }
    sqlite3_finalize(st);
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < n; i++) rc = recover_topic(r, ids[i]);
    free(ids);
    return rc;
}

/* ---- one partition ---- */

typedef struct limits {
    int64_t *id, *used;
    size_t n;
} limits;

static int64_t limit_of(void *ctx, int64_t id) {
    limits *l = ctx;
    for (size_t i = 0; i < l->n; i++)
        if (l->id[i] == id) return l->used[i];
    return -1;
}

/*
 * What the database still says each segment's committed end is: segments.used, raised by the
 * copied rows past the partition's bytes_end that it does not count (migration 22); with no
 * readable batches or partitions table, segments.used alone.
 */
static void read_limits(rebuild *r, const rb_part *p, limits *l) {
    sqlite3_stmt *st = NULL;
    size_t cap = 0;
    if (sqlite3_prepare_v2(r->fresh, "SELECT d.id, " STOR_SEG_USED("d") " FROM segments d WHERE d.topic_id = ?1"
                           " AND d.partition = ?2", -1, &st, NULL) != SQLITE_OK &&
        sqlite3_prepare_v2(r->fresh, "SELECT id, used FROM segments WHERE topic_id = ?1 AND partition = ?2", -1, &st,
                           NULL) != SQLITE_OK)
        return;
    sqlite3_bind_int64(st, 1, p->topic_id);
    sqlite3_bind_int(st, 2, p->partition);
    while (sqlite3_step(st) == SQLITE_ROW) {
        if (l->n == cap) {
            cap = cap ? cap * 2 : 8;
            l->id = xrealloc(l->id, cap * sizeof *l->id);
            l->used = xrealloc(l->used, cap * sizeof *l->used);
        }
        l->id[l->n] = sqlite3_column_int64(st, 0);
        l->used[l->n++] = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
}

/* mkdir -p of path's directories (path itself excluded). */
static int mkdirs_for(char *path) {
    for (char *s = strchr(path + 1, '/'); s; s = strchr(s + 1, '/')) {
        *s = 0;
        int rc = mkdir(path, 0755);
        int e = errno;
        *s = '/';
        if (rc != 0 && e != EEXIST) return -1;
    }
    return 0;
}

/* The bytes of segment g dropped by the scan, copied aside (the start will cut them off the segment). */
static int keep_dropped(rebuild *r, const rb_part *p, const stor_scan_seg *g, char *to, size_t n) {
    char from[1200];
    snprintf(from, sizeof from, "%s/%lld-%d/%020lld.log", r->seg_dir, (long long)p->topic_id, p->partition,
             (long long)g->id);
    snprintf(to, n, "%s/%lld-%d/%020lld.log.from-%lld", r->orphan_dir, (long long)p->topic_id, p->partition,
             (long long)g->id, (long long)g->bad_from);
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0 || mkdirs_for(to) != 0) {
        if (in >= 0) close(in);
        stor_errf(r->err, r->errlen, "copying the dropped bytes of %s aside to %s: %s", from, to, strerror(errno));
        return -1;
    }
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    int rc = out < 0 ? -1 : 0;
    char buf[65536];
    /* from the first damaged byte to where the scan stopped: good batches in between are copied too */
    int64_t at = g->bad_from, end = g->end;
    while (rc == 0 && at < end) {
        size_t want = (size_t)(end - at) < sizeof buf ? (size_t)(end - at) : sizeof buf;
        ssize_t got = pread(in, buf, want, at);
        if (got <= 0 || write(out, buf, (size_t)got) != got) rc = -1;
        at += got > 0 ? got : 0;
    }
    if (rc == 0 && fsync(out) != 0) rc = -1;
    if (rc != 0)
        stor_errf(r->err, r->errlen, "copying the dropped bytes of %s aside to %s: %s", from, to, strerror(errno));
    close(in);
    if (out >= 0) close(out);
    return rc;
}

/* The rows of a scanned batch. */
static int insert_batch(rebuild *r, sqlite3_stmt *ins, const rb_part *p, const stor_scan_batch *b) {
    int64_t v[] = {p->topic_id, p->partition, b->base_offset, b->last_offset, b->max_timestamp, b->producer_id,
                   b->producer_epoch, b->base_sequence, b->last_sequence, b->records_count, b->size, b->seg, b->pos};
    int rc = SQLITE_OK;
    for (int i = 0; rc == SQLITE_OK && i < (int)(sizeof v / sizeof *v); i++) rc = sqlite3_bind_int64(ins, i + 1, v[i]);
    /* as stor_batch_append stores it: what opens a transaction when the producer state is folded */
    bool txn = (b->attributes & KP_ATTR_TRANSACTIONAL) && !(b->attributes & KP_ATTR_CONTROL) && b->marker < 0 &&
               b->producer_id >= 0 && b->base_sequence >= 0;
    if (rc == SQLITE_OK) rc = txn ? sqlite3_bind_int(ins, 14, 1) : sqlite3_bind_null(ins, 14);
    if (rc == SQLITE_OK) rc = sqlite3_step(ins);
    sqlite3_reset(ins);
    if (rc == SQLITE_DONE) return 0;
    stor_errf(r->err, r->errlen, "rebuilding the batch rows: %s", sqlite3_errmsg(r->fresh));
    return -1;
}

typedef struct open_txn {
    int64_t producer_id, first_offset;
} open_txn;

/*
 * The aborted-transaction index replayed in offset order: a producer's first transactional batch
 * opens its transaction, its marker closes it, and an ABORT marker adds an aborted entry whose
 * lso is where the next undecided transaction of another producer starts (broker/topic/txn_log.c).
 * The ones left open need no row: the batch rows' txn column and the producer snapshot, dropped
 * below, give them to the next load (stor_producers.c).
 */
static int replay_txns(rebuild *r, const rb_part *p, const stor_scan *sc) {
    open_txn *open = NULL;
    size_t n = 0, cap = 0;
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sc->n; i++) {
        const stor_scan_batch *b = &sc->b[i];
        if (!(b->attributes & KP_ATTR_TRANSACTIONAL) || b->producer_id < 0) continue;
        size_t k = 0;
        while (k < n && open[k].producer_id != b->producer_id) k++;
        if (b->marker < 0) {
            if ((b->attributes & KP_ATTR_CONTROL) || k < n) continue;
            XGROW(open, cap, n + 1, 4);
            open[n++] = (open_txn){b->producer_id, b->base_offset};
            continue;
        }
        if (k == n) continue; /* a marker of a transaction with nothing here */
        if (b->marker == 0) {
            int64_t lso = -1;
            for (size_t j = 0; j < n; j++)
                if (j != k && (lso < 0 || open[j].first_offset < lso)) lso = open[j].first_offset;
            int64_t v[] = {p->topic_id, p->partition, b->base_offset, b->producer_id, open[k].first_offset,
                           lso < 0 ? b->base_offset + 1 : lso};
            rc = exec_ints(r, "INSERT OR REPLACE INTO txn_aborted (topic_id, partition, last_offset, producer_id,"
                              " first_offset, lso) VALUES (?1, ?2, ?3, ?4, ?5, ?6)", 6, v);
        }
        open[k] = open[--n];
    }
    free(open);
    return rc;
}

/* The segment files are read back from now on: their bytes must be on disk before synced says so. */
static void sync_segments(rebuild *r, const rb_part *p, const stor_scan *sc) {
    for (size_t i = 0; i < sc->nsegs; i++) {
        char path[1200];
        snprintf(path, sizeof path, "%s/%lld-%d/%020lld.log", r->seg_dir, (long long)p->topic_id, p->partition,
                 (long long)sc->segs[i].id);
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        bool synced = fd >= 0 && fdatasync(fd) == 0;
        if (fd >= 0) close(fd);
        int64_t v[] = {p->topic_id, p->partition, sc->segs[i].id};
        if (synced)
            exec_ints(r, "UPDATE segments SET synced = used WHERE topic_id = ?1 AND partition = ?2 AND id = ?3", 3, v);
    }
}

static const char *const clear_part[] = {
    "DELETE FROM batches WHERE topic_id = ?1 AND partition = ?2 AND seg IS NOT NULL",
    /* every row counted by its readers until the next producer snapshot folds them (migration 21) */
    "UPDATE partitions SET bytes = 0, bytes_end = 0 WHERE topic_id = ?1 AND partition = ?2",
    "DELETE FROM segments WHERE topic_id = ?1 AND partition = ?2",
    "DELETE FROM txn_aborted WHERE topic_id = ?1 AND partition = ?2",
    "DELETE FROM partition_cleaned WHERE topic_id = ?1 AND partition = ?2",
    /* derived from the rows put back: the next load folds them (migration 19 trims, not drops) */
    "DELETE FROM producer_snapshot WHERE topic_id = ?1 AND partition = ?2",
    "DELETE FROM producer_snapshot_end WHERE topic_id = ?1 AND partition = ?2",
};

/* One partition's rows, from its segment files; reported. */
static int rebuild_part(rebuild *r, const rb_part *p) {
    char pdir[900];
    snprintf(pdir, sizeof pdir, "%s/%lld-%d", r->seg_dir, (long long)p->topic_id, p->partition);
    int64_t key[2] = {p->topic_id, p->partition};
    int64_t log_start = query_int(r->fresh, "SELECT log_start FROM partitions WHERE topic_id = ?1 AND partition = ?2",
                                  2, key, 0);
    limits l = {0};
    read_limits(r, p, &l);
    stor_scan sc;
    int rc = stor_scan_partition(pdir, log_start, limit_of, &l, &sc, r->err, r->errlen);
    free(l.id);
    free(l.used);
    if (rc) return -1;
    char dropped[700] = "";
    size_t dn = 0;
    for (size_t i = 0; rc == 0 && i < sc.nsegs; i++) {
        const stor_scan_seg *g = &sc.segs[i];
        if (!g->why[0]) continue;
        char to[1200] = "";
        if (g->dropped > 0) rc = keep_dropped(r, p, g, to, sizeof to);
        dn += (size_t)snprintf(dropped + dn, dn < sizeof dropped ? sizeof dropped - dn : 0, "; segment %lld %s: %lld "
                               "bytes dropped%s%s", (long long)g->id, g->why, (long long)g->dropped,
                               to[0] ? ", copied to " : "", to);
    }
    for (size_t i = 0; rc == 0 && i < sizeof clear_part / sizeof *clear_part; i++) rc = exec_ints(r, clear_part[i], 2, key);
    for (size_t i = 0; rc == 0 && i < sc.nsegs; i++) {
        /* used starts at the end of the sound bytes: dead copies past the newest row are not cut off */
        int64_t v[] = {p->topic_id, p->partition, sc.segs[i].id, sc.segs[i].valid};
        rc = exec_ints(r, "INSERT INTO segments (topic_id, partition, id, used) VALUES (?1, ?2, ?3, ?4)", 4, v);
    }
    sqlite3_stmt *ins = NULL;
    if (rc == 0 && sqlite3_prepare_v2(r->fresh, "INSERT OR IGNORE INTO batches (topic_id, partition, base_offset,"
                                                " last_offset, max_timestamp, producer_id, producer_epoch, base_sequence,"
                                                " last_sequence, records_count, size, seg, pos, txn, data)"
                                                " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, x'')",
                                      -1, &ins, NULL) != SQLITE_OK) {
        stor_errf(r->err, r->errlen, "rebuilding the batch rows: %s", sqlite3_errmsg(r->fresh));
        rc = -1;
    }
    for (size_t i = 0; rc == 0 && i < sc.n; i++) rc = insert_batch(r, ins, p, &sc.b[i]);
    sqlite3_finalize(ins);
    if (rc == 0 && sc.n && log_start < sc.b[0].base_offset) {
        int64_t v[] = {p->topic_id, p->partition, sc.b[0].base_offset};
        rc = exec_ints(r, "UPDATE partitions SET log_start = ?3 WHERE topic_id = ?1 AND partition = ?2", 3, v);
    }
    if (rc == 0) rc = replay_txns(r, p, &sc);
    if (rc == 0) sync_segments(r, p, &sc);
    if (rc == 0) {
        char name[256] = "?";
        sqlite3_stmt *st = NULL;
        if (sqlite3_prepare_v2(r->fresh, "SELECT name FROM topics WHERE id = ?", -1, &st, NULL) == SQLITE_OK &&
            sqlite3_bind_int64(st, 1, p->topic_id) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
            snprintf(name, sizeof name, "%s", (const char *)sqlite3_column_text(st, 0));
        sqlite3_finalize(st);
        say(r, "salvage: rebuilt topic '%s' (id %lld) partition %d from %zu segment files: %zu batches, %lld records "
               "kept, offsets %lld..%lld; %lld bytes dropped%s; %lld superseded copies (the cleaner's rewrites) and "
               "%lld batches before the log start %lld left out",
            name, (long long)p->topic_id, p->partition, sc.nsegs, sc.n, (long long)sc.records,
            (long long)(sc.n ? sc.b[0].base_offset : log_start), (long long)(sc.n ? sc.b[sc.n - 1].last_offset : -1),
            (long long)sc.dropped_bytes, dropped, (long long)sc.superseded, (long long)sc.below_start,
            (long long)log_start);
        r->rebuilt++;
    }
    stor_scan_free(&sc);
    return rc;
}

static bool needs_rebuild(rebuild *r, const rb_part *p) {
    if (r->all) return true;
    int64_t v[2] = {p->topic_id, p->partition};
    return !query_int(r->fresh, "SELECT 1 FROM segments WHERE topic_id = ?1 AND partition = ?2", 2, v, 0);
}

/* Committed offsets name their topics: names no topic has now may be those recreated under a placeholder. */
static void report_unmatched_names(rebuild *r) {
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(r->fresh, "SELECT DISTINCT topic FROM offsets WHERE topic NOT IN (SELECT name FROM topics)"
                                     " ORDER BY topic LIMIT 20", -1, &st, NULL) != SQLITE_OK)
        return;
    char names[600] = "";
    size_t n = 0;
    while (sqlite3_step(st) == SQLITE_ROW)
        n += (size_t)snprintf(names + n, n < sizeof names ? sizeof names - n : 0, "%s'%s'", n ? ", " : "",
                              (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    if (names[0])
        say(r, "salvage: committed offsets name topics no topic has now: %s (a topic recreated under a placeholder "
               "name may have been one of them)", names);
}

int stor_rebuild_index(sqlite3 *fresh, sqlite3 *old, const char *seg_dir, bool all, bool configs_damaged,
                       stor_salvage_report fn, void *ctx, long long *rebuilt, char *err, size_t errlen) {
    rebuild r = {.fresh = fresh, .old = old, .seg_dir = seg_dir, .all = all, .configs_damaged = configs_damaged,
                 .fn = fn, .ctx = ctx, .err = err, .errlen = errlen};
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s", seg_dir);
    snprintf(r.orphan_dir, sizeof r.orphan_dir, "%s/orphaned/salvage-%lld-%d/%s", dirname(tmp), (long long)time(NULL),
             (int)getpid(), strrchr(seg_dir, '/') ? strrchr(seg_dir, '/') + 1 : seg_dir);
    list_parts(&r);
    int rc = recover_topics(&r);
    for (size_t i = 0; rc == 0 && i < r.nparts; i++)
        if (needs_rebuild(&r, &r.parts[i])) rc = rebuild_part(&r, &r.parts[i]);
    if (rc == 0) report_unmatched_names(&r);
    /* the segment directory is this database's own (stor_segments.c keeps its name in settings) */
    if (rc == 0 && r.nparts) {
        sqlite3_stmt *st = NULL;
        const char *name = strrchr(seg_dir, '/') ? strrchr(seg_dir, '/') + 1 : seg_dir;
        if (sqlite3_prepare_v2(fresh, "INSERT OR IGNORE INTO settings (key, value) VALUES ('segments.dir', ?)", -1, &st,
                               NULL) == SQLITE_OK &&
            sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC) == SQLITE_OK)
            sqlite3_step(st);
        sqlite3_finalize(st);
    }
    free(r.parts);
    *rebuilt = r.rebuilt;
    return rc;
}
