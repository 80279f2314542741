/* EndTxn (API key 26) wire description; fields carry the versions they exist in. */
#include "msg_end_txn.h"

static const kp_field kp_end_txn_request_fields[] = {
    KF(KP_STR, kp_end_txn_request, transactional_id, 0, KV_MAX),
    KF(KP_I64, kp_end_txn_request, producer_id, 0, KV_MAX),
    KF(KP_I16, kp_end_txn_request, producer_epoch, 0, KV_MAX),
    KF(KP_BOOL, kp_end_txn_request, committed, 0, KV_MAX),
};
KSCHEMA(kp_end_txn_request_schema, kp_end_txn_request, kp_end_txn_request_fields);

static const kp_field kp_end_txn_response_fields[] = {
    KF(KP_I32, kp_end_txn_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_end_txn_response, error_code, 0, KV_MAX),
    KF(KP_I64, kp_end_txn_response, producer_id, 5, KV_MAX, .dflt = -1),
    KF(KP_I16, kp_end_txn_response, producer_epoch, 5, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_end_txn_response_schema, kp_end_txn_response, kp_end_txn_response_fields);

const kp_msg kp_msg_end_txn = {KP_MSG_ID(END_TXN), 0, 5, 3, &kp_end_txn_request_schema, &kp_end_txn_response_schema};
