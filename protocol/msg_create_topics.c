/* CreateTopics (API key 19) wire description; fields carry the versions they exist in. */
#include "msg_create_topics.h"

static const kp_field kp_create_topics_creatable_replica_assignment_fields[] = {
    KF(KP_I32, kp_create_topics_creatable_replica_assignment, partition_index, 0, KV_MAX),
    KFP(KP_I32, kp_create_topics_creatable_replica_assignment, broker_ids, 0, KV_MAX),
};
KSCHEMA(kp_create_topics_creatable_replica_assignment_schema, kp_create_topics_creatable_replica_assignment, kp_create_topics_creatable_replica_assignment_fields);

static const kp_field kp_create_topics_creatable_topic_config_fields[] = {
    KF(KP_STR, kp_create_topics_creatable_topic_config, name, 0, KV_MAX),
    KF(KP_STR, kp_create_topics_creatable_topic_config, value, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_create_topics_creatable_topic_config_schema, kp_create_topics_creatable_topic_config, kp_create_topics_creatable_topic_config_fields);

static const kp_field kp_create_topics_creatable_topic_fields[] = {
    KF(KP_STR, kp_create_topics_creatable_topic, name, 0, KV_MAX),
    KF(KP_I32, kp_create_topics_creatable_topic, num_partitions, 0, KV_MAX),
    KF(KP_I16, kp_create_topics_creatable_topic, replication_factor, 0, KV_MAX),
    KFA(kp_create_topics_creatable_topic, assignments, 0, KV_MAX, kp_create_topics_creatable_replica_assignment_schema),
    KFA(kp_create_topics_creatable_topic, configs, 0, KV_MAX, kp_create_topics_creatable_topic_config_schema),
};
KSCHEMA(kp_create_topics_creatable_topic_schema, kp_create_topics_creatable_topic, kp_create_topics_creatable_topic_fields);

static const kp_field kp_create_topics_request_fields[] = {
    KFA(kp_create_topics_request, topics, 0, KV_MAX, kp_create_topics_creatable_topic_schema),
    KF(KP_I32, kp_create_topics_request, timeout_ms, 0, KV_MAX, .dflt = 60000),
    KF(KP_BOOL, kp_create_topics_request, validate_only, 1, KV_MAX, .dflt = 0),
};
KSCHEMA(kp_create_topics_request_schema, kp_create_topics_request, kp_create_topics_request_fields);

static const kp_field kp_create_topics_creatable_topic_configs_fields[] = {
    KF(KP_STR, kp_create_topics_creatable_topic_configs, name, 5, KV_MAX),
    KF(KP_STR, kp_create_topics_creatable_topic_configs, value, 5, KV_MAX, .null_from = 5),
    KF(KP_BOOL, kp_create_topics_creatable_topic_configs, read_only, 5, KV_MAX),
    KF(KP_I8, kp_create_topics_creatable_topic_configs, config_source, 5, KV_MAX, .dflt = -1),
    KF(KP_BOOL, kp_create_topics_creatable_topic_configs, is_sensitive, 5, KV_MAX),
};
KSCHEMA(kp_create_topics_creatable_topic_configs_schema, kp_create_topics_creatable_topic_configs, kp_create_topics_creatable_topic_configs_fields);

static const kp_field kp_create_topics_creatable_topic_result_fields[] = {
    KF(KP_STR, kp_create_topics_creatable_topic_result, name, 0, KV_MAX),
    KF(KP_UUID, kp_create_topics_creatable_topic_result, topic_id, 7, KV_MAX),
    KF(KP_I16, kp_create_topics_creatable_topic_result, error_code, 0, KV_MAX),
    KF(KP_STR, kp_create_topics_creatable_topic_result, error_message, 1, KV_MAX, .null_from = 0),
    KF(KP_I16, kp_create_topics_creatable_topic_result, topic_config_error_code, 5, KV_MAX, .tag = 0),
    KF(KP_I32, kp_create_topics_creatable_topic_result, num_partitions, 5, KV_MAX, .dflt = -1),
    KF(KP_I16, kp_create_topics_creatable_topic_result, replication_factor, 5, KV_MAX, .dflt = -1),
    KFA(kp_create_topics_creatable_topic_result, configs, 5, KV_MAX, kp_create_topics_creatable_topic_configs_schema, .null_from = 5),
};
KSCHEMA(kp_create_topics_creatable_topic_result_schema, kp_create_topics_creatable_topic_result, kp_create_topics_creatable_topic_result_fields);

static const kp_field kp_create_topics_response_fields[] = {
    KF(KP_I32, kp_create_topics_response, throttle_time_ms, 2, KV_MAX),
    KFA(kp_create_topics_response, topics, 0, KV_MAX, kp_create_topics_creatable_topic_result_schema),
};
KSCHEMA(kp_create_topics_response_schema, kp_create_topics_response, kp_create_topics_response_fields);

const kp_msg kp_msg_create_topics = {KP_MSG_ID(CREATE_TOPICS), 0, 7, 5, &kp_create_topics_request_schema, &kp_create_topics_response_schema};
