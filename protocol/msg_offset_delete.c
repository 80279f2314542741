/* OffsetDelete (API key 47) wire description; fields carry the versions they exist in. */
#include "msg_offset_delete.h"

static const kp_field kp_offset_delete_request_partition_fields[] = {
    KF(KP_I32, kp_offset_delete_request_partition, partition_index, 0, KV_MAX),
};
KSCHEMA(kp_offset_delete_request_partition_schema, kp_offset_delete_request_partition, kp_offset_delete_request_partition_fields);

static const kp_field kp_offset_delete_request_topic_fields[] = {
    KF(KP_STR, kp_offset_delete_request_topic, name, 0, KV_MAX),
    KFA(kp_offset_delete_request_topic, partitions, 0, KV_MAX, kp_offset_delete_request_partition_schema),
};
KSCHEMA(kp_offset_delete_request_topic_schema, kp_offset_delete_request_topic, kp_offset_delete_request_topic_fields);

static const kp_field kp_offset_delete_request_fields[] = {
    KF(KP_STR, kp_offset_delete_request, group_id, 0, KV_MAX),
    KFA(kp_offset_delete_request, topics, 0, KV_MAX, kp_offset_delete_request_topic_schema),
};
KSCHEMA(kp_offset_delete_request_schema, kp_offset_delete_request, kp_offset_delete_request_fields);

static const kp_field kp_offset_delete_response_partition_fields[] = {
    KF(KP_I32, kp_offset_delete_response_partition, partition_index, 0, KV_MAX),
    KF(KP_I16, kp_offset_delete_response_partition, error_code, 0, KV_MAX),
};
KSCHEMA(kp_offset_delete_response_partition_schema, kp_offset_delete_response_partition, kp_offset_delete_response_partition_fields);

static const kp_field kp_offset_delete_response_topic_fields[] = {
    KF(KP_STR, kp_offset_delete_response_topic, name, 0, KV_MAX),
    KFA(kp_offset_delete_response_topic, partitions, 0, KV_MAX, kp_offset_delete_response_partition_schema),
};
KSCHEMA(kp_offset_delete_response_topic_schema, kp_offset_delete_response_topic, kp_offset_delete_response_topic_fields);

static const kp_field kp_offset_delete_response_fields[] = {
    KF(KP_I16, kp_offset_delete_response, error_code, 0, KV_MAX),
    KF(KP_I32, kp_offset_delete_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_offset_delete_response, topics, 0, KV_MAX, kp_offset_delete_response_topic_schema),
};
KSCHEMA(kp_offset_delete_response_schema, kp_offset_delete_response, kp_offset_delete_response_fields);

const kp_msg kp_msg_offset_delete = {KP_MSG_ID(OFFSET_DELETE), 0, 0, KV_NEVER, &kp_offset_delete_request_schema, &kp_offset_delete_response_schema};
