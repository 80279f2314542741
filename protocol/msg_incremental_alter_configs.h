/* IncrementalAlterConfigs (API key 44): request and response structs, versions 0-1. */
#ifndef KP_MSG_INCREMENTAL_ALTER_CONFIGS_H
#define KP_MSG_INCREMENTAL_ALTER_CONFIGS_H

#include "kp.h"

typedef struct kp_incremental_alter_configs_alterable_config {
    kp_str name;
    int8_t config_operation;
    kp_str value;
} kp_incremental_alter_configs_alterable_config;
extern const kp_schema kp_incremental_alter_configs_alterable_config_schema;

typedef struct kp_incremental_alter_configs_alter_configs_resource {
    int8_t resource_type;
    kp_str resource_name;
    KP_ARR(struct kp_incremental_alter_configs_alterable_config) configs;
} kp_incremental_alter_configs_alter_configs_resource;
extern const kp_schema kp_incremental_alter_configs_alter_configs_resource_schema;

typedef struct kp_incremental_alter_configs_request {
    KP_ARR(struct kp_incremental_alter_configs_alter_configs_resource) resources;
    bool validate_only;
} kp_incremental_alter_configs_request;
extern const kp_schema kp_incremental_alter_configs_request_schema;

typedef struct kp_incremental_alter_configs_alter_configs_resource_response {
    int16_t error_code;
    kp_str error_message;
    int8_t resource_type;
    kp_str resource_name;
} kp_incremental_alter_configs_alter_configs_resource_response;
extern const kp_schema kp_incremental_alter_configs_alter_configs_resource_response_schema;

typedef struct kp_incremental_alter_configs_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_incremental_alter_configs_alter_configs_resource_response) responses;
} kp_incremental_alter_configs_response;
extern const kp_schema kp_incremental_alter_configs_response_schema;

extern const kp_msg kp_msg_incremental_alter_configs;

#endif
