/* ListOffsets (API key 2) wire description; fields carry the versions they exist in. */
#include "msg_list_offsets.h"

static const kp_field kp_list_offsets_partition_fields[] = {
    KF(KP_I32, kp_list_offsets_partition, partition_index, 0, KV_MAX),
    KF(KP_I32, kp_list_offsets_partition, current_leader_epoch, 4, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_list_offsets_partition, timestamp, 0, KV_MAX),
    KF(KP_I32, kp_list_offsets_partition, max_num_offsets, 0, 0, .dflt = 1),
};
KSCHEMA(kp_list_offsets_partition_schema, kp_list_offsets_partition, kp_list_offsets_partition_fields);

static const kp_field kp_list_offsets_topic_fields[] = {
    KF(KP_STR, kp_list_offsets_topic, name, 0, KV_MAX),
    KFA(kp_list_offsets_topic, partitions, 0, KV_MAX, kp_list_offsets_partition_schema),
};
KSCHEMA(kp_list_offsets_topic_schema, kp_list_offsets_topic, kp_list_offsets_topic_fields);

static const kp_field kp_list_offsets_request_fields[] = {
    KF(KP_I32, kp_list_offsets_request, replica_id, 0, KV_MAX),
    KF(KP_I8, kp_list_offsets_request, isolation_level, 2, KV_MAX),
    KFA(kp_list_offsets_request, topics, 0, KV_MAX, kp_list_offsets_topic_schema),
    KF(KP_I32, kp_list_offsets_request, timeout_ms, 10, KV_MAX),
};
KSCHEMA(kp_list_offsets_request_schema, kp_list_offsets_request, kp_list_offsets_request_fields);

static const kp_field kp_list_offsets_partition_response_fields[] = {
    KF(KP_I32, kp_list_offsets_partition_response, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_list_offsets_partition_response, error_code, 0, KV_MAX),
    KFP(KP_I64, kp_list_offsets_partition_response, old_style_offsets, 0, 0),
    KF(KP_I64, kp_list_offsets_partition_response, timestamp, 1, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_list_offsets_partition_response, offset, 1, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_list_offsets_partition_response, leader_epoch, 4, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_list_offsets_partition_response_schema, kp_list_offsets_partition_response, kp_list_offsets_partition_response_fields);

static const kp_field kp_list_offsets_topic_response_fields[] = {
    KF(KP_STR, kp_list_offsets_topic_response, name, 0, KV_MAX),
    KFA(kp_list_offsets_topic_response, partitions, 0, KV_MAX, kp_list_offsets_partition_response_schema),
};
KSCHEMA(kp_list_offsets_topic_response_schema, kp_list_offsets_topic_response, kp_list_offsets_topic_response_fields);

static const kp_field kp_list_offsets_response_fields[] = {
    KF(KP_I32, kp_list_offsets_response, throttle_time_ms, 2, KV_MAX),
    KFA(kp_list_offsets_response, topics, 0, KV_MAX, kp_list_offsets_topic_response_schema),
};
KSCHEMA(kp_list_offsets_response_schema, kp_list_offsets_response, kp_list_offsets_response_fields);

const kp_msg kp_msg_list_offsets = {KP_MSG_ID(LIST_OFFSETS), 0, 10, 6, &kp_list_offsets_request_schema, &kp_list_offsets_response_schema};
