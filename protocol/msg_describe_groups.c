/* DescribeGroups (API key 15) wire description; fields carry the versions they exist in. */
#include "msg_describe_groups.h"

static const kp_field kp_describe_groups_request_fields[] = {
    KFP(KP_STR, kp_describe_groups_request, groups, 0, KV_MAX),
    KF(KP_BOOL, kp_describe_groups_request, include_authorized_operations, 3, KV_MAX),
};
KSCHEMA(kp_describe_groups_request_schema, kp_describe_groups_request, kp_describe_groups_request_fields);

static const kp_field kp_describe_groups_described_group_member_fields[] = {
    KF(KP_STR, kp_describe_groups_described_group_member, member_id, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group_member, group_instance_id, 4, KV_MAX, .null_from = 4, .dflt = -1),
    KF(KP_STR, kp_describe_groups_described_group_member, client_id, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group_member, client_host, 0, KV_MAX),
    KF(KP_BYTES, kp_describe_groups_described_group_member, member_metadata, 0, KV_MAX),
    KF(KP_BYTES, kp_describe_groups_described_group_member, member_assignment, 0, KV_MAX),
};
KSCHEMA(kp_describe_groups_described_group_member_schema, kp_describe_groups_described_group_member, kp_describe_groups_described_group_member_fields);

static const kp_field kp_describe_groups_described_group_fields[] = {
    KF(KP_I16, kp_describe_groups_described_group, error_code, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group, group_id, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group, group_state, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group, protocol_type, 0, KV_MAX),
    KF(KP_STR, kp_describe_groups_described_group, protocol_data, 0, KV_MAX),
    KFA(kp_describe_groups_described_group, members, 0, KV_MAX, kp_describe_groups_described_group_member_schema),
    KF(KP_I32, kp_describe_groups_described_group, authorized_operations, 3, KV_MAX, .dflt = -2147483648),
};
KSCHEMA(kp_describe_groups_described_group_schema, kp_describe_groups_described_group, kp_describe_groups_described_group_fields);

static const kp_field kp_describe_groups_response_fields[] = {
    KF(KP_I32, kp_describe_groups_response, throttle_time_ms, 1, KV_MAX),
    KFA(kp_describe_groups_response, groups, 0, KV_MAX, kp_describe_groups_described_group_schema),
};
KSCHEMA(kp_describe_groups_response_schema, kp_describe_groups_response, kp_describe_groups_response_fields);

const kp_msg kp_msg_describe_groups = {KP_MSG_ID(DESCRIBE_GROUPS), 0, 5, 5, &kp_describe_groups_request_schema, &kp_describe_groups_response_schema};
