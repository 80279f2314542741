/* Metadata (API key 3) wire description; fields carry the versions they exist in. */
#include "msg_metadata.h"

static const kp_field kp_metadata_request_topic_fields[] = {
    KF(KP_UUID, kp_metadata_request_topic, topic_id, 10, KV_MAX),
    KF(KP_STR, kp_metadata_request_topic, name, 0, KV_MAX, .null_from = 10),
};
KSCHEMA(kp_metadata_request_topic_schema, kp_metadata_request_topic, kp_metadata_request_topic_fields);

static const kp_field kp_metadata_request_fields[] = {
    KFA(kp_metadata_request, topics, 0, KV_MAX, kp_metadata_request_topic_schema, .null_from = 1),
    KF(KP_BOOL, kp_metadata_request, allow_auto_topic_creation, 4, KV_MAX, .dflt = 1),
    KF(KP_BOOL, kp_metadata_request, include_cluster_authorized_operations, 8, 10),
    KF(KP_BOOL, kp_metadata_request, include_topic_authorized_operations, 8, KV_MAX),
};
KSCHEMA(kp_metadata_request_schema, kp_metadata_request, kp_metadata_request_fields);

static const kp_field kp_metadata_response_broker_fields[] = {
    KF(KP_I32, kp_metadata_response_broker, node_id, 0, KV_MAX),
    KF(KP_STR, kp_metadata_response_broker, host, 0, KV_MAX),
    KF(KP_I32, kp_metadata_response_broker, port, 0, KV_MAX),
    KF(KP_STR, kp_metadata_response_broker, rack, 1, KV_MAX, .null_from = 1, .dflt = -1),
};
KSCHEMA(kp_metadata_response_broker_schema, kp_metadata_response_broker, kp_metadata_response_broker_fields);

static const kp_field kp_metadata_response_partition_fields[] = {
    KF(KP_I16, kp_metadata_response_partition, error_code, 0, KV_MAX),
    KF(KP_I32, kp_metadata_response_partition, partition_index, 0, KV_MAX),
    KF(KP_I32, kp_metadata_response_partition, leader_id, 0, KV_MAX),
    KF(KP_I32, kp_metadata_response_partition, leader_epoch, 7, KV_MAX, .dflt = -1),
    KFP(KP_I32, kp_metadata_response_partition, replica_nodes, 0, KV_MAX),
    KFP(KP_I32, kp_metadata_response_partition, isr_nodes, 0, KV_MAX),
    KFP(KP_I32, kp_metadata_response_partition, offline_replicas, 5, KV_MAX),
};
KSCHEMA(kp_metadata_response_partition_schema, kp_metadata_response_partition, kp_metadata_response_partition_fields);

static const kp_field kp_metadata_response_topic_fields[] = {
    KF(KP_I16, kp_metadata_response_topic, error_code, 0, KV_MAX),
    KF(KP_STR, kp_metadata_response_topic, name, 0, KV_MAX, .null_from = 12),
    KF(KP_UUID, kp_metadata_response_topic, topic_id, 10, KV_MAX),
    KF(KP_BOOL, kp_metadata_response_topic, is_internal, 1, KV_MAX, .dflt = 0),
    KFA(kp_metadata_response_topic, partitions, 0, KV_MAX, kp_metadata_response_partition_schema),
    KF(KP_I32, kp_metadata_response_topic, topic_authorized_operations, 8, KV_MAX, .dflt = -2147483648),
};
KSCHEMA(kp_metadata_response_topic_schema, kp_metadata_response_topic, kp_metadata_response_topic_fields);

static const kp_field kp_metadata_response_fields[] = {
    KF(KP_I32, kp_metadata_response, throttle_time_ms, 3, KV_MAX),
    KFA(kp_metadata_response, brokers, 0, KV_MAX, kp_metadata_response_broker_schema),
    KF(KP_STR, kp_metadata_response, cluster_id, 2, KV_MAX, .null_from = 2, .dflt = -1),
    KF(KP_I32, kp_metadata_response, controller_id, 1, KV_MAX, .dflt = -1),
    KFA(kp_metadata_response, topics, 0, KV_MAX, kp_metadata_response_topic_schema),
    KF(KP_I32, kp_metadata_response, cluster_authorized_operations, 8, 10, .dflt = -2147483648),
};
KSCHEMA(kp_metadata_response_schema, kp_metadata_response, kp_metadata_response_fields);

const kp_msg kp_msg_metadata = {KP_MSG_ID(METADATA), 0, 12, 9, &kp_metadata_request_schema, &kp_metadata_response_schema};
