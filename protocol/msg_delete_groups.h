/* DeleteGroups (API key 42): request and response structs, versions 0-2. */
#ifndef KP_MSG_DELETE_GROUPS_H
#define KP_MSG_DELETE_GROUPS_H

#include "kp.h"

typedef struct kp_delete_groups_request {
    KP_ARR(kp_str) groups_names;
} kp_delete_groups_request;
extern const kp_schema kp_delete_groups_request_schema;

typedef struct kp_delete_groups_deletable_group_result {
    kp_str group_id;
    int16_t error_code;
} kp_delete_groups_deletable_group_result;
extern const kp_schema kp_delete_groups_deletable_group_result_schema;

typedef struct kp_delete_groups_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_delete_groups_deletable_group_result) results;
} kp_delete_groups_response;
extern const kp_schema kp_delete_groups_response_schema;

extern const kp_msg kp_msg_delete_groups;

#endif
