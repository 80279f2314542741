/* DescribeGroups (API key 15): request and response structs, versions 0-5. */
#ifndef KP_MSG_DESCRIBE_GROUPS_H
#define KP_MSG_DESCRIBE_GROUPS_H

#include "kp.h"

typedef struct kp_describe_groups_request {
    KP_ARR(kp_str) groups;
    bool include_authorized_operations;
} kp_describe_groups_request;
extern const kp_schema kp_describe_groups_request_schema;

typedef struct kp_describe_groups_described_group_member {
    kp_str member_id;
    kp_str group_instance_id;
    kp_str client_id;
    kp_str client_host;
    kp_bytes member_metadata;
    kp_bytes member_assignment;
} kp_describe_groups_described_group_member;
extern const kp_schema kp_describe_groups_described_group_member_schema;

typedef struct kp_describe_groups_described_group {
    int16_t error_code;
    kp_str group_id;
    kp_str group_state;
    kp_str protocol_type;
    kp_str protocol_data;
    KP_ARR(struct kp_describe_groups_described_group_member) members;
    int32_t authorized_operations;
} kp_describe_groups_described_group;
extern const kp_schema kp_describe_groups_described_group_schema;

typedef struct kp_describe_groups_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_describe_groups_described_group) groups;
} kp_describe_groups_response;
extern const kp_schema kp_describe_groups_response_schema;

extern const kp_msg kp_msg_describe_groups;

#endif
