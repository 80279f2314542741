/* OffsetFetch (API key 9): request and response structs, versions 0-9. */
#ifndef KP_MSG_OFFSET_FETCH_H
#define KP_MSG_OFFSET_FETCH_H

#include "kp.h"

typedef struct kp_offset_fetch_request_topic {
    kp_str name;
    KP_ARR(int32_t) partition_indexes;
} kp_offset_fetch_request_topic;
extern const kp_schema kp_offset_fetch_request_topic_schema;

typedef struct kp_offset_fetch_request_topics {
    kp_str name;
    KP_ARR(int32_t) partition_indexes;
} kp_offset_fetch_request_topics;
extern const kp_schema kp_offset_fetch_request_topics_schema;

typedef struct kp_offset_fetch_request_group {
    kp_str group_id;
    kp_str member_id;
    int32_t member_epoch;
    KP_ARR(struct kp_offset_fetch_request_topics) topics;
} kp_offset_fetch_request_group;
extern const kp_schema kp_offset_fetch_request_group_schema;

typedef struct kp_offset_fetch_request {
    kp_str group_id;
    KP_ARR(struct kp_offset_fetch_request_topic) topics;
    KP_ARR(struct kp_offset_fetch_request_group) groups;
    bool require_stable;
} kp_offset_fetch_request;
extern const kp_schema kp_offset_fetch_request_schema;

typedef struct kp_offset_fetch_response_partition {
    int32_t partition_index;
    int64_t committed_offset;
    int32_t committed_leader_epoch;
    kp_str metadata;
    int16_t error_code;
} kp_offset_fetch_response_partition;
extern const kp_schema kp_offset_fetch_response_partition_schema;

typedef struct kp_offset_fetch_response_topic {
    kp_str name;
    KP_ARR(struct kp_offset_fetch_response_partition) partitions;
} kp_offset_fetch_response_topic;
extern const kp_schema kp_offset_fetch_response_topic_schema;

typedef struct kp_offset_fetch_response_partitions {
    int32_t partition_index;
    int64_t committed_offset;
    int32_t committed_leader_epoch;
    kp_str metadata;
    int16_t error_code;
} kp_offset_fetch_response_partitions;
extern const kp_schema kp_offset_fetch_response_partitions_schema;

typedef struct kp_offset_fetch_response_topics {
    kp_str name;
    KP_ARR(struct kp_offset_fetch_response_partitions) partitions;
} kp_offset_fetch_response_topics;
extern const kp_schema kp_offset_fetch_response_topics_schema;

typedef struct kp_offset_fetch_response_group {
    kp_str group_id;
    KP_ARR(struct kp_offset_fetch_response_topics) topics;
    int16_t error_code;
} kp_offset_fetch_response_group;
extern const kp_schema kp_offset_fetch_response_group_schema;

typedef struct kp_offset_fetch_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_offset_fetch_response_topic) topics;
    int16_t error_code;
    KP_ARR(struct kp_offset_fetch_response_group) groups;
} kp_offset_fetch_response;
extern const kp_schema kp_offset_fetch_response_schema;

extern const kp_msg kp_msg_offset_fetch;

#endif
