/* ListGroups (API key 16) wire description; fields carry the versions they exist in. */
#include "msg_list_groups.h"

static const kp_field kp_list_groups_request_fields[] = {
    KFP(KP_STR, kp_list_groups_request, states_filter, 4, KV_MAX),
    KFP(KP_STR, kp_list_groups_request, types_filter, 5, KV_MAX),
};
KSCHEMA(kp_list_groups_request_schema, kp_list_groups_request, kp_list_groups_request_fields);

static const kp_field kp_list_groups_listed_group_fields[] = {
    KF(KP_STR, kp_list_groups_listed_group, group_id, 0, KV_MAX),
    KF(KP_STR, kp_list_groups_listed_group, protocol_type, 0, KV_MAX),
    KF(KP_STR, kp_list_groups_listed_group, group_state, 4, KV_MAX),
    KF(KP_STR, kp_list_groups_listed_group, group_type, 5, KV_MAX),
};
KSCHEMA(kp_list_groups_listed_group_schema, kp_list_groups_listed_group, kp_list_groups_listed_group_fields);

static const kp_field kp_list_groups_response_fields[] = {
    KF(KP_I32, kp_list_groups_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_list_groups_response, error_code, 0, KV_MAX),
    KFA(kp_list_groups_response, groups, 0, KV_MAX, kp_list_groups_listed_group_schema),
};
KSCHEMA(kp_list_groups_response_schema, kp_list_groups_response, kp_list_groups_response_fields);

const kp_msg kp_msg_list_groups = {KP_MSG_ID(LIST_GROUPS), 0, 5, 3, &kp_list_groups_request_schema, &kp_list_groups_response_schema};
