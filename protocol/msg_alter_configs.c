/* AlterConfigs (API key 33) wire description; fields carry the versions they exist in. */
#include "msg_alter_configs.h"

static const kp_field kp_alter_configs_alterable_config_fields[] = {
    KF(KP_STR, kp_alter_configs_alterable_config, name, 0, KV_MAX),
    KF(KP_STR, kp_alter_configs_alterable_config, value, 0, KV_MAX, .null_from = 0),
};
KSCHEMA(kp_alter_configs_alterable_config_schema, kp_alter_configs_alterable_config, kp_alter_configs_alterable_config_fields);

static const kp_field kp_alter_configs_resource_fields[] = {
    KF(KP_I8, kp_alter_configs_resource, resource_type, 0, KV_MAX),
    KF(KP_STR, kp_alter_configs_resource, resource_name, 0, KV_MAX),
    KFA(kp_alter_configs_resource, configs, 0, KV_MAX, kp_alter_configs_alterable_config_schema),
};
KSCHEMA(kp_alter_configs_resource_schema, kp_alter_configs_resource, kp_alter_configs_resource_fields);

static const kp_field kp_alter_configs_request_fields[] = {
    KFA(kp_alter_configs_request, resources, 0, KV_MAX, kp_alter_configs_resource_schema),
    KF(KP_BOOL, kp_alter_configs_request, validate_only, 0, KV_MAX),
};
KSCHEMA(kp_alter_configs_request_schema, kp_alter_configs_request, kp_alter_configs_request_fields);

static const kp_field kp_alter_configs_resource_response_fields[] = {
    KF(KP_I16, kp_alter_configs_resource_response, error_code, 0, KV_MAX),
    KF(KP_STR, kp_alter_configs_resource_response, error_message, 0, KV_MAX, .null_from = 0),
    KF(KP_I8, kp_alter_configs_resource_response, resource_type, 0, KV_MAX),
    KF(KP_STR, kp_alter_configs_resource_response, resource_name, 0, KV_MAX),
};
KSCHEMA(kp_alter_configs_resource_response_schema, kp_alter_configs_resource_response, kp_alter_configs_resource_response_fields);

static const kp_field kp_alter_configs_response_fields[] = {
    KF(KP_I32, kp_alter_configs_response, throttle_time_ms, 0, KV_MAX),
    KFA(kp_alter_configs_response, responses, 0, KV_MAX, kp_alter_configs_resource_response_schema),
};
KSCHEMA(kp_alter_configs_response_schema, kp_alter_configs_response, kp_alter_configs_response_fields);

const kp_msg kp_msg_alter_configs = {KP_MSG_ID(ALTER_CONFIGS), 0, 2, 2, &kp_alter_configs_request_schema, &kp_alter_configs_response_schema};
