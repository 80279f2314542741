/* stor: open and migrations, transactions and durability, topics round trip through stor_load. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixtures.h"
#include "stor.h"
#include "stor_int.h"

/* ---- fixture (fixtures.h) ---- */

static int fx_setup(void **state) {
    *state = fx_new("stor_basic", STOR_SYNC_NORMAL);
    return 0;
}

/* ---- load collector ---- */

#define MAX_ROWS 32

typedef struct loaded {
    int ntopics, nconfigs, nparts;
    stor_topic topics[MAX_ROWS];
    char names[MAX_ROWS][64];
    struct {
        int64_t topic_id;
        char key[64], value[64];
    } configs[MAX_ROWS];
    struct {
        int64_t topic_id;
        int32_t partition;
        int64_t log_start, next_offset;
    } parts[MAX_ROWS];
} loaded;

static void on_topic(void *ctx, const stor_topic *t) {
    loaded *l = ctx;
    assert_true(l->ntopics < MAX_ROWS);
    l->topics[l->ntopics] = *t;
    snprintf(l->names[l->ntopics], sizeof l->names[0], "%s", t->name);
    l->topics[l->ntopics].name = l->names[l->ntopics];
    l->ntopics++;
}

static void on_config(void *ctx, int64_t topic_id, const char *key, const char *value) {
    loaded *l = ctx;
    assert_true(l->nconfigs < MAX_ROWS);
    l->configs[l->nconfigs].topic_id = topic_id;
    snprintf(l->configs[l->nconfigs].key, 64, "%s", key);
    snprintf(l->configs[l->nconfigs].value, 64, "%s", value);
    l->nconfigs++;
}

static void on_partition(void *ctx, int64_t topic_id, int32_t partition, int64_t log_start, int64_t next_offset) {
    loaded *l = ctx;
    assert_true(l->nparts < MAX_ROWS);
    l->parts[l->nparts].topic_id = topic_id;
    l->parts[l->nparts].partition = partition;
    l->parts[l->nparts].log_start = log_start;
    l->parts[l->nparts].next_offset = next_offset;
    l->nparts++;
}

static void load_all(stor *s, loaded *l) {
    memset(l, 0, sizeof *l);
    stor_load_cb cb = {.ctx = l, .topic = on_topic, .config = on_config, .partition = on_partition};
    assert_int_equal(stor_load(s, &cb), 0);
}

static int64_t make_topic(stor *s, const char *name, int32_t partitions) {
    stor_topic t = {.name = name, .partitions = partitions, .created_ms = 1700000000000};
    for (int i = 0; i < 16; i++) t.uuid[i] = (uint8_t)(name[0] + i);
    if (stor_topic_create(s, &t) != 0) fail_msg("create %s: %s", name, stor_errmsg(s));
    assert_true(t.id > 0);
    return t.id;
}

static void append_one(stor *s, int64_t topic_id, int32_t partition, int64_t base, int32_t count) {
    stor_batch_meta m = {.base_offset = base,
                         .last_offset = base + count - 1,
                         .max_timestamp = 1000 + base,
                         .producer_id = -1,
                         .producer_epoch = -1,
                         .base_sequence = -1,
                         .last_sequence = -1,
                         .records_count = count};
    uint8_t data[100];
    memset(data, (int)base, sizeof data);
    if (stor_batch_append(s, topic_id, partition, &m, data, sizeof data) != 0)
        fail_msg("append: %s", stor_errmsg(s));
}

/* ---- open and migrations ---- */

static void test_fresh_file_is_migrated(void **state) {
    fx *f = *state;
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_true(stor_schema_latest() >= 1);
    assert_false(stor_in_txn(f->s));
    assert_int_equal(stor_commit_seq(f->s), 0);

    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), stor_schema_latest());
    sqlite3_finalize(st);
    assert_int_equal(sqlite3_prepare_v2(db, "PRAGMA journal_mode", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_string_equal((const char *)sqlite3_column_text(st, 0), "wal");
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_reopen_keeps_version(void **state) {
    fx *f = *state;
    fx_reopen(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    fx_reopen(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
}

/* Text of a schema object as SQLite stores it, or "" when absent. */
static void schema_sql(fx *f, const char *name, char *out, size_t outlen) {
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE name = ?", -1, &st, NULL), SQLITE_OK);
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    out[0] = 0;
    if (sqlite3_step(st) == SQLITE_ROW) snprintf(out, outlen, "%s", (const char *)sqlite3_column_text(st, 0));
    sqlite3_finalize(st);
    sqlite3_close(db);
}

/* Every object of sqlite_master and the two PRAGMAs, one line each, in a fixed order; owned by the caller. */
static char *schema_text(sqlite3 *db) {
    size_t cap = 1 << 16, len = 0;
    char *out = malloc(cap);
    assert_non_null(out);
    out[0] = 0;
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db,
                                        "SELECT type || ' ' || name || ' ON ' || tbl_name || ': ' || ifnull(sql, '-') "
                                        "FROM sqlite_master UNION ALL SELECT 'user_version ' || user_version FROM "
                                        "pragma_user_version UNION ALL SELECT 'application_id ' || application_id "
                                        "FROM pragma_application_id ORDER BY 1",
                                        -1, &st, NULL),
                     SQLITE_OK);
    while (sqlite3_step(st) == SQLITE_ROW) {
        const char *line = (const char *)sqlite3_column_text(st, 0);
        size_t n = strlen(line);
        while (len + n + 2 > cap) {
            cap *= 2;
            out = realloc(out, cap);
            assert_non_null(out);
        }
        memcpy(out + len, line, n);
        len += n;
        out[len++] = '\n';
        out[len] = 0;
    }
    sqlite3_finalize(st);
    return out;
}

/*
 * A new database is created from the schema generated at build time (stor_schema_gen.c), not
 * by running the chain: it must be the chain's, object for object, text for text.
 */
static void test_fresh_schema_is_the_migration_chains(void **state) {
    (void)state;
    sqlite3 *fresh, *chained;
    char err[256];
    int v1 = 0, v2 = 0;
    assert_int_equal(sqlite3_open(":memory:", &fresh), SQLITE_OK);
    assert_int_equal(sqlite3_open(":memory:", &chained), SQLITE_OK);
    assert_int_equal(stor_migrate(fresh, &v1, err, sizeof err), 0);
    assert_int_equal(stor_migrate_by_chain(chained, &v2, err, sizeof err), 0);
    assert_int_equal(v1, stor_schema_latest());
    assert_int_equal(v2, stor_schema_latest());
    char *a = schema_text(fresh), *b = schema_text(chained);
    assert_true(strlen(a) > 1000);
    assert_string_equal(a, b);
    free(a);
    free(b);
    /* and a database made either way is taken as it is when opened again */
    assert_int_equal(stor_migrate(fresh, &v1, err, sizeof err), 0);
    assert_int_equal(stor_migrate(chained, &v2, err, sizeof err), 0);
    sqlite3_close(fresh);
    sqlite3_close(chained);
}

/* A database left at schema 1 (as built by the first broker commit) is brought forward with its data. */
static void test_upgrade_from_version_1(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "old", 1);
    stor_batch_meta m = {.base_offset = 0, .last_offset = 1, .producer_id = 42, .producer_epoch = 1,
                         .base_sequence = 0, .last_sequence = 1, .records_count = 2};
    uint8_t data[64] = {1};
    assert_int_equal(stor_batch_append(f->s, id, 0, &m, data, sizeof data), 0);
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "CREATE INDEX batches_producer ON batches (topic_id, partition, producer_id, base_offset)"
                "  WHERE producer_id >= 0;"
                "PRAGMA user_version = 1;");

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    /* migration 2 made the index whole, and migration 18 drops it for the producer snapshot */
    char sql[512];
    schema_sql(f, "batches_producer", sql, sizeof sql);
    assert_string_equal(sql, "");
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_int_equal(l.parts[0].next_offset, 2);
}

static void on_producer(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)topic_id;
    (void)partition;
    int *seqs = ctx;
    seqs[seqs[0]++ + 1] = m->base_sequence;
}

/*
 * A version-15 database (an index by producer, no snapshot tables) is brought forward: the index
 * goes, the snapshot tables come, and the producers' state loads from its batches as before.
 */
static void test_upgrade_from_version_15(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "old", 1);
    uint8_t data[64] = {1};
    for (int i = 0; i < 7; i++) {
        stor_batch_meta m = {.base_offset = 2 * i, .last_offset = 2 * i + 1, .producer_id = 42, .producer_epoch = 1,
                             .base_sequence = 2 * i, .last_sequence = 2 * i + 1, .records_count = 2};
        assert_int_equal(stor_batch_append(f->s, id, 0, &m, data, sizeof data), 0);
    }
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "DROP TRIGGER producer_snapshot_drop_held;"
                         "DROP TRIGGER producer_snapshot_stale;"
                         "DROP TABLE producer_snapshot; DROP TABLE producer_snapshot_end;"
                         "CREATE INDEX batches_producer ON batches (topic_id, partition, producer_id, base_offset);"
                         "PRAGMA user_version = 15;");

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    char sql[512];
    schema_sql(f, "batches_producer", sql, sizeof sql);
    assert_string_equal(sql, "");
    schema_sql(f, "producer_snapshot_drop_held", sql, sizeof sql);
    assert_non_null(strstr(sql, "producer_snapshot_end"));
    int seqs[16] = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer, seqs), 0);
    assert_int_equal(seqs[0], 5);
    for (int i = 0; i < 5; i++) assert_int_equal(seqs[i + 1], 2 * (i + 2));
    /* the first clean stop after the upgrade writes the snapshot the next start reads */
    stor_close(f->s);
    f->s = NULL;
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"), 14);
    fx_open(f);
    memset(seqs, 0, sizeof seqs);
    assert_int_equal(stor_load_producer_batches(f->s, on_producer, seqs), 0);
    assert_int_equal(seqs[0], 5);
    assert_int_equal(seqs[5], 12);
}

/*
 * A version-18 database (snapshot rows without the offsets migration 19's triggers compare) is
 * brought forward: its snapshot is emptied, the first load folds the batches, and the first clean
 * stop writes the new rows.
 */
static void test_upgrade_from_version_18(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "old", 1);
    uint8_t data[64] = {1};
    for (int i = 0; i < 7; i++) {
        stor_batch_meta m = {.base_offset = 2 * i, .last_offset = 2 * i + 1, .producer_id = 42, .producer_epoch = 1,
                             .base_sequence = 2 * i, .last_sequence = 2 * i + 1, .records_count = 2};
        assert_int_equal(stor_batch_append(f->s, id, 0, &m, data, sizeof data), 0);
    }
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path,
                "DROP TRIGGER producer_snapshot_drop_held;"
                "DROP TRIGGER producer_snapshot_stale; DROP TABLE producer_snapshot;"
                "CREATE TABLE producer_snapshot (topic_id INTEGER NOT NULL, partition INTEGER NOT NULL,"
                "  producer_id INTEGER NOT NULL, batches BLOB NOT NULL, PRIMARY KEY (topic_id, partition, producer_id))"
                "  WITHOUT ROWID;"
                "INSERT INTO producer_snapshot VALUES (1, 0, 42, x'');"
                "CREATE TRIGGER producer_snapshot_drop_deleted AFTER DELETE ON batches BEGIN"
                "  DELETE FROM producer_snapshot_end WHERE topic_id = OLD.topic_id AND partition = OLD.partition; END;"
                "PRAGMA user_version = 18;");
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"), 14);

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM producer_snapshot_end"), 0);
    char sql[512];
    schema_sql(f, "producer_snapshot_drop_deleted", sql, sizeof sql);
    assert_string_equal(sql, "");
    int seqs[16] = {0};
    assert_int_equal(stor_load_producer_batches(f->s, on_producer, seqs), 0);
    assert_int_equal(seqs[0], 5);
    for (int i = 0; i < 5; i++) assert_int_equal(seqs[i + 1], 2 * (i + 2));
    stor_close(f->s);
    f->s = NULL;
    assert_int_equal(fx_raw_int(f->path, "SELECT end_offset FROM producer_snapshot_end"), 14);
    assert_int_equal(fx_raw_int(f->path, "SELECT first_offset FROM producer_snapshot"), 4);
    assert_int_equal(fx_raw_int(f->path, "SELECT last_offset FROM producer_snapshot"), 13);
    fx_open(f);
    memset(seqs, 0, sizeof seqs);
    assert_int_equal(stor_load_producer_batches(f->s, on_producer, seqs), 0);
    assert_int_equal(seqs[0], 5);
    assert_int_equal(seqs[5], 12);
}

/*
 * A database of schema 19: migration 1's trigger kept partitions.bytes over every row. Migration
 * 20 counts them all as below bytes_end, and the rows appended after it are summed when read.
 */
static void test_upgrade_from_version_19(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "old", 1);
    for (int i = 0; i < 3; i++) append_one(f->s, id, 0, 2 * i, 2);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0; /* no snapshot at close: the count comes from schema 19's trigger below */
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path,
                "DROP TRIGGER batches_bytes_sub; DROP TRIGGER batches_bytes_update;"
                /* migration 22's triggers read bytes_end; migration 8's come back below */
                "DROP TRIGGER batches_seg_del; DROP TRIGGER batches_seg_move;"
                "ALTER TABLE partitions DROP COLUMN bytes_end;"
                FX_SEG_TRIGGERS_BEFORE_22
                "UPDATE partitions SET bytes = (SELECT sum(size) FROM batches b"
                "  WHERE b.topic_id = partitions.topic_id AND b.partition = partitions.partition);"
                "CREATE TRIGGER batches_bytes_add AFTER INSERT ON batches BEGIN"
                "  UPDATE partitions SET bytes = bytes + NEW.size"
                "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition; END;"
                "CREATE TRIGGER batches_bytes_sub AFTER DELETE ON batches BEGIN"
                "  UPDATE partitions SET bytes = bytes - OLD.size"
                "   WHERE topic_id = OLD.topic_id AND partition = OLD.partition; END;"
                "CREATE TRIGGER batches_bytes_update AFTER UPDATE OF size ON batches BEGIN"
                "  UPDATE partitions SET bytes = bytes - OLD.size + NEW.size"
                "   WHERE topic_id = NEW.topic_id AND partition = NEW.partition; END;"
                "PRAGMA user_version = 19;");
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes FROM partitions WHERE topic_id = 1"), 300);

    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    char sql[512];
    schema_sql(f, "batches_bytes_add", sql, sizeof sql);
    assert_string_equal(sql, "");
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE topic_id = 1"), 6);
    assert_int_equal(stor_partition_bytes(f->s, id, 0), 300);
    append_one(f->s, id, 0, 6, 2);
    assert_int_equal(stor_commit(f->s), 0);
    f->s->producer_snap_due = 0; /* as a kill -9 would */
    stor_close(f->s);
    f->s = NULL;
    fx_open(f);
    /* a start folds what the kill left past bytes_end, with segments.live and .used (migration 22) */
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes FROM partitions WHERE topic_id = 1"), 400);
    assert_int_equal(fx_raw_int(f->path, "SELECT bytes_end FROM partitions WHERE topic_id = 1"), 8);
    assert_int_equal(stor_partition_bytes(f->s, id, 0), 400);
    assert_true(stor_log_start_set(f->s, id, 0, 4) >= 0);
    assert_int_equal(stor_partition_bytes(f->s, id, 0), 200);
    assert_int_equal(stor_commit(f->s), 0);
}

static void test_future_version_refused(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    char sql[64];
    snprintf(sql, sizeof sql, "PRAGMA user_version = %d", stor_schema_latest() + 1);
    fx_raw_exec(f->path, sql);

    char err[512] = "";
    stor *s = (stor *)1;
    assert_int_equal(stor_open(&s, f->path, STOR_SYNC_NORMAL, err, sizeof err), -1);
    assert_null(s);
    assert_non_null(strstr(err, "newer than this mskmock"));
}

static void test_foreign_database_refused(void **state) {
    fx *f = *state;
    char other[160];
    snprintf(other, sizeof other, "%s/other.db", f->dir);
    sqlite3 *db;
    assert_int_equal(sqlite3_open(other, &db), SQLITE_OK);
    assert_int_equal(sqlite3_exec(db, "CREATE TABLE t (x)", NULL, NULL, NULL), SQLITE_OK);
    sqlite3_close(db);

    char err[512] = "";
    stor *s = NULL;
    assert_int_equal(stor_open(&s, other, STOR_SYNC_NORMAL, err, sizeof err), -1);
    assert_non_null(strstr(err, "not an mskmock database"));
}

static void test_bad_sync_refused(void **state) {
    (void)state;
    char err[128] = "";
    stor *s = NULL;
    assert_int_equal(stor_open(&s, ":memory:", (stor_sync)7, err, sizeof err), -1);
    assert_non_null(strstr(err, "sync"));
    /* A NULL error buffer is allowed. */
    assert_int_equal(stor_open(&s, ":memory:", (stor_sync)7, NULL, 0), -1);
}

static void test_memory_database(void **state) {
    (void)state;
    for (int sync = STOR_SYNC_OFF; sync <= STOR_SYNC_FULL; sync++) {
        stor *s = NULL;
        char err[256] = "";
        if (stor_open(&s, ":memory:", (stor_sync)sync, err, sizeof err)) fail_msg("%s", err);
        int64_t id = make_topic(s, "mem", 2);
        append_one(s, id, 1, 0, 3);
        assert_int_equal(stor_commit(s), 0);
        loaded l;
        load_all(s, &l);
        assert_int_equal(l.ntopics, 1);
        assert_int_equal(l.parts[1].next_offset, 3);
        stor_close(s);
    }
}

/* ---- transactions ---- */

static void test_lazy_transaction_and_commit_seq(void **state) {
    fx *f = *state;
    assert_int_equal(stor_commit(f->s), 0); /* nothing open: no-op */
    assert_int_equal(stor_commit_seq(f->s), 0);

    /* Reads do not open a transaction. */
    loaded l;
    load_all(f->s, &l);
    assert_false(stor_in_txn(f->s));

    int64_t id = make_topic(f->s, "t", 1);
    assert_true(stor_in_txn(f->s));
    load_all(f->s, &l); /* the connection sees its own uncommitted writes */
    assert_int_equal(l.ntopics, 1);
    append_one(f->s, id, 0, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    assert_false(stor_in_txn(f->s));
    assert_int_equal(stor_commit_seq(f->s), 1);

    append_one(f->s, id, 0, 1, 1);
    assert_true(stor_in_txn(f->s));
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_commit_seq(f->s), 2);
    assert_int_equal(stor_commit(f->s), 0);
    assert_int_equal(stor_commit_seq(f->s), 2);
}

static void test_committed_data_survives_reopen(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "durable", 2);
    append_one(f->s, id, 1, 0, 5);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_string_equal(l.topics[0].name, "durable");
    assert_int_equal(l.nparts, 2);
    assert_int_equal(l.parts[0].next_offset, 0);
    assert_int_equal(l.parts[1].next_offset, 5);
}

static void test_uncommitted_data_is_gone_after_reopen(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "kept", 1);
    append_one(f->s, id, 0, 0, 2);
    assert_int_equal(stor_commit(f->s), 0);

    append_one(f->s, id, 0, 2, 2);
    make_topic(f->s, "lost", 1);
    assert_int_equal(stor_topic_config_set(f->s, id, "retention.ms", "1"), 0);
    fx_reopen(f); /* close without commit */

    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_string_equal(l.topics[0].name, "kept");
    assert_int_equal(l.nconfigs, 0);
    assert_int_equal(l.parts[0].next_offset, 2);
}

static void test_failed_write_keeps_transaction(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "a", 1);
    /* A constraint error undoes only its own statement. */
    stor_topic dup = {.name = "a", .partitions = 1};
    assert_int_equal(stor_topic_create(f->s, &dup), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "UNIQUE"));
    assert_true(stor_in_txn(f->s));
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_int_equal(l.topics[0].id, id);
}

static void test_dropped_transaction_fails_commit(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "t", 1);
    assert_int_equal(stor_commit(f->s), 0);
    append_one(f->s, id, 0, 0, 1);
    /* What SQLite does after some I/O or disk-full errors: the whole transaction is gone. */
    assert_int_equal(sqlite3_exec(f->s->db, "ROLLBACK", NULL, NULL, NULL), SQLITE_OK);

    stor_batch_meta m = {.base_offset = 1, .last_offset = 1, .producer_id = -1, .records_count = 1};
    uint8_t data[8] = {0};
    assert_int_equal(stor_batch_append(f->s, id, 0, &m, data, sizeof data), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "rolled back"));
    uint64_t seq = stor_commit_seq(f->s);
    assert_int_equal(stor_commit(f->s), -1);
    assert_int_equal(stor_commit_seq(f->s), seq);
    assert_false(stor_in_txn(f->s));

    /* After the failed commit the store works again. */
    append_one(f->s, id, 0, 0, 1);
    assert_int_equal(stor_commit(f->s), 0);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.parts[0].next_offset, 1);
}

static void test_disk_full_never_commits_partially(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "t", 1);
    assert_int_equal(stor_commit(f->s), 0);
    append_one(f->s, id, 0, 0, 1);
    /* the database may not grow: the rows of appends (whose bytes go to a segment) soon need a page */
    assert_int_equal(sqlite3_exec(f->s->db, "PRAGMA max_page_count = 1", NULL, NULL, NULL), SQLITE_OK);
    static uint8_t big[1 << 16];
    int64_t next = 1;
    int rc = 0;
    for (; next < 20000 && rc == 0; next++) {
        stor_batch_meta m = {.base_offset = next, .last_offset = next, .producer_id = -1, .records_count = 1};
        rc = stor_batch_append(f->s, id, 0, &m, big, f->s->segs.enabled ? 64 : sizeof big);
    }
    assert_int_equal(rc, -1);
    assert_non_null(strstr(stor_errmsg(f->s), "full"));
    int64_t kept = next - 1; /* offsets 0 .. next-2 were appended */
    /* Either SQLite kept the earlier appends and they commit, or the commit fails: never a silent loss. */
    rc = stor_commit(f->s);
    fx_reopen(f);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.parts[0].next_offset, rc == 0 ? kept : 0);
}

/* ---- topics ---- */

static void test_topic_round_trip(void **state) {
    fx *f = *state;
    stor_topic t = {.name = "orders", .partitions = 3, .created_ms = 1234567};
    for (int i = 0; i < 16; i++) t.uuid[i] = (uint8_t)(0xa0 + i);
    assert_int_equal(stor_topic_create(f->s, &t), 0);
    int64_t other = make_topic(f->s, "audit", 1);
    assert_int_equal(stor_topic_config_set(f->s, t.id, "retention.ms", "86400000"), 0);
    assert_int_equal(stor_topic_config_set(f->s, t.id, "cleanup.policy", "delete"), 0);
    assert_int_equal(stor_topic_config_set(f->s, t.id, "retention.ms", "3600000"), 0); /* overwrite */
    assert_int_equal(stor_topic_config_set(f->s, other, "max.message.bytes", "100"), 0);
    assert_int_equal(stor_topic_config_set(f->s, other, "max.message.bytes", NULL), 0); /* delete */
    assert_int_equal(stor_topic_config_set(f->s, other, "never.set", NULL), 0);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 2);
    assert_int_equal(l.topics[0].id, t.id);
    assert_string_equal(l.topics[0].name, "orders");
    assert_memory_equal(l.topics[0].uuid, t.uuid, 16);
    assert_int_equal(l.topics[0].partitions, 3);
    assert_int_equal(l.topics[0].created_ms, 1234567);
    assert_string_equal(l.topics[1].name, "audit");

    assert_int_equal(l.nconfigs, 2); /* ordered by key */
    assert_string_equal(l.configs[0].key, "cleanup.policy");
    assert_string_equal(l.configs[0].value, "delete");
    assert_string_equal(l.configs[1].key, "retention.ms");
    assert_string_equal(l.configs[1].value, "3600000");
    assert_int_equal(l.configs[1].topic_id, t.id);

    assert_int_equal(l.nparts, 4);
    for (int p = 0; p < 3; p++) {
        assert_int_equal(l.parts[p].topic_id, t.id);
        assert_int_equal(l.parts[p].partition, p);
        assert_int_equal(l.parts[p].log_start, 0);
        assert_int_equal(l.parts[p].next_offset, 0);
    }
    assert_int_equal(l.parts[3].topic_id, other);
}

static void test_topic_add_partitions(void **state) {
    fx *f = *state;
    int64_t id = make_topic(f->s, "grow", 2);
    assert_int_equal(stor_topic_add_partitions(f->s, id, 5), 0);
    assert_int_equal(stor_topic_add_partitions(f->s, id, 5), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "cannot grow"));
    assert_int_equal(stor_topic_add_partitions(f->s, id, 1), -1);
    assert_int_equal(stor_topic_add_partitions(f->s, id + 100, 9), -1);
    append_one(f->s, id, 4, 0, 1); /* new partitions take batches */
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.topics[0].partitions, 5);
    assert_int_equal(l.nparts, 5);
    assert_int_equal(l.parts[4].partition, 4);
    assert_int_equal(l.parts[4].next_offset, 1);
}

static void test_topic_delete_cascades(void **state) {
    fx *f = *state;
    int64_t gone = make_topic(f->s, "gone", 2);
    int64_t kept = make_topic(f->s, "kept", 1);
    assert_int_equal(stor_topic_config_set(f->s, gone, "retention.ms", "1"), 0);
    append_one(f->s, gone, 0, 0, 3);
    append_one(f->s, gone, 1, 0, 3);
    append_one(f->s, kept, 0, 0, 3);
    assert_int_equal(stor_commit(f->s), 0);

    assert_int_equal(stor_topic_delete(f->s, gone), 0);
    assert_int_equal(stor_topic_delete(f->s, gone), -1);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);

    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_int_equal(l.topics[0].id, kept);
    assert_int_equal(l.nconfigs, 0);
    assert_int_equal(l.nparts, 1);
    assert_int_equal(l.parts[0].next_offset, 3);

    /* No orphan rows anywhere. */
    sqlite3 *db;
    assert_int_equal(sqlite3_open(f->path, &db), SQLITE_OK);
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(db, "SELECT count(*) FROM batches WHERE topic_id = ?", -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, gone);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
    sqlite3_close(db);
}

static void test_topic_create_is_atomic(void **state) {
    fx *f = *state;
    make_topic(f->s, "x", 1);
    stor_topic bad = {.name = NULL, .partitions = 1};
    assert_int_equal(stor_topic_create(f->s, &bad), -1);
    stor_topic neg = {.name = "neg", .partitions = -1};
    assert_int_equal(stor_topic_create(f->s, &neg), -1);
    stor_topic dup = {.name = "x", .partitions = 4};
    assert_int_equal(stor_topic_create(f->s, &dup), -1);
    assert_int_equal(stor_commit(f->s), 0);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_int_equal(l.nparts, 1);

    /*
     * Make the third partition insert of the next topic collide (a stray row
     * planted behind stor's back): the topic row and the first two partitions
     * must be rolled back with it, while earlier writes of the transaction stay.
     */
    int64_t before = make_topic(f->s, "before", 1);
    assert_int_equal(stor_commit(f->s), 0);
    int64_t next_id = before + 1;
    char sql[128];
    snprintf(sql, sizeof sql, "INSERT INTO partitions (topic_id, partition) VALUES (%lld, 2)", (long long)next_id);
    fx_raw_exec(f->path, sql);
    assert_int_equal(stor_topic_config_set(f->s, before, "retention.ms", "5"), 0);
    stor_topic y = {.name = "y", .partitions = 4};
    assert_int_equal(stor_topic_create(f->s, &y), -1);
    assert_true(stor_in_txn(f->s));
    assert_int_equal(stor_commit(f->s), 0);
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 2);
    assert_string_equal(l.topics[1].name, "before");
    assert_int_equal(l.nconfigs, 1);
    assert_int_equal(l.nparts, 3); /* x/0, before/0, the stray row */
    assert_int_equal(l.parts[2].topic_id, next_id);
    assert_int_equal(l.parts[2].partition, 2);
}

static void test_config_for_missing_topic_fails(void **state) {
    fx *f = *state;
    assert_int_equal(stor_topic_config_set(f->s, 42, "k", "v"), -1);
    assert_non_null(strstr(stor_errmsg(f->s), "FOREIGN KEY"));
    assert_int_equal(stor_topic_config_set(f->s, 42, NULL, "v"), -1);
}

static void test_load_null_callbacks(void **state) {
    fx *f = *state;
    make_topic(f->s, "t", 2);
    loaded l = {0};
    stor_load_cb cb = {.ctx = &l, .partition = on_partition};
    assert_int_equal(stor_load(f->s, &cb), 0);
    assert_int_equal(l.ntopics, 0);
    assert_int_equal(l.nparts, 2);
    assert_int_equal(stor_load(f->s, NULL), -1);
}

/* Regression (issue 11): a database truncated to 0 bytes opened as a new, empty cluster. */
static void test_zero_length_file_refused(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    assert_int_equal(truncate(f->path, 0), 0);
    char err[512] = "";
    stor *s = (stor *)1;
    assert_int_equal(stor_open(&s, f->path, STOR_SYNC_NORMAL, err, sizeof err), -1);
    assert_null(s);
    assert_non_null(strstr(err, "exists but is empty (0 bytes)"));
    FILE *fp = fopen(f->path, "rb");
    assert_non_null(fp);
    assert_int_equal(fseek(fp, 0, SEEK_END), 0);
    assert_int_equal(ftell(fp), 0); /* untouched */
    fclose(fp);
}

/* Regression (issue 11): the error named "PRAGMA synchronous = OFF" for a file that is no database. */
static void test_damaged_header_names_the_read(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    FILE *fp = fopen(f->path, "r+b");
    assert_non_null(fp);
    fputs("definitely not the SQLite format 3 header, nor anything like it", fp);
    fclose(fp);
    char err[512] = "";
    stor *s = NULL;
    assert_int_equal(stor_open(&s, f->path, STOR_SYNC_NORMAL, err, sizeof err), -1);
    assert_non_null(strstr(err, "reading the database header: file is not a database"));
    assert_null(strstr(err, "synchronous"));
}

static void test_check_sound_database(void **state) {
    fx *f = *state;
    make_topic(f->s, "t", 2);
    assert_int_equal(stor_commit(f->s), 0);
    char err[256];
    assert_int_equal(stor_check(f->s, 5000, err, sizeof err), 0);
    assert_int_equal(stor_check(f->s, 0, err, sizeof err), 1); /* no budget: not checked */
}

typedef struct leaders {
    int n;
    int64_t topic_id[8];
    int32_t partition[8], leader[8], epoch[8];
} leaders;

static void on_leader(void *ctx, int64_t topic_id, int32_t partition, int32_t leader, int32_t epoch) {
    leaders *l = ctx;
    assert_true(l->n < 8);
    l->topic_id[l->n] = topic_id, l->partition[l->n] = partition, l->leader[l->n] = leader, l->epoch[l->n] = epoch;
    l->n++;
}

/* A moved partition leader and its epoch survive a reopen, the last write wins, and they go with the topic. */
static void test_partition_leaders_round_trip(void **state) {
    fx *f = *state;
    int64_t a = make_topic(f->s, "a", 3), b = make_topic(f->s, "b", 1);
    assert_int_equal(stor_leader_put(f->s, a, 1, 96, 1), 0);
    assert_int_equal(stor_leader_put(f->s, a, 1, 153, 2), 0);
    assert_int_equal(stor_leader_put(f->s, b, 0, 41, 5), 0);
    assert_int_equal(stor_leader_put(f->s, b, 0, 41, -1), -1);
    assert_int_equal(stor_leader_put(f->s, a, 7, 41, 1), -1); /* no such partition */
    assert_int_equal(stor_commit(f->s), 0);
    stor_close(f->s);
    f->s = NULL;
    fx_open(f);
    leaders l = {0};
    stor_load_cb cb = {.ctx = &l, .leader = on_leader};
    assert_int_equal(stor_load(f->s, &cb), 0);
    assert_int_equal(l.n, 2);
    for (int i = 0; i < 2; i++) {
        bool is_a = l.topic_id[i] == a;
        assert_int_equal(l.partition[i], is_a ? 1 : 0);
        assert_int_equal(l.leader[i], is_a ? 153 : 41);
        assert_int_equal(l.epoch[i], is_a ? 2 : 5);
    }
    assert_int_equal(stor_topic_delete(f->s, a), 0);
    assert_int_equal(stor_commit(f->s), 0);
    memset(&l, 0, sizeof l);
    assert_int_equal(stor_load(f->s, &cb), 0);
    assert_int_equal(l.n, 1);
    assert_int_equal(l.topic_id[0], b);
}

/* Regression (issue 11): Debian's SECURE_DELETE made a topic deletion rewrite every freed page. */
static void test_secure_delete_off(void **state) {
    fx *f = *state;
    sqlite3_stmt *st = NULL;
    assert_int_equal(sqlite3_prepare_v2(f->s->db, "PRAGMA secure_delete", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    sqlite3_finalize(st);
}

/* A new database file gets 1 KiB pages (stor.c, stor_set_new_page_size), in either journal mode. */
static void test_new_file_has_1k_pages(void **state) {
    fx *f = *state;
    assert_int_equal(fx_raw_int(f->path, "PRAGMA page_size"), 1024);
    fx *off = fx_new("stor_basic_off", STOR_SYNC_OFF);
    assert_int_equal(fx_raw_int(off->path, "PRAGMA page_size"), 1024);
    fx_teardown((void **)&off);
}

/* A database made with 4 KiB pages (before the change) keeps them and its rows; nothing VACUUMs it. */
static void test_old_file_keeps_its_page_size(void **state) {
    fx *f = *state;
    stor_close(f->s);
    f->s = NULL;
    unlink(f->path);
    char side[160];
    snprintf(side, sizeof side, "%s-wal", f->path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", f->path);
    unlink(side);
    fx_raw_exec(f->path, "PRAGMA page_size = 4096; CREATE TABLE keep (x); DROP TABLE keep;");
    assert_int_equal(fx_raw_int(f->path, "PRAGMA page_size"), 4096);
    fx_open(f);
    int64_t id = make_topic(f->s, "old", 2);
    assert_int_equal(stor_commit(f->s), 0);
    fx_reopen(f);
    assert_int_equal(fx_raw_int(f->path, "PRAGMA page_size"), 4096);
    loaded l;
    load_all(f->s, &l);
    assert_int_equal(l.ntopics, 1);
    assert_int_equal(l.topics[0].id, id);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_fresh_file_is_migrated),
        T(test_reopen_keeps_version),
        T(test_fresh_schema_is_the_migration_chains),
        T(test_upgrade_from_version_1),
        T(test_upgrade_from_version_15),
        T(test_upgrade_from_version_18),
        T(test_upgrade_from_version_19),
        T(test_future_version_refused),
        T(test_foreign_database_refused),
        T(test_bad_sync_refused),
        T(test_zero_length_file_refused),
        T(test_damaged_header_names_the_read),
        T(test_check_sound_database),
        T(test_secure_delete_off),
        T(test_new_file_has_1k_pages),
        T(test_old_file_keeps_its_page_size),
        T(test_memory_database),
        T(test_lazy_transaction_and_commit_seq),
        T(test_committed_data_survives_reopen),
        T(test_uncommitted_data_is_gone_after_reopen),
        T(test_failed_write_keeps_transaction),
        T(test_dropped_transaction_fails_commit),
        T(test_disk_full_never_commits_partially),
        T(test_topic_round_trip),
        T(test_topic_add_partitions),
        T(test_topic_delete_cascades),
        T(test_topic_create_is_atomic),
        T(test_config_for_missing_topic_fails),
        T(test_load_null_callbacks),
        T(test_partition_leaders_round_trip),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
