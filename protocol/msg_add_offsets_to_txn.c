/* AddOffsetsToTxn (API key 25) wire description; fields carry the versions they exist in. */
#include "msg_add_offsets_to_txn.h"

static const kp_field kp_add_offsets_to_txn_request_fields[] = {
    KF(KP_STR, kp_add_offsets_to_txn_request, transactional_id, 0, KV_MAX),
    KF(KP_I64, kp_add_offsets_to_txn_request, producer_id, 0, KV_MAX),
    KF(KP_I16, kp_add_offsets_to_txn_request, producer_epoch, 0, KV_MAX),
    KF(KP_STR, kp_add_offsets_to_txn_request, group_id, 0, KV_MAX),
};
KSCHEMA(kp_add_offsets_to_txn_request_schema, kp_add_offsets_to_txn_request, kp_add_offsets_to_txn_request_fields);

static const kp_field kp_add_offsets_to_txn_response_fields[] = {
    KF(KP_I32, kp_add_offsets_to_txn_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_add_offsets_to_txn_response, error_code, 0, KV_MAX),
};
KSCHEMA(kp_add_offsets_to_txn_response_schema, kp_add_offsets_to_txn_response, kp_add_offsets_to_txn_response_fields);

const kp_msg kp_msg_add_offsets_to_txn = {KP_MSG_ID(ADD_OFFSETS_TO_TXN), 0, 4, 3, &kp_add_offsets_to_txn_request_schema, &kp_add_offsets_to_txn_response_schema};
