/* Fetch (API key 1): request and response structs, versions 0-17. */
#ifndef KP_MSG_FETCH_H
#define KP_MSG_FETCH_H

#include "kp.h"

typedef struct kp_fetch_replica_state {
    int32_t replica_id;
    int64_t replica_epoch;
} kp_fetch_replica_state;
extern const kp_schema kp_fetch_replica_state_schema;

typedef struct kp_fetch_partition {
    int32_t partition;
    int32_t current_leader_epoch;
    int64_t fetch_offset;
    int32_t last_fetched_epoch;
    int64_t log_start_offset;
    int32_t partition_max_bytes;
    kp_uuid replica_directory_id;
} kp_fetch_partition;
extern const kp_schema kp_fetch_partition_schema;

typedef struct kp_fetch_topic {
    kp_str topic;
    kp_uuid topic_id;
    KP_ARR(struct kp_fetch_partition) partitions;
} kp_fetch_topic;
extern const kp_schema kp_fetch_topic_schema;

typedef struct kp_fetch_forgotten_topic {
    kp_str topic;
    kp_uuid topic_id;
    KP_ARR(int32_t) partitions;
} kp_fetch_forgotten_topic;
extern const kp_schema kp_fetch_forgotten_topic_schema;

typedef struct kp_fetch_request {
    kp_str cluster_id;
    int32_t replica_id;
    struct kp_fetch_replica_state replica_state;
    int32_t max_wait_ms;
    int32_t min_bytes;
    int32_t max_bytes;
    int8_t isolation_level;
    int32_t session_id;
    int32_t session_epoch;
    KP_ARR(struct kp_fetch_topic) topics;
    KP_ARR(struct kp_fetch_forgotten_topic) forgotten_topics_data;
    kp_str rack_id;
} kp_fetch_request;
extern const kp_schema kp_fetch_request_schema;

typedef struct kp_fetch_epoch_end_offset {
    int32_t epoch;
    int64_t end_offset;
} kp_fetch_epoch_end_offset;
extern const kp_schema kp_fetch_epoch_end_offset_schema;

typedef struct kp_fetch_leader_id_and_epoch {
    int32_t leader_id;
    int32_t leader_epoch;
} kp_fetch_leader_id_and_epoch;
extern const kp_schema kp_fetch_leader_id_and_epoch_schema;

typedef struct kp_fetch_snapshot_id {
    int64_t end_offset;
    int32_t epoch;
} kp_fetch_snapshot_id;
extern const kp_schema kp_fetch_snapshot_id_schema;

typedef struct kp_fetch_aborted_transaction {
    int64_t producer_id;
    int64_t first_offset;
} kp_fetch_aborted_transaction;
extern const kp_schema kp_fetch_aborted_transaction_schema;

typedef struct kp_fetch_partition_data {
    int32_t partition_index;
    int16_t error_code;
    int64_t high_watermark;
    int64_t last_stable_offset;
    int64_t log_start_offset;
    struct kp_fetch_epoch_end_offset diverging_epoch;
    struct kp_fetch_leader_id_and_epoch current_leader;
    struct kp_fetch_snapshot_id snapshot_id;
    KP_ARR(struct kp_fetch_aborted_transaction) aborted_transactions;
    int32_t preferred_read_replica;
    kp_bytes records;
} kp_fetch_partition_data;
extern const kp_schema kp_fetch_partition_data_schema;

typedef struct kp_fetchable_topic_response {
    kp_str topic;
    kp_uuid topic_id;
    KP_ARR(struct kp_fetch_partition_data) partitions;
} kp_fetchable_topic_response;
extern const kp_schema kp_fetchable_topic_response_schema;

typedef struct kp_fetch_node_endpoint {
    int32_t node_id;
    kp_str host;
    int32_t port;
    kp_str rack;
} kp_fetch_node_endpoint;
extern const kp_schema kp_fetch_node_endpoint_schema;

typedef struct kp_fetch_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    int32_t session_id;
    KP_ARR(struct kp_fetchable_topic_response) responses;
    KP_ARR(struct kp_fetch_node_endpoint) node_endpoints;
} kp_fetch_response;
extern const kp_schema kp_fetch_response_schema;

extern const kp_msg kp_msg_fetch;

#endif
