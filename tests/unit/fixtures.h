/*
 * The unit tests' shared fixtures: temporary directories and files under /tmp,
 * and the storage fixture (a fresh database in its own temp dir, opened through
 * stor_open). Header-only, everything static: include it once per test program,
 * after <cmocka.h>. A helper that cannot do its job fails the running test.
 */
#ifndef FIXTURES_H
#define FIXTURES_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "stor.h"

/* ---- temporary directories and files ---- */

/* Makes /tmp/mskmock-<name>-<random> and puts its path in buf. */
static inline void tmp_dir_new(char *buf, size_t n, const char *name) {
    if ((size_t)snprintf(buf, n, "/tmp/mskmock-%s-XXXXXX", name) >= n) fail_msg("tmp_dir_new: %s: name too long", name);
    if (!mkdtemp(buf)) fail_msg("mkdtemp %s failed", buf);
}

static inline int tmp_remove_entry(const char *path, const struct stat *st, int flag, struct FTW *f) {
    (void)st, (void)flag, (void)f;
    return remove(path);
}

/* Removes a directory and everything in it (rm -rf). */
static inline void tmp_dir_remove(const char *path) { nftw(path, tmp_remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Writes text to a new file /tmp/mskmock-<name>-<random><suffix> and puts its path in buf. */
static inline void tmp_file_write(char *buf, size_t n, const char *name, const char *suffix, const char *text) {
    if ((size_t)snprintf(buf, n, "/tmp/mskmock-%s-XXXXXX%s", name, suffix) >= n) fail_msg("tmp_file_write: name too long");
    int fd = mkstemps(buf, (int)strlen(suffix));
    if (fd < 0) fail_msg("mkstemps %s failed", buf);
    size_t len = strlen(text);
    if (write(fd, text, len) != (ssize_t)len) fail_msg("writing %s failed", buf);
    close(fd);
}

/* ---- raw SQLite access to a database file (foreign keys off, committed data only), for checks and tampering ---- */

static inline void fx_raw_exec(const char *path, const char *sql) {
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) fail_msg("open %s", path);
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) fail_msg("%s: %s", sql, msg);
    sqlite3_close(db);
}

/*
 * Migration 8's per-row triggers on segments.live/used, which migration 22 replaced by the fold:
 * the tests that build a database of an older schema put them back.
 */
#define FX_SEG_TRIGGERS_BEFORE_22                                                                                     \
    "CREATE TRIGGER batches_seg_add AFTER INSERT ON batches WHEN NEW.seg IS NOT NULL BEGIN"                          \
    "  UPDATE segments SET live = live + 1, used = max(used, NEW.pos + NEW.size)"                                     \
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND id = NEW.seg; END;"                           \
    "CREATE TRIGGER batches_seg_del AFTER DELETE ON batches WHEN OLD.seg IS NOT NULL BEGIN"                           \
    "  UPDATE segments SET live = live - 1"                                                                           \
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg; END;"                           \
    "CREATE TRIGGER batches_seg_move AFTER UPDATE OF seg, pos ON batches BEGIN"                                       \
    "  UPDATE segments SET live = live - 1"                                                                           \
    "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition AND id = OLD.seg;"                                \
    "  UPDATE segments SET live = live + 1, used = max(used, NEW.pos + NEW.size)"                                     \
    "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition AND id = NEW.seg; END;"

/* The first column of the first row of a query; the query must return a row. */
static inline int64_t fx_raw_int(const char *path, const char *sql) {
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) fail_msg("open %s", path);
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    if (sqlite3_step(st) != SQLITE_ROW) fail_msg("%s: no row", sql);
    int64_t v = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
    return v;
}

/* ---- the storage fixture ---- */

typedef struct fx {
    char dir[64];
    char path[128];
    stor *s;
    stor_sync sync;
    int64_t topic; /* for fixtures that create one */
} fx;

static inline void fx_open(fx *f) {
    char err[512] = "";
    if (stor_open(&f->s, f->path, f->sync, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    if (stor_recover(f->s) != 0) fail_msg("stor_recover: %s", stor_errmsg(f->s));
}

static inline void fx_reopen(fx *f) {
    stor_close(f->s);
    f->s = NULL;
    fx_open(f);
}

/* A fixture with its store open, in a temp dir of its own named for the test program. */
static inline fx *fx_new(const char *name, stor_sync sync) {
    fx *f = calloc(1, sizeof *f);
    if (!f) fail_msg("out of memory");
    tmp_dir_new(f->dir, sizeof f->dir, name);
    snprintf(f->path, sizeof f->path, "%s/mskmock.db", f->dir);
    f->sync = sync;
    fx_open(f);
    return f;
}

/* fx_new with a topic "t" of the given partition count, committed. */
static inline fx *fx_new_with_topic(const char *name, stor_sync sync, int32_t partitions) {
    fx *f = fx_new(name, sync);
    stor_topic t = {.name = "t", .partitions = partitions, .created_ms = 1};
    if (stor_topic_create(f->s, &t) != 0 || stor_commit(f->s) != 0) fail_msg("topic: %s", stor_errmsg(f->s));
    f->topic = t.id;
    return f;
}

/* Closes the store and removes its directory with everything a test left in it. */
static inline int fx_teardown(void **state) {
    fx *f = *state;
    stor_close(f->s);
    tmp_dir_remove(f->dir);
    free(f);
    return 0;
}

#endif
