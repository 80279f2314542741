/* DescribeConfigs (API key 32) wire description; fields carry the versions they exist in. */
#include "msg_describe_configs.h"

static const kp_field kp_describe_configs_resource_fields[] = {
    KF(KP_I8, kp_describe_configs_resource, resource_type, 0, KV_MAX),
    KF(KP_STR, kp_describe_configs_resource, resource_name, 0, KV_MAX),
    KFP(KP_STR, kp_describe_configs_resource, configuration_keys, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_describe_configs_resource_schema, kp_describe_configs_resource, kp_describe_configs_resource_fields);

static const kp_field kp_describe_configs_request_fields[] = {
    KFA(kp_describe_configs_request, resources, 0, KV_MAX, kp_describe_configs_resource_schema),
    KF(KP_BOOL, kp_describe_configs_request, include_synonyms, 1, KV_MAX, .dflt = 0),
    KF(KP_BOOL, kp_describe_configs_request, include_documentation, 3, KV_MAX, .dflt = 0),
};
KSCHEMA(kp_describe_configs_request_schema, kp_describe_configs_request, kp_describe_configs_request_fields);

static const kp_field kp_describe_configs_synonym_fields[] = {
    KF(KP_STR, kp_describe_configs_synonym, name, 1, KV_MAX),
    KF(KP_STR, kp_describe_configs_synonym, value, 1, KV_MAX, .null_from = 0),
    KF(KP_I8, kp_describe_configs_synonym, source, 1, KV_MAX),
};
KSCHEMA(kp_describe_configs_synonym_schema, kp_describe_configs_synonym, kp_describe_configs_synonym_fields);

static const kp_field kp_describe_configs_resource_result_fields[] = {
    KF(KP_STR, kp_describe_configs_resource_result, name, 0, KV_MAX),
    KF(KP_STR, kp_describe_configs_resource_result, value, 0, KV_MAX, .null_from = 0),
    KF(KP_BOOL, kp_describe_configs_resource_result, read_only, 0, KV_MAX),
    KF(KP_BOOL, kp_describe_configs_resource_result, is_default, 0, 0),
    KF(KP_I8, kp_describe_configs_resource_result, config_source, 1, KV_MAX, .dflt = -1),
    KF(KP_BOOL, kp_describe_configs_resource_result, is_sensitive, 0, KV_MAX),
    KFA(kp_describe_configs_resource_result, synonyms, 1, KV_MAX, kp_describe_configs_synonym_schema),
    KF(KP_I8, kp_describe_configs_resource_result, config_type, 3, KV_MAX),
    KF(KP_STR, kp_describe_configs_resource_result, documentation, 3, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_describe_configs_resource_result_schema, kp_describe_configs_resource_result, kp_describe_configs_resource_result_fields);

static const kp_field kp_describe_configs_result_fields[] = {
    KF(KP_I16, kp_describe_configs_result, error_code, 0, KV_MAX),
    KF(KP_STR, kp_describe_configs_result, error_message, 0, KV_MAX, .null_from = 0),
    KF(KP_I8, kp_describe_configs_result, resource_type, 0, KV_MAX),
    KF(KP_STR, kp_describe_configs_result, resource_name, 0, KV_MAX),
    KFA(kp_describe_configs_result, configs, 0, KV_MAX, kp_describe_configs_resource_result_schema),
};
KSCHEMA(kp_describe_configs_result_schema, kp_describe_configs_result, kp_describe_configs_result_fields);

static const kp_field kp_describe_configs_response_fields[] = {
    KF(KP_I32, kp_describe_configs_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_describe_configs_response, results, 0, KV_MAX, kp_describe_configs_result_schema),
};
KSCHEMA(kp_describe_configs_response_schema, kp_describe_configs_response, kp_describe_configs_response_fields);

const kp_msg kp_msg_describe_configs = {KP_MSG_ID(DESCRIBE_CONFIGS), 0, 4, 4, &kp_describe_configs_request_schema, &kp_describe_configs_response_schema};
