/* CreateTopics (API key 19): request and response structs, versions 0-7. */
#ifndef KP_MSG_CREATE_TOPICS_H
#define KP_MSG_CREATE_TOPICS_H

#include "kp.h"

typedef struct kp_create_topics_creatable_replica_assignment {
    int32_t partition_index;
    KP_ARR(int32_t) broker_ids;
} kp_create_topics_creatable_replica_assignment;
extern const kp_schema kp_create_topics_creatable_replica_assignment_schema;

typedef struct kp_create_topics_creatable_topic_config {
    kp_str name;
    kp_str value;
} kp_create_topics_creatable_topic_config;
extern const kp_schema kp_create_topics_creatable_topic_config_schema;

typedef struct kp_create_topics_creatable_topic {
    kp_str name;
    int32_t num_partitions;
    int16_t replication_factor;
    KP_ARR(struct kp_create_topics_creatable_replica_assignment) assignments;
    KP_ARR(struct kp_create_topics_creatable_topic_config) configs;
} kp_create_topics_creatable_topic;
extern const kp_schema kp_create_topics_creatable_topic_schema;

typedef struct kp_create_topics_request {
    KP_ARR(struct kp_create_topics_creatable_topic) topics;
    int32_t timeout_ms;
    bool validate_only;
} kp_create_topics_request;
extern const kp_schema kp_create_topics_request_schema;

typedef struct kp_create_topics_creatable_topic_configs {
    kp_str name;
    kp_str value;
    bool read_only;
    int8_t config_source;
    bool is_sensitive;
} kp_create_topics_creatable_topic_configs;
extern const kp_schema kp_create_topics_creatable_topic_configs_schema;

typedef struct kp_create_topics_creatable_topic_result {
    kp_str name;
    kp_uuid topic_id;
    int16_t error_code;
    kp_str error_message;
    int16_t topic_config_error_code;
    int32_t num_partitions;
    int16_t replication_factor;
    KP_ARR(struct kp_create_topics_creatable_topic_configs) configs;
} kp_create_topics_creatable_topic_result;
extern const kp_schema kp_create_topics_creatable_topic_result_schema;

typedef struct kp_create_topics_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_create_topics_creatable_topic_result) topics;
} kp_create_topics_response;
extern const kp_schema kp_create_topics_response_schema;

extern const kp_msg kp_msg_create_topics;

#endif
