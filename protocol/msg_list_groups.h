/* ListGroups (API key 16): request and response structs, versions 0-5. */
#ifndef KP_MSG_LIST_GROUPS_H
#define KP_MSG_LIST_GROUPS_H

#include "kp.h"

typedef struct kp_list_groups_request {
    KP_ARR(kp_str) states_filter;
    KP_ARR(kp_str) types_filter;
} kp_list_groups_request;
extern const kp_schema kp_list_groups_request_schema;

typedef struct kp_list_groups_listed_group {
    kp_str group_id;
    kp_str protocol_type;
    kp_str group_state;
    kp_str group_type;
} kp_list_groups_listed_group;
extern const kp_schema kp_list_groups_listed_group_schema;

typedef struct kp_list_groups_response {
    int32_t throttle_time_ms;
    int16_t error_code;
    KP_ARR(struct kp_list_groups_listed_group) groups;
} kp_list_groups_response;
extern const kp_schema kp_list_groups_response_schema;

extern const kp_msg kp_msg_list_groups;

#endif
