/* Heartbeat (API key 12) wire description; fields carry the versions they exist in. */
#include "msg_heartbeat.h"

static const kp_field kp_heartbeat_request_fields[] = {
    KF(KP_STR, kp_heartbeat_request, group_id, 0, KV_MAX),
    KF(KP_I32, kp_heartbeat_request, generation_id, 0, KV_MAX),
    KF(KP_STR, kp_heartbeat_request, member_id, 0, KV_MAX),
    KF(KP_STR, kp_heartbeat_request, group_instance_id, 3, KV_MAX, .null_from = 3, .dflt = -1),
};
KSCHEMA(kp_heartbeat_request_schema, kp_heartbeat_request, kp_heartbeat_request_fields);

static const kp_field kp_heartbeat_response_fields[] = {
    KF(KP_I32, kp_heartbeat_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_heartbeat_response, error_code, 0, KV_MAX),
};
KSCHEMA(kp_heartbeat_response_schema, kp_heartbeat_response, kp_heartbeat_response_fields);

const kp_msg kp_msg_heartbeat = {KP_MSG_ID(HEARTBEAT), 0, 4, 4, &kp_heartbeat_request_schema, &kp_heartbeat_response_schema};
