/* ConsumerGroupHeartbeat (API key 68, KIP-848): request and response structs, versions 0-1. */
#ifndef KP_MSG_CONSUMER_GROUP_HEARTBEAT_H
#define KP_MSG_CONSUMER_GROUP_HEARTBEAT_H

#include "kp.h"

typedef struct kp_cgh_topic_partitions {
    kp_uuid topic_id;
    KP_ARR(int32_t) partitions;
} kp_cgh_topic_partitions;
extern const kp_schema kp_cgh_topic_partitions_schema;

typedef struct kp_consumer_group_heartbeat_request {
    kp_str group_id;
    kp_str member_id;
    int32_t member_epoch;
    kp_str instance_id;
    kp_str rack_id;
    int32_t rebalance_timeout_ms;
    KP_ARR(kp_str) subscribed_topic_names;
    kp_str subscribed_topic_regex;
    kp_str server_assignor;
    KP_ARR(struct kp_cgh_topic_partitions) topic_partitions;
} kp_consumer_group_heartbeat_request;
extern const kp_schema kp_consumer_group_heartbeat_request_schema;

/* Nullable (null: the assignment did not change): `present` first, as kp.h asks of nullable structs. */
typedef struct kp_cgh_assignment {
    bool present;
    KP_ARR(struct kp_cgh_topic_partitions) topic_partitions;
} kp_cgh_assignment;
extern const kp_schema kp_cgh_assignment_schema;

typedef struct kp_consumer_group_heartbeat_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    kp_str error_message;
    kp_str member_id;
    int32_t member_epoch;
    int32_t heartbeat_interval_ms;
    kp_cgh_assignment assignment;
} kp_consumer_group_heartbeat_response;
extern const kp_schema kp_consumer_group_heartbeat_response_schema;

extern const kp_msg kp_msg_consumer_group_heartbeat;

#endif
