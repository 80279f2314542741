/*
 * txn: the transaction coordinator, as Apache Kafka's TransactionCoordinator (KIP-98, KIP-360,
 * KIP-447; transaction version 1, and version 2 of KIP-890 part 2 for a client sending EndTxn
 * v5, Produce v12 and TxnOffsetCommit v5, txn_v2.c). Each transactional id has a producer id
 * and epoch and one state machine (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit, CompleteAbort),
 * every transition stored before the request that caused it is answered. EndTxn writes the
 * markers itself (there are no other brokers to send WriteTxnMarkers to): with
 * transaction.marker.delay.ms 0, the decision, every marker, the transactional offsets and the
 * completion go into one storage commit, so a kill -9 leaves a transaction either open or
 * complete (PrepareCommit/PrepareAbort is then not written at all: the completion would replace
 * it in that commit); with a delay, the Prepare state is stored first and a restart finishes
 * what it started.
 *
 * The handlers decode and authorize; every state check and its error code lives here.
 */
#ifndef TXN_H
#define TXN_H

#include <stdbool.h>
#include <stdint.h>

#include "net/req.h"

typedef enum txn_state {
    TS_EMPTY,
    TS_ONGOING,
    TS_PREPARE_COMMIT,
    TS_PREPARE_ABORT,
    TS_COMPLETE_COMMIT,
    TS_COMPLETE_ABORT,
    TS_DEAD,
} txn_state;

typedef struct txn_partition {
    int64_t topic_id;   /* storage id: partitions move in memory, topics may be deleted */
    int32_t partition;
} txn_partition;

/* A TxnOffsetCommit waiting for the transaction's outcome. */
typedef struct txn_offset {
    char *group, *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;    /* NUL-terminated after its metadata_len bytes, which may hold NULs */
    int32_t metadata_len;
    int64_t commit_ms;
    bool superseded;   /* a plain OffsetCommit of the same partition came later: it wins */
} txn_offset;

typedef struct txn {
    char *id;
    int64_t producer_id, prev_producer_id;
    int16_t epoch, last_epoch;
    int16_t client_tv;          /* the transaction version its client used last (2: Produce v12, EndTxn v5, ...) */
    int64_t next_producer_id;   /* TV2: the exhausted epoch's next producer id, taken once the markers are written */
    int32_t timeout_ms;
    txn_state state;
    int64_t start_ms, update_ms;   /* wall clock, as Kafka keeps them (time down counts) */
    txn_partition *parts;
    int nparts, cap_parts;
    char **groups;
    int ngroups;
    txn_offset *offsets;
    int noffsets, cap_offsets;
    struct txn *next;
} txn;

typedef struct txn_coord txn_coord;

/* Start-up: load every id, then finish what a PrepareCommit/PrepareAbort left (before listening). */
int txn_init(srv *s);
void txn_close(srv *s);   /* stops the marker timer (shutdown) */
void txn_free(srv *s);
/* Drop every transactional id (admin reset): open transactions are aborted first. */
void txn_reset(srv *s);
/* Housekeeping: abort transactions past their timeout, forget expired ids. */
void txn_tick(srv *s);

txn *txn_find(srv *s, const char *id, size_t len);
/* The coordinator epoch markers carry: one more at every start, stored. */
int32_t txn_coordinator_epoch(const srv *s);
const char *txn_state_name(txn_state st);
/*
 * Whether a transactional id may go from one state to another: Kafka's table of valid previous
 * states (TransactionState.validPreviousStates, transaction-coordinator in 4.x); every
 * transition asserts it.
 */
bool txn_transition_valid(txn_state from, txn_state to);
/* Every id, in no particular order, until fn returns false. */
void txn_each(srv *s, bool (*fn)(void *ctx, txn *t), void *ctx);

/* NOT_COORDINATOR (logged) when another node coordinates the id, as groups are spread. */
int16_t txn_check_coordinator(srv *s, req *r, kp_str id);

/*
 * A producer id no producer had, from a block stored ahead (producer.id.block.end), so a
 * restart never hands out one again even if nothing was written with it. -1 once the ids are
 * exhausted: clients choose the producer ids in their batches and in InitProducerId, and the
 * next id follows the largest seen, so one client can bring it near INT64_MAX. Kafka answers
 * UNKNOWN_SERVER_ERROR then ("Exhausted all producerIds", ProducerIdControlManager).
 */
int64_t txn_next_producer_id(srv *s);

/*
 * InitProducerId with a transactional id: the id's producer id and its next epoch (fencing any
 * older producer of the id, whose open transaction is aborted), or an error code, logged.
 */
int16_t txn_init_producer_id(srv *s, req *r, kp_str id, int32_t timeout_ms, int64_t expected_pid,
                             int16_t expected_epoch, int64_t *pid, int16_t *epoch);
/*
 * The common checks of AddPartitionsToTxn, AddOffsetsToTxn and EndTxn, in Kafka's order: an
 * empty id (42), this node not its coordinator (16), the producer id (49) and epoch (90/47).
 */
int16_t txn_check_producer(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, txn **out);
/* AddPartitionsToTxn (after txn_check_producer): the partitions join the transaction. */
int16_t txn_add_partitions(srv *s, req *r, txn *t, const txn_partition *parts, int n, bool verify_only);
bool txn_has_partition(const txn *t, int64_t topic_id, int32_t partition);
/* AddOffsetsToTxn: the group joins the transaction. */
int16_t txn_add_group(srv *s, req *r, txn *t, kp_str group_id);
/* EndTxn up to v4 (transaction version 1). */
int16_t txn_end(srv *s, req *r, txn *t, bool commit);
/*
 * EndTxn v5+ (transactions V2, KIP-890 part 2): the id's checks, its retries (the epoch before the
 * bump, or the producer id before a rotation), the decision with the epoch bumped, so the markers
 * fence every batch of the ending transaction that arrives late; an abort with nothing added
 * bumps too. out_pid and out_epoch: what the producer uses next, the new producer id with epoch 0
 * once the epoch was exhausted (Short.MAX_VALUE - 1, KAFKA-18660); -1 on an error.
 */
int16_t txn_end_v2(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, bool commit, int64_t *out_pid,
                   int16_t *out_epoch);

/*
 * Produce of a transactional batch: is the partition in the producer's ongoing transaction?
 * From Produce v12 (transactions V2) the partition is added instead, as Kafka's broker does
 * through AddPartitionsToTxn with verify_only false. Returns 0 or Kafka's error for the produce
 * version (logged).
 */
int16_t txn_verify_produce(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, int64_t topic_id, int32_t partition);
/* TxnOffsetCommit: the group must have been added (from v5 it is added); the offset waits for the outcome. */
int16_t txn_verify_offsets(srv *s, req *r, kp_str id, int64_t pid, int16_t epoch, kp_str group_id, txn **out);
void txn_offset_put(srv *s, txn *t, const char *group, const char *topic, int32_t partition, int64_t offset,
                    int32_t leader_epoch, kp_str metadata);

/* OffsetFetch require_stable: is an offset of (group, topic, partition) waiting for a transaction? */
bool txn_offset_pending(srv *s, const char *group, const char *topic, size_t topic_len, int32_t partition);
/* A plain OffsetCommit of (group, topic, partition): pending transactional offsets of it lose. */
void txn_offsets_supersede(srv *s, const char *group, const char *topic, int32_t partition);
/* DeleteGroups and DeleteTopics: their pending offsets and partitions leave every transaction. */
void txn_forget_group(srv *s, const char *group);
void txn_forget_topic(srv *s, int64_t topic_id, const char *topic);
/* OffsetDelete: a partition's pending offsets in the group go too (Kafka's tombstone removes them). */
void txn_forget_offset(srv *s, const char *group, const char *topic, int32_t partition);

#endif
