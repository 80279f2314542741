/*
 * stor: the sparse time index (stor_time_index.c, migration 17). Every look-up is checked against
 * the answer worked out from the batch rows themselves (what the dense index batches_time gave):
 * timestamps out of order and equal, targets between entries, after DeleteRecords, retention and
 * compaction removed, lowered or raised batches, across a rollback and a restart, and after an upgrade
 * from a version-16 database.
 */
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

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_time_index", STOR_SYNC_OFF, 2);
    return 0;
}

static stor_batch_meta meta(int64_t base, int32_t count, int64_t max_ts) {
    return (stor_batch_meta){.base_offset = base,
                             .last_offset = base + count - 1,
                             .max_timestamp = max_ts,
                             .producer_id = -1,
                             .producer_epoch = -1,
                             .base_sequence = -1,
                             .last_sequence = -1,
                             .records_count = count};
}

static void append(fx *f, int32_t partition, int64_t base, int32_t count, int64_t max_ts, size_t len) {
    static uint8_t buf[2000];
    memset(buf, (int)(base & 0xff), len);
    stor_batch_meta m = meta(base, count, max_ts);
    if (stor_batch_append(f->s, f->topic, partition, &m, buf, len) != 0) fail_msg("append: %s", stor_errmsg(f->s));
}

static void must(fx *f, int rc) {
    if (rc != 0) fail_msg("%s", stor_errmsg(f->s));
}

/* ---- the answers worked out from the rows ---- */

typedef struct row {
    int64_t base, last, ts;
} row;

static int rows_of(fx *f, int32_t partition, row *out, int cap) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db,
                                        "SELECT base_offset, last_offset, max_timestamp FROM batches"
                                        " WHERE topic_id = ?1 AND partition = ?2 ORDER BY base_offset",
                                        -1, &st, NULL),
                     SQLITE_OK);
    sqlite3_bind_int64(st, 1, f->topic);
    sqlite3_bind_int(st, 2, partition);
    int n = 0;
    while (sqlite3_step(st) == SQLITE_ROW) {
        assert_true(n < cap);
        out[n++] = (row){sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1), sqlite3_column_int64(st, 2)};
    }
    sqlite3_finalize(st);
    return n;
}

static int64_t entries(fx *f) {
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db, "SELECT count(*) FROM batch_times", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    int64_t n = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* Every target from below the smallest to past the largest timestamp, and MAX_TIMESTAMP. */
static void check_partition(fx *f, int32_t partition, int64_t ts_lo, int64_t ts_hi) {
    static row r[4096];
    int n = rows_of(f, partition, r, 4096);
    for (int64_t t = ts_lo; t <= ts_hi; t++) {
        int want = -1;
        for (int i = 0; i < n && want < 0; i++)
            if (r[i].ts >= t) want = i;
        int64_t off = -7, ts = -7;
        int rc = stor_offset_for_time(f->s, f->topic, partition, t, &off, &ts);
        if (want < 0 && rc != 0) fail_msg("target %lld: found %lld, expected none", (long long)t, (long long)off);
        if (want >= 0 && (rc != 1 || off != r[want].base || ts != r[want].ts))
            fail_msg("target %lld: rc %d offset %lld ts %lld, expected %lld ts %lld", (long long)t, rc,
                     (long long)off, (long long)ts, (long long)r[want].base, (long long)r[want].ts);
    }
    int best = -1;
    for (int i = 0; i < n; i++)
        if (best < 0 || r[i].ts > r[best].ts) best = i;
    int64_t off = -7, ts = -7;
    int rc = stor_max_timestamp(f->s, f->topic, partition, &off, &ts);
    if (best < 0) {
        assert_int_equal(rc, 0);
        return;
    }
    assert_int_equal(rc, 1);
    assert_int_equal(off, r[best].last);
    assert_int_equal(ts, r[best].ts);
}

/* 300 batches of 100..1900 bytes, timestamps going up, down, and repeated. */
static void append_mixed(fx *f, int32_t partition, int64_t *next) {
    for (int i = 0; i < 300; i++) {
        int64_t ts = 1000 + (i * 7919) % 500;  /* out of order */
        if (i % 10 < 3) ts = 1200;             /* runs of equal timestamps */
        if (i == 150) ts = 1600;               /* one far ahead */
        size_t len = 100 + (size_t)(i * 613 % 1800);
        append(f, partition, *next, 1 + i % 4, ts, len);
        *next += 1 + i % 4;
    }
}

static void test_empty_partition(void **state) {
    fx *f = *state;
    int64_t off = -7, ts = -7;
    assert_int_equal(stor_offset_for_time(f->s, f->topic, 0, 0, &off, &ts), 0);
    assert_int_equal(stor_max_timestamp(f->s, f->topic, 0, &off, &ts), 0);
    assert_int_equal(off, -7);
}

/* The index is sparse: about one entry per 4 KiB of log, not one per batch; answers unchanged. */
static void test_sparse_and_exact(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_mixed(f, 0, &next);
    must(f, stor_commit(f->s));
    int64_t bytes = stor_partition_bytes(f->s, f->topic, 0);
    int64_t n = entries(f);
    assert_true(n >= bytes / (2 * STOR_TIME_INTERVAL_BYTES));
    assert_true(n <= bytes / STOR_TIME_INTERVAL_BYTES + 1);
    assert_true(n < 300 / 4);
    check_partition(f, 0, 900, 1700);
    check_partition(f, 1, 900, 1700);
}

/* Targets between two entries and equal to an entry's timestamp, with all timestamps equal. */
static void test_equal_timestamps(void **state) {
    fx *f = *state;
    for (int i = 0; i < 100; i++) append(f, 0, i, 1, 500, 1000);
    must(f, stor_commit(f->s));
    assert_true(entries(f) > 5);
    check_partition(f, 0, 498, 502);
    append(f, 0, 100, 1, 501, 100);
    check_partition(f, 0, 498, 503);
}

/* DeleteRecords and retention move the log start: entries below it go, answers stay exact. */
static void test_after_log_start_moves(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_mixed(f, 0, &next);
    must(f, stor_commit(f->s));
    int64_t before = entries(f);
    /* the batch holding the far-ahead timestamp (1600) and much before it go */
    assert_true(stor_log_start_set(f->s, f->topic, 0, next / 2 + 40) > 0);
    must(f, stor_commit(f->s));
    assert_true(entries(f) < before);
    check_partition(f, 0, 900, 1700);
    /* mid-batch: the batch holding the new log start stays */
    assert_true(stor_log_start_set(f->s, f->topic, 0, next - 3) >= 0);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 900, 1700);
    /* everything */
    assert_true(stor_log_start_set(f->s, f->topic, 0, next) > 0);
    must(f, stor_commit(f->s));
    assert_int_equal(entries(f), 0);
    check_partition(f, 0, 900, 1700);
    append(f, 0, next, 1, 10, 100);
    check_partition(f, 0, 0, 20);
}

/* Compaction removes batches and lowers their max timestamps: the entries still bound them. */
static void test_after_compaction(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_mixed(f, 0, &next);
    must(f, stor_commit(f->s));
    static row r[4096];
    int n = rows_of(f, 0, r, 4096);
    uint8_t small[80] = {0};
    for (int i = 0; i < n; i += 3) must(f, stor_batch_delete(f->s, f->topic, 0, r[i].base));
    for (int i = 1; i < n; i += 3) {
        int64_t lowered = r[i].ts - 150;
        assert_int_equal(stor_batch_replace(f->s, f->topic, 0, r[i].base, lowered, 1, small, sizeof small), 1);
    }
    must(f, stor_commit(f->s));
    check_partition(f, 0, 700, 1700);
}

/*
 * The cleaner takes a rebuilt header's max timestamp (broker/topic/compact.c), which is higher
 * than the stored one when the producer's header understated its records: the entries at and
 * past the batch are raised, or a look-up between the two timestamps would skip the batch.
 */
static void test_compaction_raising_a_max_timestamp(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_mixed(f, 0, &next);
    must(f, stor_commit(f->s));
    static row r[4096];
    uint8_t small[80] = {0};
    int n = rows_of(f, 0, r, 4096);
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, r[n / 3].base, 1650, 1, small, sizeof small), 1);
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, r[n - 2].base, 1700, 1, small, sizeof small), 1);
    for (int i = 0; i < 5; i++) append(f, 0, r[n - 1].last + 1 + i, 1, 900, 1000);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 700, 1750);
}

/* A rolled-back commit's entries are gone with it; the state in memory is loaded again. */
static void test_after_rollback_and_restart(void **state) {
    fx *f = *state;
    int64_t next = 0;
    for (int i = 0; i < 20; i++, next++) append(f, 0, next, 1, 100 + i, 1000);
    must(f, stor_commit(f->s));
    /* an open transaction lost: its rows and entries go */
    for (int i = 0; i < 20; i++) append(f, 0, next + i, 1, 5000, 1000);
    stor_close(f->s);
    f->s = NULL;
    fx_open(f);
    check_partition(f, 0, 90, 130);
    for (int i = 0; i < 40; i++, next++) append(f, 0, next, 1, 50 + i, 1000);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 40, 5001);
    fx_reopen(f);
    check_partition(f, 0, 40, 5001);
    /* a failed operation rolls its savepoint back: the next append reloads the partition's state */
    assert_int_equal(stor_log_start_set(f->s, f->topic, 7, 1), -1);
    for (int i = 0; i < 40; i++, next++) append(f, 0, next, 1, 60 + i, 1000);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 40, 5001);
}

/* A topic deleted and another made with its id starts an index of its own. */
static void test_topic_deleted(void **state) {
    fx *f = *state;
    int64_t next = 0;
    append_mixed(f, 0, &next);
    must(f, stor_commit(f->s));
    must(f, stor_topic_delete(f->s, f->topic));
    must(f, stor_commit(f->s));
    assert_int_equal(entries(f), 0);
    stor_topic t = {.name = "t2", .partitions = 1, .created_ms = 1};
    if (stor_topic_create(f->s, &t) != 0 || stor_commit(f->s) != 0) fail_msg("topic: %s", stor_errmsg(f->s));
    f->topic = t.id;
    for (int i = 0; i < 30; i++) append(f, 0, i, 1, 10 + i, 1000);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 0, 50);
}

/* A version-16 database (a dense batches_time index, no batch_times) is brought forward. */
static void test_upgrade_from_version_16(void **state) {
    fx *f = *state;
    int64_t next = 0, next1 = 0;
    append_mixed(f, 0, &next);
    append_mixed(f, 1, &next1);
    must(f, stor_commit(f->s));
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "DROP TABLE batch_times;"
                         "CREATE INDEX batches_time ON batches (topic_id, partition, max_timestamp, base_offset);"
                         "PRAGMA user_version = 16;");
    fx_open(f);
    assert_int_equal(stor_schema_version(f->s), stor_schema_latest());
    assert_int_equal(fx_raw_int(f->path, "SELECT count(*) FROM sqlite_master WHERE name = 'batches_time'"), 0);
    int64_t bytes = stor_partition_bytes(f->s, f->topic, 0) + stor_partition_bytes(f->s, f->topic, 1);
    assert_true(entries(f) >= bytes / STOR_TIME_INTERVAL_BYTES - 2);
    check_partition(f, 0, 900, 1700);
    check_partition(f, 1, 900, 1700);
    /* appends continue the rebuilt index */
    for (int i = 0; i < 20; i++, next++) append(f, 0, next, 1, 1700 + i, 1000);
    must(f, stor_commit(f->s));
    check_partition(f, 0, 900, 1800);
    /* migration 17 run again (user_version lowered by hand) only adds entries, which hold as well */
    int64_t n = entries(f);
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "PRAGMA user_version = 16;");
    fx_open(f);
    assert_true(entries(f) >= n);
    check_partition(f, 0, 900, 1800);
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_empty_partition),       T(test_sparse_and_exact),           T(test_equal_timestamps),
        T(test_after_log_start_moves), T(test_after_compaction),           T(test_after_rollback_and_restart),
        T(test_topic_deleted),         T(test_upgrade_from_version_16),    T(test_compaction_raising_a_max_timestamp),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
