/* DescribeLogDirs (API key 35) wire description; fields carry the versions they exist in. */
#include "msg_describe_log_dirs.h"

static const kp_field kp_describe_log_dirs_topic_fields[] = {
    KF(KP_STR, kp_describe_log_dirs_topic, topic, 0, KV_MAX),
    KFP(KP_I32, kp_describe_log_dirs_topic, partitions, 0, KV_MAX),
};
KSCHEMA(kp_describe_log_dirs_topic_schema, kp_describe_log_dirs_topic, kp_describe_log_dirs_topic_fields);

static const kp_field kp_describe_log_dirs_request_fields[] = {
    /* null: every partition of every topic */
    KFA(kp_describe_log_dirs_request, topics, 0, KV_MAX, kp_describe_log_dirs_topic_schema, .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_describe_log_dirs_request_schema, kp_describe_log_dirs_request, kp_describe_log_dirs_request_fields);

static const kp_field kp_describe_log_dirs_partition_fields[] = {
    KF(KP_I32, kp_describe_log_dirs_partition, partition_index, 0, KV_MAX),
    KF(KP_I64, kp_describe_log_dirs_partition, partition_size, 0, KV_MAX),
    KF(KP_I64, kp_describe_log_dirs_partition, offset_lag, 0, KV_MAX),
    KF(KP_BOOL, kp_describe_log_dirs_partition, is_future_key, 0, KV_MAX),
};
KSCHEMA(kp_describe_log_dirs_partition_schema, kp_describe_log_dirs_partition, kp_describe_log_dirs_partition_fields);

static const kp_field kp_describe_log_dirs_result_topic_fields[] = {
    KF(KP_STR, kp_describe_log_dirs_result_topic, name, 0, KV_MAX),
    KFA(kp_describe_log_dirs_result_topic, partitions, 0, KV_MAX, kp_describe_log_dirs_partition_schema),
};
KSCHEMA(kp_describe_log_dirs_result_topic_schema, kp_describe_log_dirs_result_topic,
        kp_describe_log_dirs_result_topic_fields);

static const kp_field kp_describe_log_dirs_result_fields[] = {
    KF(KP_I16, kp_describe_log_dirs_result, error_code, 0, KV_MAX),
    KF(KP_STR, kp_describe_log_dirs_result, log_dir, 0, KV_MAX),
    KFA(kp_describe_log_dirs_result, topics, 0, KV_MAX, kp_describe_log_dirs_result_topic_schema),
    KF(KP_I64, kp_describe_log_dirs_result, total_bytes, 4, KV_MAX, .dflt = -1),
    KF(KP_I64, kp_describe_log_dirs_result, usable_bytes, 4, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_describe_log_dirs_result_schema, kp_describe_log_dirs_result, kp_describe_log_dirs_result_fields);

static const kp_field kp_describe_log_dirs_response_fields[] = {
    KF(KP_I32, kp_describe_log_dirs_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_describe_log_dirs_response, error_code, 3, KV_MAX),
    KFA(kp_describe_log_dirs_response, results, 0, KV_MAX, kp_describe_log_dirs_result_schema),
};
KSCHEMA(kp_describe_log_dirs_response_schema, kp_describe_log_dirs_response, kp_describe_log_dirs_response_fields);

const kp_msg kp_msg_describe_log_dirs = {KP_MSG_ID(DESCRIBE_LOG_DIRS), 0, 4, 2, &kp_describe_log_dirs_request_schema,
                                         &kp_describe_log_dirs_response_schema};
