/* CreatePartitions (API key 37): request and response structs, versions 0-3. */
#ifndef KP_MSG_CREATE_PARTITIONS_H
#define KP_MSG_CREATE_PARTITIONS_H

#include "kp.h"

typedef struct kp_create_partitions_assignment {
    KP_ARR(int32_t) broker_ids;
} kp_create_partitions_assignment;
extern const kp_schema kp_create_partitions_assignment_schema;

typedef struct kp_create_partitions_topic {
    kp_str name;
    int32_t count;
    KP_ARR(struct kp_create_partitions_assignment) assignments;
} kp_create_partitions_topic;
extern const kp_schema kp_create_partitions_topic_schema;

typedef struct kp_create_partitions_request {
    KP_ARR(struct kp_create_partitions_topic) topics;
    int32_t timeout_ms;
    bool validate_only;
} kp_create_partitions_request;
extern const kp_schema kp_create_partitions_request_schema;

typedef struct kp_create_partitions_topic_result {
    kp_str name;
    int16_t error_code;
    kp_str error_message;
} kp_create_partitions_topic_result;
extern const kp_schema kp_create_partitions_topic_result_schema;

typedef struct kp_create_partitions_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_create_partitions_topic_result) results;
} kp_create_partitions_response;
extern const kp_schema kp_create_partitions_response_schema;

extern const kp_msg kp_msg_create_partitions;

#endif
