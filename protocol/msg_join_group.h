/* JoinGroup (API key 11): request and response structs, versions 0-9. */
#ifndef KP_MSG_JOIN_GROUP_H
#define KP_MSG_JOIN_GROUP_H

#include "kp.h"

typedef struct kp_join_group_request_protocol {
    kp_str name;
    kp_bytes metadata;
} kp_join_group_request_protocol;
extern const kp_schema kp_join_group_request_protocol_schema;

typedef struct kp_join_group_request {
    kp_str group_id;
    int32_t session_timeout_ms;
    int32_t rebalance_timeout_ms;
    kp_str member_id;
    kp_str group_instance_id;
    kp_str protocol_type;
    KP_ARR(struct kp_join_group_request_protocol) protocols;
    kp_str reason;
} kp_join_group_request;
extern const kp_schema kp_join_group_request_schema;

typedef struct kp_join_group_response_member {
    kp_str member_id;
    kp_str group_instance_id;
    kp_bytes metadata;
} kp_join_group_response_member;
extern const kp_schema kp_join_group_response_member_schema;

typedef struct kp_join_group_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    int32_t generation_id;
    kp_str protocol_type;
    kp_str protocol_name;
    kp_str leader;
    bool skip_assignment;
    kp_str member_id;
    KP_ARR(struct kp_join_group_response_member) members;
} kp_join_group_response;
extern const kp_schema kp_join_group_response_schema;

extern const kp_msg kp_msg_join_group;

#endif
