/* Metadata (API key 3): request and response structs, versions 0-12. */
#ifndef KP_MSG_METADATA_H
#define KP_MSG_METADATA_H

#include "kp.h"

typedef struct kp_metadata_request_topic {
    kp_uuid topic_id;
    kp_str name;
} kp_metadata_request_topic;
extern const kp_schema kp_metadata_request_topic_schema;

typedef struct kp_metadata_request {
    KP_ARR(struct kp_metadata_request_topic) topics;
    bool allow_auto_topic_creation;
    bool include_cluster_authorized_operations;
    bool include_topic_authorized_operations;
} kp_metadata_request;
extern const kp_schema kp_metadata_request_schema;

typedef struct kp_metadata_response_broker {
    int32_t node_id;
    kp_str host;
    int32_t port;
    kp_str rack;
} kp_metadata_response_broker;
extern const kp_schema kp_metadata_response_broker_schema;

typedef struct kp_metadata_response_partition {
    int16_t error_code;
    int32_t partition_index;
    int32_t leader_id;
    int32_t leader_epoch;
    KP_ARR(int32_t) replica_nodes;
    KP_ARR(int32_t) isr_nodes;
    KP_ARR(int32_t) offline_replicas;
} kp_metadata_response_partition;
extern const kp_schema kp_metadata_response_partition_schema;

typedef struct kp_metadata_response_topic {
    int16_t error_code;
    kp_str name;
    kp_uuid topic_id;
    bool is_internal;
    KP_ARR(struct kp_metadata_response_partition) partitions;
    int32_t topic_authorized_operations;
} kp_metadata_response_topic;
extern const kp_schema kp_metadata_response_topic_schema;

typedef struct kp_metadata_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_metadata_response_broker) brokers;
    kp_str cluster_id;
    int32_t controller_id;
    KP_ARR(struct kp_metadata_response_topic) topics;
    int32_t cluster_authorized_operations;
} kp_metadata_response;
extern const kp_schema kp_metadata_response_schema;

extern const kp_msg kp_msg_metadata;

#endif
