/* SyncGroup (API key 14): request and response structs, versions 0-5. */
#ifndef KP_MSG_SYNC_GROUP_H
#define KP_MSG_SYNC_GROUP_H

#include "kp.h"

typedef struct kp_sync_group_request_assignment {
    kp_str member_id;
    kp_bytes assignment;
} kp_sync_group_request_assignment;
extern const kp_schema kp_sync_group_request_assignment_schema;

typedef struct kp_sync_group_request {
    kp_str group_id;
    int32_t generation_id;
    kp_str member_id;
    kp_str group_instance_id;
    kp_str protocol_type;
    kp_str protocol_name;
    KP_ARR(struct kp_sync_group_request_assignment) assignments;
} kp_sync_group_request;
extern const kp_schema kp_sync_group_request_schema;

typedef struct kp_sync_group_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    kp_str protocol_type;
    kp_str protocol_name;
    kp_bytes assignment;
} kp_sync_group_response;
extern const kp_schema kp_sync_group_response_schema;

extern const kp_msg kp_msg_sync_group;

#endif
