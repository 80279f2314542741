/* DeleteTopics (API key 20): request and response structs, versions 0-6. */
#ifndef KP_MSG_DELETE_TOPICS_H
#define KP_MSG_DELETE_TOPICS_H

#include "kp.h"

typedef struct kp_delete_topics_delete_topic_state {
    kp_str name;
    kp_uuid topic_id;
} kp_delete_topics_delete_topic_state;
extern const kp_schema kp_delete_topics_delete_topic_state_schema;

typedef struct kp_delete_topics_request {
    KP_ARR(struct kp_delete_topics_delete_topic_state) topics;
    KP_ARR(kp_str) topic_names;
    int32_t timeout_ms;
} kp_delete_topics_request;
extern const kp_schema kp_delete_topics_request_schema;

typedef struct kp_delete_topics_deletable_topic_result {
    kp_str name;
    kp_uuid topic_id;
    int16_t error_code;
    kp_str error_message;
} kp_delete_topics_deletable_topic_result;
extern const kp_schema kp_delete_topics_deletable_topic_result_schema;

typedef struct kp_delete_topics_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_delete_topics_deletable_topic_result) responses;
} kp_delete_topics_response;
extern const kp_schema kp_delete_topics_response_schema;

extern const kp_msg kp_msg_delete_topics;

#endif
