/* DescribeCluster (API key 60): request and response structs, versions 0-1. */
#ifndef KP_MSG_DESCRIBE_CLUSTER_H
#define KP_MSG_DESCRIBE_CLUSTER_H

#include "kp.h"

typedef struct kp_describe_cluster_request {
    bool include_cluster_authorized_operations;
    int8_t endpoint_type;
} kp_describe_cluster_request;
extern const kp_schema kp_describe_cluster_request_schema;

typedef struct kp_describe_cluster_broker {
    int32_t broker_id;
    kp_str host;
    int32_t port;
    kp_str rack;
} kp_describe_cluster_broker;
extern const kp_schema kp_describe_cluster_broker_schema;

typedef struct kp_describe_cluster_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    kp_str error_message;
    int8_t endpoint_type;
    kp_str cluster_id;
    int32_t controller_id;
    KP_ARR(struct kp_describe_cluster_broker) brokers;
    int32_t cluster_authorized_operations;
} kp_describe_cluster_response;
extern const kp_schema kp_describe_cluster_response_schema;

extern const kp_msg kp_msg_describe_cluster;

#endif
