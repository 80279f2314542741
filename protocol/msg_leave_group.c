/* LeaveGroup (API key 13) wire description; fields carry the versions they exist in. */
#include "msg_leave_group.h"

static const kp_field kp_leave_group_member_identity_fields[] = {
    KF(KP_STR, kp_leave_group_member_identity, member_id, 3, KV_MAX),
    KF(KP_STR, kp_leave_group_member_identity, group_instance_id, 3, KV_MAX, .null_from = 3, .dflt = -1),
    KF(KP_STR, kp_leave_group_member_identity, reason, 5, KV_MAX, .null_from = 5, .dflt = -1),
};
KSCHEMA(kp_leave_group_member_identity_schema, kp_leave_group_member_identity, kp_leave_group_member_identity_fields);

static const kp_field kp_leave_group_request_fields[] = {
    KF(KP_STR, kp_leave_group_request, group_id, 0, KV_MAX),
    KF(KP_STR, kp_leave_group_request, member_id, 0, 2),
    KFA(kp_leave_group_request, members, 3, KV_MAX, kp_leave_group_member_identity_schema),
};
KSCHEMA(kp_leave_group_request_schema, kp_leave_group_request, kp_leave_group_request_fields);

static const kp_field kp_leave_group_member_response_fields[] = {
    KF(KP_STR, kp_leave_group_member_response, member_id, 3, KV_MAX),
    KF(KP_STR, kp_leave_group_member_response, group_instance_id, 3, KV_MAX, .null_from = 3),
    KF(KP_I16, kp_leave_group_member_response, error_code, 3, KV_MAX),
};
KSCHEMA(kp_leave_group_member_response_schema, kp_leave_group_member_response, kp_leave_group_member_response_fields);

static const kp_field kp_leave_group_response_fields[] = {
    KF(KP_I32, kp_leave_group_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_leave_group_response, error_code, 0, KV_MAX),
    KFA(kp_leave_group_response, members, 3, KV_MAX, kp_leave_group_member_response_schema),
};
KSCHEMA(kp_leave_group_response_schema, kp_leave_group_response, kp_leave_group_response_fields);

const kp_msg kp_msg_leave_group = {KP_MSG_ID(LEAVE_GROUP), 0, 5, 4, &kp_leave_group_request_schema, &kp_leave_group_response_schema};
