/* DeleteTopics (API key 20) wire description; fields carry the versions they exist in. */
#include "msg_delete_topics.h"

static const kp_field kp_delete_topics_delete_topic_state_fields[] = {
    KF(KP_STR, kp_delete_topics_delete_topic_state, name, 6, KV_MAX, .null_from = 6, .dflt = -1),
    KF(KP_UUID, kp_delete_topics_delete_topic_state, topic_id, 6, KV_MAX),
};
KSCHEMA(kp_delete_topics_delete_topic_state_schema, kp_delete_topics_delete_topic_state, kp_delete_topics_delete_topic_state_fields);

static const kp_field kp_delete_topics_request_fields[] = {
    KFA(kp_delete_topics_request, topics, 6, KV_MAX, kp_delete_topics_delete_topic_state_schema),
    KFP(KP_STR, kp_delete_topics_request, topic_names, 0, 5),
    KF(KP_I32, kp_delete_topics_request, timeout_ms, 0, KV_MAX),
};
KSCHEMA(kp_delete_topics_request_schema, kp_delete_topics_request, kp_delete_topics_request_fields);

static const kp_field kp_delete_topics_deletable_topic_result_fields[] = {
    KF(KP_STR, kp_delete_topics_deletable_topic_result, name, 0, KV_MAX, .null_from = 6),
    KF(KP_UUID, kp_delete_topics_deletable_topic_result, topic_id, 6, KV_MAX),
    KF(KP_I16, kp_delete_topics_deletable_topic_result, error_code, 0, KV_MAX),
    KF(KP_STR, kp_delete_topics_deletable_topic_result, error_message, 5, KV_MAX, .null_from = 5, .dflt = -1),
};
KSCHEMA(kp_delete_topics_deletable_topic_result_schema, kp_delete_topics_deletable_topic_result, kp_delete_topics_deletable_topic_result_fields);

static const kp_field kp_delete_topics_response_fields[] = {
    KF(KP_I32, kp_delete_topics_response, throttle_time_ms, 1, KV_MAX),
    KFA(kp_delete_topics_response, responses, 0, KV_MAX, kp_delete_topics_deletable_topic_result_schema),
};
KSCHEMA(kp_delete_topics_response_schema, kp_delete_topics_response, kp_delete_topics_response_fields);

const kp_msg kp_msg_delete_topics = {KP_MSG_ID(DELETE_TOPICS), 0, 6, 4, &kp_delete_topics_request_schema, &kp_delete_topics_response_schema};
