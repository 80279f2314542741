/* DescribeTransactions (API key 65): request and response structs, version 0. */
#ifndef KP_MSG_DESCRIBE_TRANSACTIONS_H
#define KP_MSG_DESCRIBE_TRANSACTIONS_H

#include "kp.h"

typedef struct kp_describe_transactions_request {
    KP_ARR(kp_str) transactional_ids;
} kp_describe_transactions_request;
extern const kp_schema kp_describe_transactions_request_schema;

typedef struct kp_describe_transactions_topic_data {
    kp_str topic;
    KP_ARR(int32_t) partitions;
} kp_describe_transactions_topic_data;
extern const kp_schema kp_describe_transactions_topic_data_schema;

typedef struct kp_describe_transactions_transaction_state {
    int16_t error_code;
    kp_str transactional_id;
    kp_str transaction_state;
    int32_t transaction_timeout_ms;
    int64_t transaction_start_time_ms;
    int64_t producer_id;
    int16_t producer_epoch;
    KP_ARR(struct kp_describe_transactions_topic_data) topics;
} kp_describe_transactions_transaction_state;
extern const kp_schema kp_describe_transactions_transaction_state_schema;

typedef struct kp_describe_transactions_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_describe_transactions_transaction_state) transaction_states;
} kp_describe_transactions_response;
extern const kp_schema kp_describe_transactions_response_schema;

extern const kp_msg kp_msg_describe_transactions;

#endif
