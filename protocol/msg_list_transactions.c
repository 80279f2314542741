/* ListTransactions (API key 66) wire description; fields carry the versions they exist in. */
#include "msg_list_transactions.h"

static const kp_field kp_list_transactions_request_fields[] = {
    KFP(KP_STR, kp_list_transactions_request, state_filters, 0, KV_MAX),
    KFP(KP_I64, kp_list_transactions_request, producer_id_filters, 0, KV_MAX),
    KF(KP_I64, kp_list_transactions_request, duration_filter, 1, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_list_transactions_request, transactional_id_pattern, 2, KV_MAX, .null_from = 2, .dflt = -1),
};
KSCHEMA(kp_list_transactions_request_schema, kp_list_transactions_request, kp_list_transactions_request_fields);

static const kp_field kp_list_transactions_transaction_state_fields[] = {
    KF(KP_STR, kp_list_transactions_transaction_state, transactional_id, 0, KV_MAX),
    KF(KP_I64, kp_list_transactions_transaction_state, producer_id, 0, KV_MAX),
    KF(KP_STR, kp_list_transactions_transaction_state, transaction_state, 0, KV_MAX),
};
KSCHEMA(kp_list_transactions_transaction_state_schema, kp_list_transactions_transaction_state, kp_list_transactions_transaction_state_fields);

static const kp_field kp_list_transactions_response_fields[] = {
    KF(KP_I32, kp_list_transactions_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_list_transactions_response, error_code, 0, KV_MAX),
    KFP(KP_STR, kp_list_transactions_response, unknown_state_filters, 0, KV_MAX),
    KFA(kp_list_transactions_response, transaction_states, 0, KV_MAX, kp_list_transactions_transaction_state_schema),
};
KSCHEMA(kp_list_transactions_response_schema, kp_list_transactions_response, kp_list_transactions_response_fields);

const kp_msg kp_msg_list_transactions = {KP_MSG_ID(LIST_TRANSACTIONS), 0, 2, 0, &kp_list_transactions_request_schema, &kp_list_transactions_response_schema};
