/* AddPartitionsToTxn (API key 24): request and response structs, versions 0-5. */
#ifndef KP_MSG_ADD_PARTITIONS_TO_TXN_H
#define KP_MSG_ADD_PARTITIONS_TO_TXN_H

#include "kp.h"

typedef struct kp_add_partitions_to_txn_topic {
    kp_str name;
    KP_ARR(int32_t) partitions;
} kp_add_partitions_to_txn_topic;
extern const kp_schema kp_add_partitions_to_txn_topic_schema;

typedef struct kp_add_partitions_to_txn_transaction {
    kp_str transactional_id;
    int64_t producer_id;
    int16_t producer_epoch;
    bool verify_only;
    KP_ARR(struct kp_add_partitions_to_txn_topic) topics;
} kp_add_partitions_to_txn_transaction;
extern const kp_schema kp_add_partitions_to_txn_transaction_schema;

/*
 * v4+ batches several transactions (brokers verifying for their producers); clients send
 * v0-3, one transaction, in the v3_and_below_* fields.
 */
typedef struct kp_add_partitions_to_txn_request {
    KP_ARR(struct kp_add_partitions_to_txn_transaction) transactions;
    kp_str v3_and_below_transactional_id;
    int64_t v3_and_below_producer_id;
    int16_t v3_and_below_producer_epoch;
    KP_ARR(struct kp_add_partitions_to_txn_topic) v3_and_below_topics;
} kp_add_partitions_to_txn_request;
extern const kp_schema kp_add_partitions_to_txn_request_schema;

typedef struct kp_add_partitions_to_txn_partition_result {
    int32_t partition_index;
    int16_t partition_error_code;
} kp_add_partitions_to_txn_partition_result;
extern const kp_schema kp_add_partitions_to_txn_partition_result_schema;

typedef struct kp_add_partitions_to_txn_topic_result {
    kp_str name;
    KP_ARR(struct kp_add_partitions_to_txn_partition_result) results_by_partition;
} kp_add_partitions_to_txn_topic_result;
extern const kp_schema kp_add_partitions_to_txn_topic_result_schema;

typedef struct kp_add_partitions_to_txn_result {
    kp_str transactional_id;
    KP_ARR(struct kp_add_partitions_to_txn_topic_result) topic_results;
} kp_add_partitions_to_txn_result;
extern const kp_schema kp_add_partitions_to_txn_result_schema;

typedef struct kp_add_partitions_to_txn_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    KP_ARR(struct kp_add_partitions_to_txn_result) results_by_transaction;
    KP_ARR(struct kp_add_partitions_to_txn_topic_result) results_by_topic_v3_and_below;
} kp_add_partitions_to_txn_response;
extern const kp_schema kp_add_partitions_to_txn_response_schema;

extern const kp_msg kp_msg_add_partitions_to_txn;

#endif
