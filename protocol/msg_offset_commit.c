/* OffsetCommit (API key 8) wire description; fields carry the versions they exist in. */
#include "msg_offset_commit.h"

static const kp_field kp_offset_commit_request_partition_fields[] = {
    KF(KP_I32, kp_offset_commit_request_partition, partition_index, 0, KV_MAX),
    KF(KP_I64, kp_offset_commit_request_partition, committed_offset, 0, KV_MAX),
    KF(KP_I32, kp_offset_commit_request_partition, committed_leader_epoch, 6, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_offset_commit_request_partition, commit_timestamp, 1, 1, .dflt = -1),
    KF(KP_STR, kp_offset_commit_request_partition, committed_metadata, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_offset_commit_request_partition_schema, kp_offset_commit_request_partition, kp_offset_commit_request_partition_fields);

static const kp_field kp_offset_commit_request_topic_fields[] = {
    KF(KP_STR, kp_offset_commit_request_topic, name, 0, KV_MAX),
    KFA(kp_offset_commit_request_topic, partitions, 0, KV_MAX, kp_offset_commit_request_partition_schema),
};
KSCHEMA(kp_offset_commit_request_topic_schema, kp_offset_commit_request_topic, kp_offset_commit_request_topic_fields);

static const kp_field kp_offset_commit_request_fields[] = {
    KF(KP_STR, kp_offset_commit_request, group_id, 0, KV_MAX),
    KF(KP_I32, kp_offset_commit_request, generation_id_or_member_epoch, 1, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_offset_commit_request, member_id, 1, KV_MAX),
    KF(KP_STR, kp_offset_commit_request, group_instance_id, 7, KV_MAX, .null_from = 7, .dflt = -1),
    KF(KP_I64, kp_offset_commit_request, retention_time_ms, 2, 4, .dflt = -1),
    KFA(kp_offset_commit_request, topics, 0, KV_MAX, kp_offset_commit_request_topic_schema),
};
KSCHEMA(kp_offset_commit_request_schema, kp_offset_commit_request, kp_offset_commit_request_fields);

static const kp_field kp_offset_commit_response_partition_fields[] = {
    KF(KP_I32, kp_offset_commit_response_partition, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_offset_commit_response_partition, error_code, 0, KV_MAX),
};
KSCHEMA(kp_offset_commit_response_partition_schema, kp_offset_commit_response_partition, kp_offset_commit_response_partition_fields);

static const kp_field kp_offset_commit_response_topic_fields[] = {
    KF(KP_STR, kp_offset_commit_response_topic, name, 0, KV_MAX),
    KFA(kp_offset_commit_response_topic, partitions, 0, KV_MAX, kp_offset_commit_response_partition_schema),
};
KSCHEMA(kp_offset_commit_response_topic_schema, kp_offset_commit_response_topic, kp_offset_commit_response_topic_fields);

static const kp_field kp_offset_commit_response_fields[] = {
    KF(KP_I32, kp_offset_commit_response, throttle_time_ms, 3, KV_MAX),
    KFA(kp_offset_commit_response, topics, 0, KV_MAX, kp_offset_commit_response_topic_schema),
};
KSCHEMA(kp_offset_commit_response_schema, kp_offset_commit_response, kp_offset_commit_response_fields);

const kp_msg kp_msg_offset_commit = {KP_MSG_ID(OFFSET_COMMIT), 0, 9, 8, &kp_offset_commit_request_schema, &kp_offset_commit_response_schema};
