/*
 * stor: the index rebuilt from the segment files inside a salvage (stor_rebuild.c): a topic
 * whose row was lost comes back, and a rebuilt partition has the batch rows, log start and
 * transaction index the broker wrote.
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

#include "fixtures.h"
#include "kp_batch.h"
#include "protocol/rdk_batches.h"
#include "stor.h"
#include "stor_int.h"

static int setup(void **state) {
    *state = fx_new_with_topic("stor_rebuild", STOR_SYNC_NORMAL, 1);
    return 0;
}

static void be64(uint8_t *p, int64_t v) {
    for (int i = 0; i < 8; i++) p[i] = (uint8_t)((uint64_t)v >> (56 - 8 * i));
}

static void be32(uint8_t *p, uint32_t v) {
    for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* librdkafka's batch at base, as producer pid's, transactional or not; CRC recomputed. */
static void batch(uint8_t out[sizeof rdk_batch_0], int64_t base, int64_t pid, bool transactional) {
    memcpy(out, rdk_batch_0, sizeof rdk_batch_0);
    if (transactional) out[22] |= KP_ATTR_TRANSACTIONAL;
    be64(out + 43, pid);
    be32(out + 17, kp_crc32c(0, out + 21, sizeof rdk_batch_0 - 21));
    kp_batch_patch(out, base, 0);
}

static void append(fx *f, const uint8_t *data, size_t len) {
    kp_batch b;
    size_t pos = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(data, len, &pos, &b, &why), 1);
    assert_true(kp_batch_crc_ok(&b));
    stor_batch_meta m = {.base_offset = b.base_offset, .last_offset = kp_batch_last_offset(&b),
                         .max_timestamp = b.max_timestamp, .producer_id = b.producer_id,
                         .producer_epoch = b.producer_epoch, .base_sequence = b.base_sequence,
                         .last_sequence = b.base_sequence < 0 ? -1 : b.base_sequence + b.last_offset_delta,
                         .records_count = b.records_count};
    if (stor_batch_append(f->s, f->topic, 0, &m, data, len)) fail_msg("append: %s", stor_errmsg(f->s));
}

static void on_line(void *ctx, const char *line) {
    char *out = ctx;
    size_t used = strlen(out);
    snprintf(out + used, 8192 - used, "%s\n", line);
}

static int64_t q(const char *path, const char *sql) { return fx_raw_int(path, sql); }

/*
 * Producer 7's transaction aborted (its batch at 0, the marker at 1), a plain batch at 2, and
 * producer 8's transaction still open at 3: what the broker's txn_log.c wrote is what a rebuild
 * replays.
 */
typedef struct open_seen {
    int n;
    int64_t pid, first;
} open_seen;

static void no_producer(void *ctx, int64_t topic_id, int32_t partition, const stor_batch_meta *m) {
    (void)ctx, (void)topic_id, (void)partition, (void)m;
}

static void on_open(void *ctx, int64_t topic_id, int32_t partition, int64_t pid, int64_t first) {
    open_seen *o = ctx;
    (void)topic_id, (void)partition;
    o->n++;
    o->pid = pid;
    o->first = first;
}

static void test_rebuild_replays_the_transaction_index(void **state) {
    fx *f = *state;
    uint8_t b[sizeof rdk_batch_0], m[KP_MARKER_SIZE];
    batch(b, 0, 7, true);
    append(f, b, sizeof b);
    kp_batch_write_marker(m, 7, 0, 1000, false, 0);
    kp_batch_patch(m, 1, 0);
    append(f, m, sizeof m);
    stor_aborted a = {.producer_id = 7, .first_offset = 0, .last_offset = 1, .lso = 2};
    batch(b, 2, 9, false);
    append(f, b, sizeof b);
    batch(b, 3, 8, true);
    append(f, b, sizeof b);
    if (stor_txn_aborted_put(f->s, f->topic, 0, &a) || stor_commit(f->s))
        fail_msg("txn index: %s", stor_errmsg(f->s));
    stor_close(f->s);
    f->s = NULL;
    /* what the rebuild must derive again, gone */
    fx_raw_exec(f->path, "DELETE FROM txn_aborted; DELETE FROM batches");

    char to[sizeof f->path], report[8192] = "", err[512] = "";
    snprintf(to, sizeof to, "%s/rebuilt.db", f->dir);
    if (stor_salvage_rebuild(f->path, to, on_line, report, err, sizeof err) != 0) fail_msg("rebuild: %s", err);
    if (!strstr(report, "rebuilt topic 't' (id 1) partition 0 from 1 segment files: 4 batches, 4 records kept, "
                        "offsets 0..3; 0 bytes dropped"))
        fail_msg("report:\n%s", strstr(report, "salvage: rebuil") ? strstr(report, "salvage: rebuil") : report);
    assert_int_equal(q(to, "SELECT count(*) FROM batches WHERE seg = 1"), 4);
    assert_int_equal(q(to, "SELECT live FROM segments WHERE id = 1"), 4);
    assert_int_equal(q(to, "SELECT used FROM segments WHERE id = 1"), 3 * (int64_t)sizeof rdk_batch_0 + KP_MARKER_SIZE);
    assert_int_equal(q(to, "SELECT count(*) FROM txn_aborted"), 1);
    assert_int_equal(q(to, "SELECT producer_id FROM txn_aborted"), 7);
    assert_int_equal(q(to, "SELECT first_offset FROM txn_aborted"), 0);
    assert_int_equal(q(to, "SELECT last_offset FROM txn_aborted"), 1);
    assert_int_equal(q(to, "SELECT lso FROM txn_aborted"), 2);
    /* the transactional data batches are marked: what the producer state folds open transactions from */
    assert_int_equal(q(to, "SELECT count(*) FROM batches WHERE txn = 1 AND base_offset IN (0, 3)"), 2);
    assert_int_equal(q(to, "SELECT count(*) FROM batches WHERE txn IS NOT NULL"), 2);
    assert_int_equal(q(to, "SELECT producer_id FROM batches WHERE base_offset = 2"), 9);
    assert_int_equal(q(to, "SELECT bytes FROM partitions"), 3 * (int64_t)sizeof rdk_batch_0 + KP_MARKER_SIZE);
    /* and the broker opens it, producer 8's transaction open from its first batch */
    snprintf(f->path, sizeof f->path, "%s", to);
    fx_open(f);
    open_seen o = {0};
    if (stor_load_producer_state(f->s, no_producer, on_open, &o) != 0) fail_msg("load: %s", stor_errmsg(f->s));
    assert_int_equal(o.n, 1);
    assert_int_equal(o.pid, 8);
    assert_int_equal(o.first, 3);
}

/* Finding 1 of issue 35: a lost topics row dropped the topic's partitions; now it is recreated. */
static void test_lost_topic_row_is_recreated(void **state) {
    fx *f = *state;
    uint8_t b[sizeof rdk_batch_0];
    for (int i = 0; i < 3; i++) {
        batch(b, i, 9, false);
        append(f, b, sizeof b);
    }
    if (stor_topic_config_set(f->s, f->topic, "cleanup.policy", "compact") || stor_commit(f->s))
        fail_msg("%s", stor_errmsg(f->s));
    stor_close(f->s);
    f->s = NULL;
    fx_raw_exec(f->path, "PRAGMA foreign_keys = OFF; DELETE FROM topics");

    char to[sizeof f->path], report[8192] = "", err[512] = "";
    snprintf(to, sizeof to, "%s/salvaged.db", f->dir);
    if (stor_salvage(f->path, to, on_line, report, err, sizeof err) != 0) fail_msg("salvage: %s", err);
    if (!strstr(report, "topic id 1: its topics row was lost; recreated as 'recovered-topic-1' (a placeholder name), "
                        "1 partitions, a new topic uuid; 1 config overrides copied, cleanup.policy=compact"))
        fail_msg("report:\n%s", strstr(report, "salvage: rebuil") ? strstr(report, "salvage: rebuil") : report);
    /* its rows were sound: kept as they were, nothing rebuilt */
    assert_null(strstr(report, "rebuilt topic"));
    assert_int_equal(q(to, "SELECT count(*) FROM batches"), 3);
    assert_int_equal(q(to, "SELECT partitions FROM topics WHERE name = 'recovered-topic-1'"), 1);
    assert_int_equal(q(to, "SELECT count(*) FROM topic_configs WHERE key = 'cleanup.policy'"), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rebuild_replays_the_transaction_index, setup, fx_teardown),
        cmocka_unit_test_setup_teardown(test_lost_topic_row_is_recreated, setup, fx_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
