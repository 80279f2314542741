/* OffsetForLeaderEpoch (API key 23) wire description; fields carry the versions they exist in. */
#include "msg_offset_for_leader_epoch.h"

static const kp_field kp_offset_for_leader_epoch_offset_for_leader_partition_fields[] = {
    KF(KP_I32, kp_offset_for_leader_epoch_offset_for_leader_partition, partition, 0, KV_MAX),
    KF(KP_I32, kp_offset_for_leader_epoch_offset_for_leader_partition, current_leader_epoch, 2, KV_MAX, .dflt = -1),
    KF(KP_I32, kp_offset_for_leader_epoch_offset_for_leader_partition, leader_epoch, 0, KV_MAX),
};
KSCHEMA(kp_offset_for_leader_epoch_offset_for_leader_partition_schema, kp_offset_for_leader_epoch_offset_for_leader_partition, kp_offset_for_leader_epoch_offset_for_leader_partition_fields);

static const kp_field kp_offset_for_leader_epoch_offset_for_leader_topic_fields[] = {
    KF(KP_STR, kp_offset_for_leader_epoch_offset_for_leader_topic, topic, 0, KV_MAX),
    KFA(kp_offset_for_leader_epoch_offset_for_leader_topic, partitions, 0, KV_MAX, kp_offset_for_leader_epoch_offset_for_leader_partition_schema),
};
KSCHEMA(kp_offset_for_leader_epoch_offset_for_leader_topic_schema, kp_offset_for_leader_epoch_offset_for_leader_topic, kp_offset_for_leader_epoch_offset_for_leader_topic_fields);

static const kp_field kp_offset_for_leader_epoch_request_fields[] = {
    KF(KP_I32, kp_offset_for_leader_epoch_request, replica_id, 3, KV_MAX, .dflt = -2),
    KFA(kp_offset_for_leader_epoch_request, topics, 0, KV_MAX, kp_offset_for_leader_epoch_offset_for_leader_topic_schema),
};
KSCHEMA(kp_offset_for_leader_epoch_request_schema, kp_offset_for_leader_epoch_request, kp_offset_for_leader_epoch_request_fields);

static const kp_field kp_offset_for_leader_epoch_epoch_end_offset_fields[] = {
    KF(KP_I16, kp_offset_for_leader_epoch_epoch_end_offset, error_code, 0, KV_MAX),
    KF(KP_I32, kp_offset_for_leader_epoch_epoch_end_offset, partition, 0, KV_MAX),
    KF(KP_I32, kp_offset_for_leader_epoch_epoch_end_offset, leader_epoch, 1, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_offset_for_leader_epoch_epoch_end_offset, end_offset, 0, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_offset_for_leader_epoch_epoch_end_offset_schema, kp_offset_for_leader_epoch_epoch_end_offset, kp_offset_for_leader_epoch_epoch_end_offset_fields);

static const kp_field kp_offset_for_leader_epoch_offset_for_leader_topic_result_fields[] = {
    KF(KP_STR, kp_offset_for_leader_epoch_offset_for_leader_topic_result, topic, 0, KV_MAX),
    KFA(kp_offset_for_leader_epoch_offset_for_leader_topic_result, partitions, 0, KV_MAX, kp_offset_for_leader_epoch_epoch_end_offset_schema),
};
KSCHEMA(kp_offset_for_leader_epoch_offset_for_leader_topic_result_schema, kp_offset_for_leader_epoch_offset_for_leader_topic_result, kp_offset_for_leader_epoch_offset_for_leader_topic_result_fields);

static const kp_field kp_offset_for_leader_epoch_response_fields[] = {
    KF(KP_I32, kp_offset_for_leader_epoch_response, throttle_time_ms, 2, KV_MAX),
    KFA(kp_offset_for_leader_epoch_response, topics, 0, KV_MAX, kp_offset_for_leader_epoch_offset_for_leader_topic_result_schema),
};
KSCHEMA(kp_offset_for_leader_epoch_response_schema, kp_offset_for_leader_epoch_response, kp_offset_for_leader_epoch_response_fields);

const kp_msg kp_msg_offset_for_leader_epoch = {KP_MSG_ID(OFFSET_FOR_LEADER_EPOCH), 0, 4, 4, &kp_offset_for_leader_epoch_request_schema, &kp_offset_for_leader_epoch_response_schema};
