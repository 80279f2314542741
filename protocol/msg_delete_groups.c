/* DeleteGroups (API key 42) wire description; fields carry the versions they exist in. */
#include "msg_delete_groups.h"

static const kp_field kp_delete_groups_request_fields[] = {
    KFP(KP_STR, kp_delete_groups_request, groups_names, 0, KV_MAX),
};
KSCHEMA(kp_delete_groups_request_schema, kp_delete_groups_request, kp_delete_groups_request_fields);

static const kp_field kp_delete_groups_deletable_group_result_fields[] = {
    KF(KP_STR, kp_delete_groups_deletable_group_result, group_id, 0, KV_MAX),
    KF(KP_I16, kp_delete_groups_deletable_group_result, error_code, 0, KV_MAX),
};
KSCHEMA(kp_delete_groups_deletable_group_result_schema, kp_delete_groups_deletable_group_result, kp_delete_groups_deletable_group_result_fields);

static const kp_field kp_delete_groups_response_fields[] = {
    KF(KP_I32, kp_delete_groups_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_delete_groups_response, results, 0, KV_MAX, kp_delete_groups_deletable_group_result_schema),
};
KSCHEMA(kp_delete_groups_response_schema, kp_delete_groups_response, kp_delete_groups_response_fields);

const kp_msg kp_msg_delete_groups = {KP_MSG_ID(DELETE_GROUPS), 0, 2, 2, &kp_delete_groups_request_schema, &kp_delete_groups_response_schema};
