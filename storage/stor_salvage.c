/*
 * Salvage: copy what is readable of a damaged database into a new one (mskmock --salvage).
 *
 * Debian 12's sqlite3 shell cannot do this: its .recover fails on every database ("SQL logic
 * error"), and .dump ends a damaged dump with ROLLBACK and drops user_version. So the copy is
 * ours, table by table. A table with rowids (batches, topics, members) is listed by rowid,
 * forward and then from the end past damaged tree pages, and each row is copied on its own,
 * so a row whose own pages are damaged is the only one lost. A table without rowids is read
 * the way the shell's .dump reaches past damage: in key order until a read fails, then in
 * reverse key order until a read fails or the rows already copied are reached. The report
 * says per table how many rows were copied and what could not be read.
 *
 * The new database is made by stor_open, so it has this binary's schema; columns are copied
 * by name. Then the index is rebuilt from the segment files where the copy lost it
 * (stor_rebuild.c): a topic whose row was lost gets one again, and partitions whose batch or
 * segment rows cannot be trusted are read back from their segments. Then what the lost rows
 * leave inconsistent is repaired: rows whose partition, group or transactional id is gone are
 * dropped, partitions a topic names but lost are recreated, and each partition's byte count is
 * recomputed from the batches that survived.
 * A table that a later migration added is empty in an older database, not lost.
 */
#include "stor_int.h"
#include "kp_batch.h"
#include "kp_mem.h"

#include <fcntl.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_COLS 32

static void report(stor_salvage_report fn, void *ctx, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report(stor_salvage_report fn, void *ctx, const char *fmt, ...) {
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (fn) fn(ctx, line);
}

/* The columns both databases have for table t, as a quoted list; and the key order of old. */
static int columns(sqlite3 *old, sqlite3 *fresh, const char *t, char *cols, size_t ncols, char *order, size_t norder,
                   char *order_desc, size_t ndesc) {
    char sql[256];
    snprintf(sql, sizeof sql, "SELECT name, pk FROM pragma_table_info('%s') ORDER BY pk, cid", t);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(fresh, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    size_t used = 0;
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW && n < MAX_COLS) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        /* only columns the old table has too */
        char probe[300];
        snprintf(probe, sizeof probe, "SELECT 1 FROM pragma_table_info('%s') WHERE name = '%s'", t, name);
        sqlite3_stmt *p = NULL;
        bool has = sqlite3_prepare_v2(old, probe, -1, &p, NULL) == SQLITE_OK && sqlite3_step(p) == SQLITE_ROW;
        sqlite3_finalize(p);
        if (!has) continue;
        used += (size_t)snprintf(cols + used, used < ncols ? ncols - used : 0, "%s\"%s\"", n ? ", " : "", name);
        n++;
    }
    sqlite3_finalize(st);
    /* key order: the primary key columns, else rowid */
    snprintf(sql, sizeof sql, "SELECT name FROM pragma_table_info('%s') WHERE pk > 0 ORDER BY pk", t);
    if (sqlite3_prepare_v2(old, sql, -1, &st, NULL) != SQLITE_OK) return -1;
    size_t uo = 0, ud = 0;
    int k = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *name = (const char *)sqlite3_column_text(st, 0);
        uo += (size_t)snprintf(order + uo, uo < norder ? norder - uo : 0, "%s\"%s\"", k ? ", " : "", name);
        ud += (size_t)snprintf(order_desc + ud, ud < ndesc ? ndesc - ud : 0, "%s\"%s\" DESC", k ? ", " : "", name);
        k++;
    }
    sqlite3_finalize(st);
    if (!k) {
        snprintf(order, norder, "rowid");
        snprintf(order_desc, ndesc, "rowid DESC");
    }
    return n;
}

/* A table without rowid: rows of old.t in the given order until a read fails, or (stop_at_dup) a row is already there. */
static long long copy_rows(sqlite3 *old, sqlite3 *fresh, const char *t, const char *cols, int ncols, const char *order,
                           bool stop_at_dup, bool *failed, char *why, size_t nwhy) {
    char *sel = sqlite3_mprintf("SELECT %s FROM \"%w\" ORDER BY %s", cols, t, order);
    char marks[MAX_COLS * 3] = "";
    for (int i = 0; i < ncols; i++) strcat(marks, i ? ", ?" : "?");
    char *ins = sqlite3_mprintf("INSERT OR IGNORE INTO \"%w\" (%s) VALUES (%s)", t, cols, marks);
    sqlite3_stmt *rd = NULL, *wr = NULL;
    long long n = 0;
    *failed = false;
    if (sqlite3_prepare_v2(old, sel, -1, &rd, NULL) != SQLITE_OK) {
        *failed = true;
        snprintf(why, nwhy, "%s", sqlite3_errmsg(old));
    } else if (sqlite3_prepare_v2(fresh, ins, -1, &wr, NULL) != SQLITE_OK) {
        *failed = true;
        snprintf(why, nwhy, "new database: %s", sqlite3_errmsg(fresh));
    } else {
        int rc;
        while ((rc = sqlite3_step(rd)) == SQLITE_ROW) {
            for (int i = 0; i < ncols; i++) sqlite3_bind_value(wr, i + 1, sqlite3_column_value(rd, i));
            if (sqlite3_step(wr) != SQLITE_DONE) {
                *failed = true;
                snprintf(why, nwhy, "new database: %s", sqlite3_errmsg(fresh));
                break;
            }
            sqlite3_reset(wr);
            if (sqlite3_changes(fresh) == 0 && stop_at_dup) break;
            n += sqlite3_changes(fresh);
        }
        if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
            *failed = true;
            snprintf(why, nwhy, "%s", sqlite3_errmsg(old));
        }
    }
    sqlite3_finalize(rd);
    sqlite3_finalize(wr);
    sqlite3_free(sel);
    sqlite3_free(ins);
    return n;
}

/* The rowids of old.t in the order given, appended to *ids, until a read fails; stops at stop (if > 0). */
static bool collect_rowids(sqlite3 *old, const char *t, const char *order, int64_t after, int64_t **ids, size_t *n,
                           size_t *cap, char *why, size_t nwhy) {
    char *sql = sqlite3_mprintf("SELECT rowid FROM \"%w\" WHERE rowid > %lld ORDER BY %s", t, (long long)after, order);
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(old, sql, -1, &st, NULL);
    sqlite3_free(sql);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        XGROW(*ids, *cap, *n + 1, 1024);
        (*ids)[(*n)++] = sqlite3_column_int64(st, 0);
        rc = SQLITE_OK;
    }
    bool ok = rc == SQLITE_DONE;
    if (!ok) snprintf(why, nwhy, "%s", sqlite3_errmsg(old));
    sqlite3_finalize(st);
    return ok;
}

/*
 * A table with rowids: its rowids first (the b-tree's leaves only), forward and then from the
 * end, then each row on its own, so that a row whose own pages are damaged is the only one
 * lost.
 */
static long long copy_by_rowid(sqlite3 *old, sqlite3 *fresh, const char *t, const char *cols, int ncols,
                               long long *unreadable, bool *tree_damaged, char *why, size_t nwhy) {
    int64_t *ids = NULL;
    size_t n = 0, cap = 0;
    *tree_damaged = !collect_rowids(old, t, "rowid", INT64_MIN, &ids, &n, &cap, why, nwhy);
    if (*tree_damaged) {
        char why2[160];
        collect_rowids(old, t, "rowid DESC", n ? ids[n - 1] : INT64_MIN, &ids, &n, &cap, why2, sizeof why2);
    }
    char *sel = sqlite3_mprintf("SELECT %s FROM \"%w\" WHERE rowid = ?", cols, t);
    char marks[MAX_COLS * 3] = "";
    for (int i = 0; i < ncols; i++) strcat(marks, i ? ", ?" : "?");
    char *ins = sqlite3_mprintf("INSERT OR IGNORE INTO \"%w\" (%s) VALUES (%s)", t, cols, marks);
    sqlite3_stmt *rd = NULL, *wr = NULL;
    long long copied = 0;
    *unreadable = 0;
    if (sqlite3_prepare_v2(old, sel, -1, &rd, NULL) == SQLITE_OK && sqlite3_prepare_v2(fresh, ins, -1, &wr, NULL) == SQLITE_OK) {
        for (size_t i = 0; i < n; i++) {
            sqlite3_bind_int64(rd, 1, ids[i]);
            int rc = sqlite3_step(rd);
            if (rc == SQLITE_ROW) {
                /* a value whose overflow pages are damaged fails here, when it is read */
                for (int c = 0; c < ncols && rc == SQLITE_ROW; c++) {
                    sqlite3_value *v = sqlite3_column_value(rd, c);
                    if (sqlite3_errcode(old) != SQLITE_OK && sqlite3_errcode(old) != SQLITE_ROW) rc = SQLITE_CORRUPT;
                    else sqlite3_bind_value(wr, c + 1, v);
                }
            }
            if (rc == SQLITE_ROW && sqlite3_step(wr) == SQLITE_DONE) copied += sqlite3_changes(fresh);
            else if (rc != SQLITE_ROW) {
                if (!*unreadable && !*tree_damaged) snprintf(why, nwhy, "%s", sqlite3_errmsg(old));
                ++*unreadable;
            }
            sqlite3_reset(rd);
            sqlite3_reset(wr);
        }
    } else {
        snprintf(why, nwhy, "%s", sqlite3_errmsg(rd ? fresh : old));
        *tree_damaged = true;
    }
    sqlite3_finalize(rd);
    sqlite3_finalize(wr);
    sqlite3_free(sel);
    sqlite3_free(ins);
    free(ids);
    return copied;
}

static bool has_rowid(sqlite3 *old, const char *t) {
    char *sql = sqlite3_mprintf("SELECT rowid FROM \"%w\" LIMIT 0", t);
    sqlite3_stmt *st = NULL;
    bool ok = sqlite3_prepare_v2(old, sql, -1, &st, NULL) == SQLITE_OK;
    sqlite3_finalize(st);
    sqlite3_free(sql);
    return ok;
}

/* 1 when old's schema lists table t, 0 when it does not, -1 when the schema cannot be read. */
static int in_old_schema(sqlite3 *old, const char *t) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(old, "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?", -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    sqlite3_finalize(st);
    return rc == SQLITE_ROW ? 1 : rc == SQLITE_DONE ? 0 : -1;
}

/* Where the old database's segment files are (stor_segments.c), or "" when it has none. */
static void segment_dir(sqlite3 *db, const char *db_path, char *out, size_t n) {
    out[0] = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, "SELECT value FROM settings WHERE key = 'segments.dir'", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
        char tmp[512];
        snprintf(tmp, sizeof tmp, "%s", db_path);
        snprintf(out, n, "%s/%s", dirname(tmp), (const char *)sqlite3_column_text(st, 0));
    }
    sqlite3_finalize(st);
}

/* A batch's bytes from its segment; NULL (with *why) when they cannot be read. */
static uint8_t *segment_bytes(const char *dir, int64_t topic_id, int partition, int64_t seg, int64_t pos, size_t len,
                              const char **why) {
    char path[700];
    snprintf(path, sizeof path, "%s/%lld-%d/%020lld.log", dir, (long long)topic_id, partition, (long long)seg);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        *why = "its segment file cannot be opened";
        return NULL;
    }
    uint8_t *buf = malloc(len ? len : 1);
    ssize_t got = buf ? pread(fd, buf, len, (off_t)pos) : -1;
    close(fd);
    if (got != (ssize_t)len) {
        free(buf);
        *why = "its segment file ends before it";
        return NULL;
    }
    return buf;
}

/*
 * A batch row SQLite reads without complaint can still hold garbage: damage to the last
 * overflow page of its data is never noticed, as SQLite does not follow that page's link.
 * Served, such bytes stall a consumer at that offset for good (librdkafka retries the same
 * fetch), so every copied batch must parse as one record batch whose offsets match its
 * row and whose CRC holds; the rest are dropped and counted.
 */
static long long drop_bad_batches(sqlite3 *fresh, const char *seg_dir, char *first, size_t nfirst) {
    sqlite3_stmt *rd = NULL, *del = NULL;
    long long dropped = 0;
    if (sqlite3_prepare_v2(fresh, "SELECT rowid, base_offset, last_offset, data, seg, pos, size, topic_id, partition"
                                  " FROM batches", -1, &rd,
                           NULL) != SQLITE_OK ||
        sqlite3_prepare_v2(fresh, "DELETE FROM batches WHERE rowid = ?", -1, &del, NULL) != SQLITE_OK) {
        sqlite3_finalize(rd);
        return -1;
    }
    while (sqlite3_step(rd) == SQLITE_ROW) {
        const char *why = NULL;
        const uint8_t *data;
        uint8_t *owned = NULL;
        size_t len;
        if (sqlite3_column_type(rd, 4) != SQLITE_NULL) {
            len = (size_t)sqlite3_column_int64(rd, 6);
            data = owned = segment_bytes(seg_dir, sqlite3_column_int64(rd, 7), sqlite3_column_int(rd, 8),
                                         sqlite3_column_int64(rd, 4), sqlite3_column_int64(rd, 5), len, &why);
        } else {
            data = sqlite3_column_blob(rd, 3);
            len = (size_t)sqlite3_column_bytes(rd, 3);
        }
        char unsound[200];
        if (data) why = stor_batch_unsound(data, len, sqlite3_column_int64(rd, 1), sqlite3_column_int64(rd, 2), unsound,
                                           sizeof unsound);
        free(owned);
        if (data && !why) continue;
        if (!dropped)
            snprintf(first, nfirst, "offset %lld: %s", (long long)sqlite3_column_int64(rd, 1), why ? why : "unparsable");
        sqlite3_bind_int64(del, 1, sqlite3_column_int64(rd, 0));
        if (sqlite3_step(del) == SQLITE_DONE) dropped++;
        sqlite3_reset(del);
    }
    sqlite3_finalize(rd);
    sqlite3_finalize(del);
    return dropped;
}

/* Not reported as a repair: it touches every partition row whether or not a count was wrong. */
static const char recount_bytes[] = "UPDATE partitions SET bytes = (SELECT COALESCE(SUM(size), 0) FROM batches b"
                                    " WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition),"
                                    " bytes_end = coalesce((SELECT b.last_offset + 1 FROM batches b"
                                    " WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition"
                                    " ORDER BY b.base_offset DESC LIMIT 1), 0)";
/*
 * Likewise: the rows pointing into each segment file, which the copy's triggers counted against
 * no row, and the end of the newest (recount_bytes puts every row below bytes_end: migration 22).
 */
static const char recount_segments[] = "UPDATE segments SET live = (SELECT count(*) FROM batches b"
                                       " WHERE b.topic_id = segments.topic_id AND b.partition = segments.partition"
                                       " AND b.seg = segments.id),"
                                       " used = max(used, coalesce((SELECT max(b.pos + b.size) FROM batches b"
                                       " WHERE b.topic_id = segments.topic_id AND b.partition = segments.partition"
                                       " AND b.seg = segments.id), 0))";

/*
 * Likewise: the time index made again from the batches that survived (stor_time_index.c), since
 * an entry of batches that were lost or rebuilt could understate them.
 */
static const char time_index_clear[] = "DELETE FROM batch_times";
static const char time_index_build[] = STOR_TIME_INDEX_BUILD;

#define PARTITION_GONE "(topic_id, partition) NOT IN (SELECT topic_id, partition FROM partitions)"
#define TXN_GONE "transactional_id NOT IN (SELECT transactional_id FROM txns)"

/* What lost rows leave behind, made consistent again (see the top of this file). */
static const char *const repairs[] = {
    "DELETE FROM topic_configs WHERE topic_id NOT IN (SELECT id FROM topics)",
    "DELETE FROM partitions WHERE topic_id NOT IN (SELECT id FROM topics)",
    ("WITH RECURSIVE p(topic_id, partition, n) AS ("
     " SELECT id, 0, partitions FROM topics WHERE partitions > 0"
     " UNION ALL SELECT topic_id, partition + 1, n FROM p WHERE partition + 1 < n) "
     "INSERT OR IGNORE INTO partitions (topic_id, partition, log_start, bytes) "
     "SELECT topic_id, partition, COALESCE((SELECT MIN(base_offset) FROM batches b"
     " WHERE b.topic_id = p.topic_id AND b.partition = p.partition), 0), 0 FROM p"),
    "DELETE FROM batches WHERE " PARTITION_GONE,
    "DELETE FROM segments WHERE " PARTITION_GONE,
    recount_bytes,
    recount_segments,
    time_index_clear,
    time_index_build,
    "DELETE FROM group_members WHERE group_id NOT IN (SELECT group_id FROM groups)",
    "DELETE FROM partition_leaders WHERE " PARTITION_GONE,
    "DELETE FROM txn_partitions WHERE " TXN_GONE " OR " PARTITION_GONE,
    /* a database from before migration 16 keeps its partitions in rows of their own */
    STOR_TXN_PARTS_INTO_ROWS,
    "DELETE FROM txn_groups WHERE " TXN_GONE,
    "DELETE FROM txn_offsets WHERE " TXN_GONE,
    "DELETE FROM txn_aborted WHERE " PARTITION_GONE,
    "DELETE FROM partition_cleaned WHERE " PARTITION_GONE,
    "DELETE FROM topic_replication WHERE topic_id NOT IN (SELECT id FROM topics)",
    "DELETE FROM partition_replicas WHERE " PARTITION_GONE,
    /* derived from the batches, some of which the copy may have lost: the next start folds them afresh */
    "DELETE FROM producer_snapshot",
    "DELETE FROM producer_snapshot_end",
};

/* One salvage: the two databases and what the report sums up. */
typedef struct salvage {
    const char *from, *to;
    sqlite3 *old, *fresh;
    int version;        /* the old database's schema version */
    char seg_dir[600];  /* its segment files, or "" */
    stor_salvage_report fn;
    void *ctx;
    long long tables, lost_tables, damaged_tables;
    bool batches_damaged;
    bool index_damaged;   /* batches or segments rows lost or unsound: every partition is rebuilt */
    bool configs_damaged; /* topic_configs lost rows: a recreated topic may miss its overrides */
    bool rebuild_all;     /* --rebuild-index: every partition from its segments, whatever was copied */
    long long rebuilt;    /* partitions rebuilt from their segment files */
} salvage;

/* A damaged or lost table t: what the rebuild must not trust. */
static void table_damaged(salvage *sv, const char *t) {
    if (!strcmp(t, "batches") || !strcmp(t, "segments")) sv->index_damaged = true;
    if (!strcmp(t, "topic_configs")) sv->configs_damaged = true;
}

/* The damaged database, opened read-only, if it can be salvaged here at all. */
static int open_damaged(salvage *sv, char *err, size_t errlen) {
    struct stat stt;
    if (stat(sv->to, &stt) == 0) {
        stor_errf(err, errlen, "%s exists: salvage writes a new database and never overwrites one (move it aside)", sv->to);
        return -1;
    }
    if (stat(sv->from, &stt) != 0) {
        stor_errf(err, errlen, "%s: no such file", sv->from);
        return -1;
    }
    if (sqlite3_open_v2(sv->from, &sv->old, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        stor_errf(err, errlen, "open %s: %s", sv->from, sv->old ? sqlite3_errmsg(sv->old) : "out of memory");
        return -1;
    }
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(sv->old, "PRAGMA user_version", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
        sv->version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    if (sv->version < 0) {
        stor_errf(err, errlen, "%s: the header cannot be read (%s); nothing can be salvaged from it", sv->from,
                  sqlite3_errmsg(sv->old));
        return -1;
    }
    if (sv->version > stor_schema_latest()) {
        stor_errf(err, errlen, "%s has schema version %d, newer than this mskmock (%d)", sv->from, sv->version,
                  stor_schema_latest());
        return -1;
    }
    /* segment files stay where they are: the new database must be next to the old one to find them */
    segment_dir(sv->old, sv->from, sv->seg_dir, sizeof sv->seg_dir);
    if (!sv->seg_dir[0]) {
        /* settings unreadable: the name stor_segments.c gives a database's segment directory by default */
        char d[512], b[512], guess[600];
        struct stat sd;
        snprintf(d, sizeof d, "%s", sv->to);
        snprintf(b, sizeof b, "%s", sv->to);
        snprintf(guess, sizeof guess, "%s/%s.segments", dirname(d), basename(b));
        if (stat(guess, &sd) == 0 && S_ISDIR(sd.st_mode)) snprintf(sv->seg_dir, sizeof sv->seg_dir, "%s", guess);
    }
    if (sv->seg_dir[0]) {
        char a[512], b[512], seg_dir_to[600];
        snprintf(a, sizeof a, "%s", sv->from);
        snprintf(b, sizeof b, "%s", sv->to);
        snprintf(seg_dir_to, sizeof seg_dir_to, "%s", dirname(b));
        if (strcmp(dirname(a), seg_dir_to) != 0) {
            stor_errf(err, errlen, "%s keeps its records in %s: salvage into the same directory (%s is not)", sv->from,
                      sv->seg_dir, seg_dir_to);
            return -1;
        }
    }
    return 0;
}

/* The new database, made by stor_open (this binary's schema) and opened for the copy. */
static int create_fresh(salvage *sv, char *err, size_t errlen) {
    stor *made = NULL;
    char why[512];
    if (stor_open(&made, sv->to, STOR_SYNC_OFF, why, sizeof why) != 0) {
        stor_errf(err, errlen, "creating %s: %s", sv->to, why);
        return -1;
    }
    stor_close(made);
    if (sqlite3_open_v2(sv->to, &sv->fresh, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
        stor_errf(err, errlen, "open %s: %s", sv->to, sv->fresh ? sqlite3_errmsg(sv->fresh) : "out of memory");
        return -1;
    }
    return 0;
}

/* What is readable of table t, copied by rowid or in key order from both ends; reported. */
static void copy_table(salvage *sv, const char *t) {
    stor_salvage_report fn = sv->fn;
    void *ctx = sv->ctx;
    char cols[1024] = "", order[256] = "", desc[300] = "";
    int ncols = columns(sv->old, sv->fresh, t, cols, sizeof cols, order, sizeof order, desc, sizeof desc);
    if (ncols <= 0 && sv->version < stor_schema_latest() && in_old_schema(sv->old, t) == 0) {
        /* an older schema: a later migration added the table, so there is nothing to lose */
        report(fn, ctx, "salvage: table %s: added after schema version %d; starts empty", t, sv->version);
        return;
    }
    if (ncols <= 0) {
        report(fn, ctx, "salvage: table %s: not in %s, or unreadable; nothing copied", t, sv->from);
        sv->lost_tables++;
        table_damaged(sv, t);
        return;
    }
    long long rows;
    char reason[160] = "";
    bool failed;
    if (has_rowid(sv->old, t)) {
        long long unreadable;
        bool tree;
        rows = copy_by_rowid(sv->old, sv->fresh, t, cols, ncols, &unreadable, &tree, reason, sizeof reason);
        if (tree || unreadable) {
            sv->damaged_tables++;
            table_damaged(sv, t);
            if (!strcmp(t, "batches")) sv->batches_damaged = true;
            report(fn, ctx, "salvage: table %s: %lld rows copied, %lld unreadable%s (%s)", t, rows, unreadable,
                   tree ? ", and rows under damaged tree pages not even listed" : "", reason);
        } else {
            report(fn, ctx, "salvage: table %s: %lld rows copied", t, rows);
        }
        return;
    }
    rows = copy_rows(sv->old, sv->fresh, t, cols, ncols, order, false, &failed, reason, sizeof reason);
    if (failed) {
        /* past the damage from the other end */
        char why2[160];
        bool failed2;
        long long back = copy_rows(sv->old, sv->fresh, t, cols, ncols, desc, true, &failed2, why2, sizeof why2);
        rows += back;
        sv->damaged_tables++;
        table_damaged(sv, t);
        report(fn, ctx, "salvage: table %s: %lld rows copied; reading stopped at damage (%s), %lld more read "
                        "from the end", t, rows, reason, back);
    } else {
        report(fn, ctx, "salvage: table %s: %lld rows copied", t, rows);
    }
}

/* Every table of the new schema, in the order they were created, in one transaction left open. */
static int copy_tables(salvage *sv, char *err, size_t errlen) {
    sqlite3_stmt *st = NULL;
    int rc = stor_sql_exec(sv->fresh, "PRAGMA foreign_keys = OFF; PRAGMA secure_delete = OFF; BEGIN", err, errlen);
    if (rc == 0 && sqlite3_prepare_v2(sv->fresh, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name NOT LIKE "
                                                 "'sqlite_%' ORDER BY rowid", -1, &st, NULL) != SQLITE_OK)
        rc = -1;
    while (rc == 0 && sqlite3_step(st) == SQLITE_ROW) {
        char t[64];
        snprintf(t, sizeof t, "%s", (const char *)sqlite3_column_text(st, 0));
        copy_table(sv, t);
        sv->tables++;
    }
    sqlite3_finalize(st);
    return rc;
}

/* The copied batches whose bytes are not the batch they were, dropped (drop_bad_batches); reported. */
static int keep_sound_batches(salvage *sv, char *err, size_t errlen) {
    char first[160] = "";
    long long bad = drop_bad_batches(sv->fresh, sv->seg_dir, first, sizeof first);
    if (bad < 0) {
        stor_errf(err, errlen, "checking the copied batches: %s", sqlite3_errmsg(sv->fresh));
        return -1;
    }
    if (bad) {
        if (!sv->batches_damaged) sv->damaged_tables++;
        sv->index_damaged = true;
        report(sv->fn, sv->ctx, "salvage: table batches: %lld rows dropped: read without error, their bytes are not the "
                                "batch they were (first at %s)", bad, first);
    }
    return 0;
}

/* What the lost rows leave inconsistent, repaired (repairs[] above); each repair that changed rows reported. */
static int repair(salvage *sv, char *err, size_t errlen) {
    int rc = 0;
    for (size_t i = 0; rc == 0 && i < sizeof repairs / sizeof *repairs; i++) {
        rc = stor_sql_exec(sv->fresh, repairs[i], err, errlen);
        int n = sqlite3_changes(sv->fresh);
        if (rc == 0 && n && repairs[i] != recount_bytes && repairs[i] != recount_segments &&
            repairs[i] != time_index_clear && repairs[i] != time_index_build)
            report(sv->fn, sv->ctx, "salvage: repaired %d rows: %.120s", n, repairs[i]);
    }
    return rc;
}

/* The result must be sound: foreign keys hold and the structure checks. */
static int check_sound(sqlite3 *fresh, char *err, size_t errlen) {
    int rc = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(fresh, "PRAGMA foreign_key_check", -1, &st, NULL) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
        stor_errf(err, errlen, "the salvaged database still breaks a foreign key (table %s)",
                  (const char *)sqlite3_column_text(st, 0));
        rc = -1;
    }
    sqlite3_finalize(st);
    st = NULL;
    if (rc == 0 && sqlite3_prepare_v2(fresh, "PRAGMA integrity_check", -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW && strcmp((const char *)sqlite3_column_text(st, 0), "ok") != 0) {
        stor_errf(err, errlen, "the salvaged database fails integrity_check: %s", sqlite3_column_text(st, 0));
        rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

/*
 * Topics whose rows were lost, and partitions whose index rows cannot be trusted, from the
 * segment files (stor_rebuild.c): before the repairs, which drop what hangs from no topic.
 */
static int rebuild_index(salvage *sv, char *err, size_t errlen) {
    if (!sv->seg_dir[0]) {
        if (sv->rebuild_all) {
            stor_errf(err, errlen, "%s names no segment directory, and none is next to it: no index to rebuild", sv->from);
            return -1;
        }
        return 0;
    }
    bool all = sv->rebuild_all || sv->index_damaged;
    if (all)
        report(sv->fn, sv->ctx, "salvage: rebuilding every partition's index from its segment files in %s (%s)",
               sv->seg_dir, sv->rebuild_all ? "--rebuild-index" : "the batches or segments rows cannot be trusted");
    return stor_rebuild_index(sv->fresh, sv->old, sv->seg_dir, all, sv->configs_damaged, sv->fn, sv->ctx, &sv->rebuilt,
                              err, errlen);
}

static int salvage_run(salvage sv, char *err, size_t errlen) {
    const char *from = sv.from, *to = sv.to;
    stor_salvage_report fn = sv.fn;
    void *ctx = sv.ctx;
    if (open_damaged(&sv, err, errlen) != 0) {
        sqlite3_close(sv.old);
        return -1;
    }
    report(fn, ctx, "salvage: %s (schema version %d) into %s", from, sv.version, to);
    if (create_fresh(&sv, err, errlen) != 0) {
        sqlite3_close(sv.old);
        sqlite3_close(sv.fresh);
        return -1;
    }
    int rc = copy_tables(&sv, err, errlen);
    if (rc == 0) rc = keep_sound_batches(&sv, err, errlen);
    if (rc == 0) rc = rebuild_index(&sv, err, errlen);
    if (rc == 0) rc = repair(&sv, err, errlen);
    if (rc == 0) rc = stor_sql_exec(sv.fresh, "COMMIT", err, errlen);
    if (rc == 0) rc = check_sound(sv.fresh, err, errlen);
    if (rc == 0 && sv.lost_tables == sv.tables && !sv.rebuilt) {
        /* "done" with nothing in it would start an empty cluster over the old one's files */
        stor_errf(err, errlen, "no table of %s is readable and no segment files were found to rebuild from%s%s; "
                  "nothing was salvaged", from, sv.seg_dir[0] ? " in " : "", sv.seg_dir);
        rc = -1;
    }
    sqlite3_close(sv.old);
    sqlite3_close(sv.fresh);
    if (rc == 0)
        report(fn, ctx, "salvage: done: %lld tables damaged, %lld not readable, %lld partitions rebuilt from their "
                        "segment files; start mskmock on %s", sv.damaged_tables, sv.lost_tables, sv.rebuilt, to);
    else
        remove(to);
    return rc;
}

int stor_salvage(const char *from, const char *to, stor_salvage_report fn, void *ctx, char *err, size_t errlen) {
    return salvage_run((salvage){.from = from, .to = to, .version = -1, .fn = fn, .ctx = ctx}, err, errlen);
}

int stor_salvage_rebuild(const char *from, const char *to, stor_salvage_report fn, void *ctx, char *err,
                         size_t errlen) {
    return salvage_run((salvage){.from = from, .to = to, .version = -1, .fn = fn, .ctx = ctx, .rebuild_all = true},
                       err, errlen);
}
