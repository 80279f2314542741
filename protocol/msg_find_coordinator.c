/* FindCoordinator (API key 10) wire description; fields carry the versions they exist in. */
#include "msg_find_coordinator.h"

static const kp_field kp_find_coordinator_request_fields[] = {
    KF(KP_STR, kp_find_coordinator_request, key, 0, 3),
    KF(KP_I8, kp_find_coordinator_request, key_type, 1, KV_MAX),
    KFP(KP_STR, kp_find_coordinator_request, coordinator_keys, 4, KV_MAX),
};
KSCHEMA(kp_find_coordinator_request_schema, kp_find_coordinator_request, kp_find_coordinator_request_fields);

static const kp_field kp_find_coordinator_coordinator_fields[] = {
    KF(KP_STR, kp_find_coordinator_coordinator, key, 4, KV_MAX),
    KF(KP_I32, kp_find_coordinator_coordinator, node_id, 4, KV_MAX),
    KF(KP_STR, kp_find_coordinator_coordinator, host, 4, KV_MAX),
    KF(KP_I32, kp_find_coordinator_coordinator, port, 4, KV_MAX),
    KF(KP_I16, kp_find_coordinator_coordinator, error_code, 4, KV_MAX),
    KF(KP_STR, kp_find_coordinator_coordinator, error_message, 4, KV_MAX, .null_from = 4),
};
KSCHEMA(kp_find_coordinator_coordinator_schema, kp_find_coordinator_coordinator, kp_find_coordinator_coordinator_fields);

static const kp_field kp_find_coordinator_response_fields[] = {
    KF(KP_I32, kp_find_coordinator_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_find_coordinator_response, error_code, 0, 3),
    KF(KP_STR, kp_find_coordinator_response, error_message, 1, 3, .null_from = 1),
    KF(KP_I32, kp_find_coordinator_response, node_id, 0, 3),
    KF(KP_STR, kp_find_coordinator_response, host, 0, 3),
    KF(KP_I32, kp_find_coordinator_response, port, 0, 3),
    KFA(kp_find_coordinator_response, coordinators, 4, KV_MAX, kp_find_coordinator_coordinator_schema),
};
KSCHEMA(kp_find_coordinator_response_schema, kp_find_coordinator_response, kp_find_coordinator_response_fields);

const kp_msg kp_msg_find_coordinator = {KP_MSG_ID(FIND_COORDINATOR), 0, 6, 3, &kp_find_coordinator_request_schema, &kp_find_coordinator_response_schema};
