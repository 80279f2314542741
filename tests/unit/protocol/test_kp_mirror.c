/*
 * kp_mirror: what a request names, and error answers shaped like their request. The Produce
 * case goes bytes in, bytes out, with both vectors written by hand from the protocol
 * documentation; AddPartitionsToTxn and TxnOffsetCommit compare with the answers Apache Kafka
 * itself gives; the others build request structs and check the answer's fields.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "kp.h"
#include "kp_mirror.h"
#include "kp_msgs.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define S(lit) ((kp_str){(lit), (int32_t)(sizeof(lit) - 1)})
#define ANY ((kp_str){NULL, -1})

static void assert_str(kp_str got, const char *want) {
    assert_int_equal(got.len, (int32_t)strlen(want));
    assert_memory_equal(got.p, want, strlen(want));
}

static kp_target target(kp_str topic, int32_t partition) { return (kp_target){topic, NULL, partition}; }

/* ---- Produce v3: bytes in, bytes out ---- */

static const uint8_t produce_v3_req[] = {
    0xff, 0xff,             /* transactional_id: null */
    0xff, 0xff,             /* acks -1 */
    0x00, 0x00, 0x75, 0x30, /* timeout_ms 30000 */
    0x00, 0x00, 0x00, 0x02, /* topic_data: 2 */
    0x00, 0x01, 't',
    0x00, 0x00, 0x00, 0x02,                         /* partition_data: 2 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* index 0, records: 0 bytes */
    0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, /* index 2, records: 0 bytes */
    0x00, 0x02, 'u', 'v',
    0x00, 0x00, 0x00, 0x01,
    0x00, 0x00, 0x00, 0x07, 0xff, 0xff, 0xff, 0xff, /* index 7, records: null */
};

static void test_produce_v3_bytes(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_produce_request q;
    kp_reader rd;
    kp_reader_init(&rd, produce_v3_req, sizeof produce_v3_req);
    assert_true(kp_decode(&rd, &kp_produce_request_schema, 3, false, &q, &a));
    assert_int_equal(kp_rd_left(&rd), 0);

    kp_produce_response resp;
    memset(&resp, 0x5a, sizeof resp); /* whatever was there is overwritten */
    kp_mirror_error(&kp_produce_request_schema, &kp_produce_response_schema, 3, &q, &resp, 6, S("injected"), &a);

    /* partition: index, error_code 6, base_offset 0, log_append_time_ms -1 (v2+) */
#define PART(i) 0x00, 0x00, 0x00, (i), 0x00, 0x06, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff
    static const uint8_t want[] = {
        0x00, 0x00, 0x00, 0x02,
        0x00, 0x01, 't', 0x00, 0x00, 0x00, 0x02, PART(0), PART(2),
        0x00, 0x02, 'u', 'v', 0x00, 0x00, 0x00, 0x01, PART(7),
        0x00, 0x00, 0x00, 0x00, /* throttle_time_ms */
    };
#undef PART
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, &kp_produce_response_schema, 3, false, &resp);
    assert_int_equal(w.len, sizeof want);
    assert_memory_equal(w.buf, want, sizeof want);
    kp_writer_free(&w);
    kp_arena_free(&a);
}

/* v9 (flexible) carries error_message, and the tagged fields keep their defaults. */
static void test_produce_v9_message(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_produce_partition_produce_data parts[] = {{.index = 4}};
    kp_produce_topic_produce_data topics[] = {{.name = S("t")}};
    topics[0].partition_data.n = 1;
    topics[0].partition_data.v = parts;
    kp_produce_request q;
    kp_defaults(&kp_produce_request_schema, 9, &q);
    q.topic_data.n = 1;
    q.topic_data.v = topics;
    kp_produce_response resp;
    kp_mirror_error(&kp_produce_request_schema, &kp_produce_response_schema, 9, &q, &resp, 6, S("rule 1"), &a);
    assert_int_equal(resp.responses.n, 1);
    assert_str(resp.responses.v[0].name, "t");
    kp_produce_partition_produce_response *p = &resp.responses.v[0].partition_responses.v[0];
    assert_int_equal(resp.responses.v[0].partition_responses.n, 1);
    assert_int_equal(p->index, 4);
    assert_int_equal(p->error_code, 6);
    assert_str(p->error_message, "rule 1");
    assert_int_equal(p->record_errors.n, 0);
    assert_int_equal(p->current_leader.leader_id, -1);
    assert_int_equal(resp.node_endpoints.n, 0);
    /* and it encodes and decodes back */
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, &kp_produce_response_schema, 9, true, &resp);
    kp_reader rd;
    kp_reader_init(&rd, w.buf, w.len);
    kp_produce_response back;
    assert_true(kp_decode(&rd, &kp_produce_response_schema, 9, true, &back, &a));
    assert_int_equal(kp_rd_left(&rd), 0);
    assert_int_equal(back.responses.v[0].partition_responses.v[0].error_code, 6);
    kp_writer_free(&w);
    kp_arena_free(&a);
}

/* ---- other shapes ---- */

/* A string array (DescribeGroups' groups) fills the answering element's string key. */
static void test_describe_groups_strings(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_str names[] = {S("g1"), S("g2")};
    kp_describe_groups_request q;
    kp_defaults(&kp_describe_groups_request_schema, 5, &q);
    q.groups.n = 2;
    q.groups.v = names;
    kp_describe_groups_response resp;
    kp_mirror_error(&kp_describe_groups_request_schema, &kp_describe_groups_response_schema, 5, &q, &resp, 16, ANY,
                    &a);
    assert_int_equal(resp.groups.n, 2);
    assert_str(resp.groups.v[0].group_id, "g1");
    assert_str(resp.groups.v[1].group_id, "g2");
    assert_int_equal(resp.groups.v[1].error_code, 16);
    assert_int_equal(resp.groups.v[1].members.n, 0);
    kp_arena_free(&a);
}

/* Fetch v13 names topics by id; the answer follows topics, not forgotten_topics_data. */
static void test_fetch_topic_ids(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_fetch_partition parts[] = {{.partition = 3}, {.partition = 9}};
    kp_fetch_topic topics[1];
    memset(topics, 0, sizeof topics);
    memset(topics[0].topic_id.b, 0xab, 16);
    topics[0].partitions.n = 2;
    topics[0].partitions.v = parts;
    int32_t forgotten_parts[] = {1};
    kp_fetch_forgotten_topic forgotten[1];
    memset(forgotten, 0, sizeof forgotten);
    memset(forgotten[0].topic_id.b, 0xcd, 16);
    forgotten[0].partitions.n = 1;
    forgotten[0].partitions.v = forgotten_parts;
    kp_fetch_request q;
    kp_defaults(&kp_fetch_request_schema, 13, &q);
    q.topics.n = 1;
    q.topics.v = topics;
    q.forgotten_topics_data.n = 1;
    q.forgotten_topics_data.v = forgotten;
    kp_fetch_response resp;
    kp_mirror_error(&kp_fetch_request_schema, &kp_fetch_response_schema, 13, &q, &resp, 6, ANY, &a);
    assert_int_equal(resp.error_code, 6); /* the session's, top level */
    assert_int_equal(resp.responses.n, 1);
    assert_memory_equal(resp.responses.v[0].topic_id.b, topics[0].topic_id.b, 16);
    assert_int_equal(resp.responses.v[0].partitions.n, 2);
    assert_int_equal(resp.responses.v[0].partitions.v[1].partition_index, 9);
    assert_int_equal(resp.responses.v[0].partitions.v[1].error_code, 6);
    assert_int_equal(resp.responses.v[0].partitions.v[1].high_watermark, 0);
    assert_int_equal(resp.responses.v[0].partitions.v[1].records.len, 0);

    kp_target t = {ANY, NULL, -1};
    kp_uuid id;
    memset(id.b, 0xab, 16);
    t.topic = S("by-id");
    t.topic_id = &id;
    assert_true(kp_names_topic(&kp_fetch_request_schema, 13, &q, &t));
    t.partition = 9;
    assert_true(kp_names_topic(&kp_fetch_request_schema, 13, &q, &t));
    t.partition = 4;
    assert_false(kp_names_topic(&kp_fetch_request_schema, 13, &q, &t));
    t.topic_id = NULL;
    t.partition = -1;
    assert_false(kp_names_topic(&kp_fetch_request_schema, 13, &q, &t));
    kp_arena_free(&a);
}

/* OffsetFetch v8: groups, their topics, and an int32 array of partitions becoming elements. */
static void test_offset_fetch_groups(void **state) {
    (void)state;
    kp_arena a = {0};
    int32_t idx[] = {0, 5};
    kp_offset_fetch_request_topics topics[] = {{.name = S("t")}};
    topics[0].partition_indexes.n = 2;
    topics[0].partition_indexes.v = idx;
    kp_offset_fetch_request_group groups[1];
    kp_defaults(&kp_offset_fetch_request_group_schema, 8, groups);
    groups[0].group_id = S("g");
    groups[0].topics.n = 1;
    groups[0].topics.v = topics;
    kp_offset_fetch_request q;
    kp_defaults(&kp_offset_fetch_request_schema, 8, &q);
    q.groups.n = 1;
    q.groups.v = groups;
    kp_offset_fetch_response resp;
    kp_mirror_error(&kp_offset_fetch_request_schema, &kp_offset_fetch_response_schema, 8, &q, &resp, 14, ANY, &a);
    assert_int_equal(resp.groups.n, 1);
    assert_str(resp.groups.v[0].group_id, "g");
    assert_int_equal(resp.groups.v[0].error_code, 14);
    assert_int_equal(resp.groups.v[0].topics.n, 1);
    assert_str(resp.groups.v[0].topics.v[0].name, "t");
    assert_int_equal(resp.groups.v[0].topics.v[0].partitions.n, 2);
    assert_int_equal(resp.groups.v[0].topics.v[0].partitions.v[1].partition_index, 5);
    assert_int_equal(resp.groups.v[0].topics.v[0].partitions.v[1].error_code, 14);

    assert_true(kp_names_group(&kp_offset_fetch_request_schema, 8, &q, S("g")));
    assert_false(kp_names_group(&kp_offset_fetch_request_schema, 8, &q, S("h")));
    kp_target t = target(S("t"), 5);
    assert_true(kp_names_topic(&kp_offset_fetch_request_schema, 8, &q, &t));
    t.partition = 1;
    assert_false(kp_names_topic(&kp_offset_fetch_request_schema, 8, &q, &t));
    /* null topics: every topic of the group */
    groups[0].topics.n = -1;
    assert_true(kp_names_topic(&kp_offset_fetch_request_schema, 8, &q, &t));
    kp_arena_free(&a);
}

/* FindCoordinator: the key answers, and names a group only with key_type 0. */
static void test_find_coordinator(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_str keys[] = {S("g")};
    kp_find_coordinator_request q;
    kp_defaults(&kp_find_coordinator_request_schema, 4, &q);
    q.coordinator_keys.n = 1;
    q.coordinator_keys.v = keys;
    kp_find_coordinator_response resp;
    kp_mirror_error(&kp_find_coordinator_request_schema, &kp_find_coordinator_response_schema, 4, &q, &resp, 15,
                    S("x"), &a);
    assert_int_equal(resp.coordinators.n, 1);
    assert_str(resp.coordinators.v[0].key, "g");
    assert_int_equal(resp.coordinators.v[0].error_code, 15);
    assert_str(resp.coordinators.v[0].error_message, "x");
    assert_true(kp_names_group(&kp_find_coordinator_request_schema, 4, &q, S("g")));
    q.key_type = 1; /* a transactional id */
    assert_false(kp_names_group(&kp_find_coordinator_request_schema, 4, &q, S("g")));

    kp_defaults(&kp_find_coordinator_request_schema, 0, &q);
    q.key = S("g");
    assert_true(kp_names_group(&kp_find_coordinator_request_schema, 0, &q, S("g")));
    kp_mirror_error(&kp_find_coordinator_request_schema, &kp_find_coordinator_response_schema, 0, &q, &resp, 15, ANY,
                    &a);
    assert_int_equal(resp.error_code, 15);
    kp_arena_free(&a);
}

/* ---- transactions: the answers Apache Kafka gives ---- */

static size_t unhex(const char *hex, uint8_t *out, size_t cap) {
    size_t n = 0;
    for (; hex[0] && hex[1]; hex += 2) {
        unsigned v = 0;
        assert_true(n < cap);
        assert_true(sscanf(hex, "%2x", &v) == 1);
        out[n++] = (uint8_t)v;
    }
    return n;
}

/*
 * Mirror an error answer to the request in req_hex at ver and compare its encoding with
 * want_hex: both vectors come from kafka-clients 4.4.0, the request written by its
 * *RequestData and the answer by that request's getErrorResponse(0, code's exception).
 */
static void mirror_like_kafka(const kp_msg *m, int ver, const char *req_hex, int16_t code, const char *want_hex) {
    kp_arena a = {0};
    uint8_t req[512], want[512];
    size_t rn = unhex(req_hex, req, sizeof req), wn = unhex(want_hex, want, sizeof want);
    bool flex = kp_is_flex(m, (int16_t)ver);
    void *q = kp_arena_alloc(&a, m->req->size), *resp = kp_arena_alloc(&a, m->resp->size);
    kp_reader rd;
    kp_reader_init(&rd, req, rn);
    assert_true(kp_decode(&rd, m->req, ver, flex, q, &a));
    assert_int_equal(kp_rd_left(&rd), 0);
    kp_mirror_error(m->req, m->resp, ver, q, resp, code, ANY, &a);
    kp_writer w;
    kp_writer_init(&w, 0);
    kp_encode(&w, m->resp, ver, flex, resp);
    if (w.len != wn || memcmp(w.buf, want, wn) != 0) {
        print_error("%s v%d: mirrored answer differs from Kafka's: ", m->name, ver);
        for (size_t i = 0; i < w.len; i++) print_error("%02x", w.buf[i]);
        print_error("\n");
        fail();
    }
    kp_writer_free(&w);
    kp_arena_free(&a);
}

/* v0-3: the error goes in partition_error_code, one result per partition asked for. */
static void test_add_partitions_to_txn_v3(void **state) {
    (void)state;
    /* kafka-clients 4.4.0: AddPartitionsToTxnRequestData v3 (txn-1: t1 [0, 2], t2 [5]) */
    static const char req[] = "0674786e2d3100000000000003e80003030374310300000000000000020003743202000000050000";
    /* kafka-clients 4.4.0: AddPartitionsToTxnRequest.getErrorResponse(0, CONCURRENT_TRANSACTIONS) v3 */
    static const char want[] = "00000000030374310300000000003300000000020033000003743202000000050033000000";
    mirror_like_kafka(&kp_msg_add_partitions_to_txn, 3, req, 51, want);

    /* a fault rule's target finds its topic and partition there */
    kp_arena a = {0};
    int32_t parts[] = {0, 2};
    kp_add_partitions_to_txn_topic topics[] = {{.name = S("t1")}};
    topics[0].partitions.n = 2;
    topics[0].partitions.v = parts;
    kp_add_partitions_to_txn_request q;
    kp_defaults(&kp_add_partitions_to_txn_request_schema, 3, &q);
    q.v3_and_below_topics.n = 1;
    q.v3_and_below_topics.v = topics;
    kp_target t = target(S("t1"), 2);
    assert_true(kp_names_topic(&kp_add_partitions_to_txn_request_schema, 3, &q, &t));
    kp_add_partitions_to_txn_response r;
    kp_mirror_error(&kp_add_partitions_to_txn_request_schema, &kp_add_partitions_to_txn_response_schema, 3, &q, &r,
                    0, ANY, &a);
    assert_int_equal(kp_set_errors(&kp_add_partitions_to_txn_response_schema, 3, &r, 3, ANY, &t), 1);
    assert_int_equal(r.results_by_topic_v3_and_below.v[0].results_by_partition.v[0].partition_error_code, 0);
    assert_int_equal(r.results_by_topic_v3_and_below.v[0].results_by_partition.v[1].partition_error_code, 3);
    assert_int_equal(kp_error_places(&kp_add_partitions_to_txn_response_schema, 0, 3), KP_ERRS_TOPIC);
    kp_arena_free(&a);
}

/*
 * v4+ (broker to broker) nests results under each transaction. Kafka answers a refused
 * request with the top-level error_code alone; the mirror, which answers every element the
 * request names, also fills results_by_transaction[].topic_results down to each partition.
 */
static void test_add_partitions_to_txn_v4_nesting(void **state) {
    (void)state;
    kp_arena a = {0};
    int32_t parts[] = {7};
    kp_add_partitions_to_txn_topic topics[] = {{.name = S("t1")}};
    topics[0].partitions.n = 1;
    topics[0].partitions.v = parts;
    kp_add_partitions_to_txn_transaction txns[1];
    kp_defaults(&kp_add_partitions_to_txn_transaction_schema, 4, txns);
    txns[0].transactional_id = S("txn-1");
    txns[0].topics.n = 1;
    txns[0].topics.v = topics;
    kp_add_partitions_to_txn_request q;
    kp_defaults(&kp_add_partitions_to_txn_request_schema, 4, &q);
    q.transactions.n = 1;
    q.transactions.v = txns;
    kp_add_partitions_to_txn_response r;
    kp_mirror_error(&kp_add_partitions_to_txn_request_schema, &kp_add_partitions_to_txn_response_schema, 4, &q, &r,
                    51, ANY, &a);
    assert_int_equal(r.error_code, 51);
    assert_int_equal(r.results_by_topic_v3_and_below.n, 0);
    assert_int_equal(r.results_by_transaction.n, 1);
    assert_str(r.results_by_transaction.v[0].transactional_id, "txn-1");
    assert_int_equal(r.results_by_transaction.v[0].topic_results.n, 1);
    const kp_add_partitions_to_txn_topic_result *tr = r.results_by_transaction.v[0].topic_results.v;
    assert_str(tr->name, "t1");
    assert_int_equal(tr->results_by_partition.n, 1);
    assert_int_equal(tr->results_by_partition.v[0].partition_index, 7);
    assert_int_equal(tr->results_by_partition.v[0].partition_error_code, 51);
    assert_int_equal(kp_error_places(&kp_add_partitions_to_txn_response_schema, 4, 5), KP_ERRS_TOP | KP_ERRS_TOPIC);
    kp_arena_free(&a);
}

/* TxnOffsetCommit: one error_code per partition, as Kafka answers (v0 classic, v3 flexible). */
static void test_txn_offset_commit(void **state) {
    (void)state;
    /* kafka-clients 4.4.0: TxnOffsetCommitRequestData v0 (grp; t1 partitions 0 and 1) */
    static const char req0[] = 
        "000574786e2d31000367727000000000000003e8000300000001000274310000000200000000000000000000002a0004"
        "6d65746100000001000000000000002bffff";
    /* kafka-clients 4.4.0: TxnOffsetCommitRequest.getErrorResponse(0, COORDINATOR_LOAD_IN_PROGRESS) v0 */
    static const char want0[] = "0000000000000001000274310000000200000000000e00000001000e";
    mirror_like_kafka(&kp_msg_txn_offset_commit, 0, req0, 14, want0);
    /* kafka-clients 4.4.0: TxnOffsetCommitRequestData v3 */
    static const char req3[] = 
        "0674786e2d310467727000000000000003e8000300000005046d2d3107696e73742d3102037431030000000000000000"
        "0000002a00000009056d6574610000000001000000000000002b0000000900000000";
    /* kafka-clients 4.4.0: TxnOffsetCommitRequest.getErrorResponse(0, COORDINATOR_LOAD_IN_PROGRESS) v3 */
    static const char want3[] = "00000000020374310300000000000e0000000001000e000000";
    mirror_like_kafka(&kp_msg_txn_offset_commit, 3, req3, 14, want3);

    kp_arena a = {0};
    uint8_t b[512];
    size_t n = unhex(req3, b, sizeof b);
    kp_txn_offset_commit_request q;
    kp_reader rd;
    kp_reader_init(&rd, b, n);
    assert_true(kp_decode(&rd, &kp_txn_offset_commit_request_schema, 3, true, &q, &a));
    assert_true(kp_names_group(&kp_txn_offset_commit_request_schema, 3, &q, S("grp")));
    kp_target t = target(S("t1"), 1);
    assert_true(kp_names_topic(&kp_txn_offset_commit_request_schema, 3, &q, &t));
    kp_arena_free(&a);
}

/* ---- what a request names ---- */

static void test_names_topic(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_produce_request pq;
    kp_reader rd;
    kp_reader_init(&rd, produce_v3_req, sizeof produce_v3_req);
    assert_true(kp_decode(&rd, &kp_produce_request_schema, 3, false, &pq, &a));
    kp_target t = target(S("t"), -1);
    assert_true(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));
    t.partition = 2;
    assert_true(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));
    t.partition = 1;
    assert_false(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));
    t = target(S("uv"), 7);
    assert_true(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));
    t = target(S("u"), -1);
    assert_false(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));
    t = target(ANY, -1);
    assert_true(kp_names_topic(&kp_produce_request_schema, 3, &pq, &t));

    /* Metadata names topics without partitions: any partition of them; null topics: all */
    kp_metadata_request_topic mt[] = {{.name = S("m")}};
    kp_metadata_request mq;
    kp_defaults(&kp_metadata_request_schema, 9, &mq);
    mq.topics.n = 1;
    mq.topics.v = mt;
    t = target(S("m"), 3);
    assert_true(kp_names_topic(&kp_metadata_request_schema, 9, &mq, &t));
    t = target(S("n"), -1);
    assert_false(kp_names_topic(&kp_metadata_request_schema, 9, &mq, &t));
    mq.topics.n = -1;
    assert_true(kp_names_topic(&kp_metadata_request_schema, 9, &mq, &t));

    /* DeleteTopics v5: a string array of topic names */
    kp_str names[] = {S("d")};
    kp_delete_topics_request dq;
    kp_defaults(&kp_delete_topics_request_schema, 5, &dq);
    dq.topic_names.n = 1;
    dq.topic_names.v = names;
    t = target(S("d"), -1);
    assert_true(kp_names_topic(&kp_delete_topics_request_schema, 5, &dq, &t));

    /* DescribeConfigs: a TOPIC (2) resource names it; a BROKER (4) resource does not */
    kp_describe_configs_resource res[] = {{.resource_type = 4, .resource_name = S("c")}};
    kp_describe_configs_request cq;
    kp_defaults(&kp_describe_configs_request_schema, 4, &cq);
    cq.resources.n = 1;
    cq.resources.v = res;
    t = target(S("c"), -1);
    assert_false(kp_names_topic(&kp_describe_configs_request_schema, 4, &cq, &t));
    res[0].resource_type = 2;
    assert_true(kp_names_topic(&kp_describe_configs_request_schema, 4, &cq, &t));

    /* JoinGroup's protocol names are not topics; its group_id is a group */
    kp_join_group_request_protocol protos[] = {{.name = S("j")}};
    kp_join_group_request jq;
    kp_defaults(&kp_join_group_request_schema, 5, &jq);
    jq.group_id = S("grp");
    jq.protocols.n = 1;
    jq.protocols.v = protos;
    t = target(S("j"), -1);
    assert_false(kp_names_topic(&kp_join_group_request_schema, 5, &jq, &t));
    assert_true(kp_names_group(&kp_join_group_request_schema, 5, &jq, S("grp")));
    assert_false(kp_names_group(&kp_join_group_request_schema, 5, &jq, S("j")));
    kp_arena_free(&a);
}

/* ---- errors set in an answer already built ---- */

static void metadata_answer(kp_metadata_response *r, kp_metadata_response_topic *topics,
                            kp_metadata_response_partition *parts) {
    kp_defaults(&kp_metadata_response_schema, 9, r);
    for (int i = 0; i < 3; i++) {
        kp_defaults(&kp_metadata_response_partition_schema, 9, &parts[i]);
        parts[i].partition_index = i < 2 ? i : 0;
    }
    for (int i = 0; i < 2; i++) kp_defaults(&kp_metadata_response_topic_schema, 9, &topics[i]);
    topics[0].name = S("a");
    topics[0].partitions.n = 2;
    topics[0].partitions.v = parts;
    topics[1].name = S("b");
    topics[1].partitions.n = 1;
    topics[1].partitions.v = parts + 2;
    r->topics.n = 2;
    r->topics.v = topics;
}

static void test_set_errors_metadata(void **state) {
    (void)state;
    kp_metadata_response r;
    kp_metadata_response_topic topics[2];
    kp_metadata_response_partition parts[3];

    metadata_answer(&r, topics, parts);
    kp_target t = target(S("a"), -1);
    assert_int_equal(kp_set_errors(&kp_metadata_response_schema, 9, &r, 5, ANY, &t), 3);
    assert_int_equal(topics[0].error_code, 5);
    assert_int_equal(parts[1].error_code, 5);
    assert_int_equal(topics[1].error_code, 0);
    assert_int_equal(parts[2].error_code, 0);

    metadata_answer(&r, topics, parts);
    t = target(S("a"), 1);
    assert_int_equal(kp_set_errors(&kp_metadata_response_schema, 9, &r, 6, ANY, &t), 1);
    assert_int_equal(parts[1].error_code, 6);
    assert_int_equal(parts[0].error_code, 0);
    assert_int_equal(topics[0].error_code, 0);

    /* a partition the answer lacks: the whole topic */
    metadata_answer(&r, topics, parts);
    t = target(S("b"), 4);
    assert_int_equal(kp_set_errors(&kp_metadata_response_schema, 9, &r, 3, ANY, &t), 2);
    assert_int_equal(topics[1].error_code, 3);
    assert_int_equal(parts[2].error_code, 3);
    assert_int_equal(topics[0].error_code, 0);

    /* a topic the answer does not list: nothing */
    metadata_answer(&r, topics, parts);
    t = target(S("zz"), -1);
    assert_int_equal(kp_set_errors(&kp_metadata_response_schema, 9, &r, 3, ANY, &t), 0);

    /* no target: every one */
    metadata_answer(&r, topics, parts);
    assert_int_equal(kp_set_errors(&kp_metadata_response_schema, 9, &r, 3, ANY, NULL), 5);
}

/* An answer with top-level errors only (ApiVersions) takes them whatever the target. */
static void test_set_errors_top_level(void **state) {
    (void)state;
    kp_api_versions_response r;
    kp_defaults(&kp_api_versions_response_schema, 3, &r);
    kp_target t = target(S("a"), -1);
    assert_int_equal(kp_set_errors(&kp_api_versions_response_schema, 3, &r, 7, ANY, &t), 1);
    assert_int_equal(r.error_code, 7);
}

/* After a failed commit: only what was accepted, below the top level, takes the code. */
static void test_set_errors_accepted(void **state) {
    (void)state;
    kp_offset_delete_response_partition parts[3] = {{0, 0}, {1, 3}, {0, 0}};
    kp_offset_delete_response_topic topics[2] = {{.name = S("a")}, {.name = S("b")}};
    topics[0].partitions.n = 2;
    topics[0].partitions.v = parts;
    topics[1].partitions.n = 1;
    topics[1].partitions.v = parts + 2;
    kp_offset_delete_response r = {0};
    r.topics.n = 2;
    r.topics.v = topics;
    assert_int_equal(kp_set_errors_accepted(&kp_offset_delete_response_schema, 0, &r, 16), 2);
    assert_int_equal(parts[0].error_code, 16);
    assert_int_equal(parts[1].error_code, 3);
    assert_int_equal(parts[2].error_code, 16);
    assert_int_equal(r.error_code, 0);
}

static void test_error_places(void **state) {
    (void)state;
    assert_int_equal(kp_error_places(&kp_produce_response_schema, 0, 11), KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_metadata_response_schema, 0, 12), KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_heartbeat_response_schema, 0, 4), KP_ERRS_TOP);
    assert_int_equal(kp_error_places(&kp_describe_groups_response_schema, 0, 5), KP_ERRS_OTHER);
    assert_int_equal(kp_error_places(&kp_describe_configs_response_schema, 0, 4), KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_offset_fetch_response_schema, 0, 1), KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_offset_fetch_response_schema, 0, 9),
                     KP_ERRS_TOP | KP_ERRS_TOPIC | KP_ERRS_OTHER);
    assert_int_equal(kp_error_places(&kp_fetch_response_schema, 0, 6), KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_fetch_response_schema, 7, 17), KP_ERRS_TOP | KP_ERRS_TOPIC);
    assert_int_equal(kp_error_places(&kp_sasl_handshake_response_schema, 0, 1), KP_ERRS_TOP);
}

/* Fill every field of a request at ver: two elements in each array, "t" in strings, 1 in ints. */
static void fill(const kp_schema *s, int ver, void *p, kp_arena *a) {
    for (unsigned i = 0; i < s->nfields; i++) {
        const kp_field *f = &s->fields[i];
        if (ver < f->vmin || ver > f->vmax) continue;
        void *v = (uint8_t *)p + f->off;
        switch (f->type) {
        case KP_STR: *(kp_str *)v = S("t"); break;
        case KP_BYTES:
        case KP_RECORDS: *(kp_str *)v = (kp_str){"", 0}; break;
        case KP_I8: *(int8_t *)v = 0; break; /* key_type 0 (GROUP), resource_type 0 */
        case KP_I16: *(int16_t *)v = 1; break;
        case KP_I32: *(int32_t *)v = 1; break;
        case KP_I64: *(int64_t *)v = 1; break;
        case KP_UUID: memset(v, 0x11, 16); break;
        case KP_STRUCT: fill(f->sub, ver, v, a); break;
        case KP_ARRAY: {
            kp_arr *arr = v;
            size_t esz;
            switch (f->elem) {
            case KP_STRUCT: esz = f->sub->size; break;
            case KP_STR: esz = sizeof(kp_str); break;
            case KP_I64: esz = 8; break;
            default: esz = 4; break;
            }
            arr->n = 2;
            arr->v = kp_arena_alloc(a, 2 * esz);
            for (int k = 0; k < 2; k++) {
                void *e = (uint8_t *)arr->v + esz * (size_t)k;
                if (f->elem == KP_STRUCT) {
                    kp_defaults(f->sub, ver, e);
                    fill(f->sub, ver, e, a);
                } else if (f->elem == KP_STR) {
                    *(kp_str *)e = S("t");
                } else if (f->elem == KP_I32) {
                    *(int32_t *)e = 1;
                }
            }
            break;
        }
        default: break;
        }
    }
}

/*
 * Every message at every version, its request empty and then with every field filled: the
 * mirrored answer encodes and decodes, the filled request names topic "t" partition 1 when it
 * names topics at all, and setting errors over the answer finds what the mirror set.
 */
static void test_every_message(void **state) {
    (void)state;
    for (int16_t key = 0; key < 100; key++) {
        const kp_msg *m = kp_msg_get(key);
        if (!m) continue;
        for (int16_t v = m->vmin; v <= m->vmax; v++) {
            for (int filled = 0; filled < 2; filled++) {
                kp_arena a = {0};
                void *q = kp_arena_alloc(&a, m->req->size);
                kp_defaults(m->req, v, q);
                if (filled) fill(m->req, v, q, &a);
                void *r = kp_arena_alloc(&a, m->resp->size);
                kp_mirror_error(m->req, m->resp, v, q, r, 42, S("m"), &a);
                bool flex = kp_is_flex(m, v);
                kp_writer w;
                kp_writer_init(&w, 0);
                kp_encode(&w, m->resp, v, flex, r);
                kp_reader rd;
                kp_reader_init(&rd, w.buf, w.len);
                void *back = kp_arena_alloc(&a, m->resp->size);
                if (!kp_decode(&rd, m->resp, v, flex, back, &a) || kp_rd_left(&rd)) {
                    print_error("%s v%d: mirrored answer does not decode\n", m->name, v);
                    fail();
                }
                kp_writer_free(&w);
                int set = kp_set_errors(m->resp, v, r, 43, ANY, NULL);
                if (kp_error_places(m->resp, v, v) & KP_ERRS_TOP) assert_true(set > 0);
                kp_target t = target(S("t"), 1);
                (void)kp_names_topic(m->req, v, q, &t);
                (void)kp_names_group(m->req, v, q, S("t"));
                kp_arena_free(&a);
            }
        }
    }
}

/* Filled Produce, OffsetCommit, JoinGroup, transaction requests name what they should. */
static void test_filled_requests_name(void **state) {
    (void)state;
    kp_arena a = {0};
    kp_uuid id; /* fill's topic ids: Fetch v13+ names topics by id only */
    memset(id.b, 0x11, 16);
    kp_target t = {S("t"), &id, 1}, other = target(S("u"), -1);
    static const int16_t topical[] = {0, 1, 2, 8, 19, 20, 23, 24, 28, 37};
    for (size_t i = 0; i < N(topical); i++) {
        const kp_msg *m = kp_msg_get(topical[i]);
        void *q = kp_arena_alloc(&a, m->req->size);
        kp_defaults(m->req, m->vmax, q);
        fill(m->req, m->vmax, q, &a);
        if (!kp_names_topic(m->req, m->vmax, q, &t)) {
            print_error("%s v%d does not name topic t partition 1\n", m->name, m->vmax);
            fail();
        }
        assert_false(kp_names_topic(m->req, m->vmax, q, &other));
    }
    static const int16_t grouped[] = {8, 9, 10, 11, 12, 13, 14, 15, 25, 28, 42, 47};
    for (size_t i = 0; i < N(grouped); i++) {
        const kp_msg *m = kp_msg_get(grouped[i]);
        void *q = kp_arena_alloc(&a, m->req->size);
        kp_defaults(m->req, m->vmax, q);
        fill(m->req, m->vmax, q, &a);
        if (!kp_names_group(m->req, m->vmax, q, S("t"))) {
            print_error("%s v%d does not name group t\n", m->name, m->vmax);
            fail();
        }
        assert_false(kp_names_group(m->req, m->vmax, q, S("u")));
    }
    kp_arena_free(&a);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_produce_v3_bytes),
        cmocka_unit_test(test_produce_v9_message),
        cmocka_unit_test(test_describe_groups_strings),
        cmocka_unit_test(test_fetch_topic_ids),
        cmocka_unit_test(test_offset_fetch_groups),
        cmocka_unit_test(test_find_coordinator),
        cmocka_unit_test(test_add_partitions_to_txn_v3),
        cmocka_unit_test(test_add_partitions_to_txn_v4_nesting),
        cmocka_unit_test(test_txn_offset_commit),
        cmocka_unit_test(test_names_topic),
        cmocka_unit_test(test_set_errors_metadata),
        cmocka_unit_test(test_set_errors_top_level),
        cmocka_unit_test(test_set_errors_accepted),
        cmocka_unit_test(test_error_places),
        cmocka_unit_test(test_every_message),
        cmocka_unit_test(test_filled_requests_name),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
