/*
 * An answer leaves only once what was written for it is stored (net/req.c's req_respond): a
 * request that wrote, or was completed by a write, since it started waits for the open storage
 * transaction's commit; one that wrote nothing is answered at once, transaction open or not.
 * Driven in-process through pipeline_dispatch, with the store in a file that a second handle
 * reads, as sqlite3 or a restarted broker would.
 *
 * Regression (test_create_topics_answer_waits_for_its_commit): CreateTopics, CreatePartitions
 * and the config changes answered as soon as their handler ran, and the loop's pump wrote the
 * answer before the iteration's commit: a read-only sqlite3 reader beside the broker found no
 * topic after `mskmock topic create` returned (CI, tests/integration/test_data_dir_lock.py),
 * and a kill -9 in that window would have lost a topic whose creation was acknowledged.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "broker_harness.h"
#include "fixtures.h"

typedef struct stored {
    int topics, partitions, configs;
} stored;

typedef struct fixture {
    harness *h;
    conn *c;
    char dir[64], path[128];
} fixture;

/* The harness on a database file instead of memory, so that a second handle sees what is committed. */
static void open_on_file(fixture *f) {
    char err[256];
    f->h = h_new(NULL);
    tmp_dir_new(f->dir, sizeof f->dir, "answer-after-commit");
    snprintf(f->path, sizeof f->path, "%s/mskmock.db", f->dir);
    stor_close(f->h->s.st);
    if (stor_open(&f->h->s.st, f->path, STOR_SYNC_OFF, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    f->c = h_conn(f->h, NULL);
}

static void close_fixture(fixture *f) {
    h_free(f->h);
    tmp_dir_remove(f->dir);
}

static int count_rows(sqlite3 *db, const char *table) {
    char sql[96];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM %s", table);
    sqlite3_stmt *st = NULL;
    if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK || sqlite3_step(st) != SQLITE_ROW)
        fail_msg("%s: %s", sql, sqlite3_errmsg(db));
    int n = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return n;
}

/* What a read-only reader of the file sees beside the broker, as sqlite3 would: only committed rows. */
static stored read_stored(const fixture *f) {
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(f->path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) fail_msg("open %s read-only", f->path);
    stored got = {count_rows(db, "topics"), count_rows(db, "partitions"), count_rows(db, "topic_configs")};
    sqlite3_close(db);
    return got;
}

static req *create_topics(fixture *f, const char *name, bool validate_only) {
    kp_create_topics_creatable_topic qt = {.name = kp_str_c(name), .num_partitions = 2, .replication_factor = 1};
    qt.assignments.n = 0;
    qt.configs.n = 0;
    kp_create_topics_request q = {.timeout_ms = 5000, .validate_only = validate_only};
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(f->h, f->c, "admin", 19, 5, &q);
    kp_create_topics_response *resp = h_resp(f->h, r);
    assert_int_equal(resp->topics.v[0].error_code, 0);
    return r;
}

static req *metadata(fixture *f, conn *c) {
    kp_metadata_request q = {0};
    q.topics.n = -1; /* all */
    return h_send(f->h, c, "admin", 3, 9, &q);
}

static void test_create_topics_answer_waits_for_its_commit(void **state) {
    (void)state;
    fixture f;
    open_on_file(&f);
    req *r = create_topics(&f, "t", false);
    assert_int_equal(r->state, REQ_WAIT_COMMIT);
    assert_int_equal(read_stored(&f).topics, 0); /* what the answer would have acknowledged, not yet stored */
    assert_int_equal(topic_commit_now(&f.h->s), 0);
    assert_true(stor_commit_seq(f.h->s.st) > r->commit_seq); /* the pump lets it go now */
    stored got = read_stored(&f);
    assert_int_equal(got.topics, 1);
    assert_int_equal(got.partitions, 2);
    close_fixture(&f);
}

static void test_create_partitions_and_config_changes_wait_for_their_commit(void **state) {
    (void)state;
    fixture f;
    open_on_file(&f);
    create_topics(&f, "t", false);
    assert_int_equal(topic_commit_now(&f.h->s), 0);

    kp_create_partitions_topic pt = {.name = kp_str_c("t"), .count = 3};
    pt.assignments.n = -1;
    kp_create_partitions_request pq = {.timeout_ms = 5000};
    pq.topics.n = 1;
    pq.topics.v = &pt;
    req *r = h_send(f.h, f.c, "admin", 37, 2, &pq);
    assert_int_equal(((kp_create_partitions_response *)h_resp(f.h, r))->results.v[0].error_code, 0);
    assert_int_equal(r->state, REQ_WAIT_COMMIT);
    assert_int_equal(read_stored(&f).partitions, 2);
    assert_int_equal(topic_commit_now(&f.h->s), 0);
    assert_int_equal(read_stored(&f).partitions, 3);

    kp_incremental_alter_configs_alterable_config ac = {.name = kp_str_c("retention.ms"), .config_operation = 0,
                                                        .value = kp_str_c("3600000")};
    kp_incremental_alter_configs_alter_configs_resource res = {.resource_type = 2, .resource_name = kp_str_c("t")};
    res.configs.n = 1;
    res.configs.v = &ac;
    kp_incremental_alter_configs_request iq = {0};
    iq.resources.n = 1;
    iq.resources.v = &res;
    r = h_send(f.h, f.c, "admin", 44, 1, &iq);
    assert_int_equal(((kp_incremental_alter_configs_response *)h_resp(f.h, r))->responses.v[0].error_code, 0);
    assert_int_equal(r->state, REQ_WAIT_COMMIT);
    int before = read_stored(&f).configs;
    assert_int_equal(topic_commit_now(&f.h->s), 0);
    assert_int_equal(read_stored(&f).configs, before + 1);
    close_fixture(&f);
}

/* Reads are not held behind another connection's uncommitted write, and writing nothing holds nothing. */
static void test_answers_that_wrote_nothing_go_at_once(void **state) {
    (void)state;
    fixture f;
    open_on_file(&f);
    conn *reader = h_conn(f.h, "127.0.0.1:5001");
    req *created = create_topics(&f, "t", false);
    assert_true(stor_in_txn(f.h->s.st));
    req *md = metadata(&f, reader);
    assert_int_equal(md->state, REQ_READY);
    req *checked = create_topics(&f, "u", true); /* validate_only */
    assert_int_equal(checked->state, REQ_READY);
    assert_int_equal(created->state, REQ_WAIT_COMMIT);
    assert_int_equal(topic_commit_now(&f.h->s), 0);
    close_fixture(&f);
}

#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_create_topics_answer_waits_for_its_commit),
        T(test_create_partitions_and_config_changes_wait_for_their_commit),
        T(test_answers_that_wrote_nothing_go_at_once),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
