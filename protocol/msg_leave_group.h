/* LeaveGroup (API key 13): request and response structs, versions 0-5. */
#ifndef KP_MSG_LEAVE_GROUP_H
#define KP_MSG_LEAVE_GROUP_H

#include "kp.h"

typedef struct kp_leave_group_member_identity {
    kp_str member_id;
    kp_str group_instance_id;
    kp_str reason;
} kp_leave_group_member_identity;
extern const kp_schema kp_leave_group_member_identity_schema;

typedef struct kp_leave_group_request {
    kp_str group_id;
    kp_str member_id;
    KP_ARR(struct kp_leave_group_member_identity) members;
} kp_leave_group_request;
extern const kp_schema kp_leave_group_request_schema;

typedef struct kp_leave_group_member_response {
    kp_str member_id;
    kp_str group_instance_id;
    int16_t error_code;
} kp_leave_group_member_response;
extern const kp_schema kp_leave_group_member_response_schema;

typedef struct kp_leave_group_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    KP_ARR(struct kp_leave_group_member_response) members;
} kp_leave_group_response;
extern const kp_schema kp_leave_group_response_schema;

extern const kp_msg kp_msg_leave_group;

#endif
