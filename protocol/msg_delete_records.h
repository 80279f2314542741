/* DeleteRecords (API key 21): request and response structs, versions 0-2. */
#ifndef KP_MSG_DELETE_RECORDS_H
#define KP_MSG_DELETE_RECORDS_H

#include "kp.h"

typedef struct kp_delete_records_partition {
    int32_t partition_index;
    int64_t offset;
} kp_delete_records_partition;
extern const kp_schema kp_delete_records_partition_schema;

typedef struct kp_delete_records_topic {
    kp_str name;
    KP_ARR(struct kp_delete_records_partition) partitions;
} kp_delete_records_topic;
extern const kp_schema kp_delete_records_topic_schema;

typedef struct kp_delete_records_request {
    KP_ARR(struct kp_delete_records_topic) topics;
    int32_t timeout_ms;
} kp_delete_records_request;
extern const kp_schema kp_delete_records_request_schema;

typedef struct kp_delete_records_partition_result {
    int32_t partition_index;
    int64_t low_watermark;
    int16_t error_code;
} kp_delete_records_partition_result;
extern const kp_schema kp_delete_records_partition_result_schema;

typedef struct kp_delete_records_topic_result {
    kp_str name;
    KP_ARR(struct kp_delete_records_partition_result) partitions;
} kp_delete_records_topic_result;
extern const kp_schema kp_delete_records_topic_result_schema;

typedef struct kp_delete_records_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_delete_records_topic_result) topics;
} kp_delete_records_response;
extern const kp_schema kp_delete_records_response_schema;

extern const kp_msg kp_msg_delete_records;

#endif
