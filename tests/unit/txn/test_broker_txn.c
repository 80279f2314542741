/*
 * The transaction coordinator (broker/txn) and the log's view of transactions
 * (broker/topic/txn_log.c), driven in-process through the real handlers with
 * encoded requests: InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, EndTxn,
 * TxnOffsetCommit, DescribeTransactions, ListTransactions, and what Produce, Fetch,
 * ListOffsets and OffsetFetch do with transactions, against Apache Kafka's answers
 * (TransactionCoordinator, TransactionStateManager, ProducerStateManager, KafkaApis;
 * transaction version 1). The clock is frozen: time moves only by clk_advance.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "broker_harness.h"
#include "fixtures.h"
#include "group/group.h"
#include "kp_batch.h"
#include "topic/topic.h"
#include "txn/txn.h"

#define TIMEOUT_MS 60000

/* ---- set-up ---- */

static void make_topic(harness *h, const char *name, int32_t parts) {
    const char *why = NULL;
    if (!topic_create(&h->s, name, parts, 0, NULL, 0, &why)) fail_msg("topic %s: %s", name, why ? why : "?");
    assert_int_equal(topic_commit_now(&h->s), 0);
}

static partition *part(harness *h, const char *topic_name, int32_t index) {
    partition *p = topic_partition(&h->s, topic_name, strlen(topic_name), index);
    assert_non_null(p);
    return p;
}

/* One batch of a fetch answer. */
typedef struct seen {
    int64_t base, last, pid;
    int16_t attributes, epoch;
    int marker; /* 1 COMMIT, 0 ABORT, -1 data */
} seen;

static int parse(const kp_fetch_partition_data *pd, seen *out, int max) {
    if (pd->records.len <= 0) return 0;
    size_t pos = 0;
    int n = 0;
    kp_batch b;
    const char *why = NULL;
    int rc;
    while ((rc = kp_batch_next((const uint8_t *)pd->records.p, (size_t)pd->records.len, &pos, &b, &why)) == 1) {
        assert_true(n < max);
        assert_true(kp_batch_crc_ok(&b));
        out[n++] = (seen){b.base_offset, kp_batch_last_offset(&b), b.producer_id, b.attributes, b.producer_epoch,
                          kp_batch_marker_type(&b)};
    }
    if (rc < 0) fail_msg("fetched records do not parse: %s", why);
    return n;
}

/* ---- a transactional producer ---- */

typedef struct prod {
    conn *c;
    const char *id;
    int64_t pid;
    int16_t epoch;
    int32_t seq[2][8]; /* topic "t" and "u" */
} prod;

static int32_t *seq_of(prod *p, const char *topic_name, int32_t index) {
    return &p->seq[strcmp(topic_name, "u") == 0][index];
}

/* ---- InitProducerId ---- */

static int16_t init_full(harness *h, conn *c, int16_t ver, const char *id, int32_t timeout_ms, int64_t pid,
                         int16_t epoch, int64_t *out_pid, int16_t *out_epoch) {
    kp_init_producer_id_request q;
    kp_defaults(&kp_init_producer_id_request_schema, ver, &q);
    q.transactional_id = kp_str_c(id);
    q.transaction_timeout_ms = timeout_ms;
    q.producer_id = pid;
    q.producer_epoch = epoch;
    req *r = h_send(h, c, "txn-producer", 22, ver, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_init_producer_id_response *resp = h_resp(h, r);
    if (out_pid) *out_pid = resp->producer_id;
    if (out_epoch) *out_epoch = resp->producer_epoch;
    if (resp->error_code) {
        assert_int_equal(resp->producer_id, -1);
        assert_int_equal(resp->producer_epoch, -1);
    }
    return resp->error_code;
}

static prod *prod_new(harness *h, const char *id) {
    prod *p = kp_arena_alloc(&h->arena, sizeof *p);
    memset(p, 0, sizeof *p);
    p->c = h_conn(h, NULL);
    p->id = id;
    p->pid = -1;
    p->epoch = -1;
    return p;
}

/* The same producer (id, producer id, epoch, sequences) on a harness started again: p's arena is gone. */
static prod *prod_again(harness *h, const prod *saved) {
    prod *p = prod_new(h, saved->id);
    int32_t seq[2][8];
    memcpy(seq, saved->seq, sizeof seq);
    p->pid = saved->pid;
    p->epoch = saved->epoch;
    memcpy(p->seq, seq, sizeof seq);
    return p;
}

/* InitProducerId v4 without an expected producer: must succeed; sequences start again. */
static void prod_init(harness *h, prod *p, int32_t timeout_ms) {
    int16_t code = init_full(h, p->c, 4, p->id, timeout_ms, -1, -1, &p->pid, &p->epoch);
    if (code) fail_msg("InitProducerId %s: error %d", p->id, code);
    memset(p->seq, 0, sizeof p->seq);
}

/* ---- AddPartitionsToTxn ---- */

typedef struct tp_spec {
    const char *topic;
    int32_t parts[4];
    int n;
} tp_spec;

static kp_add_partitions_to_txn_response *add_parts_full(harness *h, conn *c, int16_t ver, const char *id,
                                                         int64_t pid, int16_t epoch, const tp_spec *spec, int n) {
    kp_add_partitions_to_txn_request q;
    kp_defaults(&kp_add_partitions_to_txn_request_schema, ver, &q);
    q.v3_and_below_transactional_id = kp_str_c(id);
    q.v3_and_below_producer_id = pid;
    q.v3_and_below_producer_epoch = epoch;
    kp_add_partitions_to_txn_topic ts[4];
    for (int i = 0; i < n; i++) {
        ts[i].name = kp_str_c(spec[i].topic);
        ts[i].partitions.n = spec[i].n;
        ts[i].partitions.v = (int32_t *)spec[i].parts;
    }
    q.v3_and_below_topics.n = n;
    q.v3_and_below_topics.v = ts;
    req *r = h_send(h, c, "txn-producer", 24, ver, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_add_partitions_to_txn_response *resp = h_resp(h, r);
    assert_int_equal(resp->results_by_topic_v3_and_below.n, n);
    for (int i = 0; i < n; i++) {
        assert_true(kp_str_eq(resp->results_by_topic_v3_and_below.v[i].name, spec[i].topic));
        assert_int_equal(resp->results_by_topic_v3_and_below.v[i].results_by_partition.n, spec[i].n);
    }
    return resp;
}

static int16_t part_code(const kp_add_partitions_to_txn_response *resp, int topic_i, int part_i) {
    return resp->results_by_topic_v3_and_below.v[topic_i].results_by_partition.v[part_i].partition_error_code;
}

/* One partition through AddPartitionsToTxn v3: its code. */
static int16_t add_part_v(harness *h, prod *p, int16_t ver, const char *topic_name, int32_t index) {
    tp_spec spec = {topic_name, {index}, 1};
    kp_add_partitions_to_txn_response *resp = add_parts_full(h, p->c, ver, p->id, p->pid, p->epoch, &spec, 1);
    assert_int_equal(resp->results_by_topic_v3_and_below.v[0].results_by_partition.v[0].partition_index, index);
    return part_code(resp, 0, 0);
}

static int16_t add_part(harness *h, prod *p, const char *topic_name, int32_t index) {
    return add_part_v(h, p, 3, topic_name, index);
}

/* ---- EndTxn, AddOffsetsToTxn ---- */

static req *end_send(harness *h, conn *c, int16_t ver, const char *id, int64_t pid, int16_t epoch, bool commit) {
    kp_end_txn_request q;
    kp_defaults(&kp_end_txn_request_schema, ver, &q);
    q.transactional_id = kp_str_c(id);
    q.producer_id = pid;
    q.producer_epoch = epoch;
    q.committed = commit;
    return h_send(h, c, "txn-producer", 26, ver, &q);
}

static int16_t end_full(harness *h, conn *c, int16_t ver, const char *id, int64_t pid, int16_t epoch, bool commit) {
    req *r = end_send(h, c, ver, id, pid, epoch, commit);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_end_txn_response *resp = h_resp(h, r);
    return resp->error_code;
}

static int16_t end_txn(harness *h, prod *p, bool commit) { return end_full(h, p->c, 3, p->id, p->pid, p->epoch, commit); }

static int16_t add_offsets_v(harness *h, prod *p, int16_t ver, const char *group) {
    kp_add_offsets_to_txn_request q;
    kp_defaults(&kp_add_offsets_to_txn_request_schema, ver, &q);
    q.transactional_id = kp_str_c(p->id);
    q.producer_id = p->pid;
    q.producer_epoch = p->epoch;
    q.group_id = kp_str_c(group);
    req *r = h_send(h, p->c, "txn-producer", 25, ver, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_add_offsets_to_txn_response *resp = h_resp(h, r);
    return resp->error_code;
}

static int16_t add_offsets(harness *h, prod *p, const char *group) { return add_offsets_v(h, p, 3, group); }

/* ---- TxnOffsetCommit, OffsetCommit, OffsetFetch ---- */

static int16_t txn_commit_v(harness *h, prod *p, int16_t ver, const char *group, const char *topic_name,
                            int32_t index, int64_t offset) {
    kp_txn_offset_commit_request q;
    kp_defaults(&kp_txn_offset_commit_request_schema, ver, &q);
    q.transactional_id = kp_str_c(p->id);
    q.group_id = kp_str_c(group);
    q.producer_id = p->pid;
    q.producer_epoch = p->epoch;
    q.generation_id_or_member_epoch = -1;
    q.member_id = kp_str_c("");
    q.group_instance_id = KP_STR_NULL;
    kp_txn_offset_commit_request_partition qp;
    kp_defaults(&kp_txn_offset_commit_request_partition_schema, ver, &qp);
    qp.partition_index = index;
    qp.committed_offset = offset;
    qp.committed_leader_epoch = -1;
    qp.committed_metadata = kp_str_c("txn");
    kp_txn_offset_commit_request_topic qt = {.name = kp_str_c(topic_name)};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, p->c, "txn-producer", 28, ver, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_txn_offset_commit_response *resp = h_resp(h, r);
    assert_int_equal(resp->topics.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.v[0].partition_index, index);
    return resp->topics.v[0].partitions.v[0].error_code;
}

static int16_t txn_commit(harness *h, prod *p, const char *group, const char *topic_name, int32_t index,
                          int64_t offset) {
    return txn_commit_v(h, p, 3, group, topic_name, index, offset);
}

/* A plain OffsetCommit v2 of a simple group (generation -1, no member). */
static int16_t plain_commit(harness *h, conn *c, const char *group, const char *topic_name, int32_t index,
                            int64_t offset) {
    kp_offset_commit_request q;
    kp_defaults(&kp_offset_commit_request_schema, 2, &q);
    q.group_id = kp_str_c(group);
    q.generation_id_or_member_epoch = -1;
    q.member_id = kp_str_c("");
    kp_offset_commit_request_partition qp;
    kp_defaults(&kp_offset_commit_request_partition_schema, 2, &qp);
    qp.partition_index = index;
    qp.committed_offset = offset;
    qp.committed_metadata = kp_str_c("plain");
    kp_offset_commit_request_topic qt = {.name = kp_str_c(topic_name)};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, c, "consumer", 8, 2, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_offset_commit_response *resp = h_resp(h, r);
    return resp->topics.v[0].partitions.v[0].error_code;
}

/* OffsetFetch v7 of one partition. */
static kp_offset_fetch_response_partition *offset_fetch(harness *h, conn *c, const char *group,
                                                        const char *topic_name, int32_t index, bool require_stable) {
    kp_offset_fetch_request q;
    kp_defaults(&kp_offset_fetch_request_schema, 7, &q);
    q.group_id = kp_str_c(group);
    q.require_stable = require_stable;
    kp_offset_fetch_request_topic t = {.name = kp_str_c(topic_name)};
    t.partition_indexes.n = 1;
    t.partition_indexes.v = &index;
    q.topics.n = 1;
    q.topics.v = &t;
    req *r = h_send(h, c, "consumer", 9, 7, &q);
    kp_offset_fetch_response *resp = h_resp(h, r);
    assert_int_equal(resp->error_code, 0);
    assert_int_equal(resp->topics.n, 1);
    assert_int_equal(resp->topics.v[0].partitions.n, 1);
    return &resp->topics.v[0].partitions.v[0];
}

/* ---- Produce ---- */

static kp_produce_partition_produce_response *produce_full(harness *h, conn *c, int16_t ver, kp_str tid,
                                                           const char *topic_name, int32_t index, kp_bytes batch,
                                                           bool commit) {
    kp_produce_partition_produce_data pd = {index, batch};
    kp_produce_topic_produce_data td = {.name = kp_str_c(topic_name)};
    td.partition_data.n = 1;
    td.partition_data.v = &pd;
    kp_produce_request q = {.transactional_id = tid, .acks = -1, .timeout_ms = 5000};
    q.topic_data.n = 1;
    q.topic_data.v = &td;
    req *r = h_send(h, c, "producer", 0, ver, &q);
    if (commit) assert_int_equal(topic_commit_now(&h->s), 0);
    kp_produce_response *resp = h_resp(h, r);
    assert_int_equal(resp->responses.n, 1);
    assert_int_equal(resp->responses.v[0].partition_responses.n, 1);
    return &resp->responses.v[0].partition_responses.v[0];
}

/* A transactional batch of n records from p (Produce ver), committed; its code, *base its offset. */
static int16_t prod_send_v(harness *h, prod *p, int16_t ver, const char *topic_name, int32_t index, int n,
                           int64_t *base) {
    int32_t *seq = seq_of(p, topic_name, index);
    kp_bytes b = h_batch_from(h, KP_ATTR_TRANSACTIONAL, p->pid, p->epoch, *seq, n);
    kp_produce_partition_produce_response *pr = produce_full(h, p->c, ver, kp_str_c(p->id), topic_name, index, b, true);
    if (!pr->error_code) *seq += n;
    if (base) *base = pr->base_offset;
    return pr->error_code;
}

static int64_t prod_send(harness *h, prod *p, const char *topic_name, int32_t index, int n) {
    int64_t base = -1;
    int16_t code = prod_send_v(h, p, 9, topic_name, index, n, &base);
    if (code) fail_msg("transactional produce %s to %s-%d: error %d", p->id, topic_name, index, code);
    return base;
}

/* A plain (non-idempotent) batch of n records, committed; its base offset. */
static int64_t produce_plain(harness *h, conn *c, const char *topic_name, int32_t index, int n) {
    kp_produce_partition_produce_response *pr =
        produce_full(h, c, 9, KP_STR_NULL, topic_name, index, h_batch(h, n), true);
    if (pr->error_code) fail_msg("produce to %s-%d: error %d", topic_name, index, pr->error_code);
    return pr->base_offset;
}

/* ---- Fetch, ListOffsets ---- */

static kp_fetch_partition_data *fetch_v(harness *h, conn *c, int16_t ver, int8_t isolation, const char *topic_name,
                                        int32_t index, int64_t offset) {
    kp_fetch_request q;
    kp_defaults(&kp_fetch_request_schema, ver, &q);
    q.replica_id = -1;
    q.max_wait_ms = 0;
    q.min_bytes = 1;
    q.max_bytes = 1 << 20;
    q.isolation_level = isolation;
    kp_fetch_partition fp;
    kp_defaults(&kp_fetch_partition_schema, ver, &fp);
    fp.partition = index;
    fp.current_leader_epoch = -1;
    fp.fetch_offset = offset;
    fp.partition_max_bytes = 1 << 20;
    kp_fetch_topic ft = {.topic = kp_str_c(topic_name)};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    q.topics.n = 1;
    q.topics.v = &ft;
    req *r = h_send(h, c, "consumer", 1, ver, &q);
    kp_fetch_response *resp = h_resp(h, r);
    assert_int_equal(resp->responses.n, 1);
    assert_int_equal(resp->responses.v[0].partitions.n, 1);
    kp_fetch_partition_data *pd = &resp->responses.v[0].partitions.v[0];
    assert_int_equal(pd->error_code, 0);
    return pd;
}

#define RC 1 /* read_committed */
#define RU 0 /* read_uncommitted */

static kp_fetch_partition_data *fetch(harness *h, conn *c, int8_t isolation, const char *topic_name, int32_t index,
                                      int64_t offset) {
    return fetch_v(h, c, 4, isolation, topic_name, index, offset);
}

static int64_t list_latest(harness *h, conn *c, int16_t ver, int8_t isolation, const char *topic_name, int32_t index) {
    kp_list_offsets_request q;
    kp_defaults(&kp_list_offsets_request_schema, ver, &q);
    q.replica_id = -1;
    q.isolation_level = isolation;
    kp_list_offsets_partition qp;
    kp_defaults(&kp_list_offsets_partition_schema, ver, &qp);
    qp.partition_index = index;
    qp.current_leader_epoch = -1;
    qp.timestamp = -1;
    qp.max_num_offsets = 1;
    kp_list_offsets_topic qt = {.name = kp_str_c(topic_name)};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, c, "consumer", 2, ver, &q);
    kp_list_offsets_response *resp = h_resp(h, r);
    kp_list_offsets_partition_response *rp = &resp->topics.v[0].partitions.v[0];
    assert_int_equal(rp->error_code, 0);
    return rp->offset;
}

/* ---- DescribeTransactions, ListTransactions ---- */

static kp_describe_transactions_response *describe_many(harness *h, conn *c, const char *const *ids, int n) {
    kp_describe_transactions_request q;
    kp_defaults(&kp_describe_transactions_request_schema, 0, &q);
    kp_str v[8];
    for (int i = 0; i < n; i++) v[i] = kp_str_c(ids[i]);
    q.transactional_ids.n = n;
    q.transactional_ids.v = v;
    req *r = h_send(h, c, "admin", 65, 0, &q);
    kp_describe_transactions_response *resp = h_resp(h, r);
    assert_int_equal(resp->transaction_states.n, n);
    return resp;
}

static kp_describe_transactions_transaction_state *describe(harness *h, conn *c, const char *id) {
    kp_describe_transactions_transaction_state *st = &describe_many(h, c, &id, 1)->transaction_states.v[0];
    assert_true(kp_str_eq(st->transactional_id, id));
    return st;
}

/* The state name of id as DescribeTransactions reports it (asserting no error). */
static const char *state_of(harness *h, conn *c, const char *id) {
    kp_describe_transactions_transaction_state *st = describe(h, c, id);
    if (st->error_code) fail_msg("DescribeTransactions %s: error %d", id, st->error_code);
    return h_cstr(h, st->transaction_state);
}

static kp_list_transactions_response *list_txns(harness *h, conn *c, int16_t ver, const char *const *states,
                                                int nstates, const int64_t *pids, int npids, int64_t duration) {
    kp_list_transactions_request q;
    kp_defaults(&kp_list_transactions_request_schema, ver, &q);
    kp_str sv[8];
    for (int i = 0; i < nstates; i++) sv[i] = kp_str_c(states[i]);
    q.state_filters.n = nstates;
    q.state_filters.v = nstates ? sv : NULL;
    q.producer_id_filters.n = npids;
    q.producer_id_filters.v = (int64_t *)pids;
    q.duration_filter = duration;
    req *r = h_send(h, c, "admin", 66, ver, &q);
    kp_list_transactions_response *resp = h_resp(h, r);
    assert_int_equal(resp->error_code, 0);
    return resp;
}

/* The state ListTransactions gives id, NULL when it is not listed. */
static const char *listed(harness *h, const kp_list_transactions_response *resp, const char *id) {
    for (int32_t i = 0; i < resp->transaction_states.n; i++)
        if (kp_str_eq(resp->transaction_states.v[i].transactional_id, id))
            return h_cstr(h, resp->transaction_states.v[i].transaction_state);
    return NULL;
}

/* ======================================================================== */
/* InitProducerId                                                           */
/* ======================================================================== */

static void test_init_producer_id_new_id_starts_at_epoch_0_and_bumps(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    conn *c = h_conn(h, NULL);
    for (int16_t ver = 0; ver <= 5; ver++) {
        char id[16];
        snprintf(id, sizeof id, "tx-v%d", ver);
        int64_t pid, pid2;
        int16_t epoch;
        assert_int_equal(init_full(h, c, ver, id, TIMEOUT_MS, -1, -1, &pid, &epoch), 0);
        assert_true(pid >= 0);
        assert_int_equal(epoch, 0);
        assert_int_equal(init_full(h, c, ver, id, TIMEOUT_MS, -1, -1, &pid2, &epoch), 0);
        assert_int_equal(pid2, pid);
        assert_int_equal(epoch, 1);
        assert_string_equal(state_of(h, c, id), "Empty");
    }
    /* two ids never share a producer id */
    int64_t a, b;
    assert_int_equal(init_full(h, c, 4, "ida", TIMEOUT_MS, -1, -1, &a, NULL), 0);
    assert_int_equal(init_full(h, c, 4, "idb", TIMEOUT_MS, -1, -1, &b, NULL), 0);
    assert_true(a != b);
    h_free(h);
}

static void test_init_producer_id_refusals(void **state) {
    (void)state;
    const char *const ov[] = {"transaction.max.timeout.ms", "300000", NULL};
    harness *h = h_new(ov);
    conn *c = h_conn(h, NULL);
    /* the timeout must be in (0, transaction.max.timeout.ms] */
    assert_int_equal(init_full(h, c, 4, "tx", 0, -1, -1, NULL, NULL), KERR_INVALID_TRANSACTION_TIMEOUT);
    assert_int_equal(init_full(h, c, 4, "tx", -5, -1, -1, NULL, NULL), KERR_INVALID_TRANSACTION_TIMEOUT);
    assert_int_equal(init_full(h, c, 4, "tx", 300001, -1, -1, NULL, NULL), KERR_INVALID_TRANSACTION_TIMEOUT);
    assert_int_equal(init_full(h, c, 1, "tx", 300001, -1, -1, NULL, NULL), KERR_INVALID_TRANSACTION_TIMEOUT);
    assert_int_equal(init_full(h, c, 4, "tx", 300000, -1, -1, NULL, NULL), 0);
    /* an empty transactional id */
    assert_int_equal(init_full(h, c, 4, "", TIMEOUT_MS, -1, -1, NULL, NULL), KERR_INVALID_REQUEST);
    assert_int_equal(init_full(h, c, 0, "", TIMEOUT_MS, -1, -1, NULL, NULL), KERR_INVALID_REQUEST);
    int64_t pid;
    int16_t epoch;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &pid, &epoch), 0);
    assert_int_equal(epoch, 1);
    /* v3+: producer id and epoch come together or not at all */
    assert_int_equal(init_full(h, c, 3, "tx", TIMEOUT_MS, pid, -1, NULL, NULL), KERR_INVALID_REQUEST);
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, epoch, NULL, NULL), KERR_INVALID_REQUEST);
    /* another producer id: fenced (90 from v4, 47 before) */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, pid + 77, epoch, NULL, NULL), KERR_PRODUCER_FENCED);
    assert_int_equal(init_full(h, c, 3, "tx", TIMEOUT_MS, pid + 77, epoch, NULL, NULL), KERR_INVALID_PRODUCER_EPOCH);
    /* the right producer id, an epoch that is neither the current nor the last */
    assert_int_equal(init_full(h, c, 5, "tx", TIMEOUT_MS, pid, 7, NULL, NULL), KERR_PRODUCER_FENCED);
    assert_int_equal(init_full(h, c, 3, "tx", TIMEOUT_MS, pid, 7, NULL, NULL), KERR_INVALID_PRODUCER_EPOCH);
    /* none of the refusals moved the epoch */
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_int_equal(st->producer_id, pid);
    assert_int_equal(st->producer_epoch, 1);
    h_free(h);
}

static void test_init_producer_id_retry_with_last_epoch_returns_the_same_epoch(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    conn *c = h_conn(h, NULL);
    int64_t pid, p2;
    int16_t epoch, e2;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &pid, &epoch), 0);
    assert_int_equal(epoch, 0);
    /* KIP-360: the producer names its current id and epoch: bumped */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, pid, 0, &p2, &e2), 0);
    assert_int_equal(p2, pid);
    assert_int_equal(e2, 1);
    /* the same request again (its answer was lost): the same epoch, not another bump */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, pid, 0, &p2, &e2), 0);
    assert_int_equal(p2, pid);
    assert_int_equal(e2, 1);
    assert_int_equal(describe(h, c, "tx")->producer_epoch, 1);
    /* with the current epoch: bumped again */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, pid, 1, &p2, &e2), 0);
    assert_int_equal(e2, 2);
    /* the epoch before last is fenced */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, pid, 0, NULL, NULL), KERR_PRODUCER_FENCED);
    h_free(h);
}

static void test_init_producer_id_while_ongoing_fences_and_aborts(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int16_t e0 = p->epoch;
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    int64_t first = prod_send(h, p, "t", 0, 3); /* 2-4 */
    assert_int_equal(first, 2);
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 2);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");

    /* a new producer of the id: 51, the open transaction is aborted with the bumped epoch */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, NULL, NULL), KERR_CONCURRENT_TRANSACTIONS);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteAbort");
    assert_int_equal(st->producer_epoch, e0 + 1);
    assert_int_equal(st->topics.n, 0);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 6);
    assert_int_equal(pd->last_stable_offset, 6); /* the ABORT marker at 5 released it */
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].producer_id, p->pid);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 2);
    seen b[8];
    int n = parse(pd, b, 8);
    assert_int_equal(n, 3);
    assert_int_equal(b[2].base, 5);
    assert_int_equal(b[2].marker, 0);
    assert_int_equal(b[2].pid, p->pid);
    assert_int_equal(b[2].epoch, e0 + 1);
    assert_int_equal(b[2].attributes & (KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL), KP_ATTR_TRANSACTIONAL | KP_ATTR_CONTROL);

    /* the fenced producer: its EndTxn and its produce are refused */
    assert_int_equal(end_txn(h, p, true), KERR_PRODUCER_FENCED);
    assert_int_equal(prod_send_v(h, p, 9, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);

    /* the retry: bumped once more */
    int64_t pid;
    int16_t epoch;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &pid, &epoch), 0);
    assert_int_equal(pid, p->pid);
    assert_int_equal(epoch, e0 + 2);
    assert_string_equal(state_of(h, c, "tx"), "Empty");
    h_free(h);
}

/* ======================================================================== */
/* AddPartitionsToTxn                                                       */
/* ======================================================================== */

static void test_add_partitions_refusals(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    /* before InitProducerId: the id is unknown */
    for (int16_t ver = 0; ver <= 3; ver++) {
        tp_spec spec = {"t", {0, 1}, 2};
        kp_add_partitions_to_txn_response *resp = add_parts_full(h, p->c, ver, "tx", 1000, 0, &spec, 1);
        assert_int_equal(part_code(resp, 0, 0), KERR_INVALID_PRODUCER_ID_MAPPING);
        assert_int_equal(part_code(resp, 0, 1), KERR_INVALID_PRODUCER_ID_MAPPING);
    }
    prod_init(h, p, TIMEOUT_MS);
    int16_t stale = p->epoch;
    prod_init(h, p, TIMEOUT_MS);
    /* another producer id */
    tp_spec one = {"t", {0}, 1};
    assert_int_equal(part_code(add_parts_full(h, p->c, 3, "tx", p->pid + 1, p->epoch, &one, 1), 0, 0),
                     KERR_INVALID_PRODUCER_ID_MAPPING);
    /* a stale epoch: 90 from v2, 47 before */
    for (int16_t ver = 0; ver <= 3; ver++)
        assert_int_equal(part_code(add_parts_full(h, p->c, ver, "tx", p->pid, stale, &one, 1), 0, 0),
                         ver >= 2 ? KERR_PRODUCER_FENCED : KERR_INVALID_PRODUCER_EPOCH);
    assert_string_equal(state_of(h, p->c, "tx"), "Empty");
    /* an unknown partition gets 3, every other partition 55, and nothing is added */
    tp_spec mixed[2] = {{"t", {0, 7, 1}, 3}, {"nope", {0}, 1}};
    kp_add_partitions_to_txn_response *resp = add_parts_full(h, p->c, 3, "tx", p->pid, p->epoch, mixed, 2);
    assert_int_equal(part_code(resp, 0, 0), KERR_OPERATION_NOT_ATTEMPTED);
    assert_int_equal(part_code(resp, 0, 1), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_int_equal(part_code(resp, 0, 2), KERR_OPERATION_NOT_ATTEMPTED);
    assert_int_equal(part_code(resp, 1, 0), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    assert_string_equal(state_of(h, p->c, "tx"), "Empty");
    assert_int_equal(describe(h, p->c, "tx")->topics.n, 0);
    /* an empty transactional id */
    assert_int_equal(part_code(add_parts_full(h, p->c, 3, "", p->pid, p->epoch, &one, 1), 0, 0), KERR_INVALID_REQUEST);
    /* then all of them at every version */
    for (int16_t ver = 0; ver <= 3; ver++) {
        tp_spec both = {"t", {0, 1}, 2};
        resp = add_parts_full(h, p->c, ver, "tx", p->pid, p->epoch, &both, 1);
        assert_int_equal(part_code(resp, 0, 0), 0);
        assert_int_equal(part_code(resp, 0, 1), 0);
    }
    assert_string_equal(state_of(h, p->c, "tx"), "Ongoing");
    h_free(h);
}

static void test_add_partitions_after_end_txn_starts_a_new_transaction(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int64_t t0 = clk_now_ms();
    assert_int_equal(add_part(h, p, "t", 0), 0);
    kp_describe_transactions_transaction_state *st = describe(h, p->c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "Ongoing");
    assert_int_equal(st->transaction_start_time_ms, t0);
    clk_advance(1000);
    /* adding more keeps the start time */
    assert_int_equal(add_part(h, p, "t", 1), 0);
    assert_int_equal(describe(h, p->c, "tx")->transaction_start_time_ms, t0);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    clk_advance(1000);
    assert_int_equal(add_part(h, p, "t", 1), 0);
    st = describe(h, p->c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "Ongoing");
    assert_int_equal(st->transaction_start_time_ms, t0 + 2000);
    assert_int_equal(st->topics.n, 1);
    assert_int_equal(st->topics.v[0].partitions.n, 1);
    assert_int_equal(st->topics.v[0].partitions.v[0], 1);
    /* and after an abort too */
    assert_int_equal(end_txn(h, p, false), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteAbort");
    assert_int_equal(add_part_v(h, p, 0, "t", 0), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "Ongoing");
    h_free(h);
}

/* ======================================================================== */
/* EndTxn                                                                   */
/* ======================================================================== */

static void test_end_txn_state_machine(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    /* unknown id */
    assert_int_equal(end_full(h, p->c, 3, "tx", 1000, 0, true), KERR_INVALID_PRODUCER_ID_MAPPING);
    prod_init(h, p, TIMEOUT_MS);
    /* Empty: nothing to end */
    assert_int_equal(end_txn(h, p, true), KERR_INVALID_TXN_STATE);
    assert_int_equal(end_txn(h, p, false), KERR_INVALID_TXN_STATE);
    /* commit, the retry of the commit, then an abort of what was committed */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(end_txn(h, p, false), KERR_INVALID_TXN_STATE);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    /* abort, its retry, then a commit of what was aborted */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(end_txn(h, p, false), 0);
    assert_int_equal(end_txn(h, p, false), 0);
    assert_int_equal(end_txn(h, p, true), KERR_INVALID_TXN_STATE);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteAbort");
    /* a stale epoch: 90 from v2, 47 before; the transaction stays open */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    for (int16_t ver = 0; ver <= 4; ver++)
        assert_int_equal(end_full(h, p->c, ver, p->id, p->pid, (int16_t)(p->epoch - 1), true),
                         ver >= 2 ? KERR_PRODUCER_FENCED : KERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(end_full(h, p->c, 3, p->id, p->pid, (int16_t)(p->epoch + 1), true), KERR_PRODUCER_FENCED);
    assert_int_equal(end_full(h, p->c, 3, p->id, p->pid + 1, p->epoch, true), KERR_INVALID_PRODUCER_ID_MAPPING);
    assert_int_equal(end_full(h, p->c, 3, "", p->pid, p->epoch, true), KERR_INVALID_REQUEST);
    assert_string_equal(state_of(h, p->c, "tx"), "Ongoing");
    /* every version ends it */
    assert_int_equal(end_full(h, p->c, 0, p->id, p->pid, p->epoch, true), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    h_free(h);
}

/* ======================================================================== */
/* Produce                                                                  */
/* ======================================================================== */

static void test_produce_transactional_batch_needs_the_partition_added(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    /* not added (the transaction is Empty): 48 up to v10, 120 at v11 */
    for (int16_t ver = 3; ver <= 11; ver++)
        assert_int_equal(prod_send_v(h, p, ver, "t", 0, 1, NULL),
                         ver >= 11 ? KERR_TRANSACTION_ABORTABLE : KERR_INVALID_TXN_STATE);
    /* another partition added: still not this one */
    assert_int_equal(add_part(h, p, "t", 1), 0);
    assert_int_equal(prod_send_v(h, p, 10, "t", 0, 1, NULL), KERR_INVALID_TXN_STATE);
    assert_int_equal(prod_send_v(h, p, 11, "t", 0, 1, NULL), KERR_TRANSACTION_ABORTABLE);
    /* transactional records without a transactional id */
    kp_bytes b = h_batch_from(h, KP_ATTR_TRANSACTIONAL, p->pid, p->epoch, 0, 1);
    assert_int_equal(produce_full(h, p->c, 9, KP_STR_NULL, "t", 1, b, true)->error_code,
                     KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    /* a transactional id that does not own the producer id */
    assert_int_equal(produce_full(h, p->c, 9, kp_str_c("other"), "t", 1, b, true)->error_code,
                     KERR_INVALID_PRODUCER_ID_MAPPING);
    /* nothing was appended */
    assert_int_equal(part(h, "t", 0)->end, 0);
    assert_int_equal(part(h, "t", 1)->end, 0);
    /* added: accepted, at every version */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    int64_t base = -1;
    for (int16_t ver = 3; ver <= 11; ver++) {
        assert_int_equal(prod_send_v(h, p, ver, "t", 0, 2, &base), 0);
        assert_int_equal(base, 2 * (ver - 3));
    }
    /* a stale epoch: INVALID_PRODUCER_EPOCH */
    kp_bytes stale = h_batch_from(h, KP_ATTR_TRANSACTIONAL, p->pid, (int16_t)(p->epoch - 1), 0, 1);
    assert_int_equal(produce_full(h, p->c, 9, kp_str_c("tx"), "t", 1, stale, true)->error_code,
                     KERR_INVALID_PRODUCER_EPOCH);
    h_free(h);
}

static void test_produce_non_transactional_batch_inside_an_open_transaction_is_48(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2);
    /* the same producer id, idempotent but not transactional, next sequence */
    kp_bytes b = h_batch_from(h, 0, p->pid, p->epoch, *seq_of(p, "t", 0), 1);
    assert_int_equal(produce_full(h, p->c, 9, KP_STR_NULL, "t", 0, b, true)->error_code, KERR_INVALID_TXN_STATE);
    assert_int_equal(produce_full(h, p->c, 9, kp_str_c("tx"), "t", 0, b, true)->error_code, KERR_INVALID_TXN_STATE);
    assert_int_equal(part(h, "t", 0)->end, 2);
    /* once the transaction is decided, the partition takes it */
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(produce_full(h, p->c, 9, KP_STR_NULL, "t", 0, b, true)->error_code, 0);
    h_free(h);
}

/* ======================================================================== */
/* Fetch read_committed, ListOffsets                                        */
/* ======================================================================== */

static void test_fetch_read_committed_is_bounded_by_the_lso(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 2);              /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(prod_send(h, p, "t", 0, 3), 2); /* 2-4, open */

    for (int16_t ver = 4; ver <= 12; ver += 4) {
        kp_fetch_partition_data *pd = fetch_v(h, c, ver, RC, "t", 0, 0);
        assert_int_equal(pd->high_watermark, 5);
        assert_int_equal(pd->last_stable_offset, 2);
        assert_int_equal(pd->aborted_transactions.n, 0); /* an empty array, not null */
        seen b[8];
        assert_int_equal(parse(pd, b, 8), 1);
        assert_int_equal(b[0].base, 0);
        assert_int_equal(b[0].last, 1);
        /* read_uncommitted: everything, the same LSO, aborted_transactions null */
        pd = fetch_v(h, c, ver, RU, "t", 0, 0);
        assert_int_equal(pd->high_watermark, 5);
        assert_int_equal(pd->last_stable_offset, 2);
        assert_int_equal(pd->aborted_transactions.n, -1);
        assert_int_equal(parse(pd, b, 8), 2);
        assert_int_equal(b[1].base, 2);
        assert_int_equal(b[1].last, 4);
        assert_int_equal(b[1].pid, p->pid);
        assert_true(b[1].attributes & KP_ATTR_TRANSACTIONAL);
    }
    /* from the LSO: nothing yet */
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 2);
    assert_int_equal(pd->records.len, 0);
    assert_int_equal(pd->last_stable_offset, 2);

    /* committed: the records and the marker, no aborted transaction */
    assert_int_equal(end_txn(h, p, true), 0);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 6);
    assert_int_equal(pd->last_stable_offset, 6);
    assert_int_equal(pd->aborted_transactions.n, 0);
    seen b[8];
    assert_int_equal(parse(pd, b, 8), 3);
    assert_int_equal(b[1].base, 2);
    assert_int_equal(b[2].base, 5);
    assert_int_equal(b[2].marker, 1);
    assert_int_equal(b[2].pid, p->pid);
    assert_int_equal(b[2].epoch, p->epoch);
    pd = fetch(h, c, RU, "t", 0, 0);
    assert_int_equal(pd->aborted_transactions.n, -1);
    assert_int_equal(pd->last_stable_offset, 6);
    h_free(h);
}

static void test_fetch_reports_aborted_transactions(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 2-3 */
    prod_send(h, p, "t", 0, 1); /* 4 */
    assert_int_equal(end_txn(h, p, false), 0); /* ABORT at 5 */
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 6);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].producer_id, p->pid);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 2);
    seen b[8];
    assert_int_equal(parse(pd, b, 8), 4); /* read_committed returns the aborted batches; the client drops them */
    assert_int_equal(b[3].marker, 0);
    /* from inside the aborted transaction: still reported */
    pd = fetch(h, c, RC, "t", 0, 4);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 2);
    /* read_uncommitted: null */
    assert_int_equal(fetch(h, c, RU, "t", 0, 0)->aborted_transactions.n, -1);

    /* a committed transaction after it: reading only past the abort reports nothing */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 6-7 */
    assert_int_equal(end_txn(h, p, true), 0); /* COMMIT at 8 */
    produce_plain(h, c, "t", 0, 1); /* 9 */
    pd = fetch(h, c, RC, "t", 0, 6);
    assert_int_equal(pd->last_stable_offset, 10);
    assert_int_equal(pd->aborted_transactions.n, 0);
    assert_int_equal(parse(pd, b, 8), 3);
    pd = fetch(h, c, RC, "t", 0, 9);
    assert_int_equal(pd->aborted_transactions.n, 0);
    /* from the start: exactly the aborted one */
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 2);
    h_free(h);
}

/* Two producers interleaved: the aborted index entry's lso stops the walk, and only what the data reaches is named. */
static void test_fetch_interleaved_transactions(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *a = prod_new(h, "txa");
    prod *b = prod_new(h, "txb");
    prod_init(h, a, TIMEOUT_MS);
    prod_init(h, b, TIMEOUT_MS);
    assert_int_equal(add_part(h, a, "t", 0), 0);
    assert_int_equal(add_part(h, b, "t", 0), 0);
    assert_int_equal(prod_send(h, a, "t", 0, 1), 0); /* a: 0 */
    assert_int_equal(prod_send(h, b, "t", 0, 1), 1); /* b: 1 */
    assert_int_equal(prod_send(h, a, "t", 0, 1), 2); /* a: 2 */
    assert_int_equal(end_txn(h, a, false), 0);       /* ABORT a at 3 */
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 1); /* b holds it */
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].producer_id, a->pid);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 0);
    seen s[8];
    assert_int_equal(parse(pd, s, 8), 1);
    assert_int_equal(list_latest(h, c, 2, RC, "t", 0), 1);
    assert_int_equal(list_latest(h, c, 2, RU, "t", 0), 4);
    /* b commits at 4: everything is stable; a's entry is named once, b's data is not aborted */
    assert_int_equal(end_txn(h, b, true), 0);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 5);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].producer_id, a->pid);
    assert_int_equal(parse(pd, s, 8), 5);
    assert_int_equal(s[3].marker, 0);
    assert_int_equal(s[3].pid, a->pid);
    assert_int_equal(s[4].marker, 1);
    assert_int_equal(s[4].pid, b->pid);
    /* from b's marker on: a's transaction ended before it */
    pd = fetch(h, c, RC, "t", 0, 4);
    assert_int_equal(pd->aborted_transactions.n, 0);
    h_free(h);
}

static void test_list_offsets_latest_by_isolation_level(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 3); /* 2-4 */
    for (int16_t ver = 2; ver <= 10; ver++) {
        assert_int_equal(list_latest(h, c, ver, RC, "t", 0), 2);
        assert_int_equal(list_latest(h, c, ver, RU, "t", 0), 5);
    }
    /* before v2 there is no isolation level: the high watermark */
    assert_int_equal(list_latest(h, c, 1, RU, "t", 0), 5);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(list_latest(h, c, 2, RC, "t", 0), 6);
    assert_int_equal(list_latest(h, c, 2, RU, "t", 0), 6);
    h_free(h);
}

/* The LSO passes a marker only once the commit holding the marker returned (a crash could undo it before). */
static void test_lso_waits_for_the_commit_that_holds_the_marker(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 3); /* 2-4 */
    req *r = end_send(h, p->c, 3, p->id, p->pid, p->epoch, true);
    /* answered only after the commit */
    assert_int_equal(r->state, REQ_WAIT_COMMIT);
    assert_string_equal(state_of(h, c, "tx"), "CompleteCommit");
    assert_int_equal(part(h, "t", 0)->end, 6);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 5);
    assert_int_equal(pd->last_stable_offset, 2);
    seen b[8];
    assert_int_equal(parse(pd, b, 8), 1);
    assert_int_equal(list_latest(h, c, 2, RC, "t", 0), 2);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_int_equal(((kp_end_txn_response *)h_resp(h, r))->error_code, 0);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 6);
    assert_int_equal(pd->last_stable_offset, 6);
    assert_int_equal(parse(pd, b, 8), 3);
    assert_int_equal(list_latest(h, c, 2, RC, "t", 0), 6);

    /* the same for an abort */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 1); /* 6 */
    r = end_send(h, p->c, 3, p->id, p->pid, p->epoch, false);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 6);
    assert_int_equal(pd->aborted_transactions.n, 0);
    assert_int_equal(topic_commit_now(&h->s), 0);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 8);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 6);
    h_free(h);
}

/* ======================================================================== */
/* TxnOffsetCommit and OffsetFetch                                          */
/* ======================================================================== */

static void test_txn_offset_commit_needs_add_offsets(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    for (int16_t ver = 0; ver <= 4; ver++)
        assert_int_equal(txn_commit_v(h, p, ver, "g", "t", 0, 10),
                         ver >= 4 ? KERR_TRANSACTION_ABORTABLE : KERR_INVALID_TXN_STATE);
    /* another group added is not this one */
    assert_int_equal(add_offsets(h, p, "other"), 0);
    assert_int_equal(txn_commit_v(h, p, 3, "g", "t", 0, 10), KERR_INVALID_TXN_STATE);
    assert_int_equal(txn_commit_v(h, p, 4, "g", "t", 0, 10), KERR_TRANSACTION_ABORTABLE);
    /* AddOffsetsToTxn refusals as AddPartitionsToTxn's */
    prod *stranger = prod_new(h, "unknown");
    stranger->pid = p->pid;
    stranger->epoch = p->epoch;
    assert_int_equal(add_offsets(h, stranger, "g"), KERR_INVALID_PRODUCER_ID_MAPPING);
    p->epoch--;
    assert_int_equal(add_offsets_v(h, p, 1, "g"), KERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(add_offsets_v(h, p, 2, "g"), KERR_PRODUCER_FENCED);
    p->epoch++;
    for (int16_t ver = 0; ver <= 4; ver++) assert_int_equal(add_offsets_v(h, p, ver, "g"), 0);
    for (int16_t ver = 0; ver <= 4; ver++) assert_int_equal(txn_commit_v(h, p, ver, "g", "t", 0, 10 + ver), 0);
    /* an unknown partition */
    assert_int_equal(txn_commit_v(h, p, 3, "g", "t", 5, 1), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    h_free(h);
}

static void test_txn_offset_commit_waits_for_the_commit(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    assert_int_equal(plain_commit(h, c, "g", "t", 0, 5), 0);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    /* pending: require_stable gets 88, without it the old offset */
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, KERR_UNSTABLE_OFFSET_COMMIT);
    assert_int_equal(o->committed_offset, -1);
    o = offset_fetch(h, c, "g", "t", 0, false);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, 5);
    assert_int_equal(end_txn(h, p, true), 0);
    o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, 10);
    assert_string_equal(h_cstr(h, o->metadata), "txn");
    h_free(h);
}

static void test_txn_offset_commit_aborted_is_dropped(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    assert_int_equal(plain_commit(h, c, "g", "t", 0, 5), 0);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    assert_int_equal(end_txn(h, p, false), 0);
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, 5);
    /* a group with no offset before: still none */
    assert_int_equal(add_offsets(h, p, "fresh"), 0);
    assert_int_equal(txn_commit(h, p, "fresh", "t", 0, 3), 0);
    assert_int_equal(offset_fetch(h, c, "fresh", "t", 0, true)->error_code, KERR_UNSTABLE_OFFSET_COMMIT);
    assert_int_equal(end_txn(h, p, false), 0);
    o = offset_fetch(h, c, "fresh", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, -1);
    h_free(h);
}

static void test_plain_offset_commit_after_txn_offset_commit_wins(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 30), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 1, 31), 0);
    assert_int_equal(plain_commit(h, c, "g", "t", 0, 25), 0);
    /* the plain commit is the committed offset at once; require_stable waits for the transaction still
     * (Kafka's hasPendingTransactionalOffsets: a plain commit leaves the pending one in place) */
    assert_int_equal(offset_fetch(h, c, "g", "t", 0, false)->committed_offset, 25);
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, KERR_UNSTABLE_OFFSET_COMMIT);
    assert_int_equal(o->committed_offset, -1);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(offset_fetch(h, c, "g", "t", 0, true)->committed_offset, 25);
    assert_int_equal(offset_fetch(h, c, "g", "t", 1, true)->committed_offset, 31);
    h_free(h);
}

/* ======================================================================== */
/* Timeouts and expiry                                                      */
/* ======================================================================== */

static void test_transaction_timeout_aborts_and_fences(void **state) {
    (void)state;
    const char *const ov[] = {"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10", NULL};
    harness *h = h_new(ov);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, 1000);
    int16_t e0 = p->epoch;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 0-1 */
    /* at the timeout exactly: still open */
    clk_advance(1000);
    txn_tick(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 0);
    /* past it: aborted with the epoch bumped */
    clk_advance(20);
    txn_tick(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteAbort");
    assert_int_equal(st->producer_epoch, e0 + 1);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 3);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 0);
    seen b[4];
    assert_int_equal(parse(pd, b, 4), 2);
    assert_int_equal(b[1].marker, 0);
    assert_int_equal(b[1].epoch, e0 + 1);
    /* the zombie: EndTxn 90 (47 before v2), AddPartitions 90, produce 47 */
    assert_int_equal(end_txn(h, p, true), KERR_PRODUCER_FENCED);
    assert_int_equal(end_full(h, p->c, 1, p->id, p->pid, p->epoch, false), KERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(add_part(h, p, "t", 0), KERR_PRODUCER_FENCED);
    assert_int_equal(prod_send_v(h, p, 9, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(part(h, "t", 0)->end, 3);
    /* a new producer of the id carries on */
    prod_init(h, p, 1000);
    assert_int_equal(p->epoch, e0 + 2);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(prod_send(h, p, "t", 0, 1), 3);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 5);
    h_free(h);
}

static void test_transaction_timeout_counts_from_the_first_add(void **state) {
    (void)state;
    const char *const ov[] = {"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10", NULL};
    harness *h = h_new(ov);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, 1000);
    /* idle (Empty) for longer than the timeout: nothing to abort */
    clk_advance(5000);
    txn_tick(&h->s);
    assert_string_equal(state_of(h, c, "tx"), "Empty");
    assert_int_equal(add_part(h, p, "t", 0), 0);
    clk_advance(900);
    txn_tick(&h->s);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");
    assert_int_equal(end_txn(h, p, true), 0);
    h_free(h);
}

static void test_transactional_id_expiration(void **state) {
    (void)state;
    const char *const ov[] = {"transactional.id.expiration.ms", "5000",
                              "transaction.remove.expired.transaction.cleanup.interval.ms", "10", NULL};
    harness *h = h_new(ov);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *idle = prod_new(h, "idle");
    prod *busy = prod_new(h, "busy");
    prod *done = prod_new(h, "done");
    prod_init(h, idle, TIMEOUT_MS);
    prod_init(h, busy, TIMEOUT_MS);
    prod_init(h, done, TIMEOUT_MS);
    int64_t idle_pid = idle->pid;
    assert_int_equal(add_part(h, busy, "t", 0), 0);
    assert_int_equal(add_part(h, done, "t", 0), 0);
    assert_int_equal(end_txn(h, done, true), 0);
    clk_advance(4000);
    txn_tick(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_string_equal(state_of(h, c, "idle"), "Empty");
    clk_advance(1000);
    txn_tick(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_int_equal(describe(h, c, "idle")->error_code, KERR_TRANSACTIONAL_ID_NOT_FOUND);
    assert_int_equal(describe(h, c, "done")->error_code, KERR_TRANSACTIONAL_ID_NOT_FOUND);
    /* an open transaction keeps its id */
    assert_string_equal(state_of(h, c, "busy"), "Ongoing");
    kp_list_transactions_response *l = list_txns(h, c, 0, NULL, 0, NULL, 0, -1);
    assert_null(listed(h, l, "idle"));
    assert_non_null(listed(h, l, "busy"));
    /* the forgotten id's producer is unknown; a new InitProducerId starts over */
    assert_int_equal(add_part(h, idle, "t", 0), KERR_INVALID_PRODUCER_ID_MAPPING);
    prod_init(h, idle, TIMEOUT_MS);
    assert_int_equal(idle->epoch, 0);
    assert_true(idle->pid != idle_pid);
    assert_int_equal(end_txn(h, busy, true), 0);
    h_free(h);
}

/* ======================================================================== */
/* DescribeTransactions, ListTransactions                                   */
/* ======================================================================== */

static void test_describe_transactions(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 3);
    make_topic(h, "u", 1);
    conn *c = h_conn(h, NULL);
    prod *a = prod_new(h, "a");
    prod *b = prod_new(h, "b");
    prod_init(h, a, 30000);
    prod_init(h, b, 45000);
    int64_t start = clk_now_ms();
    assert_int_equal(add_part(h, b, "t", 2), 0);
    assert_int_equal(add_part(h, b, "u", 0), 0);
    assert_int_equal(add_part(h, b, "t", 0), 0);
    const char *const ids[] = {"a", "b", "nope", ""};
    kp_describe_transactions_response *resp = describe_many(h, c, ids, 4);
    kp_describe_transactions_transaction_state *sa = &resp->transaction_states.v[0];
    kp_describe_transactions_transaction_state *sb = &resp->transaction_states.v[1];
    assert_int_equal(sa->error_code, 0);
    assert_string_equal(h_cstr(h, sa->transaction_state), "Empty");
    assert_int_equal(sa->transaction_timeout_ms, 30000);
    assert_int_equal(sa->transaction_start_time_ms, -1);
    assert_int_equal(sa->producer_id, a->pid);
    assert_int_equal(sa->producer_epoch, a->epoch);
    assert_int_equal(sa->topics.n, 0);
    assert_int_equal(sb->error_code, 0);
    assert_string_equal(h_cstr(h, sb->transaction_state), "Ongoing");
    assert_int_equal(sb->transaction_timeout_ms, 45000);
    assert_int_equal(sb->transaction_start_time_ms, start);
    assert_int_equal(sb->producer_id, b->pid);
    assert_int_equal(sb->topics.n, 2);
    assert_true(kp_str_eq(sb->topics.v[0].topic, "t"));
    assert_int_equal(sb->topics.v[0].partitions.n, 2);
    assert_int_equal(sb->topics.v[0].partitions.v[0], 2);
    assert_int_equal(sb->topics.v[0].partitions.v[1], 0);
    assert_true(kp_str_eq(sb->topics.v[1].topic, "u"));
    assert_int_equal(sb->topics.v[1].partitions.n, 1);
    assert_int_equal(resp->transaction_states.v[2].error_code, KERR_TRANSACTIONAL_ID_NOT_FOUND);
    assert_int_equal(resp->transaction_states.v[3].error_code, KERR_INVALID_REQUEST);
    assert_int_equal(end_txn(h, b, true), 0);
    kp_describe_transactions_transaction_state *st = describe(h, c, "b");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteCommit");
    assert_int_equal(st->topics.n, 0);
    h_free(h);
}

static void test_list_transactions_filters(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *a = prod_new(h, "a"), *b = prod_new(h, "b"), *cc = prod_new(h, "c"), *d = prod_new(h, "d");
    prod_init(h, a, TIMEOUT_MS);
    prod_init(h, b, TIMEOUT_MS);
    prod_init(h, cc, TIMEOUT_MS);
    prod_init(h, d, TIMEOUT_MS);
    assert_int_equal(add_part(h, b, "t", 0), 0);
    assert_int_equal(add_part(h, cc, "t", 0), 0);
    assert_int_equal(end_txn(h, cc, true), 0);
    assert_int_equal(add_part(h, d, "t", 0), 0);
    assert_int_equal(end_txn(h, d, false), 0);

    for (int16_t ver = 0; ver <= 1; ver++) {
        kp_list_transactions_response *l = list_txns(h, c, ver, NULL, 0, NULL, 0, -1);
        assert_int_equal(l->transaction_states.n, 4);
        assert_int_equal(l->unknown_state_filters.n, 0);
        assert_string_equal(listed(h, l, "a"), "Empty");
        assert_string_equal(listed(h, l, "b"), "Ongoing");
        assert_string_equal(listed(h, l, "c"), "CompleteCommit");
        assert_string_equal(listed(h, l, "d"), "CompleteAbort");
        for (int32_t i = 0; i < l->transaction_states.n; i++)
            if (kp_str_eq(l->transaction_states.v[i].transactional_id, "b"))
                assert_int_equal(l->transaction_states.v[i].producer_id, b->pid);
    }
    /* state filter, with a name Kafka does not know */
    const char *const states[] = {"Ongoing", "Bogus", "CompleteAbort"};
    kp_list_transactions_response *l = list_txns(h, c, 0, states, 3, NULL, 0, -1);
    assert_int_equal(l->transaction_states.n, 2);
    assert_non_null(listed(h, l, "b"));
    assert_non_null(listed(h, l, "d"));
    assert_int_equal(l->unknown_state_filters.n, 1);
    assert_true(kp_str_eq(l->unknown_state_filters.v[0], "Bogus"));
    /* Kafka's names it never lists are no unknown filter */
    const char *const dead[] = {"Dead", "PrepareEpochFence"};
    l = list_txns(h, c, 0, dead, 2, NULL, 0, -1);
    assert_int_equal(l->transaction_states.n, 0);
    assert_int_equal(l->unknown_state_filters.n, 0);
    /* producer id filter */
    int64_t pids[] = {cc->pid, 999999};
    l = list_txns(h, c, 0, NULL, 0, pids, 2, -1);
    assert_int_equal(l->transaction_states.n, 1);
    assert_string_equal(listed(h, l, "c"), "CompleteCommit");
    /* both: they must all hold */
    l = list_txns(h, c, 0, states, 3, pids, 2, -1);
    assert_int_equal(l->transaction_states.n, 0);
    /* v0 has no duration filter (v1's: test_list_transactions_duration_filter_applies_to_every_state) */
    clk_advance(1000);
    l = list_txns(h, c, 0, NULL, 0, NULL, 0, 5000);
    assert_int_equal(l->transaction_states.n, 4);
    assert_int_equal(end_txn(h, b, true), 0);
    h_free(h);
}

/* ======================================================================== */
/* transaction.marker.delay.ms and restarts                                 */
/* ======================================================================== */

static void test_marker_delay_prepare_commit_refusals(void **state) {
    (void)state;
    const char *const ov[] = {"transaction.marker.delay.ms", "600000", NULL};
    harness *h = h_new(ov);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_string_equal(state_of(h, c, "tx"), "PrepareCommit");
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 0);
    assert_int_equal(end_txn(h, p, true), KERR_CONCURRENT_TRANSACTIONS);
    assert_int_equal(end_txn(h, p, false), KERR_INVALID_TXN_STATE);
    assert_int_equal(add_part(h, p, "t", 0), KERR_CONCURRENT_TRANSACTIONS);
    assert_int_equal(add_offsets(h, p, "g"), KERR_CONCURRENT_TRANSACTIONS);
    assert_int_equal(prod_send_v(h, p, 9, "t", 0, 1, NULL), KERR_NOT_ENOUGH_REPLICAS);
    assert_int_equal(prod_send_v(h, p, 11, "t", 0, 1, NULL), KERR_NOT_ENOUGH_REPLICAS);
    /* TxnOffsetCommit: 51 -> 19 -> COORDINATOR_NOT_AVAILABLE (Kafka's group coordinator mapping) */
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 1), KERR_COORDINATOR_NOT_AVAILABLE);
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, NULL, NULL), KERR_CONCURRENT_TRANSACTIONS);
    assert_string_equal(state_of(h, c, "tx"), "PrepareCommit");
    h_free(h);
}

/*
 * A "restart" inside the harness: a harness whose storage is the file at path, loaded as
 * srv_init loads it (topics, groups, then the coordinator, which finishes what a
 * PrepareCommit/PrepareAbort left, then a commit).
 */
static harness *file_harness(const char *const *ov, const char *path) {
    harness *h = h_new(ov);
    char err[512];
    txn_free(&h->s);
    stor_close(h->s.st);
    if (stor_open(&h->s.st, path, STOR_SYNC_OFF, err, sizeof err) != 0) fail_msg("stor_open: %s", err);
    if (topic_load_all(&h->s) != 0) fail_msg("topic_load_all: %s", stor_errmsg(h->s.st));
    if (grp_load(&h->s) != 0) fail_msg("grp_load: %s", stor_errmsg(h->s.st));
    if (txn_init(&h->s) != 0) fail_msg("txn_init: %s", stor_errmsg(h->s.st));
    assert_int_equal(topic_commit_now(&h->s), 0);
    return h;
}

/* How many COMMIT (1) or ABORT (0) markers of pid t-index holds, read_uncommitted. */
static int markers(harness *h, conn *c, int32_t index, int64_t pid, int type) {
    seen b[32];
    int n = parse(fetch(h, c, RU, "t", index, 0), b, 32), k = 0;
    for (int i = 0; i < n; i++) k += b[i].marker == type && b[i].pid == pid;
    return k;
}

static void test_restart_completes_a_prepare_commit(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-restart");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    const char *const ov[] = {"transaction.marker.delay.ms", "600000", NULL};
    harness *h = file_harness(ov, path);
    make_topic(h, "t", 2);
    conn *c = h_conn(h, NULL);
    assert_int_equal(plain_commit(h, c, "g", "t", 0, 5), 0);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int64_t pid = p->pid;
    int16_t epoch = p->epoch;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(add_part(h, p, "t", 1), 0);
    prod_send(h, p, "t", 0, 2); /* t-0: 0-1 */
    prod_send(h, p, "t", 1, 3); /* t-1: 0-2 */
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    assert_int_equal(end_txn(h, p, true), 0);
    assert_string_equal(state_of(h, c, "tx"), "PrepareCommit");
    assert_int_equal(markers(h, c, 0, pid, 1) + markers(h, c, 1, pid, 1), 0);
    prod saved = *p;
    h_free(h); /* the "kill": nothing more is written */

    h = file_harness(ov, path);
    c = h_conn(h, NULL);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteCommit");
    assert_int_equal(st->producer_id, pid);
    assert_int_equal(st->producer_epoch, epoch);
    assert_int_equal(markers(h, c, 0, pid, 1), 1);
    assert_int_equal(markers(h, c, 1, pid, 1), 1);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 3);
    assert_int_equal(pd->aborted_transactions.n, 0);
    assert_int_equal(fetch(h, c, RC, "t", 1, 0)->last_stable_offset, 4);
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, 10);
    /* the producer goes on with its epoch */
    p = prod_again(h, &saved);
    assert_int_equal(end_txn(h, p, true), 0); /* a retry of what is done */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(prod_send(h, p, "t", 0, 1), 3);
    h_free(h);
    tmp_dir_remove(dir);
}

/*
 * The stored groups and pending offsets are cleared only when the id has some in memory
 * (txn_drop_members, issue 37): memory must hold every stored one, those loaded at a restart too.
 * Here the open transaction's group and offset come back from storage and its abort clears them.
 */
static void test_completion_clears_members_loaded_at_restart(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-members");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    harness *h = file_harness(NULL, path);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    prod saved = *p;
    h_free(h);
    const char *members = "SELECT (SELECT count(*) FROM txn_groups) + (SELECT count(*) FROM txn_offsets)";
    assert_int_equal(fx_raw_int(path, members), 2);

    h = file_harness(NULL, path);
    p = prod_again(h, &saved);
    assert_int_equal(end_txn(h, p, false), 0);
    /* and an id that never had members completes without any look-up of them */
    prod *q = prod_new(h, "plain");
    prod_init(h, q, TIMEOUT_MS);
    assert_int_equal(add_part(h, q, "t", 0), 0);
    assert_int_equal(end_txn(h, q, true), 0);
    h_free(h);
    assert_int_equal(fx_raw_int(path, members), 0);
    assert_int_equal(fx_raw_int(path, "SELECT count(*) FROM txns WHERE state IN (4, 5)"), 2);
    tmp_dir_remove(dir);
}

static void test_restart_between_markers(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-restart");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    const char *const ov[] = {"transaction.marker.delay.ms", "1", NULL};
    harness *h = file_harness(ov, path);
    make_topic(h, "t", 2);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int64_t pid = p->pid;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(add_part(h, p, "t", 1), 0);
    prod_send(h, p, "t", 0, 2);
    prod_send(h, p, "t", 1, 3);
    assert_int_equal(end_txn(h, p, false), 0);
    assert_string_equal(state_of(h, c, "tx"), "PrepareAbort");
    /* one timer run: one marker */
    usleep(5000);
    uv_run(h->s.loop, UV_RUN_NOWAIT);
    assert_int_equal(topic_commit_now(&h->s), 0);
    int m0 = markers(h, c, 0, pid, 0), m1 = markers(h, c, 1, pid, 0);
    assert_int_equal(m0 + m1, 1);
    assert_string_equal(state_of(h, c, "tx"), "PrepareAbort");
    h_free(h);

    h = file_harness(ov, path);
    c = h_conn(h, NULL);
    assert_string_equal(state_of(h, c, "tx"), "CompleteAbort");
    /* each partition has exactly one ABORT marker, none twice */
    assert_int_equal(markers(h, c, 0, pid, 0), 1);
    assert_int_equal(markers(h, c, 1, pid, 0), 1);
    assert_int_equal(markers(h, c, 0, pid, 1) + markers(h, c, 1, pid, 1), 0);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 3);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 0);
    pd = fetch(h, c, RC, "t", 1, 0);
    assert_int_equal(pd->last_stable_offset, 4);
    assert_int_equal(pd->aborted_transactions.n, 1);
    h_free(h);
    tmp_dir_remove(dir);
}

static void test_restart_keeps_an_open_transaction(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-restart");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    harness *h = file_harness(NULL, path);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 2-3 */
    prod saved = *p;
    h_free(h);

    h = file_harness(NULL, path);
    c = h_conn(h, NULL);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 4);
    assert_int_equal(pd->last_stable_offset, 2);
    /* the producer (same id and epoch) goes on and commits */
    p = prod_again(h, &saved);
    assert_int_equal(prod_send(h, p, "t", 0, 1), 4);
    assert_int_equal(end_txn(h, p, true), 0);
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 6);
    assert_int_equal(pd->aborted_transactions.n, 0);
    /* a new producer id after the restart is not one handed out before it */
    prod *q = prod_new(h, "other");
    prod_init(h, q, TIMEOUT_MS);
    assert_true(q->pid != p->pid);
    h_free(h);
    tmp_dir_remove(dir);
}

/*
 * EndTxn and the producer's next transaction on the same partition in one loop iteration (one
 * storage commit): the decided transaction still holds the LSO until that commit, the new one
 * holds it after.
 */
static void test_next_transaction_before_the_marker_is_durable(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 0-1 */
    req *end = end_send(h, p->c, 3, p->id, p->pid, p->epoch, true); /* COMMIT at 2 */
    kp_add_partitions_to_txn_request aq;
    kp_defaults(&kp_add_partitions_to_txn_request_schema, 3, &aq);
    aq.v3_and_below_transactional_id = kp_str_c(p->id);
    aq.v3_and_below_producer_id = p->pid;
    aq.v3_and_below_producer_epoch = p->epoch;
    int32_t zero = 0;
    kp_add_partitions_to_txn_topic at = {.name = kp_str_c("t")};
    at.partitions.n = 1;
    at.partitions.v = &zero;
    aq.v3_and_below_topics.n = 1;
    aq.v3_and_below_topics.v = &at;
    req *add = h_send(h, p->c, "txn-producer", 24, 3, &aq);
    kp_bytes b = h_batch_from(h, KP_ATTR_TRANSACTIONAL, p->pid, p->epoch, *seq_of(p, "t", 0), 1);
    kp_produce_partition_produce_response *pr = produce_full(h, p->c, 9, kp_str_c(p->id), "t", 0, b, false);
    assert_int_equal(pr->error_code, 0);
    assert_int_equal(pr->base_offset, 3);
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 0);
    assert_int_equal(topic_commit_now(&h->s), 0);
    assert_int_equal(((kp_end_txn_response *)h_resp(h, end))->error_code, 0);
    assert_int_equal(part_code(h_resp(h, add), 0, 0), 0);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->high_watermark, 4);
    assert_int_equal(pd->last_stable_offset, 3);
    seen sb[4];
    assert_int_equal(parse(pd, sb, 4), 2);
    assert_int_equal(sb[1].marker, 1);
    assert_int_equal(end_txn(h, p, false), 0); /* ABORT at 4 */
    pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 5);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 3);
    h_free(h);
}

/* Two brokers: each transactional id has one coordinator, FindCoordinator (key type 1) names it, the other refuses. */
static void test_transactional_ids_are_spread_over_the_brokers(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    h->s.nnodes = 2;
    h->s.nodes[1].id = h->s.nodes[0].id + 1;
    h->s.nodes[1].ports[LSN_PLAINTEXT] = 19093;
    conn *c[2] = {h_conn(h, NULL), h_conn(h, NULL)};
    c[1]->node = 1;
    int on[2] = {0, 0};
    for (int i = 0; i < 16; i++) {
        char id[16];
        snprintf(id, sizeof id, "tx-%d", i);
        for (int16_t ver = 1; ver <= 4; ver += 3) {
            kp_find_coordinator_request q;
            kp_defaults(&kp_find_coordinator_request_schema, ver, &q);
            q.key_type = 1;
            kp_str key = kp_str_c(id);
            q.key = key;
            q.coordinator_keys.n = 1;
            q.coordinator_keys.v = &key;
            kp_find_coordinator_response *resp = h_resp(h, h_send(h, c[0], "txn-producer", 10, ver, &q));
            int32_t node_id = ver >= 4 ? resp->coordinators.v[0].node_id : resp->node_id;
            assert_int_equal(ver >= 4 ? resp->coordinators.v[0].error_code : resp->error_code, 0);
            int home = node_id == h->s.nodes[1].id;
            assert_int_equal(node_id, h->s.nodes[home].id);
            if (ver == 1) on[home]++;
            assert_int_equal(init_full(h, c[!home], 4, id, TIMEOUT_MS, -1, -1, NULL, NULL), KERR_NOT_COORDINATOR);
            assert_int_equal(init_full(h, c[home], 4, id, TIMEOUT_MS, -1, -1, NULL, NULL), 0);
            kp_describe_transactions_transaction_state *st = describe(h, c[!home], id);
            assert_int_equal(st->error_code, KERR_NOT_COORDINATOR);
            assert_int_equal(describe(h, c[home], id)->error_code, 0);
            kp_list_transactions_response *l = list_txns(h, c[home], 0, NULL, 0, NULL, 0, -1);
            assert_non_null(listed(h, l, id));
            l = list_txns(h, c[!home], 0, NULL, 0, NULL, 0, -1);
            assert_null(listed(h, l, id));
        }
    }
    assert_true(on[0] > 0 && on[1] > 0);
    h_free(h);
}

/* AddPartitionsToTxn v4+ (the broker form, plaintext listener): batched, and verify_only adds nothing. */
static void test_add_partitions_v4_batched_and_verify_only(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *a = prod_new(h, "a"), *b = prod_new(h, "b");
    prod_init(h, a, TIMEOUT_MS);
    prod_init(h, b, TIMEOUT_MS);
    assert_int_equal(add_part(h, a, "t", 0), 0);
    int32_t both[2] = {0, 1};
    kp_add_partitions_to_txn_topic tt = {.name = kp_str_c("t")};
    tt.partitions.n = 2;
    tt.partitions.v = both;
    for (int16_t ver = 4; ver <= 5; ver++) {
        kp_add_partitions_to_txn_transaction tx[2];
        memset(tx, 0, sizeof tx);
        tx[0].transactional_id = kp_str_c("a");
        tx[0].producer_id = a->pid;
        tx[0].producer_epoch = a->epoch;
        tx[1].transactional_id = kp_str_c("b");
        tx[1].producer_id = b->pid;
        tx[1].producer_epoch = (int16_t)(b->epoch + 1);
        for (int i = 0; i < 2; i++) {
            tx[i].verify_only = true;
            tx[i].topics.n = 1;
            tx[i].topics.v = &tt;
        }
        kp_add_partitions_to_txn_request q;
        kp_defaults(&kp_add_partitions_to_txn_request_schema, ver, &q);
        q.transactions.n = 2;
        q.transactions.v = tx;
        req *r = h_send(h, a->c, "broker", 24, ver, &q);
        assert_int_equal(topic_commit_now(&h->s), 0);
        kp_add_partitions_to_txn_response *resp = h_resp(h, r);
        assert_int_equal(resp->error_code, 0);
        assert_int_equal(resp->results_by_transaction.n, 2);
        kp_add_partitions_to_txn_result *ra = &resp->results_by_transaction.v[0], *rb = &resp->results_by_transaction.v[1];
        assert_true(kp_str_eq(ra->transactional_id, "a"));
        assert_int_equal(ra->topic_results.v[0].results_by_partition.v[0].partition_error_code, 0);
        assert_int_equal(ra->topic_results.v[0].results_by_partition.v[1].partition_error_code,
                         KERR_TRANSACTION_ABORTABLE);
        assert_int_equal(rb->topic_results.v[0].results_by_partition.v[0].partition_error_code, KERR_PRODUCER_FENCED);
        assert_int_equal(rb->topic_results.v[0].results_by_partition.v[1].partition_error_code, KERR_PRODUCER_FENCED);
    }
    /* verify_only added nothing */
    kp_describe_transactions_transaction_state *st = describe(h, a->c, "a");
    assert_int_equal(st->topics.v[0].partitions.n, 1);
    assert_string_equal(state_of(h, a->c, "b"), "Empty");
    assert_int_equal(end_txn(h, a, true), 0);
    h_free(h);
}

/* Time down counts: an open transaction whose timeout passed while the broker was down is aborted at the first check. */
static void test_restart_downtime_counts_toward_the_timeout(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-restart");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    const char *const ov[] = {"transaction.abort.timed.out.transaction.cleanup.interval.ms", "10", NULL};
    harness *h = file_harness(ov, path);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, 5000);
    int16_t e0 = p->epoch;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 0-1 */
    h_free(h);
    clk_advance(6000); /* down */

    h = file_harness(ov, path);
    conn *c = h_conn(h, NULL);
    assert_string_equal(state_of(h, c, "tx"), "Ongoing");
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 0);
    clk_advance(10);
    txn_tick(&h->s);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteAbort");
    assert_int_equal(st->producer_epoch, e0 + 1);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 3);
    assert_int_equal(pd->aborted_transactions.n, 1);
    h_free(h);
    tmp_dir_remove(dir);
}

/* ======================================================================== */
/* More of Kafka's edges                                                    */
/* ======================================================================== */

/*
 * Kafka (KafkaApis.handleProduceRequest): a request holding transactional records without a
 * transactional id is refused as a whole, every partition TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
 * nothing appended, also the partitions whose batches are not transactional.
 */
static void test_produce_transactional_records_without_id_refuse_the_whole_request(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 1), 0);
    kp_produce_partition_produce_data pd[2] = {{0, h_batch(h, 2)},
                                               {1, h_batch_from(h, KP_ATTR_TRANSACTIONAL, p->pid, p->epoch, 0, 1)}};
    kp_produce_topic_produce_data td = {.name = kp_str_c("t")};
    td.partition_data.n = 2;
    td.partition_data.v = pd;
    kp_produce_request q = {.transactional_id = KP_STR_NULL, .acks = -1, .timeout_ms = 5000};
    q.topic_data.n = 1;
    q.topic_data.v = &td;
    req *r = h_send(h, p->c, "producer", 0, 9, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_produce_response *resp = h_resp(h, r);
    assert_int_equal(resp->responses.v[0].partition_responses.v[1].error_code, KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert_int_equal(part(h, "t", 1)->end, 0);
    assert_int_equal(resp->responses.v[0].partition_responses.v[0].error_code, KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    assert_int_equal(part(h, "t", 0)->end, 0);
    h_free(h);
}

/* A timestamp lookup is bounded as latest is: by the LSO under read_committed (Kafka's lastFetchableOffset). */
static void test_list_offsets_by_timestamp_is_bounded_by_the_lso(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int64_t t0 = clk_now_ms();
    produce_plain(h, c, "t", 0, 2); /* 0-1 at t0 */
    clk_advance(1000);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 3); /* 2-4 at t0 + 1000, open */
    kp_list_offsets_partition qp = {.partition_index = 0, .current_leader_epoch = -1};
    kp_list_offsets_topic qt = {.name = kp_str_c("t")};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_list_offsets_request q = {.replica_id = -1};
    q.topics.n = 1;
    q.topics.v = &qt;
    int64_t want[][3] = {/* timestamp, read_committed answer, read_uncommitted answer */
                         {t0, 0, 0},
                         {t0 + 500, -1, 2},
                         {-3, -1, 2}};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++)
        for (int8_t iso = 0; iso <= 1; iso++) {
            qp.timestamp = want[i][0];
            q.isolation_level = iso;
            kp_list_offsets_response *resp = h_resp(h, h_send(h, c, "consumer", 2, 7, &q));
            kp_list_offsets_partition_response *rp = &resp->topics.v[0].partitions.v[0];
            assert_int_equal(rp->error_code, 0);
            int64_t expect = want[i][iso == 1 ? 1 : 2];
            /* -3 read_uncommitted: the max timestamp is in the batch 2-4 (batch granularity here) */
            if (want[i][0] == -3 && iso == 0 && rp->offset >= 2 && rp->offset <= 4) continue;
            if (rp->offset != expect)
                fail_msg("ListOffsets v7 timestamp %lld isolation %d: offset %lld, Kafka answers %lld",
                         (long long)want[i][0], iso, (long long)rp->offset, (long long)expect);
            if (expect < 0) assert_int_equal(rp->timestamp, -1);
        }
    h_free(h);
}

/*
 * Kafka's duration filter (TransactionStateManager.listTransactionStates) drops an id when
 * now - txnStartTimestamp <= duration, whatever its state: an Empty id (start -1) and a
 * completed transaction that started long enough ago are listed.
 */
static void test_list_transactions_duration_filter_applies_to_every_state(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *a = prod_new(h, "a"), *d = prod_new(h, "done"), *o = prod_new(h, "open");
    prod_init(h, a, TIMEOUT_MS);
    prod_init(h, d, TIMEOUT_MS);
    prod_init(h, o, TIMEOUT_MS);
    assert_int_equal(add_part(h, d, "t", 0), 0);
    assert_int_equal(end_txn(h, d, true), 0);
    assert_int_equal(add_part(h, o, "t", 0), 0);
    clk_advance(1000);
    /* the running transaction: listed when it ran longer than the filter */
    kp_list_transactions_response *l = list_txns(h, c, 1, NULL, 0, NULL, 0, 500);
    assert_non_null(listed(h, l, "open"));
    assert_null(listed(h, list_txns(h, c, 1, NULL, 0, NULL, 0, 1000), "open"));
    const char *sa = listed(h, l, "a"), *sd = listed(h, l, "done");
    if (!sa || !sd)
        fail_msg("ListTransactions v1 duration_filter 500 after 1000 ms: Empty id %s, CompleteCommit id %s "
                 "(Kafka lists both)", sa ? "listed" : "missing", sd ? "listed" : "missing");
    l = list_txns(h, c, 1, NULL, 0, NULL, 0, 1000);
    assert_null(listed(h, l, "done"));
    assert_non_null(listed(h, l, "a"));
    assert_int_equal(end_txn(h, o, true), 0);
    h_free(h);
}

/* A partition added but never written: its ABORT marker is no aborted transaction (only producer state). */
static void test_abort_marker_without_data_is_not_an_aborted_transaction(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 2);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 1); /* 0 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(add_part(h, p, "t", 1), 0);
    prod_send(h, p, "t", 1, 1);
    assert_int_equal(end_txn(h, p, false), 0);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "t", 0, 0);
    assert_int_equal(pd->last_stable_offset, 2);
    assert_int_equal(pd->aborted_transactions.n, 0);
    seen b[4];
    assert_int_equal(parse(pd, b, 4), 2);
    assert_int_equal(b[1].base, 1);
    assert_int_equal(b[1].marker, 0);
    pd = fetch(h, c, RC, "t", 1, 0);
    assert_int_equal(pd->aborted_transactions.n, 1);
    h_free(h);
}

/* An aborted transaction that starts past the data returned is not named (over-including loses data). */
static void test_fetch_names_only_aborted_transactions_the_data_reaches(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    produce_plain(h, c, "t", 0, 2); /* 0-1 */
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 2); /* 2-3 */
    assert_int_equal(end_txn(h, p, false), 0); /* 4 */
    kp_fetch_request q;
    kp_defaults(&kp_fetch_request_schema, 4, &q);
    q.replica_id = -1;
    q.max_bytes = 1 << 20;
    q.isolation_level = RC;
    kp_fetch_partition fp;
    kp_defaults(&kp_fetch_partition_schema, 4, &fp);
    fp.partition = 0;
    fp.fetch_offset = 0;
    fp.partition_max_bytes = 1; /* only the first batch (KIP-74) */
    kp_fetch_topic ft = {.topic = kp_str_c("t")};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    q.topics.n = 1;
    q.topics.v = &ft;
    kp_fetch_response *resp = h_resp(h, h_send(h, c, "consumer", 1, 4, &q));
    kp_fetch_partition_data *pd = &resp->responses.v[0].partitions.v[0];
    seen b[4];
    assert_int_equal(parse(pd, b, 4), 1);
    assert_int_equal(b[0].last, 1);
    assert_int_equal(pd->aborted_transactions.n, 0);
    /* the next fetch reaches it */
    fp.fetch_offset = 2;
    resp = h_resp(h, h_send(h, c, "consumer", 1, 4, &q));
    pd = &resp->responses.v[0].partitions.v[0];
    assert_int_equal(parse(pd, b, 4), 1);
    assert_int_equal(pd->aborted_transactions.n, 1);
    assert_int_equal(pd->aborted_transactions.v[0].first_offset, 2);
    h_free(h);
}

/* A read_committed fetch parked at the LSO is answered when the commit makes the transaction stable. */
static void test_parked_read_committed_fetch_wakes_when_the_lso_moves(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 3); /* 0-2 */
    kp_fetch_request q;
    kp_defaults(&kp_fetch_request_schema, 4, &q);
    q.replica_id = -1;
    q.max_wait_ms = 30000;
    q.min_bytes = 1;
    q.max_bytes = 1 << 20;
    q.isolation_level = RC;
    kp_fetch_partition fp;
    kp_defaults(&kp_fetch_partition_schema, 4, &fp);
    fp.partition = 0;
    fp.fetch_offset = 0;
    fp.partition_max_bytes = 1 << 20;
    kp_fetch_topic ft = {.topic = kp_str_c("t")};
    ft.partitions.n = 1;
    ft.partitions.v = &fp;
    q.topics.n = 1;
    q.topics.v = &ft;
    req *r = h_send(h, c, "consumer", 1, 4, &q);
    if (r->state != REQ_PARKED) fail_msg("the read_committed fetch at the LSO was not parked (state %d)", (int)r->state);
    assert_int_equal(end_txn(h, p, true), 0);
    bool answered = h_answered(r);
    if (!answered) topic_wake_all(&h->s);
    assert_true(answered);
    kp_fetch_response *resp = h_resp(h, r);
    kp_fetch_partition_data *pd = &resp->responses.v[0].partitions.v[0];
    assert_int_equal(pd->last_stable_offset, 4);
    seen b[4];
    assert_int_equal(parse(pd, b, 4), 2);
    h_free(h);
}

/* OffsetFetch v8+ (groups) carries require_stable as v7 does. */
static void test_offset_fetch_v8_require_stable(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    for (int stable = 0; stable <= 1; stable++) {
        kp_offset_fetch_request q;
        kp_defaults(&kp_offset_fetch_request_schema, 8, &q);
        q.require_stable = stable;
        int32_t idx = 0;
        kp_offset_fetch_request_topics t = {.name = kp_str_c("t")};
        t.partition_indexes.n = 1;
        t.partition_indexes.v = &idx;
        kp_offset_fetch_request_group g = {.group_id = kp_str_c("g"), .member_id = KP_STR_NULL, .member_epoch = -1};
        g.topics.n = 1;
        g.topics.v = &t;
        q.groups.n = 1;
        q.groups.v = &g;
        kp_offset_fetch_response *resp = h_resp(h, h_send(h, c, "consumer", 9, 8, &q));
        kp_offset_fetch_response_partitions *rp = &resp->groups.v[0].topics.v[0].partitions.v[0];
        assert_int_equal(rp->error_code, stable ? KERR_UNSTABLE_OFFSET_COMMIT : 0);
        assert_int_equal(rp->committed_offset, -1);
    }
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(offset_fetch(h, c, "g", "t", 0, true)->committed_offset, 10);
    h_free(h);
}

/* DeleteGroups drops the group's pending transactional offsets (Kafka's OffsetMetadataManager). */
static void test_delete_group_drops_pending_offsets(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    kp_delete_groups_request q;
    kp_defaults(&kp_delete_groups_request_schema, 2, &q);
    kp_str id = kp_str_c("g");
    q.groups_names.n = 1;
    q.groups_names.v = &id;
    req *r = h_send(h, c, "admin", 42, 2, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_delete_groups_response *resp = h_resp(h, r);
    assert_int_equal(resp->results.v[0].error_code, 0);
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, -1);
    assert_int_equal(end_txn(h, p, true), 0);
    o = offset_fetch(h, c, "g", "t", 0, true);
    assert_int_equal(o->error_code, 0);
    assert_int_equal(o->committed_offset, -1);
    h_free(h);
}

/* DeleteTopics takes the topic's partitions out of an open transaction, which still ends. */
static void test_delete_topic_leaves_the_transaction(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    make_topic(h, "u", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(add_part(h, p, "u", 0), 0);
    prod_send(h, p, "t", 0, 1);
    prod_send(h, p, "u", 0, 1);
    kp_delete_topics_request q;
    kp_defaults(&kp_delete_topics_request_schema, 4, &q);
    kp_str name = kp_str_c("u");
    q.topic_names.n = 1;
    q.topic_names.v = &name;
    q.timeout_ms = 5000;
    req *r = h_send(h, c, "admin", 20, 4, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_delete_topics_response *resp = h_resp(h, r);
    assert_int_equal(resp->responses.v[0].error_code, 0);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_int_equal(st->topics.n, 1);
    assert_true(kp_str_eq(st->topics.v[0].topic, "t"));
    assert_int_equal(end_txn(h, p, true), 0);
    assert_int_equal(fetch(h, c, RC, "t", 0, 0)->last_stable_offset, 2);
    /* a topic of the same name again: nothing of the old transaction on it */
    make_topic(h, "u", 1);
    kp_fetch_partition_data *pd = fetch(h, c, RC, "u", 0, 0);
    assert_int_equal(pd->high_watermark, 0);
    assert_int_equal(pd->last_stable_offset, 0);
    h_free(h);
}

/* The coordinator's record of id (to put its epoch where only 32k bumps would take it). */
static txn *coord(harness *h, const char *id) {
    txn *t = txn_find(&h->s, id, strlen(id));
    assert_non_null(t);
    return t;
}

/*
 * An exhausted epoch (>= 32766, Kafka's isEpochExhausted) rotates the producer id: epoch 0 of a
 * new one. With the expected producer given, Kafka records the old epoch as the last one, so a
 * retry of that InitProducerId (old id, old epoch: valid as the previous id with an exhausted
 * epoch) gets the same new id and epoch back.
 */
static void test_exhausted_epoch_rotates_the_producer_id(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    conn *c = h_conn(h, NULL);
    int64_t p1, p2, p3, again;
    int16_t e;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &p1, &e), 0);
    coord(h, "tx")->epoch = 32766;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &p2, &e), 0);
    assert_true(p2 != p1);
    assert_int_equal(e, 0);
    coord(h, "tx")->epoch = 32766;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, p2, 32766, &p3, &e), 0);
    assert_true(p3 != p2);
    assert_int_equal(e, 0);
    /* the retry: the same answer */
    int16_t code = init_full(h, c, 4, "tx", TIMEOUT_MS, p2, 32766, &again, &e);
    if (code) fail_msg("retry of the rotating InitProducerId (previous producer id, exhausted epoch): error %d, "
                       "Kafka answers producer id %lld epoch 0", code, (long long)p3);
    assert_int_equal(again, p3);
    assert_int_equal(e, 0);
    /* the producer id before that is fenced */
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, p1, 32766, NULL, NULL), KERR_PRODUCER_FENCED);
    h_free(h);
}

/* Fencing an open transaction at epoch 32766 bumps to 32767 (Kafka refuses only at Short.MaxValue). */
static void test_fence_at_an_exhausted_epoch_still_fences(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    coord(h, "tx")->epoch = 32766;
    p->epoch = 32766;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    prod_send(h, p, "t", 0, 1);
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, NULL, NULL), KERR_CONCURRENT_TRANSACTIONS);
    kp_describe_transactions_transaction_state *st = describe(h, c, "tx");
    assert_string_equal(h_cstr(h, st->transaction_state), "CompleteAbort");
    if (st->producer_epoch != 32767)
        fail_msg("fenced at epoch 32766: the epoch is %d, Kafka bumps it to 32767", st->producer_epoch);
    /* the zombie is fenced */
    assert_int_equal(end_txn(h, p, false), KERR_PRODUCER_FENCED);
    assert_int_equal(prod_send_v(h, p, 9, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);
    /* the retry rotates the producer id */
    int64_t pid;
    int16_t epoch;
    assert_int_equal(init_full(h, c, 4, "tx", TIMEOUT_MS, -1, -1, &pid, &epoch), 0);
    assert_true(pid != p->pid);
    assert_int_equal(epoch, 0);
    h_free(h);
}

/*
 * OffsetDelete of a partition with a pending transactional offset: Kafka's tombstone removes
 * the pending offsets of that partition too (OffsetMetadataManager.replay of a tombstone,
 * deleteOffsets writes one when hasPendingTransactionalOffsets), so the COMMIT materialises
 * nothing for it.
 */
static void test_offset_delete_drops_pending_offsets(void **state) {
    (void)state;
    harness *h = h_new(NULL);
    make_topic(h, "t", 1);
    conn *c = h_conn(h, NULL);
    assert_int_equal(plain_commit(h, c, "g", "t", 0, 5), 0);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    assert_int_equal(add_offsets(h, p, "g"), 0);
    assert_int_equal(txn_commit(h, p, "g", "t", 0, 10), 0);
    kp_offset_delete_request_partition qp = {0};
    kp_offset_delete_request_topic qt = {.name = kp_str_c("t")};
    qt.partitions.n = 1;
    qt.partitions.v = &qp;
    kp_offset_delete_request q = {.group_id = kp_str_c("g")};
    q.topics.n = 1;
    q.topics.v = &qt;
    req *r = h_send(h, c, "admin", 47, 0, &q);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_offset_delete_response *resp = h_resp(h, r);
    assert_int_equal(resp->error_code, 0);
    assert_int_equal(resp->topics.v[0].partitions.v[0].error_code, 0);
    kp_offset_fetch_response_partition *o = offset_fetch(h, c, "g", "t", 0, true);
    if (o->error_code != 0)
        fail_msg("OffsetFetch require_stable after OffsetDelete: error %d, Kafka answers 0 (the pending offset is "
                 "gone)", o->error_code);
    assert_int_equal(o->committed_offset, -1);
    assert_int_equal(end_txn(h, p, true), 0);
    o = offset_fetch(h, c, "g", "t", 0, true);
    if (o->committed_offset != -1)
        fail_msg("after OffsetDelete and the COMMIT: offset %lld, Kafka has none", (long long)o->committed_offset);
    h_free(h);
}


/* ======================================================================== */
/* Transactions V2 (KIP-890 part 2): EndTxn v5, Produce v12, TxnOffsetCommit v5 */
/* ======================================================================== */

static const char *const TV2[] = {"transaction.version", "2", NULL};

/* EndTxn v5: the error, and the producer id and epoch it answers in *pid / *epoch. */
static int16_t end_v5(harness *h, prod *p, int16_t epoch, bool commit, int64_t *pid, int16_t *out_epoch) {
    req *r = end_send(h, p->c, 5, p->id, p->pid, epoch, commit);
    assert_int_equal(topic_commit_now(&h->s), 0);
    kp_end_txn_response *resp = h_resp(h, r);
    *pid = resp->producer_id;
    *out_epoch = resp->producer_epoch;
    return resp->error_code;
}

/* The epoch of the last marker of pid in t-index. */
static int16_t marker_epoch(harness *h, conn *c, int32_t index, int64_t pid) {
    seen b[32];
    int n = parse(fetch(h, c, RU, "t", index, 0), b, 32);
    int16_t e = -1;
    for (int i = 0; i < n; i++)
        if (b[i].marker >= 0 && b[i].pid == pid) e = b[i].epoch;
    return e;
}

static void test_tv2_end_txn_bumps_the_epoch_and_fences_the_late_batch(void **state) {
    (void)state;
    harness *h = h_new(TV2);
    make_topic(h, "t", 2);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    int16_t e0 = p->epoch;
    int64_t pid;
    int16_t epoch;
    /* Produce v12 adds the partition itself; Produce v11 still needs AddPartitionsToTxn */
    assert_int_equal(prod_send_v(h, p, 11, "t", 1, 1, NULL), KERR_TRANSACTION_ABORTABLE);
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 2, NULL), 0);
    assert_string_equal(state_of(h, p->c, "tx"), "Ongoing");
    assert_int_equal(end_v5(h, p, e0, true, &pid, &epoch), 0);
    assert_int_equal(pid, p->pid);
    assert_int_equal(epoch, e0 + 1);
    /* the COMMIT marker carries the bumped epoch: the partition's producer epoch from now on */
    assert_int_equal(marker_epoch(h, p->c, 0, p->pid), e0 + 1);
    /* the answer was lost: the retry with the epoch before the bump gets it again */
    assert_int_equal(end_v5(h, p, e0, true, &pid, &epoch), 0);
    assert_int_equal(epoch, e0 + 1);
    /* an abort retried as such after a commit, or a commit again with nothing added: 48 */
    assert_int_equal(end_v5(h, p, e0, false, &pid, &epoch), KERR_INVALID_TXN_STATE);
    assert_int_equal(pid, -1);
    assert_int_equal(end_v5(h, p, (int16_t)(e0 + 1), true, &pid, &epoch), KERR_INVALID_TXN_STATE);
    assert_int_equal(end_v5(h, p, (int16_t)(e0 + 3), true, &pid, &epoch), KERR_PRODUCER_FENCED);
    /* a late batch of the committed transaction (the old epoch): 47, at v12 and at v11 */
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);
    assert_int_equal(prod_send_v(h, p, 11, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    /* the next transaction with the new epoch; an abort with nothing added bumps too */
    p->epoch = (int16_t)(e0 + 1);
    memset(p->seq, 0, sizeof p->seq);
    assert_int_equal(end_v5(h, p, p->epoch, false, &pid, &epoch), 0);
    assert_int_equal(epoch, e0 + 2);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteAbort");
    p->epoch = epoch;
    assert_int_equal(prod_send_v(h, p, 12, "t", 1, 1, NULL), 0);
    assert_int_equal(txn_commit_v(h, p, 5, "g", "t", 1, 7), 0); /* TxnOffsetCommit v5 adds the group */
    assert_int_equal(txn_commit_v(h, p, 4, "g2", "t", 1, 7), KERR_TRANSACTION_ABORTABLE);
    assert_int_equal(end_v5(h, p, p->epoch, true, &pid, &epoch), 0);
    assert_int_equal(epoch, e0 + 3);
    assert_int_equal(marker_epoch(h, p->c, 1, p->pid), e0 + 3);
    assert_int_equal(offset_fetch(h, p->c, "g", "t", 1, true)->committed_offset, 7);
    /* a V1 EndTxn (v4) of the same id does not bump */
    p->epoch = epoch;
    assert_int_equal(add_part(h, p, "t", 0), 0);
    assert_int_equal(end_full(h, p->c, 4, p->id, p->pid, p->epoch, true), 0);
    assert_int_equal(describe(h, p->c, "tx")->producer_epoch, e0 + 3);
    h_free(h);
}

static void test_tv2_produce_v12_refusals(void **state) {
    (void)state;
    harness *h = h_new(TV2);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    /* an epoch ahead of the id's: PRODUCER_FENCED as a produce answers it, 47 */
    p->epoch++;
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_EPOCH);
    p->epoch--;
    /* a producer id the transactional id does not have */
    p->pid += 7;
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 1, NULL), KERR_INVALID_PRODUCER_ID_MAPPING);
    p->pid -= 7;
    assert_string_equal(state_of(h, p->c, "tx"), "Empty");
    assert_int_equal(part(h, "t", 0)->end, 0);
    h_free(h);
}

/*
 * Epoch overflow (KAFKA-18660): EndTxn v5 at Short.MAX_VALUE - 1 answers a new producer id with
 * epoch 0; the markers carry the old id at Short.MAX_VALUE; a restart while they are written
 * keeps the new id (stored with the decision), and a retry with the old id is answered again.
 */
static void test_tv2_epoch_overflow_rotates_the_producer_id_across_a_restart(void **state) {
    (void)state;
    char dir[64], path[128];
    tmp_dir_new(dir, sizeof dir, "txn-tv2-overflow");
    snprintf(path, sizeof path, "%s/mskmock.db", dir);
    const char *const ov[] = {"transaction.version", "2", "transaction.marker.delay.ms", "600000", NULL};
    harness *h = file_harness(ov, path);
    make_topic(h, "t", 1);
    prod *p = prod_new(h, "tx");
    prod_init(h, p, TIMEOUT_MS);
    /* 32 thousand transactions would be slow: the epoch is set, and stored with the next write */
    txn_find(&h->s, "tx", 2)->epoch = INT16_MAX - 1;
    p->epoch = INT16_MAX - 1;
    int64_t old = p->pid, pid;
    int16_t epoch;
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 2, NULL), 0);
    assert_int_equal(end_v5(h, p, p->epoch, true, &pid, &epoch), 0);
    assert_true(pid != old && pid >= 0);
    assert_int_equal(epoch, 0);
    assert_string_equal(state_of(h, p->c, "tx"), "PrepareCommit");
    /* the new id cannot write while the markers are being written (600 s apart here): retriable */
    prod next = *p;
    next.pid = pid;
    next.epoch = 0;
    memset(next.seq, 0, sizeof next.seq);
    assert_int_equal(prod_send_v(h, &next, 12, "t", 0, 1, NULL), KERR_NOT_ENOUGH_REPLICAS);
    prod saved = *p;
    h_free(h); /* the "kill" */

    h = file_harness(ov, path);
    p = prod_again(h, &saved);
    assert_string_equal(state_of(h, p->c, "tx"), "CompleteCommit");
    assert_int_equal(describe(h, p->c, "tx")->producer_id, pid);
    assert_int_equal(describe(h, p->c, "tx")->producer_epoch, 0);
    assert_int_equal(marker_epoch(h, p->c, 0, old), INT16_MAX);
    /* the answer was lost: the old id at the exhausted epoch is a retry */
    assert_int_equal(end_v5(h, p, p->epoch, true, &pid, &epoch), 0);
    assert_int_equal(epoch, 0);
    p->pid = pid;
    p->epoch = 0;
    memset(p->seq, 0, sizeof p->seq);
    assert_int_equal(prod_send_v(h, p, 12, "t", 0, 1, NULL), 0);
    assert_int_equal(end_v5(h, p, 0, true, &pid, &epoch), 0);
    assert_int_equal(epoch, 1);
    h_free(h);
    tmp_dir_remove(dir);
}

/* every test frees its harness in the teardown too, so a failed assertion leaks nothing */
#define T(f) cmocka_unit_test_teardown(f, h_teardown)

int main(void) {
    const struct CMUnitTest tests[] = {
        T(test_init_producer_id_new_id_starts_at_epoch_0_and_bumps),
        T(test_init_producer_id_refusals),
        T(test_init_producer_id_retry_with_last_epoch_returns_the_same_epoch),
        T(test_init_producer_id_while_ongoing_fences_and_aborts),
        T(test_add_partitions_refusals),
        T(test_add_partitions_after_end_txn_starts_a_new_transaction),
        T(test_end_txn_state_machine),
        T(test_produce_transactional_batch_needs_the_partition_added),
        T(test_produce_non_transactional_batch_inside_an_open_transaction_is_48),
        T(test_fetch_read_committed_is_bounded_by_the_lso),
        T(test_fetch_reports_aborted_transactions),
        T(test_fetch_interleaved_transactions),
        T(test_list_offsets_latest_by_isolation_level),
        T(test_lso_waits_for_the_commit_that_holds_the_marker),
        T(test_txn_offset_commit_needs_add_offsets),
        T(test_txn_offset_commit_waits_for_the_commit),
        T(test_txn_offset_commit_aborted_is_dropped),
        T(test_plain_offset_commit_after_txn_offset_commit_wins),
        T(test_transaction_timeout_aborts_and_fences),
        T(test_transaction_timeout_counts_from_the_first_add),
        T(test_transactional_id_expiration),
        T(test_describe_transactions),
        T(test_list_transactions_filters),
        T(test_marker_delay_prepare_commit_refusals),
        T(test_restart_completes_a_prepare_commit),
        T(test_completion_clears_members_loaded_at_restart),
        T(test_restart_between_markers),
        T(test_restart_keeps_an_open_transaction),
        T(test_abort_marker_without_data_is_not_an_aborted_transaction),
        T(test_fetch_names_only_aborted_transactions_the_data_reaches),
        T(test_parked_read_committed_fetch_wakes_when_the_lso_moves),
        T(test_offset_fetch_v8_require_stable),
        T(test_delete_group_drops_pending_offsets),
        T(test_delete_topic_leaves_the_transaction),
        T(test_exhausted_epoch_rotates_the_producer_id),
        T(test_fence_at_an_exhausted_epoch_still_fences),
        T(test_next_transaction_before_the_marker_is_durable),
        T(test_transactional_ids_are_spread_over_the_brokers),
        T(test_add_partitions_v4_batched_and_verify_only),
        T(test_restart_downtime_counts_toward_the_timeout),
        T(test_tv2_end_txn_bumps_the_epoch_and_fences_the_late_batch),
        T(test_tv2_produce_v12_refusals),
        T(test_tv2_epoch_overflow_rotates_the_producer_id_across_a_restart),
        /* Kafka behaviour the broker does not match yet (see each test's comment) */
        T(test_produce_transactional_records_without_id_refuse_the_whole_request),
        T(test_list_offsets_by_timestamp_is_bounded_by_the_lso),
        T(test_list_transactions_duration_filter_applies_to_every_state),
        T(test_offset_delete_drops_pending_offsets),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
