/*
 * What the topic configs MSK Serverless lets users set do to the log, driven in-process through
 * the Produce handler and the log cleaner: cleanup.policy=compact (the newest record of each key
 * stays at its offset, tombstones go after delete.retention.ms, a producer's newest batch stays
 * for its state, keys are required, retention does not empty the topic), the timestamp window
 * (INVALID_TIMESTAMP with Kafka's per-record errors) and compression.type (batches rebuilt in
 * the topic's codec), against Apache Kafka's LogValidator and LogCleaner; and when the cleaner
 * looks for work.
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

#include "broker_harness.h"
#include "fixtures.h"
#include "kp_batch.h"
#include "kp_records.h"
#include "topic/topic.h"

/* ---- set-up ---- */

static harness *cleaner_harness(const char *const *overrides) {
    harness *h = h_new(overrides);
    topic_cleaner_start(&h->s);
    return h;
}

static void done(harness *h) {
    topic_cleaner_stop(&h->s);
    h_free(h);
}

static topic *make_topic(harness *h, const char *name, const char *key, const char *value) {
    topic_override ov = {(char *)key, (char *)value};
    const char *why = NULL;
    topic *t = topic_create(&h->s, name, 1, 0, &ov, key ? 1 : 0, &why);
    if (!t) fail_msg("topic %s: %s", name, why ? why : "?");
    assert_int_equal(topic_commit_now(&h->s), 0);
    return t;
}

/* A batch of n records with these keys and values (NULL: null), timestamps now + ts_delta[i], in codec. */
static kp_bytes batch(harness *h, int64_t pid, int32_t seq, int n, const char *const *keys, const char *const *values,
                      const int64_t *ts_delta, int codec) {
    kp_bytes tmpl = h_batch_from(h, 0, pid, pid >= 0 ? 0 : -1, seq, n);
    kp_batch b;
    size_t at = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next((const uint8_t *)tmpl.p, (size_t)tmpl.len, &at, &b, &why), 1);
    kp_record recs[64];
    assert_true(n <= 64);
    for (int i = 0; i < n; i++) {
        recs[i] = (kp_record){.offset_delta = i, .timestamp_delta = ts_delta ? ts_delta[i] : 0};
        recs[i].key = (const uint8_t *)keys[i];
        recs[i].key_len = keys[i] ? (int32_t)strlen(keys[i]) : -1;
        recs[i].value = (const uint8_t *)values[i];
        recs[i].value_len = values[i] ? (int32_t)strlen(values[i]) : -1;
    }
    uint8_t *out;
    size_t len;
    assert_int_equal(kp_batch_rebuild(&b, codec, recs, n, true, -1, &out, &len, &why), 0);
    uint8_t *p = kp_arena_alloc(&h->arena, len);
    memcpy(p, out, len);
    free(out);
    return (kp_bytes){(const char *)p, (int32_t)len};
}

/* Produce one batch to partition 0 and commit; the partition's answer. */
static kp_produce_partition_produce_response *produce(harness *h, const char *topic_name, kp_bytes records) {
    req *r = h_produce(h, h_conn(h, NULL), topic_name, 0, records, 9);
    kp_produce_response *resp = h_resp(h, r);
    return &resp->responses.v[0].partition_responses.v[0];
}

static void produce_ok(harness *h, const char *topic_name, kp_bytes records) {
    kp_produce_partition_produce_response *pr = produce(h, topic_name, records);
    if (pr->error_code) fail_msg("produce to %s: error %d", topic_name, pr->error_code);
}

/* What a reader from offset 0 gets: every record as offset, key and value ("" for null), and the batches. */
typedef struct stored {
    int n, nbatches;
    int64_t offset[256];
    char key[256][16], value[256][16];
    bool null_value[256];
    int16_t attributes[64];
    int32_t counts[64];
    int64_t base[64], last[64];
} stored;

static bool read_batch(void *ctx, const stor_batch_meta *m, const void *data, size_t len) {
    stored *st = ctx;
    kp_batch b;
    size_t at = 0;
    const char *why = NULL;
    assert_int_equal(kp_batch_next(data, len, &at, &b, &why), 1);
    assert_true(kp_batch_crc_ok(&b));
    assert_int_equal(b.base_offset, m->base_offset);
    assert_int_equal(kp_batch_last_offset(&b), m->last_offset);
    assert_int_equal(b.records_count, m->records_count);
    st->attributes[st->nbatches] = b.attributes;
    st->counts[st->nbatches] = b.records_count;
    st->base[st->nbatches] = m->base_offset;
    st->last[st->nbatches++] = m->last_offset;
    const uint8_t *sec;
    size_t sec_len;
    uint8_t *owned;
    assert_int_equal(kp_batch_records(&b, 1 << 20, &sec, &sec_len, &owned, &why), 0);
    kp_record_iter it;
    kp_records_begin(&it, sec, sec_len, b.records_count);
    kp_record r;
    int rc;
    while ((rc = kp_records_next(&it, &r, &why)) == 1) {
        int i = st->n++;
        st->offset[i] = m->base_offset + r.offset_delta;
        snprintf(st->key[i], 16, "%.*s", r.key_len > 0 ? r.key_len : 0, r.key ? (const char *)r.key : "");
        snprintf(st->value[i], 16, "%.*s", r.value_len > 0 ? r.value_len : 0, r.value ? (const char *)r.value : "");
        st->null_value[i] = !r.value;
    }
    assert_int_equal(rc, 0);
    free(owned);
    return true;
}

static stored *read_log(harness *h, topic *t) {
    stored *st = kp_arena_alloc(&h->arena, sizeof *st);
    assert_int_equal(stor_batch_read(h->s.st, t->id, 0, 0, INT64_MAX, read_batch, st), 0);
    return st;
}

static const char *const K10[] = {"k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"};

/* ---- compaction ---- */

static void test_compaction_keeps_the_newest_record_of_each_key_at_its_offset(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    for (int b = 0; b < 10; b++) {
        char vals[10][16];
        const char *v[10];
        for (int i = 0; i < 10; i++) {
            snprintf(vals[i], 16, "b%d-%d", b, i);
            v[i] = vals[i];
        }
        produce_ok(h, "c", batch(h, -1, -1, 10, K10, v, NULL, b % 2 ? KP_CODEC_LZ4 : KP_CODEC_NONE));
    }
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    assert_int_equal(topic_commit_now(&h->s), 0);
    stored *st = read_log(h, t);
    assert_int_equal(st->n, 10);
    assert_int_equal(st->nbatches, 1); /* the nine emptied batches of a plain producer are gone */
    for (int i = 0; i < 10; i++) {
        assert_int_equal(st->offset[i], 90 + i);
        assert_string_equal(st->key[i], K10[i]);
        char want[16];
        snprintf(want, 16, "b9-%d", i);
        assert_string_equal(st->value[i], want);
    }
    assert_int_equal(t->parts[0].end, 100); /* offsets are never reused */
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 0); /* nothing dirty is left */
    /* one more batch of one key: the ratio of new bytes is under min.cleanable.dirty.ratio (0.5) */
    const char *one[] = {"k3"}, *val[] = {"new"};
    produce_ok(h, "c", batch(h, -1, -1, 1, one, val, NULL, KP_CODEC_NONE));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 0);
    /* forced (POST /v1/compaction {"force": true}): compacted once, however dirty it stays */
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, true), 1);
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, true), 0);
    stored *after = read_log(h, t);
    assert_int_equal(after->n, 10); /* k3 of the older batch went; the new last batch holds the new one */
    assert_int_equal(after->offset[9], 100);
    done(h);
}

static void test_tombstone_goes_after_delete_retention(void **state) {
    (void)state;
    static const char *const cfg[] = {"log.cleaner.delete.retention.ms", "1000", NULL};
    harness *h = cleaner_harness(cfg);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    const char *keys[] = {"k1", "k2"}, *vals[] = {"v1", "v2"}, *tomb[] = {NULL};
    produce_ok(h, "c", batch(h, -1, -1, 2, keys, vals, NULL, KP_CODEC_NONE));
    produce_ok(h, "c", batch(h, -1, -1, 1, keys, tomb, NULL, KP_CODEC_ZSTD));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    stored *st = read_log(h, t);
    assert_int_equal(st->n, 2); /* k1's value went; its tombstone stays for delete.retention.ms */
    assert_string_equal(st->key[0], "k2");
    assert_string_equal(st->key[1], "k1");
    assert_true(st->null_value[1]);
    assert_int_equal(st->offset[1], 2);
    assert_true(st->attributes[1] & KP_ATTR_DELETE_HORIZON);
    clk_advance(999);
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 0);
    clk_advance(1);
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    st = read_log(h, t);
    assert_int_equal(st->n, 1);
    assert_string_equal(st->key[0], "k2");
    /* the tombstone's batch was the partition's last: emptied, not removed (see the next test) */
    assert_int_equal(st->nbatches, 2);
    assert_int_equal(st->counts[1], 0);
    assert_int_equal(st->last[1], 2);
    done(h);
}

/* Issue 35: delete.retention.ms = INT64_MAX overflowed now + retention for the tombstone's horizon. */
static void test_int64_max_delete_retention_keeps_the_tombstone(void **state) {
    (void)state;
    static const char *const cfg[] = {"log.cleaner.delete.retention.ms", "9223372036854775807", NULL};
    harness *h = cleaner_harness(cfg);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    const char *keys[] = {"k1", "k2"}, *vals[] = {"v1", "v2"}, *tomb[] = {NULL};
    produce_ok(h, "c", batch(h, -1, -1, 2, keys, vals, NULL, KP_CODEC_NONE));
    produce_ok(h, "c", batch(h, -1, -1, 1, keys, tomb, NULL, KP_CODEC_NONE));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    stored *st = read_log(h, t);
    assert_int_equal(st->n, 2);
    assert_true(st->null_value[1]);
    clk_advance(86400000LL * 365);
    topic_cleaner_run_now(&h->s, 10, false);
    st = read_log(h, t);
    assert_int_equal(st->n, 2); /* the horizon saturated: the tombstone stays */
    done(h);
}

/*
 * A consumer at the end of the log must reach the high watermark: the partition's last batch is
 * emptied at most, never removed, so the log's last offset stays held (Kafka's active segment).
 */
static void test_last_batch_is_emptied_not_removed(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    const char *keys[] = {"k1", "k1", "k2"}, *vals[] = {"a", "b", "c"};
    produce_ok(h, "c", batch(h, -1, -1, 3, keys, vals, NULL, KP_CODEC_NONE));
    produce_ok(h, "c", batch(h, -1, -1, 3, keys, vals, NULL, KP_CODEC_NONE));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    stored *st = read_log(h, t);
    assert_int_equal(st->nbatches, 1); /* the first batch is gone whole; in the last, k1's older value went */
    assert_int_equal(st->n, 2);
    assert_int_equal(st->offset[0], 4);
    assert_int_equal(st->last[0], 5);
    /* all superseded by a newer batch: the older one goes, the newer one is now last */
    const char *later[] = {"k1", "k2"};
    produce_ok(h, "c", batch(h, -1, -1, 2, later, vals, NULL, KP_CODEC_NONE));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, true), 1);
    st = read_log(h, t);
    assert_int_equal(st->nbatches, 1);
    assert_int_equal(st->base[0], 6);
    assert_int_equal(t->parts[0].end, 8);
    done(h);
}

/* Kafka's cleaner keeps a producer's last batch, emptied, so its sequence survives; older ones go. */
static void test_producer_newest_batch_stays_empty(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    const char *v[] = {"a", "b", "c"};
    produce_ok(h, "c", batch(h, 7000, 0, 3, K10, v, NULL, KP_CODEC_NONE));
    produce_ok(h, "c", batch(h, 7000, 3, 3, K10, v, NULL, KP_CODEC_SNAPPY));
    produce_ok(h, "c", batch(h, -1, -1, 3, K10, v, NULL, KP_CODEC_GZIP));
    assert_int_equal(topic_cleaner_run_now(&h->s, 10, false), 1);
    assert_int_equal(topic_commit_now(&h->s), 0);
    stored *st = read_log(h, t);
    assert_int_equal(st->nbatches, 2);
    assert_int_equal(st->base[0], 3); /* the producer's newest batch, emptied, offsets as they were */
    assert_int_equal(st->last[0], 5);
    assert_int_equal(st->counts[0], 0);
    assert_int_equal(st->base[1], 6);
    assert_int_equal(st->n, 3);
    int64_t last = -1;
    assert_int_equal(stor_producer_last_data(h->s.st, t->id, 0, 7000, &last), 1);
    assert_int_equal(last, 3);
    /* the producer goes on in sequence; a retry of its newest batch is still a duplicate */
    kp_produce_partition_produce_response *pr = produce(h, "c", batch(h, 7000, 3, 3, K10, v, NULL, KP_CODEC_NONE));
    assert_int_equal(pr->error_code, 0);
    assert_int_equal(pr->base_offset, 3);
    produce_ok(h, "c", batch(h, 7000, 6, 1, K10, v, NULL, KP_CODEC_NONE));
    done(h);
}

static void test_compact_only_topic_is_not_emptied_by_retention(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *c = make_topic(h, "c", "cleanup.policy", "compact");
    topic *cd = make_topic(h, "cd", "cleanup.policy", "compact,delete");
    const char *v[] = {"a", "b"};
    produce_ok(h, "c", batch(h, -1, -1, 2, K10, v, NULL, KP_CODEC_NONE));
    produce_ok(h, "cd", batch(h, -1, -1, 2, K10, v, NULL, KP_CODEC_NONE));
    clk_advance(8 * 86400000LL); /* past the default retention.ms of 7 days */
    topic_enforce_retention(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_int_equal(c->parts[0].log_start, 0);
    assert_int_equal(read_log(h, c)->n, 2);
    assert_int_equal(cd->parts[0].log_start, 2); /* compact,delete: retention applies too */
    assert_int_equal(read_log(h, cd)->n, 0);
    done(h);
}

/* ---- the record pass on produce ---- */

static void test_null_key_refused_on_a_compacted_topic(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "c", "cleanup.policy", "compact");
    const char *keys[] = {"k0", NULL, NULL}, *v[] = {"a", "b", "c"};
    kp_produce_partition_produce_response *pr = produce(h, "c", batch(h, -1, -1, 3, keys, v, NULL, KP_CODEC_LZ4));
    assert_int_equal(pr->error_code, 87); /* INVALID_RECORD */
    assert_int_equal(pr->record_errors.n, 2);
    assert_int_equal(pr->record_errors.v[0].batch_index, 1);
    assert_int_equal(pr->record_errors.v[1].batch_index, 2);
    assert_non_null(strstr(pr->record_errors.v[0].batch_index_error_message.p, "without key"));
    assert_int_equal(t->parts[0].end, 0); /* nothing of the batch was appended */
    done(h);
}

static void test_timestamp_outside_the_window_is_invalid_timestamp(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "w", "message.timestamp.difference.max.ms", "60000");
    const char *v[] = {"a", "b", "c"};
    int64_t late[] = {0, -120000, 0}, early[] = {0, 0, 61000}, ok[] = {-59000, 0, 59000};
    kp_produce_partition_produce_response *pr = produce(h, "w", batch(h, -1, -1, 3, K10, v, late, KP_CODEC_NONE));
    assert_int_equal(pr->error_code, 32);
    assert_int_equal(pr->record_errors.n, 1);
    assert_int_equal(pr->record_errors.v[0].batch_index, 1);
    assert_non_null(strstr(pr->record_errors.v[0].batch_index_error_message.p, "is out of range"));
    assert_non_null(strstr(pr->error_message.p, "invalid timestamp"));
    pr = produce(h, "w", batch(h, -1, -1, 3, K10, v, early, KP_CODEC_ZSTD));
    assert_int_equal(pr->error_code, 32);
    assert_int_equal(t->parts[0].end, 0);
    produce_ok(h, "w", batch(h, -1, -1, 3, K10, v, ok, KP_CODEC_ZSTD));
    /* LogAppendTime replaces the timestamps: there is no window to check */
    topic *la = make_topic(h, "la", "message.timestamp.type", "LogAppendTime");
    assert_int_equal(topic_set_config(&h->s, la, "message.timestamp.difference.max.ms", "1"), 0);
    produce_ok(h, "la", batch(h, -1, -1, 3, K10, v, late, KP_CODEC_NONE));
    done(h);
}

/*
 * Issue 35: base timestamp + delta past INT64_MAX (both the producer's) was a signed overflow in
 * the record pass. It wraps as in Kafka's Java (DefaultRecord), and the window refuses it.
 */
static void test_record_timestamp_past_int64_max_is_invalid_timestamp(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *t = make_topic(h, "w", "message.timestamp.before.max.ms", "60000");
    const char *v[] = {"a"};
    int64_t far[] = {INT64_MAX};
    kp_produce_partition_produce_response *pr = produce(h, "w", batch(h, -1, -1, 1, K10, v, far, KP_CODEC_NONE));
    assert_int_equal(pr->error_code, 32);
    assert_int_equal(t->parts[0].end, 0);
    done(h);
}

static void test_compression_type_rebuilds_the_batch_in_its_codec(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    topic *z = make_topic(h, "z", "compression.type", "zstd");
    topic *u = make_topic(h, "u", "compression.type", "uncompressed");
    topic *p = make_topic(h, "p", "compression.type", "producer");
    const char *v[] = {"a", "b", "c"};
    produce_ok(h, "z", batch(h, 7100, 0, 3, K10, v, NULL, KP_CODEC_LZ4));
    produce_ok(h, "u", batch(h, -1, -1, 3, K10, v, NULL, KP_CODEC_GZIP));
    produce_ok(h, "p", batch(h, -1, -1, 3, K10, v, NULL, KP_CODEC_SNAPPY));
    stored *st = read_log(h, z);
    assert_int_equal(kp_batch_codec(&(kp_batch){.attributes = st->attributes[0]}), KP_CODEC_ZSTD);
    assert_int_equal(st->n, 3);
    assert_string_equal(st->value[2], "c");
    assert_int_equal(st->offset[2], 2);
    assert_int_equal(kp_batch_codec(&(kp_batch){.attributes = read_log(h, u)->attributes[0]}), KP_CODEC_NONE);
    assert_int_equal(kp_batch_codec(&(kp_batch){.attributes = read_log(h, p)->attributes[0]}), KP_CODEC_SNAPPY);
    /* the producer's sequence state follows the rebuilt batch: a retry is a duplicate */
    kp_produce_partition_produce_response *pr = produce(h, "z", batch(h, 7100, 0, 3, K10, v, NULL, KP_CODEC_LZ4));
    assert_int_equal(pr->error_code, 0);
    assert_int_equal(pr->base_offset, 0);
    assert_int_equal(z->parts[0].end, 3);
    done(h);
}

static kp_fetch_partition_data *fetch(harness *h, const char *topic_name, int16_t ver) {
    kp_fetch_partition fp = {.partition = 0, .current_leader_epoch = -1, .fetch_offset = 0, .last_fetched_epoch = -1,
                             .log_start_offset = -1, .partition_max_bytes = 1 << 20};
    kp_fetch_topic ft = {.topic = kp_str_c(topic_name)};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    kp_fetch_request q = {.replica_id = -1, .max_wait_ms = 0, .min_bytes = 1, .max_bytes = 1 << 20,
                          .session_epoch = -1, .rack_id = kp_str_c("")};
    q.topics.n = 1;
    q.topics.v = &ft;
    kp_fetch_response *resp = h_resp(h, h_send(h, h_conn(h, NULL), "consumer", 1, ver, &q));
    return &resp->responses.v[0].partitions.v[0];
}

/* A topic recompressed to zstd cannot be read below Fetch v10, which brought zstd (Kafka's UNSUPPORTED_COMPRESSION_TYPE). */
static void test_zstd_needs_fetch_v10(void **state) {
    (void)state;
    harness *h = cleaner_harness(NULL);
    make_topic(h, "z", "compression.type", "zstd");
    make_topic(h, "g", "compression.type", "gzip");
    const char *v[] = {"a"};
    produce_ok(h, "z", batch(h, -1, -1, 1, K10, v, NULL, KP_CODEC_NONE));
    produce_ok(h, "g", batch(h, -1, -1, 1, K10, v, NULL, KP_CODEC_NONE));
    assert_int_equal(fetch(h, "z", 9)->error_code, 76);
    kp_fetch_partition_data *pd = fetch(h, "z", 10);
    assert_int_equal(pd->error_code, 0);
    assert_true(pd->records.len > 0);
    pd = fetch(h, "g", 4);
    assert_int_equal(pd->error_code, 0);
    assert_true(pd->records.len > 0);
    done(h);
}

/*
 * Issue 33 moved the stop after a fatal storage failure from exit(3) inside the commit to main's
 * return (srv_fail_stop): from the failure on, nothing more may be committed or answered, since
 * memory is past what storage holds.
 */
static void test_after_fail_stop_nothing_is_committed_or_answered(void **state) {
    harness *h = h_new(NULL);
    *state = h;
    make_topic(h, "stopped", NULL, NULL);
    partition *p = &topic_find(&h->s, "stopped", 7)->parts[0];
    conn *c = h_conn(h, NULL);
    kp_produce_partition_produce_data pd = {0, h_batch(h, 2)};
    kp_produce_topic_produce_data td = {.name = kp_str_c("stopped")};
    td.partition_data.n = 1;
    td.partition_data.v = &pd;
    kp_produce_request q = {.transactional_id = KP_STR_NULL, .acks = -1, .timeout_ms = 5000};
    q.topic_data.n = 1;
    q.topic_data.v = &td;
    req *r = h_send(h, c, "producer", 0, 8, &q);
    assert_int_equal(r->state, REQ_WAIT_COMMIT); /* appended, held for the commit */
    uint64_t seq = stor_commit_seq(h->s.st);
    srv_fail_stop(&h->s, 3);
    assert_int_equal(h->s.fatal_exit, 3);
    assert_int_equal(topic_commit_now(&h->s), -1);
    assert_true(stor_in_txn(h->s.st));
    assert_true(stor_commit_seq(h->s.st) == seq);
    assert_true(p->hw == 0 && p->end == 2); /* not made visible */
    net_after_commit(&h->s);
    assert_int_equal(r->state, REQ_WAIT_COMMIT); /* and not sent */
    h->s.fatal_exit = 0;
}

static void find_cleaner_timer(uv_handle_t *hd, void *arg) {
    void **want = arg; /* in: the cleaner; out: its timer */
    if (hd->type == UV_TIMER && hd->data == want[0]) want[1] = hd;
}

/*
 * Regression (cleaner_timer_of_each_cluster_woke_the_loop_apart): each cluster's cleaner looked for
 * work log.cleaner.backoff.ms after its own start, so an idle process with 50 created clusters
 * woke 50 times per backoff. It is now due at a multiple of the backoff on the loop's clock, the
 * same instant for every cluster, which one wake-up serves.
 */
static void test_cleaner_timer_of_each_cluster_woke_the_loop_apart(void **state) {
    (void)state;
    static const char *const cfg[] = {"log.cleaner.backoff.ms", "1000", NULL};
    harness *h = cleaner_harness(cfg);
    void *want[2] = {h->s.cleaner, NULL};
    uv_walk(h->s.loop, find_cleaner_timer, want);
    uv_timer_t *t = want[1];
    assert_non_null(t);
    assert_true(uv_is_active((uv_handle_t *)t));
    uint64_t due_in = uv_timer_get_due_in(t);
    assert_true(due_in >= 1 && due_in <= 1000);
    assert_int_equal((uv_now(h->s.loop) + due_in) % 1000, 0);
    done(h);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_teardown(test_compaction_keeps_the_newest_record_of_each_key_at_its_offset, h_teardown),
        cmocka_unit_test_teardown(test_tombstone_goes_after_delete_retention, h_teardown),
        cmocka_unit_test_teardown(test_int64_max_delete_retention_keeps_the_tombstone, h_teardown),
        cmocka_unit_test_teardown(test_last_batch_is_emptied_not_removed, h_teardown),
        cmocka_unit_test_teardown(test_producer_newest_batch_stays_empty, h_teardown),
        cmocka_unit_test_teardown(test_compact_only_topic_is_not_emptied_by_retention, h_teardown),
        cmocka_unit_test_teardown(test_null_key_refused_on_a_compacted_topic, h_teardown),
        cmocka_unit_test_teardown(test_timestamp_outside_the_window_is_invalid_timestamp, h_teardown),
        cmocka_unit_test_teardown(test_record_timestamp_past_int64_max_is_invalid_timestamp, h_teardown),
        cmocka_unit_test_teardown(test_compression_type_rebuilds_the_batch_in_its_codec, h_teardown),
        cmocka_unit_test_teardown(test_zstd_needs_fetch_v10, h_teardown),
        cmocka_unit_test_teardown(test_after_fail_stop_nothing_is_committed_or_answered, h_teardown),
        cmocka_unit_test_teardown(test_cleaner_timer_of_each_cluster_woke_the_loop_apart, h_teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
