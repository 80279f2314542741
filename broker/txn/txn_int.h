/* What the coordinator's files share; not for other subsystems. */
#ifndef TXN_INT_H
#define TXN_INT_H

#include <uv.h>

#include "txn.h"

#define TXN_BUCKETS 1024
/* Kafka's isEpochExhausted: the next bump would overflow, so the id gets a new producer id. */
#define TXN_EPOCH_EXHAUSTED (INT16_MAX - 1)

struct txn_coord {
    txn *buckets[TXN_BUCKETS];
    int count;
    int32_t epoch;               /* the coordinator epoch in markers: one more per start */
    int64_t pid_block_end;       /* producer ids below it may have been handed out */
    int64_t next_abort_check_ms, next_expire_check_ms;
    uv_timer_t *marker_timer;    /* transaction.marker.delay.ms > 0: writes the next marker */
};

txn *txn_new(srv *s, const char *id, size_t len);
/* No producer id is left to give (txn_next_producer_id would answer -1). */
bool txn_producer_ids_exhausted(const srv *s);
void txn_part_add(txn *t, int64_t topic_id, int32_t partition);
void txn_group_add(txn *t, const char *group_id);
/* The pending offset of (group, topic, partition), created empty if there is none. */
txn_offset *txn_offset_slot(txn *t, const char *group, const char *topic, int32_t partition);
void txn_clear_members(txn *t);
/*
 * txn_clear_members, and the stored groups and pending offsets removed too. Memory holds every
 * stored member (loaded at start, added to both, dropped from both), so an id with none in
 * memory has none stored and costs no look-up.
 */
void txn_drop_members(srv *s, txn *t);
/* The one way a running coordinator changes t->state (loading sets the stored state as it was). */
void txn_set_state(txn *t, txn_state st);
/*
 * A coordinator write storage refused: logged, and the broker stops (srv_fail_stop, exit 3) as a
 * failed commit of group or topic state does, since memory would be past storage; a restart
 * reloads. The caller goes on to the end of its step: nothing it does is stored or answered.
 */
void txn_storage_failed(srv *s, const char *what, const char *id);
/* Store the id's row (kind STOR_TXN_TXNS). */
void txn_store(srv *s, txn *t);
/* Store Prepare{Commit,Abort}, then complete now or (transaction.marker.delay.ms) marker by marker. */
void txn_decide(srv *s, txn *t, bool commit);
/* Write every remaining marker, settle the offsets and store Complete{Commit,Abort}. */
void txn_complete(srv *s, txn *t, bool commit);
/* Bump the epoch (the producer is fenced) and abort the ongoing transaction with it. */
void txn_fence_and_abort(srv *s, txn *t);
void txn_marker_timer_close(srv *s);
/* The request checks txn_ops.c has, for the other files of the coordinator. */
bool txn_is_prepare(txn_state st);
/* Ongoing from now: the timeout counts from the first partition or group added. */
void txn_begin(srv *s, txn *t);
bool txn_has_group(const txn *t, const char *group, size_t len);
/* PRODUCER_FENCED, or INVALID_PRODUCER_EPOCH for the versions that predate it. */
int16_t txn_fenced_code(const req *r);
/* Transactions V2 (txn_v2.c): a write that adds its own partition (part) or group (part NULL): Produce v12, TxnOffsetCommit v5. */
int16_t txn_v2_add(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, const txn_partition *part, kp_str group,
                   txn **out);


#endif
