/* OffsetForLeaderEpoch (API key 23): request and response structs, versions 0-4. */
#ifndef KP_MSG_OFFSET_FOR_LEADER_EPOCH_H
#define KP_MSG_OFFSET_FOR_LEADER_EPOCH_H

#include "kp.h"

typedef struct kp_offset_for_leader_epoch_offset_for_leader_partition {
    int32_t partition;
    int32_t current_leader_epoch;
    int32_t leader_epoch;
} kp_offset_for_leader_epoch_offset_for_leader_partition;
extern const kp_schema kp_offset_for_leader_epoch_offset_for_leader_partition_schema;

typedef struct kp_offset_for_leader_epoch_offset_for_leader_topic {
    kp_str topic;
    KP_ARR(struct kp_offset_for_leader_epoch_offset_for_leader_partition) partitions;
} kp_offset_for_leader_epoch_offset_for_leader_topic;
extern const kp_schema kp_offset_for_leader_epoch_offset_for_leader_topic_schema;

typedef struct kp_offset_for_leader_epoch_request {
    int32_t replica_id;
    KP_ARR(struct kp_offset_for_leader_epoch_offset_for_leader_topic) topics;
} kp_offset_for_leader_epoch_request;
extern const kp_schema kp_offset_for_leader_epoch_request_schema;

typedef struct kp_offset_for_leader_epoch_epoch_end_offset {
    int16_t error_code;
    int32_t partition;
    int32_t leader_epoch;
    int64_t end_offset;
} kp_offset_for_leader_epoch_epoch_end_offset;
extern const kp_schema kp_offset_for_leader_epoch_epoch_end_offset_schema;

typedef struct kp_offset_for_leader_epoch_offset_for_leader_topic_result {
    kp_str topic;
    KP_ARR(struct kp_offset_for_leader_epoch_epoch_end_offset) partitions;
} kp_offset_for_leader_epoch_offset_for_leader_topic_result;
extern const kp_schema kp_offset_for_leader_epoch_offset_for_leader_topic_result_schema;

typedef struct kp_offset_for_leader_epoch_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_offset_for_leader_epoch_offset_for_leader_topic_result) topics;
} kp_offset_for_leader_epoch_response;
extern const kp_schema kp_offset_for_leader_epoch_response_schema;

extern const kp_msg kp_msg_offset_for_leader_epoch;

#endif
