/* Fetch (API key 1) wire description; fields carry the versions they exist in. */
#include "msg_fetch.h"

static const kp_field kp_fetch_replica_state_fields[] = {
    KF(KP_I32, kp_fetch_replica_state, replica_id, 15, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_fetch_replica_state, replica_epoch, 15, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_fetch_replica_state_schema, kp_fetch_replica_state, kp_fetch_replica_state_fields);

static const kp_field kp_fetch_partition_fields[] = {
    KF(KP_I32, kp_fetch_partition, partition, 0, KV_MAX),
    KF(KP_I32, kp_fetch_partition, current_leader_epoch, 9, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_fetch_partition, fetch_offset, 0, KV_MAX),
    KF(KP_I32, kp_fetch_partition, last_fetched_epoch, 12, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_fetch_partition, log_start_offset, 5, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_fetch_partition, partition_max_bytes, 0, KV_MAX),
    KF(KP_UUID, kp_fetch_partition, replica_directory_id, 17, KV_MAX, .tag = 0),
};
KSCHEMA(kp_fetch_partition_schema, kp_fetch_partition, kp_fetch_partition_fields);

static const kp_field kp_fetch_topic_fields[] = {
    KF(KP_STR, kp_fetch_topic, topic, 0, 12),
    KF(KP_UUID, kp_fetch_topic, topic_id, 13, KV_MAX),
    KFA(kp_fetch_topic, partitions, 0, KV_MAX, kp_fetch_partition_schema),
};
KSCHEMA(kp_fetch_topic_schema, kp_fetch_topic, kp_fetch_topic_fields);

static const kp_field kp_fetch_forgotten_topic_fields[] = {
    KF(KP_STR, kp_fetch_forgotten_topic, topic, 7, 12),
    KF(KP_UUID, kp_fetch_forgotten_topic, topic_id, 13, KV_MAX),
    KFP(KP_I32, kp_fetch_forgotten_topic, partitions, 7, KV_MAX),
};
KSCHEMA(kp_fetch_forgotten_topic_schema, kp_fetch_forgotten_topic, kp_fetch_forgotten_topic_fields);

static const kp_field kp_fetch_request_fields[] = {
    KF(KP_STR, kp_fetch_request, cluster_id, 12, KV_MAX, .null_from = 12, .tag = 0, .dflt = -1),
    KF(KP_I32, kp_fetch_request, replica_id, 0, 14, .dflt = -1),
    KF(KP_STRUCT, kp_fetch_request, replica_state, 15, KV_MAX, .sub = &kp_fetch_replica_state_schema, .tag = 1),
    KF(KP_I32, kp_fetch_request, max_wait_ms, 0, KV_MAX),
    KF(KP_I32, kp_fetch_request, min_bytes, 0, KV_MAX),
    KF(KP_I32, kp_fetch_request, max_bytes, 3, KV_MAX, .dflt = 2147483647),
    KF(KP_I8, kp_fetch_request, isolation_level, 4, KV_MAX),
    KF(KP_I32, kp_fetch_request, session_id, 7, KV_MAX),
    KF(KP_I32, kp_fetch_request, session_epoch, 7, KV_MAX, .dflt = -1),
    KFA(kp_fetch_request, topics, 0, KV_MAX, kp_fetch_topic_schema),
    KFA(kp_fetch_request, forgotten_topics_data, 7, KV_MAX, kp_fetch_forgotten_topic_schema),
    KF(KP_STR, kp_fetch_request, rack_id, 11, KV_MAX),
};
KSCHEMA(kp_fetch_request_schema, kp_fetch_request, kp_fetch_request_fields);

static const kp_field kp_fetch_epoch_end_offset_fields[] = {
    KF(KP_I32, kp_fetch_epoch_end_offset, epoch, 12, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_fetch_epoch_end_offset, end_offset, 12, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_fetch_epoch_end_offset_schema, kp_fetch_epoch_end_offset, kp_fetch_epoch_end_offset_fields);

static const kp_field kp_fetch_leader_id_and_epoch_fields[] = {
    KF(KP_I32, kp_fetch_leader_id_and_epoch, leader_id, 12, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_fetch_leader_id_and_epoch, leader_epoch, 12, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_fetch_leader_id_and_epoch_schema, kp_fetch_leader_id_and_epoch, kp_fetch_leader_id_and_epoch_fields);

static const kp_field kp_fetch_snapshot_id_fields[] = {
    KF(KP_I64, kp_fetch_snapshot_id, end_offset, 0, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_fetch_snapshot_id, epoch, 0, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_fetch_snapshot_id_schema, kp_fetch_snapshot_id, kp_fetch_snapshot_id_fields);

static const kp_field kp_fetch_aborted_transaction_fields[] = {
    KF(KP_I64, kp_fetch_aborted_transaction, producer_id, 4, KV_MAX),
    KF(KP_I64, kp_fetch_aborted_transaction, first_offset, 4, KV_MAX),
};
KSCHEMA(kp_fetch_aborted_transaction_schema, kp_fetch_aborted_transaction, kp_fetch_aborted_transaction_fields);

static const kp_field kp_fetch_partition_data_fields[] = {
    KF(KP_I32, kp_fetch_partition_data, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_fetch_partition_data, error_code, 0, KV_MAX),
    KF(KP_I64, kp_fetch_partition_data, high_watermark, 0, KV_MAX),
    KF(KP_I64, kp_fetch_partition_data, last_stable_offset, 4, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_fetch_partition_data, log_start_offset, 5, KV_MAX, .dflt = -1),
    KF(KP_STRUCT, kp_fetch_partition_data, diverging_epoch, 12, KV_MAX, .sub = &kp_fetch_epoch_end_offset_schema, .tag = 0),
    KF(KP_STRUCT, kp_fetch_partition_data, current_leader, 12, KV_MAX, .sub = &kp_fetch_leader_id_and_epoch_schema, .tag = 1),
    KF(KP_STRUCT, kp_fetch_partition_data, snapshot_id, 12, KV_MAX, .sub = &kp_fetch_snapshot_id_schema, .tag = 2),
    KFA(kp_fetch_partition_data, aborted_transactions, 4, KV_MAX, kp_fetch_aborted_transaction_schema, .null_from = 4),
    KF(KP_I32, kp_fetch_partition_data, preferred_read_replica, 11, KV_MAX, .dflt = -1),
    KF(KP_RECORDS, kp_fetch_partition_data, records, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_fetch_partition_data_schema, kp_fetch_partition_data, kp_fetch_partition_data_fields);

static const kp_field kp_fetchable_topic_response_fields[] = {
    KF(KP_STR, kp_fetchable_topic_response, topic, 0, 12),
    KF(KP_UUID, kp_fetchable_topic_response, topic_id, 13, KV_MAX),
    KFA(kp_fetchable_topic_response, partitions, 0, KV_MAX, kp_fetch_partition_data_schema),
};
KSCHEMA(kp_fetchable_topic_response_schema, kp_fetchable_topic_response, kp_fetchable_topic_response_fields);

static const kp_field kp_fetch_node_endpoint_fields[] = {
    KF(KP_I32, kp_fetch_node_endpoint, node_id, 16, KV_MAX),
    KF(KP_STR, kp_fetch_node_endpoint, host, 16, KV_MAX),
    KF(KP_I32, kp_fetch_node_endpoint, port, 16, KV_MAX),
    KF(KP_STR, kp_fetch_node_endpoint, rack, 16, KV_MAX, .null_from = 16, .dflt = -1),
};
KSCHEMA(kp_fetch_node_endpoint_schema, kp_fetch_node_endpoint, kp_fetch_node_endpoint_fields);

static const kp_field kp_fetch_response_fields[] = {
    KF(KP_I32, kp_fetch_response, throttle_time_ms, 1, KV_MAX),
    KF(KP_I16, kp_fetch_response, error_code, 7, KV_MAX),
    KF(KP_I32, kp_fetch_response, session_id, 7, KV_MAX),
    KFA(kp_fetch_response, responses, 0, KV_MAX, kp_fetchable_topic_response_schema),
    KFA(kp_fetch_response, node_endpoints, 16, KV_MAX, kp_fetch_node_endpoint_schema, .tag = 0),
};
KSCHEMA(kp_fetch_response_schema, kp_fetch_response, kp_fetch_response_fields);

const kp_msg kp_msg_fetch = {KP_MSG_ID(FETCH), 0, 17, 12, &kp_fetch_request_schema, &kp_fetch_response_schema};
