/*
 * TxnOffsetCommit (API key 28): request and response structs, versions 0-5. v6 (KIP-1319)
 * names topics by id instead of name and is not described: a broker that does not
 * advertise it never receives it.
 */
#ifndef KP_MSG_TXN_OFFSET_COMMIT_H
#define KP_MSG_TXN_OFFSET_COMMIT_H

#include "kp.h"

typedef struct kp_txn_offset_commit_request_partition {
    int32_t partition_index;
    int64_t committed_offset;
    int32_t committed_leader_epoch;
    kp_str committed_metadata;
} kp_txn_offset_commit_request_partition;
extern const kp_schema kp_txn_offset_commit_request_partition_schema;

typedef struct kp_txn_offset_commit_request_topic {
    kp_str name;
    KP_ARR(struct kp_txn_offset_commit_request_partition) partitions;
} kp_txn_offset_commit_request_topic;
extern const kp_schema kp_txn_offset_commit_request_topic_schema;

typedef struct kp_txn_offset_commit_request {
    kp_str transactional_id;
    kp_str group_id;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t generation_id_or_member_epoch;
    kp_str member_id;
    kp_str group_instance_id;
    KP_ARR(struct kp_txn_offset_commit_request_topic) topics;
} kp_txn_offset_commit_request;
extern const kp_schema kp_txn_offset_commit_request_schema;

typedef struct kp_txn_offset_commit_response_partition {
    int32_t partition_index;
    int16_t error_code;
} kp_txn_offset_commit_response_partition;
extern const kp_schema kp_txn_offset_commit_response_partition_schema;

typedef struct kp_txn_offset_commit_response_topic {
    kp_str name;
    KP_ARR(struct kp_txn_offset_commit_response_partition) partitions;
} kp_txn_offset_commit_response_topic;
extern const kp_schema kp_txn_offset_commit_response_topic_schema;

typedef struct kp_txn_offset_commit_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_txn_offset_commit_response_topic) topics;
} kp_txn_offset_commit_response;
extern const kp_schema kp_txn_offset_commit_response_schema;

extern const kp_msg kp_msg_txn_offset_commit;

#endif
