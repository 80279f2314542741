/*
 * ConsumerGroupHeartbeat (API key 68, KIP-848) wire description, after Apache Kafka's
 * clients/src/main/resources/common/message/ConsumerGroupHeartbeatRequest.json and
 * ConsumerGroupHeartbeatResponse.json: v0 (Kafka 3.7, GA in 4.0), v1 adds the regex
 * subscription (KIP-848's SubscribedTopicRegex). Flexible from v0.
 */
#include "msg_consumer_group_heartbeat.h"

static const kp_field kp_cgh_topic_partitions_fields[] = {
    KF(KP_UUID, kp_cgh_topic_partitions, topic_id, 0, KV_MAX),
    KFP(KP_I32, kp_cgh_topic_partitions, partitions, 0, KV_MAX),
};
KSCHEMA(kp_cgh_topic_partitions_schema, kp_cgh_topic_partitions, kp_cgh_topic_partitions_fields);

static const kp_field kp_consumer_group_heartbeat_request_fields[] = {
    KF(KP_STR, kp_consumer_group_heartbeat_request, group_id, 0, KV_MAX),
    KF(KP_STR, kp_consumer_group_heartbeat_request, member_id, 0, KV_MAX),
    KF(KP_I32, kp_consumer_group_heartbeat_request, member_epoch, 0, KV_MAX),
    KF(KP_STR, kp_consumer_group_heartbeat_request, instance_id, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STR, kp_consumer_group_heartbeat_request, rack_id, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_I32, kp_consumer_group_heartbeat_request, rebalance_timeout_ms, 0, KV_MAX, .dflt = -1),
    KFP(KP_STR, kp_consumer_group_heartbeat_request, subscribed_topic_names, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STR, kp_consumer_group_heartbeat_request, subscribed_topic_regex, 1, KV_MAX, .null_from = 1, .dflt = -1),
    KF(KP_STR, kp_consumer_group_heartbeat_request, server_assignor, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KFA(kp_consumer_group_heartbeat_request, topic_partitions, 0, KV_MAX, kp_cgh_topic_partitions_schema,
        .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_consumer_group_heartbeat_request_schema, kp_consumer_group_heartbeat_request,
        kp_consumer_group_heartbeat_request_fields);

static const kp_field kp_cgh_assignment_fields[] = {
    KFA(kp_cgh_assignment, topic_partitions, 0, KV_MAX, kp_cgh_topic_partitions_schema),
};
KSCHEMA(kp_cgh_assignment_schema, kp_cgh_assignment, kp_cgh_assignment_fields);

static const kp_field kp_consumer_group_heartbeat_response_fields[] = {
    KF(KP_I32, kp_consumer_group_heartbeat_response, throttle_time_ms, 0, KV_MAX),
    KF(KP_I16, kp_consumer_group_heartbeat_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_consumer_group_heartbeat_response, error_message, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STR, kp_consumer_group_heartbeat_response, member_id, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_I32, kp_consumer_group_heartbeat_response, member_epoch, 0, KV_MAX),
    KF(KP_I32, kp_consumer_group_heartbeat_response, heartbeat_interval_ms, 0, KV_MAX),
    KF(KP_STRUCT, kp_consumer_group_heartbeat_response, assignment, 0, KV_MAX, .sub = &kp_cgh_assignment_schema,
       .null_from = 0, .dflt = -1),
};
KSCHEMA(kp_consumer_group_heartbeat_response_schema, kp_consumer_group_heartbeat_response,
        kp_consumer_group_heartbeat_response_fields);

const kp_msg kp_msg_consumer_group_heartbeat = {KP_MSG_ID(CONSUMER_GROUP_HEARTBEAT), 0, 1, 0,
                                                &kp_consumer_group_heartbeat_request_schema,
                                                &kp_consumer_group_heartbeat_response_schema};
