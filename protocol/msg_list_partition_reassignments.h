/* ListPartitionReassignments (API key 46): request and response structs, version 0. */
#ifndef KP_MSG_LIST_PARTITION_REASSIGNMENTS_H
#define KP_MSG_LIST_PARTITION_REASSIGNMENTS_H

#include "kp.h"

typedef struct kp_list_partition_reassignments_topics {
    kp_str name;
    KP_ARR(int32_t) partition_indexes;
} kp_list_partition_reassignments_topics;
extern const kp_schema kp_list_partition_reassignments_topics_schema;

typedef struct kp_list_partition_reassignments_request {
    int32_t timeout_ms;
    KP_ARR(struct kp_list_partition_reassignments_topics) topics;
} kp_list_partition_reassignments_request;
extern const kp_schema kp_list_partition_reassignments_request_schema;

typedef struct kp_list_partition_reassignments_ongoing_partition {
    int32_t partition_index;
    KP_ARR(int32_t) replicas;
    KP_ARR(int32_t) adding_replicas;
    KP_ARR(int32_t) removing_replicas;
} kp_list_partition_reassignments_ongoing_partition;
extern const kp_schema kp_list_partition_reassignments_ongoing_partition_schema;

typedef struct kp_list_partition_reassignments_ongoing_topic {
    kp_str name;
    KP_ARR(struct kp_list_partition_reassignments_ongoing_partition) partitions;
} kp_list_partition_reassignments_ongoing_topic;
extern const kp_schema kp_list_partition_reassignments_ongoing_topic_schema;

typedef struct kp_list_partition_reassignments_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    kp_str error_message;
    KP_ARR(struct kp_list_partition_reassignments_ongoing_topic) topics;
} kp_list_partition_reassignments_response;
extern const kp_schema kp_list_partition_reassignments_response_schema;

extern const kp_msg kp_msg_list_partition_reassignments;

#endif
