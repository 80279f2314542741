/* Open, connection settings, the lazily opened write transaction and its commit. */
#include "stor_int.h"

#include <assert.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "kp_mem.h"

void stor_errf(char *err, size_t errlen, const char *fmt, ...) {
    if (!err || errlen == 0) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

int stor_fail(stor *s, const char *what) {
    snprintf(s->err, sizeof s->err, "%s: %s", what, sqlite3_errmsg(s->db));
    /*
     * Some errors (disk full, I/O, out of memory) make SQLite roll back the
     * whole transaction, not just the statement. The writes before it are
     * gone, so the next stor_commit must fail rather than report them durable.
     */
    if (s->in_txn && sqlite3_get_autocommit(s->db)) s->txn_failed = true;
    return -1;
}

int stor_failf(stor *s, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->err, sizeof s->err, fmt, ap);
    va_end(ap);
    return -1;
}

sqlite3_stmt *stor_stmt(stor *s, stor_stmt_id id) {
    sqlite3_stmt *st = s->stmt[id];
    /* Every user resets after use; this guards against a missed path leaving a read open. */
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return st;
}

int stor_step_done(stor *s, sqlite3_stmt *st, const char *what) {
    int rc = sqlite3_step(st);
    int ret = rc == SQLITE_DONE ? 0 : stor_fail(s, what);
    sqlite3_reset(st);
    return ret;
}

int stor_write_begin(stor *s) { return stor_write_begin_as(s, STOR_TXN_OTHER); }

/*
 * The write transaction's invariants, asserted where it opens and closes. One transaction at a
 * time, opened lazily by the first write and ended only by stor_commit (or the rollback a failed
 * one does): a write inside the open one joins it, a commit with none open does nothing. Failed
 * (SQLite dropped it) only while open. No transaction but ours on the connection between our
 * commits: a BEGIN of someone else's would make ours fail, and leave writes nobody commits.
 * Operations (stor_op_begin/stor_op_end, a savepoint inside the open transaction) do not nest,
 * and a commit never falls inside one, which would make half an operation durable.
 */
static void assert_txn_invariants(stor *s) {
    (void)s; /* NDEBUG: nothing is checked */
    assert(!s->txn_failed || s->in_txn);
    assert(s->in_txn || sqlite3_get_autocommit(s->db));
    assert(!s->in_op || s->in_txn);
}

int stor_write_begin_as(stor *s, unsigned kind) {
    assert_txn_invariants(s);
    s->txn_kinds |= kind;
    if (s->in_txn && sqlite3_get_autocommit(s->db) && !s->txn_failed) {
        s->txn_failed = true; /* gone without an error of ours to tell why */
        return stor_failf(s, "the open transaction was rolled back after an earlier error; call stor_commit first");
    }
    /* s->err keeps the error that lost the transaction: that is what callers should report */
    if (s->txn_failed) return -1;
    if (s->in_txn) return 0;
    /* IMMEDIATE takes the write lock now, so a competing writer shows up here and not at COMMIT. */
    if (stor_step_done(s, stor_stmt(s, STOR_BEGIN), "begin transaction")) return -1;
    s->in_txn = true;
    return 0;
}

int stor_op_begin(stor *s) { return stor_op_begin_as(s, STOR_TXN_OTHER); }

int stor_op_begin_as(stor *s, unsigned kind) {
    assert(!s->in_op);
    if (stor_write_begin_as(s, kind)) return -1;
    if (stor_step_done(s, stor_stmt(s, STOR_SAVEPOINT), "savepoint")) return -1;
    s->in_op = true;
    return 0;
}

int stor_op_end(stor *s, int rc) {
    assert(s->in_op);
    s->in_op = false;
    if (rc == 0) return stor_step_done(s, stor_stmt(s, STOR_RELEASE), "release savepoint");
    /* Undo the partial operation but keep the message of the statement that failed. */
    stor_producer_cache_free(s);
    if (!sqlite3_get_autocommit(s->db)) {
        sqlite3_stmt *st = stor_stmt(s, STOR_ROLLBACK_TO);
        sqlite3_step(st);
        sqlite3_reset(st);
        st = stor_stmt(s, STOR_RELEASE);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    if (s->in_txn && sqlite3_get_autocommit(s->db)) s->txn_failed = true;
    stor_time_forget(s);
    return rc;
}

void stor_meta_from_row(sqlite3_stmt *st, int col, stor_batch_meta *m) {
    m->base_offset = sqlite3_column_int64(st, col + 0);
    m->last_offset = sqlite3_column_int64(st, col + 1);
    m->max_timestamp = sqlite3_column_int64(st, col + 2);
    m->producer_id = sqlite3_column_int64(st, col + 3);
    m->producer_epoch = (int16_t)sqlite3_column_int(st, col + 4);
    m->base_sequence = sqlite3_column_int(st, col + 5);
    m->last_sequence = sqlite3_column_int(st, col + 6);
    m->records_count = sqlite3_column_int(st, col + 7);
}

/* ---- open ---- */

int stor_sql_exec(sqlite3 *db, const char *sql, char *err, size_t errlen) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK) return 0;
    stor_errf(err, errlen, "%s: %s", sql, msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

/* Runs a pragma that answers one value and copies the answer as text. */
static int stor_pragma_query(sqlite3 *db, const char *sql, char *out, size_t outlen, char *err, size_t errlen) {
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
    if (rc == SQLITE_OK) rc = sqlite3_step(st);
    if (rc != SQLITE_ROW) {
        stor_errf(err, errlen, "%s: %s", sql, sqlite3_errmsg(db));
        sqlite3_finalize(st);
        return -1;
    }
    const unsigned char *v = sqlite3_column_text(st, 0);
    snprintf(out, outlen, "%s", v ? (const char *)v : "");
    sqlite3_finalize(st);
    return 0;
}

/*
 * WAL in every sync mode: a power cut under normal or full must never corrupt the file, and WAL
 * gives that without an fsync per commit; with off nothing is synced, and what survives is what
 * survives a kill -9 (the page cache). Once `off` had a rollback journal (PERSIST), which wrote
 * each byte once where WAL writes it twice (the WAL, then the checkpoint into the file); since
 * record bytes live in segment files the rows are small, and the journal cost more than it saved:
 * a transaction of the txn benchmark 285 us of broker CPU against 210 on WAL (docs/benchmarks.md,
 * "storage.sync=off on WAL"). One journal also means one reader story: WAL readers, the log
 * cleaner's and a user's sqlite3, never hold the loop's commit back.
 */
static int stor_set_journal(sqlite3 *db, char *err, size_t errlen) {
    char mode[32];
    if (stor_pragma_query(db, "PRAGMA journal_mode = WAL", mode, sizeof mode, err, errlen)) return -1;
    /* In-memory and temporary databases keep their own journal; nothing there needs to survive anyway. */
    const char *file = sqlite3_db_filename(db, "main");
    if (!file || !*file) return 0;
    if (strcmp(mode, "wal") != 0) {
        stor_errf(err, errlen,
                  "cannot put %s in wal journal mode (SQLite kept '%s'); the data directory must be on a local "
                  "filesystem that supports shared memory",
                  file, mode);
        return -1;
    }
    return 0;
}

/*
 * A new database file gets 1 KiB pages instead of SQLite's 4 KiB. Since the record bytes went
 * to segment files, rows are small (a batch row is under 100 bytes), and a commit writes every
 * page it changed into the WAL with a checksum over the whole page, which the checkpoint copies
 * again: with 1 KiB pages a transaction of the txn benchmark costs 14% fewer instructions and
 * a 1 KiB produce 13% (docs/benchmarks.md, "What each SQLite commit costs"). Only before the
 * first write: a page size is fixed once the file has pages (changing it needs a VACUUM out of
 * WAL mode), so databases made before keep theirs. In-memory databases keep SQLite's default.
 */
static int stor_set_new_page_size(sqlite3 *db, char *err, size_t errlen) {
    const char *file = sqlite3_db_filename(db, "main");
    if (!file || !*file) return 0;
    char pages[32];
    if (stor_pragma_query(db, "PRAGMA page_count", pages, sizeof pages, err, errlen)) return -1;
    if (strcmp(pages, "0") != 0) return 0;
    return stor_sql_exec(db, "PRAGMA page_size = 1024", err, errlen);
}

static int stor_configure(sqlite3 *db, stor_sync sync, char *err, size_t errlen) {
    static const char *const sync_sql[] = {
        [STOR_SYNC_OFF] = "PRAGMA synchronous = OFF",
        [STOR_SYNC_NORMAL] = "PRAGMA synchronous = NORMAL",
        [STOR_SYNC_FULL] = "PRAGMA synchronous = FULL",
    };
    if ((unsigned)sync >= sizeof sync_sql / sizeof sync_sql[0]) {
        stor_errf(err, errlen, "invalid sync mode %d", (int)sync);
        return -1;
    }
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, STOR_BUSY_TIMEOUT_MS);
    /*
     * Switching a new file to WAL goes through a rollback journal, which
     * SQLite's default (FULL) syncs four times: ~5 ms of start-up on disk.
     * A file that has just been created has nothing to lose, so that step
     * runs unsynced; the configured mode applies from here on.
     */
    if (stor_sql_exec(db, sync_sql[STOR_SYNC_OFF], err, errlen)) return -1;
    if (stor_set_new_page_size(db, err, errlen)) return -1;
    if (stor_set_journal(db, err, errlen)) return -1;
    if (stor_sql_exec(db, sync_sql[sync], err, errlen)) return -1;
    /*
     * Debian builds SQLite with SECURE_DELETE, which overwrites every freed page with zeros
     * through the journal: deleting a topic then needs as much free disk as the topic held, so
     * it cannot free a full disk. Freed pages here hold only records their producers sent us,
     * no secrets, and the file is ours alone.
     */
    if (stor_sql_exec(db, "PRAGMA secure_delete = OFF", err, errlen)) return -1;
    if (stor_sql_exec(db, "PRAGMA foreign_keys = ON", err, errlen)) return -1;
    /* Topic deletion relies on ON DELETE CASCADE; a build without foreign keys would leave orphans. */
    char fk[8];
    if (stor_pragma_query(db, "PRAGMA foreign_keys", fk, sizeof fk, err, errlen)) return -1;
    if (strcmp(fk, "1") != 0) {
        stor_errf(err, errlen, "this SQLite build does not enforce foreign keys");
        return -1;
    }
    return 0;
}

static int stor_prepare_all(stor *s, char *err, size_t errlen) {
    for (int i = 0; i < STOR_STMT_COUNT; i++) {
        if (!stor_stmt_sql[i]) {
            stor_errf(err, errlen, "statement %d has no SQL text", i);
            return -1;
        }
        if (sqlite3_prepare_v3(s->db, stor_stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->stmt[i], NULL) !=
            SQLITE_OK) {
            stor_errf(err, errlen, "prepare statement %d (%s): %s", i, stor_stmt_sql[i], sqlite3_errmsg(s->db));
            return -1;
        }
    }
    return 0;
}

/*
 * SQLITE_CONFIG_MEMSTATUS off: with it on (SQLite's default) every sqlite3_malloc and
 * sqlite3_free takes the allocator's global mutex and updates the memory statistics, which
 * nothing here reads (no sqlite3_memory_used, sqlite3_status or heap limit). On the request path
 * that was ~7% of a Produce+Fetch pair's instructions in memory (issue 37), and during a
 * compaction pass the loop waited on that mutex for the cleaner's idle-priority thread and the
 * checkpointer's. It must come before SQLite initializes. See
 * https://www.sqlite.org/c3ref/c_config_covering_index_scan.html#sqliteconfigmemstatus
 */
int stor_process_init(void) { return sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0) == SQLITE_OK ? 0 : -1; }

int stor_open(stor **out, const char *path, stor_sync sync, char *err, size_t errlen) {
    *out = NULL;
    if (!path) {
        stor_errf(err, errlen, "no database path");
        return -1;
    }
    /*
     * A database file of 0 bytes is what truncation leaves; opening it would start an empty
     * cluster over the data that was there. (SQLite itself writes the first page before the
     * first commit returns, so our own first start never leaves one behind for long.)
     */
    struct stat st;
    if (strcmp(path, ":memory:") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
        stor_errf(err, errlen,
                  "the database file exists but is empty (0 bytes) where a database was expected; refusing to start "
                  "an empty cluster over it. Restore it from a backup, or delete it to start empty");
        return -1;
    }
    stor *s = xcalloc(1, sizeof *s);
    /* Only the loop thread touches the handle, so SQLite's own mutexes are pure cost. */
    int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
    /* files on disk go through the gathering VFS (stor_vfs.c); :memory: has no files */
    const char *vfs = strcmp(path, ":memory:") == 0 ? NULL : stor_vfs_name();
    int rc = sqlite3_open_v2(path, &s->db, flags, vfs);
    if (rc != SQLITE_OK) {
        stor_errf(err, errlen, "open %s: %s", path, s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
        stor_close(s);
        return -1;
    }
    char why[400] = "";
    /* The first read of the file: a damaged header fails here, named as what it is. */
    char version[32];
    if (stor_pragma_query(s->db, "PRAGMA schema_version", version, sizeof version, why, sizeof why)) {
        stor_errf(err, errlen, "%s: reading the database header: %s", path, sqlite3_errmsg(s->db));
        stor_close(s);
        return -1;
    }
    if (stor_configure(s->db, sync, why, sizeof why) || stor_migrate(s->db, &s->schema_version, why, sizeof why) ||
        stor_prepare_all(s, why, sizeof why)) {
        stor_errf(err, errlen, "%s: %s", path, why);
        stor_close(s);
        return -1;
    }
    const char *file = sqlite3_db_filename(s->db, "main");
    if (file && *file && stor_seg_open(s, file, sync) != 0) {
        stor_errf(err, errlen, "%s: %s", path, s->err);
        stor_close(s);
        return -1;
    }
    if (file && *file && stor_ckpt_start(s, file, sync, why, sizeof why) != 0) {
        stor_errf(err, errlen, "%s: %s", path, why);
        stor_close(s);
        return -1;
    }
    s->opened = true;
    *out = s;
    return 0;
}

typedef struct check_clock {
    struct timespec deadline;
    bool expired;
} check_clock;

static int check_progress(void *arg) {
    check_clock *c = arg;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec > c->deadline.tv_sec || (now.tv_sec == c->deadline.tv_sec && now.tv_nsec >= c->deadline.tv_nsec))
        c->expired = true;
    return c->expired; /* nonzero interrupts the check */
}

int stor_check(stor *s, int64_t budget_ms, char *err, size_t errlen) {
    if (budget_ms <= 0) return 1;
    check_clock c = {.expired = false};
    clock_gettime(CLOCK_MONOTONIC, &c.deadline);
    c.deadline.tv_sec += budget_ms / 1000;
    c.deadline.tv_nsec += (budget_ms % 1000) * 1000000;
    if (c.deadline.tv_nsec >= 1000000000) {
        c.deadline.tv_sec++;
        c.deadline.tv_nsec -= 1000000000;
    }
    sqlite3_progress_handler(s->db, 4096, check_progress, &c);
    /* quick_check: every page's b-tree structure and record format, without the index cross-checks */
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(5)", -1, &st, NULL);
    size_t used = 0;
    if (err && errlen) err[0] = 0;
    bool ok = false;
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        if (line && strcmp(line, "ok") == 0) {
            ok = true;
            continue;
        }
        if (err && used < errlen)
            used += (size_t)snprintf(err + used, errlen - used, "%s%s", used ? "; " : "", line ? line : "?");
    }
    if (rc == SQLITE_ROW || rc == SQLITE_DONE) rc = SQLITE_OK;
    sqlite3_finalize(st);
    sqlite3_progress_handler(s->db, 0, NULL, NULL);
    if (c.expired) return 1;
    if (rc != SQLITE_OK) {
        /* damage can also stop the check itself (a page that cannot be read at all) */
        if (err && errlen) stor_errf(err, errlen, "%s", sqlite3_errmsg(s->db));
        return -1;
    }
    return ok && used == 0 ? 0 : -1;
}

void stor_close(stor *s) {
    if (!s) return;
    /* Closing with an open transaction discards it: only what stor_commit returned 0 for is kept. */
    if (s->db && !sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    /*
     * A clean stop leaves the producer snapshot up to date, so the next start reads no batch
     * for it (Kafka writes one at shutdown too, ProducerStateManager.takeSnapshot). Best effort:
     * without it the next start folds the batches past the older snapshot.
     */
    if (s->opened && s->producer_snap_due > 0 &&
        sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK) {
        bool ok = stor_producer_snapshot(s) == 0;
        sqlite3_exec(s->db, ok ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
        if (!sqlite3_get_autocommit(s->db)) sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
    }
    stor_ckpt_stop(s);
    stor_seg_close(s);
    stor_time_free(s);
    for (int i = 0; i < STOR_STMT_COUNT; i++) sqlite3_finalize(s->stmt[i]);
    sqlite3_close_v2(s->db);
    stor_producer_cache_free(s);
    stor_producer_dirty_free(s);
    free(s->reserve_path);
    free(s);
}

int stor_schema_version(stor *s) { return s->schema_version; }

/* ---- transaction ---- */

static void stor_rollback_quietly(stor *s) {
    stor_producer_cache_free(s);
    if (!sqlite3_get_autocommit(s->db)) {
        sqlite3_stmt *st = stor_stmt(s, STOR_ROLLBACK);
        sqlite3_step(st);
        sqlite3_reset(st);
    }
    bool had = s->in_txn;
    s->in_txn = false;
    s->txn_failed = false;
    s->in_op = false;
    s->txn_kinds = 0;
    s->producer_snap_taken = false; /* what it folded stays due */
    if (had) stor_seg_after_rollback(s);
    stor_time_forget(s);
}

int stor_commit(stor *s) {
    assert_txn_invariants(s);
    assert(!s->in_op);
    if (s->in_txn && sqlite3_get_autocommit(s->db)) s->txn_failed = true;
    if (s->txn_failed) {
        /* s->err still holds the error that lost the transaction. */
        stor_rollback_quietly(s);
        return -1;
    }
    if (!s->in_txn) return 0;
    /* the producer snapshot rides along in the commit now and then (stor_producers.c) */
    if ((s->producer_snap_due >= STOR_PRODUCER_SNAPSHOT_EVERY && stor_producer_snapshot(s)) ||
        stor_seg_before_commit(s) || stor_step_done(s, stor_stmt(s, STOR_COMMIT), "commit")) {
        /*
         * Roll back rather than leave the transaction open: the caller will
         * refuse these writes, and a later successful commit must not make
         * them durable behind its back.
         */
        stor_rollback_quietly(s);
        return -1;
    }
    s->in_txn = false;
    s->txn_kinds = 0;
    s->commit_seq++;
    if (s->producer_snap_taken) stor_producer_snapshot_committed(s);
    stor_seg_after_commit(s);
    stor_ckpt_kick(s);
    return 0;
}

bool stor_in_txn(stor *s) { return s->in_txn; }

unsigned stor_txn_kinds(stor *s) { return s->in_txn ? s->txn_kinds : 0; }

int64_t stor_free_page_bytes(stor *s) {
    int64_t n = 0, size = 0;
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT freelist_count, page_size FROM pragma_freelist_count, pragma_page_size",
                           -1, &st, NULL) == SQLITE_OK &&
        sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
        size = sqlite3_column_int64(st, 1);
    }
    sqlite3_finalize(st);
    return n * size;
}

uint64_t stor_commit_seq(stor *s) { return s->commit_seq; }

int64_t stor_change_count(stor *s) { return (int64_t)sqlite3_total_changes64(s->db); }

const char *stor_errmsg(stor *s) { return s->err[0] ? s->err : "no error"; }
