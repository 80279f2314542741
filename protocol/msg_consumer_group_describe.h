/* ConsumerGroupDescribe (API key 69, KIP-848): request and response structs, versions 0-1. */
#ifndef KP_MSG_CONSUMER_GROUP_DESCRIBE_H
#define KP_MSG_CONSUMER_GROUP_DESCRIBE_H

#include "kp.h"

typedef struct kp_consumer_group_describe_request {
    KP_ARR(kp_str) group_ids;
    bool include_authorized_operations;
} kp_consumer_group_describe_request;
extern const kp_schema kp_consumer_group_describe_request_schema;

typedef struct kp_cgd_topic_partitions {
    kp_uuid topic_id;
    kp_str topic_name;
    KP_ARR(int32_t) partitions;
} kp_cgd_topic_partitions;
extern const kp_schema kp_cgd_topic_partitions_schema;

typedef struct kp_cgd_assignment {
    KP_ARR(struct kp_cgd_topic_partitions) topic_partitions;
} kp_cgd_assignment;
extern const kp_schema kp_cgd_assignment_schema;

typedef struct kp_cgd_member {
    kp_str member_id;
    kp_str instance_id;
    kp_str rack_id;
    int32_t member_epoch;
    kp_str client_id;
    kp_str client_host;
    KP_ARR(kp_str) subscribed_topic_names;
    kp_str subscribed_topic_regex;
    kp_cgd_assignment assignment;
    kp_cgd_assignment target_assignment;
    int8_t member_type;
} kp_cgd_member;
extern const kp_schema kp_cgd_member_schema;

typedef struct kp_cgd_group {
    int16_t error_code;
    kp_str error_message;
    kp_str group_id;
    kp_str group_state;
    int32_t group_epoch;
    int32_t assignment_epoch;
    kp_str assignor_name;
    KP_ARR(struct kp_cgd_member) members;
    int32_t authorized_operations;
} kp_cgd_group;
extern const kp_schema kp_cgd_group_schema;

typedef struct kp_consumer_group_describe_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_cgd_group) groups;
} kp_consumer_group_describe_response;
extern const kp_schema kp_consumer_group_describe_response_schema;

extern const kp_msg kp_msg_consumer_group_describe;

#endif
