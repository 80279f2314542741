/* DescribeCluster (API key 60) wire description; fields carry the versions they exist in. */
#include "msg_describe_cluster.h"

static const kp_field kp_describe_cluster_request_fields[] = {
    KF(KP_BOOL, kp_describe_cluster_request, include_cluster_authorized_operations, 0, KV_MAX),
    KF(KP_I8, kp_describe_cluster_request, endpoint_type, 1, KV_MAX, .dflt = 1),
};
KSCHEMA(kp_describe_cluster_request_schema, kp_describe_cluster_request, kp_describe_cluster_request_fields);

static const kp_field kp_describe_cluster_broker_fields[] = {
    KF(KP_I32, kp_describe_cluster_broker, broker_id, 0, KV_MAX),
    KF(KP_STR, kp_describe_cluster_broker, host, 0, KV_MAX),
    KF(KP_I32, kp_describe_cluster_broker, port, 0, KV_MAX),
    KF(KP_STR, kp_describe_cluster_broker, rack, 0, KV_MAX, .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_describe_cluster_broker_schema, kp_describe_cluster_broker, kp_describe_cluster_broker_fields);

static const kp_field kp_describe_cluster_response_fields[] = {
    KF(KP_I32, kp_describe_cluster_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_describe_cluster_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_describe_cluster_response, error_message, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_I8, kp_describe_cluster_response, endpoint_type, 1, KV_MAX, .dflt = 1),
    KF(KP_STR, kp_describe_cluster_response, cluster_id, 0, KV_MAX),
    KF(KP_I32, kp_describe_cluster_response, controller_id, 0, KV_MAX, .dflt = -1),
    KFA(kp_describe_cluster_response, brokers, 0, KV_MAX, kp_describe_cluster_broker_schema),
    KF(KP_I32, kp_describe_cluster_response, cluster_authorized_operations, 0, KV_MAX, .dflt = -2147483648),
};
KSCHEMA(kp_describe_cluster_response_schema, kp_describe_cluster_response, kp_describe_cluster_response_fields);

const kp_msg kp_msg_describe_cluster = {KP_MSG_ID(DESCRIBE_CLUSTER), 0, 1, 0, &kp_describe_cluster_request_schema, &kp_describe_cluster_response_schema};
