/* CreatePartitions (API key 37) wire description; fields carry the versions they exist in. */
#include "msg_create_partitions.h"

static const kp_field kp_create_partitions_assignment_fields[] = {
    KFP(KP_I32, kp_create_partitions_assignment, broker_ids, 0, KV_MAX),
};
KSCHEMA(kp_create_partitions_assignment_schema, kp_create_partitions_assignment, kp_create_partitions_assignment_fields);

static const kp_field kp_create_partitions_topic_fields[] = {
    KF(KP_STR, kp_create_partitions_topic, name, 0, KV_MAX),
    KF(KP_I32, kp_create_partitions_topic, count, 0, KV_MAX),
    KFA(kp_create_partitions_topic, assignments, 0, KV_MAX, kp_create_partitions_assignment_schema, .null_from = 0),
};
KSCHEMA(kp_create_partitions_topic_schema, kp_create_partitions_topic, kp_create_partitions_topic_fields);

static const kp_field kp_create_partitions_request_fields[] = {
    KFA(kp_create_partitions_request, topics, 0, KV_MAX, kp_create_partitions_topic_schema),
    KF(KP_I32, kp_create_partitions_request, timeout_ms, 0, KV_MAX),
    KF(KP_BOOL, kp_create_partitions_request, validate_only, 0, KV_MAX),
};
KSCHEMA(kp_create_partitions_request_schema, kp_create_partitions_request, kp_create_partitions_request_fields);

static const kp_field kp_create_partitions_topic_result_fields[] = {
    KF(KP_STR, kp_create_partitions_topic_result, name, 0, KV_MAX),
    KF(KP_I16, kp_create_partitions_topic_result, error_code, 0, KV_MAX),
    KF(KP_STR, kp_create_partitions_topic_result, error_message, 0, KV_MAX, .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_create_partitions_topic_result_schema, kp_create_partitions_topic_result, kp_create_partitions_topic_result_fields);

static const kp_field kp_create_partitions_response_fields[] = {
    KF(KP_I32, kp_create_partitions_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_create_partitions_response, results, 0, KV_MAX, kp_create_partitions_topic_result_schema),
};
KSCHEMA(kp_create_partitions_response_schema, kp_create_partitions_response, kp_create_partitions_response_fields);

const kp_msg kp_msg_create_partitions = {KP_MSG_ID(CREATE_PARTITIONS), 0, 3, 2, &kp_create_partitions_request_schema, &kp_create_partitions_response_schema};
