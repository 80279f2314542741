/* JoinGroup (API key 11) wire description; fields carry the versions they exist in. */
#include "msg_join_group.h"

static const kp_field kp_join_group_request_protocol_fields[] = {
    KF(KP_STR, kp_join_group_request_protocol, name, 0, KV_MAX),
    KF(KP_BYTES, kp_join_group_request_protocol, metadata, 0, KV_MAX),
};
KSCHEMA(kp_join_group_request_protocol_schema, kp_join_group_request_protocol, kp_join_group_request_protocol_fields);

static const kp_field kp_join_group_request_fields[] = {
    KF(KP_STR, kp_join_group_request, group_id, 0, KV_MAX),
    KF(KP_I32, kp_join_group_request, session_timeout_ms, 0, KV_MAX),
    KF(KP_I32, kp_join_group_request, rebalance_timeout_ms, 1, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_join_group_request, member_id, 0, KV_MAX),
    KF(KP_STR, kp_join_group_request, group_instance_id, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KF(KP_STR, kp_join_group_request, protocol_type, 0, KV_MAX),
    KFA(kp_join_group_request, protocols, 0, KV_MAX, kp_join_group_request_protocol_schema),
    KF(KP_STR, kp_join_group_request, reason, 8, KV_MAX, .null_from = 8, .dflt = -1),
};
KSCHEMA(kp_join_group_request_schema, kp_join_group_request, kp_join_group_request_fields);

static const kp_field kp_join_group_response_member_fields[] = {
    KF(KP_STR, kp_join_group_response_member, member_id, 0, KV_MAX),
    KF(KP_STR, kp_join_group_response_member, group_instance_id, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KF(KP_BYTES, kp_join_group_response_member, metadata, 0, KV_MAX),
};
KSCHEMA(kp_join_group_response_member_schema, kp_join_group_response_member, kp_join_group_response_member_fields);

static const kp_field kp_join_group_response_fields[] = {
    KF(KP_I32, kp_join_group_response, throttle_time_ms, 2, KV_MAX),
    KF(KP_I16, kp_join_group_response, error_code, 0, KV_MAX),
    KF(KP_I32, kp_join_group_response, generation_id, 0, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_join_group_response, protocol_type, 7, KV_MAX, .null_from = 7, .dflt = -1),
    KF(KP_STR, kp_join_group_response, protocol_name, 0, KV_MAX, .null_from = 7),
    KF(KP_STR, kp_join_group_response, leader, 0, KV_MAX),
    KF(KP_BOOL, kp_join_group_response, skip_assignment, 9, KV_MAX, .dflt = 0),
    KF(KP_STR, kp_join_group_response, member_id, 0, KV_MAX),
    KFA(kp_join_group_response, members, 0, KV_MAX, kp_join_group_response_member_schema),
};
KSCHEMA(kp_join_group_response_schema, kp_join_group_response, kp_join_group_response_fields);

const kp_msg kp_msg_join_group = {KP_MSG_ID(JOIN_GROUP), 0, 9, 6, &kp_join_group_request_schema, &kp_join_group_response_schema};
