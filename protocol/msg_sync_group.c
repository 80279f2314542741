/* SyncGroup (API key 14) wire description; fields carry the versions they exist in. */
#include "msg_sync_group.h"

static const kp_field kp_sync_group_request_assignment_fields[] = {
    KF(KP_STR, kp_sync_group_request_assignment, member_id, 0, KV_MAX),
    KF(KP_BYTES, kp_sync_group_request_assignment, assignment, 0, KV_MAX),
};
KSCHEMA(kp_sync_group_request_assignment_schema, kp_sync_group_request_assignment, kp_sync_group_request_assignment_fields);

static const kp_field kp_sync_group_request_fields[] = {
    KF(KP_STR, kp_sync_group_request, group_id, 0, KV_MAX),
    KF(KP_I32, kp_sync_group_request, generation_id, 0, KV_MAX),
    KF(KP_STR, kp_sync_group_request, member_id, 0, KV_MAX),
    KF(KP_STR, kp_sync_group_request, group_instance_id, 3, KV_MAX, .null_from = 3, .dflt = -1),
    KF(KP_STR, kp_sync_group_request, protocol_type, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KF(KP_STR, kp_sync_group_request, protocol_name, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KFA(kp_sync_group_request, assignments, 0, KV_MAX, kp_sync_group_request_assignment_schema),
};
KSCHEMA(kp_sync_group_request_schema, kp_sync_group_request, kp_sync_group_request_fields);

static const kp_field kp_sync_group_response_fields[] = {
    KF(KP_I32, kp_sync_group_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_sync_group_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_sync_group_response, protocol_type, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KF(KP_STR, kp_sync_group_response, protocol_name, 5, KV_MAX, .null_from = 5, .dflt = -1),
    KF(KP_BYTES, kp_sync_group_response, assignment, 0, KV_MAX),
};
KSCHEMA(kp_sync_group_response_schema, kp_sync_group_response, kp_sync_group_response_fields);

const kp_msg kp_msg_sync_group = {KP_MSG_ID(SYNC_GROUP), 0, 5, 4, &kp_sync_group_request_schema, &kp_sync_group_response_schema};
