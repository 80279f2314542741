/* ListOffsets (API key 2): request and response structs, versions 0-10. */
#ifndef KP_MSG_LIST_OFFSETS_H
#define KP_MSG_LIST_OFFSETS_H

#include "kp.h"

typedef struct kp_list_offsets_partition {
    int32_t partition_index;
    int32_t current_leader_epoch;
    int64_t timestamp;
    int32_t max_num_offsets;
} kp_list_offsets_partition;
extern const kp_schema kp_list_offsets_partition_schema;

typedef struct kp_list_offsets_topic {
    kp_str name;
    KP_ARR(struct kp_list_offsets_partition) partitions;
} kp_list_offsets_topic;
extern const kp_schema kp_list_offsets_topic_schema;

typedef struct kp_list_offsets_request {
    int32_t replica_id;
    int8_t isolation_level;
    KP_ARR(struct kp_list_offsets_topic) topics;
    int32_t timeout_ms;
} kp_list_offsets_request;
extern const kp_schema kp_list_offsets_request_schema;

typedef struct kp_list_offsets_partition_response {
    int32_t partition_index;
    int16_t error_code;
    KP_ARR(int64_t) old_style_offsets;
    int64_t timestamp;
    int64_t offset;
    int32_t leader_epoch;
} kp_list_offsets_partition_response;
extern const kp_schema kp_list_offsets_partition_response_schema;

typedef struct kp_list_offsets_topic_response {
    kp_str name;
    KP_ARR(struct kp_list_offsets_partition_response) partitions;
} kp_list_offsets_topic_response;
extern const kp_schema kp_list_offsets_topic_response_schema;

typedef struct kp_list_offsets_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_list_offsets_topic_response) topics;
} kp_list_offsets_response;
extern const kp_schema kp_list_offsets_response_schema;

extern const kp_msg kp_msg_list_offsets;

#endif
