/* OffsetFetch (API key 9) wire description; fields carry the versions they exist in. */
#include "msg_offset_fetch.h"

static const kp_field kp_offset_fetch_request_topic_fields[] = {
    KF(KP_STR, kp_offset_fetch_request_topic, name, 0, 7),
    KFP(KP_I32, kp_offset_fetch_request_topic, partition_indexes, 0, 7),
};
KSCHEMA(kp_offset_fetch_request_topic_schema, kp_offset_fetch_request_topic, kp_offset_fetch_request_topic_fields);

static const kp_field kp_offset_fetch_request_topics_fields[] = {
    KF(KP_STR, kp_offset_fetch_request_topics, name, 8, KV_MAX),
    KFP(KP_I32, kp_offset_fetch_request_topics, partition_indexes, 8, KV_MAX),
};
KSCHEMA(kp_offset_fetch_request_topics_schema, kp_offset_fetch_request_topics, kp_offset_fetch_request_topics_fields);

static const kp_field kp_offset_fetch_request_group_fields[] = {
    KF(KP_STR, kp_offset_fetch_request_group, group_id, 8, KV_MAX),
    KF(KP_STR, kp_offset_fetch_request_group, member_id, 9, KV_MAX, .null_from = 9, .dflt = -1),
    KF(KP_I32, kp_offset_fetch_request_group, member_epoch, 9, KV_MAX, .dflt = -1),
    KFA(kp_offset_fetch_request_group, topics, 8, KV_MAX, kp_offset_fetch_request_topics_schema, .null_from = 8),
};
KSCHEMA(kp_offset_fetch_request_group_schema, kp_offset_fetch_request_group, kp_offset_fetch_request_group_fields);

static const kp_field kp_offset_fetch_request_fields[] = {
    KF(KP_STR, kp_offset_fetch_request, group_id, 0, 7),
    KFA(kp_offset_fetch_request, topics, 0, 7, kp_offset_fetch_request_topic_schema, .null_from = 2),
    KFA(kp_offset_fetch_request, groups, 8, KV_MAX, kp_offset_fetch_request_group_schema),
    KF(KP_BOOL, kp_offset_fetch_request, require_stable, 7, KV_MAX, .dflt = 0),
};
KSCHEMA(kp_offset_fetch_request_schema, kp_offset_fetch_request, kp_offset_fetch_request_fields);

static const kp_field kp_offset_fetch_response_partition_fields[] = {
    KF(KP_I32, kp_offset_fetch_response_partition, partition_index, 0, 7),
    KF(KP_I64, kp_offset_fetch_response_partition, committed_offset, 0, 7),
    KF(KP_I32, kp_offset_fetch_response_partition, committed_leader_epoch, 5, 7, .dflt = -1),
    KF(KP_STR, kp_offset_fetch_response_partition, metadata, 0, 7, .null_from = 0),
    KF(KP_I16, kp_offset_fetch_response_partition, error_code, 0, 7),
};
KSCHEMA(kp_offset_fetch_response_partition_schema, kp_offset_fetch_response_partition, kp_offset_fetch_response_partition_fields);

static const kp_field kp_offset_fetch_response_topic_fields[] = {
    KF(KP_STR, kp_offset_fetch_response_topic, name, 0, 7),
    KFA(kp_offset_fetch_response_topic, partitions, 0, 7, kp_offset_fetch_response_partition_schema),
};
KSCHEMA(kp_offset_fetch_response_topic_schema, kp_offset_fetch_response_topic, kp_offset_fetch_response_topic_fields);

static const kp_field kp_offset_fetch_response_partitions_fields[] = {
    KF(KP_I32, kp_offset_fetch_response_partitions, partition_index, 8, KV_MAX),
    KF(KP_I64, kp_offset_fetch_response_partitions, committed_offset, 8, KV_MAX),
    KF(KP_I32, kp_offset_fetch_response_partitions, committed_leader_epoch, 8, KV_MAX, .dflt = -1),
    KF(KP_STR, kp_offset_fetch_response_partitions, metadata, 8, KV_MAX, .null_from = 8),
    KF(KP_I16, kp_offset_fetch_response_partitions, error_code, 8, KV_MAX),
};
KSCHEMA(kp_offset_fetch_response_partitions_schema, kp_offset_fetch_response_partitions, kp_offset_fetch_response_partitions_fields);

static const kp_field kp_offset_fetch_response_topics_fields[] = {
    KF(KP_STR, kp_offset_fetch_response_topics, name, 8, KV_MAX),
    KFA(kp_offset_fetch_response_topics, partitions, 8, KV_MAX, kp_offset_fetch_response_partitions_schema),
};
KSCHEMA(kp_offset_fetch_response_topics_schema, kp_offset_fetch_response_topics, kp_offset_fetch_response_topics_fields);

static const kp_field kp_offset_fetch_response_group_fields[] = {
    KF(KP_STR, kp_offset_fetch_response_group, group_id, 8, KV_MAX),
    KFA(kp_offset_fetch_response_group, topics, 8, KV_MAX, kp_offset_fetch_response_topics_schema),
    KF(KP_I16, kp_offset_fetch_response_group, error_code, 8, KV_MAX),
};
KSCHEMA(kp_offset_fetch_response_group_schema, kp_offset_fetch_response_group, kp_offset_fetch_response_group_fields);

static const kp_field kp_offset_fetch_response_fields[] = {
    KF(KP_I32, kp_offset_fetch_response, throttle_time_ms, 3, KV_MAX),
    KFA(kp_offset_fetch_response, topics, 0, 7, kp_offset_fetch_response_topic_schema),
    KF(KP_I16, kp_offset_fetch_response, error_code, 2, 7),
    KFA(kp_offset_fetch_response, groups, 8, KV_MAX, kp_offset_fetch_response_group_schema),
};
KSCHEMA(kp_offset_fetch_response_schema, kp_offset_fetch_response, kp_offset_fetch_response_fields);

const kp_msg kp_msg_offset_fetch = {KP_MSG_ID(OFFSET_FETCH), 0, 9, 6, &kp_offset_fetch_request_schema, &kp_offset_fetch_response_schema};
