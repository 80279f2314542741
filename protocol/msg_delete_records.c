/* DeleteRecords (API key 21) wire description; fields carry the versions they exist in. */
#include "msg_delete_records.h"

static const kp_field kp_delete_records_partition_fields[] = {
    KF(KP_I32, kp_delete_records_partition, partition_index, 0, KV_MAX),
    KF(KP_I64, kp_delete_records_partition, offset, 0, KV_MAX),
};
KSCHEMA(kp_delete_records_partition_schema, kp_delete_records_partition, kp_delete_records_partition_fields);

static const kp_field kp_delete_records_topic_fields[] = {
    KF(KP_STR, kp_delete_records_topic, name, 0, KV_MAX),
    KFA(kp_delete_records_topic, partitions, 0, KV_MAX, kp_delete_records_partition_schema),
};
KSCHEMA(kp_delete_records_topic_schema, kp_delete_records_topic, kp_delete_records_topic_fields);

static const kp_field kp_delete_records_request_fields[] = {
    KFA(kp_delete_records_request, topics, 0, KV_MAX, kp_delete_records_topic_schema),
    KF(KP_I32, kp_delete_records_request, timeout_ms, 0, KV_MAX),
};
KSCHEMA(kp_delete_records_request_schema, kp_delete_records_request, kp_delete_records_request_fields);

static const kp_field kp_delete_records_partition_result_fields[] = {
    KF(KP_I32, kp_delete_records_partition_result, partition_index, 0, KV_MAX),
    KF(KP_I64, kp_delete_records_partition_result, low_watermark, 0, KV_MAX),
    KF(KP_I16, kp_delete_records_partition_result, error_code, 0, KV_MAX),
};
KSCHEMA(kp_delete_records_partition_result_schema, kp_delete_records_partition_result, kp_delete_records_partition_result_fields);

static const kp_field kp_delete_records_topic_result_fields[] = {
    KF(KP_STR, kp_delete_records_topic_result, name, 0, KV_MAX),
    KFA(kp_delete_records_topic_result, partitions, 0, KV_MAX, kp_delete_records_partition_result_schema),
};
KSCHEMA(kp_delete_records_topic_result_schema, kp_delete_records_topic_result, kp_delete_records_topic_result_fields);

static const kp_field kp_delete_records_response_fields[] = {
    KF(KP_I32, kp_delete_records_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_delete_records_response, topics, 0, KV_MAX, kp_delete_records_topic_result_schema),
};
KSCHEMA(kp_delete_records_response_schema, kp_delete_records_response, kp_delete_records_response_fields);

const kp_msg kp_msg_delete_records = {KP_MSG_ID(DELETE_RECORDS), 0, 2, 2, &kp_delete_records_request_schema, &kp_delete_records_response_schema};
