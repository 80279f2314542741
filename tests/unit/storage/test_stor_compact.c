/*
 * The log cleaner's storage (stor_compact.c) and the replication factor kept with a topic:
 * batches rewritten in place keep their offsets and producer columns while the partition's
 * byte count follows, a removed batch leaves a gap reads step over, the checkpoint and dirty
 * part read back, topic deletion takes the new rows with it, and every statement seeks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "fixtures.h"
#include "stor_int.h"

static int fx_setup(void **state) {
    *state = fx_new_with_topic("stor_compact", STOR_SYNC_OFF, 2);
    return 0;
}

static void must(stor *s, int rc) {
    if (rc < 0) fail_msg("storage: %s", stor_errmsg(s));
}

/* A batch of `size` bytes (contents do not matter to storage) at base with `count` records. */
static void append(fx *f, int64_t base, int32_t count, int64_t pid, size_t size, int64_t ts) {
    uint8_t data[512];
    memset(data, (int)base, sizeof data);
    stor_batch_meta m = {base, base + count - 1, ts, pid, 0, pid >= 0 ? (int32_t)base : -1,
                         pid >= 0 ? (int32_t)(base + count - 1) : -1, count, false};
    must(f->s, stor_batch_append(f->s, f->topic, 0, &m, data, size));
}

typedef struct seen {
    int n;
    stor_batch_meta m[8];
    size_t len[8];
} seen;

static bool collect(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    (void)data;
    seen *s = ctx;
    s->m[s->n] = *m;
    s->len[s->n++] = len;
    return true;
}

static void test_replace_delete_and_the_byte_count(void **state) {
    fx *f = *state;
    append(f, 0, 10, 5000, 400, 100);
    append(f, 10, 10, -1, 300, 200);
    append(f, 20, 10, 5000, 200, 300);
    must(f->s, stor_commit(f->s));
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 900);
    uint8_t small[61] = {1};
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, 0, 50, 2, small, sizeof small), 1);
    assert_int_equal(stor_txn_kinds(f->s), STOR_TXN_BATCHES); /* a failed commit of it can be survived */
    must(f->s, stor_batch_delete(f->s, f->topic, 0, 10));
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, 99, 50, 2, small, sizeof small), 0); /* no such batch */
    must(f->s, stor_commit(f->s));
    assert_int_equal(stor_partition_bytes(f->s, f->topic, 0), 61 + 200);
    seen s = {0};
    must(f->s, stor_batch_read(f->s, f->topic, 0, 5, INT64_MAX, collect, &s));
    assert_int_equal(s.n, 2);
    assert_int_equal(s.m[0].base_offset, 0); /* offsets and producer columns as they were */
    assert_int_equal(s.m[0].last_offset, 9);
    assert_int_equal(s.m[0].producer_id, 5000);
    assert_int_equal(s.m[0].last_sequence, 9);
    assert_int_equal(s.m[0].records_count, 2);
    assert_int_equal(s.m[0].max_timestamp, 50);
    assert_int_equal(s.len[0], 61);
    assert_int_equal(s.m[1].base_offset, 20); /* the gap at 10..19 is stepped over */
    s.n = 0;
    must(f->s, stor_batch_read(f->s, f->topic, 0, 12, INT64_MAX, collect, &s));
    assert_int_equal(s.n, 1);
    assert_int_equal(s.m[0].base_offset, 20);
    int64_t last = -1;
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 5000, &last), 1);
    assert_int_equal(last, 20);
    assert_int_equal(stor_producer_last_data(f->s, f->topic, 0, 77, &last), 0);
    uint8_t none[1];
    assert_int_equal(stor_batch_replace(f->s, f->topic, 0, 0, 50, -1, none, 1), -1);
}

static void test_checkpoint_and_dirty_part(void **state) {
    fx *f = *state;
    stor_clean_state cs;
    must(f->s, stor_clean_state_get(f->s, f->topic, 0, &cs));
    assert_int_equal(cs.cleaned_to, 0);
    assert_int_equal(cs.bytes, 0);
    assert_int_equal(cs.dirty_bytes, 0);
    assert_int_equal(cs.first_dirty_ts, -1);
    append(f, 0, 10, -1, 100, 1000);
    append(f, 10, 10, -1, 300, 2000);
    must(f->s, stor_cleaned_set(f->s, f->topic, 0, 10));
    must(f->s, stor_commit(f->s));
    must(f->s, stor_clean_state_get(f->s, f->topic, 0, &cs));
    assert_int_equal(cs.cleaned_to, 10);
    assert_int_equal(cs.bytes, 400);
    assert_int_equal(cs.dirty_bytes, 300);
    assert_int_equal(cs.first_dirty_ts, 2000);
    fx_reopen(f);
    must(f->s, stor_cleaned_set(f->s, f->topic, 0, 20));
    must(f->s, stor_commit(f->s));
    must(f->s, stor_clean_state_get(f->s, f->topic, 0, &cs));
    assert_int_equal(cs.cleaned_to, 20);
    assert_int_equal(cs.dirty_bytes, 0);
    assert_int_equal(stor_clean_state_get(f->s, f->topic, 9, &cs), -1); /* no such partition */
}

static void on_topic(void *ctx, const stor_topic *t) {
    int16_t *rf = ctx;
    rf[t->id % 8] = t->replication_factor;
}

static void test_replication_factor_round_trip_and_cascades(void **state) {
    fx *f = *state;
    stor_topic t3 = {.name = "rf3", .partitions = 1, .created_ms = 1, .replication_factor = 3};
    stor_topic t1 = {.name = "rf1", .partitions = 1, .created_ms = 1, .replication_factor = 1};
    must(f->s, stor_topic_create(f->s, &t3));
    must(f->s, stor_topic_create(f->s, &t1));
    must(f->s, stor_cleaned_set(f->s, t3.id, 0, 5));
    must(f->s, stor_commit(f->s));
    fx_reopen(f);
    int16_t rf[8] = {0};
    stor_load_cb cb = {.ctx = rf, .topic = on_topic};
    must(f->s, stor_load(f->s, &cb));
    assert_int_equal(rf[f->topic % 8], 0); /* made without one: the broker's default applies */
    assert_int_equal(rf[t3.id % 8], 3);
    assert_int_equal(rf[t1.id % 8], 1);
    must(f->s, stor_topic_delete(f->s, t3.id));
    must(f->s, stor_commit(f->s));
    sqlite3_stmt *st;
    assert_int_equal(sqlite3_prepare_v2(f->s->db, "SELECT (SELECT count(*) FROM partition_cleaned),"
                                        " (SELECT count(*) FROM topic_replication)", -1, &st, NULL), SQLITE_OK);
    assert_int_equal(sqlite3_step(st), SQLITE_ROW);
    assert_int_equal(sqlite3_column_int(st, 0), 0);
    assert_int_equal(sqlite3_column_int(st, 1), 1);
    sqlite3_finalize(st);
}

static void test_query_plans(void **state) {
    fx *f = *state;
    static const stor_stmt_id ids[] = {STOR_BATCH_REPLACE, STOR_BATCH_DELETE_ONE, STOR_CLEAN_STATE,
                                       STOR_CLEAN_DIRTY,   STOR_CLEANED_SET,      STOR_TOPIC_RF_INSERT};
    for (size_t i = 0; i < sizeof ids / sizeof ids[0]; i++) {
        char eqp[2048];
        snprintf(eqp, sizeof eqp, "EXPLAIN QUERY PLAN %s", stor_stmt_sql[ids[i]]);
        sqlite3_stmt *st;
        if (sqlite3_prepare_v2(f->s->db, eqp, -1, &st, NULL) != SQLITE_OK) fail_msg("%s", sqlite3_errmsg(f->s->db));
        while (sqlite3_step(st) == SQLITE_ROW) {
            const char *detail = (const char *)sqlite3_column_text(st, 3);
            if (strncmp(detail, "SCAN", 4) == 0 || strstr(detail, "TEMP B-TREE"))
                fail_msg("statement %d plans: %s", ids[i], detail);
        }
        sqlite3_finalize(st);
    }
}

#define T(fn) cmocka_unit_test_setup_teardown(fn, fx_setup, fx_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_replace_delete_and_the_byte_count),
        T(test_checkpoint_and_dirty_part),
        T(test_replication_factor_round_trip_and_cascades),
        T(test_query_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
