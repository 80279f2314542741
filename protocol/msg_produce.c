/*
 * Produce (API key 0) wire description; fields carry the versions they exist in. v12 has v11's
 * fields: it says the client uses transaction version 2, so the broker adds a transactional
 * batch's partition to the transaction itself (KIP-890 part 2, ProduceRequest.json in Kafka 4.0).
 */
#include "msg_produce.h"

static const kp_field kp_produce_partition_produce_data_fields[] = {
    KF(KP_I32, kp_produce_partition_produce_data, index, 0, KV_MAX),
    KF(KP_RECORDS, kp_produce_partition_produce_data, records, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_produce_partition_produce_data_schema, kp_produce_partition_produce_data, kp_produce_partition_produce_data_fields);

static const kp_field kp_produce_topic_produce_data_fields[] = {
    KF(KP_STR, kp_produce_topic_produce_data, name, 0, KV_MAX),
    KFA(kp_produce_topic_produce_data, partition_data, 0, KV_MAX, kp_produce_partition_produce_data_schema),
};
KSCHEMA(kp_produce_topic_produce_data_schema, kp_produce_topic_produce_data, kp_produce_topic_produce_data_fields);

static const kp_field kp_produce_request_fields[] = {
    KF(KP_STR, kp_produce_request, transactional_id, 3, KV_MAX, .null_from = 3, .dflt = -1),
    KF(KP_I16, kp_produce_request, acks, 0, KV_MAX),
    KF(KP_I32, kp_produce_request, timeout_ms, 0, KV_MAX),
    KFA(kp_produce_request, topic_data, 0, KV_MAX, kp_produce_topic_produce_data_schema),
};
KSCHEMA(kp_produce_request_schema, kp_produce_request, kp_produce_request_fields);

static const kp_field kp_produce_batch_index_and_error_message_fields[] = {
    KF(KP_I32, kp_produce_batch_index_and_error_message, batch_index, 8, KV_MAX),
    KF(KP_STR, kp_produce_batch_index_and_error_message, batch_index_error_message, 8, KV_MAX, .null_from = 8, .dflt = -1),
};
KSCHEMA(kp_produce_batch_index_and_error_message_schema, kp_produce_batch_index_and_error_message, kp_produce_batch_index_and_error_message_fields);

static const kp_field kp_produce_leader_id_and_epoch_fields[] = {
    KF(KP_I32, kp_produce_leader_id_and_epoch, leader_id, 10, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_produce_leader_id_and_epoch, leader_epoch, 10, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_produce_leader_id_and_epoch_schema, kp_produce_leader_id_and_epoch, kp_produce_leader_id_and_epoch_fields);

static const kp_field kp_produce_partition_produce_response_fields[] = {
    KF(KP_I32, kp_produce_partition_produce_response, index, 0, KV_MAX),
    KF(KP_I16, kp_produce_partition_produce_response, error_code, 0, KV_MAX),
    KF(KP_I64, kp_produce_partition_produce_response, base_offset, 0, KV_MAX),
    KF(KP_I64, kp_produce_partition_produce_response, log_append_time_ms, 2, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_produce_partition_produce_response, log_start_offset, 5, KV_MAX, .dflt = -1),
    KFA(kp_produce_partition_produce_response, record_errors, 8, KV_MAX, kp_produce_batch_index_and_error_message_schema),
    KF(KP_STR, kp_produce_partition_produce_response, error_message, 8, KV_MAX, .null_from = 8, .dflt = -1),
    KF(KP_STRUCT, kp_produce_partition_produce_response, current_leader, 10, KV_MAX, .sub = &kp_produce_leader_id_and_epoch_schema, .tag = 0),
};
KSCHEMA(kp_produce_partition_produce_response_schema, kp_produce_partition_produce_response, kp_produce_partition_produce_response_fields);

static const kp_field kp_produce_topic_produce_response_fields[] = {
    KF(KP_STR, kp_produce_topic_produce_response, name, 0, KV_MAX),
    KFA(kp_produce_topic_produce_response, partition_responses, 0, KV_MAX, kp_produce_partition_produce_response_schema),
};
KSCHEMA(kp_produce_topic_produce_response_schema, kp_produce_topic_produce_response, kp_produce_topic_produce_response_fields);

static const kp_field kp_produce_node_endpoint_fields[] = {
    KF(KP_I32, kp_produce_node_endpoint, node_id, 10, KV_MAX),
    KF(KP_STR, kp_produce_node_endpoint, host, 10, KV_MAX),
    KF(KP_I32, kp_produce_node_endpoint, port, 10, KV_MAX),
    KF(KP_STR, kp_produce_node_endpoint, rack, 10, KV_MAX, .null_from = 10, .dflt = -1),
};
KSCHEMA(kp_produce_node_endpoint_schema, kp_produce_node_endpoint, kp_produce_node_endpoint_fields);

static const kp_field kp_produce_response_fields[] = {
    KFA(kp_produce_response, responses, 0, KV_MAX, kp_produce_topic_produce_response_schema),
    KF(KP_I32, kp_produce_response, throttle_time_ms, 1, KV_MAX),
    KFA(kp_produce_response, node_endpoints, 10, KV_MAX, kp_produce_node_endpoint_schema, .tag = 0),
};
KSCHEMA(kp_produce_response_schema, kp_produce_response, kp_produce_response_fields);

const kp_msg kp_msg_produce = {KP_MSG_ID(PRODUCE), 0, 12, 9, &kp_produce_request_schema, &kp_produce_response_schema};
