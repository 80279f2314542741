/* AddPartitionsToTxn (API key 24) wire description; fields carry the versions they exist in. */
#include "msg_add_partitions_to_txn.h"

/* shared by v4+ transactions[].topics and v0-3 v3_and_below_topics */
static const kp_field kp_add_partitions_to_txn_topic_fields[] = {
    KF(KP_STR, kp_add_partitions_to_txn_topic, name, 0, KV_MAX),
    KFP(KP_I32, kp_add_partitions_to_txn_topic, partitions, 0, KV_MAX),
};
KSCHEMA(kp_add_partitions_to_txn_topic_schema, kp_add_partitions_to_txn_topic, kp_add_partitions_to_txn_topic_fields);

static const kp_field kp_add_partitions_to_txn_transaction_fields[] = {
    KF(KP_STR, kp_add_partitions_to_txn_transaction, transactional_id, 4, KV_MAX),
    KF(KP_I64, kp_add_partitions_to_txn_transaction, producer_id, 4, KV_MAX),
    KF(KP_I16, kp_add_partitions_to_txn_transaction, producer_epoch, 4, KV_MAX),
    KF(KP_BOOL, kp_add_partitions_to_txn_transaction, verify_only, 4, KV_MAX),
    KFA(kp_add_partitions_to_txn_transaction, topics, 4, KV_MAX, kp_add_partitions_to_txn_topic_schema),
};
KSCHEMA(kp_add_partitions_to_txn_transaction_schema, kp_add_partitions_to_txn_transaction, kp_add_partitions_to_txn_transaction_fields);

static const kp_field kp_add_partitions_to_txn_request_fields[] = {
    KFA(kp_add_partitions_to_txn_request, transactions, 4, KV_MAX, kp_add_partitions_to_txn_transaction_schema),
    KF(KP_STR, kp_add_partitions_to_txn_request, v3_and_below_transactional_id, 0, 3),
    KF(KP_I64, kp_add_partitions_to_txn_request, v3_and_below_producer_id, 0, 3),
    KF(KP_I16, kp_add_partitions_to_txn_request, v3_and_below_producer_epoch, 0, 3),
    KFA(kp_add_partitions_to_txn_request, v3_and_below_topics, 0, 3, kp_add_partitions_to_txn_topic_schema),
};
KSCHEMA(kp_add_partitions_to_txn_request_schema, kp_add_partitions_to_txn_request, kp_add_partitions_to_txn_request_fields);

static const kp_field kp_add_partitions_to_txn_partition_result_fields[] = {
    KF(KP_I32, kp_add_partitions_to_txn_partition_result, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_add_partitions_to_txn_partition_result, partition_error_code, 0, KV_MAX),
};
KSCHEMA(kp_add_partitions_to_txn_partition_result_schema, kp_add_partitions_to_txn_partition_result, kp_add_partitions_to_txn_partition_result_fields);

static const kp_field kp_add_partitions_to_txn_topic_result_fields[] = {
    KF(KP_STR, kp_add_partitions_to_txn_topic_result, name, 0, KV_MAX),
    KFA(kp_add_partitions_to_txn_topic_result, results_by_partition, 0, KV_MAX, kp_add_partitions_to_txn_partition_result_schema),
};
KSCHEMA(kp_add_partitions_to_txn_topic_result_schema, kp_add_partitions_to_txn_topic_result, kp_add_partitions_to_txn_topic_result_fields);

static const kp_field kp_add_partitions_to_txn_result_fields[] = {
    KF(KP_STR, kp_add_partitions_to_txn_result, transactional_id, 4, KV_MAX),
    KFA(kp_add_partitions_to_txn_result, topic_results, 4, KV_MAX, kp_add_partitions_to_txn_topic_result_schema),
};
KSCHEMA(kp_add_partitions_to_txn_result_schema, kp_add_partitions_to_txn_result, kp_add_partitions_to_txn_result_fields);

static const kp_field kp_add_partitions_to_txn_response_fields[] = {
    KF(KP_I32, kp_add_partitions_to_txn_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_add_partitions_to_txn_response, error_code, 4, KV_MAX),
    KFA(kp_add_partitions_to_txn_response, results_by_transaction, 4, KV_MAX, kp_add_partitions_to_txn_result_schema),
    KFA(kp_add_partitions_to_txn_response, results_by_topic_v3_and_below, 0, 3, kp_add_partitions_to_txn_topic_result_schema),
};
KSCHEMA(kp_add_partitions_to_txn_response_schema, kp_add_partitions_to_txn_response, kp_add_partitions_to_txn_response_fields);

const kp_msg kp_msg_add_partitions_to_txn = {KP_MSG_ID(ADD_PARTITIONS_TO_TXN), 0, 5, 3, &kp_add_partitions_to_txn_request_schema, &kp_add_partitions_to_txn_response_schema};
