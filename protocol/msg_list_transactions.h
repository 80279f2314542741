/* ListTransactions (API key 66): request and response structs, versions 0-2. */
#ifndef KP_MSG_LIST_TRANSACTIONS_H
#define KP_MSG_LIST_TRANSACTIONS_H

#include "kp.h"

typedef struct kp_list_transactions_request {
    KP_ARR(kp_str) state_filters;
    KP_ARR(int64_t) producer_id_filters;
    int64_t duration_filter;
    kp_str transactional_id_pattern;
} kp_list_transactions_request;
extern const kp_schema kp_list_transactions_request_schema;

typedef struct kp_list_transactions_transaction_state {
    kp_str transactional_id;
    int64_t producer_id;
    kp_str transaction_state;
} kp_list_transactions_transaction_state;
extern const kp_schema kp_list_transactions_transaction_state_schema;

typedef struct kp_list_transactions_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    KP_ARR(kp_str) unknown_state_filters;
    KP_ARR(struct kp_list_transactions_transaction_state) transaction_states;
} kp_list_transactions_response;
extern const kp_schema kp_list_transactions_response_schema;

extern const kp_msg kp_msg_list_transactions;

#endif
