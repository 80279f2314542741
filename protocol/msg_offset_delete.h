/* OffsetDelete (API key 47): request and response structs, versions 0. */
#ifndef KP_MSG_OFFSET_DELETE_H
#define KP_MSG_OFFSET_DELETE_H

#include "kp.h"

typedef struct kp_offset_delete_request_partition {
    int32_t partition_index;
} kp_offset_delete_request_partition;
extern const kp_schema kp_offset_delete_request_partition_schema;

typedef struct kp_offset_delete_request_topic {
    kp_str name;
    KP_ARR(struct kp_offset_delete_request_partition) partitions;
} kp_offset_delete_request_topic;
extern const kp_schema kp_offset_delete_request_topic_schema;

typedef struct kp_offset_delete_request {
    kp_str group_id;
    KP_ARR(struct kp_offset_delete_request_topic) topics;
} kp_offset_delete_request;
extern const kp_schema kp_offset_delete_request_schema;

typedef struct kp_offset_delete_response_partition {
    int32_t partition_index;
    int16_t error_code;
} kp_offset_delete_response_partition;
extern const kp_schema kp_offset_delete_response_partition_schema;

typedef struct kp_offset_delete_response_topic {
    kp_str name;
    KP_ARR(struct kp_offset_delete_response_partition) partitions;
} kp_offset_delete_response_topic;
extern const kp_schema kp_offset_delete_response_topic_schema;

typedef struct kp_offset_delete_response {
    int16_t error_code;
    int32_t throttle_time_ms;
    KP_ARR(struct kp_offset_delete_response_topic) topics;
} kp_offset_delete_response;
extern const kp_schema kp_offset_delete_response_schema;

extern const kp_msg kp_msg_offset_delete;

#endif
