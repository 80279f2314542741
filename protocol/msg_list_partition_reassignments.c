/* ListPartitionReassignments (API key 46) wire description; fields carry the versions they exist in. */
#include "msg_list_partition_reassignments.h"

static const kp_field kp_list_partition_reassignments_topics_fields[] = {
    KF(KP_STR, kp_list_partition_reassignments_topics, name, 0, KV_MAX),
    KFP(KP_I32, kp_list_partition_reassignments_topics, partition_indexes, 0, KV_MAX),
};
KSCHEMA(kp_list_partition_reassignments_topics_schema, kp_list_partition_reassignments_topics,
        kp_list_partition_reassignments_topics_fields);

static const kp_field kp_list_partition_reassignments_request_fields[] = {
    KF(KP_I32, kp_list_partition_reassignments_request, timeout_ms, 0, KV_MAX, .dflt = 60000),
    /* null: every reassignment in progress */
    KFA(kp_list_partition_reassignments_request, topics, 0, KV_MAX, kp_list_partition_reassignments_topics_schema,
        .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_list_partition_reassignments_request_schema, kp_list_partition_reassignments_request,
        kp_list_partition_reassignments_request_fields);

static const kp_field kp_list_partition_reassignments_ongoing_partition_fields[] = {
    KF(KP_I32, kp_list_partition_reassignments_ongoing_partition, partition_index, 0, KV_MAX),
    KFP(KP_I32, kp_list_partition_reassignments_ongoing_partition, replicas, 0, KV_MAX),
    KFP(KP_I32, kp_list_partition_reassignments_ongoing_partition, adding_replicas, 0, KV_MAX),
    KFP(KP_I32, kp_list_partition_reassignments_ongoing_partition, removing_replicas, 0, KV_MAX),
};
KSCHEMA(kp_list_partition_reassignments_ongoing_partition_schema, kp_list_partition_reassignments_ongoing_partition,
        kp_list_partition_reassignments_ongoing_partition_fields);

static const kp_field kp_list_partition_reassignments_ongoing_topic_fields[] = {
    KF(KP_STR, kp_list_partition_reassignments_ongoing_topic, name, 0, KV_MAX),
    KFA(kp_list_partition_reassignments_ongoing_topic, partitions, 0, KV_MAX,
        kp_list_partition_reassignments_ongoing_partition_schema),
};
KSCHEMA(kp_list_partition_reassignments_ongoing_topic_schema, kp_list_partition_reassignments_ongoing_topic,
        kp_list_partition_reassignments_ongoing_topic_fields);

static const kp_field kp_list_partition_reassignments_response_fields[] = {
    KF(KP_I32, kp_list_partition_reassignments_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_list_partition_reassignments_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_list_partition_reassignments_response, error_message, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KFA(kp_list_partition_reassignments_response, topics, 0, KV_MAX,
        kp_list_partition_reassignments_ongoing_topic_schema),
};
KSCHEMA(kp_list_partition_reassignments_response_schema, kp_list_partition_reassignments_response,
        kp_list_partition_reassignments_response_fields);

const kp_msg kp_msg_list_partition_reassignments = {KP_MSG_ID(LIST_PARTITION_REASSIGNMENTS), 0, 0, 0,
                                                    &kp_list_partition_reassignments_request_schema,
                                                    &kp_list_partition_reassignments_response_schema};
