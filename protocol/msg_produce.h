/* Produce (API key 0): request and response structs, versions 0-11. */
#ifndef KP_MSG_PRODUCE_H
#define KP_MSG_PRODUCE_H

#include "kp.h"

typedef struct kp_produce_partition_produce_data {
    int32_t index;
    kp_bytes records;
} kp_produce_partition_produce_data;
extern const kp_schema kp_produce_partition_produce_data_schema;

typedef struct kp_produce_topic_produce_data {
    kp_str name;
    KP_ARR(struct kp_produce_partition_produce_data) partition_data;
} kp_produce_topic_produce_data;
extern const kp_schema kp_produce_topic_produce_data_schema;

typedef struct kp_produce_request {
    kp_str transactional_id;
    int16_t acks;
    int32_t timeout_ms;
    KP_ARR(struct kp_produce_topic_produce_data) topic_data;
} kp_produce_request;
extern const kp_schema kp_produce_request_schema;

typedef struct kp_produce_batch_index_and_error_message {
    int32_t batch_index;
    kp_str batch_index_error_message;
} kp_produce_batch_index_and_error_message;
extern const kp_schema kp_produce_batch_index_and_error_message_schema;

typedef struct kp_produce_leader_id_and_epoch {
    int32_t leader_id;
    int32_t leader_epoch;
} kp_produce_leader_id_and_epoch;
extern const kp_schema kp_produce_leader_id_and_epoch_schema;

typedef struct kp_produce_partition_produce_response {
    int32_t index;
    int16_t error_code;
    int64_t base_offset;
    int64_t log_append_time_ms;
    int64_t log_start_offset;
    KP_ARR(struct kp_produce_batch_index_and_error_message) record_errors;
    kp_str error_message;
    struct kp_produce_leader_id_and_epoch current_leader;
} kp_produce_partition_produce_response;
extern const kp_schema kp_produce_partition_produce_response_schema;

typedef struct kp_produce_topic_produce_response {
    kp_str name;
    KP_ARR(struct kp_produce_partition_produce_response) partition_responses;
} kp_produce_topic_produce_response;
extern const kp_schema kp_produce_topic_produce_response_schema;

typedef struct kp_produce_node_endpoint {
    int32_t node_id;
    kp_str host;
    int32_t port;
    kp_str rack;
} kp_produce_node_endpoint;
extern const kp_schema kp_produce_node_endpoint_schema;

typedef struct kp_produce_response {
    KP_ARR(struct kp_produce_topic_produce_response) responses;
    int32_t throttle_time_ms;
    KP_ARR(struct kp_produce_node_endpoint) node_endpoints;
} kp_produce_response;
extern const kp_schema kp_produce_response_schema;

extern const kp_msg kp_msg_produce;

#endif
