/* DescribeConfigs (API key 32): request and response structs, versions 0-4. */
#ifndef KP_MSG_DESCRIBE_CONFIGS_H
#define KP_MSG_DESCRIBE_CONFIGS_H

#include "kp.h"

typedef struct kp_describe_configs_resource {
    int8_t resource_type;
    kp_str resource_name;
    KP_ARR(kp_str) configuration_keys;
} kp_describe_configs_resource;
extern const kp_schema kp_describe_configs_resource_schema;

typedef struct kp_describe_configs_request {
    KP_ARR(struct kp_describe_configs_resource) resources;
    bool include_synonyms;
    bool include_documentation;
} kp_describe_configs_request;
extern const kp_schema kp_describe_configs_request_schema;

typedef struct kp_describe_configs_synonym {
    kp_str name;
    kp_str value;
    int8_t source;
} kp_describe_configs_synonym;
extern const kp_schema kp_describe_configs_synonym_schema;

typedef struct kp_describe_configs_resource_result {
    kp_str name;
    kp_str value;
    bool read_only;
    bool is_default;
    int8_t config_source;
    bool is_sensitive;
    KP_ARR(struct kp_describe_configs_synonym) synonyms;
    int8_t config_type;
    kp_str documentation;
} kp_describe_configs_resource_result;
extern const kp_schema kp_describe_configs_resource_result_schema;

typedef struct kp_describe_configs_result {
    int16_t error_code;
    kp_str error_message;
    int8_t resource_type;
    kp_str resource_name;
    KP_ARR(struct kp_describe_configs_resource_result) configs;
} kp_describe_configs_result;
extern const kp_schema kp_describe_configs_result_schema;

typedef struct kp_describe_configs_response {
    int32_t throttle_time_ms;
    KP_ARR(struct kp_describe_configs_result) results;
} kp_describe_configs_response;
extern const kp_schema kp_describe_configs_response_schema;

extern const kp_msg kp_msg_describe_configs;

#endif
