/* Heartbeat (API key 12): request and response structs, versions 0-4. */
#ifndef KP_MSG_HEARTBEAT_H
#define KP_MSG_HEARTBEAT_H

#include "kp.h"

typedef struct kp_heartbeat_request {
    kp_str group_id;
    int32_t generation_id;
    kp_str member_id;
    kp_str group_instance_id;
} kp_heartbeat_request;
extern const kp_schema kp_heartbeat_request_schema;

typedef struct kp_heartbeat_response {
    int32_t throttle_time_ms;
    int16_t error_code;
} kp_heartbeat_response;
extern const kp_schema kp_heartbeat_response_schema;

extern const kp_msg kp_msg_heartbeat;

#endif
