/*
 * The coordinator's requests (Kafka's TransactionCoordinator, TV1): InitProducerId, the
 * producer checks every later request makes, adding partitions and groups, EndTxn, and the
 * checks a transactional produce or TxnOffsetCommit passes (KIP-890 part 1's verification).
 * Each refusal gets Kafka's code and one log line that says why.
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "txn_int.h"

/*
 * PRODUCER_FENCED (90) is new in InitProducerId v4 and EndTxn/AddPartitions/AddOffsets v2; older
 * versions, and Produce and TxnOffsetCommit at every version, get INVALID_PRODUCER_EPOCH (47).
 */
int16_t txn_fenced_code(const req *r) {
    int16_t k = r->hdr.api_key, v = r->hdr.api_version;
    bool fenced_from_v2 = k == KP_API_ADD_PARTITIONS_TO_TXN || k == KP_API_ADD_OFFSETS_TO_TXN || k == KP_API_END_TXN;
    bool old = (k == KP_API_INIT_PRODUCER_ID && v < 4) || (fenced_from_v2 && v < 2) || k == KP_API_PRODUCE ||
               k == KP_API_TXN_OFFSET_COMMIT;
    return old ? KERR_INVALID_PRODUCER_EPOCH : KERR_PRODUCER_FENCED;
}

bool txn_is_prepare(txn_state st) { return st == TS_PREPARE_COMMIT || st == TS_PREPARE_ABORT; }

/* Kafka's isValidProducerId for an InitProducerId that names the producer it had. */
static bool expected_producer_ok(const txn *t, int64_t pid, int16_t epoch) {
    return t->epoch < 0 || pid == t->producer_id || (pid == t->prev_producer_id && epoch >= TXN_EPOCH_EXHAUSTED);
}

/* InitProducerId's own checks, before the coordinator is looked up (Kafka's handleInitProducerId). */
static int16_t init_request_check(srv *s, req *r, kp_str id, int32_t timeout_ms, int64_t expected_pid,
                                  int16_t expected_epoch) {
    if (id.len <= 0) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "the transactional id is empty");
        return KERR_INVALID_REQUEST;
    }
    if (timeout_ms <= 0 || timeout_ms > s->cfg->transaction_max_timeout_ms) {
        req_log_refusal(r, KERR_INVALID_TRANSACTION_TIMEOUT,
                        "transactional id %.*s: transaction.timeout.ms=%d is outside (0, transaction.max.timeout.ms=%lld]",
                        id.len, id.p, timeout_ms, (long long)s->cfg->transaction_max_timeout_ms);
        return KERR_INVALID_TRANSACTION_TIMEOUT;
    }
    if ((expected_pid < 0) != (expected_epoch < 0)) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "transactional id %.*s: producer id %lld and epoch %d: give both "
                        "or neither", id.len, id.p, (long long)expected_pid, expected_epoch);
        return KERR_INVALID_REQUEST;
    }
    return 0;
}

/*
 * Whether the id may start a new epoch now (Kafka's prepareInitProducerIdTransit): the producer
 * it names, no decision being written, no open transaction (which is fenced and aborted, and the
 * client retries), the epoch it names. *retry: the request repeats a bump already done, whose
 * answer was lost; it gets that answer again.
 */
static int16_t init_transit_check(srv *s, req *r, txn *t, int64_t expected_pid, int16_t expected_epoch,
                                  bool *retry) {
    *retry = false;
    bool expected = expected_pid >= 0;
    if (expected && !expected_producer_ok(t, expected_pid, expected_epoch)) {
        req_log_refusal(r, txn_fenced_code(r), "transactional id %s: producer id %lld is not the id's (%lld): fenced",
                        t->id, (long long)expected_pid, (long long)t->producer_id);
        return txn_fenced_code(r);
    }
    if (txn_is_prepare(t->state)) {
        req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s is %s: its markers are being written; "
                        "retry", t->id, txn_state_name(t->state));
        return KERR_CONCURRENT_TRANSACTIONS;
    }
    if (t->state == TS_ONGOING) {
        /* a new producer of the id: the old one is fenced and its transaction aborted; the client retries */
        log_info("transactional id %s: InitProducerId while a transaction is open: fencing producer id %lld epoch %d "
                 "and aborting its transaction", t->id, (long long)t->producer_id, t->epoch);
        txn_fence_and_abort(s, t);
        req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s: its open transaction is being "
                        "aborted (the previous producer is fenced); retry", t->id);
        return KERR_CONCURRENT_TRANSACTIONS;
    }
    if (expected && t->epoch >= 0 && expected_epoch != t->epoch) {
        if (expected_epoch == t->last_epoch) { /* a retry of a bump whose answer was lost */
            *retry = true;
            return 0;
        }
        req_log_refusal(r, txn_fenced_code(r), "transactional id %s: epoch %d is neither the current %d nor the "
                        "previous %d: fenced", t->id, expected_epoch, t->epoch, t->last_epoch);
        return txn_fenced_code(r);
    }
    return 0;
}

/*
 * The next epoch, or a new producer id once the epoch is exhausted (Kafka's
 * prepareIncrementProducerEpoch and prepareProducerIdRotation), and the id Empty, stored.
 * expected: the request named the producer it had (KIP-360), so a retry can be recognised.
 */
static void start_new_epoch(srv *s, txn *t, bool expected, int32_t timeout_ms) {
    if (t->epoch >= TXN_EPOCH_EXHAUSTED) {
        t->prev_producer_id = t->producer_id;
        t->producer_id = txn_next_producer_id(s);
        /* Kafka's prepareProducerIdRotation(recordLastEpoch): a retry (old id, old epoch) gets this answer again */
        t->last_epoch = expected ? t->epoch : -1;
        t->epoch = 0;
    } else {
        t->last_epoch = expected ? t->epoch : -1;
        t->epoch++;
    }
    t->timeout_ms = timeout_ms;
    txn_set_state(t, TS_EMPTY);
    t->start_ms = -1;
    t->update_ms = clk_now_ms();
    txn_drop_members(s, t);
    txn_store(s, t);
}

/* Kafka's answer once producer ids are exhausted (ProducerIdControlManager): UNKNOWN_SERVER_ERROR */
static int16_t no_producer_id(req *r, kp_str id) {
    req_log_refusal(r, KERR_UNKNOWN_SERVER_ERROR, "transactional id %.*s: no producer id left to give", id.len, id.p);
    return KERR_UNKNOWN_SERVER_ERROR;
}

int16_t txn_init_producer_id(srv *s, req *r, kp_str id, int32_t timeout_ms, int64_t expected_pid,
                             int16_t expected_epoch, int64_t *pid, int16_t *epoch) {
    *pid = -1;
    *epoch = -1;
    int16_t code = init_request_check(s, r, id, timeout_ms, expected_pid, expected_epoch);
    if (code) return code;
    /* the request is checked before the coordinator is looked up, as Kafka: every node answers 42 or 50 */
    code = txn_check_coordinator(s, r, id);
    if (code) return code;
    txn *t = txn_find(s, id.p, (size_t)id.len);
    if (!t) {
        int64_t pid0 = txn_next_producer_id(s);
        if (pid0 < 0) return no_producer_id(r, id);
        t = txn_new(s, id.p, (size_t)id.len);
        t->producer_id = pid0;
        t->timeout_ms = timeout_ms;
    }
    bool retry;
    code = init_transit_check(s, r, t, expected_pid, expected_epoch, &retry);
    if (code) return code;
    if (!retry && t->epoch >= TXN_EPOCH_EXHAUSTED && txn_producer_ids_exhausted(s)) return no_producer_id(r, id);
    if (!retry) {
        start_new_epoch(s, t, expected_pid >= 0, timeout_ms);
        log_info("transactional id %s: producer id %lld epoch %d (transaction.timeout.ms=%d)", t->id,
                 (long long)t->producer_id, t->epoch, timeout_ms);
    }
    *pid = t->producer_id;
    *epoch = t->epoch;
    return 0;
}

int16_t txn_check_producer(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, txn **out) {
    *out = NULL;
    if (id.len <= 0) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "the transactional id is empty");
        return KERR_INVALID_REQUEST;
    }
    int16_t code = txn_check_coordinator(s, r, id);
    if (code) return code;
    txn *t = txn_find(s, id.p, (size_t)id.len);
    if (!t || t->producer_id != pid) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_ID_MAPPING, "transactional id %.*s: %s producer id %lld",
                        id.len, id.p, t ? "it does not have" : "unknown (no InitProducerId), so it has no",
                        (long long)pid);
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (epoch != t->epoch) {
        req_log_refusal(r, txn_fenced_code(r), "transactional id %s: producer epoch %d, the id's is %d: fenced", t->id,
                        epoch, t->epoch);
        return txn_fenced_code(r);
    }
    *out = t;
    return 0;
}

/* Ongoing from now: the timeout counts from the first partition or group added. */
void txn_begin(srv *s, txn *t) {
    if (t->state == TS_ONGOING) return;
    txn_set_state(t, TS_ONGOING);
    t->start_ms = clk_now_ms();
    s->metrics.txn_begun++;
}

int16_t txn_add_partitions(srv *s, req *r, txn *t, const txn_partition *parts, int n, bool verify_only) {
    if (txn_is_prepare(t->state)) {
        req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s is %s; retry", t->id,
                        txn_state_name(t->state));
        return KERR_CONCURRENT_TRANSACTIONS;
    }
    if (verify_only) return 0; /* the caller checks membership partition by partition (txn_has_partition) */
    bool all = t->state == TS_ONGOING;
    for (int i = 0; all && i < n; i++) all = txn_has_partition(t, parts[i].topic_id, parts[i].partition);
    if (all) return 0;
    txn_begin(s, t);
    /* the version the id's client speaks, as Kafka records it: AddPartitionsToTxn v5 is a V2 broker's */
    t->client_tv = r->hdr.api_key == KP_API_ADD_PARTITIONS_TO_TXN && r->hdr.api_version > 4 ? 2 : 0;
    for (int i = 0; i < n; i++) {
        if (txn_has_partition(t, parts[i].topic_id, parts[i].partition)) continue; /* stored already */
        txn_part_add(t, parts[i].topic_id, parts[i].partition);
    }
    t->update_ms = clk_now_ms();
    txn_store(s, t); /* with the partitions */
    return 0;
}

bool txn_has_partition(const txn *t, int64_t topic_id, int32_t partition) {
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i].topic_id == topic_id && t->parts[i].partition == partition) return true;
    return false;
}

bool txn_has_group(const txn *t, const char *group, size_t len) {
    for (int i = 0; i < t->ngroups; i++)
        if (strlen(t->groups[i]) == len && memcmp(t->groups[i], group, len) == 0) return true;
    return false;
}

int16_t txn_add_group(srv *s, req *r, txn *t, kp_str group_id) {
    if (txn_is_prepare(t->state)) {
        req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s is %s; retry", t->id,
                        txn_state_name(t->state));
        return KERR_CONCURRENT_TRANSACTIONS;
    }
    size_t len = group_id.len > 0 ? (size_t)group_id.len : 0;
    if (t->state == TS_ONGOING && txn_has_group(t, group_id.p, len)) return 0;
    txn_begin(s, t);
    t->client_tv = 0; /* AddOffsetsToTxn: a V1 client (Kafka's handleAddOffsetsToTxnRequest passes TV_0) */
    char *g = xstrndup(group_id.p ? group_id.p : "", len);
    txn_group_add(t, g);
    if (stor_txn_group_add(s->st, t->id, g) != 0) txn_storage_failed(s, "adding a group", t->id);
    free(g);
    t->update_ms = clk_now_ms();
    txn_store(s, t);
    return 0;
}

int16_t txn_end(srv *s, req *r, txn *t, bool commit) {
    const char *want = commit ? "commit" : "abort";
    switch (t->state) {
    case TS_ONGOING:
        t->client_tv = 0; /* EndTxn up to v4: the epoch stays */
        txn_decide(s, t, commit);
        return 0;
    case TS_COMPLETE_COMMIT:
    case TS_COMPLETE_ABORT:
        if ((t->state == TS_COMPLETE_COMMIT) == commit) return 0; /* a retry of what is done */
        break;
    case TS_PREPARE_COMMIT:
    case TS_PREPARE_ABORT:
        if ((t->state == TS_PREPARE_COMMIT) == commit) {
            req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s: the %s is being completed; retry",
                            t->id, want);
            return KERR_CONCURRENT_TRANSACTIONS;
        }
        break;
    default:
        break;
    }
    req_log_refusal(r, KERR_INVALID_TXN_STATE, "transactional id %s: EndTxn %s in state %s (%s)", t->id, want,
                    txn_state_name(t->state),
                    t->state == TS_EMPTY ? "no partition or group was added since the last transaction ended"
                                         : "the transaction was decided the other way");
    return KERR_INVALID_TXN_STATE;
}

/*
 * Why a transactional write may not go on: not added (or not ongoing) is INVALID_TXN_STATE for
 * older versions, TRANSACTION_ABORTABLE from Produce v11 / TxnOffsetCommit v4 (Kafka's generic
 * error mapping); markers being written is NOT_ENOUGH_REPLICAS, which clients retry.
 */
static int16_t verify_state(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, txn **out) {
    *out = NULL;
    txn *t = id.len > 0 ? txn_find(s, id.p, (size_t)id.len) : NULL;
    if (!t || t->producer_id != pid) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_ID_MAPPING, "transactional id %.*s does not have producer id %lld",
                        id.len > 0 ? id.len : 0, id.p, (long long)pid);
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (epoch != t->epoch) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_EPOCH, "transactional id %s: producer epoch %d, the id's is %d: "
                        "fenced", t->id, epoch, t->epoch);
        return KERR_INVALID_PRODUCER_EPOCH;
    }
    if (txn_is_prepare(t->state)) {
        req_log_refusal(r, KERR_NOT_ENOUGH_REPLICAS, "transactional id %s is %s; retry", t->id,
                        txn_state_name(t->state));
        return KERR_NOT_ENOUGH_REPLICAS;
    }
    *out = t;
    return 0;
}

static int16_t not_added(const req *r) {
    int16_t k = r->hdr.api_key, v = r->hdr.api_version;
    return (k == KP_API_PRODUCE && v >= 11) || (k == KP_API_TXN_OFFSET_COMMIT && v >= 4) ? KERR_TRANSACTION_ABORTABLE
                                                                                           : KERR_INVALID_TXN_STATE;
}

int16_t txn_verify_produce(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, int64_t topic_id, int32_t partition) {
    txn *t;
    if (r->hdr.api_version >= 12) { /* transactions V2: the broker adds the partition (txn_v2.c) */
        txn_partition part = {topic_id, partition};
        return txn_v2_add(s, r, id, pid, epoch, &part, KP_STR_NULL, &t);
    }
    int16_t code = verify_state(s, r, id, pid, epoch, &t);
    if (code) return code;
    if (t->state == TS_ONGOING && txn_has_partition(t, topic_id, partition)) return 0;
    req_log_refusal(r, not_added(r), "transactional id %s (%s): the partition was not added to the transaction "
                    "(AddPartitionsToTxn) before this transactional batch", t->id, txn_state_name(t->state));
    return not_added(r);
}

int16_t txn_verify_offsets(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, kp_str group_id, txn **out) {
    if (r->hdr.api_version >= 5) return txn_v2_add(s, r, id, pid, epoch, NULL, group_id, out); /* V2: adds the group */
    int16_t code = verify_state(s, r, id, pid, epoch, out);
    if (code) return code == KERR_NOT_ENOUGH_REPLICAS ? KERR_COORDINATOR_NOT_AVAILABLE : code;
    txn *t = *out;
    size_t len = group_id.len > 0 ? (size_t)group_id.len : 0;
    if (t->state == TS_ONGOING && txn_has_group(t, group_id.p, len)) return 0;
    *out = NULL;
    req_log_refusal(r, not_added(r), "transactional id %s (%s): group %.*s was not added to the transaction "
                    "(AddOffsetsToTxn) before TxnOffsetCommit", t->id, txn_state_name(t->state), (int)len,
                    group_id.p);
    return not_added(r);
}

void txn_offset_put(srv *s, txn *t, const char *group, const char *topic, int32_t partition, int64_t offset,
                    int32_t leader_epoch, kp_str metadata) {
    txn_offset *o = txn_offset_slot(t, group, topic, partition);
    o->offset = offset;
    o->leader_epoch = leader_epoch;
    free(o->metadata);
    if (metadata.len < 0) metadata = (kp_str){"", 0};
    o->metadata = kp_str_dup(metadata);
    o->metadata_len = metadata.len;
    o->commit_ms = clk_now_ms();
    o->superseded = false;
    stor_offset so = {group, topic, partition, offset, leader_epoch, o->metadata, o->metadata_len, o->commit_ms, -1};
    if (stor_txn_offset_put(s->st, t->id, t->producer_id, &so) != 0) txn_storage_failed(s, "storing an offset", t->id);
}

typedef struct offset_query {
    const char *group, *topic;
    size_t topic_len;
    int32_t partition;
    bool found;
    srv *s;
} offset_query;

static bool match(const txn_offset *o, const offset_query *q) {
    return o->partition == q->partition && strcmp(o->group, q->group) == 0 && strlen(o->topic) == q->topic_len &&
           memcmp(o->topic, q->topic, q->topic_len) == 0;
}

static bool pending_one(void *ctx, txn *t) {
    offset_query *q = ctx;
    if (t->state == TS_EMPTY || t->state == TS_COMPLETE_ABORT || t->state == TS_COMPLETE_COMMIT) return true;
    /* superseded ones too: a later plain commit decides what COMMIT keeps, not whether the offset is stable
     * (Kafka's hasPendingTransactionalOffsets) */
    for (int i = 0; i < t->noffsets; i++)
        if (match(&t->offsets[i], q)) {
            q->found = true;
            return false;
        }
    return true;
}

bool txn_offset_pending(srv *s, const char *group, const char *topic, size_t topic_len, int32_t partition) {
    offset_query q = {group, topic, topic_len, partition, false, s};
    txn_each(s, pending_one, &q);
    return q.found;
}

static bool supersede_one(void *ctx, txn *t) {
    offset_query *q = ctx;
    for (int i = 0; i < t->noffsets; i++)
        if (match(&t->offsets[i], q)) {
            t->offsets[i].superseded = true;
            q->found = true;
        }
    return true;
}

void txn_offsets_supersede(srv *s, const char *group, const char *topic, int32_t partition) {
    offset_query q = {group, topic, strlen(topic), partition, false, s};
    txn_each(s, supersede_one, &q);
    if (q.found && stor_txn_offsets_supersede(s->st, group, topic, partition) != 0)
        txn_storage_failed(s, "superseding offsets", group);
}

/* What leaves every transaction: offsets matching each filter given (NULL, -1: any); a deleted topic's partitions. */
typedef struct forget_query {
    const char *group, *topic;
    int32_t partition;
    int64_t topic_id;   /* >= 0: the topic was deleted */
    srv *s;
} forget_query;

static bool forget_one(void *ctx, txn *t) {
    forget_query *q = ctx;
    int k = 0;
    for (int i = 0; i < t->noffsets; i++) {
        txn_offset *o = &t->offsets[i];
        if ((!q->group || strcmp(o->group, q->group) == 0) && (!q->topic || strcmp(o->topic, q->topic) == 0) &&
            (q->partition < 0 || o->partition == q->partition)) {
            free(o->group);
            free(o->topic);
            free(o->metadata);
            continue;
        }
        t->offsets[k++] = *o;
    }
    t->noffsets = k;
    k = 0;
    for (int i = 0; i < t->nparts; i++)
        if (t->parts[i].topic_id != q->topic_id) t->parts[k++] = t->parts[i];
    /*
     * The stored list loses them in the storage transaction that deletes the topic (the caller
     * deletes it next): topic ids are rowids, which a topic created later may reuse.
     */
    if (k != t->nparts) {
        t->nparts = k;
        txn_store(q->s, t);
    }
    return true;
}

void txn_forget_group(srv *s, const char *group) {
    forget_query q = {group, NULL, -1, -1, s};
    txn_each(s, forget_one, &q);
    if (stor_txn_offsets_delete_group(s->st, group) < 0) txn_storage_failed(s, "dropping a group's offsets", group);
}

void txn_forget_topic(srv *s, int64_t topic_id, const char *topic) {
    forget_query q = {NULL, topic, -1, topic_id, s};
    txn_each(s, forget_one, &q);
    if (stor_txn_offsets_delete_topic(s->st, topic) < 0) txn_storage_failed(s, "dropping a topic's offsets", topic);
}

void txn_forget_offset(srv *s, const char *group, const char *topic, int32_t partition) {
    forget_query q = {group, topic, partition, -1, s};
    txn_each(s, forget_one, &q);
    if (stor_txn_offset_delete(s->st, group, topic, partition) < 0) txn_storage_failed(s, "dropping an offset", group);
}
