/*
 * Transactions V2 (KIP-890 part 2), as Apache Kafka 4.0's TransactionCoordinator serves a client
 * that sends EndTxn v5, Produce v12 and TxnOffsetCommit v5 (the versions it uses once a broker
 * finalizes transaction.version 2): every EndTxn, commit or abort, bumps the producer epoch and
 * the markers carry the bumped one, so a batch of the ended transaction that arrives late is
 * refused (INVALID_PRODUCER_EPOCH) instead of joining the next one; EndTxn answers the producer
 * id and epoch to go on with, a new producer id with epoch 0 once the epoch is exhausted
 * (KAFKA-18660); the writes add their partition or group themselves (KAFKA-14563: Kafka's broker
 * sends AddPartitionsToTxn v5 to the coordinator, which is in-process here). Kafka's
 * endTransaction for TV2 (KAFKA-17898's retry rules) and handleAddPartitionsToTransaction are
 * followed check by check. A client on older versions keeps version 1 (txn_ops.c).
 */
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "kp_mem.h"
#include "log.h"
#include "srv.h"
#include "txn_int.h"

/*
 * PrepareCommit/PrepareAbort from Ongoing (commit or abort) or, for an abort with nothing added,
 * from Empty, CompleteCommit or CompleteAbort (the client cannot know whether a produce it gave
 * up on added a partition); the epoch one more, or a new producer id waiting for the markers.
 */
static int16_t decide_v2(srv *s, req *r, txn *t, bool commit) {
    int64_t next = -1;
    if (t->epoch >= TXN_EPOCH_EXHAUSTED) {
        next = txn_next_producer_id(s);
        if (next < 0) {
            req_log_refusal(r, KERR_UNKNOWN_SERVER_ERROR, "transactional id %s: epoch %d is exhausted and no producer "
                            "id is left to give", t->id, t->epoch);
            return KERR_UNKNOWN_SERVER_ERROR;
        }
    }
    if (t->state != TS_ONGOING) t->start_ms = clk_now_ms(); /* Kafka's noPartitionAdded: the abort is its own start */
    t->last_epoch = t->epoch;
    t->epoch++;
    t->next_producer_id = next;
    t->client_tv = 2;
    txn_decide(s, t, commit);
    return 0;
}

/*
 * Kafka's retry rules (TransactionCoordinator.endTransaction for TV2): the same epoch is the next
 * EndTxn; the epoch just before the bump, or the old producer id at the exhausted epoch after a
 * rotation, is a retry of the one that was answered (or lost).
 */
int16_t txn_end_v2(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, bool commit, int64_t *out_pid,
                   int16_t *out_epoch) {
    *out_pid = -1;
    *out_epoch = -1;
    const char *want = commit ? "commit" : "abort";
    if (id.len <= 0) {
        req_log_refusal(r, KERR_INVALID_REQUEST, "the transactional id is empty");
        return KERR_INVALID_REQUEST;
    }
    int16_t code = txn_check_coordinator(s, r, id);
    if (code) return code;
    txn *t = txn_find(s, id.p, (size_t)id.len);
    if (!t) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_ID_MAPPING, "transactional id %.*s is unknown (no InitProducerId)",
                        id.len, id.p);
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    }
    bool retry_overflow = t->prev_producer_id == pid && epoch == TXN_EPOCH_EXHAUSTED && t->epoch == 0;
    bool retry_bump = t->producer_id == pid && t->epoch == epoch + 1;
    bool valid;
    switch (t->state) {
    case TS_PREPARE_COMMIT:
    case TS_PREPARE_ABORT:
        valid = retry_bump;
        break;
    case TS_COMPLETE_COMMIT:
    case TS_COMPLETE_ABORT:
        valid = retry_bump || retry_overflow || epoch == t->epoch;
        break;
    default:
        valid = epoch == t->epoch;
        break;
    }
    if (t->producer_id != pid && !retry_overflow) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_ID_MAPPING, "transactional id %s does not have producer id %lld "
                        "(it has %lld)", t->id, (long long)pid, (long long)t->producer_id);
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (!valid) {
        req_log_refusal(r, KERR_PRODUCER_FENCED, "transactional id %s (%s): producer epoch %d, the id's is %d and "
                        "it is not a retry of the last EndTxn: fenced", t->id, txn_state_name(t->state), epoch,
                        t->epoch);
        return KERR_PRODUCER_FENCED;
    }
    bool retry = retry_bump || retry_overflow;
    bool invalid = false;
    switch (t->state) {
    case TS_ONGOING:
        code = decide_v2(s, r, t, commit);
        break;
    case TS_COMPLETE_COMMIT:
        if (retry) invalid = !commit;          /* a commit retried: done; an abort of it: too late */
        else if (commit) invalid = true;       /* nothing was added since */
        else code = decide_v2(s, r, t, false); /* an abort with nothing added bumps the epoch */
        break;
    case TS_COMPLETE_ABORT:
        if (commit) invalid = true;
        else if (!retry) code = decide_v2(s, r, t, false);
        break;
    case TS_EMPTY:
        if (commit) invalid = true;
        else code = decide_v2(s, r, t, false);
        break;
    case TS_PREPARE_COMMIT:
    case TS_PREPARE_ABORT:
        if ((t->state == TS_PREPARE_COMMIT) != commit) {
            invalid = true;
            break;
        }
        req_log_refusal(r, KERR_CONCURRENT_TRANSACTIONS, "transactional id %s: the %s is being completed; retry",
                        t->id, want);
        return KERR_CONCURRENT_TRANSACTIONS;
    default:
        invalid = true;
        break;
    }
    if (invalid) {
        req_log_refusal(r, KERR_INVALID_TXN_STATE, "transactional id %s: EndTxn %s (transactions V2, epoch %d%s) in "
                        "state %s", t->id, want, epoch, retry ? ", a retry" : "", txn_state_name(t->state));
        return KERR_INVALID_TXN_STATE;
    }
    if (code) return code;
    /* the id to go on with: a rotation still waiting for its markers is answered already (KAFKA-18660) */
    *out_pid = t->next_producer_id >= 0 ? t->next_producer_id : t->producer_id;
    *out_epoch = t->next_producer_id >= 0 ? 0 : t->epoch;
    return 0;
}

/*
 * Kafka's handleAddPartitionsToTransaction for a produce or an offset commit that adds its own
 * partition (or group): a decision being written first (CONCURRENT_TRANSACTIONS, which the
 * callers turn into their retriable codes; first, so that a producer already on the id a
 * rotation gives is not fenced by it), then the producer id and epoch, then the addition, which
 * begins a transaction from Empty, CompleteCommit or CompleteAbort. Errors come as the write
 * answers them (as_write), logged.
 */
/*
 * The coordinator's code as the write sees it: Kafka's AddPartitionsToTxnManager turns
 * PRODUCER_FENCED into INVALID_PRODUCER_EPOCH, and the produce path answers a retriable
 * CONCURRENT_TRANSACTIONS as NOT_ENOUGH_REPLICAS (ReplicaManager), which the group coordinator
 * turns into COORDINATOR_NOT_AVAILABLE for TxnOffsetCommit.
 */
static int16_t as_write(const req *r, int16_t code) {
    if (code == KERR_PRODUCER_FENCED) return KERR_INVALID_PRODUCER_EPOCH;
    if (code == KERR_CONCURRENT_TRANSACTIONS)
        return r->hdr.api_key == KP_API_PRODUCE ? KERR_NOT_ENOUGH_REPLICAS : KERR_COORDINATOR_NOT_AVAILABLE;
    return code;
}

/* Kafka's add.partitions.to.txn.retry.backoff.max.ms default: how long its broker retries an addition refused with CONCURRENT_TRANSACTIONS */
#define ADD_RETRY_MAX_MS 100

int16_t txn_v2_add(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, const txn_partition *part, kp_str group,
                   txn **out) {
    *out = NULL;
    txn *t = id.len > 0 ? txn_find(s, id.p, (size_t)id.len) : NULL;
    /* the producer id and epoch the last EndTxn answered (a rotation's, if the epoch was exhausted) */
    bool next = t && (t->next_producer_id >= 0 ? pid == t->next_producer_id && epoch == 0
                                               : pid == t->producer_id && epoch == t->epoch);
    if (next && txn_is_prepare(t->state) &&
        (int64_t)t->nparts * s->cfg->transaction_marker_delay_ms <= ADD_RETRY_MAX_MS) {
        /*
         * The next transaction's first write while the last one's markers are still being written
         * (transaction.marker.delay.ms): Kafka's broker retries the addition for up to
         * add.partitions.to.txn.retry.backoff.max.ms (100) before answering (KAFKA-18654); the
         * markers left would be written by then, so they are now, and the write goes on.
         */
        log_info("transactional id %s: a write of its next transaction while %s: its %d remaining marker(s) "
                 "written now, as Kafka's broker would wait for them", t->id, txn_state_name(t->state), t->nparts);
        txn_complete(s, t, t->state == TS_PREPARE_COMMIT);
    }
    if (t && txn_is_prepare(t->state)) {
        req_log_refusal(r, as_write(r, KERR_CONCURRENT_TRANSACTIONS), "transactional id %s is %s (the coordinator's "
                        "CONCURRENT_TRANSACTIONS); retry", t->id, txn_state_name(t->state));
        return as_write(r, KERR_CONCURRENT_TRANSACTIONS);
    }
    if (!t || t->producer_id != pid) {
        req_log_refusal(r, KERR_INVALID_PRODUCER_ID_MAPPING, "transactional id %.*s does not have producer id %lld",
                        id.len > 0 ? id.len : 0, id.p, (long long)pid);
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    }
    if (epoch != t->epoch) {
        req_log_refusal(r, as_write(r, KERR_PRODUCER_FENCED), "transactional id %s: producer epoch %d, the id's is %d "
                        "(a write of an ended transaction, or of a fenced producer): fenced", t->id, epoch, t->epoch);
        return as_write(r, KERR_PRODUCER_FENCED);
    }
    *out = t;
    size_t glen = group.len > 0 ? (size_t)group.len : 0;
    if (t->state == TS_ONGOING &&
        (part ? txn_has_partition(t, part->topic_id, part->partition) : txn_has_group(t, group.p, glen)))
        return 0;
    txn_begin(s, t);
    t->client_tv = 2;
    if (part) {
        txn_part_add(t, part->topic_id, part->partition); /* stored with the row below */
    } else {
        char *g = xstrndup(group.p ? group.p : "", glen);
        txn_group_add(t, g);
        if (stor_txn_group_add(s->st, t->id, g) != 0) txn_storage_failed(s, "adding a group", t->id);
        free(g);
    }
    t->update_ms = clk_now_ms();
    txn_store(s, t);
    return 0;
}
