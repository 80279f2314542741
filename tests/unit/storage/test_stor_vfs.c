/*
 * stor: the gathering VFS (stor_vfs.c) keeps every commit intact in every
 * sync mode, all of them on WAL, and a failed gathered write fails the commit.
 */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"
#include "stor_int.h"

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_vfs", STOR_SYNC_NORMAL, 1);
    return 0;
}

static int fx_setup_off(void **state) {
    *state = fx_new_with_topic("stor_vfs_off", STOR_SYNC_OFF, 1);
    return 0;
}

static bool exists(const char *path, const char *suffix) {
    char p[200];
    snprintf(p, sizeof p, "%s%s", path, suffix);
    struct stat st;
    return stat(p, &st) == 0;
}

static uint8_t byte_at(int64_t base, size_t i) { return (uint8_t)(base * 131 + (int64_t)i * 7 + (int64_t)(i >> 9)); }

static int append(fx *f, int64_t base, size_t len) {
    uint8_t *data = malloc(len);
    if (!data) return -1;
    for (size_t i = 0; i < len; i++) data[i] = byte_at(base, i);
    stor_batch_meta m = {.base_offset = base, .last_offset = base, .max_timestamp = 1, .producer_id = -1,
                         .producer_epoch = -1, .base_sequence = -1, .last_sequence = -1, .records_count = 1};
    int rc = stor_batch_append(f->s, f->topic, 0, &m, data, len);
    free(data);
    return rc;
}

typedef struct check {
    int64_t next;
    const size_t *sizes;
} check;

static bool check_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    check *c = ctx;
    assert_int_equal(m->base_offset, c->next);
    assert_int_equal(len, c->sizes[c->next]);
    const uint8_t *d = data;
    for (size_t i = 0; i < len; i++)
        if (d[i] != byte_at(m->base_offset, i)) fail_msg("batch %lld byte %zu differs", (long long)m->base_offset, i);
    c->next++;
    return true;
}

static void read_all(fx *f, const size_t *sizes, int64_t n) {
    check c = {.next = 0, .sizes = sizes};
    if (stor_batch_read(f->s, f->topic, 0, 0, n, check_batch, &c) != 0) fail_msg("read: %s", stor_errmsg(f->s));
    assert_int_equal(c.next, n);
}

/* Another connection, on SQLite's own VFS, finds a sound database with every batch. */
static void check_from_default_vfs(fx *f, int64_t n) {
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM batches", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int64(st, 0), n);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/*
 * Regression (gathered_write_of_128k_multiple): SQLite's unix VFS writes at
 * most 0x1ffff bytes per call and fails a write whose length is a multiple
 * of 128 KiB, so a 1 MiB gathered write failed every commit of that size
 * with "database or disk is full". Commits of many sizes, including those,
 * must read back byte for byte, before and after a reopen, and from a
 * connection on SQLite's own VFS (the checkpoint thread's).
 */
static void gathered_writes_of_many_sizes(fx *f) {
    static const size_t sizes[] = {1,      100,     4096,    4097,    65536,  122880, 131071,
                                   131072, 131073,  262144,  524288,  1 << 20, 3000,  (1 << 20) + 5};
    const int64_t n = (int64_t)(sizeof sizes / sizeof sizes[0]);
    for (int64_t i = 0; i < n; i++) {
        if (append(f, i, sizes[i]) != 0) fail_msg("append %lld: %s", (long long)i, stor_errmsg(f->s));
        /* one commit per batch, and a few with two batches */
        if (i % 4 != 1 && stor_commit(f->s) != 0) fail_msg("commit %lld: %s", (long long)i, stor_errmsg(f->s));
    }
    assert_int_equal(stor_commit(f->s), 0);
    read_all(f, sizes, n);
    check_from_default_vfs(f, n);
    fx_reopen(f);
    read_all(f, sizes, n);
}

static void test_gathered_write_of_128k_multiple(void **state) {
    fx *f = *state;
    gathered_writes_of_many_sizes(f);
    assert_true(exists(f->path, "-wal"));
}

/*
 * storage.sync=off is on WAL too (it once had a rollback journal, which cost a transaction
 * more broker CPU than the default): the same commits read back the same way.
 */
static void test_sync_off_is_on_wal(void **state) {
    fx *f = *state;
    gathered_writes_of_many_sizes(f);
    assert_true(exists(f->path, "-wal"));
    assert_false(exists(f->path, "-journal"));
}

/*
 * A database that an older mskmock left in rollback-journal mode (journal_mode PERSIST, which
 * keeps its -journal file) opens on WAL in every sync mode, with its data.
 */
static void test_database_left_in_rollback_mode_opens_on_wal(void **state) {
    fx *f = *state;
    static const size_t sizes[] = {300000, 5000, 70000};
    assert_int_equal(append(f, 0, sizes[0]), 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "PRAGMA journal_mode = PERSIST; CREATE TABLE older (x); DROP TABLE older");
    assert_true(exists(f->path, "-journal"));
    assert_false(exists(f->path, "-wal"));
    stor_sync modes[] = {STOR_SYNC_OFF, STOR_SYNC_FULL};
    for (int i = 0; i < 2; i++) {
        f->sync = modes[i];
        fx_open(f);
        assert_true(exists(f->path, "-wal"));
        assert_int_equal(append(f, i + 1, sizes[i + 1]), 0);
        assert_int_equal(stor_commit(f->s), 0);
        stor_close(f->s);
        f->s = NULL;
    }
    fx_open(f);
    read_all(f, sizes, 3);
    check_from_default_vfs(f, 3);
}

/* ---- failures: the VFS on its own, on a raw connection that never checkpoints ---- */

static void raw_exec(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
}

static int insert_row(sqlite3 *db, size_t len) {
    uint8_t *data = calloc(1, len);
    sqlite3_stmt *st = NULL;
    int rc = data ? sqlite3_prepare_v2(db, "INSERT INTO t VALUES (?)", -1, &st, NULL) : SQLITE_NOMEM;
    if (rc == SQLITE_OK) rc = sqlite3_bind_blob64(st, 1, data, len, SQLITE_STATIC);
    if (rc == SQLITE_OK) rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
    sqlite3_finalize(st);
    free(data);
    return rc;
}

/* In the child: no file may grow past the size `limited` has now (the limit is per process). */
static void limit_file_size_to(const char *limited) {
    struct stat st;
    if (stat(limited, &st) != 0) _exit(20);
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit lim = {.rlim_cur = (rlim_t)st.st_size, .rlim_max = RLIM_INFINITY};
    if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(21);
}

/* The parent's side of a fork: the child exited 0. */
static void child_succeeded(pid_t pid) {
    assert_true(pid >= 0);
    int status = 0;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

/*
 * A child of a process with other threads inherits whatever lock one of them held at the fork
 * (SQLite's, the allocator's) and may wait on it for ever: the fixture's checkpoint thread stops
 * before a test forks.
 */
static void stop_other_threads(fx *f) { stor_ckpt_stop(f->s); }

/*
 * In a child, on a connection of the gathering VFS set up by setup_sql: once
 * `limited` may not grow by a byte, a transaction inserting len bytes must
 * fail at COMMIT. The child leaves without closing, as a killed broker would.
 */
static void commit_fails_in_child(const char *path, const char *setup_sql, const char *limited, size_t len) {
    pid_t pid = fork();
    if (pid == 0) {
        sqlite3 *db;
        if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, stor_vfs_name()) != SQLITE_OK) _exit(10);
        if (sqlite3_exec(db, setup_sql, NULL, NULL, NULL)) _exit(11);
        if (sqlite3_exec(db, "SELECT count(*) FROM t", NULL, NULL, NULL)) _exit(13);
        limit_file_size_to(limited);
        if (sqlite3_exec(db, "BEGIN", NULL, NULL, NULL) || insert_row(db, len)) _exit(14);
        _exit(sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK ? 0 : 15);
    }
    child_succeeded(pid);
}

/* After the failed commits: only the first row is there, the file is sound and takes another; then close it. */
static void check_one_row_then_close(sqlite3 *db) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 1);
    sqlite3_finalize(st);
    assert_int_equal(insert_row(db, 7000), SQLITE_OK);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "ok");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/*
 * A gathered WAL write that fails (here: the file size limit) fails the
 * commit, as an unbuffered write would: a small transaction fails at the
 * flush after its commit frame, a large one at the flush of a full buffer.
 * Without checkpoints the WAL cannot start over inside the limit. Nothing of
 * either is readable afterwards, and the database is sound and writable.
 */
static void test_failed_gathered_write_fails_the_commit(void **state) {
    fx *f = *state;
    char path[160], wal[200];
    snprintf(path, sizeof path, "%s/raw.db", f->dir);
    snprintf(wal, sizeof wal, "%s-wal", path);
    stop_other_threads(f);
    sqlite3 *db;
    assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, stor_vfs_name()), SQLITE_OK);
    raw_exec(db, "PRAGMA journal_mode = WAL; PRAGMA wal_autocheckpoint = 0; CREATE TABLE t (b BLOB)");
    assert_int_equal(insert_row(db, 5000), SQLITE_OK);

    static const char setup[] = "PRAGMA wal_autocheckpoint = 0";
    commit_fails_in_child(path, setup, wal, 6000);    /* fits the buffer */
    commit_fails_in_child(path, setup, wal, 1 << 20); /* flushed when the buffer fills */
    check_one_row_then_close(db);
}

/*
 * A large batch goes in as a zeroblob and its bytes through the blob API
 * (stor_batches.c). When a large append fails half-way (here: a page cache
 * of a few pages spills into a database file that may not grow, which the
 * zeroblob insert hits first), neither the row of zeros nor anything else
 * of it may be committed: the append or the commit fails, and after the
 * child is gone the file holds what it held before, soundly.
 */
static void test_failed_large_append_commits_nothing(void **state) {
    fx *f = *state;
    static const size_t sizes[] = {20000};
    assert_int_equal(append(f, 0, sizes[0]), 0);
    assert_int_equal(stor_commit(f->s), 0);
    stop_other_threads(f);
    pid_t pid = fork();
    if (pid == 0) {
        if (sqlite3_exec(f->s->db, "PRAGMA cache_size = 8", NULL, NULL, NULL)) _exit(10);
        limit_file_size_to(f->path);
        int rc = append(f, 1, 1 << 20);
        _exit(rc != 0 || stor_commit(f->s) != 0 ? 0 : 13);
    }
    child_succeeded(pid);
    fx_reopen(f);
    read_all(f, sizes, 1);
    check_from_default_vfs(f, 1);
    assert_int_equal(append(f, 1, 30000), 0);
    assert_int_equal(stor_commit(f->s), 0);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)
#define T_OFF(fn) cmocka_unit_test_setup_teardown(fn, fx_setup_off, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_gathered_write_of_128k_multiple),
        T_OFF(test_sync_off_is_on_wal),
        T(test_database_left_in_rollback_mode_opens_on_wal),
        T(test_failed_gathered_write_fails_the_commit),
        T_OFF(test_failed_large_append_commits_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
