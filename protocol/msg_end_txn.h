/* EndTxn (API key 26): request and response structs, versions 0-5. */
#ifndef KP_MSG_END_TXN_H
#define KP_MSG_END_TXN_H

#include "kp.h"

typedef struct kp_end_txn_request {
    kp_str transactional_id;
    int64_t producer_id;
    int16_t producer_epoch;
    bool committed;
} kp_end_txn_request;
extern const kp_schema kp_end_txn_request_schema;

/* v5+ (transactions v2, KIP-890) hands the producer its next id and epoch: each EndTxn bumps the epoch. */
typedef struct kp_end_txn_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    int64_t producer_id;
    int16_t producer_epoch;
} kp_end_txn_response;
extern const kp_schema kp_end_txn_response_schema;

extern const kp_msg kp_msg_end_txn;

#endif
