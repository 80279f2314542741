/*
 * ConsumerGroupDescribe (API key 69, KIP-848) wire description, after Apache Kafka's
 * clients/src/main/resources/common/message/ConsumerGroupDescribeRequest.json and
 * ConsumerGroupDescribeResponse.json: v1 (Kafka 4.0) adds the member's MemberType (KIP-1099:
 * -1 unknown, 0 classic, 1 consumer). Flexible from v0.
 */
#include "msg_consumer_group_describe.h"

static const kp_field kp_consumer_group_describe_request_fields[] = {
    KFP(KP_STR, kp_consumer_group_describe_request, group_ids, 0, KV_MAX),
    KF(KP_BOOL, kp_consumer_group_describe_request, include_authorized_operations, 0, KV_MAX),
};
KSCHEMA(kp_consumer_group_describe_request_schema, kp_consumer_group_describe_request,
        kp_consumer_group_describe_request_fields);

static const kp_field kp_cgd_topic_partitions_fields[] = {
    KF(KP_UUID, kp_cgd_topic_partitions, topic_id, 0, KV_MAX),
    KF(KP_STR, kp_cgd_topic_partitions, topic_name, 0, KV_MAX),
    KFP(KP_I32, kp_cgd_topic_partitions, partitions, 0, KV_MAX),
};
KSCHEMA(kp_cgd_topic_partitions_schema, kp_cgd_topic_partitions, kp_cgd_topic_partitions_fields);

static const kp_field kp_cgd_assignment_fields[] = {
    KFA(kp_cgd_assignment, topic_partitions, 0, KV_MAX, kp_cgd_topic_partitions_schema),
};
KSCHEMA(kp_cgd_assignment_schema, kp_cgd_assignment, kp_cgd_assignment_fields);

static const kp_field kp_cgd_member_fields[] = {
    KF(KP_STR, kp_cgd_member, member_id, 0, KV_MAX),
    KF(KP_STR, kp_cgd_member, instance_id, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STR, kp_cgd_member, rack_id, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_I32, kp_cgd_member, member_epoch, 0, KV_MAX),
    KF(KP_STR, kp_cgd_member, client_id, 0, KV_MAX),
    KF(KP_STR, kp_cgd_member, client_host, 0, KV_MAX),
    KFP(KP_STR, kp_cgd_member, subscribed_topic_names, 0, KV_MAX),
    KF(KP_STR, kp_cgd_member, subscribed_topic_regex, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STRUCT, kp_cgd_member, assignment, 0, KV_MAX, .sub = &kp_cgd_assignment_schema),
    KF(KP_STRUCT, kp_cgd_member, target_assignment, 0, KV_MAX, .sub = &kp_cgd_assignment_schema),
    KF(KP_I8, kp_cgd_member, member_type, 1, KV_MAX, .dflt = -1),
};
KSCHEMA(kp_cgd_member_schema, kp_cgd_member, kp_cgd_member_fields);

static const kp_field kp_cgd_group_fields[] = {
    KF(KP_I16, kp_cgd_group, error_code, 0, KV_MAX),
    KF(KP_STR, kp_cgd_group, error_message, 0, KV_MAX, .null_from = 0, .dflt = -1),
    KF(KP_STR, kp_cgd_group, group_id, 0, KV_MAX),
    KF(KP_STR, kp_cgd_group, group_state, 0, KV_MAX),
    KF(KP_I32, kp_cgd_group, group_epoch, 0, KV_MAX),
    KF(KP_I32, kp_cgd_group, assignment_epoch, 0, KV_MAX),
    KF(KP_STR, kp_cgd_group, assignor_name, 0, KV_MAX),
    KFA(kp_cgd_group, members, 0, KV_MAX, kp_cgd_member_schema),
    KF(KP_I32, kp_cgd_group, authorized_operations, 0, KV_MAX, .dflt = INT32_MIN),
};
KSCHEMA(kp_cgd_group_schema, kp_cgd_group, kp_cgd_group_fields);

static const kp_field kp_consumer_group_describe_response_fields[] = {
    KF(KP_I32, kp_consumer_group_describe_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_consumer_group_describe_response, groups, 0, KV_MAX, kp_cgd_group_schema),
};
KSCHEMA(kp_consumer_group_describe_response_schema, kp_consumer_group_describe_response,
        kp_consumer_group_describe_response_fields);

const kp_msg kp_msg_consumer_group_describe = {KP_MSG_ID(CONSUMER_GROUP_DESCRIBE), 0, 1, 0,
                                               &kp_consumer_group_describe_request_schema,
                                               &kp_consumer_group_describe_response_schema};
