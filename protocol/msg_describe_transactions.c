/* DescribeTransactions (API key 65) wire description; fields carry the versions they exist in. */
#include "msg_describe_transactions.h"

static const kp_field kp_describe_transactions_request_fields[] = {
    KFP(KP_STR, kp_describe_transactions_request, transactional_ids, 0, KV_MAX),
};
KSCHEMA(kp_describe_transactions_request_schema, kp_describe_transactions_request, kp_describe_transactions_request_fields);

static const kp_field kp_describe_transactions_topic_data_fields[] = {
    KF(KP_STR, kp_describe_transactions_topic_data, topic, 0, KV_MAX),
    KFP(KP_I32, kp_describe_transactions_topic_data, partitions, 0, KV_MAX),
};
KSCHEMA(kp_describe_transactions_topic_data_schema, kp_describe_transactions_topic_data, kp_describe_transactions_topic_data_fields);

static const kp_field kp_describe_transactions_transaction_state_fields[] = {
    KF(KP_I16, kp_describe_transactions_transaction_state, error_code, 0, KV_MAX),
    KF(KP_STR, kp_describe_transactions_transaction_state, transactional_id, 0, KV_MAX),
    KF(KP_STR, kp_describe_transactions_transaction_state, transaction_state, 0, KV_MAX),
    KF(KP_I32, kp_describe_transactions_transaction_state, transaction_timeout_ms, 0, KV_MAX),
    KF(KP_I64, kp_describe_transactions_transaction_state, transaction_start_time_ms, 0, KV_MAX),
    KF(KP_I64, kp_describe_transactions_transaction_state, producer_id, 0, KV_MAX),
    KF(KP_I16, kp_describe_transactions_transaction_state, producer_epoch, 0, KV_MAX),
    KFA(kp_describe_transactions_transaction_state, topics, 0, KV_MAX, kp_describe_transactions_topic_data_schema),
};
KSCHEMA(kp_describe_transactions_transaction_state_schema, kp_describe_transactions_transaction_state, kp_describe_transactions_transaction_state_fields);

static const kp_field kp_describe_transactions_response_fields[] = {
    KF(KP_I32, kp_describe_transactions_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_describe_transactions_response, transaction_states, 0, KV_MAX, kp_describe_transactions_transaction_state_schema),
};
KSCHEMA(kp_describe_transactions_response_schema, kp_describe_transactions_response, kp_describe_transactions_response_fields);

const kp_msg kp_msg_describe_transactions = {KP_MSG_ID(DESCRIBE_TRANSACTIONS), 0, 0, 0, &kp_describe_transactions_request_schema, &kp_describe_transactions_response_schema};
