/* FindCoordinator (API key 10): request and response structs, versions 0-6. */
#ifndef KP_MSG_FIND_COORDINATOR_H
#define KP_MSG_FIND_COORDINATOR_H

#include "kp.h"

typedef struct kp_find_coordinator_request {
    kp_str key;
    int8_t key_type;
    KP_ARR(kp_str) coordinator_keys;
} kp_find_coordinator_request;
extern const kp_schema kp_find_coordinator_request_schema;

typedef struct kp_find_coordinator_coordinator {
    kp_str key;
    int32_t node_id;
    kp_str host;
    int32_t port;
    int16_t error_code;
    kp_str error_message;
} kp_find_coordinator_coordinator;
extern const kp_schema kp_find_coordinator_coordinator_schema;

typedef struct kp_find_coordinator_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    kp_str error_message;
    int32_t node_id;
    kp_str host;
    int32_t port;
    KP_ARR(struct kp_find_coordinator_coordinator) coordinators;
} kp_find_coordinator_response;
extern const kp_schema kp_find_coordinator_response_schema;

extern const kp_msg kp_msg_find_coordinator;

#endif
