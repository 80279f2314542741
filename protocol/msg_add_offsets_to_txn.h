/* AddOffsetsToTxn (API key 25): request and response structs, versions 0-4. */
#ifndef KP_MSG_ADD_OFFSETS_TO_TXN_H
#define KP_MSG_ADD_OFFSETS_TO_TXN_H

#include "kp.h"

typedef struct kp_add_offsets_to_txn_request {
    kp_str transactional_id;
    int64_t producer_id;
    int16_t producer_epoch;
    kp_str group_id;
} kp_add_offsets_to_txn_request;
extern const kp_schema kp_add_offsets_to_txn_request_schema;

typedef struct kp_add_offsets_to_txn_response {
    int32_t throttle_time_ms;
    int16_t error_code;
} kp_add_offsets_to_txn_response;
extern const kp_schema kp_add_offsets_to_txn_response_schema;

extern const kp_msg kp_msg_add_offsets_to_txn;

#endif
