/* DescribeLogDirs (API key 35): request and response structs, versions 0-4. */
#ifndef KP_MSG_DESCRIBE_LOG_DIRS_H
#define KP_MSG_DESCRIBE_LOG_DIRS_H

#include "kp.h"

typedef struct kp_describe_log_dirs_topic {
    kp_str topic;
    KP_ARR(int32_t) partitions;
} kp_describe_log_dirs_topic;
extern const kp_schema kp_describe_log_dirs_topic_schema;

typedef struct kp_describe_log_dirs_request {
    KP_ARR(struct kp_describe_log_dirs_topic) topics;
} kp_describe_log_dirs_request;
extern const kp_schema kp_describe_log_dirs_request_schema;

typedef struct kp_describe_log_dirs_partition {
    int32_t partition_index;
    int64_t partition_size;
    int64_t offset_lag;
    bool is_future_key;
} kp_describe_log_dirs_partition;
extern const kp_schema kp_describe_log_dirs_partition_schema;

typedef struct kp_describe_log_dirs_result_topic {
    kp_str name;
    KP_ARR(struct kp_describe_log_dirs_partition) partitions;
} kp_describe_log_dirs_result_topic;
extern const kp_schema kp_describe_log_dirs_result_topic_schema;

typedef struct kp_describe_log_dirs_result {
    int16_t error_code;
    kp_str log_dir;
    KP_ARR(struct kp_describe_log_dirs_result_topic) topics;
    int64_t total_bytes;
    int64_t usable_bytes;
} kp_describe_log_dirs_result;
extern const kp_schema kp_describe_log_dirs_result_schema;

typedef struct kp_describe_log_dirs_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    KP_ARR(struct kp_describe_log_dirs_result) results;
} kp_describe_log_dirs_response;
extern const kp_schema kp_describe_log_dirs_response_schema;

extern const kp_msg kp_msg_describe_log_dirs;

#endif
