/*
 * DeleteRecords, DescribeLogDirs and ListPartitionReassignments (broker/api/delete_records.c,
 * describe_log_dirs.c, list_partition_reassignments.c, and topic/log_start.c below them),
 * driven in-process through pipeline_dispatch with encoded requests, against Apache Kafka's
 * semantics: DeleteRecords moves the log start (mid-batch too) and Fetch and ListOffsets follow
 * it; DescribeLogDirs lists what the broker reached leads; MSK Serverless serves neither of the
 * first two, and answers ListPartitionReassignments with an empty list.
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
#include "topic/topic.h"

/* ---- set-up ---- */

/* The kafka profile: what --profile kafka gives the handler table (DeleteRecords, DescribeLogDirs). */
static harness *kafka_harness(const char *const *overrides) {
    harness *h = h_new(overrides);
    h->cfg.profile = PROFILE_KAFKA;
    return h;
}

static topic *make_topic(harness *h, const char *name, int32_t parts) {
    const char *why = NULL;
    topic *t = topic_create(&h->s, name, parts, 0, NULL, 0, &why);
    if (!t) fail_msg("topic %s: %s", name, why ? why : "?");
    return t;
}

/* Produce one batch of n records to topic[partition] through c and commit; returns its base offset. */
static int64_t produce(harness *h, conn *c, const char *topic_name, int32_t partition, int n) {
    req *r = h_produce(h, c, topic_name, partition, h_batch(h, n), 8);
    kp_produce_response *resp = h_resp(h, r);
    kp_produce_partition_produce_response *pr = &resp->responses.v[0].partition_responses.v[0];
    if (pr->error_code) fail_msg("produce to %s-%d: error %d", topic_name, partition, pr->error_code);
    return pr->base_offset;
}

static kp_delete_records_partition_result *delete_records(harness *h, conn *c, int16_t ver, const char *topic_name,
                                                          int32_t partition, int64_t offset) {
    kp_delete_records_partition qp = {partition, offset};
    kp_delete_records_topic qt = {.name = kp_str_c(topic_name)};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_delete_records_request q = {.timeout_ms = 5000};
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, c, "admin", 21, ver, &q);
    kp_delete_records_response *resp = h_resp(h, r);
    assert_int_equal(resp->topics.n, 1);
    assert_true(kp_str_eq(resp->topics.v[0].name, topic_name));
    assert_int_equal(resp->topics.v[0].partitions.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.v[0].partition_index, partition);
    return &resp->topics.v[0].partitions.v[0];
}

/* ListOffsets v1 earliest (-2): the log start offset as a consumer starting from the beginning sees it. */
static int64_t earliest(harness *h, conn *c, const char *topic_name, int32_t partition) {
    kp_list_offsets_partition qp = {.partition_index = partition, .current_leader_epoch = -1, .timestamp = -2};
    kp_list_offsets_topic qt = {.name = kp_str_c(topic_name)};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_list_offsets_request q = {.replica_id = -1};
    q.topics.n = 1;
    q.topics.v = &qt;
    kp_list_offsets_response *resp = h_resp(h, h_send(h, c, "consumer", 2, 1, &q));
    kp_list_offsets_partition_response *pr = &resp->topics.v[0].partitions.v[0];
    assert_int_equal(pr->error_code, 0);
    return pr->offset;
}

/* Fetch v11 (by name) at offset, without waiting. */
static kp_fetch_partition_data *fetch(harness *h, conn *c, const char *topic_name, int32_t partition, int64_t offset) {
    kp_fetch_partition fp = {.partition = partition, .current_leader_epoch = -1, .fetch_offset = offset,
                             .last_fetched_epoch = -1, .log_start_offset = -1, .partition_max_bytes = 1 << 20};
    kp_fetch_topic ft = {.topic = kp_str_c(topic_name)};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    kp_fetch_request q = {.replica_id = -1, .max_wait_ms = 0, .min_bytes = 1, .max_bytes = 1 << 20,
                          .session_epoch = -1, .rack_id = kp_str_c("")};
    q.topics.n = 1;
    q.topics.v = &ft;
    kp_fetch_response *resp = h_resp(h, h_send(h, c, "consumer", 1, 11, &q));
    return &resp->responses.v[0].partitions.v[0];
}

static int64_t stored_bytes(harness *h, const char *topic_name, int32_t partition) {
    topic *t = topic_find(&h->s, topic_name, strlen(topic_name));
    assert_non_null(t);
    return stor_partition_bytes(h->s.st, t->id, partition);
}

/* A request frame dispatched as the network would: false means the connection closes. */
static bool dispatch(harness *h, conn *c, int16_t key, int16_t ver, const void *body) {
    const kp_msg *m = kp_msg_get(key);
    kp_writer w;
    kp_writer_init(&w, 64);
    kp_wr_i16(&w, key);
    kp_wr_i16(&w, ver);
    kp_wr_i32(&w, ++h->next_corr);
    kp_wr_i16(&w, 1);
    kp_wr_raw(&w, "x", 1);
    if (kp_is_flex(m, ver)) kp_wr_uvarint(&w, 0);
    kp_encode(&w, m->req, ver, kp_is_flex(m, ver), body);
    req *r = calloc(1, sizeof *r);
    assert_non_null(r);
    r->c = c;
    r->frame = w.buf;
    r->len = w.len;
    h_track(h, r);
    return pipeline_dispatch(&h->s, r);
}

/* The ranges ApiVersions v3 advertises for key, or false when it is left out. */
static bool advertised(harness *h, conn *c, int16_t key, int16_t *lo, int16_t *hi) {
    kp_api_versions_request q = {.client_software_name = kp_str_c("t"), .client_software_version = kp_str_c("1")};
    kp_api_versions_response *resp = h_resp(h, h_send(h, c, "probe", 18, 3, &q));
    for (int32_t i = 0; i < resp->api_keys.n; i++)
        if (resp->api_keys.v[i].api_key == key) {
            *lo = resp->api_keys.v[i].min_version;
            *hi = resp->api_keys.v[i].max_version;
            return true;
        }
    return false;
}

/* ---- ListPartitionReassignments ---- */

static kp_list_partition_reassignments_response *list_reassignments(harness *h, conn *c,
                                                                    kp_list_partition_reassignments_request *q) {
    return h_resp(h, h_send(h, c, "admin", 46, 0, q));
}

static void test_list_partition_reassignments_is_always_empty(void **state) {
    (void)state;
    harness *h = h_new(NULL); /* the serverless profile: MSK serves it */
    conn *c = h_conn(h, NULL);
    make_topic(h, "orders", 3);
    int16_t lo, hi;
    assert_true(advertised(h, c, 46, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 0);

    kp_list_partition_reassignments_request all = {.timeout_ms = 30000};
    all.topics.n = -1; /* null: every reassignment in progress */
    kp_list_partition_reassignments_response *resp = list_reassignments(h, c, &all);
    assert_int_equal(resp->error_code, 0);
    assert_int_equal(resp->error_message.len, -1);
    assert_int_equal(resp->topics.n, 0);

    /* named topics, known or not, are absent: Kafka lists only partitions being reassigned */
    int32_t parts[] = {0, 1, 7};
    kp_list_partition_reassignments_topics named[2] = {{.name = kp_str_c("orders")}, {.name = kp_str_c("nope")}};
    for (int i = 0; i < 2; i++) {
        named[i].partition_indexes.n = 3;
        named[i].partition_indexes.v = parts;
    }
    kp_list_partition_reassignments_request some = {.timeout_ms = 30000};
    some.topics.n = 2;
    some.topics.v = named;
    resp = list_reassignments(h, c, &some);
    assert_int_equal(resp->error_code, 0);
    assert_int_equal(resp->topics.n, 0);
    h_free(h);
}

/*
 * Regression (issue 30, found reading the error table for librdkafka's UNKNOWN_ERROR_CODE(86)):
 * DescribeCluster v1 asking for controllers answered 119, which is INVALID_REGISTRATION. A Kafka
 * broker answers MISMATCHED_ENDPOINT_TYPE (114) for controllers and UNSUPPORTED_ENDPOINT_TYPE
 * (115) for a type it does not know.
 */
static void test_describe_cluster_endpoint_types_get_kafkas_codes(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    conn *c = h_conn(h, NULL);
    const struct { int8_t type; int16_t code; const char *message; } cases[] = {
        {1, 0, NULL},
        {2, KERR_MISMATCHED_ENDPOINT_TYPE,
         "The request was sent to an endpoint of type BROKER, but we wanted an endpoint of type CONTROLLER"},
        {7, KERR_UNSUPPORTED_ENDPOINT_TYPE, "Unsupported endpoint type 7"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        kp_describe_cluster_request q = {.endpoint_type = cases[i].type};
        kp_describe_cluster_response *resp = h_resp(h, h_send(h, c, "admin", 60, 1, &q));
        assert_int_equal(resp->error_code, cases[i].code);
        if (cases[i].message) assert_true(kp_str_eq(resp->error_message, cases[i].message));
        else assert_int_equal(resp->brokers.n, 1);
    }
    h_free(h);
}

/* ---- the profile decides what is served ---- */

static void test_serverless_neither_advertises_nor_serves_delete_records_and_describe_log_dirs(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    conn *c = h_conn(h, NULL);
    make_topic(h, "t", 1);
    int16_t lo, hi;
    assert_false(advertised(h, c, 21, &lo, &hi));
    assert_false(advertised(h, c, 35, &lo, &hi));

    kp_delete_records_partition qp = {0, -1};
    kp_delete_records_topic qt = {.name = kp_str_c("t")};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_delete_records_request dr = {.timeout_ms = 1000};
    dr.topics.n = 1;
    dr.topics.v = &qt;
    assert_false(dispatch(h, h_conn(h, NULL), 21, 2, &dr)); /* closed, as for an API MSK does not know */
    kp_describe_log_dirs_request dl = {0};
    dl.topics.n = -1;
    assert_false(dispatch(h, h_conn(h, NULL), 35, 4, &dl));
    assert_int_equal(topic_find(&h->s, "t", 1)->parts[0].log_start, 0);
    h_free(h);
}

static void test_kafka_profile_advertises_delete_records_and_describe_log_dirs(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    conn *c = h_conn(h, NULL);
    int16_t lo, hi;
    assert_true(advertised(h, c, 21, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 2);
    assert_true(advertised(h, c, 35, &lo, &hi));
    assert_int_equal(lo, 0);
    assert_int_equal(hi, 4);
    assert_true(advertised(h, c, 46, &lo, &hi));
    h_free(h);
}

/* ---- transaction.version (KIP-890 part 2) ---- */

/* ApiVersions v3's (serverless serves no v4) finalized transaction.version (0: not listed) and the features' epoch. */
static int16_t finalized_tv(harness *h, conn *c, int64_t *epoch) {
    kp_api_versions_request q = {.client_software_name = kp_str_c("t"), .client_software_version = kp_str_c("1")};
    kp_api_versions_response *resp = h_resp(h, h_send(h, c, "probe", 18, 3, &q));
    *epoch = resp->finalized_features_epoch;
    for (int32_t i = 0; i < resp->finalized_features.n; i++)
        if (kp_str_eq(resp->finalized_features.v[i].name, "transaction.version"))
            return resp->finalized_features.v[i].max_version_level;
    return 0;
}

static void test_transaction_version_gates_the_v2_versions(void **state) {
    (void)state;
    static const struct {
        const char *profile, *kafka_version, *tv;
        int16_t finalized, produce, end_txn, txn_offset_commit;
    } cases[] = {
        {"serverless", "none", "1", 0, 11, 4, 4},  /* the default: V1, no feature listed */
        {"serverless", "none", "2", 2, 12, 5, 5},  /* configured: that feature alone */
        {"kafka", "4.0", "2", 2, 12, 5, 5},        /* Kafka 4.x finalizes 2 */
        {"kafka", "4.0", "1", 1, 11, 4, 4},
        {"kafka", "4.0", "0", 0, 11, 4, 4},
        {"provisioned", "3.8", "2", 0, 11, 4, 4},  /* 3.8 has no transaction.version */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *const ov[] = {"profile", cases[i].profile, "kafka.version", cases[i].kafka_version,
                                  "transaction.version", cases[i].tv, NULL};
        harness *h = h_new(ov);
        conn *c = h_conn(h, NULL);
        int16_t lo, hi;
        int64_t epoch;
        assert_int_equal(finalized_tv(h, c, &epoch), cases[i].finalized);
        /* the Java client reads the finalized features only from an epoch above -1 */
        if (cases[i].finalized) assert_true(epoch >= 0);
        assert_true(advertised(h, c, 0, &lo, &hi));
        assert_int_equal(hi, cases[i].produce);
        assert_true(advertised(h, c, 26, &lo, &hi));
        assert_int_equal(hi, cases[i].end_txn);
        assert_true(advertised(h, c, 28, &lo, &hi));
        assert_int_equal(hi, cases[i].txn_offset_commit);
        h_free(h);
    }
}

/* ---- DeleteRecords ---- */

static void test_delete_records_mid_batch_keeps_the_batch_and_moves_log_start(void **state) {
    (void)state;
    for (int16_t ver = 0; ver <= 2; ver++) {
        harness *h = kafka_harness(NULL);
        conn *c = h_conn(h, NULL);
        make_topic(h, "t", 2);
        assert_int_equal(produce(h, c, "t", 0, 5), 0);  /* offsets 0-4 */
        assert_int_equal(produce(h, c, "t", 0, 5), 5);  /* offsets 5-9 */
        int64_t bytes = stored_bytes(h, "t", 0);

        kp_delete_records_partition_result *res = delete_records(h, c, ver, "t", 0, 3);
        assert_int_equal(res->error_code, 0);
        assert_int_equal(res->low_watermark, 3);
        assert_int_equal(earliest(h, c, "t", 0), 3);
        assert_int_equal(stored_bytes(h, "t", 0), bytes); /* the batch holding 3 stays whole */

        kp_fetch_partition_data *below = fetch(h, c, "t", 0, 2);
        assert_int_equal(below->error_code, KERR_OFFSET_OUT_OF_RANGE);
        assert_int_equal(below->log_start_offset, 3);
        /* reads at the log start get the whole batch holding it; consumers skip offsets 0-2 */
        kp_fetch_partition_data *at = fetch(h, c, "t", 0, 3);
        assert_int_equal(at->error_code, 0);
        assert_int_equal(at->log_start_offset, 3);
        assert_true(at->records.len > KP_BATCH_HEADER_SIZE);
        assert_int_equal(kp_get_i64((const uint8_t *)at->records.p), 0);

        /* past the first batch: it goes, bytes shrink */
        res = delete_records(h, c, ver, "t", 0, 7);
        assert_int_equal(res->error_code, 0);
        assert_int_equal(res->low_watermark, 7);
        assert_true(stored_bytes(h, "t", 0) < bytes);
        assert_int_equal(kp_get_i64((const uint8_t *)fetch(h, c, "t", 0, 7)->records.p), 5);

        /* an offset below the log start moves nothing: the answer is the current log start */
        res = delete_records(h, c, ver, "t", 0, 4);
        assert_int_equal(res->error_code, 0);
        assert_int_equal(res->low_watermark, 7);
        assert_int_equal(earliest(h, c, "t", 1), 0); /* the other partition is untouched */
        h_free(h);
    }
}

static void test_delete_records_minus_one_means_the_high_watermark(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    conn *c = h_conn(h, NULL);
    make_topic(h, "t", 1);
    produce(h, c, "t", 0, 4);
    produce(h, c, "t", 0, 6);
    kp_delete_records_partition_result *res = delete_records(h, c, 2, "t", 0, -1);
    assert_int_equal(res->error_code, 0);
    assert_int_equal(res->low_watermark, 10);
    assert_int_equal(earliest(h, c, "t", 0), 10);
    assert_int_equal(stored_bytes(h, "t", 0), 0);
    kp_fetch_partition_data *pd = fetch(h, c, "t", 0, 10);
    assert_int_equal(pd->error_code, 0);
    assert_int_equal(pd->high_watermark, 10);
    assert_int_equal(pd->records.len, 0);
    /* the log goes on at the same offsets */
    assert_int_equal(produce(h, c, "t", 0, 1), 10);
    h_free(h);
}

static void test_delete_records_refusals(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    conn *c = h_conn(h, NULL);
    make_topic(h, "t", 2);
    produce(h, c, "t", 0, 5);
    kp_delete_records_partition_result *res = delete_records(h, c, 2, "t", 0, 6); /* above the high watermark */
    assert_int_equal(res->error_code, KERR_OFFSET_OUT_OF_RANGE);
    assert_int_equal(res->low_watermark, -1);
    res = delete_records(h, c, 2, "t", 0, -2);
    assert_int_equal(res->error_code, KERR_OFFSET_OUT_OF_RANGE);
    res = delete_records(h, c, 2, "t", 5, 0);
    assert_int_equal(res->error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    res = delete_records(h, c, 2, "nope", 0, 0);
    assert_int_equal(res->error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(res->low_watermark, -1);
    assert_int_equal(earliest(h, c, "t", 0), 0);

    /* Kafka deletes no records of a compact-only topic */
    const char *why = NULL;
    topic_override ov = {"cleanup.policy", "compact"};
    assert_non_null(topic_create(&h->s, "compacted", 1, 0, &ov, 1, &why));
    produce(h, c, "compacted", 0, 3);
    res = delete_records(h, c, 2, "compacted", 0, 1);
    assert_int_equal(res->error_code, KERR_POLICY_VIOLATION);
    assert_int_equal(earliest(h, c, "compacted", 0), 0);
    h_free(h);
}

static void test_delete_records_partition_led_elsewhere_is_not_leader(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    h->s.nnodes = 2;
    h->s.nodes[1].id = h->s.nodes[0].id + 1;
    topic *t = make_topic(h, "t", 2);
    int32_t other = t->parts[0].leader == 0 ? 1 : 0; /* the partition node 1 leads */
    assert_int_equal(t->parts[other].leader, 1);
    conn *c = h_conn(h, NULL); /* reached node 0 */
    kp_delete_records_partition_result *res = delete_records(h, c, 2, "t", other, 0);
    assert_int_equal(res->error_code, KERR_NOT_LEADER_OR_FOLLOWER);
    h_free(h);
}

/* The answer waits for the commit that stores the new log start, and a reload reads it back. */
typedef struct loaded {
    int64_t log_start[4], next[4];
} loaded;

static void on_partition(void *ctx, int64_t topic_id, int32_t partition, int64_t log_start, int64_t next) {
    (void)topic_id;
    loaded *l = ctx;
    if (partition >= 0 && partition < 4) l->log_start[partition] = log_start, l->next[partition] = next;
}

static void test_delete_records_is_answered_once_stored(void **state) {
    (void)state;
    harness *h = kafka_harness(NULL);
    char dir[64], path[128], err[256];
    tmp_dir_new(dir, sizeof dir, "admin-apis");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    stor_close(h->s.st); /* a file this time, so that a second handle can read what was committed */
    if (stor_open(&h->s.st, path, STOR_SYNC_OFF, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    conn *c = h_conn(h, NULL);
    make_topic(h, "t", 1);
    produce(h, c, "t", 0, 5);
    produce(h, c, "t", 0, 5);

    kp_delete_records_partition qp = {0, 6};
    kp_delete_records_topic qt = {.name = kp_str_c("t")};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_delete_records_request q = {.timeout_ms = 5000};
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, c, "admin", 21, 2, &q);
    assert_int_equal(r->state, REQ_WAIT_COMMIT);
    assert_int_equal(topic_commit_now(&h->s), 0);

    stor *other;
    if (stor_open(&other, path, STOR_SYNC_OFF, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    loaded l = {0};
    stor_load_cb cb = {.ctx = &l, .partition = on_partition};
    assert_int_equal(stor_load(other, &cb), 0);
    assert_int_equal(l.log_start[0], 6);
    assert_int_equal(l.next[0], 10);
    stor_close(other);

    /* nothing moved: answered at once */
    req *again = h_send(h, c, "admin", 21, 2, &q);
    assert_int_equal(again->state, REQ_READY);
    h_free(h);
    tmp_dir_remove(dir);
}

/* ---- DescribeLogDirs ---- */

static kp_describe_log_dirs_response *describe_log_dirs(harness *h, conn *c, int16_t ver,
                                                        kp_describe_log_dirs_request *q) {
    return h_resp(h, h_send(h, c, "admin", 35, ver, q));
}

static const kp_describe_log_dirs_partition *find_part(const kp_describe_log_dirs_result *res, const char *topic_name,
                                                       int32_t index) {
    for (int32_t i = 0; i < res->topics.n; i++)
        for (int32_t j = 0; kp_str_eq(res->topics.v[i].name, topic_name) && j < res->topics.v[i].partitions.n; j++)
            if (res->topics.v[i].partitions.v[j].partition_index == index) return &res->topics.v[i].partitions.v[j];
    return NULL;
}

static void test_describe_log_dirs_lists_the_partitions_each_broker_leads(void **state) {
    (void)state;
    char dir[64];
    tmp_dir_new(dir, sizeof dir, "logdirs");
    const char *const ov[] = {"data.dir", dir, NULL};
    harness *h = kafka_harness(ov);
    h->s.nnodes = 2;
    h->s.nodes[1].id = h->s.nodes[0].id + 1;
    topic *t = make_topic(h, "t", 4);
    make_topic(h, "u", 1);
    conn *c[2] = {h_conn(h, NULL), h_conn(h, NULL)};
    c[1]->node = 1;
    for (int32_t i = 0; i < t->nparts; i++) produce(h, c[t->parts[i].leader], "t", i, 1 + i);

    for (int16_t ver = 0; ver <= 4; ver++)
        for (int node = 0; node < 2; node++) {
            kp_describe_log_dirs_request q = {0};
            q.topics.n = -1; /* null: every topic */
            kp_describe_log_dirs_response *resp = describe_log_dirs(h, c[node], ver, &q);
            assert_int_equal(resp->error_code, 0);
            assert_int_equal(resp->results.n, 1);
            const kp_describe_log_dirs_result *res = &resp->results.v[0];
            assert_int_equal(res->error_code, 0);
            char want[128];
            snprintf(want, sizeof want, "%s/broker-%d", dir, h->s.nodes[node].id);
            assert_string_equal(h_cstr(h, res->log_dir), want);
            int listed = 0;
            for (int32_t i = 0; i < res->topics.n; i++) listed += res->topics.v[i].partitions.n;
            int led = 0;
            for (int32_t i = 0; i < t->nparts; i++) {
                const kp_describe_log_dirs_partition *p = find_part(res, "t", i);
                if (t->parts[i].leader != node) {
                    assert_null(p);
                    continue;
                }
                led++;
                assert_non_null(p);
                assert_int_equal(p->partition_size, stored_bytes(h, "t", i));
                assert_true(p->partition_size > 0);
                assert_int_equal(p->offset_lag, 0);
                assert_false(p->is_future_key);
            }
            topic *u = topic_find(&h->s, "u", 1);
            if (u->parts[0].leader == node) {
                led++;
                assert_int_equal(find_part(res, "u", 0)->partition_size, 0);
            }
            assert_int_equal(listed, led);
            if (ver >= 4) {
                assert_true(res->total_bytes > 0);
                assert_true(res->usable_bytes >= 0 && res->usable_bytes <= res->total_bytes);
            } else {
                assert_int_equal(res->total_bytes, -1); /* not on the wire before v4 */
            }
        }
    h_free(h);
    tmp_dir_remove(dir);
}

static void test_describe_log_dirs_named_topics_and_memory_store(void **state) {
    (void)state;
    const char *const ov[] = {"data.dir", ":memory:", NULL};
    harness *h = kafka_harness(ov);
    conn *c = h_conn(h, NULL);
    make_topic(h, "t", 3);
    make_topic(h, "other", 1);
    produce(h, c, "t", 2, 3);
    int32_t want_t[] = {2, 99};
    int32_t want_other[] = {0};
    kp_describe_log_dirs_topic named[3] = {{.topic = kp_str_c("t")}, {.topic = kp_str_c("nope")},
                                           {.topic = kp_str_c("other")}};
    named[0].partitions.n = 2;
    named[0].partitions.v = want_t;
    named[1].partitions.n = 1;
    named[1].partitions.v = want_other;
    named[2].partitions.n = 0; /* no partitions asked: the topic is left out */
    kp_describe_log_dirs_request q = {0};
    q.topics.n = 3;
    q.topics.v = named;
    kp_describe_log_dirs_response *resp = describe_log_dirs(h, c, 4, &q);
    const kp_describe_log_dirs_result *res = &resp->results.v[0];
    assert_int_equal(res->topics.n, 1);
    assert_true(kp_str_eq(res->topics.v[0].name, "t"));
    assert_int_equal(res->topics.v[0].partitions.n, 1);
    assert_int_equal(res->topics.v[0].partitions.v[0].partition_index, 2);
    assert_int_equal(res->topics.v[0].partitions.v[0].partition_size, stored_bytes(h, "t", 2));
    assert_int_equal(res->total_bytes, -1); /* :memory: has no volume */
    assert_int_equal(res->usable_bytes, -1);
    h_free(h);
}

/* every test frees its harness in the teardown too, so a failed assertion leaks nothing */
#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_list_partition_reassignments_is_always_empty),
        T(test_serverless_neither_advertises_nor_serves_delete_records_and_describe_log_dirs),
        T(test_kafka_profile_advertises_delete_records_and_describe_log_dirs),
        T(test_transaction_version_gates_the_v2_versions),
        T(test_delete_records_mid_batch_keeps_the_batch_and_moves_log_start),
        T(test_delete_records_minus_one_means_the_high_watermark),
        T(test_delete_records_refusals),
        T(test_delete_records_partition_led_elsewhere_is_not_leader),
        T(test_delete_records_is_answered_once_stored),
        T(test_describe_log_dirs_lists_the_partitions_each_broker_leads),
        T(test_describe_log_dirs_named_topics_and_memory_store),
        T(test_describe_cluster_endpoint_types_get_kafkas_codes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
